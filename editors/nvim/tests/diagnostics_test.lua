-- Issue 24, the editor's diagnostics for the agent, with a real language server: gopls
-- (scripts/gopls.sh, pinned; run.sh sets AGENTLS_GOPLS) beside agentls in Neovim. The
-- model (the fake Gemini server, its requests recorded through H.tap) edits main.go
-- to introduce a type error: its next request carries gopls's message for that line;
-- get_diagnostics answers with it; the edit that fixes it: the next request says it was
-- resolved; a shell command that breaks the open file on disk: Neovim re-reads it and
-- the next request carries gopls's message again. With the capability
-- turned off nothing is said and nothing waits. A prompt about a line carries the
-- diagnostics of that line.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h') .. '/helpers.lua')
local api = vim.api
local uv = vim.uv or vim.loop

local gopls = vim.env.AGENTLS_GOPLS ~= '' and vim.env.AGENTLS_GOPLS or nil
local main_go = 'package main\n\nfunc main() {\n\tvar n int = 1\n\t_ = n\n}\n'
-- gopls's message for line 4 once it holds `var n int = "x"`.
local type_error = '(untyped string constant) as int value in variable declaration'

--- The bodies of the model requests the tap saw, in order.
local function requests(tap)
  local out = {}
  for body in (tap.text() .. 'POST '):gmatch('(.-)POST ') do
    if body:find('streamGenerateContent', 1, true) or body:find('"contents"', 1, true) then
      out[#out + 1] = body
    end
  end
  return out
end

--- Starts gopls for buf in root and waits until it has loaded the package.
local function start_gopls(root, buf)
  local id = vim.lsp.start({
    name = 'gopls',
    cmd = { gopls },
    root_dir = root,
    cmd_env = { GOTOOLCHAIN = 'local', GOFLAGS = '' },
  }, { bufnr = buf })
  H.truthy(id, 'gopls started')
  local client = H.wait('gopls to initialize', function()
    local c = vim.lsp.get_client_by_id(id)
    return c and c.initialized and c
  end, 60000)
  -- A hover answers once the package is loaded.
  local rpc = require('agentls.rpc')
  local res = rpc.request_sync(client, 'textDocument/hover', {
    textDocument = { uri = vim.uri_from_bufnr(buf) },
    position = { line = 3, character = 5 },
  }, 60000, buf)
  H.truthy(res and res.result, 'gopls answers a hover: ' .. vim.inspect(res))
  return client
end

local function script(file, turns_extra)
  local turns = {
    { calls = { { name = 'read_file', args = { file_path = file } } } },
    { calls = { { name = 'replace', args = { file_path = file, old_string = 'var n int = 1', new_string = 'var n int = "x"' } } } },
  }
  for _, t in ipairs(turns_extra or {}) do
    turns[#turns + 1] = t
  end
  turns[#turns + 1] = { text = 'Done.' }
  return { turns = turns }
end

local function wait_turn_end()
  H.wait('the end of the turn', function()
    return require('agentls.chat').text():find('_turn ended: ', 1, true)
  end, 30000)
end

local tests = {}

tests[#tests + 1] = {
  "an edit's type error reaches the model's next request (and get_diagnostics); the fix is reported resolved; a shell command's change too",
  function()
    local root = H.workspace({ ['go.mod'] = 'module example.com/diag\n\ngo 1.26\n', ['main.go'] = main_go })
    local file = root .. '/main.go'
    local tap = H.tap(H.fake_gemini(script(file, {
      { calls = { { name = 'get_diagnostics', args = { file_path = file } } } },
      { calls = { { name = 'replace', args = { file_path = file, old_string = 'var n int = "x"', new_string = 'var n int = 2' } } } },
      -- A command that changes the open file on disk: Neovim re-reads it, gopls sees it.
      { calls = { { name = 'run_shell_command', args = { command = [[sed -i 's/int = 2/int = "y"/' main.go]] } } } },
    })))
    local buf = H.open(root, 'main.go', H.model_env(tap.url, { settings = { approvalMode = 'yolo' } }))
    start_gopls(root, buf)
    require('agentls.chat').prompt('break it, then fix it', {})
    wait_turn_end()
    local reqs = requests(tap)
    H.eq(#reqs, 6, 'six model requests')
    H.not_contains(reqs[2], type_error, 'before the edit')
    H.contains(reqs[3], 'main.go:4: error: cannot use', 'the request after the breaking edit')
    H.contains(reqs[3], type_error, "gopls's message")
    H.contains(reqs[3], '1 new error(s)', 'new')
    H.contains(reqs[4], 'The editor reports 1 error(s), 0 warning(s) in main.go', 'get_diagnostics')
    H.contains(reqs[5], 'reported before this change are resolved', 'the request after the fix')
    H.contains(reqs[6], 'main.go:4: error: cannot use', 'the request after the shell command')
    H.contains(api.nvim_buf_get_lines(buf, 3, 4, false)[1], 'var n int = "y"', "the buffer holds the command's change")
  end,
}

tests[#tests + 1] = {
  'with diagnostics turned off the model is told nothing and nothing waits',
  function()
    local root = H.workspace({ ['go.mod'] = 'module example.com/diag\n\ngo 1.26\n', ['main.go'] = main_go })
    local file = root .. '/main.go'
    local tap = H.tap(H.fake_gemini(script(file)))
    local buf = H.open(root, 'main.go', H.model_env(tap.url, {
      settings = { approvalMode = 'yolo' },
      diagnostics = { enabled = false },
    }))
    start_gopls(root, buf)
    local collected = 0
    local client = require('agentls.rpc').client(buf)
    local orig = client.handlers['agentls/collectDiagnostics']
    client.handlers['agentls/collectDiagnostics'] = function(...)
      collected = collected + 1
      return orig(...)
    end
    local start = uv.now()
    require('agentls.chat').prompt('break it', {})
    wait_turn_end()
    local took = uv.now() - start
    local reqs = requests(tap)
    H.eq(#reqs, 3, 'three model requests')
    H.not_contains(reqs[3], type_error, 'no diagnostics')
    H.not_contains(reqs[3], "editor's diagnostics", 'nothing said of diagnostics')
    H.eq(collected, 0, 'agentls/collectDiagnostics received')
    H.truthy(took < 1500, ('the prompt took %d ms: something waited'):format(took))
  end,
}

tests[#tests + 1] = {
  "a prompt about a line carries that line's diagnostics (fix this)",
  function()
    local broken = main_go:gsub('int = 1', 'int = "x"')
    local root = H.workspace({ ['go.mod'] = 'module example.com/diag\n\ngo 1.26\n', ['main.go'] = broken })
    local tap = H.tap(H.fake_gemini({ turns = { { text = 'Fixed.' } } }))
    local buf = H.open(root, 'main.go', H.model_env(tap.url))
    start_gopls(root, buf)
    H.wait("gopls's error on line 4", function()
      return #vim.diagnostic.get(buf, { lnum = 3 }) > 0
    end, 30000)
    api.nvim_win_set_cursor(0, { 4, 0 })
    require('agentls.chat').prompt('fix this', { bufnr = buf })
    wait_turn_end()
    local reqs = requests(tap)
    H.contains(reqs[1], 'The user asks about this diagnostic: line 4: error: cannot use', 'the prompt')
    H.contains(reqs[1], type_error, "gopls's message")
  end,
}

H.main(function()
  for _, t in ipairs(tests) do
    if not H.fakegemini then
      H.skip(t[1], 'the fake Gemini server was not built')
    elseif not gopls then
      H.skip(t[1], 'AGENTLS_GOPLS is not set (run.sh installs gopls with scripts/gopls.sh)')
    else
      H.test(t[1], t[2])
    end
  end
end)
