-- The chat of agentls: prompts go to the agent (agentls/prompt) and its answer streams
-- into a scratch buffer (filetype markdown): message text appended as it arrives,
-- thoughts folded or dimmed, one line per tool call with its status and locations
-- (updated in place), plans as checklists, a note when the context was compressed, and
-- the stop reason and usage when the turn ends. One chat per session; a chat remembers
-- its session, so later prompts continue it. `/server:prompt key=value` runs an MCP
-- prompt (agentls.runPrompt) through the same path; prompts.lua resolves the command.
--
-- The buffer is a list of blocks, each owning a run of whole lines. The plugin is the
-- only writer (the buffer is not modifiable), so a block's rows follow from the lengths
-- of the blocks before it; updating a block replaces its lines, and streaming text is
-- appended to the last block, which is always at the end of the buffer.
local config = require('agentls.config')
local rpc = require('agentls.rpc')
local prompts = require('agentls.prompts')
local status = require('agentls.status')

local api = vim.api
local M = {}

local ns = api.nvim_create_namespace('agentls.chat')

--- How long a cancelled prompt may take to end before its request is cancelled too.
M.cancel_grace_ms = 3000

-- Module state: the chats by buffer, the chat last used, and a counter for buffer names.
local state = {
  chats = {},
  current = nil,
  seq = 0,
  spinner = nil, -- the timer of the busy indicator, while a prompt runs
  frame = 1,
}

local spinner_frames = { '⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏' }
local spin_ns = api.nvim_create_namespace('agentls.chat.spinner')
local show_spinner -- defined with the busy indicator, used by write()

-- The session of runs started from the editor (agentls.runTool); never a chat's.
local EDITOR_SESSION = 'editor'

local status_labels = {
  pending = 'pending',
  awaiting_approval = 'awaiting approval',
  in_progress = 'running',
  completed = 'done',
  failed = 'failed',
  cancelled = 'cancelled',
  rejected = 'rejected',
}

local status_hl = {
  pending = 'AgentlsChatPending',
  awaiting_approval = 'AgentlsChatAwaiting',
  in_progress = 'AgentlsChatRunning',
  completed = 'AgentlsChatDone',
  failed = 'AgentlsChatFailed',
  cancelled = 'AgentlsChatCancelled',
  rejected = 'AgentlsChatFailed',
}

-- The status a tool call shows: "rejected" for a call the user refused (the server
-- reports it as cancelled, with "The user declined …").
local function shown_status(call)
  if call.status == 'cancelled' then
    if require('agentls.confirm').was_rejected(call.id) or (call.error and call.error:find('declined', 1, true)) then
      return 'rejected'
    end
  end
  return call.status
end

local function define_highlights()
  for name, link in pairs({
    AgentlsChatThought = 'Comment',
    AgentlsChatNote = 'Comment',
    AgentlsChatPending = 'Comment',
    AgentlsChatAwaiting = 'DiagnosticWarn',
    AgentlsChatRunning = 'DiagnosticInfo',
    AgentlsChatDone = 'DiagnosticOk',
    AgentlsChatFailed = 'DiagnosticError',
    AgentlsChatCancelled = 'Comment',
  }) do
    api.nvim_set_hl(0, name, { link = link, default = true })
  end
end

local function notify(msg, level)
  vim.notify('agentls: ' .. msg, level or vim.log.levels.INFO)
end

local function one_line(s)
  s = tostring(s or ''):gsub('\r?\n', ' ')
  return s
end

local function display_uri(uri)
  local ok, fname = pcall(vim.uri_to_fname, uri)
  if not ok then
    return tostring(uri)
  end
  return vim.fn.fnamemodify(fname, ':~:.')
end

local function location_label(loc)
  local label = display_uri(loc.uri)
  local start = type(loc.range) == 'table' and loc.range.start
  if type(start) == 'table' and type(start.line) == 'number' then
    label = label .. ':' .. (start.line + 1)
  end
  return label
end

-- Blocks ---------------------------------------------------------------------------

local function lines_of(block)
  if block.sep then
    local out = { '' }
    vim.list_extend(out, block.body)
    return out
  end
  return block.body
end

-- The 0-based row of the first line of block.
local function block_row(chat, block)
  local row = 0
  for _, b in ipairs(chat.blocks) do
    if b == block then
      return row
    end
    row = row + #b.lines
  end
  error('agentls: block not in its chat')
end

-- Closes the fold at lnum (1-based) in every window that shows the chat with its folds:
-- Vim keeps a new fold open when the cursor is in it, as a cursor following the end is.
local function close_fold(chat, lnum)
  for _, win in ipairs(api.nvim_list_wins()) do
    if api.nvim_win_get_buf(win) == chat.buf and vim.wo[win].foldmethod == 'expr' then
      api.nvim_win_call(win, function()
        pcall(vim.cmd, ('silent %dfoldclose'):format(lnum))
      end)
    end
  end
end

-- The block at 0-based row and the 1-based index of the row in the block's body (0 for
-- the separator line).
local function block_at(chat, row)
  local start = 0
  for _, b in ipairs(chat.blocks) do
    if row < start + #b.lines then
      return b, row - start + (b.sep and 0 or 1)
    end
    start = start + #b.lines
  end
  return nil, nil
end

