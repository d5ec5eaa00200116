-- The help file documents what the plugin offers: :helptags builds its tags without an
-- error (no duplicate tag), `:help agentls` lands on the introduction, every user
-- command has its *:Command* tag, every function of require('agentls') its
-- *agentls.fn()* tag, the statusline component its *agentls-statusline*, and every
-- default key of the diff tab and the chat is named.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h') .. '/helpers.lua')
local api = vim.api

-- Functions of require('agentls') that are no API of their own.
local undocumented = {
  parse_tool_command = 'the parser of :AgentlsTool, exported for its tests',
}

local function help_lands(tag)
  local ok, err = pcall(vim.cmd, 'help ' .. vim.fn.escape(tag, ' '))
  if not ok then
    return nil, tostring(err)
  end
  local line = api.nvim_get_current_line()
  local here = vim.fn.expand('%:t')
  pcall(vim.cmd, 'helpclose')
  if here ~= 'agentls.txt' then
    return nil, 'help ' .. tag .. ' opened ' .. here
  end
  return line
end

H.main(function()
  H.test('doc/agentls.txt: tags, every command, function and default key', function()
    -- A copy, so that the tags file is not written into the repository.
    local dir = vim.fn.tempname()
    vim.fn.mkdir(dir .. '/doc', 'p')
    vim.fn.writefile(vim.fn.readfile(H.plugin .. '/doc/agentls.txt'), dir .. '/doc/agentls.txt')
    vim.cmd('helptags ' .. vim.fn.fnameescape(dir .. '/doc'))
    vim.opt.runtimepath:prepend(dir)
    local text = table.concat(vim.fn.readfile(dir .. '/doc/agentls.txt'), '\n')

    H.contains(H.truthy(help_lands('agentls')), '*agentls*', ':help agentls')
    local missing = {}
    for name in pairs(api.nvim_get_commands({})) do
      if name:match('^Agentls') and not help_lands(':' .. name) then
        missing[#missing + 1] = ':' .. name
      end
    end
    for name, v in pairs(require('agentls')) do
      if type(v) == 'function' and not undocumented[name] and not help_lands('agentls.' .. name .. '()') then
        missing[#missing + 1] = 'agentls.' .. name .. '()'
      end
    end
    if not help_lands('agentls-statusline') then
      missing[#missing + 1] = 'agentls-statusline'
    end
    table.sort(missing)
    H.eq(missing, {}, 'without help')

    local defaults = require('agentls.config').defaults
    for what, keys in pairs({ keys = defaults.keys, ['chat.keys'] = defaults.chat.keys }) do
      for action, key in pairs(keys) do
        H.contains(text, key, ('the default key of %s.%s'):format(what, action))
        H.contains(text, action .. " = '" .. key .. "'", ('the default of %s.%s in the options'):format(what, action))
      end
    end
  end)
end)
