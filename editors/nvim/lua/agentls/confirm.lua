-- Confirmations (agentls/confirm requests): edits are shown in Neovim's own diff, in a
-- new tab with the current text beside the editable proposal; execute, mcp and info
-- confirmations go through vim.ui.select.
--
-- The request is answered only when the user decides, without blocking Neovim: Neovim
-- runs every server-to-client request handler inside a coroutine (vim/lsp/rpc.lua wraps
-- the dispatch in coroutine.wrap) and sends the handler's return value as the response,
-- so the handler yields and the user's decision resumes it, as Neovim's own
-- window/showMessageRequest handler does.
local config = require('agentls.config')
local output = require('agentls.output')

local api = vim.api
local M = {}

-- Confirmations waiting for the user, by confirmation id.
local pending = {}

-- The tool calls the user rejected (by toolCallId), so the chat can say "rejected"
-- where the server's status is "cancelled".
local rejected = {}

local function notify(msg, level)
  vim.notify('agentls: ' .. msg, level or vim.log.levels.INFO)
end

-- Splits file content into buffer lines, remembering the line ending and whether the
-- content ended with one, so that the user's version can be put back together exactly.
local function split_content(s)
  if type(s) ~= 'string' then
    return { '' }, { eol = true, nl = '\n' }
  end
  local nl = s:find('\r\n', 1, true) and '\r\n' or '\n'
  if nl == '\r\n' then
    s = s:gsub('\r\n', '\n')
  end
  local eol = s:sub(-1) == '\n'
  if eol then
    s = s:sub(1, -2)
  end
  return vim.split(s, '\n', { plain = true }), { eol = eol, nl = nl }
end

local function join_content(lines, fmt)
  if #lines == 1 and lines[1] == '' and not fmt.eol then
    return ''
  end
  return table.concat(lines, fmt.nl) .. (fmt.eol and fmt.nl or '')
end

local function display_path(details)
  if type(details.uri) == 'string' then
    local ok, fname = pcall(vim.uri_to_fname, details.uri)
    if ok then
      return vim.fn.fnamemodify(fname, ':~:.'), fname
    end
  end
  if type(details.path) == 'string' then
    return vim.fn.fnamemodify(details.path, ':~:.'), details.path
  end
  return details.title or 'file', nil
end

-- Registers a confirmation and returns the function that answers it exactly once.
local function register(params, client_id, resolve)
  local entry = {
    id = params.id,
    type = params.type,
    title = params.title,
    tool_call_id = params.toolCallId,
    client_id = client_id,
    details = params,
  }
  -- Sends result as the answer, once.
  local function send(result)
    if entry.done then
      return false
    end
    entry.done = true
    if entry.id ~= nil and pending[entry.id] == entry then
      pending[entry.id] = nil
    end
    if entry.close then
      pcall(entry.close)
    end
    resolve(result)
    pcall(vim.cmd, 'redrawstatus')
    return true
  end
  --- Answers once with an outcome (modify_with_editor with content, the answers of
  --- ask_user, a refusal when the call moved on); extra holds optional fields such as
  --- acceptedHunks.
  function entry.answer(outcome, content, extra)
    local result = vim.tbl_extend('force', extra or {}, { outcome = outcome })
    if content ~= nil then
      result.content = content
    end
    return send(result)
  end
  --- Answers once with one of the offered choices (an item of M.choices): its id goes
  --- back as `choice`, so the server applies exactly the answer it offered; a choice
  --- without an id (a server that offered none) sends its outcome. A refusal marks the
  --- call "rejected".
  function entry.choose(choice, extra)
    if choice.outcome == 'cancel' or choice.outcome == 'reject_always' then
      if not entry.done and entry.tool_call_id then
        rejected[entry.tool_call_id] = true
      end
    end
    if choice.id == nil then
      return entry.answer(choice.outcome, nil, extra)
    end
    return send(vim.tbl_extend('force', extra or {}, { choice = choice.id }))
  end
  --- The choice with this id among those offered, or nil.
  function entry.offered(id)
    for _, c in ipairs(M.choices(params)) do
      if c.id == id then
        return c
      end
    end
    -- Without choices from the server, accepting and rejecting still work.
    if id == 'once' or id == 'reject' then
      local fallback = M.choices({})
      return fallback[id == 'once' and 1 or 2]
    end
    return nil
  end
  --- The user's refusal (a key, a choice, closing the diff): the call is "rejected".
  function entry.reject()
    return entry.choose(entry.offered('reject'))
  end
  if entry.id ~= nil then
    pending[entry.id] = entry
  end
  return entry
