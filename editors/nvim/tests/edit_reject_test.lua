-- A rejected edit (key or closing the diff tab) changes nothing.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h') .. '/helpers.lua')
local api = vim.api

local function check_rejected(how, reject)
  local original = 'keep\nthis\ntext\n'
  local root = H.workspace({ ['keep.txt'] = original })
  local path = root .. '/keep.txt'
  local buf = H.open(root, 'keep.txt')
  local tick = api.nvim_buf_get_changedtick(buf)
  local run = H.run_tool('replace', { file_path = path, old_string = 'this', new_string = 'THAT' })
  local c = H.confirmation('edit', run)
  reject(c)
  local result = H.result(run)
  H.eq(result.status, 'cancelled', how .. ': result status (' .. vim.inspect(result) .. ')')
  H.eq(#api.nvim_list_tabpages(), 1, how .. ': the diff tab is closed')
  H.eq(#require('agentls.confirm').pending(), 0, how .. ': no pending confirmation')
  H.eq(H.lines(buf), { 'keep', 'this', 'text' }, how .. ': buffer')
  H.eq(api.nvim_buf_get_changedtick(buf), tick, how .. ': buffer never changed')
  H.eq(vim.bo[buf].modified, false, how .. ': buffer not modified')
  H.eq(H.read(path), original, how .. ': file')
end

H.main(function()
  H.test('rejecting with the reject key changes nothing', function()
    check_rejected('gx', function()
      H.press('gx')
    end)
  end)
  H.test('closing the diff tab without deciding rejects', function()
    check_rejected('tabclose', function(c)
      H.eq(api.nvim_get_current_tabpage(), c.tab, 'in the diff tab')
      vim.cmd('tabclose')
    end)
  end)
end)
