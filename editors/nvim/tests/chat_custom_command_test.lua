-- Custom commands (Gemini CLI's .toml commands in the user's configuration folder) in
-- the chat, against the real agentls and the fake Gemini server behind a recording
-- relay: agentls.listPrompts lists them under their own slash command, :Agentls
-- completes them, and `:Agentls /git:commit …` (the list cached or not) and a
-- top-level `/review` send the model the prompt agentls expands.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h') .. '/helpers.lua')

local prompts = require('agentls.prompts')

local function turns_ended()
  local _, n = require('agentls.chat').text():gsub('_turn ended: ', '')
  return n
end

local function model_got(tap, needle, from, what)
  local sent = tap.text():sub((from or 0) + 1)
  if not sent:find(needle, 1, true) then
    error(('%s: the %d bytes sent to the model do not contain %q'):format(what, #sent, needle), 2)
  end
end

local function write(path, text)
  vim.fn.mkdir(vim.fn.fnamemodify(path, ':h'), 'p')
  local f = assert(io.open(path, 'wb'))
  f:write(text)
  f:close()
end

H.main(function()
  local name = 'custom commands are listed, completed and sent for agentls to expand'
  if not H.fakegemini then
    return H.skip(name, 'no fake Gemini server (internal/fakegemini/cmd/fakegemini)')
  end
  H.test(name, function()
    local tap = H.tap(H.fake_gemini({ turns = { { text = 'One.' }, { text = 'Two.' }, { text = 'Three.' } } }))
    local config_home = vim.fn.tempname()
    write(config_home .. '/agentls/commands/git/commit.toml', 'description = "Writes a commit message"\nprompt = "Commit message for {{args}}."\n')
    write(config_home .. '/agentls/commands/review.toml', 'prompt = "Review the code."\n')
    local root = H.workspace({ ['notes.txt'] = 'notes\n' })
    local env = H.model_env(tap.url)
    env.cmd_env.XDG_CONFIG_HOME = config_home
    local _, client = H.open(root, 'notes.txt', env)

    -- Not cached yet: the command line is read as /server:name, and resolved against
    -- the list once fetched.
    vim.cmd('Agentls /git:commit the parser')
    H.wait('the first answer', function()
      return turns_ended() == 1
    end, 30000)
    model_got(tap, 'Commit message for the parser.', 0, 'the expanded command')
    H.contains(require('agentls.chat').text(), '/git:commit the parser', 'the command in the chat')

    local list = H.truthy(prompts.cached(client.id), 'the list is cached')
    local found
    for _, p in ipairs(list) do
      if p.command == '/git:commit' then
        found = p
      end
    end
    H.truthy(found and found.description == 'Writes a commit message', 'listed: ' .. vim.inspect(list))
    local names = vim.fn.getcompletion('Agentls /', 'cmdline')
    H.truthy(vim.tbl_contains(names, '/git:commit') and vim.tbl_contains(names, '/review'), 'completion: ' .. vim.inspect(names))

    -- Cached: sent as typed, quotes and all.
    local before = #tap.text()
    vim.cmd([[Agentls /git:commit the "quoted" fix]])
    H.wait('the second answer', function()
      return turns_ended() == 2
    end, 30000)
    model_got(tap, [[Commit message for the \"quoted\" fix.]], before, 'the expanded command, as typed')

    before = #tap.text()
    vim.cmd('Agentls /review')
    H.wait('the third answer', function()
      return turns_ended() == 3
    end, 30000)
    model_got(tap, 'Review the code.', before, 'the top-level command')
    H.eq(#H.select_calls, 0, 'nothing was offered')
  end)
end)
