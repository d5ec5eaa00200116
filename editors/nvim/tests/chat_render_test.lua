-- The chat buffer renders agentls/update notifications as the protocol describes them:
-- streamed text in place, thoughts folded (or dimmed), tool-call lines updated in place
-- with their locations, plans as a checklist, compression notes, the end of a turn; <CR>
-- on a location opens the file at the line in the previous window. The updates are
-- delivered through the running client's own agentls/update handler, for a session the
-- chat was bound to with resume(), so these tests need no model.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h') .. '/helpers.lua')
local api = vim.api

local function sender(client, session)
  return function(update)
    client.handlers['agentls/update'](nil, { session = session, update = update }, {
      client_id = client.id,
      method = 'agentls/update',
    })
  end
end

local function find_line(buf, pattern)
  for i, l in ipairs(H.lines(buf)) do
    if l:find(pattern, 1, true) then
      return i
    end
  end
end

H.main(function()
  H.test('updates render in place: text, thoughts, tool calls, plan, compression, end', function()
    local root = H.workspace({ ['src/a.txt'] = 'one\ntwo\nthree\n' })
    local src, client = H.open(root, 'src/a.txt')
    local src_win = api.nvim_get_current_win()
    local chat = require('agentls.chat').resume('render-1', { title = 'a title' })
    local buf = chat.buf
    H.eq(api.nvim_get_current_buf(), buf, 'the chat is shown and focused')
    H.eq(vim.bo[buf].filetype, 'markdown', 'filetype')
    H.eq(vim.bo[buf].buftype, 'nofile', 'scratch buffer')
    H.eq(vim.bo[buf].modifiable, false, 'not modifiable')
    H.eq(#api.nvim_tabpage_list_wins(0), 2, 'a split')
    H.contains(require('agentls.chat').text(chat), 'resumed session render-1: a title', 'resume note')
    local send = sender(client, 'render-1')

    send({ kind = 'message_chunk', text = 'Hello' })
    send({ kind = 'message_chunk', text = ', wor' })
    send({ kind = 'message_chunk', text = 'ld\nsecond line' })
    local lines = H.lines(buf)
    H.eq(lines[#lines - 1], 'Hello, world', 'streamed text joined in place')
    H.eq(lines[#lines], 'second line', 'a new line of the stream')

    send({ kind = 'thought_chunk', text = 'pondering\nmore' })
    local t = H.truthy(find_line(buf, '> pondering'), 'thought line')
    H.eq(H.lines(buf)[t + 1], '> more', 'second thought line quoted')
    local win = api.nvim_get_current_win()
    H.truthy(api.nvim_win_call(win, function()
      return vim.fn.foldclosed(t)
    end) ~= -1, 'the thought is folded')
    H.eq(api.nvim_win_call(win, function()
      return vim.fn.foldclosed(t - 2)
    end), -1, 'the message is not folded')

    local uri = vim.uri_from_fname(root .. '/src/a.txt')
    send({
      kind = 'tool_call',
      toolCallId = 'c1',
      name = 'read_file',
      title = 'src/a.txt',
      toolKind = 'read',
      status = 'pending',
      locations = { { uri = uri, range = { start = { line = 1, character = 0 }, ['end'] = { line = 1, character = 0 } } } },
      rawInput = { file_path = root .. '/src/a.txt' },
    })
    send({ kind = 'tool_call', toolCallId = 'c2', name = 'run_shell_command', title = 'make', status = 'pending', locations = {} })
    local head = H.truthy(find_line(buf, '- read_file: src/a.txt · pending'), 'tool line pending')
    H.eq(H.lines(buf)[head + 1], '  - src/a.txt:2', 'location line')
    H.eq(H.lines(buf)[head + 2], '- run_shell_command: make · pending', 'second tool line right after')
    local count = api.nvim_buf_line_count(buf)
    send({ kind = 'tool_call_update', toolCallId = 'c1', status = 'awaiting_approval' })
    H.eq(H.lines(buf)[head], '- read_file: src/a.txt · awaiting approval', 'awaiting approval')
    send({ kind = 'tool_call_update', toolCallId = 'c1', status = 'in_progress' })
    H.eq(H.lines(buf)[head], '- read_file: src/a.txt · running', 'running')
    send({ kind = 'tool_call_update', toolCallId = 'c1', status = 'completed', content = { text = 'one\ntwo' } })
    H.eq(H.lines(buf)[head], '- read_file: src/a.txt · done', 'done, in place')
    send({ kind = 'tool_call_update', toolCallId = 'c2', status = 'in_progress', output = 'building\n' })
    send({
      kind = 'tool_call_update',
      toolCallId = 'c2',
      status = 'failed',
      error = { type = 'shell_execute_error', message = 'exit 2' },
    })
    -- The output of each call follows it, folded: c1's result (4 lines with the fences)
    -- and c2's streamed output (3 lines).
    H.eq(vim.list_slice(H.lines(buf), head + 2, head + 5), { '  ```', '  one', '  two', '  ```' }, 'c1 output')
    H.eq(H.lines(buf)[head + 6], '- run_shell_command: make · failed: exit 2', 'failed with its error')
    H.eq(vim.list_slice(H.lines(buf), head + 7, head + 9), { '  ```', '  building', '  ```' }, 'c2 output')
    H.eq(api.nvim_buf_line_count(buf), count + 7, 'status updates add only the output lines')

    send({ kind = 'plan', entries = { { content = 'read', status = 'completed' }, { content = 'edit', status = 'in_progress' } } })
    send({
      kind = 'plan',
      entries = {
        { content = 'read', status = 'completed' },
        { content = 'edit', status = 'completed' },
        { content = 'test', status = 'pending' },
      },
    })
    local text = require('agentls.chat').text(chat)
    H.contains(text, '**Plan**\n- [x] read\n- [x] edit\n- [ ] test', 'the plan checklist')
    local _, plans = text:gsub('%*%*Plan%*%*', '')
    H.eq(plans, 1, 'the plan is updated in place')

    send({ kind = 'compression', text = 'history summarized', tokensBefore = 12000, tokensAfter = 3000 })
    H.contains(require('agentls.chat').text(chat), '_context compressed: 12000 → 3000 tokens · history summarized_', 'compression note')
    send({ kind = 'turn_end', stopReason = 'end_turn', usage = { inputTokens = 120, outputTokens = 30 } })
    H.contains(require('agentls.chat').text(chat), '_turn ended: end_turn · tokens: 120 in, 30 out_', 'turn end')

    -- Updates of other sessions (and of the editor's own runs) stay out of this chat.
    local before = require('agentls.chat').text(chat)
    sender(client, 'editor')({ kind = 'tool_call', toolCallId = 'e1', name = 'read_file', status = 'pending' })
    sender(client, 'other')({ kind = 'message_chunk', text = 'elsewhere' })
    H.eq(require('agentls.chat').text(chat), before, 'chat unchanged by other sessions')

    -- <CR> on the location opens the file at the line in the previous window.
    api.nvim_set_current_win(win)
    api.nvim_win_set_cursor(win, { head + 1, 0 })
    H.press('<CR>')
    H.eq(api.nvim_get_current_win(), src_win, 'jumped into the previous window')
    H.eq(api.nvim_get_current_buf(), src, 'the file')
    H.eq(api.nvim_win_get_cursor(0)[1], 2, 'the line')
    H.eq(api.nvim_win_get_buf(win), buf, 'the chat window still shows the chat')
    -- And from the tool call's own line, to its first location.
    api.nvim_win_set_cursor(src_win, { 3, 0 })
    api.nvim_set_current_win(win)
    api.nvim_win_set_cursor(win, { head, 0 })
    H.press('<CR>')
    H.eq(api.nvim_get_current_win(), src_win, 'jumped from the tool line')
    H.eq(api.nvim_win_get_cursor(0)[1], 2, 'the line of the first location')
  end)

  H.test('thoughts can be dimmed instead of folded, and an open chat is reused', function()
    local root = H.workspace({ ['b.txt'] = 'b\n' })
    local _, client = H.open(root, 'b.txt', { chat = { thoughts = 'dim', position = 'bottom', size = 8 } })
    local chat = require('agentls.chat').resume('render-2')
    local win = api.nvim_get_current_win()
    H.eq(api.nvim_win_get_height(win), 8, 'chat.size lines at the bottom')
    sender(client, 'render-2')({ kind = 'thought_chunk', text = 'hmm' })
    local t = H.truthy(find_line(chat.buf, '> hmm'), 'thought line')
    H.eq(api.nvim_win_call(win, function()
      return vim.fn.foldlevel(t)
    end), 0, 'the thought is not in a fold')
    local marks = api.nvim_buf_get_extmarks(chat.buf, -1, { t - 1, 0 }, { t - 1, -1 }, { details = true })
    local dimmed = false
    for _, m in ipairs(marks) do
      if m[4].line_hl_group == 'AgentlsChatThought' then
        dimmed = true
      end
    end
    H.truthy(dimmed, 'the thought line is dimmed: ' .. vim.inspect(marks))
    vim.cmd('wincmd p')
    local again = require('agentls.chat').resume('render-2')
    H.eq(again, chat, 'the same chat for the same session')
    H.eq(#api.nvim_tabpage_list_wins(0), 2, 'no second window')
  end)

  H.test(':Agentls without a prompt opens the prompt buffer; a server without a model key says so in the chat', function()
    local root = H.workspace({ ['n.txt'] = 'n\n' })
    H.open(root, 'n.txt')
    vim.cmd('Agentls')
    local chat = H.truthy(require('agentls.chat').current(), 'the chat')
    H.eq(#H.input_calls, 0, 'nothing asked before the chat opens')
    H.contains(api.nvim_buf_get_name(0), 'agentls://prompt/', 'the prompt buffer')
    api.nvim_buf_set_lines(0, 0, -1, false, { 'hello there' })
    H.press('<C-s>')
    H.wait('the end of the failed prompt', function()
      return require('agentls.chat').text(chat):find('_turn ended: error', 1, true)
    end)
    local text = require('agentls.chat').text(chat)
    H.contains(text, 'hello there', 'the prompt is shown')
    H.contains(text, '**error:**', 'the error is shown')
    H.eq(chat.turn.ended, true, 'no prompt is left running')
    -- An empty prompt sends nothing.
    vim.cmd('Agentls')
    H.press('<C-s>')
    H.contains(H.notes[#H.notes].msg, 'the prompt is empty', 'told')
    H.eq(require('agentls.chat').text(chat), text, 'nothing sent')
  end)

  H.test('chat options are validated', function()
    for _, case in ipairs({
      { { chat = { thoughts = 'show' } }, 'chat.thoughts' },
      { { chat = { position = 'middle' } }, 'chat.position' },
      { { chat = { keys = { jmp = 'x' } } }, 'chat.keys.jmp' },
      { { chat = { size = 0 } }, 'chat.size' },
    }) do
      local ok, err = pcall(require('agentls').setup, case[1])
      H.eq(ok, false, vim.inspect(case[1]) .. ' fails')
      H.contains(tostring(err), case[2], 'error names the option')
    end
    local ok, err = pcall(require('agentls.chat').prompt, 42)
    H.eq(ok, false, 'prompt(42) fails')
    H.contains(tostring(err), 'text', 'vim.validate names the argument')
  end)
end)
