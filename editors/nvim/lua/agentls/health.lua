-- :checkhealth agentls
local M = {}

local health = vim.health

local function run(argv)
  local ok, res = pcall(function()
    return vim.system(argv, { text = true }):wait(5000)
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
end

return M
