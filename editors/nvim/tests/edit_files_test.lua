-- Edits of files that are not open, and new files: confirmed in the diff tab, they land
-- in buffers (so undo works there too) and, with save_after_edit, on disk.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h') .. '/helpers.lua')
local api = vim.api

local function find_buf(path)
  for _, b in ipairs(api.nvim_list_bufs()) do
    if api.nvim_buf_get_name(b) == path then
      return b
    end
  end
end

H.main(function()
  H.test('an edit of a file that is not open lands in a buffer and on disk', function()
    local root = H.workspace({ ['open.txt'] = 'open\n', ['closed/other.txt'] = 'x = 1\ny = 2\n' })
    local other = root .. '/closed/other.txt'
    H.open(root, 'open.txt')
    H.eq(find_buf(other), nil, 'other.txt is not open')
    local run = H.run_tool('replace', { file_path = other, old_string = 'y = 2', new_string = 'y = 3' })
    local c = H.confirmation('edit', run)
    H.eq(H.lines(c.original_buf), { 'x = 1', 'y = 2' }, 'left side')
    H.press('ga')
    local result = H.result(run)
    H.eq(result.status, 'success', 'result status (' .. vim.inspect(result) .. ')')
    H.eq(H.read(other), 'x = 1\ny = 3\n', 'file on disk')
    local b = H.truthy(find_buf(other), 'other.txt is in a buffer')
    H.eq(H.lines(b), { 'x = 1', 'y = 3' }, 'buffer')
    H.eq(vim.bo[b].modified, false, 'saved')
  end)

  H.test('a new file from write_file is confirmed against an empty side and written', function()
    local root = H.workspace({ ['open.txt'] = 'open\n' })
    local new = root .. '/pkg/new.txt'
    H.open(root, 'open.txt')
    local run = H.run_tool('write_file', { file_path = new, content = 'hello\nworld\n' })
    local c = H.confirmation('edit', run)
    H.truthy(c.details.originalContent == nil or c.details.originalContent == vim.NIL, 'originalContent is null for a new file')
    H.eq(H.lines(c.original_buf), { '' }, 'left side is empty')
    H.contains(vim.wo[api.nvim_tabpage_list_wins(c.tab)[1]].winbar, 'new file', 'left winbar')
    H.eq(H.lines(c.proposal_buf), { 'hello', 'world' }, 'right side')
    H.press('ga')
    local result = H.result(run)
    H.eq(result.status, 'success', 'result status (' .. vim.inspect(result) .. ')')
    H.eq(H.read(new), 'hello\nworld\n', 'file on disk')
  end)
end)
