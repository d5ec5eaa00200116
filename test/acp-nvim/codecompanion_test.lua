-- The README matrix's scenario in CodeCompanion.nvim, a real ACP editor client, driving
-- `agentls acp` in headless Neovim 0.12 (run.sh). One chat, as a user has it: a prompt
-- whose read and answer stream into the chat buffer; an edit shown as a diff in the chat
-- and accepted with CodeCompanion's own key, landing in the open buffer; one `u` in that
-- buffer reverting it; a shell command running; a running command stopped with the
-- chat's own stop key (`q`); the chat answering again after the stop; and its one
-- "always" key allowing a command for the session, not saving a rule.
--
-- The client is configured exactly as docs/acp.md tells users to (an adapter extending
-- CodeCompanion's Gemini CLI one, with `agentls acp` as its command); the model is the
-- fake Gemini server (internal/fakegemini) with a script. Every user action is the key
-- a user presses in the chat buffer (<CR> to send, g2 to accept, q to stop) or in the
-- file's buffer (u). Each case prints PASS or FAIL; the last line is
-- "RESULT <passed> <failed>". Environment (set by run.sh): AGENTLS_BIN, FAKEGEMINI_BIN,
-- ACP_NVIM_VENDOR (the vendored plugins), ACP_NVIM_PARSERS (a folder holding
-- parser/markdown.so and parser/markdown_inline.so), ACP_NVIM_WORK (where the workspace
-- and agentls's log go).
local api, uv = vim.api, vim.uv

local passed, failed = 0, 0
local timeout = tonumber(vim.env.ACP_NVIM_TIMEOUT or '') or 20000

local function out(s)
  io.stdout:write(s .. '\n')
  io.stdout:flush()
end

-- Headless Neovim must never block on a prompt.
vim.o.more = false
vim.o.swapfile = false
vim.o.shortmess = vim.o.shortmess .. 'F'
local notes = {}
vim.notify = function(msg, level)
  notes[#notes + 1] = tostring(msg)
  if vim.env.ACP_NVIM_VERBOSE then
    out('  notify: ' .. tostring(msg))
  end
end

local function eq(actual, expected, what)
  if not vim.deep_equal(actual, expected) then
    error(('%s: expected %s, got %s'):format(what, vim.inspect(expected), vim.inspect(actual)), 2)
  end
end

local function contains(haystack, needle, what)
  if not haystack:find(needle, 1, true) then
    error(('%s: %s not found in:\n%s'):format(what, vim.inspect(needle), haystack), 2)
  end
end

--- Waits, processing events, until cond() is truthy; fails with what on timeout.
local function wait(what, cond, ms)
  local value
  local ok = vim.wait(ms or timeout, function()
    value = cond()
    return value
  end, 20)
  if not ok then
    error('timed out waiting for ' .. what, 2)
  end
  return value
end

local function test(name, fn)
  local ok, err = xpcall(fn, debug.traceback)
  if ok then
    passed = passed + 1
    out('PASS ' .. name)
  else
    failed = failed + 1
    out('FAIL ' .. name .. ': ' .. tostring(err))
  end
end

local function read(path)
  local f = io.open(path, 'rb')
  if not f then
    return nil
  end
  local s = f:read('*a')
  f:close()
  return s
end

local function write(path, s)
  local f = assert(io.open(path, 'wb'))
  f:write(s)
  f:close()
end

local fake, chat

--- The whole session; an error outside a case (the setup) fails the file at once.
local function main()
  local vendor = assert(vim.env.ACP_NVIM_VENDOR, 'ACP_NVIM_VENDOR is not set')
  local agentls = assert(vim.env.AGENTLS_BIN, 'AGENTLS_BIN is not set')
  local fakegemini = assert(vim.env.FAKEGEMINI_BIN, 'FAKEGEMINI_BIN is not set')
  vim.opt.runtimepath:prepend(vendor .. '/plenary.nvim')
  vim.opt.runtimepath:prepend(vendor .. '/codecompanion.nvim')
  vim.opt.runtimepath:append(assert(vim.env.ACP_NVIM_PARSERS, 'ACP_NVIM_PARSERS is not set'))
  vim.cmd('filetype plugin on')
  vim.cmd('runtime! plugin/plenary.vim plugin/codecompanion.lua')

  -- The workspace, and the fake model's script: one model turn per list entry, in order.
  local root = (vim.env.ACP_NVIM_WORK or vim.fn.tempname()) .. '/ws'
  vim.fn.mkdir(root, 'p')
  root = uv.fs_realpath(root)
  local file = root .. '/a.txt'
  write(file, 'alpha\nbeta\n')
  local function call(id, name, args)
    return { calls = { { id = id, name = name, args = args } } }
  end
  local answer = 'The file a.txt holds two lines: alpha, then beta.'
  -- A command that prints its first line and then waits until the test has looked
  -- (it creates "release"), so "while it runs" does not depend on the machine's speed.
  local counter = 'echo out-1; until test -e release; do sleep 0.05; done; echo out-2; echo counted-marker'
  -- A command that runs until stopped; "stopped-marker" would show it was not.
  local sleeper = 'echo started > sleeper.started; sleep 47.5; echo late > stopped-marker'
  local turns = {
    { thought = 'Read it first.', calls = { { id = 'r1', name = 'read_file', args = { file_path = file } } } },
    { text = answer, chunks = 6 },
    call('e1', 'replace', { file_path = file, old_string = 'beta', new_string = 'gamma' }),
    { text = 'Changed beta to gamma.' },
    call('s1', 'run_shell_command', { command = counter, description = 'count' }),
    { text = 'Counted.' },
    call('s2', 'run_shell_command', { command = sleeper, description = 'sleep' }),
    { text = 'Still here after the stop.' },
    call('s3', 'run_shell_command', { command = 'echo always-marker', description = 'echo' }),
    { text = 'Allowed always.' },
    call('s4', 'run_shell_command', { command = 'echo always-marker', description = 'echo' }),
    { text = 'Allowed again.' },
  }
  local script = root .. '.script.json'
  write(script, vim.json.encode({ chunkDelayMs = 120, turns = turns }))

  local url
  local fake_err = {}
  fake = vim.fn.jobstart({ fakegemini, '-script', script, '-addr', '127.0.0.1:0' }, {
    on_stdout = function(_, data)
      if not url and data[1] and data[1] ~= '' then
        url = vim.trim(data[1])
      end
    end,
    on_stderr = function(_, data)
      vim.list_extend(fake_err, data)
    end,
  })
  if not vim.wait(10000, function()
    return url
  end, 10) then
    error('fakegemini printed no URL: ' .. table.concat(fake_err, '\n'))
  end

  -- What a user puts in their shell or vault; the adapter passes it to `agentls acp`.
  vim.env.GEMINI_API_KEY = 'test-key'
  vim.env.GOOGLE_GEMINI_BASE_URL = url

  -- docs/acp.md's configuration, with the binary under test as the command.
  require('codecompanion').setup({
    adapters = {
      acp = {
        agentls = function()
          return require('codecompanion.adapters').extend('gemini_cli', {
            name = 'agentls',
            formatted_name = 'agentls',
            commands = { default = { agentls, 'acp', '--log-file', root .. '.agentls.log' } },
            defaults = { auth_method = 'gemini-api-key', mcpServers = {} },
            env = { GEMINI_API_KEY = 'GEMINI_API_KEY' },
          })
        end,
      },
    },
    interactions = { chat = { adapter = 'agentls' } },
    opts = { log_level = vim.env.ACP_NVIM_VERBOSE and 'DEBUG' or 'ERROR' },
  })

  vim.cmd.cd(root)
  vim.cmd.edit(file)
  local filebuf = api.nvim_get_current_buf()
  vim.cmd('CodeCompanionChat')
  chat = require('codecompanion').last_chat()
  if not chat then
    error('CodeCompanion opened no chat; its messages: ' .. table.concat(notes, '\n'))
  end

  local function chat_text()
    return table.concat(api.nvim_buf_get_lines(chat.bufnr, 0, -1, false), '\n')
  end

  --- The window showing buf (the chat's or the file's).
  local function win_of(buf)
    local win = vim.fn.bufwinid(buf)
    assert(win ~= -1, 'no window shows buffer ' .. buf)
    return win
  end

  local function keys(k)
    api.nvim_feedkeys(api.nvim_replace_termcodes(k, true, false, true), 'mx', false)
  end

  --- Types text as the chat's last user message and sends it with <CR>, as a user does.
  local function send(text)
    api.nvim_set_current_win(win_of(chat.bufnr))
    local last = api.nvim_buf_line_count(chat.bufnr)
    api.nvim_buf_set_lines(chat.bufnr, last - 1, last, false, { text })
    keys('<CR>')
  end

  --- Waits until the chat is ready for the next message: the turn is over and CodeCompanion
  --- put a new "## Me" heading after the answer.
  local function turn_done(after)
    wait('the chat ready for the next message', function()
      local t = chat_text()
      local s = t:find(after, 1, true)
      return chat.current_request == nil and s and t:find('## Me', s, true)
    end)
  end

  -- The answer's stream: each state of the chat buffer that holds part of the answer.
  local seen = {}
  api.nvim_buf_attach(chat.bufnr, false, {
    on_lines = function()
      vim.schedule(function()
        local t = chat_text()
        for n = #answer, 8, -1 do
          if t:find(answer:sub(1, n), 1, true) then
            seen[n] = true
            return
          end
        end
      end)
    end,
  })

  test('a prompt: the read and the answer stream into the chat buffer', function()
    -- The chat connects to the agent (initialize, authenticate, session/new) as it
    -- opens, in the background; a message sent before that ends makes CodeCompanion
    -- (at the vendored commit) start a second agent for it and lose the answer. A user
    -- sees the chat first; the test waits for the same.
    wait('the chat connected to agentls', function()
      return chat.acp_connection and chat.acp_connection:is_connected()
    end)
    send('What does a.txt say?')
    turn_done(answer)
    local t = chat_text()
    contains(t, 'What does a.txt say?', 'the prompt in the chat')
    contains(t, 'Read: a.txt', 'the read shown as a tool line')
    contains(t, 'Read it first.', 'the reasoning shown')
    contains(t, answer, 'the answer')
    local partial = 0
    for n in pairs(seen) do
      if n < #answer then
        partial = partial + 1
      end
    end
    if partial < 2 then
      error('the answer did not stream: parts of it seen in the chat buffer ' .. vim.inspect(vim.tbl_keys(seen)))
    end
  end)

  test('an edit shown as a diff in the chat, accepted with g2, lands in the buffer; one u reverts it', function()
    send('Change beta to gamma in a.txt')
    local prompt = wait('the approval prompt with the diff', function()
      local t = chat_text()
      return t:find('Proposed edits for `a.txt`', 1, true) and t:find('`g2` - Accept', 1, true) and t
    end)
    contains(prompt, '-beta', 'the diff removes beta')
    contains(prompt, '+gamma', 'the diff adds gamma')
    eq(api.nvim_buf_get_lines(filebuf, 0, -1, false), { 'alpha', 'beta' }, 'the buffer before the answer')
    eq(read(file), 'alpha\nbeta\n', 'the file before the answer')
    keys('g2') -- the chat buffer's "Accept"
    turn_done('Changed beta to gamma.')
    contains(chat_text(), 'You selected: Accept', 'the choice in the chat')
    -- CodeCompanion (at the vendored commit) writes fs/write_text_file's text into an
    -- open buffer as its lines split at each newline, so the text's final newline
    -- becomes an empty last line, and saves the buffer. agentls sends the whole text,
    -- final newline included, as ACP asks.
    eq(api.nvim_buf_get_lines(filebuf, 0, -1, false), { 'alpha', 'gamma', '' }, 'the buffer after accepting')
    eq(read(file), 'alpha\ngamma\n\n', 'the file after accepting')
    -- One undo in the file's own buffer takes the whole edit back.
    api.nvim_set_current_win(win_of(filebuf))
    keys('u')
    eq(api.nvim_buf_get_lines(filebuf, 0, -1, false), { 'alpha', 'beta' }, 'the buffer after one u')
    vim.api.nvim_buf_call(filebuf, function()
      vim.cmd('silent write')
    end)
    eq(read(file), 'alpha\nbeta\n', 'the file after u and :write')
  end)

  test('a shell command: its call shows in the chat while it runs, its output reaches the chat', function()
    -- CodeCompanion shows a tool call as one line; what it holds of the call (content
    -- included) goes through its formatter on every update. Record what it was given.
    local formatter = require('codecompanion.interactions.chat.acp.formatters')
    local tool_message = formatter.tool_message
    local updates = {}
    formatter.tool_message = function(tc, adapter)
      if type(tc.title) == 'string' and tc.title:find('counted-marker', 1, true) then
        local texts = {}
        for _, c in ipairs(type(tc.content) == 'table' and tc.content or {}) do
          if c.type == 'content' and type(c.content) == 'table' and type(c.content.text) == 'string' then
            texts[#texts + 1] = c.content.text
          end
        end
        updates[#updates + 1] = { status = tc.status, text = table.concat(texts, '\n'), released = uv.fs_stat(root .. '/release') ~= nil }
      end
      return tool_message(tc, adapter)
    end
    local ok, err = pcall(function()
      send('Count for me')
      wait('the approval prompt of the command', function()
        local t = chat_text()
        local s = t:find('Please select an option', t:find('Count for me', 1, true), true)
        return s and t:find('`g2` - Accept', s, true)
      end)
      contains(chat_text(), 'echo out-1', 'the command in the approval prompt')
      keys('g2')
      wait('the first output line reaching the chat while the command runs', function()
        for _, u in ipairs(updates) do
          if u.text:find('out-1', 1, true) then
            return true
          end
        end
      end)
      eq(read(root .. '/release'), nil, 'the command still runs (not released yet)')
      contains(chat_text(), 'Execute:', 'the running call shown in the chat')
      eq(chat.current_request ~= nil, true, 'the turn still runs')
      write(root .. '/release', '')
      turn_done('Counted.')
    end)
    formatter.tool_message = tool_message
    if not ok then
      -- Leave the chat ready for the next case, the fake model's script where that
      -- case expects it: the command accepted if still asked about, run to its end.
      write(root .. '/release', '')
      api.nvim_set_current_win(win_of(chat.bufnr))
      if vim.fn.maparg('g2', 'n', false, true).buffer == 1 then
        keys('g2')
      end
      if not pcall(turn_done, 'Counted.') and chat.current_request then
        keys('q')
      end
      error(err, 0)
    end
    local before, last = false, updates[#updates]
    for _, u in ipairs(updates) do
      if u.text:find('out-1', 1, true) and not u.released and u.status == 'in_progress' then
        before = true
      end
    end
    eq(before, true, 'out-1 shown on the running call before the command was released')
    eq(last and last.status, 'completed', 'the call completed')
  end)

  test('cancel: q in the chat stops a running command; the chat answers again', function()
    send('Sleep for a while')
    wait('the approval prompt of the command', function()
      local t = chat_text()
      local s = t:find('Please select an option', t:find('Sleep for a while', 1, true), true)
      return s and t:find('`g2` - Accept', s, true)
    end)
    keys('g2')
    -- Whether a process runs the command's sleep (read from /proc: procps may be
    -- missing on a fresh machine).
    local function sleeping()
      for name, kind in vim.fs.dir('/proc') do
        if kind == 'directory' and name:match('^%d+$') then
          local cmdline = read('/proc/' .. name .. '/cmdline')
          if cmdline and cmdline:gsub('%z', ' '):find('^sleep 47%.5') then
            return true
          end
        end
      end
      return false
    end
    wait('the command running', function()
      return read(root .. '/sleeper.started') and sleeping()
    end)
    eq(chat.current_request ~= nil, true, 'the turn runs')
    api.nvim_set_current_win(win_of(chat.bufnr))
    keys('q') -- the chat's "Stop the current request"
    wait('the chat ready for the next message after the stop', function()
      local t = chat_text()
      local s = t:find('Sleep for a while', 1, true)
      return chat.current_request == nil and t:find('## Me', s, true)
    end)
    wait('the command stopped', function()
      return not sleeping()
    end, 10000)
    vim.wait(700)
    eq(read(root .. '/stopped-marker'), nil, 'the command did not run on after the stop')
    send('Are you there?')
    turn_done('Still here after the stop.')
  end)

  test('g1 ("Always accept") allows for this session only: the same command runs again unasked, no rule is saved', function()
    send('Echo it')
    wait('the approval prompt of the command', function()
      local t = chat_text()
      local s = t:find('Please select an option', t:find('Echo it', 1, true), true)
      return s and t:find('`g1` - Always accept', s, true)
    end)
    keys('g1')
    turn_done('Allowed always.')
    send('Echo it again')
    turn_done('Allowed again.')
    local t = chat_text()
    eq(t:find('Please select an option', t:find('Echo it again', 1, true), true), nil, 'asked again for the same command')
    local settings = read(vim.env.XDG_CONFIG_HOME .. '/agentls/settings.json') or ''
    eq(settings:find('echo', 1, true), nil, 'a rule saved in the settings: ' .. settings)
  end)
end

local ok, err = xpcall(main, debug.traceback)
if not ok then
  failed = failed + 1
  out('FAIL the session could not go on: ' .. tostring(err))
end
if fake then
  vim.fn.jobstop(fake)
end
if vim.env.ACP_NVIM_VERBOSE and chat then
  out(table.concat(api.nvim_buf_get_lines(chat.bufnr, 0, -1, false), '\n'))
end
out(('RESULT %d %d'):format(passed, failed))
vim.cmd((failed == 0 and passed > 0) and 'qall!' or 'cquit 1')