local function followers(buf)
  local count = api.nvim_buf_line_count(buf)
  local out = {}
  for _, win in ipairs(api.nvim_list_wins()) do
    if api.nvim_win_get_buf(win) == buf and api.nvim_win_get_cursor(win)[1] >= count then
      out[#out + 1] = win
    end
  end
  return out
end

-- Changes the buffer through fn; windows whose cursor was on the last line follow the end.
local function write(chat, fn)
  local buf = chat.buf
  if not api.nvim_buf_is_valid(buf) then
    return
  end
  local follow = followers(buf)
  -- Folds are computed while the lines change, from the blocks: those are updated first.
  chat.folds = nil
  vim.bo[buf].modifiable = true
  local ok, err = pcall(fn, buf)
  vim.bo[buf].modifiable = false
  vim.bo[buf].modified = false
  if not ok then
    error(err, 0)
  end
  local last = api.nvim_buf_line_count(buf)
  for _, win in ipairs(follow) do
    pcall(api.nvim_win_set_cursor, win, { last, 0 })
  end
  if chat.turn and not chat.turn.ended then
    show_spinner(chat)
  end
end

-- Highlights of a block (thought dimming, tool status), redone whenever it changes.
local function highlight(chat, block)
  if not api.nvim_buf_is_valid(chat.buf) then
    return
  end
  for _, id in ipairs(block.marks or {}) do
    pcall(api.nvim_buf_del_extmark, chat.buf, ns, id)
  end
  block.marks = {}
  local row = block_row(chat, block) + (block.sep and 1 or 0)
  local function mark(r, col, end_col, group)
    local opts = end_col and { end_row = r, end_col = end_col, hl_group = group } or { line_hl_group = group }
    block.marks[#block.marks + 1] = api.nvim_buf_set_extmark(chat.buf, ns, r, col, opts)
  end
  if block.kind == 'thought' and config.options.chat.thoughts == 'dim' then
    for i = 1, #block.body do
      mark(row + i - 1, 0, nil, 'AgentlsChatThought')
    end
  elseif block.kind == 'note' then
    for i = 1, #block.body do
      mark(row + i - 1, 0, nil, 'AgentlsChatNote')
    end
  elseif block.kind == 'tool' and block.status_col then
    mark(row, block.status_col, #block.body[1], status_hl[shown_status(block.call)] or 'AgentlsChatPending')
  end
end

local function add_block(chat, kind, body, fields)
  local block = fields or {}
  block.kind = kind
  block.body = body
  local prev = chat.blocks[#chat.blocks]
  block.sep = prev ~= nil and not (kind == 'tool' and prev.kind == 'tool')
  block.lines = lines_of(block)
  local first = #chat.blocks == 0
  chat.blocks[#chat.blocks + 1] = block
  write(chat, function(buf)
    if first then
      api.nvim_buf_set_lines(buf, 0, -1, false, block.lines)
    else
      api.nvim_buf_set_lines(buf, -1, -1, false, block.lines)
    end
  end)
  highlight(chat, block)
  return block
end

local function set_body(chat, block, body)
  local row = block_row(chat, block)
  local old = #block.lines
  block.body = body
  block.lines = lines_of(block)
  write(chat, function(buf)
    api.nvim_buf_set_lines(buf, row, row + old, false, block.lines)
  end)
  highlight(chat, block)
end

-- Appends streamed text to the last block (a message or a thought); every new line of a
-- thought is quoted.
local function append_text(chat, block, text)
  text = text:gsub('\r\n', '\n')
  local pieces = vim.split(text, '\n', { plain = true })
  if block.kind == 'thought' then
    for i = 2, #pieces do
      pieces[i] = '> ' .. pieces[i]
    end
  end
  local last = block.body[#block.body]
  block.body[#block.body] = last .. pieces[1]
  for i = 2, #pieces do
    block.body[#block.body + 1] = pieces[i]
  end
  block.lines = lines_of(block)
  write(chat, function(buf)
    local row = api.nvim_buf_line_count(buf) - 1
    api.nvim_buf_set_text(buf, row, #last, row, #last, pieces)
  end)
  if block.kind == 'thought' then
    highlight(chat, block)
  end
end

-- The busy indicator ------------------------------------------------------------------

--- The approval mode in force for a chat: its session's own, if the server announced
--- one (enter_plan_mode, agentls.setApprovalMode with the session), else the workspace's
--- (see status.mode()); nil when unknown.
---@param chat table
---@return string|nil
function M.mode(chat)
  return chat.mode or status.mode(chat.client_id)
end

--- The winbar of the chat's windows: the approval mode (as the server announces it)
--- and the model (the session's, from session_info, else agentls.status) and, while a
--- prompt runs, the spinner.
---@param chat table
function M.update_winbar(chat)
  if not api.nvim_buf_is_valid(chat.buf) then
    return
  end
  local st = status.get(chat.client_id) or {}
  local parts = { 'agentls' }
  local mode = M.mode(chat)
  if mode then
    parts[#parts + 1] = 'mode: ' .. mode
  end
  local model = chat.model or st.model
  if type(model) == 'string' and model ~= '' then
    parts[#parts + 1] = 'model: ' .. model
  end
  if chat.turn and not chat.turn.ended then
    parts[#parts + 1] = spinner_frames[state.frame] .. ' working'
  end
  local text = table.concat(parts, ' · '):gsub('%%', '%%%%')
  for _, win in ipairs(api.nvim_list_wins()) do
    if api.nvim_win_get_buf(win) == chat.buf then
      api.nvim_set_option_value('winbar', text, { scope = 'local', win = win })
    end
  end
end

-- The spinner line under the last line of a chat whose prompt runs (a virtual line: the
-- chat's text stays what the model said).
function show_spinner(chat)
  if not api.nvim_buf_is_valid(chat.buf) then
    return
  end
  api.nvim_buf_clear_namespace(chat.buf, spin_ns, 0, -1)
  if chat.turn and not chat.turn.ended then
    local last = api.nvim_buf_line_count(chat.buf) - 1
    api.nvim_buf_set_extmark(chat.buf, spin_ns, last, 0, {
      virt_lines = { { { spinner_frames[state.frame] .. ' working…', 'AgentlsChatRunning' } } },
    })
  end
end

local function stop_spinner()
  local t = state.spinner
  if t then
    state.spinner = nil
    t:stop()
    t:close()
  end
end

local function tick()
  if not state.spinner then
    return
  end
  state.frame = state.frame % #spinner_frames + 1
  local any = false
  for _, chat in pairs(state.chats) do
    if chat.turn and not chat.turn.ended then
      any = true
      show_spinner(chat)
      M.update_winbar(chat)
    end
  end
  if not any then
    stop_spinner()
  end
  pcall(vim.cmd, 'redrawstatus')
end

local function start_spinner()
  if state.spinner then
    return
  end
  local t = vim.uv.new_timer()
  state.spinner = t
  t:start(0, M.spinner_ms, vim.schedule_wrap(tick))
end

--- Milliseconds between two frames of the busy indicator.
M.spinner_ms = 120

--- The busy indicator's current frame while a prompt runs in any chat, else nil.
---@return string|nil
function M.spinner()
  for _, chat in pairs(state.chats) do
    if chat.turn and not chat.turn.ended then
      return spinner_frames[state.frame]
    end
  end
  return nil
end

-- Rendering of updates ---------------------------------------------------------------

local function tool_body(call)
  local label = call.name or call.id
  if type(call.title) == 'string' and call.title ~= '' and call.title ~= call.name then
    label = label .. ': ' .. one_line(call.title)
  end
  local st = shown_status(call)
  local text = status_labels[st] or tostring(st or 'pending')
  if call.status == 'failed' and call.error then
    text = text .. ': ' .. one_line(call.error)
  elseif call.summary and (call.status == 'completed' or call.status == 'failed') then
    text = text .. ' · ' .. one_line(call.summary)
  end
  local head = '- ' .. label .. ' · '
  local body = { head .. text }
  for _, loc in ipairs(call.locations) do
    body[#body + 1] = '  - ' .. location_label(loc)
  end
  -- The output, folded (see fold_levels), as a fenced block under the call.
  local fold_from
  local out = call.output or ''
  if out == '' and call.final_text then
    out = call.final_text
  end
  out = out:gsub('\r\n', '\n'):gsub('\n$', '')
  if out ~= '' then
    local lines = vim.split(out, '\n', { plain = true })
    local max = M.max_output_lines
    fold_from = #body + 1
    body[#body + 1] = '  ```'
    if #lines > max then
      body[#body + 1] = ('  … %d earlier lines (:AgentlsOutput has them all)'):format(#lines - max)
      lines = vim.list_slice(lines, #lines - max + 1, #lines)
    end
    for _, l in ipairs(lines) do
      body[#body + 1] = '  ' .. l
    end
    body[#body + 1] = '  ```'
  end
  return body, #head, fold_from
end

--- The most lines of a tool call's output the chat shows (the last ones).
M.max_output_lines = 200

-- The order of two calls of one batch: by the number their ids end with when their ids
-- differ only in it (the host names the model's calls "call-N" in request order); nil
-- when they cannot be compared.
local function call_order(a, b)
  local pa, na = a:match('^(.-)(%d+)$')
  local pb, nb = b:match('^(.-)(%d+)$')
  if pa and pa == pb then
    return tonumber(na) < tonumber(nb)
  end
  return nil
end

-- Inserts a tool block before the block `before` (a tool block of the run of tool
-- blocks at the end of the chat): the new block takes over its separator line.
local function insert_tool_before(chat, before, body, fields)
  local idx
  for i, b in ipairs(chat.blocks) do
    if b == before then
      idx = i
    end
  end
  local block = fields
  block.kind = 'tool'
  block.body = body
  block.sep = before.sep
  block.lines = lines_of(block)
  local row = block_row(chat, before)
  local old = #before.lines
  before.sep = false
  before.lines = lines_of(before)
  table.insert(chat.blocks, idx, block)
  write(chat, function(buf)
    local new = vim.list_extend(vim.deepcopy(block.lines), before.lines)
    api.nvim_buf_set_lines(buf, row, row + old, false, new)
  end)
  highlight(chat, block)
  highlight(chat, before)
  return block
end

local function render_tool(chat, call)
  local body, status_col, fold_from = tool_body(call)
  local had_fold = call.block and call.block.fold_from
  if call.block then
    call.block.status_col = status_col
    call.block.fold_from = fold_from
    set_body(chat, call.block, body)
  else
    -- The calls of one model turn are announced as each is validated, which may be out
    -- of order: a call is put before the later calls of the run of calls at the end.
    local before
    for i = #chat.blocks, 1, -1 do
      local b = chat.blocks[i]
      if b.kind ~= 'tool' then
        break
      end
      if call_order(call.id, b.call.id) then
        before = b
      end
    end
    local fields = { call = call, status_col = status_col, fold_from = fold_from }
    if before then
      call.block = insert_tool_before(chat, before, body, fields)
    else
      call.block = add_block(chat, 'tool', body, fields)
    end
  end
  if fold_from and not had_fold then
    -- Output folds closed, as thoughts do, also under a cursor that follows the end.
    close_fold(chat, block_row(chat, call.block) + (call.block.sep and 1 or 0) + fold_from)
  end
end

local function add_locations(call, locs)
  if type(locs) ~= 'table' then
    return
  end
  for _, loc in ipairs(locs) do
    if type(loc) == 'table' and type(loc.uri) == 'string' then
      local key = location_label(loc)
      if not call.seen[key] then
        call.seen[key] = true
        call.locations[#call.locations + 1] = { uri = loc.uri, range = loc.range ~= vim.NIL and loc.range or nil }
      end
    end
  end
end

local function get_call(chat, id)
  local call = chat.calls[id]
  if not call then
    call = { id = id, status = 'pending', locations = {}, seen = {} }
    chat.calls[id] = call
  end
  return call
end

local plan_marks = { completed = '[x]', in_progress = '[-]', cancelled = '[~]', blocked = '[!]' }

local function plan_body(entries)
  local body = { '**Plan**' }
  for _, e in ipairs(type(entries) == 'table' and entries or {}) do
    if type(e) == 'table' then
      local text = one_line(e.content)
      local suffix = ''
      if e.status == 'in_progress' then
        suffix = ' (in progress)'
      elseif e.status == 'blocked' then
        suffix = ' (blocked)'
      elseif e.status == 'cancelled' then
        text = '~~' .. text .. '~~'
      end
      body[#body + 1] = ('- %s %s%s'):format(plan_marks[e.status] or '[ ]', text, suffix)
    end
  end
  return body
end

local function usage_text(usage)
  if type(usage) ~= 'table' then
    return ''
  end
  local parts = {}
  if type(usage.inputTokens) == 'number' then
    parts[#parts + 1] = ('%d in'):format(usage.inputTokens)
  end
  if type(usage.outputTokens) == 'number' then
    parts[#parts + 1] = ('%d out'):format(usage.outputTokens)
  end
  if #parts == 0 then
    return ''
  end
  return ' · tokens: ' .. table.concat(parts, ', ')
end

local function render_end(chat, stop_reason, usage, extra)
  local text = ('_turn ended: %s%s%s_'):format(tostring(stop_reason or 'unknown'), usage_text(usage), extra or '')
  add_block(chat, 'note', { text })
  chat.last_stop = stop_reason
  chat.plan = nil
end

-- Ends the chat's running prompt (once), showing how it ended. by_update says it was
-- the turn_end update, not the prompt's answer or the editor.
local function end_turn(chat, stop_reason, usage, extra, by_update)
  local turn = chat.turn
  if not turn or turn.ended then
    return
  end
  turn.ended = true
  turn.ended_by_update = by_update
  render_end(chat, stop_reason, usage, extra)
  show_spinner(chat)
  M.update_winbar(chat)
  status.progress(chat.client_id, 'agentls-chat-' .. chat.buf, {
    kind = 'end',
    title = 'agentls',
    message = tostring(stop_reason or 'done'),
  })
  pcall(vim.cmd, 'redrawstatus')
end

local function stream(chat, kind, text)
  if type(text) ~= 'string' or text == '' then
    return
  end
  if kind == 'thought' and config.options.chat.thoughts == 'hide' then
    return
  end
  local last = chat.blocks[#chat.blocks]
  local new = not last or last.kind ~= kind
  if new then
    last = add_block(chat, kind, { kind == 'thought' and '> ' or '' })
  end
  append_text(chat, last, text)
  if new and kind == 'thought' and config.options.chat.thoughts == 'fold' then
    close_fold(chat, block_row(chat, last) + (last.sep and 1 or 0) + 1)
  end
  if kind == 'message' and chat.turn then
    chat.turn.got_text = true
  end
end

-- Applies one update to a chat.
local function apply(chat, u)
  local kind = u.kind
  if kind == 'message_chunk' then
    stream(chat, 'message', u.text)
  elseif kind == 'thought_chunk' then
    stream(chat, 'thought', u.text)
  elseif kind == 'tool_call' and u.toolCallId then
    local call = get_call(chat, u.toolCallId)
    call.name = u.name or call.name
    call.title = u.title or call.title
    call.status = u.status or call.status
    add_locations(call, u.locations)
    render_tool(chat, call)
  elseif kind == 'tool_call_update' and u.toolCallId then
    local call = get_call(chat, u.toolCallId)
    local changed = not call.block
    if type(u.status) == 'string' and u.status ~= call.status then
      call.status = u.status
      changed = true
    end
    if type(u.locations) == 'table' then
      local n = #call.locations
      add_locations(call, u.locations)
      changed = changed or #call.locations ~= n
    end
    local diff = type(u.content) == 'table' and u.content.diff
    if type(diff) == 'table' and #call.locations == 0 then
      local uri = diff.uri
      if type(uri) ~= 'string' and type(diff.path) == 'string' then
        uri = vim.uri_from_fname(diff.path)
      end
      if type(uri) == 'string' then
        add_locations(call, { { uri = uri } })
        changed = true
      end
    end
    if type(u.error) == 'table' and u.error.message then
      call.error = u.error.message
      changed = true
    end
    if type(u.output) == 'string' and u.output ~= '' then
      call.output = (call.output or '') .. u.output
      changed = true
    end
    local text = type(u.content) == 'table' and u.content.text
    if type(text) == 'string' and text ~= '' and not diff then
      call.final_text = text
      changed = true
    end
    if type(u.summary) == 'string' and u.summary ~= '' then
      call.summary = u.summary
      changed = true
    end
    if changed then
      render_tool(chat, call)
    end
    if chat.turn and not chat.turn.ended and u.status == 'in_progress' then
      status.progress(chat.client_id, 'agentls-chat-' .. chat.buf, {
        kind = 'report',
        title = 'agentls',
        message = 'running ' .. tostring(call.name or call.id),
      })
    end
  elseif kind == 'plan' then
    -- One checklist per turn, redrawn in place as the plan changes.
    if chat.plan then
      set_body(chat, chat.plan, plan_body(u.entries))
    else
      chat.plan = add_block(chat, 'plan', plan_body(u.entries))
    end
  elseif kind == 'compression' then
    local note = '_context compressed'
    if type(u.tokensBefore) == 'number' and type(u.tokensAfter) == 'number' then
      note = note .. (': %d → %d tokens'):format(u.tokensBefore, u.tokensAfter)
    end
    if type(u.text) == 'string' and u.text ~= '' then
      note = note .. ' · ' .. one_line(u.text)
    end
    add_block(chat, 'note', { note .. '_' })
  elseif kind == 'current_mode_update' and type(u.mode) == 'string' and u.mode ~= '' then
    -- The session's own mode (the workspace's comes with session "").
    chat.mode = u.mode
    M.update_winbar(chat)
    pcall(vim.cmd, 'redrawstatus!')
  elseif kind == 'session_info' and type(u.model) == 'string' and u.model ~= '' then
    chat.model = u.model
    M.update_winbar(chat)
  elseif kind == 'turn_end' then
    local turn = chat.turn
    if turn and not turn.ended then
      end_turn(chat, u.stopReason, u.usage, nil, true)
    elseif turn and not turn.ended_by_update and not turn.late_end_seen then
      -- The answer to the prompt came first and already showed the end.
      turn.late_end_seen = true
    else
      -- A turn this editor did not start (another client, a code action).
      render_end(chat, u.stopReason, u.usage)
    end
  end
end

-- Buffers and windows ------------------------------------------------------------------

local function fold_levels(chat)
  if chat.folds then
    return chat.folds
  end
  local levels, row = {}, 0
  local fold_thoughts = config.options.chat.thoughts == 'fold'
  for _, b in ipairs(chat.blocks) do
    local first = row + (b.sep and 1 or 0) + 1
    if b.kind == 'tool' then
      first = b.fold_from and (first + b.fold_from - 1) or math.huge
    end
    for lnum = row + 1, row + #b.lines do
      if (b.kind == 'thought' and fold_thoughts) or b.kind == 'tool' then
        levels[lnum] = lnum == first and '>1' or (lnum > first and '1' or '0')
      else
        levels[lnum] = '0'
      end
    end
    row = row + #b.lines
  end
  chat.folds = levels
  return levels
end

--- 'foldexpr' of chat windows: thoughts are folds (option chat.thoughts = 'fold').
---@return string
function M.foldexpr()
  local chat = state.chats[api.nvim_get_current_buf()]
  if not chat then
    return '0'
  end
  return fold_levels(chat)[vim.v.lnum] or '0'
end

--- 'foldtext' of chat windows.
---@return string
function M.foldtext()
  local n = vim.v.foldend - vim.v.foldstart + 1
  local chat = state.chats[api.nvim_get_current_buf()]
  local block = chat and block_at(chat, vim.v.foldstart - 1)
  if block and block.kind == 'tool' then
    n = math.max(n - 2, 0) -- the fence lines
    return ('  ▸ output (%d line%s)'):format(n, n == 1 and '' or 's')
  end
  return ('> thinking… (%d line%s)'):format(n, n == 1 and '' or 's')
end

local function setup_window(win)
  local function set(name, value)
    api.nvim_set_option_value(name, value, { scope = 'local', win = win })
  end
  set('wrap', true)
  set('linebreak', true)
  set('number', false)
  set('relativenumber', false)
  set('signcolumn', 'no')
  -- Thoughts (option chat.thoughts = 'fold') and tool output are folds.
  set('foldmethod', 'expr')
  set('foldexpr', "v:lua.require'agentls.chat'.foldexpr()")
  set('foldtext', "v:lua.require'agentls.chat'.foldtext()")
  set('foldlevel', 0)
  set('foldminlines', 0) -- a thought of one line folds too
  set('foldenable', true)
  local chat = state.chats[api.nvim_win_get_buf(win)]
  if chat then
    M.update_winbar(chat)
  end
end

local function set_keys(chat)
  local keys = config.options.chat.keys
  local buf = chat.buf
  local maps = {
    jump = {
      function()
        M.jump()
      end,
      'agentls: jump to the tool call or location under the cursor',
    },
    cancel = {
      function()
        M.cancel(chat)
      end,
      'agentls: cancel the running prompt',
    },
    prompt = {
      function()
        M.ask({ chat = chat })
      end,
      'agentls: send a prompt',
    },
    close = {
      function()
        if #api.nvim_list_wins() > 1 then
          api.nvim_win_close(0, false)
        end
      end,
      'agentls: close the chat window',
    },
  }
  for name, m in pairs(maps) do
    if keys[name] then
      vim.keymap.set('n', keys[name], m[1], { buffer = buf, nowait = true, desc = m[2] })
    end
  end
end

-- Makes buf a Markdown buffer. Neovim 0.12's markdown ftplugin starts tree-sitter
-- unconditionally, which raises an error where no markdown parser is installed (a build
-- without the bundled parsers); the chat and the prompt buffer must open all the same,
-- with Vim's regex syntax then. So tree-sitter is started only where it can be while the
-- filetype is set; with a parser, nothing changes.
local function set_markdown(buf)
  local start = vim.treesitter.start
  vim.treesitter.start = function(...)
    pcall(start, ...)
  end
  local ok, err = pcall(function()
    vim.bo[buf].filetype = 'markdown'
  end)
  vim.treesitter.start = start
  if not ok then
    notify('the markdown filetype plugins failed: ' .. tostring(err), vim.log.levels.WARN)
  end
end

local function new_chat(client_id, session)
  define_highlights()
  state.seq = state.seq + 1
  local buf = api.nvim_create_buf(false, true)
  vim.bo[buf].buftype = 'nofile'
  vim.bo[buf].bufhidden = 'hide'
  vim.bo[buf].swapfile = false
  vim.bo[buf].undolevels = -1
  pcall(api.nvim_buf_set_name, buf, ('agentls://chat/%d'):format(state.seq))
  set_markdown(buf)
  vim.bo[buf].modifiable = false
  local chat = {
    buf = buf,
    client_id = client_id,
    session = session,
    blocks = {},
    calls = {},
  }
  state.chats[buf] = chat
  vim.b[buf].agentls_session = session
  set_keys(chat)
  local group = api.nvim_create_augroup('agentls_chat_' .. buf, { clear = true })
  api.nvim_create_autocmd('BufWinEnter', {
    group = group,
    buffer = buf,
    desc = 'agentls: chat window options',
    callback = function()
      setup_window(api.nvim_get_current_win())
    end,
  })
  api.nvim_create_autocmd('BufWipeout', {
    group = group,
    buffer = buf,
    callback = function()
      if chat.turn and not chat.turn.ended then
        M.cancel(chat)
      end
      state.chats[buf] = nil
      if state.current == chat then
        state.current = nil
      end
      pcall(api.nvim_del_augroup_by_id, group)
    end,
  })
  return chat
end

local function bind(chat, session)
  chat.session = session
  if api.nvim_buf_is_valid(chat.buf) then
    vim.b[chat.buf].agentls_session = session
  end
  local turn = chat.turn
  if turn and turn.cancel_wanted and not turn.ended then
    turn.cancel_wanted = false
    M.cancel(chat)
  end
end

local function is_chat_win(win)
  return state.chats[api.nvim_win_get_buf(win)] ~= nil
end

--- Shows the chat in a window of the current tab page (focusing it), opening a split
--- where option chat.position says if none shows it yet. Returns the window.
---@param chat table
---@return integer
function M.show(chat)
  local prev = api.nvim_get_current_win()
  for _, win in ipairs(api.nvim_tabpage_list_wins(0)) do
    if api.nvim_win_get_buf(win) == chat.buf then
      if win ~= prev and not is_chat_win(prev) then
        chat.prev_win = prev
      end
      api.nvim_set_current_win(win)
      return win
    end
  end
  if not is_chat_win(prev) then
    chat.prev_win = prev
  end
  local opts = config.options.chat
  local pos = opts.position
  local vertical = pos == 'right' or pos == 'left'
  local size = opts.size
  if not size then
    size = vertical and math.floor(vim.o.columns * 0.4) or math.floor(vim.o.lines * 0.4)
  end
  if pos == 'tab' then
    vim.cmd('tab split')
  else
    local mods = ({ right = 'botright vertical', left = 'topleft vertical', top = 'topleft', bottom = 'botright' })[pos]
    vim.cmd(('%s %dsplit'):format(mods, math.max(size, 1)))
  end
  local win = api.nvim_get_current_win()
  api.nvim_win_set_buf(win, chat.buf)
  setup_window(win)
  api.nvim_win_set_cursor(win, { api.nvim_buf_line_count(chat.buf), 0 })
  return win
end

local function client_alive(id)
  local c = id and vim.lsp.get_client_by_id(id)
  if c and not rpc.is_stopped(c) then
    return c
  end
  return nil
end

-- The chat to use with client: the chat last used if it belongs to the client (or to
-- none running), else the newest chat of the client, else a new one.
local function chat_for(client)
  local cur = state.current
  if cur and api.nvim_buf_is_valid(cur.buf) then
    if cur.client_id == client.id or not client_alive(cur.client_id) then
      cur.client_id = client.id
      return cur
    end
  end
  local best
  for _, chat in pairs(state.chats) do
    if chat.client_id == client.id and (not best or chat.buf > best.buf) then
      best = chat
    end
  end
  return best or new_chat(client.id, nil)
end

-- Public API -----------------------------------------------------------------------------

--- The chat last used, or nil.
---@return table|nil chat { buf, session, client_id, ... }
function M.current()
  local cur = state.current
  if cur and api.nvim_buf_is_valid(cur.buf) then
    return cur
  end
  return nil
end

--- The chat shown in bufnr (default: the current buffer), or nil.
---@param bufnr integer|nil
---@return table|nil
function M.get(bufnr)
  bufnr = (bufnr == nil or bufnr == 0) and api.nvim_get_current_buf() or bufnr
  return state.chats[bufnr]
end

--- The whole text of a chat (default: the current one).
---@param chat table|nil
---@return string
function M.text(chat)
  chat = chat or M.current()
  if not chat then
    return ''
  end
  return table.concat(api.nvim_buf_get_lines(chat.buf, 0, -1, false), '\n')
end

--- Opens the chat (the current one, or a new one bound to no session yet) in a window.
---@param opts table|nil { client? }
---@return table chat
function M.open(opts)
  opts = opts or {}
  config.check('opts', opts, 'table')
  local client = opts.client or rpc.client()
  local chat
  if client then
    chat = chat_for(client)
  else
    chat = M.current() or new_chat(nil, nil)
  end
  state.current = chat
  M.show(chat)
  return chat
end

local function lsp_range(bufnr, client, range)
  local enc = client.offset_encoding or 'utf-16'
  local function pos(row, col)
    local line = api.nvim_buf_get_lines(bufnr, row, row + 1, false)[1] or ''
    col = math.min(col, #line)
    return { line = row, character = vim.lsp.util.character_offset(bufnr, row, col, enc) }
  end
  local l1, l2 = range.start_line, range.end_line
  local last = api.nvim_buf_get_lines(bufnr, l2 - 1, l2, false)[1] or ''
  return {
    start = pos(l1 - 1, range.start_col or 0),
    ['end'] = pos(l2 - 1, range.end_col or #last),
  }
end

local function context_label(bufnr, range)
  local name = vim.fn.fnamemodify(api.nvim_buf_get_name(bufnr), ':~:.')
  if not range then
    return name
  end
  if range.start_line == range.end_line then
    return ('%s:%d'):format(name, range.start_line)
  end
  return ('%s:%d-%d'):format(name, range.start_line, range.end_line)
end

-- The chat and client a prompt goes to (opts as in prompt()), and the file buffer whose
-- URI goes with it; nil after telling the user why there is none.
local function target(opts)
  local src = opts.bufnr
  if src == 0 then
    src = api.nvim_get_current_buf()
  end
  if src and (not api.nvim_buf_is_valid(src) or vim.bo[src].buftype ~= '' or api.nvim_buf_get_name(src) == '') then
    src = nil
  end
  local chat = opts.chat
  local client = chat and client_alive(chat.client_id)
  if not client then
    client = rpc.client(src)
  end
  if not client then
    notify('not running (call require("agentls").setup() and open a file, or :AgentlsStart)', vim.log.levels.ERROR)
    return nil
  end
  chat = chat or chat_for(client)
  chat.client_id = client.id
  state.current = chat
  return chat, client, src
end

local function busy(chat)
  if chat.turn and not chat.turn.ended then
    notify('a prompt is still running in this chat; cancel it first (:AgentlsCancel)', vim.log.levels.WARN)
    M.show(chat)
    return true
  end
  return false
end

-- Runs one prompt request in chat: shows what the user asked (`shown`, and the context
-- label), sends the request (rich method, else the command), binds the chat to the
-- session it names and ends the turn with its PromptResult. The updates of the turn
-- reach the chat through handle_update. Every kind of prompt (typed, an MCP prompt)
-- goes through here. req: { method?, command, params, shown, ctx_label?, src? }.
local function start_turn(chat, client, req, callback)
  if busy(chat) then
    return nil
  end
  local params = req.params
  if chat.session then
    params.session = chat.session
  end
  M.show(chat)
  local body = { '## You', '' }
  vim.list_extend(body, vim.split(req.shown, '\n', { plain = true }))
  if req.ctx_label then
    vim.list_extend(body, { '', ('_context: %s_'):format(req.ctx_label) })
  end
  vim.list_extend(body, { '', '## agentls' })
  add_block(chat, 'prompt', body)

  local turn = {}
  chat.turn = turn
  chat.plan = nil
  start_spinner()
  show_spinner(chat)
  M.update_winbar(chat)
  status.progress(client.id, 'agentls-chat-' .. chat.buf, { kind = 'begin', title = 'agentls', message = 'working' })
  turn.box = rpc.call(client, req.method, req.command, params, function(err, result)
    if chat.turn == turn then
      if err then
        if not turn.ended then
          add_block(chat, 'note', { ('**error:** %s'):format(one_line(rpc.error_message(err))) })
          end_turn(chat, turn.cancel_sent and 'cancelled' or 'error')
        end
      elseif type(result) == 'table' then
        if type(result.session) == 'string' and result.session ~= '' and chat.session ~= result.session then
          bind(chat, result.session)
        end
        if not turn.got_text and type(result.text) == 'string' and result.text ~= '' then
          stream(chat, 'message', result.text)
        end
        if type(result.error) == 'table' and result.error.message then
          add_block(chat, 'note', { ('**error:** %s'):format(one_line(result.error.message)) })
        end
        end_turn(chat, result.stopReason, result.usage)
      else
        end_turn(chat, 'error', nil, ' · the server sent no result')
      end
    end
    pcall(vim.cmd, 'redrawstatus')
    if callback then
      callback(err, result)
    end
  end, req.src)
  return chat
end

-- Resolves an MCP prompt command (see prompts.parse()) with the user's help, then runs
-- it in chat with agentls.runPrompt; cmd.context (the attachments of its references)
-- goes after the rendered prompt. Returns the chat. A command that is not sent calls
-- back with an error marked not_sent (and cancelled, when a question was).
local function run_command(chat, client, cmd, callback)
  local function abort(msg, level)
    if msg then
      notify(msg, level or vim.log.levels.ERROR)
    end
    if callback then
      callback({
        message = msg or 'the prompt was not sent: a question was cancelled',
        not_sent = true,
        cancelled = msg == nil or nil,
      }, nil)
    end
  end
  prompts.resolve(client, cmd, function(err, spec)
    if err then
      return abort(err)
    end
    if not spec then
      return abort(nil)
    end
    if not client_alive(client.id) then
      return abort('the agentls server stopped')
    end
    local p = spec.prompt
    local params = { server = p.server, name = p.name, arguments = rpc.object(spec.args) }
    local shown = prompts.format(p, spec.args)
    if cmd.context then
      params.context = cmd.context
      shown = shown .. '\n\n' .. cmd.context
    end
    local sent = start_turn(chat, client, {
      command = 'agentls.runPrompt',
      params = params,
      shown = shown,
    }, callback)
    if not sent then
      abort(nil)
    end
  end)
  return chat
end

local prepare -- defined with the prompt buffer

-- Runs a parsed MCP prompt command (kind 'prompt' or 'list') in the chat of opts (as
-- prompt() takes them). Returns the chat, or nil.
local function run_parsed(cmd, opts)
  local chat, client = target(opts)
  if not chat or busy(chat) then
    return nil
  end
  M.show(chat)
  return run_command(chat, client, cmd, opts.callback)
end

--- Sends a prompt to the agent and streams its answer into the chat, which is opened.
--- With bufnr (a file buffer), its URI goes with the prompt, and with range the lines
--- (1-based, inclusive; start_col/end_col are 0-based byte columns) as the selection.
--- The chat's session is continued; the first prompt of a chat starts one.
--- Text of the form `/server:prompt key=value …` runs that MCP prompt instead
--- (run_prompt(); missing required arguments are asked for), `/` alone offers the
--- prompts with vim.ui.select, and `//…` sends `/…` as an ordinary prompt. The callback
--- is called once the prompt ends, or with an error if it was never sent after a
--- question (a prompt, an argument) was cancelled or failed.
---@param text string
---@param opts table|nil { bufnr?, range? = { start_line, end_line, start_col?, end_col? }, chat?, callback? }
---@return table|nil chat
function M.prompt(text, opts)
  config.check('text', text, 'string')
  opts = opts or {}
  config.check('opts', opts, 'table')
  config.check('opts.bufnr', opts.bufnr, 'number', true)
  config.check('opts.range', opts.range, 'table', true)
  config.check('opts.chat', opts.chat, 'table', true)
  config.check('opts.callback', opts.callback, 'function', true)
  if vim.trim(text) == '' then
    notify('the prompt is empty', vim.log.levels.WARN)
    return nil
  end
  local cmd = prompts.parse(text)
  if cmd.kind == 'error' then
    notify(cmd.message, vim.log.levels.ERROR)
    return nil
  end
  if cmd.kind ~= 'text' then
    return run_parsed(cmd, opts)
  end
  local chat, client, src = target(opts)
  if not chat or busy(chat) then
    return nil
  end
  text = cmd.text

  local params = { prompt = text }
  local ctx_label
  if src then
    params.uri = vim.uri_from_bufnr(src)
    if opts.range then
      params.range = lsp_range(src, client, opts.range)
    end
    ctx_label = context_label(src, opts.range)
    -- The editor's diagnostics of the lines the prompt is about (the selection, else
    -- the cursor's line) go with it, as VS Code's "fix this" sends them.
    local l1, l2
    if opts.range then
      l1, l2 = opts.range.start_line, opts.range.end_line
    elseif src == api.nvim_get_current_buf() then
      l1 = api.nvim_win_get_cursor(0)[1]
      l2 = l1
    end
    if l1 then
      params.diagnostic = require('agentls.diagnostics').at_lines(src, l1, l2)
    end
    rpc.flush_changes(client, src)
  end
  return start_turn(chat, client, {
    method = 'agentls/prompt',
    command = 'agentls.prompt',
    params = params,
    shown = text,
    ctx_label = ctx_label,
    src = src,
  }, opts.callback)
end

--- Runs the MCP prompt {name} of MCP server {server} (agentls.runPrompt) with args
--- (argument name → string) in the chat, as prompt() runs a typed prompt: the answer
--- and its tool calls stream into the chat, and the chat's session is continued.
--- Required arguments missing from args are asked for with vim.ui.input; a prompt the
--- servers do not offer makes vim.ui.select offer those they do.
---@param server string
---@param name string
---@param args table<string,string>|nil
---@param opts table|nil { bufnr?, chat?, callback? } (bufnr only picks the server)
---@return table|nil chat
function M.run_prompt(server, name, args, opts)
  config.check('server', server, 'string')
  config.check('name', name, 'string')
  config.check('args', args, 'table', true)
  opts = opts or {}
  config.check('opts', opts, 'table')
  config.check('opts.bufnr', opts.bufnr, 'number', true)
  config.check('opts.chat', opts.chat, 'table', true)
  config.check('opts.callback', opts.callback, 'function', true)
  local named = {}
  for k, v in pairs(args or {}) do
    if type(k) ~= 'string' or type(v) ~= 'string' then
      error(('args: expected string names and values, got %s = %s'):format(vim.inspect(k), vim.inspect(v)), 2)
    end
    named[k] = v
  end
  local chat, client = target(opts)
  if not chat or busy(chat) then
    return nil
  end
  M.show(chat)
  return run_command(chat, client, { kind = 'prompt', server = server, name = name, args = named, positional = {} }, opts.callback)
end

-- The prompt buffer ---------------------------------------------------------------------

-- Expands the references of text (see M.expand()). Returns the text with each reference
-- named, the attachments (each "\n\nContents of NAME:\n```ft\n…\n```", once per file),
-- and the message of the first reference that could not be resolved, if any.
local function expand(text, src, tool_names)
  local attached, seen = {}, {}
  local function attach(label, lines, ft)
    if seen[label] then
      return
    end
    seen[label] = true
    attached[#attached + 1] = ('\n\nContents of %s:\n```%s\n%s\n```'):format(label, ft or '', table.concat(lines, '\n'))
  end
  local err
  text = text:gsub('#buffer%f[^%w_]', function()
    if not (src and api.nvim_buf_is_valid(src) and api.nvim_buf_get_name(src) ~= '') then
      err = err or '#buffer: the prompt was not started from a file buffer'
      return '#buffer'
    end
    local label = vim.fn.fnamemodify(api.nvim_buf_get_name(src), ':~:.')
    attach(label, api.nvim_buf_get_lines(src, 0, -1, false), vim.bo[src].filetype)
    return '`' .. label .. '`'
  end)
  text = text:gsub('#file:(%S+)', function(path)
    local full = vim.fn.fnamemodify(vim.fn.expand(path), ':p')
    local f = io.open(full, 'rb')
    if not f or vim.fn.isdirectory(full) == 1 then
      if f then
        f:close()
      end
      err = err or ('#file:%s: no such file'):format(path)
      return '#file:' .. path
    end
    local data = f:read('*a') or ''
    f:close()
    local label = vim.fn.fnamemodify(full, ':~:.')
    attach(label, vim.split(data:gsub('\n$', ''), '\n', { plain = true }), vim.filetype.match({ filename = full }))
    return '`' .. label .. '`'
  end)
  local known = {}
  for _, n in ipairs(tool_names or {}) do
    known[n] = true
  end
  text = text:gsub('%f[%w_@]@([%w_]+)', function(name)
    if known[name] then
      return ('the `%s` tool'):format(name)
    end
  end)
  return text, attached, err
end

--- Expands the context references of a prompt: `#buffer` (the buffer the prompt was
--- started from, with its unsaved text) and `#file:PATH` (a file, relative to the
--- current directory) are named in the text and their contents attached below it;
--- `@tool` (a tool the server has) becomes "the `tool` tool". Returns the text, or nil
--- and a message when a reference cannot be resolved.
---@param text string
---@param src integer|nil the buffer #buffer means
---@param tool_names string[]|nil
---@return string|nil, string|nil
function M.expand(text, src, tool_names)
  local expanded, attached, err = expand(text, src, tool_names)
  if err then
    return nil, err
  end
  return expanded .. table.concat(attached), nil
end

-- The context of the references of an MCP prompt's command line (prompts.parse() with
-- refs): their attachments as expand() makes them, in the order written and each file
-- once, as one text without the blank lines before it; nil when there are none. nil
-- and a message when one cannot be resolved.
local function command_context(refs, src)
  local out, seen = {}, {}
  for _, ref in ipairs(refs or {}) do
    local _, attached, err = expand(ref, src, nil)
    if err then
      return nil, err
    end
    for _, a in ipairs(attached) do
      if not seen[a] then
        seen[a] = true
        out[#out + 1] = a
      end
    end
  end
  local context = table.concat(out):gsub('^\n+', '')
  return context ~= '' and context or nil, nil
end

-- Prepares text as a person typed it (the prompt buffer, :Agentls) for sending with
-- the options of prompt(): an ordinary prompt's references are expanded (M.expand());
-- a /server:prompt line's #buffer and #file: words become its context (attached after
-- the rendered prompt, as for an ordinary prompt), not arguments. Returns a function
-- go(on_refused) that sends it (on_refused() runs if a command is refused once the
-- server's prompts are known), or nil after saying why it cannot be sent.
prepare = function(text, opts)
  if vim.trim(text) == '' then
    notify('the prompt is empty', vim.log.levels.WARN)
    return nil
  end
  local cmd = prompts.parse(text, { refs = true })
  local expanded, err
  if cmd.kind == 'error' then
    err = cmd.message
  elseif cmd.kind == 'prompt' then
    cmd.context, err = command_context(cmd.refs, opts.bufnr)
  elseif cmd.kind == 'text' then
    expanded, err = M.expand(text, opts.bufnr, require('agentls').tool_names())
  end
  if err then
    notify(err, vim.log.levels.ERROR)
    return nil
  end
  return function(on_refused)
    if cmd.kind == 'text' then
      return M.prompt(expanded, opts)
    end
    local callback = opts.callback
    return run_parsed(cmd, vim.tbl_extend('force', opts, {
      callback = function(e, result)
        if on_refused and type(e) == 'table' and e.not_sent and not e.cancelled then
          on_refused()
        end
        if callback then
          callback(e, result)
        end
      end,
    }))
  end
end

--- Sends text as a person typed it, as |:Agentls| and the prompt buffer do: like
--- prompt(), but `#buffer` (opts.bufnr), `#file:PATH` and `@tool` are expanded first
--- (see expand()), and on a `/server:prompt` line `#buffer` and `#file:` words are
--- attached after the rendered prompt instead of being arguments. A reference that
--- cannot be resolved is reported and nothing is sent. Returns the chat, or nil.
---@param text string
---@param opts table|nil the options of prompt()
---@return table|nil chat
function M.submit(text, opts)
  config.check('text', text, 'string')
  opts = opts or {}
  config.check('opts', opts, 'table')
  local go = prepare(text, opts)
  return go and go() or nil
end

--- Completion of the prompt buffer ('completefunc'): `#buffer`, `#file:` paths and
--- `@tool` names.
function M.complete(findstart, base)
  if findstart == 1 then
    local line = api.nvim_get_current_line():sub(1, api.nvim_win_get_cursor(0)[2])
    local start = line:find('[#@][%w_:./~-]*$')
    return start and (start - 1) or -3
  end
  local out = {}
  if base:sub(1, 1) == '@' then
    for _, n in ipairs(require('agentls').tool_names()) do
      if vim.startswith('@' .. n, base) then
        out[#out + 1] = '@' .. n
      end
    end
  elseif vim.startswith(base, '#file:') then
    for _, f in ipairs(vim.fn.getcompletion(base:sub(7), 'file')) do
      out[#out + 1] = '#file:' .. f
    end
  else
    for _, w in ipairs({ '#buffer', '#file:' }) do
      if vim.startswith(w, base) then
        out[#out + 1] = w
      end
    end
  end
  return out
end

--- Opens the chat with a prompt buffer under it: a multi-line Markdown buffer whose text
--- goes to the agent with <C-s> (insert and normal mode), <CR> in normal mode, or :w.
--- `#buffer`, `#file:PATH` and `@tool` are expanded (see expand()); <C-x><C-u>
--- completes them. The buffer closes once the prompt is sent.
---@param opts table|nil the options of prompt()
---@return integer|nil the prompt buffer
function M.ask(opts)
  opts = opts or {}
  config.check('opts', opts, 'table')
  local chat = opts.chat
  if chat then
    M.show(chat)
  else
    local ok, opened = pcall(M.open, { client = rpc.client(opts.bufnr) })
    if not ok then
      notify(tostring(opened), vim.log.levels.ERROR)
      return nil
    end
    chat = opened
    opts = vim.tbl_extend('force', opts, { chat = opened })
  end
  if chat.prompt_buf and api.nvim_buf_is_valid(chat.prompt_buf) then
    local win = vim.fn.bufwinid(chat.prompt_buf)
    if win ~= -1 then
      api.nvim_set_current_win(win)
      return chat.prompt_buf
    end
    pcall(api.nvim_buf_delete, chat.prompt_buf, { force = true })
  end
  local buf = api.nvim_create_buf(false, true)
  chat.prompt_buf = buf
  vim.bo[buf].buftype = 'acwrite'
  vim.bo[buf].bufhidden = 'wipe'
  vim.bo[buf].swapfile = false
  pcall(api.nvim_buf_set_name, buf, ('agentls://prompt/%d'):format(state.seq))
  set_markdown(buf)
  vim.bo[buf].completefunc = "v:lua.require'agentls.chat'.complete"
  vim.cmd(('belowright %dsplit'):format(M.prompt_height))
  local win = api.nvim_get_current_win()
  api.nvim_win_set_buf(win, buf)
  vim.wo[win].winfixheight = true
  local send_keys = 'C-s'
  api.nvim_set_option_value(
    'winbar',
    ('agentls prompt · <%s> or :w sends · #buffer #file:PATH @tool (<C-x><C-u>) · q closes'):format(send_keys),
    { scope = 'local', win = win }
  )
  local function send()
    local text = table.concat(api.nvim_buf_get_lines(buf, 0, -1, false), '\n')
    -- Nothing is lost when a prompt cannot be sent: it stays in its buffer.
    local go = prepare(text, opts)
    if not go then
      return
    end
    vim.bo[buf].modified = false
    if api.nvim_win_is_valid(win) and #api.nvim_list_wins() > 1 then
      api.nvim_win_close(win, true)
    end
    pcall(api.nvim_buf_delete, buf, { force = true })
    chat.prompt_buf = nil
    -- A command the server's prompts refuse (an unknown argument, say) is found out
    -- only now: its text comes back in a new prompt buffer.
    go(function()
      local again = M.ask(opts)
      if again then
        api.nvim_buf_set_lines(again, 0, -1, false, vim.split(text, '\n', { plain = true }))
      end
    end)
  end
  vim.keymap.set({ 'n', 'i' }, '<C-s>', function()
    vim.cmd('stopinsert')
    send()
  end, { buffer = buf, desc = 'agentls: send the prompt' })
  vim.keymap.set('n', '<CR>', send, { buffer = buf, desc = 'agentls: send the prompt' })
  vim.keymap.set('n', 'q', function()
    if #api.nvim_list_wins() > 1 then
      api.nvim_win_close(0, true)
    end
  end, { buffer = buf, nowait = true, desc = 'agentls: close the prompt buffer' })
  api.nvim_create_autocmd('BufWriteCmd', {
    buffer = buf,
    desc = 'agentls: :w sends the prompt',
    callback = send,
  })
  return buf
end

--- Height of the prompt buffer's window.
M.prompt_height = 6

--- Cancels the running prompt of a chat (default: the chat in the current buffer, else
--- the current chat) with agentls/cancel for its session. If the prompt has not ended
--- after cancel_grace_ms, its request is cancelled too and the turn ends as cancelled.
---@param chat table|nil
---@return boolean whether a prompt was running
function M.cancel(chat)
  config.check('chat', chat, 'table', true)
  chat = chat or M.get() or M.current()
  local turn = chat and chat.turn
  if not turn or turn.ended then
    return false
  end
  local client = client_alive(chat.client_id)
  if not client then
    end_turn(chat, 'cancelled', nil, ' · the server is gone')
    return true
  end
  if not chat.session then
    -- The session is not known until the server's first update or its answer: the
    -- cancellation goes out as soon as it is (bind), not to every session.
    turn.cancel_wanted = true
  else
    turn.cancel_sent = true
    rpc.notify(client, 'agentls/cancel', { session = chat.session })
  end
  if not turn.grace then
    turn.grace = true
    vim.defer_fn(function()
      if chat.turn == turn and not turn.ended then
        local box = turn.box
        end_turn(chat, 'cancelled', nil, ' · the server did not answer in time')
        if box and box.id and not rpc.is_stopped(client) then
          pcall(rpc.cancel_request, client, box.id)
        end
        if box then
          box.finish({ code = -32800, message = 'cancelled from the editor' })
        end
      end
    end, M.cancel_grace_ms)
  end
  return true
end

--- Cancels the running prompts of every chat. Returns how many were running.
---@return integer
function M.cancel_all()
  local n = 0
  for _, chat in pairs(state.chats) do
    if M.cancel(chat) then
      n = n + 1
    end
  end
  return n
end

--- Binds a chat to a stored session, so that its next prompt continues it: the chat
--- already bound to it, else the current chat if it is still empty, else a new one.
--- The chat is opened.
---@param session string session id
---@param info table|nil the session's entry of agentls.listSessions ({ title, ... })
---@return table chat
function M.resume(session, info)
  config.check('session', session, 'string')
  config.check('info', info, 'table', true)
  local client = rpc.client()
  local chat
  for _, c in pairs(state.chats) do
    if c.session == session then
      chat = c
    end
  end
  if not chat then
    local cur = M.current()
    if cur and #cur.blocks == 0 and not cur.turn then
      chat = cur
    else
      chat = new_chat(client and client.id, nil)
    end
    bind(chat, session)
    local title = info and type(info.title) == 'string' and info.title ~= '' and (': ' .. one_line(info.title)) or ''
    add_block(chat, 'note', { ('_resumed session %s%s_'):format(session, title) })
    if client then
      -- The conversation so far, as the server stored it.
      rpc.call(client, nil, 'agentls.sessionHistory', { session = session }, function(err, result)
        if err or type(result) ~= 'table' or type(result.updates) ~= 'table' then
          return -- an older server: the note above is all there is
        end
        for _, u in ipairs(result.updates) do
          if type(u) == 'table' and u.kind == 'user_message' and type(u.text) == 'string' then
            local body = { '## You', '' }
            vim.list_extend(body, vim.split(u.text, '\n', { plain = true }))
            vim.list_extend(body, { '', '## agentls' })
            add_block(chat, 'prompt', body)
          elseif type(u) == 'table' then
            apply(chat, u)
          end
        end
      end)
    end
  end
  if client and not client_alive(chat.client_id) then
    chat.client_id = client.id
  end
  state.current = chat
  M.show(chat)
  return chat
end

--- Jumps to what the cursor is on in a chat: a tool call's location (its first for the
--- tool call's own line), opening the file at the line in the previous window.
---@return boolean whether it jumped
function M.jump()
  local chat = M.get()
  if not chat then
    return false
  end
  local row = api.nvim_win_get_cursor(0)[1] - 1
  local block, index = block_at(chat, row)
  if not block or block.kind ~= 'tool' or index < 1 then
    return false
  end
  local call = block.call
  local loc = index == 1 and call.locations[1] or call.locations[index - 1]
  if not loc then
    notify(('%s names no file'):format(call.name or call.id), vim.log.levels.INFO)
    return false
  end
  local chat_win = api.nvim_get_current_win()
  local target = chat.prev_win
  if not (target and api.nvim_win_is_valid(target) and not is_chat_win(target)) then
    local prev = vim.fn.win_getid(vim.fn.winnr('#'))
    if prev ~= 0 and prev ~= chat_win and not is_chat_win(prev) then
      target = prev
    else
      target = nil
      for _, win in ipairs(api.nvim_tabpage_list_wins(0)) do
        if not is_chat_win(win) and api.nvim_win_get_config(win).relative == '' then
          target = win
          break
        end
      end
    end
  end
  if target then
    api.nvim_set_current_win(target)
  else
    vim.cmd('aboveleft split')
  end
  local client = client_alive(chat.client_id)
  local enc = client and client.offset_encoding or 'utf-16'
  local location = { uri = loc.uri, range = loc.range }
  local ok, err = pcall(vim.lsp.util.show_document, location, enc, { focus = true })
  if not ok then
    notify('cannot open ' .. location_label(loc) .. ': ' .. tostring(err), vim.log.levels.ERROR)
    return false
  end
  chat.prev_win = api.nvim_get_current_win()
  pcall(vim.cmd, 'normal! zv')
  return true
end

--- Handler of agentls/update for the chats: the update goes to the chat bound to its
--- session; a session not bound yet is taken by the chat whose first prompt is running.
---@param params table { session, update }
---@param client_id integer|nil
function M.handle_update(params, client_id)
  local u = type(params) == 'table' and params.update
  local session = type(params) == 'table' and params.session
  if type(u) == 'table' and session == '' and u.kind == 'current_mode_update' then
    -- The workspace's mode changed: every chat of the server shows it (status.lua
    -- recorded it).
    for _, chat in pairs(state.chats) do
      if client_id == nil or chat.client_id == client_id then
        M.update_winbar(chat)
      end
    end
    return
  end
  if type(u) ~= 'table' or type(session) ~= 'string' or session == '' or session == EDITOR_SESSION then
    return
  end
  local target, waiting
  for _, chat in pairs(state.chats) do
    if chat.session == session and (client_id == nil or chat.client_id == client_id) then
      target = chat
    elseif
      not chat.session
      and chat.turn
      and not chat.turn.ended
      and (client_id == nil or chat.client_id == client_id)
      and (not waiting or chat.buf < waiting.buf)
    then
      waiting = chat
    end
  end
  if not target and waiting then
    target = waiting
    bind(target, session)
  end
  if not target then
    return
  end
  local ok, err = pcall(apply, target, u)
  if not ok then
    notify('could not show an update in the chat: ' .. tostring(err), vim.log.levels.ERROR)
  end
end

--- Ends the running prompts of a client that went away.
---@param client_id integer
function M.forget_client(client_id)
  for _, chat in pairs(state.chats) do
    if chat.client_id == client_id and chat.turn and not chat.turn.ended then
      if chat.turn.box then
        chat.turn.box.finished = true
      end
      end_turn(chat, 'error', nil, ' · the agentls server stopped')
    end
  end
end

--- The chats with a prompt running.
---@return table[]
function M.busy()
  local out = {}
  for _, chat in pairs(state.chats) do
    if chat.turn and not chat.turn.ended then
      out[#out + 1] = chat
    end
  end
  return out
end

return M
