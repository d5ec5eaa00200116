-- Folder trust: :AgentlsTrust offers the two ways to trust (and "not now") and sends
-- agentls.trust, which records the choice in $XDG_CONFIG_HOME/agentls/trusted-folders.json;
-- :AgentlsTrust! revokes it; the server's own "Trust this folder?" question is shown with
-- exactly the choices it offers.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h') .. '/helpers.lua')

local trust_file = assert(vim.env.XDG_CONFIG_HOME, 'XDG_CONFIG_HOME is not set') .. '/agentls/trusted-folders.json'

-- The entries of the trust file, as { [path] = kind }.
local function entries()
  local text = H.read(trust_file)
  if not text or vim.trim(text) == '' then
    return {}
  end
  local decoded = vim.json.decode(text)
  H.eq(type(decoded), 'table', 'the trust file holds a JSON object')
  return decoded
end

local function wait_note(needle)
  return H.wait('a notification containing ' .. needle, function()
    for _, n in ipairs(H.notes) do
      if n.msg:find(needle, 1, true) then
        return n
      end
    end
  end)
end

H.main(function()
  H.test(':AgentlsTrust trusts the folder, :AgentlsTrust! revokes it', function()
    local root = H.workspace({ ['t.txt'] = 't\n' })
    H.open(root, 't.txt')
    H.select_choice = function(items, opts)
      H.eq(opts.kind, 'agentls.trust', 'select kind')
      H.eq(#items, 3, 'three choices')
      H.eq(items[3].scope, nil, 'the last is "not now"')
      H.contains(opts.format_item(items[1]), 'Trust this folder', 'first choice')
      return items[1]
    end
    local n = #H.notes
    vim.cmd('AgentlsTrust')
    H.wait('the server to answer', function()
      return #H.notes > n
    end)
    local note = H.notes[#H.notes]
    H.eq(note.level, vim.log.levels.INFO, 'the answer is information: ' .. note.msg)
    H.eq(entries()[root], 'TRUST_FOLDER', 'the folder in ' .. trust_file)

    n = #H.notes
    vim.cmd('AgentlsTrust!')
    H.wait('the server to answer the revocation', function()
      return #H.notes > n
    end)
    H.eq(H.notes[#H.notes].level, vim.log.levels.INFO, 'revoked: ' .. H.notes[#H.notes].msg)
    H.eq(entries()[root], nil, 'the folder is no longer trusted')
  end)

  H.test(':AgentlsTrust parent trusts the parent; "not now" sends nothing; bad scopes are refused', function()
    local root = H.workspace({ ['p.txt'] = 'p\n' })
    local parent = vim.fn.fnamemodify(root, ':h')
    H.open(root, 'p.txt')
    H.select_choice = function(items)
      return items[3]
    end
    local before = H.read(trust_file)
    vim.cmd('AgentlsTrust')
    vim.wait(300)
    H.eq(H.read(trust_file), before, '"not now" changes nothing')

    vim.cmd('AgentlsTrust bogus')
    H.contains(H.notes[#H.notes].msg, 'unknown trust scope', 'bad scope')

    local n = #H.notes
    vim.cmd('AgentlsTrust parent')
    H.wait('the server to answer', function()
      return #H.notes > n
    end)
    H.eq(entries()[parent], 'TRUST_PARENT', 'the parent in ' .. trust_file)
    n = #H.notes
    vim.cmd('AgentlsTrust revoke')
    H.wait('the revocation', function()
      return #H.notes > n
    end)
    H.eq(entries()[parent], nil, 'the parent entry is removed')
  end)

  H.test("a confirmation offers exactly the server's choices; without any, allow once or reject", function()
    local confirm = require('agentls.confirm')
    local offered = {
      { id = 'proceed_once', outcome = 'proceed_once', label = 'Trust this folder' },
      { id = 'proceed_always', outcome = 'proceed_always', label = 'Trust the parent folder' },
      { id = 'cancel', outcome = 'cancel', label = 'Not now' },
    }
    H.eq(confirm.choices({ type = 'info', title = 'Trust this folder?', choices = offered }), offered, 'choices')
    H.eq(
      confirm.choices({ type = 'info', title = 'Allow web_fetch?' }),
      { { label = 'Allow once', outcome = 'proceed_once' }, { label = 'Reject', outcome = 'cancel' } },
      'without choices: allow once or reject, answered by outcome'
    )
    H.eq(
      #confirm.choices({ type = 'info', choices = { { outcome = 'bogus', label = 'x' } } }),
      2,
      'a choice with neither an id nor a known outcome is left out'
    )
  end)

  H.test('the server asks "Trust this folder?" with its own choices', function()
    local root = H.workspace({
      ['q.txt'] = 'q\n',
      ['.agentls/settings.json'] = '{"approvalMode": "yolo"}\n',
    })
    local asked
    H.select_choice = function(items, opts)
      asked = { items = items, opts = opts }
      for _, item in ipairs(items) do
        if item.label == 'Trust this folder' then
          return item
        end
      end
      error('no "Trust this folder" among ' .. vim.inspect(items))
    end
    H.open(root, 'q.txt')
    H.wait('the trust question', function()
      return asked or H.select_error
    end)
    H.eq(H.select_error, nil, 'select error')
    H.eq(asked.opts.kind, 'agentls.confirm', 'asked as a confirmation')
    H.contains(asked.opts.prompt, 'Trust this folder?', 'the question')
    H.eq(vim.tbl_map(function(i)
      return i.label
    end, asked.items), { 'Trust this folder', 'Trust the parent folder', 'Not now' }, 'exactly the offered choices')
    H.wait('the folder to be trusted', function()
      return entries()[root] == 'TRUST_FOLDER'
    end)
  end)
end)
