-- agentls for Neovim: starts or attaches the agentls language server with vim.lsp.start,
-- declares the rich-client capability (experimental.agentls), and answers its
-- confirmations, edits and live updates. See :help agentls.
local config = require('agentls.config')
local rpc = require('agentls.rpc')
local output = require('agentls.output')
local confirm = require('agentls.confirm')
local edit = require('agentls.edit')
local chat = require('agentls.chat')
local prompts = require('agentls.prompts')
local status = require('agentls.status')

local api = vim.api
local M = {}

--- The protocol version this plugin speaks (docs/protocol.md).
M.protocol_version = 1

-- Module state: the augroup of setup(), the tool names for completion, and the runTool
-- requests in flight (so :AgentlsCancel can cancel them).
local state = {
  group = nil,
  tool_names = {},
  inflight = {},
  server_info = {},
}

local function notify(msg, level)
  vim.notify('agentls: ' .. msg, level or vim.log.levels.INFO)
end

--- The client capabilities agentls is started with.
---@return table
function M.capabilities()
  local caps = vim.lsp.protocol.make_client_capabilities()
  caps = vim.tbl_deep_extend('force', caps, {
    -- apply_workspace_edit handles TextDocumentEdit, and the versions let edit.lua refuse
    -- an edit computed for an older buffer (0.10 does not advertise it).
    workspace = { workspaceEdit = { documentChanges = true } },
  }, config.options.capabilities or {}, {
    experimental = {
      agentls = { confirm = true, updates = true, askUser = true, diagnostics = require('agentls.diagnostics').capability() },
    },
  })
  return caps
end

