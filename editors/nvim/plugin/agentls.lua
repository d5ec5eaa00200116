-- User commands of agentls. Loading this file starts nothing: call
-- require('agentls').setup() (lazy.nvim does it for `opts`). See :help agentls.
if vim.fn.has('nvim-0.10') ~= 1 then
  return
end
-- Loaded twice (a second copy on 'runtimepath'): the commands already exist.
if vim.api.nvim_get_commands({})['AgentlsTool'] then
  return
end

local api = vim.api

api.nvim_create_user_command('AgentlsTool', function(cmd)
  local agentls = require('agentls')
  local name, args, err = agentls.parse_tool_command(cmd.args)
  if err then
    vim.notify('agentls: ' .. err, vim.log.levels.ERROR)
    return
  end
  agentls.run_tool(name, args)
end, {
  nargs = '+',
  desc = 'agentls: run a tool, e.g. :AgentlsTool read_file {"file_path": "README.md"}',
  complete = function(arglead, line)
    local before = line:match('^%S+%s+(.*)$') or ''
    if before:find('%s') then
      return {}
    end
    return vim.tbl_filter(function(n)
      return vim.startswith(n, arglead)
    end, require('agentls').tool_names())
  end,
})

api.nvim_create_user_command('AgentlsMode', function(cmd)
  require('agentls').set_mode(cmd.args)
end, {
  nargs = 1,
  desc = 'agentls: set the approval mode (default, auto_edit, yolo, plan)',
  complete = function(arglead)
    return vim.tbl_filter(function(m)
      return vim.startswith(m, arglead)
    end, require('agentls.config').modes)
  end,
})

api.nvim_create_user_command('AgentlsCancel', function()
  require('agentls').cancel()
end, { nargs = 0, desc = 'agentls: cancel the running tool calls' })

api.nvim_create_user_command('AgentlsOutput', function()
  require('agentls').open_output()
end, { nargs = 0, desc = 'agentls: show the live output of tool calls' })

api.nvim_create_user_command('AgentlsStart', function()
  if not require('agentls').start(0) then
    vim.notify('agentls: not started for this buffer (not a file buffer, filetype excluded, or no agentls binary)', vim.log.levels.WARN)
  end
end, { nargs = 0, desc = 'agentls: start or attach the server for the current buffer' })
