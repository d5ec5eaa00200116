local config = require("codecompanion.config")
local helpers = require("codecompanion.interactions.chat.helpers")
local log = require("codecompanion.utils.log")
local tags = require("codecompanion.interactions.shared.tags")
local utils = require("codecompanion.utils")

local fmt = string.format

local CONSTANTS = {
  NAME = "Buffer",
  PROMPT = "Select buffer(s)",
}

local providers = {
  ---The default provider
  ---@param SlashCommand CodeCompanion.SlashCommand
  ---@return nil
  default = function(SlashCommand)
    local default = require("codecompanion.providers.slash_commands.default")
    default = default
      .new({
        output = function(selection)
          SlashCommand:output(selection)
        end,
        SlashCommand = SlashCommand,
        title = CONSTANTS.PROMPT,
      })
      :buffers()
      :display()
  end,

  ---The Snacks.nvim provider
  ---@param SlashCommand CodeCompanion.SlashCommand
  ---@return nil
  snacks = function(SlashCommand)
    local snacks = require("codecompanion.providers.slash_commands.snacks")
    snacks = snacks.new({
      title = CONSTANTS.PROMPT .. ": ",
      output = function(selection)
        return SlashCommand:output({
          bufnr = selection.buf,
          name = vim.fn.bufname(selection.buf),
          path = selection.file,
        })
      end,
    })

    snacks.provider.picker.pick({
      source = "buffers",
      prompt = snacks.title,
      confirm = snacks:display(),
      main = { file = false, float = true },
    })
  end,

  ---The Telescope provider
  ---@param SlashCommand CodeCompanion.SlashCommand
  ---@return nil
  telescope = function(SlashCommand)
    local telescope = require("codecompanion.providers.slash_commands.telescope")
    telescope = telescope.new({
      title = CONSTANTS.PROMPT,
      output = function(selection)
        return SlashCommand:output({
          bufnr = selection.bufnr,
          name = selection.filename,
          path = selection.path,
        })
      end,
    })

    telescope.provider.buffers({
      prompt_title = telescope.title,
      ignore_current_buffer = true, -- Ignore the codecompanion buffer when selecting buffers
      attach_mappings = telescope:display(),
    })
  end,

  ---The Mini.Pick provider
  ---@param SlashCommand CodeCompanion.SlashCommand
  ---@return nil
  mini_pick = function(SlashCommand)
    local mini_pick = require("codecompanion.providers.slash_commands.mini_pick")
    mini_pick = mini_pick.new({
      title = CONSTANTS.PROMPT,
      output = function(selected)
        return SlashCommand:output(selected)
      end,
    })

    mini_pick.provider.builtin.buffers(
      { include_current = false },
      mini_pick:display(function(selected)
        return {
          bufnr = selected.bufnr,
          name = selected.text,
          path = selected.text,
        }
      end)
    )
  end,

  ---The fzf-lua provider
  ---@param SlashCommand CodeCompanion.SlashCommand
  ---@return nil
  fzf_lua = function(SlashCommand)
    local fzf = require("codecompanion.providers.slash_commands.fzf_lua")
    fzf = fzf.new({
      title = CONSTANTS.PROMPT,
      output = function(selected)
        return SlashCommand:output(selected)
      end,
    })

    fzf.provider.buffers(fzf:display(function(selected, opts)
      local file = fzf.provider.path.entry_to_file(selected, opts)
      return {
        bufnr = file.bufnr,
        name = file.path,
        path = file.bufname,
      }
    end))
  end,
}

---@class CodeCompanion.SlashCommand.Buffer
---@field Chat CodeCompanion.Chat
---@field config table
---@field context table
local SlashCommand = {}

---@param args CodeCompanion.SlashCommandArgs
function SlashCommand.new(args)
  local self = setmetatable({
    Chat = args.Chat,
    config = args.config,
    context = args.context,
  }, { __index = SlashCommand })

  return self
end

---Execute the slash command (backwards compatible, delegates to chat_render)
---@param SlashCommands CodeCompanion.SlashCommands
---@return nil
function SlashCommand:execute(SlashCommands)
  return self:chat_render(SlashCommands)
end

---Render the slash command for the chat interaction
---@param SlashCommands CodeCompanion.SlashCommands
---@return nil
function SlashCommand:chat_render(SlashCommands)
  if not config.can_send_code() and (self.config.opts and self.config.opts.contains_code) then
    return log:warn("Sending of code has been disabled")
  end
  return SlashCommands:set_provider(self, providers)
end

---Render the slash command for the CLI interaction
---@param slash_config table The slash command config from config.lua
---@param callback fun(paths: string[]) Called with a table of relative file paths
---@return nil
function SlashCommand.cli_render(slash_config, callback)
  if not config.can_send_code() and (slash_config.opts and slash_config.opts.contains_code) then
    return log:warn("Sending of code has been disabled")
  end

  local SlashCommands = require("codecompanion.interactions.chat.slash_commands").new()
  SlashCommands:set_provider({
    config = slash_config,
    output = function(_, selected)
      local path = vim.fn.fnamemodify(selected.path, ":.")
      callback({ path })
    end,
  }, providers)
end

---Output from the slash command in the chat buffer
---@param selected table The selected item from the provider { relative_path = string, path = string }
---@param opts? table
---@return nil
function SlashCommand:output(selected, opts)
  if not config.can_send_code() and (self.config.opts and self.config.opts.contains_code) then
    return log:warn("Sending of code has been disabled")
  end
  opts = opts or {}

  local message = "Here is the content from a file (including line numbers)"
  if opts.sync_all then
    message = "Here is the updated content from a file (including line numbers)"
  end

  local ok, content, id, filename =
    pcall(helpers.format_buffer_for_llm, selected.bufnr, selected.path, { message = message })
  if not ok then
    return log:warn(content)
  end

  if opts.description then
    content = opts.description .. "\n\n" .. content
  end

  self.Chat:add_message({
    role = config.constants.USER_ROLE,
    content = content,
  }, {
    _meta = { source = "slash_command", tag = tags.BUFFER },
    context = { id = id, path = selected.path },
    visible = false,
  })

  if opts.sync_all then
    return
  end

  local slash_command_opts = self.config.opts and self.config.opts.default_params or nil
  if slash_command_opts then
    if slash_command_opts == "all" then
      opts.sync_all = true
    elseif slash_command_opts == "diff" then
      opts.sync_diff = true
    end
  end

  self.Chat.context:add({
    bufnr = selected.bufnr,
    id = id,
    path = selected.path,
    opts = opts,
    source = "codecompanion.interactions.shared.slash_commands.buffer",
  })

  if not opts.silent then
    utils.notify(fmt("Added buffer `%s` to the chat", filename))
  end
end

return SlashCommand
