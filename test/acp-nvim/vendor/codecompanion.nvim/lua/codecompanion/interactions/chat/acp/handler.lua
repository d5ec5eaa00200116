local Queue = require("codecompanion.utils.queue")

local config = require("codecompanion.config")
local formatter = require("codecompanion.interactions.chat.acp.formatters")
local log = require("codecompanion.utils.log")
local utils = require("codecompanion.utils")
local watch = require("codecompanion.interactions.shared.watch")

---@class CodeCompanion.Chat.ACPHandler
---@field chat CodeCompanion.Chat
---@field output table Standard output message from the Agent
---@field reasoning table Reasoning output from the Agent
---@field tools table<string, table> Cache of tool calls by their ID
---@field ui_state table<string, table> Cache of tool call UI states (line_number, icon_id) by tool call ID
---@field _permission { queue: CodeCompanion.Queue, active: boolean, respond: function|nil } Internal state for managing permission requests
local ACPHandler = {}

---@param chat CodeCompanion.Chat
---@return CodeCompanion.Chat.ACPHandler
function ACPHandler.new(chat)
  local self = setmetatable({
    chat = chat,
    output = {},
    reasoning = {},
    tools = {},
    ui_state = {},
    _permission = {
      active = false,
      queue = Queue.new(),
      respond = nil,
    },
  }, { __index = ACPHandler })

  return self --[[@type CodeCompanion.Chat.ACPHandler]]
end

---Merge an incoming tool call/update into the cache
---@param existing table|nil
---@param incoming table|nil
---@return table
local function merge_tool_call(existing, incoming)
  local out = vim.deepcopy(existing or {})
  for k, v in pairs(incoming or {}) do
    if v ~= vim.NIL then
      out[k] = v
    end
  end
  return out
end

---If a file has been edited, fire an event
---@param tool_call table The merged tool call
---@param adapter_name string
---@return nil
local function file_edited(tool_call, adapter_name)
  local fired = {}

  -- Fire an event but only once per file
  local function fire(path, line)
    if type(path) ~= "string" or path == "" or fired[path] then
      return
    end
    fired[path] = true
    utils.fire("FileEdited", { path = path, tool = adapter_name, line = line })
  end

  for _, location in ipairs(tool_call.locations or {}) do
    fire(location.path, location.line)
  end
  for _, content in ipairs(tool_call.content or {}) do
    if content.type == "diff" then
      fire(content.path)
    end
  end
end

---Submit payload to ACP and handle streaming response
---@param payload table The payload to send to the LLM
---@return table|nil Request object or nil on error
function ACPHandler:submit(payload)
  if not self:ensure_connection() then
    self.chat.status = "error"
    return self.chat:done(self.output)
  end

  if not self:ensure_session() then
    self.chat.status = "error"
    return self.chat:done(self.output)
  end

  return self:create_and_send_prompt(payload)
end

---Ensure the ACP connection is authenticated
---@return boolean
function ACPHandler:ensure_connection()
  -- If the async init already created the connection, check if it's ready
  if self.chat.acp_connection and self.chat.acp_connection:is_ready() then
    return true
  end

  if not self.chat.acp_connection then
    local adapter = self.chat.adapter --[[@as CodeCompanion.ACPAdapter]]
    self.chat.acp_connection = require("codecompanion.acp").new({
      adapter = adapter,
      chat = self.chat,
    })
  end

  local connected = self.chat.acp_connection:connect_and_authenticate()

  if not connected then
    return false
  end

  self.chat:update_metadata()
  watch.enable()
  utils.fire("ACPConnected", { bufnr = self.chat.bufnr })

  return true
end

---Ensure a session exists on the connection or create one if required
---@return boolean success
function ACPHandler:ensure_session()
  local conn = self.chat.acp_connection
  if not conn then
    return false
  end

  if conn.session_id then
    return true
  end

  if not conn:ensure_session() then
    return false
  end

  -- Map bufnr -> session_id so completion providers can look up ACP commands for this buffer
  local acp_commands = require("codecompanion.interactions.chat.acp.commands")
  acp_commands.link_buffer_to_session(self.chat.bufnr, conn.session_id)

  self.chat:update_metadata()

  require("codecompanion.interactions.chat.acp.defaults").apply(self.chat.adapter, conn)

  return true
