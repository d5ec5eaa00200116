-- What the server says of itself (agentls.status: root, trust, approval mode, provider,
-- model), cached per client for the chat's winbar and :checkhealth, and the progress
-- the plugin reports to vim.lsp.status() while a prompt runs.
local rpc = require('agentls.rpc')

local api = vim.api
local M = {}

-- The last agentls.status result of each client, by client id.
local cache = {}

--- The cached status of a client, or nil.
---@param client_id integer|nil
---@return table|nil
function M.get(client_id)
  return client_id and cache[client_id] or nil
end

--- Asks the server for its status (agentls.status) and caches it; cb(err, status) is
--- optional. An older server without the command leaves the cache empty.
---@param client vim.lsp.Client
---@param cb fun(err: table|nil, status: table|nil)|nil
function M.refresh(client, cb)
  rpc.call(client, nil, 'agentls.status', vim.empty_dict(), function(err, result)
    if not err and type(result) == 'table' then
      cache[client.id] = result
    end
    pcall(vim.cmd, 'redrawstatus')
    if cb then
      cb(err, result)
    end
  end)
end

--- Records a new approval mode of a client (after agentls.setApprovalMode).
---@param client_id integer
---@param mode string
function M.set_mode(client_id, mode)
  if cache[client_id] then
    cache[client_id].approvalMode = mode
  end
end

--- Forgets a client that exited.
---@param client_id integer
function M.forget(client_id)
  cache[client_id] = nil
end

--- Reports work of the plugin's own (a running prompt) as LSP progress of the client, so
--- that vim.lsp.status() and statusline plugins that listen to LspProgress show it.
--- value is a WorkDoneProgress value ({ kind = 'begin'|'report'|'end', title?, message? }).
---@param client_id integer|nil
---@param token string
---@param value table
function M.progress(client_id, token, value)
  local client = client_id and vim.lsp.get_client_by_id(client_id)
  if not client or type(client.progress) ~= 'table' or type(client.progress.push) ~= 'function' then
    return
  end
  local params = { token = token, value = value }
  pcall(function()
    client.progress:push(params)
  end)
  pcall(api.nvim_exec_autocmds, 'LspProgress', {
    pattern = value.kind,
    modeline = false,
    data = { client_id = client.id, params = params },
  })
end

return M
