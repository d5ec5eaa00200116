-- Live output of agentls tool calls: agentls/update notifications are tracked per tool
-- call, output chunks are appended to one scratch buffer (:AgentlsOutput), and the state
-- of running calls feeds the statusline.
local config = require('agentls.config')

local api = vim.api
local M = {}

local BUF_NAME = 'agentls://output'

local terminal = { completed = true, failed = true, cancelled = true }

-- Module state: the tool calls seen (by toolCallId), the output buffer, which call wrote
-- to it last, and listeners that want to know when a call ends.
local state = {
  calls = {},
  buf = nil,
  last_writer = nil,
  on_status = {},
}

--- The output buffer, created on first use.
---@return integer
function M.buf()
  if state.buf and api.nvim_buf_is_valid(state.buf) then
    return state.buf
  end
  local buf = api.nvim_create_buf(false, true)
  vim.bo[buf].buftype = 'nofile'
  vim.bo[buf].bufhidden = 'hide'
  vim.bo[buf].swapfile = false
  vim.bo[buf].modifiable = false
  vim.bo[buf].filetype = 'agentls-output'
  pcall(api.nvim_buf_set_name, buf, BUF_NAME)
  state.buf = buf
  state.last_writer = nil
  return buf
end

--- The whole text of the output buffer.
---@return string
function M.text()
  return table.concat(api.nvim_buf_get_lines(M.buf(), 0, -1, false), '\n')
end

--- Opens the output buffer in a split at the bottom (or focuses the window showing it).
function M.open()
  local buf = M.buf()
  for _, win in ipairs(api.nvim_tabpage_list_wins(0)) do
    if api.nvim_win_get_buf(win) == buf then
      api.nvim_set_current_win(win)
      return win
    end
  end
  vim.cmd(('botright %dsplit'):format(config.options.output.height or 12))
  local win = api.nvim_get_current_win()
  api.nvim_win_set_buf(win, buf)
  vim.wo[win].wrap = false
  vim.wo[win].number = false
  local last = api.nvim_buf_line_count(buf)
  api.nvim_win_set_cursor(win, { last, 0 })
  return win
end

local function strip_ansi(s)
  s = s:gsub('\27%[[%d;?]*[%a@]', '')
  s = s:gsub('\27%][^\7]*\7', '')
  return s
end

