local adapter_utils = require("codecompanion.adapters.utils")
local get_models = require("codecompanion.adapters.http.copilot.get_models")
local log = require("codecompanion.utils.log")
local stats = require("codecompanion.adapters.http.copilot.stats")
local tags = require("codecompanion.interactions.shared.tags")
local token = require("codecompanion.adapters.http.copilot.token")
local tokens = require("codecompanion.utils.tokens")

local _fetching_models = false
local version = vim.version()

---Resolves the options that a model has
---@param adapter CodeCompanion.HTTPAdapter
---@return table
local function resolve_model_opts(adapter)
  local model = adapter.schema.model.default
  local choices = adapter.schema.model.choices
  if type(model) == "function" then
    model = model(adapter)
  end
  if type(choices) == "function" then
    -- Avoid blocking during initialization
    choices = choices(adapter, { async = true })
  end

  if adapter.model and choices and choices[model] then
    adapter.model.info = choices[model]
  end

  return choices and choices[model] or { opts = {} }
end

---Return the handlers of a specific adapter, ensuring the correct endpoint is set
---@param adapter CodeCompanion.HTTPAdapter
---@return table
local function handlers(adapter)
  local model_opts = resolve_model_opts(adapter)
  if model_opts.endpoint == "responses" then
    adapter.url = "https://api.githubcopilot.com/responses"

    local responses = require("codecompanion.adapters.http.openai_responses")

    -- Backwards compatibility for handlers
    responses.handlers.setup = function(self)
      return responses.handlers.lifecycle.setup(self)
    end
    responses.handlers.on_exit = function(self, data)
      return responses.handlers.lifecycle.on_exit(self, data)
    end
    responses.handlers.form_parameters = function(self, params, messages)
      return responses.handlers.request.build_parameters(self, params, messages)
    end
    responses.handlers.form_messages = function(self, messages)
      return responses.handlers.request.build_messages(self, messages)
    end
    responses.handlers.form_tools = function(self, tools)
      return responses.handlers.request.build_tools(self, tools)
    end
    responses.handlers.chat_output = function(self, data, tools)
      return responses.handlers.response.parse_chat(self, data, tools)
    end
    responses.handlers.inline_output = function(self, data, context)
      return responses.handlers.response.parse_inline(self, data, context)
    end
    responses.handlers.tokens = function(self, data)
      return responses.handlers.response.parse_tokens(self, data)
    end
    responses.handlers.tools.format_tool_calls = function(self, tools)
      return responses.handlers.tools.format_calls(self, tools)
    end
    responses.handlers.tools.output_response = function(self, tool_call, output)
      return responses.handlers.tools.format_response(self, tool_call, output)
    end
    responses.handlers.form_structured_output = function(self, schema)
      return responses.handlers.request.build_structured_output(self, schema)
    end

    return responses.handlers
  end

  adapter.url = "https://api.githubcopilot.com/chat/completions"
  return require("codecompanion.adapters.http.openai").handlers
end