local function fetch_tools(client)
  rpc.request(client, 'agentls/tools', vim.empty_dict(), function(err, result)
    if err or type(result) ~= 'table' then
      return
    end
    local names = {}
    for _, t in ipairs(result) do
      if type(t) == 'table' and type(t.name) == 'string' then
        names[#names + 1] = t.name
      end
    end
    table.sort(names)
    state.tool_names = names
  end)
end

--- Files that mark a project's root where none of root_markers is found.
local project_markers = {
  'go.mod', 'package.json', 'Cargo.toml', 'pyproject.toml', 'setup.py', 'pom.xml',
  'build.gradle', 'build.gradle.kts', 'CMakeLists.txt', 'Makefile', 'composer.json',
  'Gemfile', 'mix.exs', 'deno.json', 'stack.yaml', 'dune-project',
}

--- The workspace root of a buffer: the nearest folder holding one of root_markers,
--- else one holding a project file, else the file's own folder. Never the current
--- directory for a file: that may be $HOME, where the agent has no business.
local function root_for(bufnr)
  local markers = config.options.root_markers
  local root
  if type(markers) == 'function' then
    root = markers(bufnr)
  elseif markers and #markers > 0 then
    root = vim.fs.root(bufnr, markers) or vim.fs.root(bufnr, project_markers)
  end
  if root then
    return root
  end
  local name = vim.api.nvim_buf_get_name(bufnr)
  if name ~= '' then
    return vim.fs.dirname(vim.fs.normalize(vim.fn.fnamemodify(name, ':p')))
  end
  return vim.fn.getcwd()
end

local function lsp_config(root)
  local opts = config.options
  local settings = opts.settings
  if type(settings) == 'table' and next(settings) == nil then
    settings = nil
  end
  return {
    name = rpc.name,
    cmd = opts.cmd,
    cmd_env = opts.cmd_env,
    root_dir = root,
    init_options = settings,
    capabilities = M.capabilities(),
    flags = opts.flags,
    handlers = {
      ['agentls/confirm'] = confirm.handler,
      ['agentls/update'] = function(_, params, ctx)
        status.handle_update(params, ctx and ctx.client_id)
        output.handle_update(params, ctx and ctx.client_id)
        chat.handle_update(params, ctx and ctx.client_id)
        prompts.handle_update(params, ctx and ctx.client_id)
      end,
      ['workspace/applyEdit'] = edit.handler,
      ['agentls/collectDiagnostics'] = require('agentls.diagnostics').handler,
    },
    on_init = function(client, result)
      state.server_info[client.id] = type(result) == 'table' and result.serverInfo or nil
      local exp = vim.tbl_get(result or {}, 'capabilities', 'experimental', 'agentls') or {}
      if exp.protocolVersion ~= M.protocol_version then
        notify(
          ('server speaks protocol %s, this plugin %d; rich features may not work'):format(
            tostring(exp.protocolVersion),
            M.protocol_version
          ),
          vim.log.levels.WARN
        )
      end
      fetch_tools(client)
      status.refresh(client)
    end,
    on_attach = opts.on_attach,
    on_exit = function(_, _, client_id)
      vim.schedule(function()
        state.server_info[client_id] = nil
        status.forget(client_id)
        confirm.cancel_all(client_id)
        output.forget_client(client_id)
        chat.forget_client(client_id)
        prompts.forget_client(client_id)
      end)
    end,
  }
end

local function wants(bufnr)
  if not api.nvim_buf_is_valid(bufnr) or vim.bo[bufnr].buftype ~= '' then
    return false
  end
  local name = api.nvim_buf_get_name(bufnr)
  if name == '' or name:match('^%a[%w+.-]*://') then
    return false
  end
  local fts = config.options.filetypes
  if fts and not vim.tbl_contains(fts, vim.bo[bufnr].filetype) then
    return false
  end
  return true
end

--- Starts agentls for bufnr (default: current buffer), or attaches the buffer to the
--- client already running for its root. Returns the client id, or nil.
---@param bufnr integer|nil
---@return integer|nil
function M.start(bufnr)
  bufnr = (bufnr == nil or bufnr == 0) and api.nvim_get_current_buf() or bufnr
  if not wants(bufnr) then
    return nil
  end
  local cmd = config.options.cmd
  if type(cmd) == 'table' and vim.fn.executable(cmd[1]) ~= 1 then
    vim.notify_once(
      ('agentls: %s is not executable; install agentls or set cmd in setup() (:checkhealth agentls)'):format(cmd[1]),
      vim.log.levels.ERROR
    )
    return nil
  end
  return vim.lsp.start(lsp_config(root_for(bufnr)), { bufnr = bufnr })
end

--- Configures the plugin and, with autostart, starts or attaches agentls for every file
--- buffer (now and when opened). Calling it again replaces the options.
---@param opts table|nil see :help agentls-options
function M.setup(opts)
  config.set(opts)
  state.group = api.nvim_create_augroup('agentls', { clear = true })
  if config.options.autostart then
    api.nvim_create_autocmd({ 'BufReadPost', 'BufNewFile', 'FileType' }, {
      group = state.group,
      desc = 'agentls: start or attach the language server',
      callback = function(ev)
        M.start(ev.buf)
      end,
    })
    for _, b in ipairs(api.nvim_list_bufs()) do
      if api.nvim_buf_is_loaded(b) then
        M.start(b)
      end
    end
  end
  api.nvim_create_autocmd('LspProgress', {
    group = state.group,
    desc = 'agentls: redraw the statusline on progress',
    callback = function(ev)
      local client = ev.data and vim.lsp.get_client_by_id(ev.data.client_id)
      if client and client.name == rpc.name then
        pcall(vim.cmd, 'redrawstatus')
      end
    end,
  })
end

local function need_client(bufnr)
  local client = rpc.client(bufnr)
  if not client then
    notify('not running for this buffer (call require("agentls").setup(), or :AgentlsStart)', vim.log.levels.ERROR)
  end
  return client
end

-- rpc.call, with the call kept in state.inflight until it finishes (which removes it
-- before cb runs). A cancellable call can be ended by M.cancel().
local function call(client, method, command, params, bufnr, cb, cancellable)
  local box
  box = rpc.call(client, method, command, params, function(err, result)
    -- box is nil when the call finished before rpc.call returned (the client had
    -- stopped); it was never in flight then.
    if box then
      state.inflight[box] = nil
    end
    cb(err, result)
  end, bufnr)
  box.cancellable = cancellable
  if not box.finished then
    state.inflight[box] = true
  end
  return box
end

local function report(name, err, result)
  if not config.options.notify_results then
    return
  end
  if err then
    notify(('%s failed: %s'):format(name, rpc.error_message(err)), vim.log.levels.ERROR)
    return
  end
  if type(result) ~= 'table' then
    return
  end
  local level = result.status == 'success' and vim.log.levels.INFO or vim.log.levels.WARN
  local text = result.summary
  if type(text) ~= 'string' or text == '' then
    if type(result.error) == 'table' and result.error.message then
      text = result.error.message
    else
      text = type(result.output) == 'string' and vim.split(result.output, '\n', { plain = true })[1] or ''
    end
  end
  notify(('%s %s: %s (:AgentlsOutput)'):format(name, tostring(result.status), text), level)
end

--- Runs a tool through agentls, the same path as a model's call (policy, approval mode,
--- confirmations). The callback gets (err, ToolResult).
---@param name string tool name
---@param args table|nil tool arguments
---@param opts table|nil { bufnr?, callback? }
---@return table|nil handle with field id (the request id) and client
function M.run_tool(name, args, opts)
  opts = opts or {}
  local client = need_client(opts.bufnr)
  if not client then
    return nil
  end
  local params = { name = name, args = rpc.object(args) }
  return call(client, 'agentls/runTool', 'agentls.runTool', params, opts.bufnr, function(err, result)
    if not err and type(result) == 'table' then
      output.write_result(result)
    end
    report(name, err, result)
    if opts.callback then
      opts.callback(err, result)
    end
  end, true)
