-- Issue 21, one consent core: the picker shows exactly the choices the real server
-- offers (its labels, in its order), the chosen one's id goes back, "always reject"
-- refuses the next call like it in the same session without asking, and "always"
-- lasts for its session only: a new session of the same server asks again.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h') .. '/helpers.lua')

-- What the server offers for a shell command whose program is echo (confirm.Policy.Offer).
local echo_labels = {
  'Allow once',
  'Always allow echo for this session',
  'Always allow echo, and save it in your settings',
  'Reject',
  'Always reject echo for this session',
}

-- A vim.ui.select stand-in that records the labels shown (through format_item, as a
-- picker shows them) and picks the item labelled label.
local function pick(label, shown)
  return function(items, opts)
    H.eq(opts.kind, 'agentls.confirm', 'select kind')
    local labels = vim.tbl_map(opts.format_item, items)
    shown[#shown + 1] = labels
    for i, l in ipairs(labels) do
      if l == label then
        return items[i]
      end
    end
    error(('no choice labelled %q among %s'):format(label, vim.inspect(labels)))
  end
end

-- Sends a prompt as a new session (agentls.prompt without session) and returns a box
-- that gets the PromptResult.
local function prompt_new_session(client, text)
  local box = {}
  require('agentls.rpc').request(client, 'workspace/executeCommand', {
    command = 'agentls.prompt',
    arguments = { { prompt = text } },
  }, function(err, result)
    box.err, box.result, box.done = err, result, true
  end)
  return box
end

local function prompt_result(box)
  H.wait('the prompt to finish', function()
    return box.done
  end)
  H.eq(box.err, nil, 'prompt error')
  return box.result
end

H.main(function()
  H.test('the picker shows the server\'s labels; "always reject" refuses the next echo without asking', function()
    local root = H.workspace({ ['README'] = 'hi\n' })
    H.open(root, 'README')
    local shown = {}
    H.select_choice = pick('Always reject echo for this session', shown)
    local first = H.result(H.run_tool('run_shell_command', { command = 'echo first-marker' }))
    H.eq(shown, { echo_labels }, 'the labels shown')
    H.eq(first.status, 'cancelled', 'refused (' .. vim.inspect(first) .. ')')

    -- The same program again, in the same session (the editor's calls): refused, not asked.
    local second = H.result(H.run_tool('run_shell_command', { command = 'echo second-marker' }))
    H.eq(#H.select_calls, 1, 'no second question')
    H.truthy(second.status ~= 'success', 'the second echo is refused: ' .. vim.inspect(second))
    -- The output buffer names each call (its header holds the command), but no echo
    -- printed its line.
    local out = require('agentls.output').text()
    H.not_contains(out, '\nfirst-marker\n', 'the first echo did not run')
    H.not_contains(out, '\nsecond-marker\n', 'the second echo did not run')

    -- Control: another program still asks, and runs when allowed.
    H.select_choice = pick('Allow once', shown)
    local other = H.result(H.run_tool('run_shell_command', { command = 'printf other-marker' }))
    H.eq(#H.select_calls, 2, 'printf is asked about')
    H.eq(other.status, 'success', 'printf runs (' .. vim.inspect(other) .. ')')
    H.contains(require('agentls.output').text(), '\nother-marker', 'printf printed')
    H.contains(shown[2][2], 'Always allow printf for this session', 'the labels name printf')
  end)

  if not H.fakegemini then
    H.skip('"always" lasts for its session only', 'AGENTLS_FAKEGEMINI is not set')
    return
  end

  H.test('"always" lasts for its session only: a new session asks again', function()
    local url = H.fake_gemini({
      turns = {
        -- The first session: echo is asked about and allowed always, then runs again
        -- without a question.
        { calls = { { name = 'run_shell_command', args = { command = 'echo s1-marker' } } } },
        { calls = { { name = 'run_shell_command', args = { command = 'echo s1-again-marker' } } } },
        { text = 'First session done.' },
        -- A new session: the same call is asked about again.
        { calls = { { name = 'run_shell_command', args = { command = 'echo s1-marker' } } } },
        { text = 'Second session done.' },
      },
    })
    local root = H.workspace({ ['a.txt'] = 'a\n' })
    local _, client = H.open(root, 'a.txt', H.model_env(url))
    local shown = {}
    H.select_choice = pick('Always allow echo for this session', shown)
    local r1 = prompt_result(prompt_new_session(client, 'run echo twice'))
    H.eq(r1.stopReason, 'end_turn', 'the first prompt (' .. vim.inspect(r1) .. ')')
    H.eq(shown, { echo_labels }, 'asked once, with the server\'s labels')
    H.contains(require('agentls.output').text(), '\ns1-again-marker\n', 'the second echo ran without asking')

    H.select_choice = pick('Reject', shown)
    local r2 = prompt_result(prompt_new_session(client, 'run echo again'))
    H.truthy(type(r2.session) == 'string' and r2.session ~= r1.session, 'a new session: ' .. vim.inspect({ r1.session, r2.session }))
    H.eq(#shown, 2, 'the new session asks about echo again')
    H.eq(shown[2], echo_labels, 'with the same labels')
  end)
end)
