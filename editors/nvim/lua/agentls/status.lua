-- What the server says of itself (agentls.status: root, trust, approval mode, provider,
-- model), cached per client for the chat's winbar and :checkhealth; the approval mode
-- the server announces (agentls/update current_mode_update, session ""), which is the
-- one in force whoever changed it; and the progress the plugin reports to
-- vim.lsp.status() while a prompt runs.
local config = require('agentls.config')
local rpc = require('agentls.rpc')

local api = vim.api
local M = {}

-- The last agentls.status result of each client, by client id.
local cache = {}
-- The workspace approval mode each client's server announced last, by client id. It
-- wins over the cached status: the server announces every change, in order.
local announced = {}
-- The mode this editor asked for (set_mode) and whose announcement has not come yet,
-- by client id: that announcement is expected, not news.
local asked = {}

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

--- Notes that this editor asked the server of client_id for mode (nil: the request
--- failed), so that the server's announcement of it is not reported as news.
---@param client_id integer
---@param mode string|nil
function M.expect_mode(client_id, mode)
  asked[client_id] = mode
end

--- The workspace approval mode of a client: the one its server announced last, else
--- the one of its agentls.status; nil when neither is known.
---@param client_id integer|nil
---@return string|nil
function M.mode(client_id)
  if not client_id then
    return nil
  end
  return announced[client_id] or (cache[client_id] and cache[client_id].approvalMode) or nil
end

--- Handler of agentls/update for the workspace's approval mode (current_mode_update with
--- session ""): records it, redraws the statuslines, and says so with vim.notify when it
--- changed without this editor asking (another command, the settings, a trust decision,
--- an "always" answer that switched default to auto_edit). The first announcement, right
--- after initialized, is the server's starting mode, not a change. Returns whether the
--- update was one.
---@param params table { session, update }
---@param client_id integer|nil
---@return boolean
function M.handle_update(params, client_id)
  local u = type(params) == 'table' and params.update
  if
    not client_id
    or type(u) ~= 'table'
    or u.kind ~= 'current_mode_update'
    or params.session ~= ''
    or type(u.mode) ~= 'string'
    or u.mode == ''
  then
    return false
  end
  local before, wanted = announced[client_id], asked[client_id]
  asked[client_id] = nil
  announced[client_id] = u.mode
  if cache[client_id] then
    cache[client_id].approvalMode = u.mode
  end
  if before ~= nil and before ~= u.mode and wanted ~= u.mode then
    local what = config.mode_descriptions[u.mode]
    vim.notify(
      ('agentls: the approval mode is now %s%s'):format(u.mode, what and (': ' .. what) or ''),
      vim.log.levels.INFO
    )
  end
  pcall(vim.cmd, 'redrawstatus!')
  return true
end

--- Forgets a client that exited.
---@param client_id integer
function M.forget(client_id)
  cache[client_id] = nil
  announced[client_id] = nil
  asked[client_id] = nil
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
