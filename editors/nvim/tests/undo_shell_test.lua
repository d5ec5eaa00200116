-- Issue 23: a prompt's shell command (run by the real binary, contained and watched)
-- rewrites an open file with sed -i, makes one file, removes another, changes a mode and
-- writes an ignored path; :AgentlsDiff marks each file with the command that changed it
-- and <CR> on a file's "# " lines opens that file; :AgentlsUndoTurn takes it all back
-- (the buffer in one undo step: u brings the command's text back), says what it left
-- out; :AgentlsRedoTurn brings the command's result back, again in one step; the redone
-- prompt can be undone again. Unwatched commands (AGENTLS_SANDBOX_MACHINE=none) are said
-- to be not recorded.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h') .. '/helpers.lua')
local api = vim.api

local function note_with(s)
  for i = #H.notes, 1, -1 do
    if H.notes[i].msg:find(s, 1, true) then
      return H.notes[i]
    end
  end
end

local function wait_note(s)
  return H.wait('the message ' .. s, function()
    return note_with(s)
  end)
end

local function turn_ended(n)
  return H.wait('the end of the turn', function()
    local c = require('agentls.chat').current()
    local _, ended = require('agentls.chat').text():gsub('_turn ended: end_turn', '')
    return c and ended >= (n or 1) and c.turn and c.turn.ended
  end, 60000)
end

local function exists(path)
  return (vim.uv or vim.loop).fs_lstat(path) ~= nil
end

local function find_row(buf, prefix)
  for i, l in ipairs(H.lines(buf)) do
    if l:sub(1, #prefix) == prefix then
      return i
    end
  end
end

local function groups_on(buf, row)
  local ns = api.nvim_get_namespaces()['agentls.turndiff']
  local out = {}
  for _, m in ipairs(api.nvim_buf_get_extmarks(buf, ns, { row - 1, 0 }, { row - 1, -1 }, { details = true })) do
    if m[4].hl_group then
      out[#out + 1] = m[4].hl_group
    end
  end
  return table.concat(out, ' ')
end

-- Presses <CR> on the diff line starting with prefix: returns the name and the cursor
-- line of the buffer it opened, and goes back to the diff tab.
local function jump(dbuf, prefix)
  local tab = api.nvim_get_current_tabpage()
  local row = H.truthy(find_row(dbuf, prefix), 'the diff line ' .. prefix .. ': ' .. vim.inspect(H.lines(dbuf)))
  api.nvim_win_set_cursor(0, { row, 0 })
  H.press('<CR>')
  local name, line = api.nvim_buf_get_name(0), api.nvim_win_get_cursor(0)[1]
  api.nvim_set_current_tabpage(tab)
  return name, line
end

H.main(function()
  if not H.fakegemini then
    H.skip('undo and redo of a shell command', 'no fake Gemini server (internal/fakegemini/cmd/fakegemini)')
    return
  end

  H.test('a shell command undone and redone: one undo step each way; the diff names the command', function()
    local root = H.workspace({
      ['notes.txt'] = 'hello\nworld\n',
      ['gone.txt'] = 'bye\n',
      ['run.sh'] = '#!/bin/sh\n',
      ['.gitignore'] = 'build/\n',
    })
    vim.fn.setfperm(root .. '/run.sh', 'rw-r--r--')
    local notes, made, gone, script = root .. '/notes.txt', root .. '/made.txt', root .. '/gone.txt', root .. '/run.sh'
    local line = 'sed -i s/hello/HELLO/ notes.txt && echo new > made.txt && rm gone.txt && chmod +x run.sh && mkdir -p build && echo o > build/out.o'
    local url = H.fake_gemini({
      turns = {
        { calls = { { name = 'run_shell_command', args = { command = line } } } },
        { text = 'Done.' },
      },
    })
    local buf = H.open(root, 'notes.txt', H.model_env(url, { settings = { approvalMode = 'yolo' } }))
    local src_win = api.nvim_get_current_win()
    vim.cmd('Agentls change the files')
    turn_ended()
    H.eq(H.read(notes), 'HELLO\nworld\n', 'the command changed the file on disk')
    H.eq(H.read(made), 'new\n', 'made.txt')
    H.eq(exists(gone), false, 'gone.txt removed')
    H.eq(vim.fn.getfperm(script), 'rwxr-xr-x', 'run.sh made executable')
    -- The editor reloads the buffer the command rewrote.
    vim.o.autoread = true
    vim.cmd('checktime')
    H.eq(H.lines(buf), { 'HELLO', 'world' }, 'the buffer reloaded')

    -- The diff: each file headed by the command that changed it.
    vim.cmd('AgentlsDiff')
    local dbuf = H.wait('the diff tab', function()
      local b = api.nvim_get_current_buf()
      return vim.bo[b].filetype == 'diff' and b
    end)
    local text = table.concat(H.lines(dbuf), '\n')
    H.contains(text, '# notes.txt: changed by run_shell_command: sed -i s/hello/HELLO/ notes.txt', 'the mark of notes.txt')
    H.contains(text, '+HELLO', 'the new line')
    H.contains(text, '# mode 0644 → 0755', 'the mode change')
    H.contains(text, '# left out: ', 'the ignored path left out')
    local head = find_row(dbuf, '# notes.txt: changed by ')
    H.contains(groups_on(dbuf, head), 'AgentlsDiffFile', 'the file name of the header is marked')
    H.contains(groups_on(dbuf, head), 'AgentlsDiffBy', 'the calls of the header are marked')
    H.contains(groups_on(dbuf, find_row(dbuf, '# left out: ')), 'AgentlsDiffWarn', 'what was left out is marked')
    -- <CR> on a file's header or its notes opens that file, not the one above.
    local name, at = jump(dbuf, '# made.txt: changed by')
    H.eq({ name, at }, { made, 1 }, '<CR> on the header of made.txt')
    name, at = jump(dbuf, '# mode 0644')
    H.eq({ name, at }, { script, 1 }, '<CR> on the mode line of run.sh')
    name, at = jump(dbuf, '+HELLO')
    H.eq({ name, at }, { notes, 1 }, '<CR> on a changed line of notes.txt')
    H.notes = {}
    local before = api.nvim_get_current_buf()
    jump(dbuf, '# left out: ')
    H.eq(api.nvim_get_current_buf(), before, 'the closing note opens nothing')
    H.truthy(note_with('no file under the cursor'), 'and says so')
    H.press('q')
    api.nvim_set_current_win(src_win)
    api.nvim_set_current_buf(buf)

    -- Undo: everything back, the buffer in one step of its undo.
    H.notes = {}
    vim.cmd('AgentlsUndoTurn')
    local msg = wait_note('undid prompt 1').msg
    H.contains(msg, 'ignored paths left out', 'the message says what was left out')
    H.eq(H.lines(buf), { 'hello', 'world' }, 'the buffer after the undo')
    H.eq(H.read(notes), 'hello\nworld\n', 'notes.txt on disk after the undo')
    H.eq(exists(made), false, 'made.txt gone')
    H.eq(H.read(gone), 'bye\n', 'gone.txt back')
    H.eq(vim.fn.getfperm(script), 'rw-r--r--', 'run.sh mode back')
    H.eq(H.read(root .. '/build/out.o'), 'o\n', 'the ignored path is left as it is')
    H.press('u')
    H.eq(H.lines(buf), { 'HELLO', 'world' }, "one u re-applies the command's change")
    H.press('<C-r>')
    H.eq(H.lines(buf), { 'hello', 'world' }, 'and <C-r> undoes it again')

    -- Redo: the command's result is back, again in one step.
    H.notes = {}
    vim.cmd('AgentlsRedoTurn')
    wait_note('redid prompt 1')
    H.eq(H.lines(buf), { 'HELLO', 'world' }, 'the buffer after the redo')
    H.eq(H.read(notes), 'HELLO\nworld\n', 'notes.txt on disk after the redo')
    H.eq(H.read(made), 'new\n', 'made.txt back')
    H.eq(exists(gone), false, 'gone.txt removed again')
    H.eq(vim.fn.getfperm(script), 'rwxr-xr-x', 'run.sh executable again')
    H.press('u')
    H.eq(H.lines(buf), { 'hello', 'world' }, 'one u takes the redo back in the buffer')
    H.press('<C-r>')
    H.eq(H.lines(buf), { 'HELLO', 'world' }, 'and <C-r> brings it again')
    -- Nothing more to redo; a redone prompt can be undone again.
    H.notes = {}
    vim.cmd('AgentlsRedoTurn')
    wait_note('redo failed')
    vim.cmd('AgentlsUndoTurn')
    wait_note('undid prompt 1')
    H.eq(H.lines(buf), { 'hello', 'world' }, 'undone again')
    H.eq(exists(made), false, 'made.txt gone again')
  end)

  H.test('a redo where the file changed since the undo is asked, kind agentls.redo', function()
    local root = H.workspace({ ['notes.txt'] = 'hello\n' })
    local url = H.fake_gemini({
      turns = {
        { calls = { { name = 'run_shell_command', args = { command = 'sed -i s/hello/HELLO/ notes.txt' } } } },
        { text = 'Done.' },
      },
    })
    local buf = H.open(root, 'notes.txt', H.model_env(url, { settings = { approvalMode = 'yolo' } }))
    vim.cmd('Agentls change it')
    turn_ended()
    vim.o.autoread = true
    vim.cmd('checktime')
    H.eq(H.lines(buf), { 'HELLO' }, 'reloaded')
    vim.cmd('AgentlsUndoTurn')
    wait_note('undid prompt 1')
    H.eq(H.lines(buf), { 'hello' }, 'undone')
    api.nvim_buf_set_lines(buf, 0, -1, false, { 'mine' })
    local asked
    H.select_choice = function(items, opts)
      asked = opts
      return items[2]
    end
    vim.cmd('AgentlsRedoTurn')
    H.wait('the question', function()
      return asked
    end)
    H.eq(asked.kind, 'agentls.redo', 'select kind')
    H.contains(asked.prompt, 'changed since the undo of prompt 1, so nothing was redone: notes.txt', 'the question')
    H.eq(H.lines(buf), { 'mine' }, 'nothing redone')
  end)

  H.test('an unwatched command (AGENTLS_SANDBOX_MACHINE=none) is said to be not recorded', function()
    local root = H.workspace({ ['a.txt'] = 'a\n' })
    local url = H.fake_gemini({
      turns = {
        { calls = { { name = 'read_file', args = { file_path = root .. '/a.txt' } } } },
        { calls = { { name = 'replace', args = { file_path = root .. '/a.txt', old_string = 'a', new_string = 'A' } } } },
        { calls = { { name = 'run_shell_command', args = { command = 'echo x > made.txt' } } } },
        { text = 'Done.' },
      },
    })
    local env = H.model_env(url, { settings = { approvalMode = 'yolo' } })
    env.cmd_env.AGENTLS_SANDBOX_MACHINE = 'none'
    local buf = H.open(root, 'a.txt', env)
    vim.cmd('Agentls go')
    turn_ended()
    H.eq(H.read(root .. '/made.txt'), 'x\n', 'the command ran')
    vim.cmd('AgentlsDiff')
    local dbuf = H.wait('the diff tab', function()
      local b = api.nvim_get_current_buf()
      return vim.bo[b].filetype == 'diff' and b
    end)
    local row = H.truthy(find_row(dbuf, '# not recorded: `echo x > made.txt`'), 'the note: ' .. vim.inspect(H.lines(dbuf)))
    H.contains(groups_on(dbuf, row), 'AgentlsDiffWarn', 'marked')
    H.contains(vim.wo.winbar, '1 command not recorded', 'the winbar says so')
    H.press('q')
    H.notes = {}
    vim.cmd('AgentlsUndoTurn')
    local msg = wait_note('undid prompt 1').msg
    H.contains(msg, 'not recorded, so not taken back: `echo x > made.txt`', 'the message')
    H.eq(H.lines(buf), { 'a' }, 'the edit undone')
    H.eq(H.read(root .. '/made.txt'), 'x\n', "the unwatched command's file stays")
  end)
end)
