-- The plugin defines no global variables: loading plugin/agentls.lua, setup(), attaching,
-- running a tool, the chat, the health check and the statusline leave _G and g: as they were.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h') .. '/helpers.lua')

H.main(function()
  H.test('the plugin defines no global variables', function()
    local root = H.workspace({ ['x.txt'] = 'x\n' })
    H.open(root, 'x.txt')
    local run = H.run_tool('read_file', { file_path = root .. '/x.txt' })
    H.eq(H.result(run).status, 'success', 'read_file')
    require('agentls.health')
    require('agentls').statusline()
    vim.cmd('AgentlsOutput')
    local chat = require('agentls.chat').resume('globals-1')
    require('agentls.chat').handle_update({ session = 'globals-1', update = { kind = 'thought_chunk', text = 'x' } }, nil)
    H.eq(require('agentls.chat').current(), chat, 'the chat')
    local g = vim.tbl_keys(_G)
    -- Neovim's own LSP client keeps state in g:_lsp_* (0.12); only those are allowed.
    local gv = vim.tbl_filter(function(name)
      return not name:match('^_lsp_')
    end, vim.tbl_keys(vim.fn.eval('g:')))
    local before, gv_before = vim.deepcopy(H.globals_before), vim.deepcopy(H.gvars_before)
    for _, t in ipairs({ g, gv, before, gv_before }) do
      table.sort(t)
    end
    H.eq(g, before, 'Lua globals')
    H.eq(gv, gv_before, 'g: variables')
  end)
end)
