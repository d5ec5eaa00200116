-- MCP prompts in the chat as /server:prompt, against the real agentls whose user
-- settings configure the real MCP server @modelcontextprotocol/server-everything (from
-- test/mcp/node_modules) and whose model is the fake Gemini server behind a recording
-- relay: the prompt list fills from the mcp_status updates, :Agentls completes the
-- prompts and their arguments, `:Agentls /everything:args-prompt city=… state="…"` sends
-- the rendered prompt to the model and shows the answer, a missing required argument is
-- asked for from the chat's `i`, `:Agentls /` and an unknown prompt offer the list. The
-- parsing of command lines is checked on its own first.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h') .. '/helpers.lua')
local api = vim.api

local prompts = require('agentls.prompts')

local function chat_text()
  return require('agentls.chat').text()
end

local function turns_ended()
  local _, n = chat_text():gsub('_turn ended: ', '')
  return n
end

-- Fails unless the model was sent needle (after byte from of what the relay saw); the
-- requests themselves are too long to print.
local function model_got(tap, needle, from, what)
  local sent = tap.text():sub((from or 0) + 1)
  if not sent:find(needle, 1, true) then
    error(('%s: the %d bytes sent to the model do not contain %q'):format(what, #sent, needle), 2)
  end
end

local function find_prompt(list, name)
  for _, p in ipairs(list or {}) do
    if p.server == 'everything' and p.name == name then
      return p
    end
  end
end

local function parse_tests()
  local cases = {
    { 'explain this', { kind = 'text', text = 'explain this' } },
    { '/etc/hosts is broken', { kind = 'text', text = '/etc/hosts is broken' } },
    { '//a:b as text', { kind = 'text', text = '/a:b as text' } },
    { ' / ', { kind = 'list' } },
    {
      '/everything:simple-prompt',
      { kind = 'prompt', server = 'everything', name = 'simple-prompt', args = {}, positional = {} },
    },
    {
      [[/s:p key=value key2="a b" k3='c "d"' --k4=x=y k5="q\"uote\\" k6=]],
      {
        kind = 'prompt',
        server = 's',
        name = 'p',
        args = { key = 'value', key2 = 'a b', k3 = 'c "d"', k4 = 'x=y', k5 = 'q"uote\\', k6 = '' },
        positional = {},
      },
    },
    {
      '/s:p Paris "New York" x="a=b"',
      { kind = 'prompt', server = 's', name = 'p', args = { x = 'a=b' }, positional = { 'Paris', 'New York' } },
    },
    { '/s:p key="open', { kind = 'error', message = '/s:p: unterminated double quote' } },
    { '/s:p a=1 a=2', { kind = 'error', message = '/s:p: argument a is given twice' } },
    { '/s:p =x', { kind = 'error', message = '/s:p: an argument name is missing before "=" in "=x"' } },
  }
  for _, c in ipairs(cases) do
    H.eq(prompts.parse(c[1]), c[2], 'parse ' .. c[1])
  end
  -- From the prompt buffer, unquoted #buffer and #file: words are context, not arguments.
  H.eq(
    prompts.parse([[/s:p #file:a.txt city=X "#buffer" #buffer k=#file:b '#file:c']], { refs = true }),
    {
      kind = 'prompt',
      server = 's',
      name = 'p',
      args = { city = 'X', k = '#file:b' },
      positional = { '#buffer', '#file:c' },
      refs = { '#file:a.txt', '#buffer' },
    },
    'parse with refs'
  )
  H.eq(prompts.parse('/s:p #buffer').positional, { '#buffer' }, 'without refs, #buffer is an argument')
  local p = { server = 's', name = 'p', arguments = { { name = 'city', required = true }, { name = 'state' } } }
  H.eq(prompts.format(p, { state = 'New South', city = 'Lisbon', extra = 'a"b' }), [[/s:p city=Lisbon state="New South" extra="a\"b"]], 'format')
  H.eq(prompts.parse(prompts.format(p, { city = 'x y', state = '' })).args, { city = 'x y', state = '' }, 'format round trip')
end

-- The entry point of server-everything, or nil and why it cannot run.
local function everything()
  local entry = vim.fn.fnamemodify(H.plugin .. '/../../test/mcp/node_modules/@modelcontextprotocol/server-everything/dist/index.js', ':p')
  if vim.fn.filereadable(entry) ~= 1 then
    return nil, 'server-everything is not installed (cd test/mcp && npm ci)'
  end
  if vim.fn.executable('node') ~= 1 then
    return nil, 'node is not on PATH'
  end
  return entry
end

-- Starts agentls for a new workspace whose user settings (a private XDG_CONFIG_HOME)
-- configure server-everything, with the fake Gemini server behind a relay as the
-- model. Returns the relay, the client and the file buffer.
local function start(entry, turns)
  local tap = H.tap(H.fake_gemini({ turns = turns }))
  local config_home = vim.fn.tempname()
  vim.fn.mkdir(config_home .. '/agentls', 'p')
  local f = assert(io.open(config_home .. '/agentls/settings.json', 'wb'))
  f:write(vim.json.encode({ mcpServers = { everything = { command = 'node', args = { entry, 'stdio' } } } }))
  f:close()
  local root = H.workspace({ ['notes.txt'] = 'notes\n' })
  local env = H.model_env(tap.url)
  env.cmd_env.XDG_CONFIG_HOME = config_home
  local buf, client = H.open(root, 'notes.txt', env)
  -- Nothing else asks for the list: it fills because the server reports the MCP
  -- server's status (connecting, connected) and the plugin fetches it again.
  H.wait('the prompts of everything (after mcp_status)', function()
    return find_prompt(prompts.cached(client.id), 'args-prompt')
  end, 30000)
  return tap, client, buf
end

local tests = {}

tests[#tests + 1] = {
  ':Agentls /everything:args-prompt sends the rendered prompt; completion lists prompts and arguments',
  function(entry)
    local tap, client = start(entry, { { text = 'Sunny in Lisbon.' } })
    local p = find_prompt(prompts.cached(client.id), 'args-prompt')
    H.eq(vim.tbl_map(function(a)
      return { a.name, a.required }
    end, p.arguments), { { 'city', true }, { 'state', false } }, 'the arguments of args-prompt')

    local names = vim.fn.getcompletion('Agentls /ev', 'cmdline')
    H.truthy(vim.tbl_contains(names, '/everything:args-prompt'), 'completion lists /everything:args-prompt: ' .. vim.inspect(names))
    H.truthy(vim.tbl_contains(names, '/everything:simple-prompt'), 'completion lists /everything:simple-prompt')
    for _, n in ipairs(names) do
      H.truthy(vim.startswith(n, '/ev'), 'completions start with the typed text: ' .. n)
    end
    H.eq(vim.fn.getcompletion('Agentls /everything:args-prompt ', 'cmdline'), { 'city=', 'state=' }, 'argument completion')
    H.eq(vim.fn.getcompletion('Agentls /everything:args-prompt city=X s', 'cmdline'), { 'state=' }, 'the arguments not given')
    H.eq(vim.fn.getcompletion('Agentls explain ', 'cmdline'), {}, 'no completion in an ordinary prompt')
    -- Without a cached list, completion asks the server there and then.
    prompts.forget_client(client.id)
    H.eq(prompts.cached(client.id), nil, 'the cache is empty')
    H.eq(vim.fn.getcompletion("'<,'>Agentls /everything:s", 'cmdline'), { '/everything:simple-prompt' }, 'completion with no cache')
    H.truthy(find_prompt(prompts.cached(client.id), 'args-prompt'), 'the list fetched for completion is cached')

    local before = #tap.text()
    vim.cmd('Agentls /everything:args-prompt city=Lisbon state="New South"')
    H.wait('the end of the turn', function()
      return turns_ended() == 1
    end, 30000)
    local text = chat_text()
    H.contains(text, '## You\n\n/everything:args-prompt city=Lisbon state="New South"\n\n## agentls', 'the command in the chat')
    H.contains(text, 'Sunny in Lisbon.', 'the answer')
    H.contains(text, '_turn ended: end_turn', 'the end')
    model_got(tap, ':streamGenerateContent', before, 'a generate request')
    model_got(tap, 'weather in Lisbon, New South?', before, 'the rendered prompt')
    local chat = require('agentls.chat').current()
    H.truthy(type(chat.session) == 'string' and chat.session ~= '', 'the chat is bound to the session')
    H.eq(#H.select_calls, 0, 'nothing was offered')
    H.eq(#H.input_calls, 0, 'nothing was asked')
  end,
}

tests[#tests + 1] = {
  'a missing required argument is asked for; the chat session continues; / and unknown prompts offer the list',
  function(entry)
    local tap, client = start(entry, {
      { text = 'Hot in Austin.' },
      { text = 'A simple answer.' },
    })
    -- From the chat's `i`: city is required and missing.
    local chat = require('agentls.chat').open({ client = client })
    local questions = {}
    H.input_value = function(opts)
      questions[#questions + 1] = opts.prompt
      return 'Austin'
    end
    -- The prompt buffer takes the command.
    H.press('i')
    H.contains(api.nvim_buf_get_name(0), 'agentls://prompt/', 'the prompt buffer')
    api.nvim_buf_set_lines(0, 0, -1, false, { '/everything:args-prompt state=Texas' })
    H.press('<C-s>')
    H.wait('the first answer', function()
      return turns_ended() == 1
    end, 30000)
    H.eq(#questions, 1, 'one question: the city')
    H.contains(questions[1], '/everything:args-prompt city (Name of the city)', 'the city was asked for')
    H.contains(chat_text(), '/everything:args-prompt city=Austin state=Texas', 'the command with the asked argument')
    H.contains(chat_text(), 'Hot in Austin.', 'the answer')
    model_got(tap, 'weather in Austin, Texas?', 0, 'the rendered prompt')
    local session = H.truthy(chat.session, 'the session')

    -- An unknown prompt: the list is offered; dismissing it sends nothing.
    local offered
    H.select_choice = function(items, opts)
      offered = { items = items, opts = opts }
      return nil
    end
    local sent_before = #tap.text()
    local result
    require('agentls').prompt('/everything:no-such-prompt x=1', {
      chat = chat,
      callback = function(err, r)
        result = { err = err, r = r }
      end,
    })
    H.wait('the list offered for an unknown prompt', function()
      return offered
    end)
    H.eq(offered.opts.kind, 'agentls.prompts', 'select kind')
    H.contains(offered.opts.prompt, 'no prompt /everything:no-such-prompt', 'the select title')
    H.truthy(find_prompt(offered.items, 'simple-prompt'), 'the list holds simple-prompt')
    H.contains(offered.opts.format_item(find_prompt(offered.items, 'args-prompt')), '/everything:args-prompt city state?', 'the label')
    H.wait('the callback of the abandoned command', function()
      return result
    end)
    H.truthy(result.err and result.r == nil, 'the callback says nothing was sent')
    H.eq(turns_ended(), 1, 'no new turn')

    -- A bad argument is refused before anything is sent.
    H.notes = {}
    vim.cmd('Agentls /everything:args-prompt city=X bogus=1')
    local note = H.wait('the refusal', function()
      for _, n in ipairs(H.notes) do
        if n.msg:find('has no argument bogus', 1, true) then
          return n
        end
      end
    end)
    H.contains(note.msg, 'it takes city, state', 'the message names the arguments')
    H.eq(#tap.text(), sent_before, 'nothing reached the model')

    -- `:Agentls /` offers every prompt; the chosen one runs in the same session.
    offered = nil
    H.select_choice = function(items, opts)
      offered = { items = items, opts = opts }
      return find_prompt(items, 'simple-prompt')
    end
    vim.cmd('Agentls /')
    H.wait('the second answer', function()
      return turns_ended() == 2
    end, 30000)
    H.eq(offered.opts.prompt, 'agentls: run an MCP prompt', 'the select title')
    H.contains(chat_text(), '## You\n\n/everything:simple-prompt\n\n## agentls', 'the chosen command')
    H.contains(chat_text(), 'A simple answer.', 'the answer')
    model_got(tap, 'This is a simple prompt without arguments.', sent_before, 'the simple prompt')
    H.eq(chat.session, session, 'the same session')
    H.eq(require('agentls.chat').current(), chat, 'the same chat')
  end,
}

tests[#tests + 1] = {
  'in the prompt buffer, #file: and #buffer on a /server:prompt line are attached after the rendered prompt',
  function(entry)
    local tap, client, buf = start(entry, { { text = 'Take an umbrella.' } })
    local root = client.root_dir or client.config.root_dir
    local f = assert(io.open(root .. '/extra.txt', 'wb'))
    f:write('bring an umbrella\n')
    f:close()
    api.nvim_buf_set_lines(buf, 0, -1, false, { 'unsaved notes' })

    -- A reference that cannot be resolved: nothing is sent, the text stays.
    vim.cmd('Agentls')
    local pbuf = api.nvim_get_current_buf()
    H.contains(api.nvim_buf_get_name(pbuf), 'agentls://prompt/', 'the prompt buffer')
    api.nvim_buf_set_lines(pbuf, 0, -1, false, { '/everything:args-prompt city=Lisbon #file:nope.txt' })
    H.notes = {}
    H.press('<C-s>')
    H.contains(H.notes[1] and H.notes[1].msg, '#file:nope.txt: no such file', 'the message')
    H.eq(H.lines(pbuf), { '/everything:args-prompt city=Lisbon #file:nope.txt' }, 'the text stays')
    H.eq(#tap.text(), 0, 'nothing reached the model')

    api.nvim_buf_set_lines(pbuf, 0, -1, false, { '/everything:args-prompt city=Lisbon #file:extra.txt', '#buffer' })
    H.press('<C-s>')
    H.wait('the end of the turn', function()
      return turns_ended() == 1
    end, 30000)
    -- The rendered prompt, then the files as an ordinary prompt attaches them (the
    -- request is JSON: its newlines are escaped).
    local ft = vim.filetype.match({ filename = root .. '/extra.txt' }) or '' -- "text" since 0.11
    model_got(tap, [[What's weather in Lisbon?\n\nContents of extra.txt:\n```]] .. ft .. [[\nbring an umbrella\n```]], 0, 'the prompt and the file')
    model_got(tap, [[bring an umbrella\n```\n\nContents of notes.txt:\n```\nunsaved notes\n```"]], 0, 'then the buffer as it is')
    H.contains(chat_text(), '/everything:args-prompt city=Lisbon\n\nContents of extra.txt:', 'the chat shows the command and what went with it')
    H.contains(chat_text(), 'Take an umbrella.', 'the answer')
    H.eq(#H.input_calls, 0, 'nothing was asked')

    -- A command its prompt refuses (found out once the list is read) comes back.
    local sent_before = #tap.text()
    api.nvim_set_current_win(vim.fn.bufwinid(buf))
    vim.cmd('Agentls')
    local line = '/everything:args-prompt city=X bogus=1 #file:extra.txt'
    api.nvim_buf_set_lines(0, 0, -1, false, { line })
    H.notes = {}
    H.press('<C-s>')
    H.wait('the refusal', function()
      for _, n in ipairs(H.notes) do
        if n.msg:find('has no argument bogus', 1, true) then
          return n
        end
      end
    end)
    local back = H.wait('the prompt buffer with the refused text', function()
      local c = require('agentls.chat').current()
      return c.prompt_buf and api.nvim_buf_is_valid(c.prompt_buf) and c.prompt_buf
    end)
    H.eq(H.lines(back), { line }, 'the refused command is back in the prompt buffer')
    H.eq(#tap.text(), sent_before, 'nothing more reached the model')
  end,
}

H.main(function()
  H.test('/server:prompt command lines parse and format', parse_tests)
  local entry, why = everything()
  for _, t in ipairs(tests) do
    if not H.fakegemini then
      H.skip(t[1], 'no fake Gemini server (internal/fakegemini/cmd/fakegemini)')
    elseif not entry and vim.env.AGENTLS_REQUIRE_NPM ~= '1' then
      H.skip(t[1], why)
    else
      H.test(t[1], function()
        if not entry then
          error(why .. ' and AGENTLS_REQUIRE_NPM=1')
        end
        t[2](entry)
      end)
    end
  end
end)
