-- Issue 14, the chat: the calls of one model turn are listed in the order the model asked
-- for them whatever order they are announced in, a refused call says "rejected", tool
-- output is folded under its call, the busy indicator (spinner line, winbar with mode
-- and model, statusline, vim.lsp.status()) shows while a prompt runs, :Agentls without
-- a prompt opens a prompt buffer (#buffer, #file:, @tool), and :AgentlsDiff /
-- :AgentlsUndoTurn show and take back a prompt's edits.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h') .. '/helpers.lua')
local api = vim.api

local function sender(client, session)
  return function(update)
    client.handlers['agentls/update'](nil, { session = session, update = update }, {
      client_id = client.id,
      method = 'agentls/update',
    })
  end
end

local function find_line(buf, pattern)
  for i, l in ipairs(H.lines(buf)) do
    if l:find(pattern, 1, true) then
      return i
    end
  end
end

local function chat_text()
  return require('agentls.chat').text()
end

local function wait_text(what, needle, ms)
  return H.wait(what .. ' (' .. needle .. ') in the chat', function()
    return chat_text():find(needle, 1, true)
  end, ms)
end

local function note_with(s)
  for _, n in ipairs(H.notes) do
    if n.msg:find(s, 1, true) then
      return n
    end
  end
end

local tests = {}

tests[#tests + 1] = {
  'calls announced out of order are listed in request order; updates land on their lines; output folds; rejected',
  false,
  function()
    local root = H.workspace({ ['a.txt'] = 'a\n' })
    local _, client = H.open(root, 'a.txt')
    local chat = require('agentls.chat').resume('order-1')
    local buf = chat.buf
    local send = sender(client, 'order-1')
    send({ kind = 'message_chunk', text = 'Reading three files.' })
    -- The scheduler validates the calls of a batch concurrently: they may be announced
    -- in any order.
    for _, n in ipairs({ 3, 1, 2 }) do
      send({
        kind = 'tool_call',
        toolCallId = 'order-1/call-' .. n,
        name = 'read_file',
        title = 'file ' .. n,
        status = 'pending',
        locations = {},
      })
    end
    local l1, l2, l3 = find_line(buf, 'file 1'), find_line(buf, 'file 2'), find_line(buf, 'file 3')
    H.truthy(l1 and l2 and l3, 'three tool lines')
    H.eq({ l2 - l1, l3 - l2 }, { 1, 1 }, 'in request order, one line each: ' .. vim.inspect(H.lines(buf)))
    H.eq(H.lines(buf)[l1 - 1], '', 'one separator line before the run of calls')
    H.eq(H.lines(buf)[l1 - 2], 'Reading three files.', 'the message above it')

    send({
      kind = 'tool_call_update',
      toolCallId = 'order-1/call-2',
      status = 'completed',
      content = { text = 'line one\nline two' },
      summary = 'Read 2 lines',
    })
    l1, l2, l3 = find_line(buf, 'file 1'), find_line(buf, 'file 2'), find_line(buf, 'file 3')
    H.contains(H.lines(buf)[l2], '· done · Read 2 lines', 'call 2 done with its summary')
    H.contains(H.lines(buf)[l1], '· pending', 'call 1 untouched')
    H.contains(H.lines(buf)[l3], '· pending', 'call 3 untouched')
    H.eq(vim.list_slice(H.lines(buf), l2 + 1, l2 + 4), { '  ```', '  line one', '  line two', '  ```' }, 'the output under call 2')
    local win = vim.fn.bufwinid(buf)
    H.truthy(api.nvim_win_call(win, function()
      return vim.fn.foldclosed(l2 + 2)
    end) ~= -1, 'the output is folded')
    H.eq(api.nvim_win_call(win, function()
      return vim.fn.foldclosed(l2)
    end), -1, 'the call line itself is not folded')
    H.contains(api.nvim_win_call(win, function()
      return vim.fn.foldtextresult(l2 + 1)
    end), 'output (2 lines)', 'the fold text')

    send({
      kind = 'tool_call_update',
      toolCallId = 'order-1/call-3',
      status = 'cancelled',
      error = { type = 'cancelled', message = 'The user declined to run this call.' },
    })
    send({
      kind = 'tool_call_update',
      toolCallId = 'order-1/call-1',
      status = 'cancelled',
      error = { type = 'cancelled', message = 'The call was cancelled.' },
    })
    H.contains(H.lines(buf)[find_line(buf, 'file 3')], '· rejected', 'a refused call')
    H.contains(H.lines(buf)[find_line(buf, 'file 1')], '· cancelled', 'a cancelled call')
    -- A later batch starts its own run after text.
    send({ kind = 'message_chunk', text = 'More.' })
    send({ kind = 'tool_call', toolCallId = 'order-1/call-5', name = 'ls', title = 'five', status = 'pending', locations = {} })
    send({ kind = 'tool_call', toolCallId = 'order-1/call-4', name = 'ls', title = 'four', status = 'pending', locations = {} })
    H.eq(find_line(buf, 'ls: five') - find_line(buf, 'ls: four'), 1, 'second batch in order')
    H.truthy(find_line(buf, 'ls: four') > find_line(buf, 'More.'), 'after the text')
  end,
}