end

--- Sets the approval mode of the server: default, auto_edit, yolo or plan.
---@param mode string
---@param callback fun(err: table|nil)|nil
function M.set_mode(mode, callback)
  if not vim.tbl_contains(config.modes, mode) then
    local msg = ('unknown approval mode %q (want %s)'):format(tostring(mode), table.concat(config.modes, ', '))
    notify(msg, vim.log.levels.ERROR)
    if callback then
      callback({ message = msg })
    end
    return
  end
  local client = need_client()
  if not client then
    if callback then
      callback({ message = 'agentls is not running' })
    end
    return
  end
  -- The server announces the new mode (current_mode_update), before it answers: as
  -- asked for here, that is no news.
  status.expect_mode(client.id, mode)
  call(client, nil, 'agentls.setApprovalMode', { mode = mode }, nil, function(err)
    if err then
      status.expect_mode(client.id, nil)
      notify('setting the approval mode failed: ' .. rpc.error_message(err), vim.log.levels.ERROR)
    else
      local what = config.mode_descriptions[mode]
      notify(('approval mode: %s%s'):format(mode, what and (' (' .. what .. ')') or ''))
      status.set_mode(client.id, mode)
      for _, c in ipairs({ chat.current() }) do
        chat.update_winbar(c)
      end
      pcall(vim.cmd, 'redrawstatus!')
    end
    if callback then
      callback(err)
    end
  end)
end

--- Offers the approval modes with vim.ui.select (kind 'agentls.mode'; each item a mode,
--- shown with what it means and the current one marked) and sets the chosen one.
---@param callback fun(err: table|nil)|nil called once set (not when dismissed)
function M.select_mode(callback)
  config.check('callback', callback, 'function', true)
  local client = need_client()
  if not client then
    return
  end
  local c = chat.get()
  local current = c and chat.mode(c) or status.mode(client.id)
  vim.ui.select(config.modes, {
    prompt = ('agentls: approval mode (now %s)'):format(current or '?'),
    kind = 'agentls.mode',
    format_item = function(m)
      return ('%s%s: %s'):format(m, m == current and ' (current)' or '', config.mode_descriptions[m] or '')
    end,
  }, function(choice)
    if choice then
      M.set_mode(choice, callback)
    end
  end)
end

--- How long a cancelled run may take to report its cancellation before its request is
--- cancelled too (Neovim never reports a request answered with RequestCancelled).
M.cancel_grace_ms = 3000

