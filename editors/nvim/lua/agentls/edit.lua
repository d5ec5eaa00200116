-- workspace/applyEdit for agentls: every edit agentls sends has been approved (by the
-- user or the approval mode), so after applying it the touched buffers are saved
-- (option save_after_edit) and shell commands see them on disk.
--
-- Neovim 0.10's own handler applies a TextDocumentEdit whose version is older than the
-- buffer's by printing a message and reporting success with nothing changed; agentls
-- must learn that the edit did not land, so versions are checked here first and a
-- stale edit is refused as a whole.
local config = require('agentls.config')
local rpc = require('agentls.rpc')

local api = vim.api
local M = {}

-- The loaded buffer whose name is fname, without creating one.
local function find_buf(fname)
  local want = vim.fs.normalize(fname)
  for _, b in ipairs(api.nvim_list_bufs()) do
    if api.nvim_buf_is_loaded(b) then
      local name = api.nvim_buf_get_name(b)
      if name == fname or (name ~= '' and vim.fs.normalize(name) == want) then
        return b
      end
    end
  end
  return nil
end

--- The document version Neovim reports for bufnr in didOpen/didChange.
---@param bufnr integer
---@return integer
function M.buf_version(bufnr)
  local versions = vim.lsp.util.buf_versions
  local v = type(versions) == 'table' and versions[bufnr] or nil
  if v == nil then
    v = api.nvim_buf_get_changedtick(bufnr)
  end
  return v
end

-- Checks the versions of the TextDocumentEdits (the first per document, as Neovim
-- applies later ones to the already edited buffer). Returns an error message if any
-- document changed since the server computed the edit.
local function check_versions(edit)
  local seen = {}
  for _, change in ipairs(edit.documentChanges or {}) do
    local doc = type(change) == 'table' and change.kind == nil and change.textDocument or nil
    if doc and doc.uri and not seen[doc.uri] then
      seen[doc.uri] = true
      local v = doc.version
      if v ~= nil and v ~= vim.NIL then
        local fname = vim.uri_to_fname(doc.uri)
        local bufnr = find_buf(fname)
        local shown = vim.fn.fnamemodify(fname, ':~:.')
        if not bufnr then
          return ('%s is no longer open in the editor (edit computed for version %d)'):format(shown, v)
        end
        local current = M.buf_version(bufnr)
        if current ~= v then
          return ('%s changed in the editor since the edit was computed (edit for version %d, buffer at version %d)'):format(
            shown,
            v,
            current
          )
        end
      end
    end
  end
  return nil
end

