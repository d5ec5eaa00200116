-- Neovim configuration of `make demo` (demo/run.sh): the agentls plugin from this
-- repository with the freshly built binary, and the demo prompt sent once the server is
-- ready. Nothing of the user's own configuration is loaded.
local plugin = (assert(vim.env.AGENTLS_NVIM_PLUGIN, 'AGENTLS_NVIM_PLUGIN is not set'))
vim.opt.runtimepath:prepend(plugin)
vim.opt.swapfile = false
vim.opt.termguicolors = true
vim.cmd('runtime plugin/agentls.lua')
vim.cmd('cd ' .. vim.fn.fnameescape(vim.fn.expand('%:p:h')))

require('agentls').setup({
  cmd = { (assert(vim.env.AGENTLS_BIN, 'AGENTLS_BIN is not set')) },
  root_markers = { 'go.mod', '.git' },
})

local prompt = vim.env.AGENTLS_DEMO_PROMPT
vim.api.nvim_create_autocmd('LspAttach', {
  once = true,
  callback = function(args)
    local client = vim.lsp.get_client_by_id(args.data.client_id)
    if not client or client.name ~= 'agentls' then
      return
    end
    vim.notify(
      'agentls demo: the edit opens in a diff tab (ga accepts, gx rejects); the shell command asks first. '
        .. ':AgentlsCancel stops, :qa quits.',
      vim.log.levels.INFO
    )
    vim.schedule(function()
      require('agentls').prompt(prompt)
    end)
  end,
})