end

---Transform ACP commands in messages from \command to /command
---@param messages table The messages to transform
---@return table The transformed messages
function ACPHandler:transform_acp_commands(messages)
  if not self.chat.acp_connection or not self.chat.acp_connection.session_id then
    return messages
  end

  -- Get available ACP commands for this session
  local acp_commands = require("codecompanion.interactions.chat.acp.commands")
  local commands = acp_commands.get_commands_for_session(self.chat.acp_connection.session_id)

  if #commands == 0 then
    return messages
  end

  -- Get trigger character
  local trigger = "\\"
  if config.interactions.chat.slash_commands.opts and config.interactions.chat.slash_commands.opts.acp then
    trigger = config.interactions.chat.slash_commands.opts.acp.trigger or "\\"
  end
  local escaped_trigger = vim.pesc(trigger)

  -- Transform messages by replacing each known command
  local transformed = vim.deepcopy(messages)
  for _, message in ipairs(transformed) do
    if message.content and type(message.content) == "string" then
      -- Replace \command with /command for each known ACP command
      for _, cmd in ipairs(commands) do
        local escaped_name = vim.pesc(cmd.name)

        -- Pattern with trailing space
        local pattern_space = escaped_trigger .. escaped_name .. "(%s)"
        message.content = message.content:gsub(pattern_space, "/" .. cmd.name .. "%1")

        -- Pattern at end of string or followed by non-word character
        local pattern_end = escaped_trigger .. escaped_name .. "([^%w])"
        message.content = message.content:gsub(pattern_end, "/" .. cmd.name .. "%1")

        -- Pattern at end of string
        local pattern_eol = escaped_trigger .. escaped_name .. "$"
        message.content = message.content:gsub(pattern_eol, "/" .. cmd.name)
      end
    end
  end

  return transformed
end

---Create and configure the prompt request with all handlers
---@param payload table
---@return table Request object
function ACPHandler:create_and_send_prompt(payload)
  -- Transform ACP commands before sending
  local transformed_payload = vim.deepcopy(payload)
  transformed_payload.messages = self:transform_acp_commands(payload.messages)

  return self.chat.acp_connection
    :session_prompt(transformed_payload.messages)
    :on_message_chunk(function(content)
      self:handle_message_chunk(content)
    end)
    :on_thought_chunk(function(content)
      self:handle_thought_chunk(content)
    end)
    :on_tool_call(function(tool_call)
      self:process_tool_call(tool_call)
    end)
    :on_tool_update(function(tool_call)
      self:process_tool_call(tool_call)
    end)
    :on_permission_request(function(request)
      self:handle_permission_request(request)
    end)
    :on_complete(function()
      self:handle_complete()
    end)
    :on_error(function(error)
      self:handle_error(error)
    end)
    :on_cancel(function()
      self:_clear_permission_queue()
    end)
    :with_options({ bufnr = self.chat.bufnr, interaction = "chat" })
    :send()
end

---Handle incoming message chunks
---@param content string
---@return nil
function ACPHandler:handle_message_chunk(content)
  table.insert(self.output, content)
  self.chat:add_buf_message(
    { role = config.constants.LLM_ROLE, content = content },
    { type = self.chat.MESSAGE_TYPES.LLM_MESSAGE }
  )
end

---Handle incoming thought chunks
---@param content string
---@return nil
function ACPHandler:handle_thought_chunk(content)
  table.insert(self.reasoning, content)
  if config.display.chat.show_reasoning then
    self.chat:add_buf_message(
      { role = config.constants.LLM_ROLE, content = content },
      { type = self.chat.MESSAGE_TYPES.REASONING_MESSAGE }
    )
  end
end

