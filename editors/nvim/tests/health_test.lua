-- :checkhealth agentls runs without error and never shows the model key, and says how
-- the server contains shell commands (the sandbox part); options are
-- validated; the plugin defines no globals; the help file's tags are valid; the user
-- commands work.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h') .. '/helpers.lua')
local api = vim.api

local function health_text()
  vim.cmd('checkhealth agentls')
  return table.concat(api.nvim_buf_get_lines(0, 0, -1, false), '\n')
end

H.main(function()
  H.test(':checkhealth agentls reports binary, server, ripgrep and key without printing it', function()
    local secret = 'test-secret-key-do-not-print-4711'
    vim.env.GEMINI_API_KEY = secret
    local root = H.workspace({ ['main.go'] = 'package main\n' })
    H.open(root, 'main.go')
    local text = health_text()
    H.contains(text, 'agentls', 'health output')
    H.not_contains(text, 'ERROR', 'health output has no errors')
    H.contains(text, H.bin, 'binary path')
    H.contains(text, 'running for main.go', 'server state')
    H.contains(text, 'protocol 1', 'protocol version')
    -- Asked of the server (agentls.status): model, provider, mode and trust.
    H.contains(text, 'model: gemini-2.5-flash (provider gemini): prompts (:Agentls) are available', 'model')
    H.contains(text, 'approval mode: default', 'approval mode')
    H.contains(text, ('workspace %s is not trusted'):format(root), 'trust state')
    H.not_contains(text, 'no model', 'no contradiction')
    H.not_contains(text, secret, 'the key itself')
    H.not_contains(text, secret:sub(1, 12), 'a prefix of the key')
    if vim.fn.executable('rg') == 1 then
      H.contains(text, 'ripgrep', 'ripgrep line')
    end
    vim.env.GEMINI_API_KEY = nil
  end)

  H.test(':checkhealth agentls without a model key warns once, and says which mode and trust', function()
    vim.env.GEMINI_API_KEY = nil
    vim.env.GOOGLE_API_KEY = nil
    local root = H.workspace({ ['main.go'] = 'package main\n' })
    H.open(root, 'main.go', { settings = { approvalMode = 'auto_edit' } })
    local text = health_text()
    H.contains(text, 'no model (provider gemini): no API key', 'the warning')
    H.not_contains(text, 'gemini: no API key', 'the provider is named once')
    H.contains(text, 'GEMINI_API_KEY', 'the warning names the key variable')
    H.not_contains(text, 'prompts (:Agentls) are available', 'no "OK" about the model beside the warning')
    H.contains(text, 'approval mode: auto_edit', 'approval mode')
    H.contains(text, 'is not trusted', 'trust state')
  end)

  -- The sandbox part, from agentls.status's `sandbox`: this machine has Landlock and user
  -- namespaces; AGENTLS_SANDBOX_MACHINE in the server's environment forces the fallbacks.
  local function sandbox_part(text)
    local part = text:match('agentls: sandbox(.*)$')
    H.truthy(part, 'a sandbox part in:\n' .. text)
    return part
  end

  H.test(':checkhealth agentls: sandbox contained with namespaces is OK, with network and paths', function()
    local root = H.workspace({ ['main.go'] = 'package main\n' })
    H.open(root, 'main.go')
    local part = sandbox_part(health_text())
    H.contains(part, 'OK shell commands are contained (landlock+namespaces, network off)', 'the status')
    H.contains(part, 'network for commands: off', 'network')
    H.contains(part, 'writable: ' .. root, 'the workspace is writable')
    H.contains(part, 'read-only inside the workspace: .git/config, .git/hooks, .agentls', 'read-only paths, relative to the root')
    H.contains(part, 'hidden: ~/.ssh', 'hidden paths, home as ~')
    H.not_contains(part, 'WARNING', 'no warning')
    H.not_contains(part, 'ERROR', 'no error')
  end)

  H.test(':checkhealth agentls: Landlock only warns with the reason and what is missing', function()
    local root = H.workspace({ ['main.go'] = 'package main\n' })
    H.open(root, 'main.go', { cmd_env = { AGENTLS_SANDBOX_MACHINE = 'landlock' } })
    local part = sandbox_part(health_text())
    H.contains(part, 'WARNING shell commands are contained (landlock, network off); Landlock only (turned off by AGENTLS_SANDBOX_MACHINE=landlock)', 'the warning')
    H.contains(part, 'secrets such as ~/.ssh are not hidden', 'what Landlock alone does not do')
    H.contains(part, 'unset it', 'advice')
    H.contains(part, 'writable: ' .. root, 'writable paths')
    H.not_contains(part, 'read-only inside', 'no read-only paths without namespaces')
    H.not_contains(part, 'hidden:', 'nothing hidden without namespaces')
    H.not_contains(part, 'ERROR', 'no error')
  end)

  H.test(':checkhealth agentls: not contained is an error naming the missing machine features', function()
    local root = H.workspace({ ['main.go'] = 'package main\n' })
    H.open(root, 'main.go', { cmd_env = { AGENTLS_SANDBOX_MACHINE = 'none' } })
    local part = sandbox_part(health_text())
    H.contains(part, 'ERROR shell commands are not contained: Landlock: turned off by AGENTLS_SANDBOX_MACHINE=none; user namespaces: turned off', 'the error')
    H.contains(part, 'AGENTLS_SANDBOX_MACHINE is set in the environment agentls runs with', 'advice')
    H.contains(part, 'Commands run with all your rights', 'what it means')
    H.contains(part, 'network for commands: off', 'network')
    H.not_contains(part, 'writable:', 'no paths when nothing is contained')
  end)

  H.test(':checkhealth agentls: tools.sandbox false in the settings warns and says how to turn it on', function()
    local root = H.workspace({ ['main.go'] = 'package main\n' })
    H.open(root, 'main.go', { settings = { tools = { sandbox = false } } })
    local part = sandbox_part(health_text())
    H.contains(part, 'WARNING shell commands are not contained: tools.sandbox is false in the settings', 'the warning')
    H.contains(part, 'Set tools.sandbox to "auto"', 'advice')
    H.not_contains(part, 'ERROR', 'a choice, not an error')
  end)

  H.test(':checkhealth agentls without a server asks the binary how it would contain commands', function()
    local root = H.workspace({ ['main.go'] = 'package main\n' })
    vim.cmd('cd ' .. vim.fn.fnameescape(root))
    require('agentls').setup({ cmd = { H.bin }, autostart = false, cmd_env = { AGENTLS_SANDBOX_MACHINE = 'none' } })
    local text = health_text()
    H.contains(text, 'not running', 'server state')
    local part = sandbox_part(text)
    H.contains(part, 'asked of `agentls sandbox` for', 'where it comes from')
    H.contains(part, 'ERROR shell commands are not contained: Landlock: turned off by AGENTLS_SANDBOX_MACHINE=none', 'cmd_env reaches the binary')
  end)

  H.test(':checkhealth agentls without a binary reports an error, not a crash', function()
    require('agentls').setup({ cmd = { '/nonexistent/agentls' }, autostart = false })
    local text = health_text()
    H.contains(text, '/nonexistent/agentls not found', 'missing binary')
    H.contains(text, 'not running', 'server state')
  end)

  H.test('setup validates its options', function()
    local cases = {
      { { save_after_edit = 'yes' }, 'save_after_edit' },
      { { cmd = 'agentls' }, 'cmd' },
      { { cmd = {} }, 'cmd' },
      { { root_markers = { 1 } }, 'root_markers' },
      { { keys = { accept = 1 } }, 'keys.accept' },
      { { keys = { acept = 'x' } }, 'keys.acept' },
      { { sttings = {} }, 'sttings' },
      { { output = { height = 'big' } }, 'output.height' },
    }
    for _, case in ipairs(cases) do
      local ok, err = pcall(require('agentls').setup, case[1])
      H.eq(ok, false, 'setup(' .. vim.inspect(case[1]) .. ') fails')
      H.contains(tostring(err), case[2], 'error of setup(' .. vim.inspect(case[1]) .. ')')
    end
    H.eq(pcall(require('agentls').setup, { cmd = { H.bin }, keys = { accept = false }, autostart = false }), true, 'valid options')
  end)

  H.test('settings reach the server as initializationOptions', function()
    local root = H.workspace({ ['s.txt'] = 'one\n' })
    local path = root .. '/s.txt'
    local buf, client = H.open(root, 's.txt', { settings = { approvalMode = 'auto_edit' } })
    H.eq(client.config.init_options, { approvalMode = 'auto_edit' }, 'init_options')
    local run = H.run_tool('replace', { file_path = path, old_string = 'one', new_string = 'two' })
    local result = H.result(run)
    H.eq(result.status, 'success', 'edit in auto_edit mode (' .. vim.inspect(result) .. ')')
    H.eq(#H.select_calls, 0, 'nothing asked')
    H.eq(H.lines(buf), { 'two' }, 'buffer')
  end)

  H.test('the help file has valid tags', function()
    local dir = vim.fn.tempname()
    vim.fn.mkdir(dir .. '/doc', 'p')
    vim.fn.writefile(vim.fn.readfile(H.plugin .. '/doc/agentls.txt', 'b'), dir .. '/doc/agentls.txt', 'b')
    vim.cmd('helptags ' .. vim.fn.fnameescape(dir .. '/doc'))
    local tags = table.concat(vim.fn.readfile(dir .. '/doc/tags'), '\n')
    for _, tag in ipairs({ 'agentls.txt', 'agentls-options', ':AgentlsTool', ':AgentlsMode', ':AgentlsCancel', ':AgentlsOutput', 'agentls-confirm', ':Agentls', ':AgentlsSessions', ':AgentlsTrust', 'agentls-chat', 'agentls-chat-keys', 'agentls-trust', 'agentls.prompt()', 'agentls-code-actions', 'agentls-prompt-buffer', ':AgentlsDiff', ':AgentlsUndoTurn', ':AgentlsRedoTurn', 'agentls.undo_turn()', 'agentls.redo_turn()', 'agentls.turn_diff()', 'agentls-health-sandbox' }) do
      H.contains(tags, tag .. '\t', 'tags')
    end
  end)

  H.test(':AgentlsMode yolo and :AgentlsTool apply an edit without asking', function()
    local root = H.workspace({ ['y.txt'] = 'before\n' })
    local path = root .. '/y.txt'
    local buf = H.open(root, 'y.txt')
    vim.cmd('AgentlsMode yolo')
    H.wait('the mode to be set', function()
      for _, n in ipairs(H.notes) do
        if n.msg:find('approval mode: yolo', 1, true) then
          return true
        end
        if n.msg:find('failed', 1, true) then
          error(n.msg)
        end
      end
    end)
    vim.cmd(('AgentlsTool replace {"file_path": %s, "old_string": "before", "new_string": "after"}'):format(vim.json.encode(path)))
    H.wait('the edit', function()
      return H.lines(buf)[1] == 'after'
    end)
    H.eq(#require('agentls.confirm').pending(), 0, 'nothing asked')
    H.wait('the result notification', function()
      for _, n in ipairs(H.notes) do
        if n.msg:find('replace success', 1, true) then
          return true
        end
      end
    end)
    H.eq(H.read(path), 'after\n', 'file saved')
    -- Completion: tool names from the server, and the approval modes.
    H.wait('the tool list for completion', function()
      return #require('agentls').tool_names() > 0
    end)
    local tools = vim.fn.getcompletion('AgentlsTool re', 'cmdline')
    H.truthy(vim.tbl_contains(tools, 'replace') and vim.tbl_contains(tools, 'read_file'), 'tool completion ' .. vim.inspect(tools))
    H.eq(vim.fn.getcompletion('AgentlsMode a', 'cmdline'), { 'auto_edit' }, 'mode completion')
    vim.cmd('AgentlsMode bogus')
    H.contains(H.notes[#H.notes].msg, 'unknown approval mode', 'bad mode')
    vim.cmd('AgentlsTool replace {not json')
    H.contains(H.notes[#H.notes].msg, 'must be a JSON object', 'bad JSON')
  end)
end)
