-- The prompts of the MCP servers agentls is connected to, as `/server:prompt` commands of
-- the chat, and the custom commands (Gemini CLI's .toml commands, listed with their
-- slash command, `/git:commit`, which agentls expands from the prompt text itself): the list (agentls.listPrompts), cached per client and fetched again whenever
-- an MCP server's status changes (the update mcp_status); parsing of
-- `/server:prompt key=value key2="a b"`; command-line completion; and the questions a
-- command may need before it can run (vim.ui.select for the prompt, vim.ui.input for
-- each missing required argument). Running the prompt is the chat's business
-- (chat.lua), which shares the path of ordinary prompts.
local rpc = require('agentls.rpc')

local M = {}

-- Module state: the prompt lists by client id, each
-- { list = PromptInfo[]|nil, loading = bool, again = bool, waiters = fn[] }.
local state = { cache = {} }

--- How long command-line completion waits for a list that is not cached yet.
M.complete_timeout_ms = 1000

local function entry(client_id)
  local e = state.cache[client_id]
  if not e then
    e = { waiters = {} }
    state.cache[client_id] = e
  end
  return e
end

-- Keeps the well-formed prompts of a listPrompts result, arguments as a list.
local function normalize(result)
  local out = {}
  if type(result) ~= 'table' then
    return out
  end
  for _, p in ipairs(result) do
    if type(p) == 'table' and type(p.server) == 'string' and type(p.name) == 'string' then
      local args = {}
      for _, a in ipairs(type(p.arguments) == 'table' and p.arguments or {}) do
        if type(a) == 'table' and type(a.name) == 'string' then
          args[#args + 1] = {
            name = a.name,
            description = type(a.description) == 'string' and a.description ~= '' and a.description or nil,
            required = a.required == true,
          }
        end
      end
      out[#out + 1] = {
        server = p.server,
        name = p.name,
        command = type(p.command) == 'string' and p.command ~= '' and p.command or nil,
        description = type(p.description) == 'string' and p.description ~= '' and p.description or nil,
        arguments = args,
      }
    end
  end
  return out
end

-- Fetches the list of client into the cache; a fetch asked for while one is running
-- runs after it, so that the cache ends up newer than the last status change. The
-- waiters get (err, list) once the last fetch is answered.
local function fetch(client)
  local e = entry(client.id)
  if e.loading then
    e.again = true
    return
  end
  e.loading, e.again = true, false
  rpc.call(client, nil, 'agentls.listPrompts', vim.empty_dict(), function(err, result)
    if state.cache[client.id] ~= e then
      return -- forgotten meanwhile
    end
    e.loading = false
    if not err then
      e.list = normalize(result)
    end
    if e.again and not rpc.is_stopped(client) then
      return fetch(client)
    end
    local waiters = e.waiters
    e.waiters = {}
    for _, w in ipairs(waiters) do
      w(err, e.list)
    end
  end)
end

