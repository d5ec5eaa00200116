-- Options of the agentls plugin: defaults, validation, and the merged options of the
-- last setup() call. Module state only; the plugin defines no global variables.
local M = {}

--- The approval modes the server accepts (docs/protocol.md, agentls.setApprovalMode).
M.modes = { 'default', 'auto_edit', 'yolo', 'plan' }

--- What each approval mode lets the agent do without asking (the words VS Code uses).
M.mode_descriptions = {
  default = 'edits, shell commands, web and memory calls ask first',
  auto_edit = 'edits run without asking; shell commands still ask',
  yolo = 'nothing asks (deny rules still apply)',
  plan = 'only read-only tools run',
}

--- Defaults; see |agentls-options| in doc/agentls.txt.
M.defaults = {
  cmd = { 'agentls' },
  cmd_env = nil,
  root_markers = { '.agentls', '.gemini', '.git' },
  filetypes = nil,
  settings = {},
  autostart = true,
  save_after_edit = true,
  capabilities = nil,
  flags = nil,
  on_attach = nil,
  keys = {
    accept = 'ga',
    accept_always = 'gA',
    accept_always_save = 'gS',
    accept_modified = 'gm',
    reject = 'gx',
    reject_always = 'gX',
    accept_hunk = 'gy',
    reject_hunk = 'gn',
    submit_hunks = 'gs',
  },
  output = {
    height = 12,
    max_lines = 10000,
  },
  notify_results = true,
  -- The editor's diagnostics of what the agent changed go to the model; wait_ms bounds
  -- how long a call waits for them to settle (docs/protocol.md).
  diagnostics = {
    enabled = true,
    wait_ms = 2000,
  },
  chat = {
    position = 'right',
    size = nil,
    thoughts = 'fold',
    keys = {
      jump = '<CR>',
      cancel = '<C-c>',
      prompt = 'i',
      close = 'q',
    },
  },
}

--- Where the chat window may open (option chat.position).
M.chat_positions = { 'right', 'left', 'top', 'bottom', 'tab' }

--- How thoughts show in the chat (option chat.thoughts).
M.thought_modes = { 'fold', 'dim', 'hide' }

--- The options in effect (defaults until setup() runs).
M.options = vim.deepcopy(M.defaults)

-- vim.validate changed its calling convention in 0.11; the table form is deprecated there.
local function check(name, value, types, optional)
  if vim.fn.has('nvim-0.11') == 1 then
    vim.validate(name, value, types, optional)
  else
    vim.validate({ [name] = { value, types, optional } })
  end
end

--- vim.validate for one value, in the form every Neovim from 0.10 on accepts: raises an
--- error naming name unless value has one of types (or is nil, with optional).
---@param name string
---@param value any
---@param types string|string[]
---@param optional boolean|nil
function M.check(name, value, types, optional)
  check(name, value, types, optional)
end

local function one_of(name, value, allowed)
  if value ~= nil and not vim.tbl_contains(allowed, value) then
    error(('%s: expected one of %s, got %s'):format(name, table.concat(allowed, ', '), vim.inspect(value)), 0)
  end
end

local function list_of_strings(name, value, optional)
  check(name, value, 'table', optional)
  if value == nil then
    return
  end
  for i, v in ipairs(value) do
    check(('%s[%d]'):format(name, i), v, 'string')
  end
  if #value ~= vim.tbl_count(value) then
    error(('%s: expected a list of strings'):format(name), 0)
  end
end

local function no_unknown(prefix, given, known)
  for k in pairs(given) do
    if known[k] == nil then
      local names = vim.tbl_keys(known)
      table.sort(names)
      error(
        ('agentls: unknown option %s%s (known: %s)'):format(prefix, tostring(k), table.concat(names, ', ')),
        0
      )
    end
  end
end

-- Options whose default is nil still count as known.
local known_top = {
  cmd = true,
  cmd_env = true,
  root_markers = true,
  filetypes = true,
  settings = true,
  autostart = true,
  save_after_edit = true,
  capabilities = true,
  flags = true,
  on_attach = true,
  keys = true,
  output = true,
  notify_results = true,
  diagnostics = true,
  chat = true,
}