-- Neovim 0.10 applies a text edit that starts on the line after the last one (the
-- position just past the final newline, which is where an append lands) by appending
-- the split text as lines, so "x\n" appended to a file adds "x" and an empty line. Such
-- an edit is rewritten as the equivalent insertion at the end of the last line.
--
-- A file that is not open and is empty or new is "" to the server, but Neovim loads it
-- as one empty line: inserting "a\nb\n" there would leave a third, empty line. Its
-- insertions drop their final line break, which the buffer's 'eol' puts back on write.
local function fix_appends(text_edits, uri, offset_encoding)
  local fname = vim.uri_to_fname(uri)
  local bufnr = find_buf(fname)
  if not bufnr then
    local st = vim.uv.fs_stat(fname)
    if not st or st.size == 0 then
      local out = {}
      for i, e in ipairs(text_edits) do
        local r = e.range
        if
          type(r) == 'table'
          and r.start.line == 0
          and r.start.character == 0
          and r['end'].line == 0
          and r['end'].character == 0
          and type(e.newText) == 'string'
          and e.newText:sub(-1) == '\n'
        then
          local text = e.newText:gsub('\r?\n$', '')
          e = vim.tbl_extend('force', e, { newText = text })
        end
        out[i] = e
      end
      return out
    end
    bufnr = vim.uri_to_bufnr(uri)
    vim.fn.bufload(bufnr)
  end
  local n = api.nvim_buf_line_count(bufnr)
  local last = api.nvim_buf_get_lines(bufnr, n - 1, n, false)[1] or ''
  local out = {}
  for i, e in ipairs(text_edits) do
    local r = e.range
    if
      type(r) == 'table'
      and r.start.line == n
      and r.start.character == 0
      and r['end'].line == n
      and r['end'].character == 0
      and type(e.newText) == 'string'
      and e.newText ~= ''
    then
      local ch = vim.lsp.util.character_offset(bufnr, n - 1, #last, offset_encoding)
      local pos = { line = n - 1, character = ch }
      local text = e.newText:gsub('\r\n', '\n')
      if text:sub(-1) == '\n' then
        text = text:sub(1, -2)
      end
      e = vim.tbl_extend('force', e, { range = { start = pos, ['end'] = pos }, newText = '\n' .. text })
    end
    out[i] = e
  end
  return out
end

-- Returns a copy of the edit with fix_appends applied to every text edit, and without
-- change annotations: Neovim 0.11+ reports the labels of an annotated edit it applies
-- with a multi-line "Applied changes:" message, which stops at "Press ENTER" after every
-- edit (and at each edit of an auto_edit run). Every agentls edit was approved before it
-- was sent, so the annotations tell the user nothing the chat does not show.
local function normalize(edit, offset_encoding)
  edit = vim.deepcopy(edit)
  edit.changeAnnotations = nil
  for _, change in ipairs(edit.documentChanges or {}) do
    if type(change) == 'table' then
      change.annotationId = nil
      if change.kind == nil and change.textDocument and change.edits then
        for _, e in ipairs(change.edits) do
          if type(e) == 'table' then
            e.annotationId = nil
          end
        end
        change.edits = fix_appends(change.edits, change.textDocument.uri, offset_encoding)
      end
    end
  end
  for uri, edits in pairs(edit.changes or {}) do
    edit.changes[uri] = fix_appends(edits, uri, offset_encoding)
  end
  return edit
end

-- The files an edit touches, in order, without duplicates.
local function touched_files(edit)
  local out, seen = {}, {}
  local function add(uri)
    if type(uri) == 'string' and not seen[uri] then
      seen[uri] = true
      out[#out + 1] = vim.uri_to_fname(uri)
    end
  end
  for _, change in ipairs(edit.documentChanges or {}) do
    if type(change) == 'table' then
      if change.kind == 'create' then
        add(change.uri)
      elseif change.kind == 'rename' then
        add(change.newUri)
      elseif change.kind == nil and change.textDocument then
        add(change.textDocument.uri)
      end
    end
  end
  for uri in pairs(edit.changes or {}) do
    add(uri)
  end
  return out
end

-- The files among files whose buffer holds changes of the user's that are not saved.
local function unsaved(files)
  local out = {}
  for _, fname in ipairs(files) do
    local bufnr = find_buf(fname)
    if bufnr and vim.bo[bufnr].modified then
      out[fname] = true
    end
  end
  return out
end

-- Writes the modified buffers of the given files, except those in skip (which held
-- unsaved changes of the user's before the edit: writing them would save those too).
-- Returns the messages of failures.
local function save(client, files, skip)
  local failures = {}
  for _, fname in ipairs(files) do
    local bufnr = find_buf(fname)
    if bufnr and not skip[fname] and vim.bo[bufnr].modified and vim.bo[bufnr].buftype == '' then
      -- The server must see the edit's didChange before the didSave.
      rpc.flush_changes(client, bufnr)
      local ok, err = pcall(api.nvim_buf_call, bufnr, function()
        vim.cmd('silent keepalt lockmarks update')
      end)
      if not ok then
        failures[#failures + 1] = ('%s: %s'):format(vim.fn.fnamemodify(fname, ':~:.'), tostring(err))
      end
    end
  end
  return failures
end

--- Handler of workspace/applyEdit for the agentls client.
---@param params table ApplyWorkspaceEditParams
---@param ctx table
---@return table ApplyWorkspaceEditResult
function M.handler(_, params, ctx)
  if type(params) ~= 'table' or type(params.edit) ~= 'table' then
    return { applied = false, failureReason = 'workspace/applyEdit without an edit' }
  end
  local client = vim.lsp.get_client_by_id(ctx.client_id)
  if not client then
    return { applied = false, failureReason = 'the agentls client is gone' }
  end
  local edit = params.edit
  local stale = check_versions(edit)
  if stale then
    vim.notify('agentls: edit refused: ' .. stale, vim.log.levels.WARN)
    return { applied = false, failureReason = stale }
  end
  local files = touched_files(edit)
  local dirty = unsaved(files)
  local ok, err = pcall(function()
    vim.lsp.util.apply_workspace_edit(normalize(edit, client.offset_encoding), client.offset_encoding)
  end)
  if not ok then
    local reason = rpc.error_message(err)
    vim.notify('agentls: edit failed: ' .. reason, vim.log.levels.ERROR)
    return { applied = false, failureReason = reason }
  end
  if config.options.save_after_edit then
    local failures = save(client, files, dirty)
    if #failures > 0 then
      vim.notify(
        'agentls: the edit was applied but could not be saved:\n' .. table.concat(failures, '\n'),
        vim.log.levels.WARN
      )
    end
    local kept = {}
    for _, fname in ipairs(files) do
      if dirty[fname] then
        kept[#kept + 1] = vim.fn.fnamemodify(fname, ':~:.')
      end
    end
    if #kept > 0 then
      -- One line, so that an auto_edit run does not stop at "Press ENTER".
      vim.notify(
        ('agentls: edit applied but not saved: %s had unsaved changes of yours (:w saves both)'):format(
          table.concat(kept, ', ')
        ),
        vim.log.levels.WARN
      )
    end
  end
  -- The edit's label is not echoed: the chat and :AgentlsOutput show every call, and a
  -- message per edit would pile up into "Press ENTER" during an auto_edit run.
  return { applied = true }
end

return M
