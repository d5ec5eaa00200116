-- The chat and the prompt buffer are Markdown buffers, and open cleanly whatever
-- tree-sitter parsers are installed: Neovim 0.12's markdown ftplugin starts tree-sitter
-- unconditionally, which fails on a build without the bundled parsers (as
-- scripts/build-nvim.sh builds it). The other tests run with -u NONE, without filetype
-- plugins; these turn them on, as a user's configuration does.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h') .. '/helpers.lua')
local api = vim.api

vim.cmd('filetype plugin indent on')
vim.cmd('syntax on')

-- Whether the markdown ftplugin fails here (no markdown parser): setting the filetype of
-- a plain scratch buffer, as the chat did before, reports its error as an error message.
local function markdown_ftplugin_fails()
  local buf = api.nvim_create_buf(false, true)
  vim.v.errmsg = ''
  pcall(function()
    vim.bo[buf].filetype = 'markdown'
  end)
  local err = vim.v.errmsg
  vim.v.errmsg = ''
  api.nvim_buf_delete(buf, { force = true })
  return err:find('Parser could not be created', 1, true) ~= nil, err
end

local function errors_in_notes()
  local out = {}
  for _, n in ipairs(H.notes) do
    if n.level == vim.log.levels.ERROR or n.level == vim.log.levels.WARN then
      out[#out + 1] = n.msg
    end
  end
  return out
end

H.main(function()
  local fails = markdown_ftplugin_fails()
  if fails then
    H.out('note: the markdown ftplugin fails on this Neovim (no markdown parser): the guard is exercised')
  else
    H.out('note: the markdown ftplugin works on this Neovim (a markdown parser is installed)')
  end

  H.test('the chat opens as a Markdown buffer with the filetype plugins on', function()
    vim.v.errmsg = ''
    local chat = require('agentls.chat').open()
    H.truthy(chat and api.nvim_buf_is_valid(chat.buf), 'the chat buffer')
    H.eq(vim.bo[chat.buf].filetype, 'markdown', 'its filetype')
    H.eq(vim.fn.bufwinid(chat.buf) ~= -1, true, 'shown in a window')
    H.eq(vim.v.errmsg, '', 'no error message')
    H.eq(errors_in_notes(), {}, 'no error or warning notification')
    -- The ftplugin's own settings are there (its Vim script part ran).
    H.truthy(vim.bo[chat.buf].commentstring:find('<!--', 1, true), "markdown's 'commentstring'")
  end)

  H.test('the prompt buffer opens as a Markdown buffer with the filetype plugins on', function()
    vim.v.errmsg = ''
    local chat = require('agentls.chat').open()
    local buf = H.truthy(require('agentls.chat').ask({ chat = chat }), 'the prompt buffer')
    H.eq(vim.bo[buf].filetype, 'markdown', 'its filetype')
    H.eq(vim.v.errmsg, '', 'no error message')
    H.eq(errors_in_notes(), {}, 'no error or warning notification')
  end)
end)
