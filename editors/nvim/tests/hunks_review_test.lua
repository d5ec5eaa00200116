-- Issue 23 item 5, per-hunk review in the diff tab: a model's turn (the fake Gemini
-- server) proposes an edit of three hunks; the user takes the first and the third with
-- gy, leaves out the second with gn, watches the winbar's summary, and submits with gs.
-- The buffer and the file on disk then hold exactly those hunks, every other byte as it
-- was, and the model's next request says which hunks were taken.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h') .. '/helpers.lua')
local api = vim.api

-- 30 lines, some with a tab or trailing blanks, the last without a newline: they must
-- come back byte for byte.
local function text(changed)
  local out = {}
  for i = 1, 30 do
    local l = ('line %d'):format(i)
    if i % 7 == 0 then
      l = l .. '\twith a tab  '
    end
    out[#out + 1] = changed and changed[i] or l
  end
  return table.concat(out, '\n')
end

local proposed = { [2] = 'LINE 2', [15] = 'LINE 15', [29] = 'LINE 29' }

local function winbar_of(buf)
  return vim.wo[vim.fn.bufwinid(buf)].winbar
end

local tests = {}

tests[#tests + 1] = {
  'a model edit of three hunks: gy, gn, gy, gs apply hunks 1 and 3 only; the summary; the model is told',
  function()
    local root = H.workspace({ ['f.txt'] = text() })
    local path = root .. '/f.txt'
    local tap = H.tap(H.fake_gemini({
      turns = {
        { text = 'Reading it first.', calls = { { name = 'read_file', args = { file_path = path }, id = 'r1' } } },
        { calls = { { name = 'write_file', args = { file_path = path, content = text(proposed) }, id = 'w1' } } },
        { text = 'Noted which hunks you took.' },
      },
    }))
    local buf = H.open(root, 'f.txt', H.model_env(tap.url))
    -- Neovim's 'fixendofline' (on by default) would add the missing final newline when the
    -- edited buffer is saved, as on any :w; a user who turned it off keeps the file's bytes.
    vim.bo[buf].fixeol = false
    vim.cmd('Agentls capitalize three lines')
    local c = H.confirmation('edit')
    H.eq(#c.details.hunks, 3, 'the server lists three hunks')
    H.eq(api.nvim_get_current_buf(), c.proposal_buf, 'in the proposal')
    H.contains(winbar_of(c.proposal_buf), 'hunks 1? 2? 3? (none decided)', 'the summary before any decision')

    api.nvim_win_set_cursor(0, { 2, 0 })
    H.press('gy')
    H.eq(api.nvim_win_get_cursor(0)[1], 12, 'on to the second hunk (its first line of context)')
    H.contains(winbar_of(c.proposal_buf), 'hunks 1✓ 2? 3? (1 of 3 taken)', 'the summary after one')
    H.press('gn')
    H.eq(api.nvim_win_get_cursor(0)[1], 26, 'on to the third hunk')
    -- The third from the left window (the current text), where the hunk is at the same line.
    api.nvim_set_current_win(vim.fn.bufwinid(c.original_buf))
    api.nvim_win_set_cursor(0, { 29, 0 })
    H.press('gy')
    H.contains(winbar_of(c.proposal_buf), 'hunks 1✓ 2✗ 3✓ (2 of 3 taken)', 'the summary of all three')
    H.press('gs')

    H.wait('the end of the turn', function()
      return require('agentls.chat').text():find('Noted which hunks you took.', 1, true)
    end, 30000)
    local want = text({ [2] = 'LINE 2', [29] = 'LINE 29' })
    H.eq(table.concat(H.lines(buf), '\n'), want, 'the buffer has hunks 1 and 3 only')
    H.eq(vim.bo[buf].eol, false, 'still without a final newline')
    H.wait('the file on disk', function()
      return H.read(path) == want
    end)
    H.eq(vim.bo[buf].modified, false, 'saved')
    H.contains(tap.text(), 'The user accepted hunks 1 and 3 of 3; hunk 2 was not applied: @@ -12,7 +12,7 @@', 'the model is told')
  end,
}

H.main(function()
  H.test('the summary of hunk answers', function()
    local s = require('agentls.confirm').hunk_summary
    H.eq(s(3, {}), 'hunks 1? 2? 3? (none decided)', 'none')
    H.eq(s(3, { [2] = false }), 'hunks 1? 2✗ 3? (0 of 3 taken)', 'one rejected')
    H.eq(s(2, { true, true }), 'hunks 1✓ 2✓ (2 of 2 taken)', 'all')
    H.truthy(not pcall(s, 'x', {}), 'validated')
  end)
  for _, t in ipairs(tests) do
    if not H.fakegemini then
      H.skip(t[1], 'no fake Gemini server (internal/fakegemini/cmd/fakegemini)')
    else
      H.test(t[1], t[2])
    end
  end
end)
