-- The editor's diagnostics for the agent (docs/protocol.md, "The editor's diagnostics"):
-- the plugin declares experimental.agentls.diagnostics, and answers the server's
-- agentls/collectDiagnostics with agentls/diagnostics: the vim.diagnostic entries of
-- every source (language servers, linters) of the documents asked about, but agentls's
-- own. Asked to settle, it waits until those documents' diagnostics have not changed
-- for a short quiet period and no language server reports progress, at the latest a
-- little before the wait the server gives (diagnostics.wait_ms, 2 s by default).
local rpc = require('agentls.rpc')
local config = require('agentls.config')

local api = vim.api
local uv = vim.uv or vim.loop
local M = {}

--- How long the diagnostics must stay unchanged once they changed after an edit.
M.quiet_ms = 200
--- How long to wait for a first change before taking the diagnostics as they are (an
--- edit that changes no diagnostic brings no change).
M.idle_ms = 1000
--- How much sooner than the server's wait the report is sent, for the trip.
M.margin_ms = 150

--- The capability to declare, or nil when the user turned it off.
---@return table|nil
function M.capability()
  local o = config.options.diagnostics or {}
  if o.enabled == false then
    return nil
  end
  return { waitMs = o.wait_ms or 2000 }
end

-- Language servers' progress in flight: token keys of clients other than agentls.
local busy = {}
local group = api.nvim_create_augroup('agentls_diagnostics', { clear = true })
api.nvim_create_autocmd('LspProgress', {
  group = group,
  callback = function(ev)
    local data = ev.data or {}
    local client = data.client_id and vim.lsp.get_client_by_id(data.client_id)
    if not client or client.name == rpc.name then
      return
    end
    local params = data.params or data.result or {}
    local value = params.value or {}
    local key = tostring(data.client_id) .. ':' .. tostring(params.token)
    if value.kind == 'begin' or value.kind == 'report' then
      busy[key] = uv.now()
    elseif value.kind == 'end' then
      busy[key] = nil
    end
  end,
})

local function progressing()
  local now = uv.now()
  for key, since in pairs(busy) do
    -- A server that never ends its progress does not hold reports up for ever.
    if now - since > 10000 then
      busy[key] = nil
    else
      return true
    end
  end
  return false
end

--- The diagnostic namespaces of agentls's own clients, whose entries are not reported.
local function own_namespaces()
  local set = {}
  for _, c in ipairs(vim.lsp.get_clients({ name = rpc.name })) do
    for _, pull in ipairs({ false, true }) do
      local ok, ns = pcall(vim.lsp.diagnostic.get_namespace, c.id, pull)
      if ok and ns then
        set[ns] = true
      end
    end
  end
  return set
end

local function to_lsp(d)
  local code = d.code
  if code == nil and type(d.user_data) == 'table' and type(d.user_data.lsp) == 'table' then
    code = d.user_data.lsp.code
  end
  return {
    range = {
      start = { line = d.lnum, character = d.col or 0 },
      ['end'] = { line = d.end_lnum or d.lnum, character = d.end_col or d.col or 0 },
    },
    severity = d.severity,
    source = d.source,
    code = code,
    message = d.message,
  }
end

