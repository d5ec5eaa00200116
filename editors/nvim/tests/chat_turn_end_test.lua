-- The session is free when its turn_end is sent, before the prompt's answer
-- (docs/protocol.md): a person who sends the next prompt as soon as "turn ended" shows
-- must not be told a prompt is still running, and the late answer of the earlier prompt
-- must not end the new one. The test sends each next prompt at that very moment: right
-- after the chat has handled turn_end, in the same turn of the event loop, when the
-- answer cannot have been handled yet.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h') .. '/helpers.lua')

local tests = {}

tests[#tests + 1] = {
  'the next prompt can be sent the moment turn_end is shown',
  function()
    local url = H.fake_gemini({
      turns = { { text = 'Answer one.' }, { text = 'Answer two.' }, { text = 'Answer three.' }, { text = 'Answer four.' } },
    })
    local root = H.workspace({ ['e.txt'] = 'e\n' })
    H.open(root, 'e.txt', H.model_env(url))
    local chat_mod = require('agentls.chat')
    local next_prompts = { 'prompt two', 'prompt three', 'prompt four' }
    local ended, sent, answers, sessions = 0, {}, {}, {}
    local original = chat_mod.handle_update
    chat_mod.handle_update = function(params, client_id)
      original(params, client_id)
      if type(params) == 'table' and type(params.update) == 'table' and params.update.kind == 'turn_end' then
        ended = ended + 1
        local chat = chat_mod.current()
        sessions[#sessions + 1] = chat and chat.session
        local text = table.remove(next_prompts, 1)
        if text then
          sent[#sent + 1] = chat_mod.prompt(text, {
            chat = chat,
            callback = function(err, r)
              answers[#answers + 1] = { err = err, r = r }
            end,
          }) ~= nil
        end
      end
    end
    local ok, err = pcall(function()
      vim.cmd('Agentls prompt one')
      H.wait('four turns to end', function()
        return ended == 4
      end)
      H.wait('the answers of the three later prompts', function()
        return #answers == 3
      end)
    end)
    chat_mod.handle_update = original
    assert(ok, err)
    H.eq(sent, { true, true, true }, 'every next prompt was sent')
    for _, n in ipairs(H.notes) do
      H.not_contains(n.msg, 'still running', 'no "still running" warning')
    end
    local chat = H.truthy(chat_mod.current(), 'the chat')
    local text = chat_mod.text()
    for _, a in ipairs({ 'Answer one.', 'Answer two.', 'Answer three.', 'Answer four.' }) do
      H.contains(text, a, 'every answer in the chat')
    end
    local _, turns = text:gsub('_turn ended: end_turn', '')
    H.eq(turns, 4, 'four turn ends shown, each once')
    for i = 2, 4 do
      H.eq(sessions[i], sessions[1], 'one session throughout')
    end
    H.truthy(chat.turn and chat.turn.ended, 'the last turn ended')
    H.eq(#chat_mod.busy(), 0, 'no chat is busy')
  end,
}

H.main(function()
  for _, t in ipairs(tests) do
    if H.fakegemini then
      H.test(t[1], t[2])
    else
      H.skip(t[1], 'no fake Gemini server (internal/fakegemini/cmd/fakegemini)')
    end
  end
end)