tests[#tests + 1] = {
  'a model turn with three calls lists them in order; a rejected edit says rejected; short confirmation names',
  true,
  function()
    local root = H.workspace({ ['a.txt'] = 'A\n', ['b.txt'] = 'B\n', ['c.txt'] = 'C\n', ['greek.txt'] = 'alpha\nbeta\n' })
    local url = H.fake_gemini({
      turns = {
        {
          calls = {
            { name = 'read_file', args = { file_path = root .. '/a.txt' } },
            { name = 'read_file', args = { file_path = root .. '/b.txt' } },
            { name = 'read_file', args = { file_path = root .. '/c.txt' } },
            -- Read before edit: the session must have read the file it edits.
            { name = 'read_file', args = { file_path = root .. '/greek.txt' } },
          },
        },
        { calls = { { name = 'replace', args = { file_path = root .. '/greek.txt', old_string = 'beta', new_string = 'BETA' } } } },
        { text = 'All read.' },
      },
    })
    local buf = H.open(root, 'greek.txt', H.model_env(url))
    vim.cmd('Agentls read them')
    local chat = require('agentls.chat').current()
    local c = H.confirmation('edit')
    H.eq(api.nvim_buf_get_name(c.proposal_buf), 'agentls://proposal/greek.txt', 'short name of the proposal')
    H.eq(api.nvim_buf_get_name(c.original_buf), 'agentls://current/greek.txt', 'short name of the current text')
    H.press('gx')
    wait_text('the end of the turn', '_turn ended: end_turn')
    local a, b, cc = find_line(chat.buf, 'a.txt'), find_line(chat.buf, 'b.txt'), find_line(chat.buf, 'c.txt')
    H.truthy(a and b and cc and a < b and b < cc, 'a, b, c in order: ' .. chat_text())
    H.contains(H.lines(chat.buf)[find_line(chat.buf, '- replace')], '· rejected', 'the rejected edit')
    H.eq(H.lines(buf), { 'alpha', 'beta' }, 'the buffer is untouched')
  end,
}

