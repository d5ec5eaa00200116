-- The approval mode as the server announces it (agentls/update current_mode_update):
-- the chat's winbar and require('agentls').statusline() follow every change the server
-- makes, whoever caused it (a command of another plugin, the settings, an "always"
-- answer that switches default to auto_edit), and vim.notify says so when this editor
-- did not ask; :AgentlsMode's own change is no news. A session's own mode
-- (agentls.setApprovalMode with the session) shows in its chat only.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h') .. '/helpers.lua')
local api = vim.api

local rpc = require('agentls.rpc')

local function notes_with(s)
  local out = {}
  for _, n in ipairs(H.notes) do
    if n.msg:find(s, 1, true) then
      out[#out + 1] = n
    end
  end
  return out
end

-- Sets the mode the way another plugin or a keymap would: the command itself, not
-- through the plugin's set_mode.
local function execute(client, args)
  local done
  rpc.request(client, 'workspace/executeCommand', { command = 'agentls.setApprovalMode', arguments = { args } }, function(err)
    done = { err = err }
  end)
  H.wait('the answer of agentls.setApprovalMode', function()
    return done
  end)
  H.eq(done.err, nil, 'agentls.setApprovalMode error')
end

local function winbar_has(win, s)
  return H.wait(('the winbar showing %q'):format(s), function()
    return vim.wo[win].winbar:find(s, 1, true)
  end)
end

local tests = {}

tests[#tests + 1] = {
  "the server's mode changes show in the winbar and statusline(), and are notified unless asked for",
  false,
  function()
    local root = H.workspace({ ['a.txt'] = 'a\n' })
    local buf, client = H.open(root, 'a.txt')
    local status = require('agentls.status')
    H.wait('the starting mode (announced after initialized)', function()
      return status.mode(client.id) == 'default'
    end)
    H.eq(#notes_with('approval mode'), 0, 'the starting mode is no news')
    H.eq(require('agentls').statusline(), '', 'statusline in the default mode')
    local c = require('agentls.chat').open({ client = client })
    local win = vim.fn.bufwinid(c.buf)
    winbar_has(win, 'mode: default')
    api.nvim_set_current_win(vim.fn.bufwinid(buf))

    -- Another plugin (or a keymap) runs the command: the server announces yolo.
    execute(client, { mode = 'yolo' })
    winbar_has(win, 'mode: yolo')
    H.eq(require('agentls').statusline(), 'agentls: mode: yolo', 'statusline of the file buffer')
    local n = H.wait('the notification of the change', function()
      return notes_with('the approval mode is now yolo')[1]
    end)
    H.contains(n.msg, 'nothing asks', 'the notification says what the mode means')

    -- The settings change (workspace/didChangeConfiguration).
    rpc.notify(client, 'workspace/didChangeConfiguration', { settings = { approvalMode = 'plan' } })
    winbar_has(win, 'mode: plan')
    H.eq(require('agentls').statusline(), 'agentls: mode: plan', 'statusline after the settings change')
    H.wait('the notification of the settings change', function()
      return notes_with('the approval mode is now plan')[1]
    end)

    -- :AgentlsMode: what was asked for is no news.
    H.notes = {}
    vim.cmd('AgentlsMode default')
    winbar_has(win, 'mode: default')
    H.wait('the answer of :AgentlsMode', function()
      return notes_with('approval mode: default')[1]
    end)
    H.eq(#notes_with('the approval mode is now'), 0, 'no "changed" notification for :AgentlsMode: ' .. vim.inspect(H.notes))
    H.eq(require('agentls').statusline(), '', 'statusline back in the default mode')

    -- An "always" answer to an edit allows every edit of its session (the editor's
    -- calls here) and leaves the approval mode as it was.
    H.notes = {}
    local run = H.run_tool('write_file', { file_path = root .. '/new.txt', content = 'new\n' })
    local conf = H.confirmation('edit', run)
    H.truthy(require('agentls.confirm').choose(conf.id, 'always'), 'answered')
    H.eq(H.result(run).status, 'success', 'the write')
    local again = H.result(H.run_tool('write_file', { file_path = root .. '/new2.txt', content = 'new\n' }))
    H.eq(again.status, 'success', 'the next edit of the session runs without asking: ' .. vim.inspect(again))
    winbar_has(win, 'mode: default')
    H.eq(require('agentls').statusline(), '', 'statusline after the "always" answer')
    H.eq(#notes_with('the approval mode is now'), 0, 'no mode change: ' .. vim.inspect(H.notes))
  end,
}

tests[#tests + 1] = {
  "a session's own mode shows in its chat; the workspace's elsewhere",
  true,
  function()
    local url = H.fake_gemini({ turns = { { text = 'Hello.' } } })
    local root = H.workspace({ ['b.txt'] = 'b\n' })
    local buf, client = H.open(root, 'b.txt', H.model_env(url))
    local done
    require('agentls').prompt('hi', {
      callback = function(err)
        done = { err = err }
      end,
    })
    H.wait('the answer', function()
      return done
    end)
    H.eq(done.err, nil, 'prompt error')
    local c = require('agentls.chat').current()
    local win = vim.fn.bufwinid(c.buf)
    winbar_has(win, 'mode: default')
    H.notes = {}
    execute(client, { mode = 'plan', session = c.session })
    winbar_has(win, 'mode: plan')
    H.eq(require('agentls.status').mode(client.id), 'default', 'the workspace mode stays')
    api.nvim_set_current_win(win)
    H.eq(require('agentls').statusline(), 'agentls: mode: plan', 'statusline in the chat')
    api.nvim_set_current_win(vim.fn.bufwinid(buf))
    H.eq(require('agentls').statusline(), '', 'statusline in the file buffer')
    H.eq(#notes_with('the approval mode is now'), 0, 'a session mode set on purpose is no news')
  end,
}

H.main(function()
  for _, t in ipairs(tests) do
    if t[2] and not H.fakegemini then
      H.skip(t[1], 'no fake Gemini server (internal/fakegemini/cmd/fakegemini)')
    else
      H.test(t[1], t[3])
    end
  end
end)
