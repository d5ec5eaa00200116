-- A shell command asks through vim.ui.select; its live output reaches the output buffer
-- while it runs, with progress in LspProgress / vim.lsp.status(); "always allow" stops the
-- next command of the same kind from asking; :AgentlsCancel stops a running command.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h') .. '/helpers.lua')
local api = vim.api

local function choose(outcome)
  return function(items, opts)
    H.eq(opts.kind, 'agentls.confirm', 'select kind')
    for _, item in ipairs(items) do
      if item.outcome == outcome then
        return item
      end
    end
    error('no choice with outcome ' .. outcome .. ' in ' .. vim.inspect(items))
  end
end

H.main(function()
  H.test('shell output streams into the output buffer while the command runs', function()
    local root = H.workspace({ ['README'] = 'hi\n' })
    H.open(root, 'README')

    local chunks = {}
    local run
    local group = api.nvim_create_augroup('agentls_test_shell', { clear = true })
    api.nvim_create_autocmd('User', {
      group = group,
      pattern = 'AgentlsUpdate',
      callback = function(ev)
        local u = ev.data.update
        if u.kind == 'tool_call_update' and type(u.output) == 'string' then
          chunks[#chunks + 1] = { text = u.output, before_result = run and not run.done }
        end
      end,
    })

    H.select_choice = choose('proceed_always')
    -- The command waits after its first line until the test has looked (it creates
    -- "release"): "still running" must not depend on how fast a loaded machine is.
    local command = 'echo out-1; until test -e release; do sleep 0.05; done; for i in 2 3; do echo out-$i; sleep 0.4; done; echo finished-marker'
    run = H.run_tool('run_shell_command', { command = command, description = 'count to three' })

    -- Live: the first line is in the output buffer while the command still runs.
    H.wait('the first output line in the output buffer', function()
      return require('agentls.output').text():find('out-1', 1, true)
    end)
    H.eq(run.done, false, 'the command still runs when its first line is shown')
    H.truthy(require('agentls').statusline():find('running run_shell_command', 1, true), 'statusline while running')
    local f = assert(io.open(root .. '/release', 'wb'))
    f:close()
    local result = H.result(run)
    H.eq(result.status, 'success', 'result status (' .. vim.inspect(result) .. ')')
    H.contains(result.output, 'finished-marker', 'result output')
    H.eq(require('agentls').statusline(), '', 'statusline after the run')

    H.eq(#H.select_calls, 1, 'vim.ui.select calls')
    H.contains(H.select_calls[1].opts.prompt, command, 'the prompt shows the command')
    H.eq(H.select_error, nil, 'select error')

    local text = require('agentls.output').text()
    for _, want in ipairs({ 'out-1', 'out-2', 'out-3', 'finished-marker' }) do
      H.contains(text, want, 'output buffer')
    end
    H.truthy(#chunks > 0, 'tool_call_update output chunks were received')
    H.truthy(chunks[1].before_result, 'the first chunk arrived before the result')
    local streamed = {}
    for _, ch in ipairs(chunks) do
      streamed[#streamed + 1] = ch.text
    end
    H.contains(table.concat(streamed), 'out-2', 'streamed chunks')

    -- :AgentlsOutput shows the buffer.
    vim.cmd('AgentlsOutput')
    H.eq(api.nvim_get_current_buf(), require('agentls.output').buf(), 'output window')
    vim.cmd('wincmd p')

    -- Always allowed now: the same command kind runs without asking.
    local again = H.run_tool('run_shell_command', { command = 'echo again-marker' })
    local r2 = H.result(again)
    H.eq(r2.status, 'success', 'second command (' .. vim.inspect(r2) .. ')')
    H.eq(#H.select_calls, 1, 'no second prompt')
    H.contains(require('agentls.output').text(), 'again-marker', 'output buffer after the second command')
  end)

  H.test('a running command reports progress through LspProgress and vim.lsp.status()', function()
    local root = H.workspace({ ['README'] = 'hi\n' })
    local _, client = H.open(root, 'README')
    local progress, status_seen = {}, {}
    local group = api.nvim_create_augroup('agentls_test_progress', { clear = true })
    api.nvim_create_autocmd('LspProgress', {
      group = group,
      callback = function(ev)
        if ev.data and ev.data.client_id == client.id then
          local value = ev.data.params and ev.data.params.value or {}
          progress[#progress + 1] = value.kind
          local s = vim.lsp.status()
          if s ~= '' then
            status_seen[#status_seen + 1] = s
          end
        end
      end,
    })
    H.select_choice = choose('proceed_once')
    local run = H.run_tool('run_shell_command', { command = 'for i in 1 2 3; do echo tick-$i; sleep 0.4; done' })
    local result = H.result(run)
    H.eq(result.status, 'success', 'result status (' .. vim.inspect(result) .. ')')
    local ok = vim.wait(5000, function()
      return progress[#progress] == 'end'
    end, 10)
    H.truthy(ok, 'the progress ended (LspProgress kinds seen: ' .. vim.inspect(progress) .. ')')
    H.eq(progress[1], 'begin', 'first progress event (' .. vim.inspect(progress) .. ')')
    H.truthy(#status_seen > 0, 'vim.lsp.status() showed the progress')
    H.contains(table.concat(status_seen, '\n'), 'tick-', 'vim.lsp.status() carries the latest output line')
  end)

  H.test('a rejected command does not run', function()
    local root = H.workspace({ ['README'] = 'hi\n' })
    H.open(root, 'README')
    H.select_choice = choose('cancel')
    local run = H.run_tool('run_shell_command', { command = 'touch created-by-shell' })
    local result = H.result(run)
    H.eq(result.status, 'cancelled', 'result status (' .. vim.inspect(result) .. ')')
    H.eq(vim.uv.fs_stat(root .. '/created-by-shell'), nil, 'the command did not run')
  end)

  H.test(':AgentlsCancel stops a running command', function()
    local root = H.workspace({ ['README'] = 'hi\n' })
    H.open(root, 'README')
    H.select_choice = choose('proceed_once')
    local started = false
    local group = api.nvim_create_augroup('agentls_test_cancel', { clear = true })
    api.nvim_create_autocmd('User', {
      group = group,
      pattern = 'AgentlsUpdate',
      callback = function(ev)
        local u = ev.data.update
        if type(u.output) == 'string' and u.output:find('started-marker', 1, true) then
          started = true
        end
      end,
    })
    local run = H.run_tool('run_shell_command', { command = 'echo started-marker; sleep 30; echo not-reached' })
    H.wait('the command to start', function()
      return started
    end)
    local t0 = vim.uv.now()
    vim.cmd('AgentlsCancel')
    H.wait('the cancelled run to finish', function()
      return run.done
    end, 10000)
    H.truthy(vim.uv.now() - t0 < 10000, 'cancelled well before the command would end')
    H.out('     (cancel answered after ' .. (vim.uv.now() - t0) .. ' ms: ' .. vim.inspect(run.err or run.result.status) .. ')')
    if run.err then
      -- Cancelling the request itself: RequestCancelled (-32800) is a correct answer.
      H.eq(run.err.code, -32800, 'error code of a cancelled request (' .. vim.inspect(run.err) .. ')')
    else
      H.eq(run.result.status, 'cancelled', 'result status (' .. vim.inspect(run.result) .. ')')
      H.not_contains(run.result.output, 'not-reached', 'output')
    end
  end)
end)
