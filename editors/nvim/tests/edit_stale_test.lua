-- A buffer edited between the proposal and the accept makes the edit fail cleanly: the
-- user's text stays, nothing is written, and the result reports the failure.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h') .. '/helpers.lua')
local api = vim.api

-- Proposes an edit of the second line, lets the user type on the first line of the file
-- while the diff tab is open, then accepts. flush: whether the user's change reaches the
-- server before the accept (it does when the user takes longer than the didChange
-- debounce; with a long debounce it does not, and the editor must refuse the edit).
local function stale_case(flush, opts)
  local original = 'first\nsecond\nthird\n'
  local root = H.workspace({ ['notes.md'] = original })
  local path = root .. '/notes.md'
  local buf, client = H.open(root, 'notes.md', opts)
  local run = H.run_tool('replace', { file_path = path, old_string = 'second', new_string = 'SECOND' })
  local c = H.confirmation('edit', run)

  vim.cmd('tabprevious')
  H.eq(api.nvim_get_current_buf(), buf, 'back in the file')
  api.nvim_win_set_cursor(0, { 1, 0 })
  H.press('A by the user<Esc>')
  H.eq(H.lines(buf), { 'first by the user', 'second', 'third' }, 'user edit')
  if flush then
    -- Sent now, it reaches the server before the answer to the confirmation (one pipe,
    -- read in order, notifications handled on the read loop): no need to wait.
    require('agentls.rpc').flush_changes(client, buf)
  end

  vim.cmd('tabnext')
  H.eq(api.nvim_get_current_tabpage(), c.tab, 'in the diff tab again')
  H.press('ga')
  local result = H.result(run)
  H.eq(H.lines(buf), { 'first by the user', 'second', 'third' }, 'buffer keeps the user edit only')
  H.eq(H.read(path), original, 'nothing written')
  H.eq(#api.nvim_list_tabpages(), 1, 'the diff tab is closed')
  H.eq(result.status, 'error', 'result status (' .. vim.inspect(result) .. ')')
  H.truthy(type(result.error) == 'table' and type(result.error.message) == 'string', 'the error says why')
  local refused = false
  for _, n in ipairs(H.notes) do
    refused = refused or n.msg:find('edit refused: notes.md changed in the editor', 1, true) ~= nil
  end
  if flush then
    -- The server knew of the change: it refused the edit itself and sent none.
    H.truthy(not refused, 'the server, not the plugin, refused the edit')
  else
    -- The server sent the edit for the version it knew; the plugin refused it.
    H.truthy(refused, 'the plugin refused the edit as stale')
  end
  H.eq(result.error.type, 'stale_content', 'error type')
end

H.main(function()
  H.test('a stale buffer (change not yet sent) makes the accepted edit fail cleanly', function()
    stale_case(false, { flags = { debounce_text_changes = 10000 } })
  end)
  H.test('a stale buffer (change already sent) makes the accepted edit fail cleanly', function()
    stale_case(true)
  end)
end)
