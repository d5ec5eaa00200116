-- Issue 14, edits and confirmations: no "Applied changes" message (Neovim 0.11+'s report
-- of annotated edits, which stopped at "Press ENTER") after approved edits, also in an
-- auto_edit run; save_after_edit leaves a buffer with the user's own unsaved changes
-- unsaved and says so; the diff tab's per-hunk keys and "accept always and save" answer
-- with the offered choice ids (once with acceptedHunks, always_save) as docs/protocol.md
-- says; the picker shows exactly the offered choices.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h') .. '/helpers.lua')
local api = vim.api

local function note_with(s)
  for _, n in ipairs(H.notes) do
    if n.msg:find(s, 1, true) then
      return n
    end
  end
end

-- Runs the plugin's agentls/confirm handler in a coroutine, as Neovim runs a server
-- request's handler, with details; returns a box whose result is set once answered.
local function ask(details)
  local box = {}
  local co = coroutine.create(function()
    box.result = require('agentls.confirm').handler(nil, details, { client_id = -1 })
  end)
  local ok, err = coroutine.resume(co)
  assert(ok, err)
  return box
end

local function numbered(n, changes)
  local out = {}
  for i = 1, n do
    out[#out + 1] = changes and changes[i] or tostring(i)
  end
  return table.concat(out, '\n') .. '\n'
end

-- An edit proposal of a 20-line file with two hunks (lines 2 and 18 changed).
local function hunk_details(root, id)
  return {
    id = id,
    toolCallId = 'hunks/' .. id,
    type = 'edit',
    title = 'Edit x.txt',
    uri = vim.uri_from_fname(root .. '/x.txt'),
    originalContent = numbered(20),
    newContent = numbered(20, { [2] = 'TWO', [18] = 'EIGHTEEN' }),
    diff = '',
    -- As the server offers them for an edit (confirm.Policy.Offer).
    choices = {
      { id = 'once', outcome = 'proceed_once', label = 'Allow once' },
      { id = 'always', outcome = 'proceed_always', covers = 'every edit', label = 'Allow every edit for this session' },
      {
        id = 'always_save',
        outcome = 'proceed_always_tool',
        covers = 'write_file',
        persist = 'user',
        label = 'Always allow write_file, and save it in your settings',
      },
      { id = 'reject', outcome = 'cancel', label = 'Reject' },
      { id = 'reject_always', outcome = 'reject_always', covers = 'write_file', label = 'Always reject write_file for this session' },
    },
    hunks = {
      { index = 0, oldStart = 1, oldLines = 5, newStart = 1, newLines = 5 },
      { index = 1, oldStart = 15, oldLines = 6, newStart = 15, newLines = 6 },
    },
  }
end

H.main(function()
  H.test('approved edits, annotated by the server, leave no "Applied changes" message, also in auto_edit', function()
    local root = H.workspace({ ['a.txt'] = 'one\ntwo\nthree\n' })
    local path = root .. '/a.txt'
    -- The edits as the server sent them.
    local edit = require('agentls.edit')
    local orig = edit.handler
    local sent = {}
    edit.handler = function(err, params, ctx)
      sent[#sent + 1] = vim.deepcopy(params)
      return orig(err, params, ctx)
    end
    local ok, err = pcall(function()
      -- Change annotations also on 0.10, which does not advertise them itself.
      local buf = H.open(root, 'a.txt', {
        settings = { approvalMode = 'auto_edit' },
        notify_results = false,
        capabilities = { workspace = { workspaceEdit = { changeAnnotationSupport = { groupsOnLabel = true } } } },
      })
      vim.cmd('messages clear')
      for _, w in ipairs({ { 'one', 'ONE' }, { 'two', 'TWO' }, { 'three', 'THREE' } }) do
        local r = H.result(H.run_tool('replace', { file_path = path, old_string = w[1], new_string = w[2] }))
        H.eq(r.status, 'success', 'edit ' .. w[1])
      end
      H.eq(H.lines(buf), { 'ONE', 'TWO', 'THREE' }, 'the buffer')
      H.eq(H.read(path), 'ONE\nTWO\nTHREE\n', 'saved')
      H.eq(#sent, 3, 'three edits')
      for _, p in ipairs(sent) do
        H.truthy(type(p.edit.changeAnnotations) == 'table' and next(p.edit.changeAnnotations), 'the server annotated the edit')
      end
      local messages = vim.fn.execute('messages')
      H.not_contains(messages, 'Applied changes', ':messages')
      H.eq(#H.notes, 0, 'no notification: ' .. vim.inspect(H.notes))
    end)
    edit.handler = orig
    assert(ok, err)
  end)

  H.test('save_after_edit keeps a buffer with the user\'s unsaved changes unsaved and says so', function()
    local root = H.workspace({ ['a.txt'] = 'one\ntwo\nthree\n', ['b.txt'] = 'bee\n' })
    local path = root .. '/a.txt'
    local buf = H.open(root, 'a.txt', { settings = { approvalMode = 'auto_edit' }, notify_results = false })
    api.nvim_buf_set_lines(buf, 2, 3, false, { 'three (mine)' })
    local r = H.result(H.run_tool('replace', { file_path = path, old_string = 'one', new_string = 'ONE' }, buf))
    H.eq(r.status, 'success', 'the edit (' .. vim.inspect(r) .. ')')
    H.eq(H.lines(buf), { 'ONE', 'two', 'three (mine)' }, 'the buffer has both')
    H.eq(vim.bo[buf].modified, true, 'not saved')
    H.eq(H.read(path), 'one\ntwo\nthree\n', 'the file on disk is untouched')
    H.truthy(note_with('not saved: a.txt had unsaved changes of yours'), 'the user is told')
    -- A buffer without changes of the user's is saved as before.
    local r2 = H.result(H.run_tool('replace', { file_path = root .. '/b.txt', old_string = 'bee', new_string = 'BEE' }, buf))
    H.eq(r2.status, 'success', 'second edit')
    H.eq(H.read(root .. '/b.txt'), 'BEE\n', 'b.txt saved')
  end)

  H.test('per-hunk keys: gy/gn/gs send acceptedHunks; all accepted or none decided; marks', function()
    local root = H.workspace({ ['x.txt'] = numbered(20) })
    local box = ask(hunk_details(root, 'h1'))
    local c = H.confirmation('edit')
    H.eq(api.nvim_get_current_buf(), c.proposal_buf, 'in the proposal')
    H.contains(vim.wo.winbar, 'gy hunk ok', 'the winbar names the hunk keys')
    -- Submitting with nothing decided only says how.
    H.press('gs')
    H.truthy(note_with('no hunk decided yet'), 'told how')
    H.eq(box.result, nil, 'not answered')
    api.nvim_win_set_cursor(0, { 2, 0 })
    H.press('gy')
    H.eq(api.nvim_win_get_cursor(0)[1], 15, 'on to the next hunk')
    H.press('gn')
    local ns = api.nvim_get_namespaces()['agentls.confirm.hunks']
    local marks = {}
    for _, m in ipairs(api.nvim_buf_get_extmarks(c.proposal_buf, ns, 0, -1, { details = true })) do
      marks[#marks + 1] = m[2] .. ':' .. m[4].virt_text[1][1]
    end
    H.eq(marks, { '0:  ✓ hunk accepted', '14:  ✗ hunk rejected' }, 'the marks')
    H.press('gs')
    H.wait('the answer', function()
      return box.result
    end)
    H.eq(box.result, { choice = 'once', acceptedHunks = { 0 } }, 'the answer')
    H.eq(#api.nvim_list_tabpages(), 1, 'the diff tab is closed')

    -- Every hunk accepted is the whole proposal; in the left window too.
    box = ask(hunk_details(root, 'h2'))
    c = H.confirmation('edit')
    api.nvim_set_current_win(vim.fn.bufwinid(c.original_buf))
    api.nvim_win_set_cursor(0, { 18, 0 })
    H.press('gy')
    api.nvim_win_set_cursor(0, { 1, 0 })
    H.press('gy')
    H.press('gs')
    H.wait('the answer', function()
      return box.result
    end)
    H.eq(box.result, { choice = 'once' }, 'the whole proposal')

    -- None accepted is a rejection, and the call counts as rejected.
    box = ask(hunk_details(root, 'h3'))
    c = H.confirmation('edit')
    api.nvim_win_set_cursor(0, { 2, 0 })
    H.press('gn')
    H.press('gs')
    H.wait('the answer', function()
      return box.result
    end)
    H.eq(box.result, { choice = 'reject' }, 'a rejection')
    H.truthy(require('agentls.confirm').was_rejected('hunks/h3'), 'rejected')

    -- Hunk answers and the user's own changes exclude each other.
    box = ask(hunk_details(root, 'h4'))
    c = H.confirmation('edit')
    api.nvim_buf_set_lines(c.proposal_buf, 0, 1, false, { 'mine' })
    api.nvim_win_set_cursor(0, { 2, 0 })
    H.press('gy')
    H.press('gs')
    H.truthy(note_with('you edited the proposal'), 'told')
    H.eq(box.result, nil, 'not answered')
    H.press('gm')
    H.wait('the answer', function()
      return box.result
    end)
    H.eq(box.result.outcome, 'modify_with_editor', 'the user\'s version')
  end)

  H.test('gS answers always_save, gX reject_always; the winbar and the picker show the offered labels', function()
    local root = H.workspace({ ['x.txt'] = numbered(20) })
    local d = hunk_details(root, 's1')
    d.hunks = nil
    local box = ask(d)
    H.confirmation('edit')
    for _, want in ipairs({
      'ga Allow once',
      'gA Allow every edit for this session',
      'gS Always allow write_file, and save it in your settings',
      'gx Reject',
      'gX Always reject write_file for this session',
    }) do
      H.contains(vim.wo.winbar, want, 'the winbar')
    end
    H.press('gS')
    H.wait('the answer', function()
      return box.result
    end)
    H.eq(box.result, { choice = 'always_save' }, 'the answer')

    box = ask(hunk_details(root, 's1x'))
    H.confirmation('edit')
    H.press('gX')
    H.wait('the answer', function()
      return box.result
    end)
    H.eq(box.result, { choice = 'reject_always' }, 'reject always')
    H.truthy(require('agentls.confirm').was_rejected('hunks/s1x'), 'rejecting always is rejecting')

    -- A question asked every time offers no "always": the keys say so and send nothing.
    d = hunk_details(root, 's1n')
    d.choices = { d.choices[1], d.choices[4] }
    box = ask(d)
    H.confirmation('edit')
    H.not_contains(vim.wo.winbar, 'gA', 'no always key in the winbar')
    H.press('gA')
    H.truthy(note_with('does not offer "always"'), 'told')
    H.eq(box.result, nil, 'not answered')
    H.press('ga')
    H.wait('the answer', function()
      return box.result
    end)
    H.eq(box.result, { choice = 'once' }, 'once')

    -- Through vim.ui.select: exactly the offered items; the chosen id goes back.
    local execute_choices = {
      { id = 'once', outcome = 'proceed_once', label = 'Allow once' },
      { id = 'always', outcome = 'proceed_always', covers = 'make', label = 'Always allow make for this session' },
      { id = 'always_save', outcome = 'proceed_always', covers = 'make', persist = 'user', label = 'Always allow make, and save it in your settings' },
      { id = 'reject', outcome = 'cancel', label = 'Reject' },
      { id = 'reject_always', outcome = 'reject_always', covers = 'make', label = 'Always reject make for this session' },
    }
    local labels
    H.select_choice = function(items, opts)
      labels = vim.tbl_map(opts.format_item, items)
      return items[3]
    end
    box = ask({
      id = 's2',
      toolCallId = 'x/s2',
      type = 'execute',
      title = 'Run make',
      command = 'make',
      rootCommands = { 'make' },
      directory = root,
      choices = execute_choices,
    })
    H.wait('the answer', function()
      return box.result
    end)
    H.eq(labels, vim.tbl_map(function(c)
      return c.label
    end, execute_choices), 'the labels')
    H.eq(box.result, { choice = 'always_save' }, 'the select answer')
    H.select_choice = function()
      return nil
    end
    box = ask({ id = 's3', toolCallId = 'x/s3', type = 'execute', title = 'Run make', command = 'make', rootCommands = { 'make' }, directory = root, choices = execute_choices })
    H.wait('the answer', function()
      return box.result
    end)
    H.eq(box.result, { choice = 'reject' }, 'dismissed')
    H.truthy(require('agentls.confirm').was_rejected('x/s3'), 'dismissing is rejecting')

    -- Without choices (an older server): allow once or reject, answered by outcome.
    H.select_choice = function(items)
      labels = vim.tbl_map(function(i)
        return i.label
      end, items)
      return items[1]
    end
    box = ask({ id = 's4', toolCallId = 'x/s4', type = 'execute', title = 'Run make', command = 'make', rootCommands = { 'make' }, directory = root })
    H.wait('the answer', function()
      return box.result
    end)
    H.eq(labels, { 'Allow once', 'Reject' }, 'the fallback labels')
    H.eq(box.result, { outcome = 'proceed_once' }, 'the fallback answer')
  end)
end)