--- Validates user options and returns them merged over the defaults. Raises an error
--- that names the offending option.
---@param opts table|nil
---@return table
function M.resolve(opts)
  opts = opts or {}
  check('opts', opts, 'table')
  no_unknown('', opts, known_top)
  local ok, err = pcall(function()
    if type(opts.cmd) == 'table' then
      list_of_strings('cmd', opts.cmd)
      if #opts.cmd == 0 then
        error('cmd: expected at least the program name', 0)
      end
    else
      check('cmd', opts.cmd, { 'table', 'function' }, true)
    end
    check('cmd_env', opts.cmd_env, 'table', true)
    if type(opts.root_markers) == 'table' then
      list_of_strings('root_markers', opts.root_markers)
    else
      check('root_markers', opts.root_markers, 'function', true)
    end
    list_of_strings('filetypes', opts.filetypes, true)
    check('settings', opts.settings, 'table', true)
    check('autostart', opts.autostart, 'boolean', true)
    check('save_after_edit', opts.save_after_edit, 'boolean', true)
    check('capabilities', opts.capabilities, 'table', true)
    check('flags', opts.flags, 'table', true)
    check('on_attach', opts.on_attach, 'function', true)
    check('notify_results', opts.notify_results, 'boolean', true)
    check('keys', opts.keys, 'table', true)
    if opts.keys then
      no_unknown('keys.', opts.keys, M.defaults.keys)
      for k, v in pairs(opts.keys) do
        if v ~= false then
          check('keys.' .. k, v, 'string')
        end
      end
    end
    check('output', opts.output, 'table', true)
    if opts.output then
      no_unknown('output.', opts.output, M.defaults.output)
      check('output.height', opts.output.height, 'number', true)
      check('output.max_lines', opts.output.max_lines, 'number', true)
    end
    check('diagnostics', opts.diagnostics, 'table', true)
    if opts.diagnostics then
      no_unknown('diagnostics.', opts.diagnostics, M.defaults.diagnostics)
      check('diagnostics.enabled', opts.diagnostics.enabled, 'boolean', true)
      check('diagnostics.wait_ms', opts.diagnostics.wait_ms, 'number', true)
      if opts.diagnostics.wait_ms ~= nil and opts.diagnostics.wait_ms < 0 then
        error('diagnostics.wait_ms: expected a number of milliseconds, 0 or more', 0)
      end
    end
    check('chat', opts.chat, 'table', true)
    if opts.chat then
      local chat = opts.chat
      no_unknown('chat.', chat, { position = true, size = true, thoughts = true, keys = true })
      check('chat.position', chat.position, 'string', true)
      one_of('chat.position', chat.position, M.chat_positions)
      check('chat.size', chat.size, 'number', true)
      if chat.size ~= nil and chat.size <= 0 then
        error('chat.size: expected a positive number', 0)
      end
      check('chat.thoughts', chat.thoughts, 'string', true)
      one_of('chat.thoughts', chat.thoughts, M.thought_modes)
      check('chat.keys', chat.keys, 'table', true)
      if chat.keys then
        no_unknown('chat.keys.', chat.keys, M.defaults.chat.keys)
        for k, v in pairs(chat.keys) do
          if v ~= false then
            check('chat.keys.' .. k, v, 'string')
          end
        end
      end
    end
  end)
  if not ok then
    error('agentls: invalid option: ' .. tostring(err), 0)
  end
  local merged = vim.tbl_deep_extend('force', vim.deepcopy(M.defaults), opts)
  -- Lists replace the defaults instead of being merged index by index.
  for _, k in ipairs({ 'cmd', 'root_markers', 'filetypes', 'settings' }) do
    if opts[k] ~= nil then
      merged[k] = opts[k]
    end
  end
  return merged
end

--- Validates opts and makes them the options in effect.
---@param opts table|nil
---@return table
function M.set(opts)
  M.options = M.resolve(opts)
  return M.options
end

return M