--- Cancels what agentls is doing. In a chat buffer: the chat's running prompt (see
--- require('agentls.chat').cancel()). Elsewhere: the running prompts of every chat, and
--- the server's running calls (agentls.cancel), whose runs then end with status
--- "cancelled"; a run started here that has not ended after cancel_grace_ms gets
--- $/cancelRequest and its callback an error with code -32800.
function M.cancel()
  local current = chat.get()
  if current then
    if not chat.cancel(current) then
      notify('no prompt is running in this chat')
    end
    return
  end
  local prompts_running = #chat.busy()
  chat.cancel_all()
  local runs = {}
  for box in pairs(state.inflight) do
    if box.cancellable then
      runs[#runs + 1] = box
    end
  end
  if prompts_running == 0 and #runs == 0 and #output.active_calls() == 0 then
    -- The server is told anyway: it may run calls this editor did not see start.
    notify('nothing to cancel: no prompt or tool call is running')
  end
  local client = rpc.client()
  if client then
    call(client, nil, 'agentls.cancel', vim.empty_dict(), nil, function(err)
      if err then
        notify('cancel failed: ' .. rpc.error_message(err), vim.log.levels.ERROR)
      end
    end)
  end
  if #runs > 0 then
    vim.defer_fn(function()
      for _, box in ipairs(runs) do
        if not box.finished then
          if box.id and not rpc.is_stopped(box.client) then
            pcall(rpc.cancel_request, box.client, box.id)
          end
          box.finish({ code = -32800, message = 'cancelled from the editor' })
        end
      end
    end, M.cancel_grace_ms)
  end
end

--- Sends a prompt to the agent; the answer streams into the chat buffer. See
--- require('agentls.chat').prompt() for {opts} ({ bufnr?, range?, callback? }).
---@param text string
---@param opts table|nil
---@return table|nil chat
function M.prompt(text, opts)
  return chat.prompt(text, opts)
end

--- Runs the MCP prompt {name} of MCP server {server} with {args} in the chat, as
--- `:Agentls /server:name key=value`. See require('agentls.chat').run_prompt().
---@param server string
---@param name string
---@param args table<string,string>|nil
---@param opts table|nil { bufnr?, chat?, callback? }
---@return table|nil chat
function M.run_prompt(server, name, args, opts)
  return chat.run_prompt(server, name, args, opts)
end

--- Calls cb(err, list) with the prompts of the MCP servers of the current buffer's
--- server (agentls.listPrompts, cached): { server, name, description?, arguments =
--- { { name, description?, required } } }[].
---@param cb fun(err: table|nil, list: table[]|nil)
function M.list_prompts(cb)
  config.check('cb', cb, 'function')
  local client = need_client()
  if not client then
    return cb({ message = 'agentls is not running' }, nil)
  end
  prompts.list(client, cb)
end

--- Lists the stored sessions (agentls.listSessions, newest first) with vim.ui.select
--- and binds the chat to the chosen one: the next prompt continues it.
---@param callback fun(err: table|nil, chat: table|nil)|nil called once decided
function M.sessions(callback)
  config.check('callback', callback, 'function', true)
  local function done(err, c)
    if callback then
      callback(err, c)
    end
  end
  local client = need_client()
  if not client then
    return done({ message = 'agentls is not running' })
  end
  rpc.call(client, 'agentls/sessions', 'agentls.listSessions', vim.empty_dict(), function(err, result)
    if err then
      notify('listing the sessions failed: ' .. rpc.error_message(err), vim.log.levels.ERROR)
      return done(err)
    end
    if type(result) ~= 'table' or #result == 0 then
      notify('no stored sessions')
      return done(nil, nil)
    end
    vim.ui.select(result, {
      prompt = 'agentls: resume a session',
      kind = 'agentls.sessions',
      format_item = function(item)
        local when = type(item.updated) == 'string' and item.updated:sub(1, 16):gsub('T', ' ') or ''
        local n = tonumber(item.prompts) or 0
        return ('%s  (%s, %d prompt%s)'):format(
          type(item.title) == 'string' and item.title ~= '' and item.title or tostring(item.id),
          when,
          n,
          n == 1 and '' or 's'
        )
      end,
    }, function(item)
      if type(item) ~= 'table' or type(item.id) ~= 'string' then
        return done(nil, nil)
      end
      done(nil, chat.resume(item.id, item))
    end)
  end)
end

--- The trust scopes of agentls.trust.
--- Authorizes agentls with the MCP server called server by OAuth (agentls.mcpAuth): the
--- server opens the authorization page in the browser (window/showDocument) or shows
--- its link, and answers once the person has granted access; the outcome is notified.
---@param server string
---@param callback fun(err: table|nil, result: table|nil)|nil
function M.mcp_auth(server, callback)
  config.check('server', server, 'string')
  config.check('callback', callback, 'function', true)
  local function done(err, result)
    if callback then
      callback(err, result)
    end
  end
  local client = need_client()
  if not client then
    return done({ message = 'agentls is not running' })
  end
  notify(('authorizing MCP server %s: grant access in the browser'):format(server))
  rpc.call(client, nil, 'agentls.mcpAuth', { server = server }, function(err, result)
    if err then
      notify('MCP authorization failed: ' .. rpc.error_message(err), vim.log.levels.ERROR)
    elseif type(result) == 'table' then
      notify(('MCP server %s is %s'):format(server, tostring(result.state)))
    end
    done(err, result)
  end)
end

M.trust_scopes = { 'folder', 'parent', 'revoke' }

--- Trusts the workspace folder ('folder'), its parent and everything under it
--- ('parent'), or takes the trust back ('revoke'), with the server command
--- agentls.trust; the server's message is shown. Without scope, asks with
--- vim.ui.select (the two ways to trust, or not now).
---@param scope string|nil
---@param callback fun(err: table|nil, result: table|nil)|nil
function M.trust(scope, callback)
  config.check('scope', scope, 'string', true)
  config.check('callback', callback, 'function', true)
  local function done(err, result)
    if callback then
      callback(err, result)
    end
  end
  if scope and not vim.tbl_contains(M.trust_scopes, scope) then
    local msg = ('unknown trust scope %q (want %s)'):format(scope, table.concat(M.trust_scopes, ', '))
    notify(msg, vim.log.levels.ERROR)
    return done({ message = msg })
  end
  local client = need_client()
  if not client then
    return done({ message = 'agentls is not running' })
  end
  local function send(s)
    rpc.call(client, nil, 'agentls.trust', { scope = s }, function(err, result)
      if err then
        notify('trust failed: ' .. rpc.error_message(err), vim.log.levels.ERROR)
      elseif type(result) == 'table' then
        local msg = type(result.message) == 'string' and result.message ~= '' and result.message
          or ('%s %s'):format(result.trusted and 'trusted' or 'not trusted', tostring(result.path or ''))
        notify(msg)
      end
      done(err, result)
    end)
  end
  if scope then
    return send(scope)
  end
  local folder = client.root_dir or (client.config and client.config.root_dir) or vim.fn.getcwd()
  local parent = vim.fn.fnamemodify(folder, ':h')
  local items = {
    { label = ('Trust this folder (%s)'):format(vim.fn.fnamemodify(folder, ':~')), scope = 'folder' },
    { label = ('Trust the parent folder (%s) and everything under it'):format(vim.fn.fnamemodify(parent, ':~')), scope = 'parent' },
    { label = 'Not now', scope = nil },
  }
  vim.ui.select(items, {
    prompt = 'agentls: trust this folder? Its settings may then loosen consent.',
    kind = 'agentls.trust',
    format_item = function(item)
      return item.label
    end,
  }, function(item)
    if type(item) == 'table' and item.scope then
      send(item.scope)
    else
      done(nil, nil)
    end
  end)
end

--- The serverInfo ({ name, version }) the client's server sent in its initialize result.
---@param client_id integer
---@return table|nil
function M.server_info(client_id)
  return state.server_info[client_id]
end

--- Opens the buffer with the live output of tool calls.
function M.open_output()
  return output.open()
end

--- Tool names known from the server, for completion.
---@return string[]
function M.tool_names()
  return state.tool_names
end

-- The approval mode the statusline shows for the current buffer: a chat's (its
-- session's own, else its server's), else that of the agentls server attached to the
-- buffer; nil when none is attached or the mode is not known.
local function statusline_mode()
  local c = chat.get()
  if c then
    return chat.mode(c)
  end
  local client = vim.lsp.get_clients({ name = rpc.name, bufnr = api.nvim_get_current_buf() })[1]
  return client and status.mode(client.id)