--- Calls cb(err, list) with the prompts of client's MCP servers: the cached list, or
--- (when none is cached, or with fresh) the list fetched from the server. list is
--- { server, name, description?, arguments = { { name, description?, required } } }[].
---@param client vim.lsp.Client
---@param cb fun(err: table|nil, list: table[]|nil)
---@param fresh boolean|nil
function M.list(client, cb, fresh)
  local e = entry(client.id)
  if e.list and not fresh and not e.loading then
    return cb(nil, e.list)
  end
  e.waiters[#e.waiters + 1] = cb
  fetch(client)
end

--- The cached prompts of a client, or nil.
---@param client_id integer
---@return table[]|nil
function M.cached(client_id)
  local e = state.cache[client_id]
  return e and e.list
end

--- Handler of agentls/update for the prompt lists: an MCP server's status changed
--- (kind mcp_status, session ""), so its prompts may have too; the list is fetched again.
---@param params table { session, update }
---@param client_id integer|nil
function M.handle_update(params, client_id)
  local u = type(params) == 'table' and params.update
  if type(u) ~= 'table' or u.kind ~= 'mcp_status' or params.session ~= '' or not client_id then
    return
  end
  local client = vim.lsp.get_client_by_id(client_id)
  if client and not rpc.is_stopped(client) then
    fetch(client)
  end
end

--- Forgets the list of a client that went away.
---@param client_id integer
function M.forget_client(client_id)
  state.cache[client_id] = nil
end

--- The command of a prompt: `/server:name`, or a custom command's own (`/git:commit`).
---@param p table { server, name, command? }
---@return string
function M.command(p)
  return p.command or ('/%s:%s'):format(p.server, p.name)
end

-- The custom command whose slash command is command in list, or nil.
local function find_custom(list, command)
  for _, p in ipairs(list or {}) do
    if p.command == command then
      return p
    end
  end
end

-- Whether the first word of s is a custom command of a cached list.
local function cached_custom(s)
  local first = s:match('^(/%S+)')
  if not first then
    return false
  end
  for _, e in pairs(state.cache) do
    if find_custom(e.list, first) then
      return true
    end
  end
  return false
end

local function find(list, server, name)
  for _, p in ipairs(list or {}) do
    if p.server == server and p.name == name then
      return p
    end
  end
end

-- Parsing ------------------------------------------------------------------------------

-- Splits s into words as a shell would (whitespace separates; "..." with \" and \\
-- escapes, '...' literal); each word is { text, eq, quoted } where eq is the byte index
-- in text of its first unquoted "=" and quoted whether any of it was quoted.
local function words(s)
  local out = {}
  local i, n = 1, #s
  while true do
    i = s:find('%S', i)
    if not i then
      return out
    end
    local buf, eq, quoted = {}, nil, false
    local len = 0
    local function put(c)
      buf[#buf + 1] = c
      len = len + #c
    end
    while i <= n and not s:sub(i, i):match('%s') do
      local c = s:sub(i, i)
      if c == '"' or c == "'" then
        quoted = true
        local j = i + 1
        while true do
          if j > n then
            return nil, ('unterminated %s quote'):format(c == '"' and 'double' or 'single')
          end
          local d = s:sub(j, j)
          if d == c then
            break
          end
          if c == '"' and d == '\\' and (s:sub(j + 1, j + 1) == '"' or s:sub(j + 1, j + 1) == '\\') then
            j = j + 1
            d = s:sub(j, j)
          end
          put(d)
          j = j + 1
        end
        i = j + 1
      else
        if c == '=' and not eq then
          eq = len + 1
        end
        put(c)
        i = i + 1
      end
    end
    out[#out + 1] = { text = table.concat(buf), eq = eq, quoted = quoted }
  end
end

--- Parses what the user typed as a prompt. Returns one of
---   { kind = 'text', text }        an ordinary prompt (`//…` sends `/…`)
---   { kind = 'list' }              `/` alone: choose a prompt
---   { kind = 'prompt', server, name, args = { [key] = value }, positional = { value… } }
---   { kind = 'error', message }    a malformed command (an unterminated quote, …)
--- A command is `/server:prompt` followed by arguments `key=value` (also `--key=value`),
--- where a value may be quoted ("a b" with \" and \\ escapes, or 'a b'); a word without
--- "=" is a positional value, which fills the prompt's next argument not named.
--- With opts.refs (the prompt buffer), an unquoted word that is a context reference,
--- `#buffer` or `#file:PATH`, is no argument: the command gets refs = { word… }, which
--- the chat attaches after the rendered prompt as it does for an ordinary prompt.
---@param text string
---@param opts table|nil { refs? }
---@return table
function M.parse(text, opts)
  local s = vim.trim(text or '')
  if s:sub(1, 2) == '//' then
    return { kind = 'text', text = s:sub(2) }
  end
  if s == '/' then
    return { kind = 'list' }
  end
  if cached_custom(s) then
    -- A custom command is sent as typed: agentls expands it.
    return { kind = 'text', text = text }
  end
  local server, name, rest = s:match('^/([^%s:/]+):(%S*)(.*)$')
  if not server or (rest ~= '' and not rest:match('^%s')) then
    return { kind = 'text', text = text }
  end
  local ws, err = words(rest)
  if not ws then
    return { kind = 'error', message = ('%s: %s'):format(M.command({ server = server, name = name }), err) }
  end
  local cmd = { kind = 'prompt', server = server, name = name, args = {}, positional = {} }
  local want_refs = type(opts) == 'table' and opts.refs
  if want_refs then
    cmd.refs = {}
  end
  for _, w in ipairs(ws) do
    if want_refs and not w.quoted and (w.text == '#buffer' or w.text:match('^#file:.')) then
      cmd.refs[#cmd.refs + 1] = w.text
    elseif w.eq then
      local key = w.text:sub(1, w.eq - 1):gsub('^%-%-', '')
      if key == '' then
        return { kind = 'error', message = ('%s: an argument name is missing before "=" in %q'):format(M.command(cmd), w.text) }
      end
      if cmd.args[key] ~= nil then
        return { kind = 'error', message = ('%s: argument %s is given twice'):format(M.command(cmd), key) }
      end
      cmd.args[key] = w.text:sub(w.eq + 1)
    else
      cmd.positional[#cmd.positional + 1] = w.text
    end
  end
  return cmd
end

-- Names the arguments of a command after the prompt's declared arguments: checks the
-- named ones and gives the positional values to the arguments not named, in order.
local function bind_args(p, cmd)
  if p.command then
    -- A custom command takes the rest of the line as one text ({{args}}).
    local words = vim.deepcopy(cmd.positional or {})
    for k, v in pairs(cmd.args or {}) do
      words[#words + 1] = k .. '=' .. v
    end
    return #words > 0 and { args = table.concat(words, ' ') } or {}
  end
  local args = {}
  local known = {}
  for _, a in ipairs(p.arguments) do
    known[a.name] = true
  end
  for k, v in pairs(cmd.args or {}) do
    if not known[k] then
      local names = vim.tbl_map(function(a)
        return a.name
      end, p.arguments)
      return nil,
        ('%s has no argument %s (%s)'):format(
          M.command(p),
          k,
          #names > 0 and ('it takes ' .. table.concat(names, ', ')) or 'it takes none'
        )
    end
    args[k] = v
  end
  local free = {}
  for _, a in ipairs(p.arguments) do
    if args[a.name] == nil then
      free[#free + 1] = a.name
    end
  end
  local positional = cmd.positional or {}
  if #positional > #free then
    return nil,
      ('%s takes %d argument%s, got %d'):format(M.command(p), #p.arguments, #p.arguments == 1 and '' or 's', #positional + vim.tbl_count(args))
  end
  for i, v in ipairs(positional) do
    args[free[i]] = v
  end
  return args
end

local function quote(v)
  if v ~= '' and not v:find('[%s"\'\\]') then
    return v
  end
  return '"' .. v:gsub('\\', '\\\\'):gsub('"', '\\"') .. '"'
end

--- The command line of a prompt with its arguments, as the chat shows it:
--- `/server:name key=value key2="a b"` (declared arguments first, in order).
---@param p table { server, name, arguments? }
---@param args table<string,string>
---@return string
function M.format(p, args)
  if p.command then
    return (args.args and args.args ~= '') and (p.command .. ' ' .. args.args) or p.command
  end
  local parts = { M.command(p) }
  local seen = {}
  for _, a in ipairs(p.arguments or {}) do
    if args[a.name] ~= nil then
      seen[a.name] = true
      parts[#parts + 1] = a.name .. '=' .. quote(args[a.name])
    end
  end
  local rest = vim.tbl_filter(function(k)
    return not seen[k]
  end, vim.tbl_keys(args))
  table.sort(rest)
  for _, k in ipairs(rest) do
    parts[#parts + 1] = k .. '=' .. quote(args[k])
  end
  return table.concat(parts, ' ')
end

--- The label of a prompt in lists: the command, its arguments (optional ones with ?)
--- and its description.
---@param p table
---@return string
function M.label(p)
  local names = vim.tbl_map(function(a)
    return a.name .. (a.required and '' or '?')
  end, p.arguments or {})
  local label = M.command(p)
  if #names > 0 then
    label = label .. ' ' .. table.concat(names, ' ')
  end
  if p.description then
    label = label .. ' — ' .. p.description:gsub('\r?\n', ' ')
  end
  return label
end

-- Questions ----------------------------------------------------------------------------

-- Asks with vim.ui.input for each required argument of p missing from args, then calls
-- done(nil, { prompt, args }); done(nil, nil) if the user cancelled a question.
local function ask_missing(p, args, done)
  local missing = {}
  for _, a in ipairs(p.arguments) do
    if a.required and args[a.name] == nil then
      missing[#missing + 1] = a
    end
  end
  local function step(i)
    local a = missing[i]
    if not a then
      return done(nil, { prompt = p, args = args })
    end
    local question = ('%s %s%s: '):format(M.command(p), a.name, a.description and (' (' .. a.description .. ')') or '')
    vim.ui.input({ prompt = question }, function(value)
      if value == nil then
        return done(nil, nil)
      end
      if value == '' then
        return done(('%s needs %s; the prompt was not sent'):format(M.command(p), a.name))
      end
      args[a.name] = value
      step(i + 1)
    end)
  end
  step(1)
end

local function choose(list, title, done)
  vim.ui.select(list, {
    prompt = title,
    kind = 'agentls.prompts',
    format_item = M.label,
  }, function(choice)
    if type(choice) ~= 'table' then
      return done(nil, nil)
    end
    ask_missing(choice, {}, done)
  end)
end

--- Turns a parsed command (kind 'list' or 'prompt', see parse()) into the prompt to run
--- and its arguments, asking what is missing: the prompt with vim.ui.select (kind
--- 'agentls.prompts') for `/` or a prompt the servers do not offer, each required
--- argument not given with vim.ui.input. Calls done(err, spec) once: spec is
--- { prompt, args } to run; err a message (a string) when it cannot run; both nil when
--- the user cancelled a question.
---@param client vim.lsp.Client
---@param cmd table
---@param done fun(err: string|nil, spec: table|nil)
function M.resolve(client, cmd, done)
  local function with(list, fresh)
    local p = cmd.kind == 'prompt' and (find(list, cmd.server, cmd.name) or find_custom(list, M.command(cmd)))
    if p then
      local args, err = bind_args(p, cmd)
      if not args then
        return done(err)
      end
      return ask_missing(p, args, done)
    end
    if cmd.kind == 'prompt' and not fresh then
      -- The cache may predate the server that offers it.
      return M.list(client, function(err, l)
        if err then
          return done('listing the MCP prompts failed: ' .. rpc.error_message(err))
        end
        with(l or {}, true)
      end, true)
    end
    if #list == 0 then
      return done('no MCP prompts: no connected MCP server offers any (see agentls.mcpStatus)')
    end
    local title = cmd.kind == 'prompt'
        and ('agentls: no prompt %s; choose one'):format(M.command(cmd))
      or 'agentls: run an MCP prompt'
    choose(list, title, done)
  end
  M.list(client, function(err, list)
    if err then
      return done('listing the MCP prompts failed: ' .. rpc.error_message(err))
    end
    with(list or {}, false)
  end)
end

-- Completion ---------------------------------------------------------------------------

-- The list for completion: cached, else fetched synchronously (briefly).
local function list_now(client)
  local e = entry(client.id)
  if e.list then
    return e.list
  end
  local resp = rpc.request_sync(
    client,
    'workspace/executeCommand',
    { command = 'agentls.listPrompts', arguments = { vim.empty_dict() } },
    M.complete_timeout_ms
  )
  if type(resp) == 'table' and not resp.err then
    e.list = normalize(resp.result)
    return e.list
  end
  return {}
end

--- Completion of what follows :Agentls: the `/server:prompt` commands for the first
--- word when it starts with "/", then `name=` for the arguments of that prompt not
--- given yet.
---@param arglead string
---@param line string the whole command line
---@return string[]
function M.complete(arglead, line)
  local rest = (line or ''):match('^.-Agentls!?%s+(.*)$')
  if not rest or rest:sub(1, 1) ~= '/' then
    return {}
  end
  local client = rpc.client()
  if not client then
    return {}
  end
  local list = list_now(client)
  local first = rest:match('^(%S*)$')
  if first then
    local out = {}
    for _, p in ipairs(list) do
      local c = M.command(p)
      if vim.startswith(c, arglead) then
        out[#out + 1] = c
      end
    end
    table.sort(out)
    return out
  end
  if arglead:find('=', 1, true) then
    return {}
  end
  local cmd = M.parse(rest)
  local p = cmd.kind == 'prompt' and find(list, cmd.server, cmd.name)
  if not p then
    return {}
  end
  local out = {}
  for _, a in ipairs(p.arguments) do
    if cmd.args[a.name] == nil and vim.startswith(a.name, arglead) then
      out[#out + 1] = a.name .. '='
    end
  end
  return out
end

return M
