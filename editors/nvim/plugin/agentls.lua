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
  if vim.trim(cmd.args) == '' then
    require('agentls').select_mode()
  else
    require('agentls').set_mode(vim.trim(cmd.args))
  end
end, {
  nargs = '?',
  desc = 'agentls: set the approval mode (default, auto_edit, yolo, plan; none: choose)',
  complete = function(arglead)
    return vim.tbl_filter(function(m)
      return vim.startswith(m, arglead)
    end, require('agentls.config').modes)
  end,
})

api.nvim_create_user_command('AgentlsCancel', function()
  require('agentls').cancel()
end, { nargs = 0, desc = 'agentls: cancel the running prompt (in a chat) or prompts and tool calls' })

api.nvim_create_user_command('Agentls', function(cmd)
  local opts = { bufnr = api.nvim_get_current_buf() }
  if cmd.range > 0 then
    local range = { start_line = cmd.line1, end_line = cmd.line2 }
    -- A characterwise selection that is exactly the range narrows it to its columns.
    local s, e = vim.fn.getpos("'<"), vim.fn.getpos("'>")
    if vim.fn.visualmode() == 'v' and s[2] == cmd.line1 and e[2] == cmd.line2 then
      local last = vim.fn.getline(cmd.line2)
      range.start_col = s[3] - 1
      -- '> is on the last byte of the last character.
      local char = vim.fn.strpart(last, e[3] - 1, 1, true)
      range.end_col = math.min(e[3] - 1 + #char, #last)
    end
    opts.range = range
  end
  local chat = require('agentls.chat')
  if vim.trim(cmd.args) == '' then
    chat.ask(opts)
  else
    chat.submit(cmd.args, opts)
  end
end, {
  nargs = '*',
  range = true,
  desc = 'agentls: ask the agent (with a range: about those lines); /server:prompt runs an MCP prompt',
  complete = function(arglead, line)
    return require('agentls.prompts').complete(arglead, line)
  end,
})

local function turn_args(cmd)
  local session, turn
  for _, a in ipairs(cmd.fargs) do
    if a:match('^%d+$') then
      turn = tonumber(a)
    else
      session = a
    end
  end
  return session, turn
end

api.nvim_create_user_command('AgentlsUndoTurn', function(cmd)
  local session, turn = turn_args(cmd)
  require('agentls').undo_turn({ session = session, turn = turn, force = cmd.bang or nil })
end, {
  nargs = '*',
  bang = true,
  desc = "agentls: undo what the chat's last prompt changed ([session] [turn]; ! even where files changed since)",
})

api.nvim_create_user_command('AgentlsRedoTurn', function(cmd)
  local session, turn = turn_args(cmd)
  require('agentls').redo_turn({ session = session, turn = turn, force = cmd.bang or nil })
end, {
  nargs = '*',
  bang = true,
  desc = 'agentls: bring back what :AgentlsUndoTurn took back ([session] [turn]; ! even where files changed since)',
})

api.nvim_create_user_command('AgentlsDiff', function(cmd)
  local session, turn = turn_args(cmd)
  require('agentls').turn_diff({ session = session, turn = turn })
end, { nargs = '*', desc = "agentls: show what the chat's last prompt changed, as a diff ([session] [turn])" })

api.nvim_create_user_command('AgentlsSessions', function()
  require('agentls').sessions()
end, { nargs = 0, desc = 'agentls: resume a stored session in the chat' })

api.nvim_create_user_command('AgentlsTrust', function(cmd)
  local scope = vim.trim(cmd.args)
  if cmd.bang then
    if scope ~= '' and scope ~= 'revoke' then
      vim.notify('agentls: :AgentlsTrust! takes no scope (it revokes)', vim.log.levels.ERROR)
      return
    end
    scope = 'revoke'
  end
  require('agentls').trust(scope ~= '' and scope or nil)
end, {
  nargs = '?',
  bang = true,
  desc = 'agentls: trust this folder (folder), its parent (parent), or revoke (! or revoke)',
  complete = function(arglead)
    return vim.tbl_filter(function(m)
      return vim.startswith(m, arglead)
    end, require('agentls').trust_scopes)
  end,
})

api.nvim_create_user_command('AgentlsMcpAuth', function(cmd)
  require('agentls').mcp_auth(vim.trim(cmd.args))
end, { nargs = 1, desc = 'agentls: authorize an MCP server of the settings by OAuth (in the browser)' })

api.nvim_create_user_command('AgentlsOutput', function()
  require('agentls').open_output()
end, { nargs = 0, desc = 'agentls: show the live output of tool calls' })

api.nvim_create_user_command('AgentlsStart', function()
  if not require('agentls').start(0) then
    vim.notify('agentls: not started for this buffer (not a file buffer, filetype excluded, or no agentls binary)', vim.log.levels.WARN)
  end
end, { nargs = 0, desc = 'agentls: start or attach the server for the current buffer' })