end

--- A short statusline item: the approval mode when it is not `default` (it then lets
--- calls run without asking, or only read-only ones), the busy indicator, confirmations
--- waiting and calls running; "" when there is nothing to say. Evaluated in the window
--- being drawn (%{}), it shows the mode of that window's buffer's server.
---@return string
function M.statusline()
  local parts = {}
  local mode = statusline_mode()
  if mode and mode ~= 'default' then
    parts[#parts + 1] = 'mode: ' .. mode
  end
  local spin = chat.spinner()
  if spin then
    parts[#parts + 1] = spin .. ' working'
  end
  local waiting = #confirm.pending()
  if waiting > 0 then
    parts[#parts + 1] = ('%d awaiting approval'):format(waiting)
  end
  local running = {}
  for _, c in ipairs(output.active_calls()) do
    if c.status == 'in_progress' then
      running[#running + 1] = c.name or c.title or c.id
    end
  end
  if #running > 0 then
    table.sort(running)
    parts[#parts + 1] = 'running ' .. table.concat(running, ', ')
  end
  if #parts == 0 then
    return ''
  end
  return 'agentls: ' .. table.concat(parts, '; ')
end

-- The session :AgentlsUndoTurn and :AgentlsDiff work on: the given one, else the
-- current chat's; nil after saying why there is none.
local function turn_session(session)
  if session and session ~= '' then
    return session
  end
  local c = chat.get() or chat.current()
  if c and c.session then
    return c.session
  end
  notify('no chat session yet: run a prompt (:Agentls) or resume one (:AgentlsSessions)', vim.log.levels.WARN)
  return nil
end

-- The header line agentls.turnDiff puts above each file's diff, "# {rel}: changed by
-- {calls}": rel and the calls, or nil for any other line.
local function diff_header(l)
  local rel, by = (l or ''):match('^# (.-): changed by (.*)$')
  return rel, by
end

-- The lines "# " that agentls.turnDiff puts after every file: what it could not show.
local function diff_trailer(l)
  return not diff_header(l) and ((l or ''):match('^# not recorded: ') or (l or ''):match('^# left out: '))
end

-- The file and line of the new text that row (1-based) of a unified diff shows (paths
-- relative to root, as agentls.turnDiff writes them): the file of the nearest "# {rel}:
-- changed by" header above (or, in a diff without them, of the nearest "+++ b/"
-- header), line 1 on the file's own "# " lines, else the line counted from the nearest
-- hunk header; nil when row is above every file or on a closing "# not recorded" or
-- "# left out" line.
local function diff_location(lines, row, root)
  local function abs(rel)
    return rel:sub(1, 1) == '/' and rel or (root .. '/' .. rel)
  end
  if diff_trailer(lines[row]) then
    return nil
  end
  local head_row, head_rel
  for r = row, 1, -1 do
    local rel = diff_header(lines[r])
    if rel then
      head_row, head_rel = r, rel
      break
    end
  end
  local file_row
  local from = head_row or 1
  for r = row, from, -1 do
    if lines[r]:match('^%+%+%+ ') and r > 1 and lines[r - 1]:match('^%-%-%- ') then
      file_row = r
      break
    end
  end
  if not file_row and lines[row] and lines[row]:match('^%-%-%- ') and lines[row + 1] and lines[row + 1]:match('^%+%+%+ ') then
    -- On the "--- a/" line of a file.
    file_row = row + 1
  end
  if not file_row then
    -- On a file's "# " lines, or in a file shown by them only (a folder, a binary file).
    if head_rel then
      return abs(head_rel), 1
    end
    return nil
  end
  local rel = head_rel or lines[file_row]:match('^%+%+%+ b/(.-)%s*$') or lines[file_row]:match('^%+%+%+ (.-)%s*$')
  if not rel or rel == '/dev/null' then
    return nil
  end
  local line = 1
  for r = file_row + 1, row do
    local l = lines[r]
    local start = l:match('^@@ %-%d+,?%d* %+(%d+)')
    if start then
      line = math.max(tonumber(start), 1)
    elseif r < row and (l:sub(1, 1) == ' ' or l:sub(1, 1) == '+') then
      line = line + 1
    end
  end
  return abs(rel), line
end

-- Marks the "# " lines of a turn diff in buf: each file's header (its name and the
-- calls that changed it, "changed by run_shell_command: …" set apart), the file's
-- notes under it (renamed from, mode, folder, binary), and the closing notes of what
-- was not recorded or left out. Returns how many files the headers name.
local diff_ns = api.nvim_create_namespace('agentls.turndiff')
local function mark_diff(buf)
  for name, link in pairs({
    AgentlsDiffFile = 'Title',
    AgentlsDiffBy = 'Special',
    AgentlsDiffNote = 'Comment',
    AgentlsDiffWarn = 'WarningMsg',
  }) do
    api.nvim_set_hl(0, name, { link = link, default = true })
  end
  api.nvim_buf_clear_namespace(buf, diff_ns, 0, -1)
  local files = 0
  for i, l in ipairs(api.nvim_buf_get_lines(buf, 0, -1, false)) do
    local rel = diff_header(l)
    local function mark(col, end_col, group)
      api.nvim_buf_set_extmark(buf, diff_ns, i - 1, col, { end_col = end_col, hl_group = group, priority = 200 })
    end
    if rel then
      files = files + 1
      mark(0, 2 + #rel, 'AgentlsDiffFile')
      mark(2 + #rel, #l, 'AgentlsDiffBy')
      -- A line between files, so that each file's header stands above its hunks.
      if i > 1 then
        api.nvim_buf_set_extmark(buf, diff_ns, i - 1, 0, { virt_lines = { { { '', 'Normal' } } }, virt_lines_above = true })
      end
    elseif diff_trailer(l) then
      mark(0, #l, 'AgentlsDiffWarn')
    elseif l:match('^# ') then
      mark(0, #l, 'AgentlsDiffNote')
    end
  end
  return files
end

-- Opens path at line in a file window of tab (the tab :AgentlsDiff was run from): one
-- that shows the file already, else one with a file buffer, else a new split there.
local function open_in_tab(tab, path, line)
  if not api.nvim_tabpage_is_valid(tab) then
    tab = api.nvim_get_current_tabpage()
  end
  local target
  for _, w in ipairs(api.nvim_tabpage_list_wins(tab)) do
    local b = api.nvim_win_get_buf(w)
    if vim.fs.normalize(api.nvim_buf_get_name(b)) == vim.fs.normalize(path) then
      target = w
      break
    end
    if not target and vim.bo[b].buftype == '' and api.nvim_win_get_config(w).relative == '' then
      target = w
    end
  end
  api.nvim_set_current_tabpage(tab)
  if target then
    api.nvim_set_current_win(target)
  else
    vim.cmd('split')
  end
  vim.cmd('edit ' .. vim.fn.fnameescape(path))
  pcall(api.nvim_win_set_cursor, 0, { math.min(line, api.nvim_buf_line_count(0)), 0 })
  pcall(vim.cmd, 'normal! zv')
end

--- What turn_diff and undo_turn start with: their options checked, the callback as
--- done(err, result), and the session and server the request goes to. Without either,
--- done is called with an error and session and client are nil.
---@param opts table { session?, turn?, callback?, force? }
---@param takes_force boolean whether opts.force is an option (undo_turn's)
---@return function done, string|nil session, table|nil client
local function turn_target(opts, takes_force)
  config.check('opts', opts, 'table')
  config.check('opts.session', opts.session, 'string', true)
  config.check('opts.turn', opts.turn, 'number', true)
  if takes_force then
    config.check('opts.force', opts.force, 'boolean', true)
  end
  config.check('opts.callback', opts.callback, 'function', true)
  local function done(err, result)
    if opts.callback then
      opts.callback(err, result)
    end
  end
  local session = turn_session(opts.session)
  local client = session and need_client()
  if not client then
    done({ message = 'no session or no server' })
    return done, nil, nil
  end
  return done, session, client
end

--- Shows what a prompt of a session changed (agentls.turnDiff) in a new tab, as a diff
--- buffer. Default: the current chat's session, its last prompt that changed files.
--- <CR> opens the file at the line under the cursor in the tab it was run from.
---@param opts table|nil { session?, turn?, callback? }
function M.turn_diff(opts)
  opts = opts or {}
  local done, session, client = turn_target(opts, false)
  if not client then
    return
  end
  local params = { session = session, turn = opts.turn }
  call(client, nil, 'agentls.turnDiff', params, nil, function(err, result)
    if err then
      notify('the turn diff failed: ' .. rpc.error_message(err), vim.log.levels.ERROR)
      return done(err)
    end
    if type(result) ~= 'table' or type(result.diff) ~= 'string' or result.diff == '' then
      notify('that prompt changed no file')
      return done(nil, result)
    end
    local from_tab = api.nvim_get_current_tabpage()
    local root = client.root_dir or (client.config and client.config.root_dir) or vim.fn.getcwd()
    -- The diff of the same prompt shown before is replaced (its tab closes with it).
    local name = ('agentls://diff/turn-%s'):format(tostring(result.turn))
    local old = vim.fn.bufnr('^' .. name .. '$')
    if old > 0 then
      pcall(api.nvim_buf_delete, old, { force = true })
    end
    vim.cmd('tabnew')
    local buf = api.nvim_get_current_buf()
    vim.bo[buf].buftype = 'nofile'
    vim.bo[buf].bufhidden = 'wipe'
    vim.bo[buf].swapfile = false
    pcall(api.nvim_buf_set_name, buf, name)
    api.nvim_buf_set_lines(buf, 0, -1, false, vim.split(result.diff:gsub('\n$', ''), '\n', { plain = true }))
    vim.bo[buf].modifiable = false
    vim.bo[buf].filetype = 'diff'
    vim.b[buf].agentls_session = session
    vim.b[buf].agentls_turn = result.turn
    mark_diff(buf)
    local unrecorded = type(result.unrecorded) == 'table' and #result.unrecorded or 0
    api.nvim_set_option_value(
      'winbar',
      ('agentls · prompt %s%s%s · <CR> opens the file at the line · q closes'):format(
        tostring(result.turn),
        result.undone and ' (undone)' or '',
        unrecorded > 0 and (' · %d command%s not recorded'):format(unrecorded, unrecorded == 1 and '' or 's') or ''
      ),
      { scope = 'local', win = api.nvim_get_current_win() }
    )
    vim.keymap.set('n', 'q', '<Cmd>tabclose<CR>', { buffer = buf, nowait = true, desc = 'agentls: close the diff' })
    vim.keymap.set('n', '<CR>', function()
      local path, line = diff_location(api.nvim_buf_get_lines(buf, 0, -1, false), api.nvim_win_get_cursor(0)[1], root)
      if not path then
        notify('no file under the cursor: move to a line of a file\'s diff', vim.log.levels.WARN)
        return
      end
      if vim.fn.filereadable(path) ~= 1 then
        notify(('%s does not exist (any more)'):format(vim.fn.fnamemodify(path, ':~:.')), vim.log.levels.WARN)
        return
      end
      open_in_tab(from_tab, path, line)
    end, { buffer = buf, desc = 'agentls: open the file at the line under the cursor' })
    done(nil, result)
  end)
end

-- What an undo or a redo left as it was, or could not know, as "; " parts of its message.
local function turn_notes(result)
  local parts = {}
  if type(result.notRestorable) == 'table' and #result.notRestorable > 0 then
    parts[#parts + 1] = 'not restorable (left as they are): ' .. table.concat(result.notRestorable, ', ')
  end
  if type(result.unrecorded) == 'table' and #result.unrecorded > 0 then
    parts[#parts + 1] = 'not recorded, so not taken back: ' .. table.concat(result.unrecorded, ', ')
  end
  if type(result.leftOut) == 'number' and result.leftOut > 0 then
    parts[#parts + 1] = ('%d ignored path%s left out'):format(result.leftOut, result.leftOut == 1 and '' or 's')
  end
  return parts
end

-- undo_turn and redo_turn: agentls.undoTurn or agentls.redoTurn, asking to force where
-- files changed since, and the message of what was done.
local function turn_back(opts, redo)
  opts = opts or {}
  local done, session, client = turn_target(opts, true)
  if not client then
    return
  end
  local what = redo and 'redo' or 'undo'
  local function names(list)
    local out = {}
    for _, f in ipairs(type(list) == 'table' and list or {}) do
      out[#out + 1] = vim.fn.fnamemodify(f, ':~:.')
    end
    return table.concat(out, ', ')
  end
  local params = { session = session, turn = opts.turn, force = opts.force or nil }
  -- The server compares the files with the editor's text: it must have the latest.
  -- client.attached_buffers, not vim.lsp.get_buffers_by_client_id(): deprecated in
  -- 0.12, where it warns.
  for b in pairs(client.attached_buffers or {}) do
    rpc.flush_changes(client, b)
  end
  local command = redo and 'agentls.redoTurn' or 'agentls.undoTurn'
  call(client, nil, command, params, nil, function(err, result)
    if err then
      notify(what .. ' failed: ' .. rpc.error_message(err), vim.log.levels.ERROR)
      return done(err)
    end
    result = type(result) == 'table' and result or {}
    local changed = type(result.changed) == 'table' and result.changed or {}
    local reverted = type(result.reverted) == 'table' and result.reverted or {}
    local deleted = type(result.deleted) == 'table' and result.deleted or {}
    if #changed > 0 and #reverted == 0 and #deleted == 0 and not opts.force then
      local items = { ('%s the other files anyway'):format(redo and 'Redo' or 'Undo'), 'Leave everything as it is' }
      return vim.ui.select(items, {
        prompt = ('agentls: changed since %s %s, so nothing was %s: %s'):format(
          redo and 'the undo of prompt' or 'prompt',
          tostring(result.turn),
          redo and 'redone' or 'undone',
          names(changed)
        ),
        kind = 'agentls.' .. what,
      }, function(choice)
        if choice == items[1] then
          turn_back(vim.tbl_extend('force', opts, { session = session, turn = result.turn, force = true }), redo)
        else
          done(nil, result)
        end
      end)
    end
    local msg = ('%s prompt %s: %d file%s %s, %d deleted'):format(
      redo and 'redid' or 'undid',
      tostring(result.turn),
      #reverted,
      #reverted == 1 and '' or 's',
      redo and 'brought back' or 'reverted',
      #deleted
    )
    local notes = turn_notes(result)
    if #changed > 0 then
      table.insert(notes, 1, 'left as they are (changed since): ' .. names(changed))
    end
    if #notes > 0 then
      msg = msg .. '; ' .. table.concat(notes, '; ')
    end
    notify(msg, #notes > 0 and vim.log.levels.WARN or vim.log.levels.INFO)
    done(nil, result)
  end)
end

--- Takes back what a prompt of a session changed (agentls.undoTurn), its edits and its
--- shell commands' changes: text files in one undo step, the rest (created, deleted,
--- binary files, folders, modes) on disk. Where the user changed a file since, nothing
--- is undone unless force: then the files are listed and, asked with vim.ui.select,
--- the others can be undone anyway. The message names what could not be taken back.
---@param opts table|nil { session?, turn?, force?, callback? }
function M.undo_turn(opts)
  turn_back(opts, false)
end

--- Brings back what an undo of a prompt took back (agentls.redoTurn), as undo_turn
--- does; turn defaults to the prompt undone last. A redone prompt can be undone again.
---@param opts table|nil { session?, turn?, force?, callback? }
function M.redo_turn(opts)
  turn_back(opts, true)
end

--- Parses the argument line of :AgentlsTool: a tool name and optional JSON arguments.
---@param line string
---@return string|nil name, table|nil args, string|nil err
function M.parse_tool_command(line)
  local name, rest = vim.trim(line or ''):match('^(%S+)%s*(.*)$')
  if not name then
    return nil, nil, 'usage: :AgentlsTool {name} [{json}]'
  end
  if rest == '' then
    return name, vim.empty_dict(), nil
  end
  local ok, args = pcall(vim.json.decode, rest, { luanil = { object = true, array = true } })
  if not ok or type(args) ~= 'table' or (vim.islist or vim.tbl_islist)(args) and next(args) ~= nil then
    return nil, nil, ('the arguments of %s must be a JSON object: %s'):format(name, ok and rest or tostring(args))
  end
  return name, args, nil
end

return M