end

--- Whether the user rejected the tool call (answered its confirmation with a refusal).
---@param tool_call_id string
---@return boolean
function M.was_rejected(tool_call_id)
  return rejected[tool_call_id] == true
end

-- The keys (names in the keys option) of the diff tab's answers, by choice id.
local choice_keys = {
  once = 'accept',
  always = 'accept_always',
  always_save = 'accept_always_save',
  reject = 'reject',
  reject_always = 'reject_always',
}

local function set_keys(entry, buf, actions)
  local keys = config.options.keys
  local descs = {
    accept = 'agentls: accept the edit once',
    accept_always = 'agentls: accept, and allow every edit for this session',
    accept_always_save = 'agentls: accept always, and save the rule in your settings',
    accept_modified = 'agentls: accept my edited version of the proposal',
    reject = 'agentls: reject the edit',
    reject_always = 'agentls: reject, and every call like it for this session',
    accept_hunk = 'agentls: accept the hunk under the cursor',
    reject_hunk = 'agentls: reject the hunk under the cursor',
    submit_hunks = 'agentls: apply the accepted hunks only',
  }
  for name, fn in pairs(actions) do
    local lhs = keys[name]
    if lhs then
      vim.keymap.set('n', lhs, fn, { buffer = buf, nowait = true, desc = descs[name] })
    end
  end
end

local function winbar(text)
  return (text:gsub('%%', '%%%%'))
end

