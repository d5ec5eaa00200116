-- The model's ask_user in Neovim (issue 16, item 8): the plugin declares
-- experimental.agentls.askUser, so every question reaches the person — a choice and
-- yes/no through vim.ui.select, free text and several choices through vim.ui.input — and
-- the answers reach the model; dismissing a question dismisses them all and nothing is
-- answered for the person.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h') .. '/helpers.lua')

local function chat_text()
  return require('agentls.chat').text()
end

local questions = {
  { question = 'Which database?', header = 'DB', type = 'choice', options = {
    { label = 'Postgres', description = 'the server' },
    { label = 'SQLite', description = 'a file' },
  } },
  { question = 'Name the table', header = 'Table', type = 'text', placeholder = 'e.g. users' },
  { question = 'Add an index?', header = 'Index', type = 'yesno' },
  { question = 'Which columns?', header = 'Cols', type = 'choice', multiSelect = true, options = {
    { label = 'id', description = '' },
    { label = 'name', description = '' },
  } },
}

local function session(answer_select, answer_input)
  local root = H.workspace({ ['a.txt'] = 'a\n' })
  local tap = H.tap(H.fake_gemini({
    turns = {
      { calls = { { name = 'ask_user', args = { questions = questions } } } },
      { text = 'Thanks for the answers.' },
    },
  }))
  H.open(root, 'a.txt', H.model_env(tap.url))
  H.select_choice = answer_select
  H.input_value = answer_input
  vim.cmd('Agentls set up the database')
  H.wait('the end of the turn', function()
    return chat_text():find('_turn ended', 1, true)
  end, 30000)
  return tap
end

local tests = {}

tests[#tests + 1] = {
  'every kind of question is asked and the answers reach the model',
  function()
    local prompts = {}
    local tap = session(function(items, opts)
      prompts[#prompts + 1] = opts.prompt
      if vim.tbl_contains(items, 'Postgres') then
        return 'SQLite'
      end
      H.eq(items, { 'Yes', 'No' }, 'the yes/no question')
      return 'Yes'
    end, function(opts)
      prompts[#prompts + 1] = opts.prompt
      if opts.prompt:find('Which columns', 1, true) then
        H.contains(opts.prompt, 'one or more of: id, name', 'the choices of a multiple choice')
        return 'id, name'
      end
      H.contains(opts.prompt, 'e.g. users', 'the placeholder')
      return 'accounts'
    end)
    H.eq(#prompts, 4, 'four questions asked: ' .. vim.inspect(prompts))
    H.contains(prompts[1], 'DB: Which database?', 'the header and question')
    local sent = tap.text()
    -- The function response carries the answers by question index.
    for _, want in ipairs({ 'SQLite', 'accounts', 'Yes', 'id, name' }) do
      H.contains(sent, want, 'the answer sent to the model')
    end
    H.contains(chat_text(), 'Thanks for the answers.', 'the turn went on')
  end,
}

tests[#tests + 1] = {
  'dismissing a question dismisses them all; nothing is answered for the person',
  function()
    local asked = 0
    local tap = session(function()
      asked = asked + 1
      return nil -- <Esc> in the picker
    end, function()
      error('no question after a dismissed one')
    end)
    H.eq(asked, 1, 'one question asked')
    local sent = tap.text()
    H.contains(sent, 'dismissed', 'the model is told the questions were dismissed')
    H.eq(sent:find('SQLite', 1, true) ~= nil and sent:find('"answers"', 1, true) ~= nil, false, 'no answers sent')
  end,
}

H.main(function()
  for _, t in ipairs(tests) do
    if not H.fakegemini then
      H.skip(t[1], 'no fake Gemini server (internal/fakegemini/cmd/fakegemini)')
    else
      H.test(t[1], t[2])
    end
  end
end)