---@class CodeCompanion.HTTPAdapter.Copilot: CodeCompanion.HTTPAdapter
return {
  name = "copilot",
  formatted_name = "Copilot",
  roles = {
    llm = "assistant",
    tool = "tool",
    user = "user",
  },
  opts = {
    documents = true,
    stream = true,
    tools = true,
    vision = true,
  },
  features = {
    text = true,
    tokens = true,
  },
  url = "https://api.githubcopilot.com/chat/completions",
  env = {
    ---@return string
    api_key = function()
      return token.fetch({ force = true }).copilot_token
    end,
  },
  headers = {
    Authorization = "Bearer ${api_key}",
    ["Content-Type"] = "application/json",
    ["Copilot-Integration-Id"] = "vscode-chat",
    ["Editor-Version"] = "Neovim/" .. version.major .. "." .. version.minor .. "." .. version.patch,
  },
  show_copilot_stats = function()
    return stats.show()
  end,
  handlers = {
    ---Initiate fetching the models in the background as soon as the adapter is resolved
    ---@param self CodeCompanion.HTTPAdapter
    ---@return nil
    resolve = function(self)
      if _fetching_models then
        return
      end
      _fetching_models = true

      -- Defer token initialization - only fetch models in background without requiring tokens
      vim.schedule(function()
        pcall(function()
          -- Only fetch models if we already have a token cached, otherwise skip
          local cached_token = token.fetch()
          if cached_token and cached_token.copilot_token then
            get_models.choices(self, { token = cached_token, async = true })
          end
        end)
        _fetching_models = false
      end)
    end,

    ---Check for a token before starting the request
    ---@param self CodeCompanion.HTTPAdapter
    ---@return boolean
    setup = function(self)
      -- Ensure models are fetched synchronously before checking capabilities
      -- This prevents features from being disabled due to missing model info
      local fetched_token = token.fetch({ force = true })
      if fetched_token and fetched_token.copilot_token then
        -- Force synchronous model fetch to ensure we have model capabilities
        get_models.choices(self, { token = fetched_token, async = false })
      end

      local model_opts = resolve_model_opts(self)

      if (self.opts and self.opts.stream) and (model_opts and model_opts.opts and model_opts.opts.can_stream) then
        self.parameters.stream = true
      else
        self.parameters.stream = nil
      end
      if (self.opts and self.opts.tools) and (model_opts and model_opts.opts and not model_opts.opts.can_use_tools) then
        self.opts.tools = false
      end
      if (self.opts and self.opts.vision) and (model_opts and model_opts.opts and not model_opts.opts.has_vision) then
        self.opts.vision = false
      end

      -- NOTE: Does NOT seem possible to be able to send documents through the
      -- /chat/completions endpoint. Copilot has a translation layer that
      -- returns a 400 error asking for `image_url` or `text` block
      if self.opts and self.opts.documents then
        local vendor = model_opts and model_opts.vendor
        if not (vendor and vendor:find("OpenAI", 1, true)) then
          self.opts.documents = false
        end
      end

      self.opts.can_form_structured_outputs = (
        model_opts
        and model_opts.opts
        and model_opts.opts.can_form_structured_outputs
      ) or false

      return token.init(self)
    end,

    --- Use the OpenAI adapter for the bulk of the work
    form_parameters = function(self, params, messages)
      local result = handlers(self).form_parameters(self, params, messages)

      -- GitHub picks the model on our behalf, so it must be omitted from the request
      if result and self.model and self.model.name == "auto" then
        result.model = nil
      end

      return result
    end,
    form_messages = function(self, messages)
      for _, m in ipairs(messages) do
        if m._meta and m._meta.tag == tags.IMAGE and (m.context and m.context.mimetype) then
          self.headers["X-Initiator"] = "user"
          self.headers["Copilot-Vision-Request"] = "true"
          break
        end
      end

      local last_msg = messages[#messages]
      if last_msg and last_msg.role == self.roles.tool then
        -- NOTE: The inclusion of this header reduces premium token usage when
        -- sending tool output back to the LLM (#1717)
        self.headers["X-Initiator"] = "agent"
      end

      -- Capture estimated token counts before OpenAI strips _meta
      local est_tokens = {}
      for _, m in ipairs(messages) do
        if m._meta and m._meta.estimated_tokens and type(m.content) == "string" then
          est_tokens[m.content] = m._meta.estimated_tokens
        end
      end

      local result = handlers(self).form_messages(self, messages)

      -- For gemini-3, merge consecutive LLM messages and ensure that reasoning
      -- data is transformed. This enables consecutive tool calls to be made
      if result.messages then
        local merged = {}
        local i = 1
        while i <= #result.messages do
          local current = result.messages[i]

          -- gemini-3 requires reasoning_text and reasoning_opaque fields
          if current.reasoning then
            if current.reasoning.content then
              current.reasoning_text = current.reasoning.content
            end
            if current.reasoning.opaque then
              current.reasoning_opaque = current.reasoning.opaque
            end
            current.reasoning = nil
          end

          -- From investigating Copilot Chat's output, tool_calls are merged
          -- into a single message per role with reasoning data
          if
            i < #result.messages
            and result.messages[i + 1].role == current.role
            and result.messages[i + 1].tool_calls
            and not result.messages[i + 1].content
          then
            current.tool_calls = result.messages[i + 1].tool_calls
            i = i + 1 -- Skip the next message since we merged it
          end

          table.insert(merged, current)
          i = i + 1
        end
        result.messages = merged
      end

      -- Add copilot_cache_control to the top 4 messages by estimated token count.
      -- Uses pre-computed _meta.estimated_tokens from the chat interaction,
      -- falling back to on-the-fly calculation for messages without estimates
      if result.messages and #result.messages > 0 then
        local scored = {}
        for i, m in ipairs(result.messages) do
          local est = type(m.content) == "string" and est_tokens[m.content] or nil
          if not est and type(m.content) == "string" then
            est = tokens.calculate(m.content)
          end
          table.insert(scored, { index = i, tokens = est or 0 })
        end

        table.sort(scored, function(a, b)
          return a.tokens > b.tokens
        end)

        -- Copilot limits us to 4 cache points at most
        for j = 1, math.min(4, #scored) do
          result.messages[scored[j].index].copilot_cache_control = { type = "ephemeral" }
        end
      end

      return result
    end,
    form_tools = function(self, tools)
      return handlers(self).form_tools(self, tools)
    end,

    ---Form the structured output schema for the request body
    ---@param self CodeCompanion.HTTPAdapter
    ---@param schema CodeCompanion.StructuredOutput.Schema
    ---@return table|nil
    form_structured_output = function(self, schema)
      if not schema or not self.opts.can_form_structured_outputs then
        return nil
      end
      return handlers(self).form_structured_output(self, schema)
    end,

    form_reasoning = function(self, data)
      local content = vim
        .iter(data)
        :map(function(item)
          return item.content
        end)
        :filter(function(content)
          return content ~= nil
        end)
        :join("")

      local opaque
      for _, item in ipairs(data) do
        if item.opaque then
          opaque = item.opaque
          break
        end
      end

      return {
        content = content,
        opaque = opaque,
      }
    end,
    ---Copilot with Gemini 3 provides reasoning data that must be sent back in responses
    ---@param self CodeCompanion.HTTPAdapter
    ---@param data table
    ---@return table
    parse_message_meta = function(self, data)
      local extra = data.extra
      if not extra then
        return data
      end

      if extra.reasoning_text then
        data.output.reasoning = data.output.reasoning or {}
        data.output.reasoning.content = extra.reasoning_text
      end
      if extra.reasoning_opaque then
        data.output.reasoning = data.output.reasoning or {}
        data.output.reasoning.opaque = extra.reasoning_opaque
      end

      if data.output.content == "" then
        data.output.content = nil
      end

      return data
    end,
    tokens = function(self, data)
      if data and data ~= "" then
        local data_mod = adapter_utils.clean_streamed_data(data)
        local ok, json = pcall(vim.json.decode, data_mod, { luanil = { object = true } })

        if ok then
          -- Models that use the responses endpoint have the tokens in copilot_usage
          if json.copilot_usage and json.copilot_usage.token_details then
            local total = 0
            for _, detail in ipairs(json.copilot_usage.token_details) do
              total = total + (detail.token_count or 0)
            end
            log:trace("Tokens: %s", total)
            return total
          end

          if json.usage then
            local total_tokens = json.usage.total_tokens or 0
            local completion_tokens = json.usage.completion_tokens or 0
            local prompt_tokens = json.usage.prompt_tokens or 0
            local total = total_tokens > 0 and total_tokens or completion_tokens + prompt_tokens
            log:trace("Tokens: %s", total)
            return total
          end
        end
      end
    end,
    chat_output = function(self, data, tools)
      if type(data) == "string" then
        if data and data:match("quota") and data:match("exceeded") then
          return {
            status = "error",
            output = "Your Copilot quota has been exceeded for this conversation",
          }
        end
      end

      return handlers(self).chat_output(self, data, tools, { adapter = "copilot" })
    end,
    tools = {
      format_tool_calls = function(self, tools)
        return handlers(self).tools.format_tool_calls(self, tools)
      end,
      output_response = function(self, tool_call, output)
        return handlers(self).tools.output_response(self, tool_call, output)
      end,
    },
    inline_output = function(self, data, context)
      return handlers(self).inline_output(self, data, context)
    end,
    on_exit = function(self, data)
      return handlers(self).on_exit(self, data)
    end,
  },
  schema = {
    ---@type CodeCompanion.Schema
    model = {
      order = 1,
      mapping = "parameters",
      type = "enum",
      desc = "ID of the model to use. See the model endpoint compatibility table for details on which models work with the Chat API.",
      ---@type string|fun(): string
      default = "auto",
      ---@type fun(self: CodeCompanion.HTTPAdapter, opts?: table): table
      choices = function(self, opts)
        opts = opts or {}
        -- Force token initialization for synchronous requests (user-initiated model selection)
        -- Don't force for async requests (background operations)
        local force = opts.async == false
        local fetched = token.fetch({ force = force })
        if not fetched or not fetched.copilot_token then
          return { ["gpt-5.4-mini"] = { opts = {} } }
        end
        return get_models.choices(self, { token = fetched, async = opts.async })
      end,
    },
  },
}