-- Appends text at the end of the output buffer, continuing the last line when the
-- previous chunk did not end with a newline. Windows whose cursor was on the last line
-- follow the output.
local function append(text)
  local buf = M.buf()
  local count = api.nvim_buf_line_count(buf)
  local followers = {}
  for _, win in ipairs(api.nvim_list_wins()) do
    if api.nvim_win_get_buf(win) == buf and api.nvim_win_get_cursor(win)[1] == count then
      followers[#followers + 1] = win
    end
  end
  local last = api.nvim_buf_get_lines(buf, count - 1, count, false)[1] or ''
  local lines = vim.split(text, '\n', { plain = true })
  vim.bo[buf].modifiable = true
  api.nvim_buf_set_text(buf, count - 1, #last, count - 1, #last, lines)
  local max = config.options.output.max_lines or 10000
  local total = api.nvim_buf_line_count(buf)
  if max > 0 and total > max then
    api.nvim_buf_set_lines(buf, 0, total - max, false, {})
  end
  vim.bo[buf].modifiable = false
  vim.bo[buf].modified = false
  local new_last = api.nvim_buf_line_count(buf)
  for _, win in ipairs(followers) do
    pcall(api.nvim_win_set_cursor, win, { new_last, 0 })
  end
end

local function header_for(call)
  local label = call.title or call.name or call.id
  if call.name and call.title and call.title ~= call.name then
    label = call.name .. ': ' .. call.title
  end
  return ('── %s ──'):format(label:gsub('\n', ' '))
end

-- Starts a section for the call unless it was the last to write.
local function section(call)
  if state.last_writer == call.id then
    return
  end
  local buf = M.buf()
  local count = api.nvim_buf_line_count(buf)
  local last = api.nvim_buf_get_lines(buf, count - 1, count, false)[1] or ''
  local prefix = ''
  if count > 1 or last ~= '' then
    prefix = last == '' and '' or '\n'
  end
  append(prefix .. header_for(call) .. '\n')
  state.last_writer = call.id
end

--- Appends the text of a call's output to the output buffer.
---@param id string toolCallId
---@param text string
function M.write(id, text)
  if text == nil or text == '' then
    return
  end
  local call = state.calls[id] or { id = id }
  state.calls[id] = call
  section(call)
  append(strip_ansi((text:gsub('\r\n', '\n'))))
end

--- Writes the final result of a tool run (the text the model gets), unless the same
--- text already arrived as live output.
---@param result table ToolResult
function M.write_result(result)
  local id = result.toolCallId or ('result-' .. tostring(vim.uv.hrtime()))
  local call = state.calls[id] or { id = id, name = result.name }
  state.calls[id] = call
  if call.streamed then
    return
  end
  local text = result.output
  if type(text) ~= 'string' or text == '' then
    text = type(result.display) == 'string' and result.display or ''
  end
  if result.error and result.error ~= vim.NIL then
    text = text .. (text ~= '' and '\n' or '') .. 'error: ' .. tostring(result.error.message or '')
  end
  if text == '' then
    return
  end
  section(call)
  if text:sub(-1) ~= '\n' then
    text = text .. '\n'
  end
  append(strip_ansi((text:gsub('\r\n', '\n'))))
end

--- Registers fn to be called with (toolCallId, status) whenever a call's status
--- changes. Returns a function that unregisters it.
---@param fn fun(id: string, status: string)
---@return fun()
function M.on_call_status(fn)
  local key = {}
  state.on_status[key] = fn
  return function()
    state.on_status[key] = nil
  end
end

local function status_changed(call)
  for _, fn in pairs(state.on_status) do
    pcall(fn, call.id, call.status)
  end
end

local function redraw()
  pcall(vim.cmd, 'redrawstatus')
end

--- Handler of the agentls/update notification.
---@param params table { session, update }
---@param client_id integer|nil
function M.handle_update(params, client_id)
  local u = type(params) == 'table' and params.update
  if type(u) ~= 'table' then
    return
  end
  if u.kind == 'tool_call' and u.toolCallId then
    local call = state.calls[u.toolCallId] or { id = u.toolCallId }
    call.name = u.name or call.name
    call.title = u.title or call.title
    local old = call.status
    call.status = u.status or call.status
    call.client_id = client_id
    state.calls[u.toolCallId] = call
    if call.status ~= old then
      status_changed(call)
    end
    redraw()
  elseif u.kind == 'tool_call_update' and u.toolCallId then
    local call = state.calls[u.toolCallId] or { id = u.toolCallId, client_id = client_id }
    state.calls[u.toolCallId] = call
    if type(u.output) == 'string' and u.output ~= '' then
      call.streamed = true
      M.write(u.toolCallId, u.output)
    end
    if type(u.status) == 'string' and u.status ~= call.status then
      call.status = u.status
      status_changed(call)
      redraw()
    end
  end
  api.nvim_exec_autocmds('User', {
    pattern = 'AgentlsUpdate',
    modeline = false,
    data = { client_id = client_id, session = params.session, update = u },
  })
end

--- The calls that are neither finished nor forgotten, in no particular order.
---@return table[]
function M.active_calls()
  local out = {}
  for _, call in pairs(state.calls) do
    if call.status and not terminal[call.status] then
      out[#out + 1] = call
    end
  end
  return out
end

--- Forgets the calls of a client that went away.
---@param client_id integer
function M.forget_client(client_id)
  for id, call in pairs(state.calls) do
    if call.client_id == client_id then
      state.calls[id] = nil
    end
  end
  redraw()
end

return M
