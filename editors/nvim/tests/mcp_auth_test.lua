-- :AgentlsMcpAuth sends agentls.mcpAuth for the server it names and notifies the outcome:
-- here the settings name no MCP server, so the server's error is shown; with no name the
-- command refuses to run.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h') .. '/helpers.lua')

H.main(function()
  H.test(':AgentlsMcpAuth shows why a server cannot be authorized', function()
    local root = H.workspace({ ['m.txt'] = 'm\n' })
    H.open(root, 'm.txt')
    local n = #H.notes
    vim.cmd('AgentlsMcpAuth github')
    local note = H.wait('the failure to be notified', function()
      for i = n + 1, #H.notes do
        if H.notes[i].msg:find('MCP authorization failed', 1, true) then
          return H.notes[i]
        end
      end
    end)
    H.eq(note.level, vim.log.levels.ERROR, 'an error')
    H.contains(note.msg, 'no MCP servers are configured', 'the server says why')

    local ok, err = pcall(vim.cmd, 'AgentlsMcpAuth')
    H.eq(ok, false, 'a server name is required')
    H.contains(tostring(err), 'Argument required', 'Neovim says so')
  end)
end)