--- The diagnostics of buffer bufnr, as LSP diagnostics.
local function of_buffer(bufnr, own)
  local out = {}
  if bufnr < 0 or not api.nvim_buf_is_valid(bufnr) then
    return out
  end
  for _, d in ipairs(vim.diagnostic.get(bufnr)) do
    if not own[d.namespace] and d.source ~= 'agentls' and d.source ~= 'agentls/shell' then
      out[#out + 1] = to_lsp(d)
    end
  end
  return out
end

--- Whether something but agentls may report diagnostics on one of bufs: a language
--- server attached to it, or diagnostics of another source already there (linters).
local function has_sources(bufs)
  local own = own_namespaces()
  for _, b in ipairs(bufs) do
    if api.nvim_buf_is_valid(b) then
      for _, c in ipairs(vim.lsp.get_clients({ bufnr = b })) do
        if c.name ~= rpc.name then
          return true
        end
      end
      for _, d in ipairs(vim.diagnostic.get(b)) do
        if not own[d.namespace] and d.source ~= 'agentls' and d.source ~= 'agentls/shell' then
          return true
        end
      end
    end
  end
  return false
end

--- The buffer of uri, without making one.
local function buffer_of(uri)
  local ok, name = pcall(vim.uri_to_fname, uri)
  if not ok then
    return -1
  end
  return vim.fn.bufnr(name)
end

--- The files to report: those of uris, or every buffer with diagnostics.
local function report(client, id, uris)
  local own = own_namespaces()
  local files = {}
  if #uris == 0 then
    local seen = {}
    for _, d in ipairs(vim.diagnostic.get(nil)) do
      if not seen[d.bufnr] and api.nvim_buf_is_valid(d.bufnr) and api.nvim_buf_get_name(d.bufnr) ~= '' then
        seen[d.bufnr] = true
        files[#files + 1] = { uri = vim.uri_from_bufnr(d.bufnr), diagnostics = of_buffer(d.bufnr, own) }
      end
    end
  else
    for _, uri in ipairs(uris) do
      files[#files + 1] = { uri = uri, diagnostics = of_buffer(buffer_of(uri), own) }
    end
  end
  -- (vim.json sends an empty table as [].)
  if not rpc.is_stopped(client) then
    rpc.notify(client, 'agentls/diagnostics', { id = id, files = files })
  end
end

--- Waits for the diagnostics of bufs to settle, then calls done. Settled: changed after
--- the start and quiet for quiet_ms since, with no progress in flight; or no change for
--- idle_ms; or the deadline.
local function settle(bufs, deadline_ms, done)
  local start = uv.now()
  local last_change
  -- The diagnostics of other sources than agentls, as one string: agentls's own notes
  -- on the calls come and go with every call, and are no language server's answer.
  local function signature()
    local own = own_namespaces()
    local parts = {}
    for _, b in ipairs(bufs) do
      if api.nvim_buf_is_valid(b) then
        for _, d in ipairs(vim.diagnostic.get(b)) do
          if not own[d.namespace] and d.source ~= 'agentls' and d.source ~= 'agentls/shell' then
            parts[#parts + 1] = ('%d:%d:%d:%s:%s'):format(b, d.lnum, d.severity or 0, tostring(d.source), d.message)
          end
        end
      end
    end
    table.sort(parts)
    return table.concat(parts, '\n')
  end
  local last = signature()
  local au = api.nvim_create_autocmd('DiagnosticChanged', {
    group = group,
    callback = function()
      local sig = signature()
      if sig ~= last then
        last = sig
        last_change = uv.now()
      end
    end,
  })
  local timer = uv.new_timer()
  local finished = false
  local function finish()
    if finished then
      return
    end
    finished = true
    timer:stop()
    timer:close()
    pcall(api.nvim_del_autocmd, au)
    done()
  end
  timer:start(
    20,
    20,
    vim.schedule_wrap(function()
      if finished then
        return
      end
      local now = uv.now()
      if now - start >= deadline_ms then
        return finish()
      end
      if progressing() then
        return
      end
      if last_change and now - last_change >= M.quiet_ms then
        return finish()
      end
      if not last_change and now - start >= M.idle_ms then
        return finish()
      end
    end)
  )
end

--- The handler of agentls/collectDiagnostics.
function M.handler(_, params, ctx)
  local client = ctx and vim.lsp.get_client_by_id(ctx.client_id)
  if not client or type(params) ~= 'table' or type(params.id) ~= 'string' then
    return
  end
  local uris = type(params.uris) == 'table' and params.uris or {}
  if not params.settle then
    -- The state before an edit: now, before the edit that follows is applied.
    report(client, params.id, uris)
    return
  end
  local bufs = {}
  for _, uri in ipairs(uris) do
    local b = buffer_of(uri)
    if b >= 0 then
      bufs[#bufs + 1] = b
      if params.reload and api.nvim_buf_is_loaded(b) and not vim.bo[b].modified then
        -- A shell command changed the file: read it again, so that the language
        -- servers see what is on disk.
        pcall(vim.cmd, 'checktime ' .. b)
      end
    end
  end
  local wait = tonumber(params.waitMs) or 2000
  local deadline = math.max(wait - M.margin_ms, 0)
  if not has_sources(bufs) then
    -- Nothing but agentls reports on these buffers: nothing to wait for.
    deadline = 0
  end
  settle(bufs, deadline, function()
    report(client, params.id, uris)
  end)
end

--- The diagnostics of the lines from l1 to l2 (1-based) of bufnr, but agentls's own, as
--- one text for a prompt ("fix this"): "line N: severity: message (source)" lines.
---@return string|nil
function M.at_lines(bufnr, l1, l2)
  local own = own_namespaces()
  local names = { 'error', 'warning', 'info', 'hint' }
  local lines = {}
  for _, d in ipairs(vim.diagnostic.get(bufnr)) do
    if d.lnum + 1 >= l1 and d.lnum + 1 <= l2 and not own[d.namespace] and d.source ~= 'agentls' and d.source ~= 'agentls/shell' then
      local msg = ('line %d: %s: %s'):format(d.lnum + 1, names[d.severity] or 'error', d.message)
      if d.source and d.source ~= '' then
        msg = msg .. ' (' .. d.source .. ')'
      end
      lines[#lines + 1] = msg
    end
  end
  if #lines == 0 then
    return nil
  end
  return table.concat(lines, '\n')
end

return M
