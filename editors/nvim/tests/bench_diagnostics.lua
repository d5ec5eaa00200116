-- Figures for BENCHMARKS.md (bench/diagnostics.sh runs this through run.sh; not a test of
-- `make test`): the model's edits of main.go alternately break and fix a line, with gopls
-- beside agentls, AGENTLS_BENCH_EDITS edits (default 20) in one prompt. The server logs
-- each edit's settledMs (edit applied to the editor's report) into AGENTLS_BENCH_LOG;
-- the end-to-end time, from the edit applied in Neovim to the model's next request
-- arriving, is printed as "BENCH nvim e2e ms" lines.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h') .. '/helpers.lua')
local uv = vim.uv or vim.loop

local gopls = assert(vim.env.AGENTLS_GOPLS, 'AGENTLS_GOPLS is not set')
local log = assert(vim.env.AGENTLS_BENCH_LOG, 'AGENTLS_BENCH_LOG is not set')
local edits = tonumber(vim.env.AGENTLS_BENCH_EDITS or '') or 20
local main_go = 'package main\n\nfunc main() {\n\tvar n int = 1\n\t_ = n\n}\n'

H.main(function()
  H.test(('%d edits, each measured'):format(edits), function()
    local root = H.workspace({ ['go.mod'] = 'module example.com/diag\n\ngo 1.26\n', ['main.go'] = main_go })
    local file = root .. '/main.go'
    local turns = { { calls = { { name = 'read_file', args = { file_path = file } } } } }
    local good, bad = 'var n int = 1', 'var n int = "x"'
    for i = 1, edits do
      local from, to = good, bad
      if i % 2 == 0 then
        from, to = bad, good
      end
      turns[#turns + 1] = { calls = { { name = 'replace', args = { file_path = file, old_string = from, new_string = to } } } }
    end
    turns[#turns + 1] = { text = 'Done.' }
    -- Arrival times of the model's requests, through a relay in front of the fake.
    local url = H.fake_gemini({ turns = turns })
    local tap = H.tap(url)
    local arrivals = {}
    local read = 0
    local timer = uv.new_timer()
    timer:start(1, 1, function()
      while read < #tap.chunks do
        read = read + 1
        local chunk = tap.chunks[read]
        for _ in chunk:gmatch('POST /') do
          arrivals[#arrivals + 1] = uv.hrtime()
        end
      end
    end)
    local buf = H.open(root, 'main.go', H.model_env(tap.url, {
      settings = { approvalMode = 'yolo' },
      cmd = { H.bin, 'serve', '--log-file', log },
    }))
    local id = vim.lsp.start({ name = 'gopls', cmd = { gopls }, root_dir = root, cmd_env = { GOTOOLCHAIN = 'local', GOFLAGS = '' } }, { bufnr = buf })
    local gc = H.wait('gopls', function()
      local c = vim.lsp.get_client_by_id(id)
      return c and c.initialized and c
    end, 60000)
    require('agentls.rpc').request_sync(gc, 'textDocument/hover', { textDocument = { uri = vim.uri_from_bufnr(buf) }, position = { line = 3, character = 5 } }, 60000, buf)
    -- When each edit was applied in Neovim.
    local client = require('agentls.rpc').client(buf)
    local applied = {}
    local orig = client.handlers['workspace/applyEdit']
    client.handlers['workspace/applyEdit'] = function(...)
      local r1, r2 = orig(...)
      applied[#applied + 1] = uv.hrtime()
      return r1, r2
    end
    require('agentls.chat').prompt('break and fix it, again and again', {})
    H.wait('the end of the turn', function()
      return require('agentls.chat').text():find('_turn ended: ', 1, true)
    end, 60000 + edits * 3000)
    timer:stop()
    timer:close()
    H.eq(#applied, edits, 'edits applied')
    -- Request 1 is the prompt, 2 after read_file; the request after edit i is i + 2.
    for i, t in ipairs(applied) do
      local a = arrivals[i + 2]
      H.truthy(a, 'the request after edit ' .. i)
      H.out(('BENCH nvim e2e ms %.1f'):format((a - t) / 1e6))
    end
  end)
end)
