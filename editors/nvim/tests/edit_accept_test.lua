-- An edit confirmed in the diff tab lands in the buffer, is saved, and one `u` restores
-- the original.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h') .. '/helpers.lua')
local api = vim.api

H.main(function()
  H.test('accepted edit in the diff tab lands in the buffer and one u undoes it', function()
    local original = 'alpha\nbeta\ngamma\ndelta\n'
    local root = H.workspace({ ['src/greek.txt'] = original })
    local path = root .. '/src/greek.txt'
    local buf = H.open(root, 'src/greek.txt')
    local tabs_before = #api.nvim_list_tabpages()

    local run = H.run_tool('replace', {
      file_path = path,
      old_string = 'beta\ngamma',
      new_string = 'BETA\nGAMMA\ngamma two',
    })
    local c = H.confirmation('edit', run)

    -- The diff tab: current text on the left, the editable proposal on the right.
    H.eq(#api.nvim_list_tabpages(), tabs_before + 1, 'tab count while asking')
    H.eq(api.nvim_get_current_tabpage(), c.tab, 'the diff tab is current')
    local wins = api.nvim_tabpage_list_wins(c.tab)
    H.eq(#wins, 2, 'windows in the diff tab')
    H.eq(api.nvim_win_get_buf(wins[1]), c.original_buf, 'left window shows the current text')
    H.eq(api.nvim_win_get_buf(wins[2]), c.proposal_buf, 'right window shows the proposal')
    for _, w in ipairs(wins) do
      H.truthy(vim.wo[w].diff, 'diff mode in window ' .. w)
    end
    H.eq(api.nvim_get_current_buf(), c.proposal_buf, 'cursor in the proposal')
    H.eq(H.lines(c.original_buf), { 'alpha', 'beta', 'gamma', 'delta' }, 'left side')
    H.eq(H.lines(c.proposal_buf), { 'alpha', 'BETA', 'GAMMA', 'gamma two', 'delta' }, 'right side')
    H.truthy(vim.bo[c.proposal_buf].modifiable, 'the proposal is editable')
    H.eq(run.done, false, 'the run waits for the decision')
    H.eq(H.lines(buf), { 'alpha', 'beta', 'gamma', 'delta' }, 'buffer untouched while asking')

    H.press('ga')
    local result = H.result(run)
    H.eq(result.status, 'success', 'result status (' .. vim.inspect(result) .. ')')
    H.eq(result.name, 'replace', 'result name')

    H.eq(#api.nvim_list_tabpages(), tabs_before, 'the diff tab is closed')
    H.eq(api.nvim_buf_is_valid(c.proposal_buf), false, 'the proposal buffer is wiped')
    H.eq(#require('agentls.confirm').pending(), 0, 'no pending confirmation')
    H.eq(H.lines(buf), { 'alpha', 'BETA', 'GAMMA', 'gamma two', 'delta' }, 'buffer after the edit')
    -- save_after_edit (default true): the approved edit is on disk too.
    H.eq(H.read(path), 'alpha\nBETA\nGAMMA\ngamma two\ndelta\n', 'file after the edit')
    H.eq(vim.bo[buf].modified, false, 'buffer saved')

    -- One undo step reverts the whole tool call.
    H.eq(api.nvim_get_current_buf(), buf, 'back in the edited buffer')
    H.press('u')
    H.eq(H.lines(buf), { 'alpha', 'beta', 'gamma', 'delta' }, 'buffer after one u')
    H.press('<C-r>')
    H.eq(H.lines(buf), { 'alpha', 'BETA', 'GAMMA', 'gamma two', 'delta' }, 'buffer after redo')
  end)

  H.test('accepting always stops the next edit from asking', function()
    local root = H.workspace({ ['a.txt'] = 'one\ntwo\n' })
    local path = root .. '/a.txt'
    local buf = H.open(root, 'a.txt')
    local run = H.run_tool('replace', { file_path = path, old_string = 'one', new_string = 'ONE' })
    H.confirmation('edit', run)
    H.press('gA')
    H.eq(H.result(run).status, 'success', 'first edit')
    local second = H.run_tool('replace', { file_path = path, old_string = 'two', new_string = 'TWO' })
    local result = H.result(second)
    H.eq(result.status, 'success', 'second edit, not asked (' .. vim.inspect(result) .. ')')
    H.eq(H.lines(buf), { 'ONE', 'TWO' }, 'buffer after both edits')
    H.eq(H.read(path), 'ONE\nTWO\n', 'file after both edits')
  end)

  H.test('a confirmation answered another way (agentls.confirm) closes its diff tab', function()
    local root = H.workspace({ ['b.txt'] = 'left\n' })
    local path = root .. '/b.txt'
    local buf, client = H.open(root, 'b.txt')
    local run = H.run_tool('replace', { file_path = path, old_string = 'left', new_string = 'right' })
    local c = H.confirmation('edit', run)
    local answered
    require('agentls.rpc').request(client, 'workspace/executeCommand', {
      command = 'agentls.confirm',
      arguments = { { id = c.id, outcome = 'proceed_once' } },
    }, function(err)
      answered = { err = err }
    end)
    H.wait('the agentls.confirm command', function()
      return answered
    end)
    H.eq(answered.err, nil, 'agentls.confirm error')
    H.eq(H.result(run).status, 'success', 'result status')
    H.eq(H.lines(buf), { 'right' }, 'buffer')
    H.wait('the diff tab to close', function()
      return #api.nvim_list_tabpages() == 1
    end, 5000)
    H.eq(#require('agentls.confirm').pending(), 0, 'no pending confirmation')
  end)
end)
