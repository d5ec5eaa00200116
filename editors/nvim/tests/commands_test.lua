-- Commands as a user types them: :AgentlsMode alone offers the modes (the current one
-- marked, each with what it means) and sets the one chosen; :AgentlsCancel with nothing
-- running says so rather than nothing.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h') .. '/helpers.lua')

local function note_with(s)
  for _, n in ipairs(H.notes) do
    if n.msg:find(s, 1, true) then
      return n
    end
  end
end

H.main(function()
  H.test(':AgentlsMode without a mode offers them and sets the chosen one', function()
    local root = H.workspace({ ['a.txt'] = 'a\n' })
    local _, client = H.open(root, 'a.txt')
    H.wait('the starting mode', function()
      return require('agentls.status').mode(client.id) == 'default'
    end)
    local offered
    H.select_choice = function(items, opts)
      offered = { items = items, opts = opts }
      return 'auto_edit'
    end
    vim.cmd('AgentlsMode')
    H.truthy(offered, 'the modes were offered')
    H.eq(offered.items, { 'default', 'auto_edit', 'yolo', 'plan' }, 'the items')
    H.eq(offered.opts.kind, 'agentls.mode', 'select kind')
    H.contains(offered.opts.format_item('default'), 'default (current): edits, shell commands', 'the current mode, explained')
    H.contains(offered.opts.format_item('plan'), 'plan: only read-only tools run', 'another mode, explained')
    H.wait('the mode set', function()
      return require('agentls.status').mode(client.id) == 'auto_edit'
    end)
    H.truthy(note_with('approval mode: auto_edit'), 'the answer is shown')
    -- Dismissed: nothing changes.
    H.select_choice = function()
      return nil
    end
    vim.cmd('AgentlsMode')
    vim.wait(200)
    H.eq(require('agentls.status').mode(client.id), 'auto_edit', 'the mode after a dismissed choice')
  end)

  H.test(':AgentlsCancel with nothing running says so', function()
    local root = H.workspace({ ['b.txt'] = 'b\n' })
    H.open(root, 'b.txt')
    H.notes = {}
    vim.cmd('AgentlsCancel')
    H.truthy(note_with('nothing to cancel'), 'the message: ' .. vim.inspect(H.notes))
  end)
end)
