-- Prompts through the chat against the real agentls, whose model is the fake Gemini
-- server (internal/fakegemini/cmd/fakegemini) replaying a script: streamed text ending
-- with turn_end, tool calls whose lines follow their statuses (with an edit accepted in
-- the diff tab), jumping from a location, cancelling a hanging stream, listing and
-- resuming stored sessions.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h') .. '/helpers.lua')
local api = vim.api

local function chat_text()
  return require('agentls.chat').text()
end

local function wait_text(what, needle, ms)
  return H.wait(what .. ' (' .. needle .. ') in the chat', function()
    return chat_text():find(needle, 1, true)
  end, ms)
end

local function find_line(buf, pattern)
  for i, l in ipairs(H.lines(buf)) do
    if l:find(pattern, 1, true) then
      return i
    end
  end
end

-- Records the statuses of each tool call (by tool name) from agentls/update.
local function record_statuses()
  local seen = {}
  local group = api.nvim_create_augroup('agentls_test_statuses', { clear = true })
  api.nvim_create_autocmd('User', {
    group = group,
    pattern = 'AgentlsUpdate',
    callback = function(ev)
      local u = ev.data.update
      if u.kind == 'tool_call' then
        seen[u.toolCallId] = { name = u.name, statuses = { u.status } }
      elseif u.kind == 'tool_call_update' and u.status and seen[u.toolCallId] then
        local list = seen[u.toolCallId].statuses
        if list[#list] ~= u.status then
          list[#list + 1] = u.status
        end
      end
    end,
  })
  return function(name)
    for _, c in pairs(seen) do
      if c.name == name then
        return c.statuses
      end
    end
  end
end

local tests = {}

tests[#tests + 1] = {
  ':Agentls streams the answer into the chat and ends with turn_end',
  function()
    local url = H.fake_gemini({
      turns = {
        {
          thought = 'The user wants a greeting.',
          text = 'Hello from the fake model.\nSecond line of the answer.',
          chunks = 5,
          usage = { inputTokens = 321, outputTokens = 12 },
        },
      },
    })
    local root = H.workspace({ ['a.txt'] = 'alpha\nbeta\ngamma\n' })
    local src = H.open(root, 'a.txt', H.model_env(url))
    local src_win = api.nvim_get_current_win()
    local chunks = 0
    api.nvim_create_autocmd('User', {
      group = api.nvim_create_augroup('agentls_test_chunks', { clear = true }),
      pattern = 'AgentlsUpdate',
      callback = function(ev)
        if ev.data.update.kind == 'message_chunk' then
          chunks = chunks + 1
        end
      end,
    })
    vim.cmd('1,2Agentls explain this')
    local chat = H.truthy(require('agentls.chat').current(), 'a chat')
    H.eq(api.nvim_get_current_buf(), chat.buf, 'the chat is focused')
    H.eq(vim.bo[chat.buf].filetype, 'markdown', 'markdown chat')
    H.eq(#api.nvim_tabpage_list_wins(0), 2, 'the chat is a split')
    wait_text('the end of the turn', '_turn ended: end_turn')
    local text = chat_text()
    H.contains(text, '## You\n\nexplain this\n\n_context: a.txt:1-2_', 'the prompt and its context')
    H.contains(text, 'Hello from the fake model.\nSecond line of the answer.', 'the streamed answer')
    H.contains(text, 'tokens: 321 in, 12 out', 'usage')
    H.truthy(chunks > 0, 'message_chunk updates arrived')
    local t = H.truthy(find_line(chat.buf, '> The user wants a greeting.'), 'the thought')
    H.truthy(vim.fn.foldclosed(t) ~= -1, 'the thought is folded')
    H.truthy(type(chat.session) == 'string' and chat.session ~= '', 'the session is remembered')
    H.eq(vim.b[chat.buf].agentls_session, chat.session, 'b:agentls_session')
    H.eq(api.nvim_win_get_buf(src_win), src, 'the source window is untouched')
  end,
}

tests[#tests + 1] = {
  'a turn reads, edits (accepted in the diff tab) and answers; tool lines follow; <CR> jumps',
  function()
    local root = H.workspace({ ['src/greek.txt'] = 'alpha\nbeta\ngamma\n' })
    local path = root .. '/src/greek.txt'
    local url = H.fake_gemini({
      turns = {
        { text = 'Let me read it.', calls = { { name = 'read_file', args = { file_path = path } } } },
        { calls = { { name = 'replace', args = { file_path = path, old_string = 'beta', new_string = 'BETA' } } } },
        { text = 'Replaced beta with BETA.' },
      },
    })
    local buf = H.open(root, 'src/greek.txt', H.model_env(url))
    local src_win = api.nvim_get_current_win()
    local statuses = record_statuses()
    vim.cmd('Agentls capitalize beta')
    local chat = require('agentls.chat').current()
    local c = H.confirmation('edit')
    local replace_line = H.truthy(find_line(chat.buf, '- replace'), 'the replace line')
    H.contains(H.lines(chat.buf)[replace_line], '· awaiting approval', 'replace waits for approval')
    local read_line = H.truthy(find_line(chat.buf, '- read_file'), 'the read_file line')
    H.contains(H.lines(chat.buf)[read_line], '· done', 'read_file done')
    H.eq(H.lines(c.proposal_buf), { 'alpha', 'BETA', 'gamma' }, 'the proposal in the diff tab')
    H.press('ga')
    wait_text('the end of the turn', '_turn ended: end_turn')
    H.eq(H.lines(buf), { 'alpha', 'BETA', 'gamma' }, 'the buffer after the edit')
    H.eq(H.read(path), 'alpha\nBETA\ngamma\n', 'saved')
    local lines = H.lines(chat.buf)
    H.contains(lines[replace_line], '· done', 'replace done, on the same line')
    H.contains(chat_text(), 'Replaced beta with BETA.', 'the final answer')
    H.eq(statuses('replace'), { 'pending', 'awaiting_approval', 'in_progress', 'completed' }, 'replace statuses')
    H.eq(statuses('read_file')[#statuses('read_file')], 'completed', 'read_file final status')
    H.eq(lines[read_line + 1], '  - src/greek.txt', 'the location of read_file')

    -- <CR> on the location opens the file in the previous window.
    -- (The previous window shows another buffer first, so the jump must open the file.)
    local chat_win = vim.fn.bufwinid(chat.buf)
    H.truthy(chat_win ~= -1, 'the chat window')
    api.nvim_set_current_win(src_win)
    vim.cmd('enew')
    api.nvim_set_current_win(chat_win)
    api.nvim_win_set_cursor(chat_win, { read_line + 1, 0 })
    H.press('<CR>')
    H.eq(api.nvim_get_current_win(), src_win, 'the previous window')
    H.eq(api.nvim_get_current_buf(), buf, 'the file is open there')
  end,
}

tests[#tests + 1] = {
  ':AgentlsCancel and <C-c> stop a hanging stream; the next prompt continues the session',
  function()
    local url = H.fake_gemini({
      turns = {
        { text = 'Starting a long answer', hang = true },
        { text = 'Another long answer', hang = true },
        { text = 'Short answer.' },
      },
    })
    local root = H.workspace({ ['c.txt'] = 'c\n' })
    H.open(root, 'c.txt', H.model_env(url))
    local src_win = api.nvim_get_current_win()
    local results = {}
    require('agentls').prompt('write a lot', {
      bufnr = 0,
      callback = function(err, result)
        results[#results + 1] = { err = err, result = result }
      end,
    })
    local chat = require('agentls.chat').current()
    wait_text('the first chunks', 'Starting a long answer')
    -- From the source window: cancels the prompts of every chat.
    api.nvim_set_current_win(src_win)
    vim.cmd('AgentlsCancel')
    wait_text('the cancelled end', '_turn ended: cancelled')
    H.wait('the prompt result', function()
      return #results == 1
    end)
    H.eq(results[1].err, nil, 'no error response')
    H.eq(results[1].result.stopReason, 'cancelled', 'stopReason')
    local session = chat.session
    H.truthy(session, 'the session')

    -- In the chat: <C-c>.
    require('agentls').prompt('again', {
      chat = chat,
      callback = function(err, result)
        results[#results + 1] = { err = err, result = result }
      end,
    })
    wait_text('the second chunks', 'Another long answer')
    api.nvim_set_current_win(vim.fn.bufwinid(chat.buf))
    H.press('<C-c>')
    H.wait('the second prompt result', function()
      return #results == 2
    end)
    H.eq(results[2].result.stopReason, 'cancelled', 'second stopReason')
    H.eq(results[2].result.session, session, 'the same session continued')

    -- A third prompt from the chat with `i` and the prompt buffer.
    H.press('i')
    H.contains(api.nvim_buf_get_name(0), 'agentls://prompt/', 'the prompt buffer')
    api.nvim_buf_set_lines(0, 0, -1, false, { 'finish' })
    H.press('<C-s>')
    H.wait('the third answer', function()
      local _, n = chat_text():gsub('_turn ended: ', '')
      return n == 3
    end)
    H.contains(chat_text(), 'Short answer.', 'third answer')
    H.contains(chat_text(), '_turn ended: end_turn', 'third end')
    H.eq(chat.session, session, 'still the same session')
  end,
}

tests[#tests + 1] = {
  ':AgentlsSessions lists stored sessions and the chosen one is resumed',
  function()
    local url = H.fake_gemini({ turns = { { text = 'First answer.' }, { text = 'Resumed answer.' } } })
    local root = H.workspace({ ['d.txt'] = 'd\n' })
    H.open(root, 'd.txt', H.model_env(url))
    vim.cmd('Agentls remember the word pelican')
    wait_text('the first answer', '_turn ended: end_turn')
    local id = require('agentls.chat').current().session
    H.truthy(id, 'a session id')

    -- A new server, a new chat: the session is resumed from the store.
    H.reset()
    url = H.fake_gemini({ turns = { { text = 'Resumed answer.' } } })
    H.open(root, 'd.txt', H.model_env(url))
    local listed
    H.select_choice = function(items, opts)
      H.eq(opts.kind, 'agentls.sessions', 'select kind')
      listed = items
      for _, item in ipairs(items) do
        if item.id == id then
          H.contains(opts.format_item(item), 'remember the word pelican', 'the title shown')
          return item
        end
      end
      error('session ' .. id .. ' not listed: ' .. vim.inspect(items))
    end
    vim.cmd('AgentlsSessions')
    H.wait('the session list', function()
      return listed or H.select_error
    end)
    H.eq(H.select_error, nil, 'select error')
    H.eq(listed[1].id, id, 'the newest session comes first')
    local chat = H.wait('the resumed chat', function()
      local c = require('agentls.chat').current()
      return c and c.session == id and c
    end)
    H.contains(chat_text(), 'resumed session ' .. id, 'resume note')
    -- The conversation so far is shown, from the store.
    wait_text('the earlier answer', 'First answer.')
    H.contains(chat_text(), 'remember the word pelican', 'the earlier prompt')
    local result
    require('agentls').prompt('what was the word?', {
      bufnr = vim.fn.bufnr(root .. '/d.txt'),
      callback = function(err, r)
        result = { err = err, r = r }
      end,
    })
    H.wait('the resumed prompt', function()
      return result
    end)
    H.eq(result.err, nil, 'no error')
    H.eq(result.r.session, id, 'the prompt continued the chosen session')
    H.contains(chat_text(), 'Resumed answer.', 'the answer in the resumed chat')
  end,
}

H.main(function()
  for _, t in ipairs(tests) do
    if H.fakegemini then
      H.test(t[1], t[2])
    else
      H.skip(t[1], 'no fake Gemini server (internal/fakegemini/cmd/fakegemini)')
    end
  end
end)
