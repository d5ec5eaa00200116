-- :checkhealth agentls
local M = {}

local health = vim.health

local function run(argv, env)
  local ok, res = pcall(function()
    return vim.system(argv, { text = true, env = env }):wait(5000)
  end)
  if not ok then
    return nil, tostring(res)
  end
  if res.code ~= 0 then
    return nil, vim.trim((res.stderr ~= '' and res.stderr) or res.stdout or ('exit ' .. res.code))
  end
  return vim.trim(res.stdout or ''), nil
end

local function first_line(s)
  return (s:match('^[^\n]*') or s)
end

-- Paths as a short list, comma-separated: relative to root when under it, else with the
-- home folder as ~.
local function paths(list, root)
  local out = {}
  for _, p in ipairs(type(list) == 'table' and list or {}) do
    p = tostring(p)
    if type(root) == 'string' and root ~= '' and p:sub(1, #root + 1) == root .. '/' then
      out[#out + 1] = p:sub(#root + 2)
    else
      out[#out + 1] = vim.fn.fnamemodify(p, ':~')
    end
  end
  return table.concat(out, ', ')
end

-- What to do about each missing machine feature the status names.
local function machine_advice(m, advice)
  m = type(m) == 'table' and m or {}
  local function env_off(err)
    return type(err) == 'string' and err:find('AGENTLS_SANDBOX_MACHINE', 1, true)
  end
  if env_off(m.landlockError) or env_off(m.userNamespacesError) then
    advice[#advice + 1] = 'AGENTLS_SANDBOX_MACHINE is set in the environment agentls runs with: unset it (it exists to try the fallbacks)'
    return advice
  end
  if m.os ~= nil and m.os ~= 'linux' then
    advice[#advice + 1] = ('agentls contains commands on Linux only; on %s they run as any command you start'):format(tostring(m.os))
    return advice
  end
  if (tonumber(m.landlockABI) or 0) == 0 then
    advice[#advice + 1] = ('Landlock is missing (%s): it needs Linux 5.13 or later built with CONFIG_SECURITY_LANDLOCK, with landlock in the lsm= boot parameter'):format(
      tostring(m.landlockError or 'not available')
    )
  end
  if m.userNamespaces == false then
    advice[#advice + 1] = ('unprivileged user namespaces are missing (%s): allow them with sysctl kernel.unprivileged_userns_clone=1 (Debian), kernel.apparmor_restrict_unprivileged_userns=0 (Ubuntu), or a container profile that permits unshare'):format(
      tostring(m.userNamespacesError or 'not available')
    )
  end
  return advice
end

-- The sandbox part of the health check, from the status's `sandbox` (docs/protocol.md,
-- agentls.status): how the workspace's shell commands are contained. root is the
-- workspace root; source, when given, says where the status comes from.
local function report_sandbox(sb, root, source)
  health.start('agentls: sandbox')
  if source then
    health.info('asked of ' .. source)
  end
  if type(sb) ~= 'table' then
    health.warn('the server does not report its sandbox', { 'Update agentls: `agentls sandbox` says how it contains commands' })
    return
  end
  local summary = tostring(sb.summary or (sb.contained and 'contained' or 'not contained'))
  local reason = type(sb.reason) == 'string' and sb.reason or ''
  if sb.contained and sb.level == 'landlock+namespaces' then
    health.ok('shell commands are ' .. summary)
  elseif sb.contained then
    -- Landlock alone; the summary ends with the reason.
    health.warn(
      'shell commands are ' .. summary,
      machine_advice(sb.machine, { 'Writes outside the writable paths are still refused, and the analysis keeps asking before writes to sensitive paths such as .git/hooks' })
    )
  else
    local advice = {}
    local off = reason:find('tools.sandbox is false', 1, true)
    if off then
      advice[#advice + 1] = 'Set tools.sandbox to "auto" (or remove it) in your settings to contain commands'
    else
      machine_advice(sb.machine, advice)
    end
    advice[#advice + 1] = 'Commands run with all your rights: only the analysis and your answers stand between them and your files'
    if off then
      health.warn('shell commands are ' .. summary, advice)
    else
      health.error('shell commands are ' .. summary, advice)
    end
  end
  health.info(('network for commands: %s'):format(sb.network and 'on' or 'off'))
  if sb.contained then
    if type(sb.writable) == 'table' and #sb.writable > 0 then
      health.info('writable: ' .. paths(sb.writable))
    end
    if type(sb.readOnly) == 'table' and #sb.readOnly > 0 then
      health.info('read-only inside the workspace: ' .. paths(sb.readOnly, root))
    end
    -- Only a mount namespace hides paths; Landlock alone cannot.
    if sb.level == 'landlock+namespaces' and type(sb.hidden) == 'table' and #sb.hidden > 0 then
      health.info('hidden: ' .. paths(sb.hidden))
    end
  end
  if sb.autoAllow then
    health.info('autoAllow: contained commands no rule names run without asking (default mode)')
  end
end

function M.check()
  local config = require('agentls.config')
  local rpc = require('agentls.rpc')
  local opts = config.options

  health.start('agentls: Neovim')
  if vim.fn.has('nvim-0.10') == 1 then
    local v = vim.version()
    health.ok(('Neovim %d.%d.%d'):format(v.major, v.minor, v.patch))
  else
    health.error('Neovim 0.10 or later is required')
  end

  health.start('agentls: binary')
  local cmd = opts.cmd
  local bin -- the agentls executable, when found
  if type(cmd) == 'function' then
    health.info('cmd is a function; the binary is not checked')
  else
    local path = vim.fn.exepath(cmd[1])
    if path == '' then
      health.error(('%s not found or not executable'):format(cmd[1]), {
        'Build it with `go build -o ~/.local/bin/agentls ./cmd/agentls` in the agentls repository',
        'or point setup({ cmd = { "/path/to/agentls" } }) at it',
      })
    else
      local out, err = run({ path, 'version' })
      bin = path
      if out then
        health.ok(('%s: %s'):format(path, first_line(out)))
      else
        health.error(('%s version failed: %s'):format(path, err or ''))
      end
    end
  end

  health.start('agentls: server')
  -- :checkhealth runs in its own buffer; the buffer the user came from is the alternate.
  local bufnr = vim.api.nvim_get_current_buf()
  if vim.bo[bufnr].buftype ~= '' then
    local alt = vim.fn.bufnr('#')
    if alt > 0 and vim.api.nvim_buf_is_valid(alt) then
      bufnr = alt
    end
  end
  local bufname = vim.api.nvim_buf_get_name(bufnr)
  bufname = bufname ~= '' and vim.fn.fnamemodify(bufname, ':~:.') or ('buffer ' .. bufnr)
  local attached = vim.lsp.get_clients({ name = rpc.name, bufnr = bufnr })
  local all = vim.lsp.get_clients({ name = rpc.name })
  if #attached > 0 then
    local c = attached[1]
    local exp = vim.tbl_get(c.server_capabilities or {}, 'experimental', 'agentls') or {}
    local info = require('agentls').server_info(c.id) or {}
    health.ok(
      ('running for %s: client %d, root %s, server %s %s, protocol %s'):format(
        bufname,
        c.id,
        tostring(c.root_dir or (c.config and c.config.root_dir)),
        tostring(info.name or '?'),
        tostring(info.version or '?'),
        tostring(exp.protocolVersion or '?')
      )
    )
    if exp.protocolVersion ~= require('agentls').protocol_version then
      health.warn('the server does not report protocol version 1; confirmations and live output may not work')
    end
  elseif #all > 0 then
    health.warn(('running (client %d) but not attached to %s'):format(all[1].id, bufname), {
      'Open a file under the workspace root, or run :AgentlsStart',
    })
  else
    health.warn('not running', {
      'Call require("agentls").setup() in your config, then open a file',
    })
  end
  health.info(('save_after_edit: %s'):format(tostring(opts.save_after_edit)))

  health.start('agentls: tools')
  local rg = vim.fn.exepath('rg')
  if rg ~= '' then
    local out = run({ rg, '--version' })
    health.ok(('ripgrep: %s'):format(out and first_line(out) or rg))
  else
    health.warn('ripgrep (rg) not found: grep_search uses the slower built-in search', {
      'Install ripgrep (Debian: apt install ripgrep)',
    })
  end

  health.start('agentls: model and consent')
  local c = attached[1] or all[1]
  if not c then
    -- No server to ask: what the environment of this Neovim says (the server may get
    -- another one through cmd_env or a settings file).
    local found = {}
    for _, name in ipairs({ 'GEMINI_API_KEY', 'GOOGLE_API_KEY', 'OPENAI_API_KEY' }) do
      local v = vim.env[name]
      if type(v) == 'string' and v ~= '' then
        found[#found + 1] = name
      end
    end
    health.info(
      #found > 0 and ('model key in the environment: %s (only its name is shown)'):format(table.concat(found, ', '))
        or 'no model key in this environment (GEMINI_API_KEY, GOOGLE_API_KEY, OPENAI_API_KEY); the server is not running to say more'
    )
    -- The binary says how it would contain commands here (`agentls sandbox --json`).
    if bin then
      local out, err = run({ bin, 'sandbox', '--json', '--root', vim.fn.getcwd() }, opts.cmd_env)
      local okj, sb = pcall(vim.json.decode, out or '')
      if okj and type(sb) == 'table' then
        report_sandbox(sb, vim.fn.getcwd(), ('`agentls sandbox` for %s (the server is not running)'):format(vim.fn.fnamemodify(vim.fn.getcwd(), ':~')))
      else
        health.start('agentls: sandbox')
        health.warn(('`agentls sandbox --json` failed: %s'):format(err or 'no JSON'))
      end
    end
    return
  end
  -- The server's own view (agentls.status): the settings and environment it runs with.
  local res = rpc.request_sync(c, 'workspace/executeCommand', {
    command = 'agentls.status',
    arguments = { vim.empty_dict() },
  }, 5000)
  local st = res and not res.err and type(res.result) == 'table' and res.result or nil
  if not st then
    health.warn(
      ('the server did not report its status: %s'):format(
        res and res.err and rpc.error_message(res.err) or 'no answer within 5 s'
      ),
      { 'Update agentls: agentls.status came with the Neovim plugin of the same version' }
    )
    return
  end
  if st.modelReady then
    health.ok(('model: %s (provider %s): prompts (:Agentls) are available'):format(tostring(st.model), tostring(st.provider)))
  else
    -- The server's reason may start with the provider's name, already said here.
    local provider = tostring(st.provider)
    local why = tostring(st.modelError or '?')
    if why:sub(1, #provider + 2) == provider .. ': ' then
      why = why:sub(#provider + 3)
    end
    health.warn(('no model (provider %s): %s'):format(provider, why), {
      'Tools work without a model; prompts need one',
      'Set the key in the environment Neovim starts agentls with (or setup({ cmd_env = ... })), or provider settings',
    })
  end
  health.info(('approval mode: %s (:AgentlsMode changes it)'):format(tostring(st.approvalMode)))
  if st.trusted then
    health.ok(('workspace %s is trusted%s'):format(
      tostring(st.root),
      type(st.trustSource) == 'string' and st.trustSource ~= '' and (' (' .. st.trustSource .. ')') or ''
    ))
  else
    health.info(('workspace %s is not trusted: its settings cannot loosen consent (:AgentlsTrust)'):format(tostring(st.root)))
  end
  report_sandbox(st.sandbox, st.root)
end

return M