tests[#tests + 1] = {
  'while a prompt runs: spinner line, winbar with mode and model, statusline, vim.lsp.status(); gone after',
  true,
  function()
    local url = H.fake_gemini({ turns = { { text = 'Starting a long answer', hang = true } } })
    local root = H.workspace({ ['c.txt'] = 'c\n' })
    H.open(root, 'c.txt', H.model_env(url, { settings = { approvalMode = 'auto_edit' } }))
    local src_win = api.nvim_get_current_win()
    local progress = {}
    api.nvim_create_autocmd('LspProgress', {
      group = api.nvim_create_augroup('agentls_test_progress', { clear = true }),
      callback = function(ev)
        local v = ev.data and ev.data.params and ev.data.params.value
        if type(v) == 'table' then
          progress[#progress + 1] = v.kind .. ':' .. tostring(v.message)
        end
      end,
    })
    require('agentls').prompt('write a lot', { bufnr = 0 })
    local chat = require('agentls.chat').current()
    wait_text('the first chunks', 'Starting a long answer')
    local ns = api.nvim_get_namespaces()['agentls.chat.spinner']
    local function spinner_lines()
      local out = {}
      for _, m in ipairs(api.nvim_buf_get_extmarks(chat.buf, ns, 0, -1, { details = true })) do
        for _, vl in ipairs(m[4].virt_lines or {}) do
          out[#out + 1] = vl[1][1]
        end
      end
      return table.concat(out, '\n')
    end
    H.contains(spinner_lines(), 'working…', 'the spinner line in the chat')
    local win = vim.fn.bufwinid(chat.buf)
    H.wait('the winbar with mode and model', function()
      local wb = vim.wo[win].winbar
      return wb:find('mode: auto_edit', 1, true) and wb:find('model: gemini', 1, true) and wb:find('working', 1, true)
    end)
    H.contains(require('agentls').statusline(), 'working', 'statusline component')
    H.contains(vim.lsp.status(), 'agentls: working', 'vim.lsp.status()')
    H.eq(progress[1], 'begin:working', 'LspProgress begin')
    -- The spinner moves.
    local frame = require('agentls.chat').spinner()
    H.wait('the next frame', function()
      return require('agentls.chat').spinner() ~= frame
    end, 10000)
    api.nvim_set_current_win(src_win)
    vim.cmd('AgentlsCancel')
    wait_text('the cancelled end', '_turn ended: cancelled')
    H.eq(spinner_lines(), '', 'no spinner line after the turn')
    H.not_contains(vim.wo[win].winbar, 'working', 'winbar after the turn')
    H.contains(vim.wo[win].winbar, 'mode: auto_edit', 'the mode stays in the winbar')
    H.eq(require('agentls').statusline(), 'agentls: mode: auto_edit', 'statusline after the turn: the mode only')
    H.eq(progress[#progress], 'end:cancelled', 'LspProgress end')
    H.eq(require('agentls.chat').spinner(), nil, 'no spinner')
  end,
}

tests[#tests + 1] = {
  ':Agentls without a prompt opens the chat with a prompt buffer; #buffer, #file:, @tool (also in :Agentls {prompt}); a bad reference keeps the text',
  true,
  function()
    local url = H.fake_gemini({ turns = { { text = 'Got it.' }, { text = 'Got it again.' } } })
    local tap = H.tap(url)
    local root = H.workspace({ ['a.txt'] = 'saved text\n', ['b.txt'] = 'B-CONTENT\n', ['c.txt'] = 'C-CONTENT\n' })
    local src = H.open(root, 'a.txt', H.model_env(tap.url))
    api.nvim_buf_set_lines(src, 0, 1, false, { 'unsaved line' })
    vim.cmd('Agentls')
    H.eq(#H.input_calls, 0, 'nothing asked before the chat opens')
    local chat = H.truthy(require('agentls.chat').current(), 'the chat')
    H.truthy(vim.fn.bufwinid(chat.buf) ~= -1, 'the chat is open')
    local pbuf = api.nvim_get_current_buf()
    H.contains(api.nvim_buf_get_name(pbuf), 'agentls://prompt/', 'the prompt buffer is current')
    H.eq(vim.bo[pbuf].filetype, 'markdown', 'markdown')
    H.truthy(vim.bo[pbuf].modifiable, 'editable')
    -- Completion of the references.
    H.eq(require('agentls.chat').complete(0, '#bu'), { '#buffer' }, '#buffer completes')
    H.wait('the tool names', function()
      return #require('agentls').tool_names() > 0
    end)
    H.truthy(vim.tbl_contains(require('agentls.chat').complete(0, '@read'), '@read_file'), '@tool completes')

    -- A reference that does not resolve: nothing is sent, nothing is lost.
    api.nvim_buf_set_lines(pbuf, 0, -1, false, { 'see #file:nope.txt' })
    H.press('<C-s>')
    H.truthy(note_with('#file:nope.txt: no such file'), 'the error is reported')
    H.truthy(api.nvim_buf_is_valid(pbuf), 'the prompt buffer stays')
    H.eq(H.lines(pbuf), { 'see #file:nope.txt' }, 'with its text')
    H.eq(chat_text():find('## You', 1, true), nil, 'nothing was sent')

    api.nvim_buf_set_lines(pbuf, 0, -1, false, { 'Explain #buffer', 'and #file:b.txt using @read_file.' })
    H.press('<C-s>')
    wait_text('the answer', '_turn ended: end_turn')
    H.eq(api.nvim_buf_is_valid(pbuf), false, 'the prompt buffer is gone once sent')
    local text = chat_text()
    H.contains(text, '## You\n\nExplain `a.txt`\nand `b.txt` using the `read_file` tool.', 'the prompt as sent')
    H.contains(text, 'Contents of a.txt:\n```', '#buffer attached')
    H.contains(text, '\nunsaved line\n```', '#buffer: the buffer text, unsaved changes too')
    H.contains(text, 'Contents of b.txt:', '#file attached')
    H.contains(tap.text(), 'unsaved line', 'the buffer text reached the model')
    H.contains(tap.text(), 'B-CONTENT', 'the file reached the model')
    H.contains(text, 'Got it.', 'the answer')

    -- `i` in the chat opens the prompt buffer too.
    api.nvim_set_current_win(vim.fn.bufwinid(chat.buf))
    H.press('i')
    H.contains(api.nvim_buf_get_name(0), 'agentls://prompt/', 'i opens the prompt buffer')
    H.press('q')

    -- :Agentls {prompt} expands the references as the prompt buffer does; a bad one
    -- sends nothing.
    api.nvim_set_current_win(vim.fn.bufwinid(src))
    H.notes = {}
    local sent = #tap.text()
    vim.cmd('Agentls compare with #file:nope.txt')
    H.truthy(note_with('#file:nope.txt: no such file'), 'the error is reported on the command line too')
    H.eq(#tap.text(), sent, 'nothing was sent')
    vim.cmd('Agentls compare with #file:c.txt')
    H.wait('the second answer', function()
      local _, n = chat_text():gsub('_turn ended: end_turn', '')
      return n == 2
    end)
    H.contains(chat_text(), '## You\n\ncompare with `c.txt`\n\nContents of c.txt:', 'the command-line prompt as sent')
    H.contains(tap.text():sub(sent + 1), 'C-CONTENT', 'the file reached the model')
  end,
}

tests[#tests + 1] = {
  ':AgentlsDiff shows the turn diff; :AgentlsUndoTurn takes it back; a file changed since is left, asked',
  true,
  function()
    local root = H.workspace({ ['greek.txt'] = 'alpha\nbeta\ngamma\n' })
    local path = root .. '/greek.txt'
    local url = H.fake_gemini({
      turns = {
        -- Each prompt reads the file before editing it (read before edit; the undo
        -- between them changed it).
        { calls = { { name = 'read_file', args = { file_path = path } } } },
        { calls = { { name = 'replace', args = { file_path = path, old_string = 'beta', new_string = 'BETA' } } } },
        { text = 'Done.' },
        { calls = { { name = 'read_file', args = { file_path = path } } } },
        { calls = { { name = 'replace', args = { file_path = path, old_string = 'gamma', new_string = 'GAMMA' } } } },
        { text = 'Done again.' },
      },
    })
    local buf = H.open(root, 'greek.txt', H.model_env(url, { settings = { approvalMode = 'yolo' } }))
    local src_win = api.nvim_get_current_win()
    vim.cmd('Agentls capitalize beta')
    wait_text('the end of the turn', '_turn ended: end_turn')
    H.eq(H.lines(buf), { 'alpha', 'BETA', 'gamma' }, 'the edit')

    local from_tab = api.nvim_get_current_tabpage()
    vim.cmd('AgentlsDiff')
    local dbuf = H.wait('the diff tab', function()
      local b = api.nvim_get_current_buf()
      return vim.bo[b].filetype == 'diff' and b
    end)
    H.contains(api.nvim_buf_get_name(dbuf), 'agentls://diff/turn-1', 'diff buffer name')
    local dt = table.concat(H.lines(dbuf), '\n')
    H.contains(dt, '-beta', 'the old line')
    H.contains(dt, '+BETA', 'the new line')
    H.contains(vim.wo.winbar, 'prompt 1 · <CR> opens the file', 'the diff tab says which prompt and its keys')
    -- <CR> on a changed line opens the file there, in a file window of the tab the diff
    -- was asked from (not the chat's window).
    local diff_tab = api.nvim_get_current_tabpage()
    vim.fn.search('^+BETA')
    H.press('<CR>')
    H.eq(api.nvim_get_current_tabpage(), from_tab, 'back in the tab of :AgentlsDiff')
    H.eq(api.nvim_get_current_buf(), buf, 'the file')
    H.eq(api.nvim_win_get_cursor(0)[1], 2, 'at the changed line')
    H.eq(api.nvim_get_current_win(), src_win, 'in the file window')
    api.nvim_set_current_tabpage(diff_tab)
    vim.fn.search('^ gamma')
    H.press('<CR>')
    H.eq({ api.nvim_get_current_buf(), api.nvim_win_get_cursor(0)[1] }, { buf, 3 }, 'a context line after the change')
    -- Asked again: the new diff replaces the old one (same name, no extra tab).
    local tabs = #api.nvim_list_tabpages()
    vim.cmd('AgentlsDiff')
    local dbuf2 = H.wait('the second diff tab', function()
      local b = api.nvim_get_current_buf()
      return b ~= dbuf and vim.bo[b].filetype == 'diff' and b
    end)
    H.eq(api.nvim_buf_get_name(dbuf2), 'agentls://diff/turn-1', 'the name of the new diff buffer')
    H.eq(api.nvim_buf_is_valid(dbuf), false, 'the old diff is gone')
    H.eq(#api.nvim_list_tabpages(), tabs, 'no extra tab')
    H.press('q')
    H.eq(vim.bo[api.nvim_get_current_buf()].filetype ~= 'diff', true, 'q closes the diff tab')

    local undone
    require('agentls').undo_turn({
      callback = function(err, r)
        undone = { err = err, r = r }
      end,
    })
    H.wait('the undo', function()
      return undone
    end)
    H.eq(undone.err, nil, 'undo error')
    H.eq(H.lines(buf), { 'alpha', 'beta', 'gamma' }, 'the buffer after the undo')
    H.eq(H.read(path), 'alpha\nbeta\ngamma\n', 'saved')
    H.truthy(note_with('undid prompt 1: 1 file reverted'), 'the message')

    -- A second prompt, then the user changes the file: nothing is undone, and asked.
    api.nvim_set_current_win(src_win)
    vim.cmd('Agentls capitalize gamma')
    -- The turn's end, not only its text: a session answering a prompt cannot be undone.
    H.wait('the second end', function()
      local _, n = chat_text():gsub('_turn ended: end_turn', '')
      return n == 2 and require('agentls.chat').current().turn.ended
    end)
    api.nvim_buf_set_lines(buf, 0, 1, false, { 'mine' })
    local asked
    H.select_choice = function(items, opts)
      H.eq(opts.kind, 'agentls.undo', 'select kind')
      asked = opts.prompt
      return items[2]
    end
    vim.cmd('AgentlsUndoTurn')
    H.wait('the question', function()
      return asked
    end)
    H.contains(asked, 'greek.txt', 'the changed file is named')
    H.eq(H.lines(buf), { 'mine', 'beta', 'GAMMA' }, 'nothing undone')
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