---Output tool call to the chat
---@param tool_call table
---@return nil
function ACPHandler:process_tool_call(tool_call)
  local id = tool_call.toolCallId

  local merged = merge_tool_call(self.tools[id], tool_call)
  tool_call = merged

  -- Cache or cleanup
  if tool_call.status == "completed" then
    self.tools[id] = nil
  else
    self.tools[id] = merged
  end

  if tool_call.status == "completed" and tool_call.kind == "edit" then
    file_edited(tool_call, self.chat.adapter.name)
  end

  -- Pending tool calls are awaiting approval or streaming input, so hold them
  -- back from the buffer until the agent moves them out of the pending state
  if tool_call.status == "pending" then
    return
  end

  local ok, content = pcall(formatter.tool_message, tool_call, self.chat.adapter)
  if not ok then
    content = "[Error formatting tool output]"
  end

  -- If the tool call has already written output to the chat buffer, update the
  -- existing line rather than adding a new one
  local cached = self.ui_state[id]
  if cached then
    local update_ok, _, new_icon_id = pcall(
      self.chat.update_buf_line,
      self.chat,
      cached.line_number,
      content,
      { status = tool_call.status, icon_id = cached.icon_id, priority = 120, virt_text_pos = "inline" }
    )

    if update_ok then
      if tool_call.status == "completed" then
        self.ui_state[id] = nil
      elseif new_icon_id then
        cached.icon_id = new_icon_id
      end
      return
    end

    if tool_call.status == "completed" then
      self.ui_state[id] = nil
    end
    log:debug("[ACP::Handler] Failed to update tool call line for toolCallId %s", id)
  end

  local line_number, icon_id = self.chat:add_buf_message({
    role = config.constants.LLM_ROLE,
    content = content,
  }, {
    status = tool_call.status or "in_progress",
    virt_text_pos = "inline",
    tools = { call_id = id },
    kind = tool_call.kind,
    type = self.chat.MESSAGE_TYPES.TOOL_MESSAGE,
  })

  self.ui_state[id] = { line_number = line_number, icon_id = icon_id }
end

---Queue a permission request and process when ready
---@param request table
---@return nil
function ACPHandler:handle_permission_request(request)
  self._permission.queue:push(request)
  self:_process_next_permission()
end

---Pop the next permission request from the queue and present it
---@return nil
function ACPHandler:_process_next_permission()
  if self._permission.active or self._permission.queue:is_empty() then
    return
  end

  self._permission.active = true
  local request = self._permission.queue:pop()

  -- Merge cached tool call data so the diff UI can activate
  local tool_call = request.tool_call
  if
    type(tool_call) == "table"
    and tool_call.toolCallId
    and (tool_call.content == nil or tool_call.content == vim.NIL)
  then
    local cached = self.tools[tool_call.toolCallId]
    if cached then
      request.tool_call = merge_tool_call(cached, tool_call)
    end
  end

  -- The original respond function is stored so that if the user cancels the request, we can respond as per the spec
  self._permission.respond = request.respond

  -- Ensure that the next item in the queue is processed after the user's response
  local send_response = request.respond
  request.respond = function(option_id, cancelled)
    if not self._permission.respond then
      return
    end
    send_response(option_id, cancelled)
    self._permission.active = false
    self._permission.respond = nil
    self:_process_next_permission()
  end

  return require("codecompanion.interactions.chat.acp.request_permission").confirm(self.chat, request)
end

---Clear any requests in the queue
---@return nil
function ACPHandler:_clear_permission_queue()
  local had_pending = self._permission.respond ~= nil or not self._permission.queue:is_empty()

  -- Cancel the currently active permission request (if any)
  if self._permission.respond then
    pcall(self._permission.respond, nil, true)
    self._permission.respond = nil
  end

  -- Cancel all queued permission requests
  while not self._permission.queue:is_empty() do
    local request = self._permission.queue:pop()
    pcall(request.respond, nil, true)
  end
  self._permission.active = false

  if had_pending then
    utils.fire("ToolApprovalFinished", { bufnr = self.chat.bufnr, choice = "cancelled" })
  end
end

---Handle the prompt response when it's complete
---@return nil
function ACPHandler:handle_complete()
  self:_clear_permission_queue()

  if not self.chat.status or self.chat.status == "" then
    self.chat.status = "success"
  end

  self.chat:done(self.output, self.reasoning, {})
end

---Handle errors
---@param error string
---@return nil
function ACPHandler:handle_error(error)
  self:_clear_permission_queue()

  self.chat.status = "error"
  log:error("[ACP::Handler] %s", error)

  self.chat:add_buf_message(
    { role = config.constants.LLM_ROLE, content = string.format("````txt\n%s\n````", error) },
    { type = self.chat.MESSAGE_TYPES.LLM_MESSAGE }
  )

  self.chat:done(self.output)
end

return ACPHandler
