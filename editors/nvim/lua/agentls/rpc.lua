-- Small helpers over Neovim's LSP client that hide the differences between 0.10 (methods
-- as fields: client.request(...)) and 0.11+ (methods: client:request(...)).
local M = {}

local has_011 = vim.fn.has('nvim-0.11') == 1

--- Name of the client in vim.lsp.get_clients().
M.name = 'agentls'

---@param client vim.lsp.Client
---@param method string
---@param params table|nil
---@param handler fun(err: table|nil, result: any, ctx: table)
---@param bufnr integer|nil
---@return boolean ok, integer|nil request_id
function M.request(client, method, params, handler, bufnr)
  if has_011 then
    return client:request(method, params, handler, bufnr)
  end
  return client.request(method, params, handler, bufnr)
end

--- Sends a request and waits for its answer (processing events) at most timeout_ms.
--- Returns { err, result }, or nil and a message on timeout or a stopped client.
---@param client vim.lsp.Client
---@param method string
---@param params table|nil
---@param timeout_ms integer
---@param bufnr integer|nil
---@return table|nil, string|nil
function M.request_sync(client, method, params, timeout_ms, bufnr)
  if has_011 then
    return client:request_sync(method, params, timeout_ms, bufnr)
  end
  return client.request_sync(method, params, timeout_ms, bufnr)
end

---@param client vim.lsp.Client
---@param method string
---@param params table|nil
---@return boolean
function M.notify(client, method, params)
  if has_011 then
    return client:notify(method, params)
  end
  return client.notify(method, params)
end

---@param client vim.lsp.Client
---@param id integer
function M.cancel_request(client, id)
  if has_011 then
    return client:cancel_request(id)
  end
  return client.cancel_request(id)
end

---@param client vim.lsp.Client
---@return boolean
function M.is_stopped(client)
  if has_011 then
    return client:is_stopped()
  end
  return client.is_stopped()
end

--- The agentls client of bufnr (default: the current buffer), or else any running
--- agentls client.
---@param bufnr integer|nil
---@return vim.lsp.Client|nil
function M.client(bufnr)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  local clients = vim.lsp.get_clients({ name = M.name, bufnr = bufnr })
  if #clients == 0 then
    clients = vim.lsp.get_clients({ name = M.name })
  end
  return clients[1]
end

--- Sends any debounced didChange of the client, so that the server sees the editor's
--- text before what we send next. Neovim has no public API for this; the private one
--- is used where present and its absence only delays the changes by the debounce.
---@param client vim.lsp.Client
---@param bufnr integer|nil
function M.flush_changes(client, bufnr)
  local ok, ct = pcall(function()
    return vim.lsp._changetracking
  end)
  if ok and type(ct) == 'table' and type(ct.flush) == 'function' then
    pcall(ct.flush, client, bufnr)
  end
end

--- Sends a request and calls cb(err, result) exactly once. With method, the rich-client
--- method is tried first and, if the server does not know it (MethodNotFound), command
--- is run through workspace/executeCommand instead; without method only the command is
--- run. Returns a handle { client, id (of the request last sent), finished, finish }:
--- finish(err, result) ends the call early, and later answers are then ignored.
---@param client vim.lsp.Client
---@param method string|nil
---@param command string
---@param params table
---@param cb fun(err: table|nil, result: any)
---@param bufnr integer|nil
---@return table
function M.call(client, method, command, params, cb, bufnr)
  local box = { client = client, finished = false }
  function box.finish(err, result)
    if box.finished then
      return
    end
    box.finished = true
    cb(err, result)
  end
  local function send(m, p, handler)
    local ok, id = M.request(client, m, p, handler, bufnr)
    if ok then
      box.id = id
    else
      box.finish({ message = 'the agentls client has stopped' })
    end
  end
  local function send_command()
    send('workspace/executeCommand', { command = command, arguments = { params } }, box.finish)
  end
  if not method then
    send_command()
  else
    send(method, params, function(err, result)
      if err and err.code == vim.lsp.protocol.ErrorCodes.MethodNotFound then
        send_command()
        return
      end
      box.finish(err, result)
    end)
  end
  return box
end

--- Converts a decoded JSON object back into something vim.json encodes as an object:
--- an empty Lua table would otherwise be sent as [].
---@param t table|nil
---@return table
function M.object(t)
  if t == nil or (type(t) == 'table' and next(t) == nil) then
    return vim.empty_dict()
  end
  return t
end

--- Message of a ResponseError or any other error value.
---@param err any
---@return string
function M.error_message(err)
  if type(err) == 'table' then
    if err.message then
      return tostring(err.message)
    end
    return vim.inspect(err)
  end
  return tostring(err)
end

return M
