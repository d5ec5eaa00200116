-- Shared helpers of the headless Neovim tests. Each test file is run as
--   nvim --headless -n -u NONE -i NONE -c "luafile tests/<name>_test.lua"
-- with AGENTLS_BIN (the built agentls) and AGENTLS_NVIM_PLUGIN (editors/nvim) in the
-- environment, prints one line per test and a closing "RESULT <passed> <failed>" line,
-- and exits nonzero if any test failed.
local api = vim.api
local H = {}

H.passed, H.failed = 0, 0
H.timeout = tonumber(vim.env.AGENTLS_TEST_TIMEOUT or '') or 20000
H.plugin = assert(vim.env.AGENTLS_NVIM_PLUGIN, 'AGENTLS_NVIM_PLUGIN is not set')
H.bin = assert(vim.env.AGENTLS_BIN, 'AGENTLS_BIN is not set')
H.notes = {} -- every vim.notify message, in order

local function out(s)
  io.stdout:write(s .. '\n')
  io.stdout:flush()
end
H.out = out

-- Headless Neovim must never block on a prompt: every prompt is scripted or fails.
vim.notify = function(msg, level)
  H.notes[#H.notes + 1] = { msg = tostring(msg), level = level }
  if vim.env.AGENTLS_TEST_VERBOSE then
    out('  notify: ' .. tostring(msg))
  end
end
-- Every use of a deprecated Neovim API (vim.deprecate), whether or not this version
-- shows it yet: the next one would show it to users. H.test fails a test that made one.
H.deprecated = {}
local deprecate = vim.deprecate
vim.deprecate = function(name, alternative, version, plugin, ...)
  H.deprecated[#H.deprecated + 1] = ('%s (use %s; removed in %s)'):format(tostring(name), tostring(alternative), tostring(version))
  return deprecate(name, alternative, version, plugin, ...)
end
vim.fn.confirm = function(msg)
  error('unexpected vim.fn.confirm: ' .. tostring(msg))
end
H.select_calls = {}
H.select_choice = function()
  error('unexpected vim.ui.select')
end
vim.ui.select = function(items, opts, on_choice)
  H.select_calls[#H.select_calls + 1] = { items = items, opts = opts }
  local ok, choice = pcall(H.select_choice, items, opts)
  if not ok then
    H.select_error = choice
    on_choice(nil, nil)
    return
  end
  local index
  for i, item in ipairs(items) do
    if item == choice then
      index = i
    end
  end
  on_choice(choice, index)
end

H.input_calls = {}
H.input_value = function()
  error('unexpected vim.ui.input')
end
vim.ui.input = function(opts, on_confirm)
  H.input_calls[#H.input_calls + 1] = { opts = opts }
  local ok, value = pcall(H.input_value, opts)
  if not ok then
    H.input_error = value
    on_confirm(nil)
    return
  end
  on_confirm(value)
end

-- The global state before the plugin loads (globals_test.lua compares against it).
H.globals_before = vim.tbl_keys(_G)
H.gvars_before = vim.tbl_keys(vim.fn.eval('g:'))

vim.opt.runtimepath:prepend(H.plugin)
vim.cmd('runtime! plugin/agentls.lua')
vim.o.swapfile = false
vim.o.shortmess = vim.o.shortmess .. 'F'
vim.o.more = false

--- Fails the current test with msg.
function H.fail(msg)
  error(msg, 2)
end

function H.eq(actual, expected, what)
  if not vim.deep_equal(actual, expected) then
    error(('%s: expected %s, got %s'):format(what or 'value', vim.inspect(expected), vim.inspect(actual)), 2)
  end
end

function H.truthy(v, what)
  if not v then
    error((what or 'condition') .. ' does not hold', 2)
  end
  return v
end

function H.contains(haystack, needle, what)
  if type(haystack) ~= 'string' or not haystack:find(needle, 1, true) then
    error(('%s: %s does not contain %s'):format(what or 'text', vim.inspect(haystack), vim.inspect(needle)), 2)
  end
end

function H.not_contains(haystack, needle, what)
  if type(haystack) == 'string' and haystack:find(needle, 1, true) then
    error(('%s: %s contains %s'):format(what or 'text', vim.inspect(haystack), vim.inspect(needle)), 2)
  end
end

--- Waits (processing events) until cond() is truthy; fails the test on timeout.
function H.wait(what, cond, ms)
  local value
  local ok = vim.wait(ms or H.timeout, function()
    value = cond()
    return value
  end, 10)
  if not ok then
    error('timed out waiting for ' .. what, 2)
  end
  return value
end

--- Creates a workspace in a new temporary directory (with a .git marker) holding files.
---@param files table<string,string>
---@return string root
function H.workspace(files)
  local root = vim.fn.resolve(vim.fn.tempname())
  vim.fn.mkdir(root .. '/.git', 'p')
  for rel, content in pairs(files or {}) do
    local path = root .. '/' .. rel
    vim.fn.mkdir(vim.fn.fnamemodify(path, ':h'), 'p')
    local f = assert(io.open(path, 'wb'))
    f:write(content)
    f:close()
  end
  return root
end

function H.read(path)
  local f = io.open(path, 'rb')
  if not f then
    return nil
  end
  local s = f:read('*a')
  f:close()
  return s
end

function H.lines(buf)
  return api.nvim_buf_get_lines(buf, 0, -1, false)
end

local function stop(client, force)
  if vim.fn.has('nvim-0.11') == 1 then
    client:stop(force)
  else
    client.stop(force)
  end
end

--- Stops every client, wipes every buffer and closes every tab but one, so that the
--- next test starts clean.
function H.reset()
  -- Gracefully (shutdown, exit), so that a server that does not exit cleanly shows up as
  -- a "quit with exit code" notification; forcefully only if that does not work.
  for _, c in ipairs(vim.lsp.get_clients()) do
    stop(c, false)
  end
  local stopped = vim.wait(5000, function()
    return #vim.lsp.get_clients() == 0
  end, 20)
  if not stopped then
    for _, c in ipairs(vim.lsp.get_clients()) do
      stop(c, true)
    end
    vim.wait(5000, function()
      return #vim.lsp.get_clients() == 0
    end, 20)
    error('the agentls server did not stop after shutdown and exit')
  end
  vim.wait(100) -- lets the exit notification arrive
  pcall(vim.cmd, 'silent! tabonly!')
  pcall(vim.cmd, 'silent! only!')
  pcall(vim.cmd, 'enew!')
  for _, b in ipairs(api.nvim_list_bufs()) do
    if b ~= api.nvim_get_current_buf() then
      pcall(api.nvim_buf_delete, b, { force = true })
    end
  end
  H.select_calls = {}
  H.select_error = nil
  H.select_choice = function()
    error('unexpected vim.ui.select')
  end
  H.input_calls = {}
  H.input_error = nil
  H.input_value = function()
    error('unexpected vim.ui.input')
  end
  for _, job in ipairs(H.jobs) do
    pcall(vim.fn.jobstop, job)
  end
  H.jobs = {}
  for _, h in ipairs(H.handles) do
    if not h:is_closing() then
      h:close()
    end
  end
  H.handles = {}
end

H.jobs = {} -- processes started by a test, stopped by H.reset
H.handles = {} -- libuv handles opened by a test, closed by H.reset
H.skipped = 0

--- Reports a test that cannot run here, with the reason.
function H.skip(name, reason)
  H.skipped = H.skipped + 1
  out('SKIP ' .. name .. ': ' .. reason)
end

--- The fake Gemini server (internal/fakegemini/cmd/fakegemini, built by run.sh), or nil.
H.fakegemini = vim.env.AGENTLS_FAKEGEMINI ~= '' and vim.env.AGENTLS_FAKEGEMINI or nil

--- Starts the fake Gemini server with a script (a table, encoded as JSON, or the text
--- of the script file) and returns its base URL. H.reset stops it.
---@param script table|string
---@return string url
function H.fake_gemini(script)
  assert(H.fakegemini, 'AGENTLS_FAKEGEMINI is not set')
  local file = vim.fn.tempname() .. '.json'
  local f = assert(io.open(file, 'wb'))
  f:write(type(script) == 'string' and script or vim.json.encode(script))
  f:close()
  local url
  local stderr = {}
  local job = vim.fn.jobstart({ H.fakegemini, '-script', file, '-addr', '127.0.0.1:0' }, {
    on_stdout = function(_, data)
      if not url and data[1] and data[1] ~= '' then
        url = vim.trim(data[1])
      end
    end,
    on_stderr = function(_, data)
      vim.list_extend(stderr, data)
    end,
  })
  H.truthy(job > 0, 'fakegemini started')
  H.jobs[#H.jobs + 1] = job
  local ok = vim.wait(10000, function()
    return url
  end, 10)
  if not ok then
    error('the fake Gemini server printed no URL; stderr: ' .. table.concat(stderr, '\n'), 2)
  end
  return url
end

--- Puts a recording relay on loopback in front of the HTTP server at url (such as the
--- fake Gemini server): every byte a client sends through it is kept, so a test can see
--- what reached the server (the fake's own log has no request bodies). Returns
--- { url (of the relay), text() (all bytes received so far) }. H.reset closes it.
---@param url string http://HOST:PORT
---@return table
function H.tap(url)
  local host, port = url:match('^http://([^:/]+):(%d+)')
  assert(host, 'H.tap: not an http://HOST:PORT URL: ' .. url)
  local uv = vim.uv or vim.loop
  local rec = { chunks = {} }
  local function close(h)
    if not h:is_closing() then
      h:close()
    end
  end
  local server = uv.new_tcp()
  H.handles[#H.handles + 1] = server
  assert(server:bind('127.0.0.1', 0))
  assert(server:listen(64, function(err)
    if err then
      return
    end
    local down, up = uv.new_tcp(), uv.new_tcp()
    H.handles[#H.handles + 1] = down
    H.handles[#H.handles + 1] = up
    server:accept(down)
    local queue = {} -- what the client sent before the upstream connection was made
    up:connect(host, tonumber(port), function(cerr)
      if cerr then
        close(down)
        close(up)
        return
      end
      for _, d in ipairs(queue) do
        up:write(d)
      end
      queue = nil
      up:read_start(function(_, data)
        if data and not down:is_closing() then
          down:write(data)
        else
          close(up)
          close(down)
        end
      end)
    end)
    down:read_start(function(_, data)
      if not data then
        close(down)
        close(up)
        return
      end
      rec.chunks[#rec.chunks + 1] = data
      if queue then
        queue[#queue + 1] = data
      elseif not up:is_closing() then
        up:write(data)
      end
    end)
  end))
  rec.url = ('http://127.0.0.1:%d'):format(server:getsockname().port)
  function rec.text()
    return table.concat(rec.chunks)
  end
  return rec
end

--- The options of H.open that point the server at the fake Gemini server at url.
function H.model_env(url, extra)
  return vim.tbl_extend('force', {
    cmd_env = { GEMINI_API_KEY = 'test-key', GOOGLE_GEMINI_BASE_URL = url },
  }, extra or {})
end

--- Sets agentls up for the workspace root (cd root) with the built binary, opens path
--- (relative to root) and waits until the client is initialized and attached.
---@return integer buf, table client
function H.open(root, rel, opts)
  vim.cmd('cd ' .. vim.fn.fnameescape(root))
  require('agentls').setup(vim.tbl_extend('force', { cmd = { H.bin } }, opts or {}))
  vim.cmd('edit ' .. vim.fn.fnameescape(root .. '/' .. rel))
  local buf = api.nvim_get_current_buf()
  local client = H.wait('the agentls client to attach', function()
    local c = vim.lsp.get_clients({ name = 'agentls', bufnr = buf })[1]
    return c and c.initialized and c
  end)
  H.eq(client.root_dir or (client.config and client.config.root_dir), root, 'client root')
  return buf, client
end

--- Starts a tool run through the plugin; the returned box gets done/err/result.
function H.run_tool(name, args, bufnr)
  local box = { done = false }
  box.handle = require('agentls').run_tool(name, args, {
    bufnr = bufnr,
    callback = function(err, result)
      box.err, box.result, box.done = err, result, true
    end,
  })
  H.truthy(box.handle, 'run_tool started a request')
  return box
end

--- Waits for the run to finish and returns its ToolResult (fails on an RPC error).
function H.result(box, ms)
  H.wait('the tool result', function()
    return box.done
  end, ms)
  if box.err then
    error('the run failed at the protocol level: ' .. vim.inspect(box.err), 2)
  end
  H.truthy(type(box.result) == 'table', 'a ToolResult table')
  return box.result
end

--- Waits for a pending confirmation of the given type and returns it.
function H.confirmation(typ, box)
  return H.wait(('an agentls/confirm request of type %s'):format(typ), function()
    if box and box.done then
      error(('the run finished without asking for confirmation: %s'):format(vim.inspect(box.result or box.err)))
    end
    for _, e in ipairs(require('agentls.confirm').pending()) do
      if e.type == typ then
        return e
      end
    end
  end)
end

--- Types keys as the user would (mappings apply) and executes them now.
function H.press(keys)
  -- :silent keeps messages such as "1 line less" out of the test log.
  vim.cmd(('silent call feedkeys(%s, "mx")'):format(vim.fn.string(api.nvim_replace_termcodes(keys, true, false, true))))
end

--- Runs fn as one named test.
function H.test(name, fn)
  local deprecated_before = #H.deprecated
  local ok, err = xpcall(fn, debug.traceback)
  local ok2, err2 = pcall(H.reset)
  if ok and not ok2 then
    ok, err = false, 'after the test: ' .. tostring(err2)
  end
  if ok and #H.deprecated > deprecated_before then
    ok, err = false, 'a deprecated Neovim API was used: ' .. table.concat(vim.list_slice(H.deprecated, deprecated_before + 1), '; ')
  end
  for _, n in ipairs(H.notes) do
    if ok and n.msg:find('quit with exit code', 1, true) then
      ok, err = false, 'the server exited abnormally: ' .. n.msg
    end
  end
  if ok then
    H.passed = H.passed + 1
    out('ok   ' .. name)
  else
    H.failed = H.failed + 1
    out('FAIL ' .. name)
    out('     ' .. tostring(err):gsub('\n', '\n     '))
    if #H.notes > 0 then
      out('     notifications:')
      for _, n in ipairs(H.notes) do
        out('       ' .. n.msg:gsub('\n', '\n       '))
      end
    end
  end
  H.notes = {}
end

--- Prints the summary and exits: 0 if every test passed, 1 otherwise.
function H.finish()
  out(('RESULT %d %d'):format(H.passed, H.failed))
  vim.cmd((H.failed == 0 and H.passed > 0) and 'qall!' or 'cquit! 1')
end

--- Runs the tests of a file, making sure Neovim exits whatever happens.
function H.main(fn)
  local ok, err = xpcall(fn, debug.traceback)
  if not ok then
    H.failed = H.failed + 1
    out('FAIL (test file) ' .. tostring(err))
  end
  H.finish()
end

return H