-- Opens the diff tab of an edit confirmation.
local function open_edit(entry)
  local d = entry.details
  local shown, fname = display_path(d)
  local orig_text = d.originalContent
  if orig_text == vim.NIL then
    orig_text = nil
  end
  local orig_lines = split_content(orig_text or '')
  local prop_lines, fmt = split_content(type(d.newContent) == 'string' and d.newContent or '')
  local proposal_text = join_content(prop_lines, fmt)

  local orig = api.nvim_create_buf(false, true)
  local prop = api.nvim_create_buf(false, true)
  local tag = tostring(entry.id or vim.uv.hrtime())
  -- Short names (they show in the tab line and the buffer list); a second confirmation
  -- of the same file gets a number.
  local base = vim.fn.fnamemodify(shown, ':t')
  local function name(buf, what)
    local n = 1
    while not pcall(api.nvim_buf_set_name, buf, ('agentls://%s/%s%s'):format(what, base, n > 1 and ('~' .. n) or '')) do
      n = n + 1
      if n > 50 then
        break
      end
    end
  end
  name(orig, 'current')
  name(prop, 'proposal')
  api.nvim_buf_set_lines(orig, 0, -1, false, orig_lines)
  for _, b in ipairs({ orig, prop }) do
    vim.bo[b].swapfile = false
    vim.bo[b].bufhidden = 'wipe'
    vim.bo[b].buflisted = false
  end
  vim.bo[orig].buftype = 'nofile'
  vim.bo[orig].modifiable = false
  vim.bo[prop].buftype = 'acwrite'
  vim.bo[prop].modified = false
  -- The proposal's first state is not something to undo back past.
  local ul = vim.bo[prop].undolevels
  vim.bo[prop].undolevels = -1
  api.nvim_buf_set_lines(prop, 0, -1, false, prop_lines)
  vim.bo[prop].undolevels = ul
  vim.bo[prop].modified = false

  local ft = fname and vim.filetype.match({ filename = fname, contents = prop_lines }) or nil
  if ft then
    vim.bo[orig].filetype = ft
    vim.bo[prop].filetype = ft
  end

  local prev_win = api.nvim_get_current_win()
  vim.cmd('tabnew')
  local tab = api.nvim_get_current_tabpage()
  local scratch = api.nvim_get_current_buf()
  local left = api.nvim_get_current_win()
  api.nvim_win_set_buf(left, orig)
  if scratch ~= orig and api.nvim_buf_is_valid(scratch) and api.nvim_buf_get_name(scratch) == '' then
    pcall(api.nvim_buf_delete, scratch, { force = true })
  end
  vim.cmd('rightbelow vsplit')
  local right = api.nvim_get_current_win()
  api.nvim_win_set_buf(right, prop)
  for _, w in ipairs({ left, right }) do
    api.nvim_win_call(w, function()
      vim.cmd('diffthis')
    end)
    vim.wo[w].foldlevel = 99
  end
  local keys = config.options.keys
  local hints = {}
  local hunks = type(d.hunks) == 'table' and #d.hunks > 0 and d.hunks or nil
  -- The server's choices, each on its key, with the server's label; "accept my
  -- version" and the per-hunk keys after "once", where they belong.
  local shown_modified = false
  for _, c in ipairs(M.choices(d)) do
    local key = keys[choice_keys[c.id or (c.outcome == 'cancel' and 'reject' or 'once')] or '']
    if key then
      hints[#hints + 1] = key .. ' ' .. c.label
    end
    if c.outcome == 'proceed_once' and not shown_modified then
      shown_modified = true
      for _, k in ipairs({
        { 'accept_modified', 'accept my version' },
        hunks and #hunks > 1 and { 'accept_hunk', 'hunk ok' } or nil,
        hunks and #hunks > 1 and { 'reject_hunk', 'hunk no' } or nil,
        hunks and #hunks > 1 and { 'submit_hunks', 'apply hunks' } or nil,
      }) do
        if keys[k[1]] then
          hints[#hints + 1] = keys[k[1]] .. ' ' .. k[2]
        end
      end
    end
  end
  local what = orig_text == nil and 'new file ' or ''
  vim.wo[left].winbar = winbar(('agentls · current %s%s'):format(what, shown))
  entry.hunk_choice = {}
  -- The proposal's winbar: the summary of the hunks decided so far (when they can be
  -- decided one by one), then the keys.
  local function set_winbar()
    if not api.nvim_win_is_valid(right) then
      return
    end
    local summary = hunks and #hunks > 1 and M.hunk_summary(#hunks, entry.hunk_choice) or nil
    vim.wo[right].winbar = winbar(
      ('agentls · proposal (editable) · %s%s'):format(summary and (summary .. ' · ') or '', table.concat(hints, ' · '))
    )
  end
  set_winbar()
  api.nvim_set_current_win(right)
  entry.tab, entry.original_buf, entry.proposal_buf = tab, orig, prop

  local function proposal()
    return join_content(api.nvim_buf_get_lines(prop, 0, -1, false), fmt)
  end
  local function modified()
    return api.nvim_buf_is_valid(prop) and proposal() ~= proposal_text
  end

  function entry.close()
    local in_tab = api.nvim_get_current_tabpage() == tab
    if api.nvim_tabpage_is_valid(tab) and #api.nvim_list_tabpages() > 1 then
      pcall(vim.cmd, 'tabclose ' .. api.nvim_tabpage_get_number(tab))
    end
    for _, b in ipairs({ orig, prop }) do
      if api.nvim_buf_is_valid(b) then
        pcall(api.nvim_buf_delete, b, { force = true })
      end
    end
    if in_tab and api.nvim_win_is_valid(prev_win) then
      pcall(api.nvim_set_current_win, prev_win)
    end
  end

  -- Per-hunk answers: the hunk under the cursor (by the line numbers of its @@ header,
  -- on either side) is marked accepted or rejected; submitting sends acceptedHunks.
  local hns = api.nvim_create_namespace('agentls.confirm.hunks')
  local function hunk_at(buf, lnum)
    for i, h in ipairs(hunks or {}) do
      local start, count = h.newStart, h.newLines
      if buf == orig then
        start, count = h.oldStart, h.oldLines
      end
      if type(start) == 'number' and type(count) == 'number' then
        local last = start + math.max(count, 1) - 1
        if count == 0 then
          -- A hunk with no lines on this side sits between start and start + 1.
          last = start + 1
        end
        if lnum >= start and lnum <= last then
          return i
        end
      end
    end
    return nil
  end
  local function mark_hunks()
    set_winbar()
    if not api.nvim_buf_is_valid(prop) then
      return
    end
    api.nvim_buf_clear_namespace(prop, hns, 0, -1)
    local n = api.nvim_buf_line_count(prop)
    for i, h in ipairs(hunks or {}) do
      local choice = entry.hunk_choice[i]
      if choice ~= nil then
        local row = math.min(math.max((h.newStart or 1) - 1, 0), n - 1)
        api.nvim_buf_set_extmark(prop, hns, row, 0, {
          virt_text = { { choice and '  ✓ hunk accepted' or '  ✗ hunk rejected', choice and 'DiagnosticOk' or 'DiagnosticError' } },
          virt_text_pos = 'eol',
        })
      end
    end
  end
  local function decide_hunk(choice)
    if not hunks then
      notify('this confirmation offers no hunks to decide one by one', vim.log.levels.WARN)
      return
    end
    local buf = api.nvim_get_current_buf()
    local i = hunk_at(buf, api.nvim_win_get_cursor(0)[1])
    if not i then
      notify('no hunk under the cursor', vim.log.levels.WARN)
      return
    end
    entry.hunk_choice[i] = choice
    mark_hunks()
    -- On to the next hunk, as ]c would.
    local nxt = hunks[i + 1]
    if nxt then
      local target = buf == orig and nxt.oldStart or nxt.newStart
      pcall(api.nvim_win_set_cursor, 0, { math.max(target, 1), 0 })
    end
  end

  -- Answers with the offered choice id, if the server offered it.
  local function choose(id)
    local c = entry.offered(id)
    if not c then
      notify(('this confirmation does not offer "%s"'):format(id), vim.log.levels.WARN)
      return
    end
    entry.choose(c)
  end
  -- An "always" answer applies the proposal as proposed: not with changes of the user's.
  local function choose_unmodified(id)
    if modified() then
      notify(
        ('you edited the proposal: press %s to accept your version, or undo your changes first'):format(
          keys.accept_modified or ':w'
        ),
        vim.log.levels.WARN
      )
      return
    end
    choose(id)
  end
  local actions = {
    accept = function()
      if modified() then
        entry.answer('modify_with_editor', proposal())
      else
        choose('once')
      end
    end,
    accept_always = function()
      choose_unmodified('always')
    end,
    accept_always_save = function()
      choose_unmodified('always_save')
    end,
    accept_modified = function()
      entry.answer('modify_with_editor', proposal())
    end,
    reject = function()
      entry.reject()
    end,
    reject_always = function()
      choose('reject_always')
    end,
    accept_hunk = function()
      decide_hunk(true)
    end,
    reject_hunk = function()
      decide_hunk(false)
    end,
    submit_hunks = function()
      if not hunks then
        notify('this confirmation offers no hunks to decide one by one', vim.log.levels.WARN)
        return
      end
      if modified() then
        notify('you edited the proposal: accept your version, or undo your changes to answer by hunk', vim.log.levels.WARN)
        return
      end
      local accepted = {}
      for i, h in ipairs(hunks) do
        if entry.hunk_choice[i] then
          accepted[#accepted + 1] = type(h.index) == 'number' and h.index or (i - 1)
        end
      end
      if next(entry.hunk_choice) == nil then
        notify(
          ('no hunk decided yet: %s accepts, %s rejects the hunk under the cursor'):format(
            keys.accept_hunk or '?',
            keys.reject_hunk or '?'
          ),
          vim.log.levels.WARN
        )
        return
      end
      if #accepted == 0 then
        entry.reject()
      elseif #accepted == #hunks then
        choose('once')
      else
        -- Undecided hunks are not applied.
        entry.choose(entry.offered('once'), { acceptedHunks = accepted })
      end
    end,
  }
  set_keys(entry, orig, actions)
  set_keys(entry, prop, actions)

  local group = api.nvim_create_augroup('agentls_confirm_' .. tag, { clear = true })
  api.nvim_create_autocmd('BufWriteCmd', {
    group = group,
    buffer = prop,
    desc = 'agentls: :w accepts the (possibly edited) proposal',
    callback = function()
      actions.accept()
    end,
  })
  -- Closing the diff without deciding is a refusal: no answer is never consent. The
  -- answer (which closes the rest of the tab) waits until the closing command is done.
  local function refuse_later()
    vim.schedule(function()
      entry.reject()
    end)
  end
  api.nvim_create_autocmd('BufWipeout', {
    group = group,
    buffer = prop,
    callback = function()
      refuse_later()
      pcall(api.nvim_del_augroup_by_id, group)
    end,
  })
  api.nvim_create_autocmd('BufWipeout', { group = group, buffer = orig, callback = refuse_later })
end

--- The summary of the per-hunk answers shown in the diff tab's winbar: each hunk's
--- number with ✓ (accepted), ✗ (rejected) or ? (not decided, so not applied by
--- submit_hunks), then how many are taken, e.g. "hunks 1✓ 2✗ 3? (1 of 3 taken)".
---@param n integer the number of hunks
---@param choice table<integer,boolean> the decided hunks, by number from 1
---@return string
function M.hunk_summary(n, choice)
  config.check('n', n, 'number')
  config.check('choice', choice, 'table')
  local parts, taken = {}, 0
  for i = 1, n do
    local c = choice[i]
    parts[#parts + 1] = i .. (c == true and '✓' or c == false and '✗' or '?')
    if c == true then
      taken = taken + 1
    end
  end
  local tail
  if next(choice) == nil then
    tail = 'none decided'
  else
    tail = ('%d of %d taken'):format(taken, n)
  end
  return ('hunks %s (%s)'):format(table.concat(parts, ' '), tail)
end

-- The answers a client may send as an outcome (docs/protocol.md, Outcome).
local outcomes = {
  proceed_once = true,
  proceed_always = true,
  proceed_always_server = true,
  proceed_always_tool = true,
  cancel = true,
  reject_always = true,
}

--- The answers offered for a confirmation, in the order to show them: exactly the
--- server's choices (details.choices: [{ id, outcome, label, covers?, persist? }], made
--- once by the server for every front end), each item { id, label, outcome, covers?,
--- persist? }; the id is what the answer sends back (a choice without one is answered
--- with its outcome). A choice with neither an id nor a known outcome, or without a
--- label, is left out. A server that sends none (it should not) gets "Allow once" and
--- "Reject", without ids.
---@param d table ConfirmDetails
---@return table[]
function M.choices(d)
  local items = {}
  for _, c in ipairs(type(d.choices) == 'table' and d.choices or {}) do
    local id = type(c) == 'table' and type(c.id) == 'string' and c.id ~= '' and c.id or nil
    if type(c) == 'table' and type(c.label) == 'string' and (id or outcomes[c.outcome]) then
      items[#items + 1] = {
        id = id,
        label = c.label,
        outcome = c.outcome,
        covers = type(c.covers) == 'string' and c.covers or nil,
        persist = type(c.persist) == 'string' and c.persist or nil,
      }
    end
  end
  if #items == 0 then
    return {
      { label = 'Allow once', outcome = 'proceed_once' },
      { label = 'Reject', outcome = 'cancel' },
    }
  end
  return items
end

local function prompt_for(d)
  local title = type(d.title) == 'string' and d.title or 'agentls'
  if d.type == 'execute' then
    local dir = type(d.directory) == 'string' and (' in ' .. vim.fn.fnamemodify(d.directory, ':~:.')) or ''
    return ('agentls: %s\nRun `%s`%s?'):format(title, tostring(d.command), dir)
  elseif d.type == 'mcp' then
    local args = d.arguments ~= nil and vim.json.encode(d.arguments) or ''
    return ('agentls: %s\nCall %s on MCP server %s %s?'):format(title, tostring(d.tool), tostring(d.server), args)
  elseif d.type == 'info' then
    local urls = type(d.urls) == 'table' and #d.urls > 0 and ('\n' .. table.concat(d.urls, '\n')) or ''
    local text = type(d.prompt) == 'string' and d.prompt or ''
    if text == '' or text == title then
      return ('agentls: %s%s'):format(title, urls)
    end
    return ('agentls: %s\n%s%s'):format(title, text, urls)
  end
  return 'agentls: ' .. title
end

local function open_select(entry)
  local d = entry.details
  vim.ui.select(M.choices(d), {
    prompt = prompt_for(d),
    kind = 'agentls.confirm',
    format_item = function(item)
      return item.label
    end,
  }, function(choice)
    if type(choice) ~= 'table' then
      -- Dismissed: no answer is never consent.
      entry.reject()
    else
      entry.choose(choice)
    end
  end)
end

--- Asks the questions of an ask_user confirmation (the model's ask_user, or an MCP
--- server's form) one after another: vim.ui.select for a single choice and yes/no,
--- vim.ui.input for free text and for several choices (labels separated by commas, as
--- the server joins them). An empty text leaves the question unanswered; dismissing any
--- of them dismisses them all.
local function open_questions(entry)
  local qs = type(entry.details.questions) == 'table' and entry.details.questions or {}
  local answers = {}
  local function ask(i)
    if entry.done then
      return
    end
    local q = qs[i]
    if q == nil then
      entry.answer('proceed_once', nil, { answers = answers })
      return
    end
    local header = type(q.header) == 'string' and q.header ~= '' and (q.header .. ': ') or ''
    local prompt = ('agentls: %s%s'):format(header, tostring(q.question))
    local function take(value)
      if value == nil then
        entry.answer('cancel')
        return
      end
      if value ~= '' then
        answers[tostring(i - 1)] = value
      end
      ask(i + 1)
    end
    local labels = {}
    if q.type == 'yesno' then
      labels = { 'Yes', 'No' }
    elseif q.type ~= 'text' then
      for _, o in ipairs(type(q.options) == 'table' and q.options or {}) do
        if type(o) == 'table' and type(o.label) == 'string' then
          labels[#labels + 1] = o.label
        end
      end
    end
    if #labels == 0 or q.multiSelect == true then
      if #labels > 0 then
        prompt = ('%s\n(one or more of: %s; separated by commas) '):format(prompt, table.concat(labels, ', '))
      elseif type(q.placeholder) == 'string' and q.placeholder ~= '' then
        prompt = ('%s (%s) '):format(prompt, q.placeholder)
      else
        prompt = prompt .. ' '
      end
      vim.ui.input({ prompt = prompt }, take)
      return
    end
    vim.ui.select(labels, { prompt = prompt, kind = 'agentls.ask_user' }, take)
  end
  ask(1)
end

--- Handler of the agentls/confirm request (a vim.lsp handler).
---@param params table ConfirmDetails
---@param ctx table handler context
---@return table|nil result, table|nil error
function M.handler(_, params, ctx)
  if type(params) ~= 'table' then
    return nil, vim.lsp.rpc_response_error(vim.lsp.protocol.ErrorCodes.InvalidParams, 'ConfirmDetails expected')
  end
  local co, is_main = coroutine.running()
  if not co or is_main then
    -- Not expected in Neovim 0.10–0.12; without a coroutine the answer cannot wait.
    notify('cannot ask for confirmation here; the call was refused', vim.log.levels.WARN)
    return { outcome = 'cancel' }
  end
  local entry = register(params, ctx and ctx.client_id, function(result)
    -- Resumed later, never before the yield below, even if the UI answered at once.
    vim.schedule(function()
      local ok, err = coroutine.resume(co, result)
      local client = ctx and vim.lsp.get_client_by_id(ctx.client_id)
      if not ok and client and not require('agentls.rpc').is_stopped(client) then
        notify('failed to answer a confirmation: ' .. tostring(err), vim.log.levels.ERROR)
      end
    end)
  end)
  local ok, err = pcall(function()
    if params.type == 'edit' then
      open_edit(entry)
    elseif params.type == 'ask_user' then
      open_questions(entry)
    else
      open_select(entry)
    end
  end)
  if not ok then
    notify('could not show the confirmation, refusing the call: ' .. tostring(err), vim.log.levels.ERROR)
    entry.answer('cancel')
  end
  pcall(vim.cmd, 'redrawstatus')
  return coroutine.yield()
end

--- The confirmations waiting for the user.
---@return table[] entries { id, type, title, tool_call_id, client_id, details, tab?, original_buf?, proposal_buf? }
function M.pending()
  local out = {}
  for _, e in pairs(pending) do
    out[#out + 1] = e
  end
  table.sort(out, function(a, b)
    return tostring(a.id) < tostring(b.id)
  end)
  return out
end

--- Answers a pending confirmation from code (custom UIs). Returns false if there is no
--- such confirmation or it was already answered.
---@param id string
---@param outcome string
---@param content string|nil for modify_with_editor
---@param extra table|nil { acceptedHunks?: integer[], persist?: 'user'|'workspace' }
---@return boolean
function M.answer(id, outcome, content, extra)
  local e = pending[id]
  if not e then
    return false
  end
  return e.answer(outcome, content, extra)
end

--- Answers a pending confirmation from code (custom UIs) with one of the choices it
--- offers (its `id`, as in M.choices). Returns false if there is no such confirmation,
--- it was already answered, or it does not offer that choice.
---@param id string
---@param choice string the choice's id: once, always, always_save, reject, reject_always, …
---@param extra table|nil { acceptedHunks?: integer[] } with once
---@return boolean
function M.choose(id, choice, extra)
  local e = pending[id]
  local c = e and e.offered(choice)
  if not c then
    return false
  end
  return e.choose(c, extra)
end

--- Refuses and closes every pending confirmation of the client (e.g. when it exits).
---@param client_id integer|nil nil for all
function M.cancel_all(client_id)
  for _, e in pairs(pending) do
    if client_id == nil or e.client_id == client_id then
      e.answer('cancel')
    end
  end
end

-- A call that moved on no longer needs an answer: it ended (cancelled, timed out), or
-- it runs because the confirmation was answered another way (agentls.confirm). The
-- answer sent then is ignored by the server.
local asking = { pending = true, awaiting_approval = true }
output.on_call_status(function(id, status)
  if asking[status] then
    return
  end
  for _, e in pairs(pending) do
    if e.tool_call_id == id then
      e.answer('cancel')
    end
  end
end)

return M
