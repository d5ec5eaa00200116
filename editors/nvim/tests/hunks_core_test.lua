-- Issue 14, per-hunk consent and saved approvals end to end with the real server. These
-- need the server side of docs/protocol.md's issue-14 additions (ConfirmDetails.hunks,
-- acceptedHunks, persist), built on branch i14-core: they fail on a server without it.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h') .. '/helpers.lua')
local api = vim.api

local function numbered(n, changes)
  local out = {}
  for i = 1, n do
    out[#out + 1] = changes and changes[i] or tostring(i)
  end
  return table.concat(out, '\n') .. '\n'
end

H.main(function()
  H.test('accepting one hunk of two applies only that hunk', function()
    local root = H.workspace({ ['x.txt'] = numbered(20) })
    local path = root .. '/x.txt'
    local buf = H.open(root, 'x.txt')
    local run = H.run_tool('write_file', { file_path = path, content = numbered(20, { [2] = 'TWO', [18] = 'EIGHTEEN' }) })
    local c = H.confirmation('edit', run)
    H.eq(type(c.details.hunks) == 'table' and #c.details.hunks, 2, 'the server lists two hunks')
    api.nvim_win_set_cursor(0, { 2, 0 })
    H.press('gy')
    api.nvim_win_set_cursor(0, { 18, 0 })
    H.press('gn')
    H.press('gs')
    local r = H.result(run)
    H.eq(r.status, 'success', 'result (' .. vim.inspect(r) .. ')')
    H.eq(H.lines(buf)[2], 'TWO', 'the accepted hunk')
    H.eq(H.lines(buf)[18], '18', 'the rejected hunk is not applied')
    H.eq(H.read(path), numbered(20, { [2] = 'TWO' }), 'on disk')
  end)

  H.test('gS: the rule is saved in the user settings and a new server does not ask', function()
    local root = H.workspace({ ['y.txt'] = 'one\ntwo\n' })
    local path = root .. '/y.txt'
    H.open(root, 'y.txt')
    local run = H.run_tool('replace', { file_path = path, old_string = 'one', new_string = 'ONE' })
    H.confirmation('edit', run)
    H.press('gS')
    H.eq(H.result(run).status, 'success', 'first edit')
    local file = vim.env.XDG_CONFIG_HOME .. '/agentls/settings.json'
    local before = H.read(file)
    -- The saved rule must not reach the other test files, which share the settings.
    local ok, err = pcall(function()
      H.truthy((H.read(file) or '') ~= '', 'the user settings file was written: ' .. file)
      H.reset()
      local buf = H.open(root, 'y.txt')
      local r = H.result(H.run_tool('replace', { file_path = path, old_string = 'two', new_string = 'TWO' }))
      H.eq(r.status, 'success', 'not asked: ' .. vim.inspect(r))
      H.eq(#require('agentls.confirm').pending(), 0, 'nothing pending')
      H.eq(H.lines(buf), { 'ONE', 'TWO' }, 'both edits')
    end)
    os.remove(file)
    assert(ok, err)
    H.eq(before ~= nil, true, 'the settings file existed right after gS')
  end)
end)
