-- The workspace root comes from the file, never from the current directory: the root
-- markers, else a project file, else the file's own folder; `:help agentls` lands on
-- the introduction.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h') .. '/helpers.lua')
local api = vim.api

--- Makes a folder with files (no .git) and returns it.
local function folder(files)
  local dir = vim.fn.resolve(vim.fn.tempname())
  for rel, content in pairs(files) do
    local path = dir .. '/' .. rel
    vim.fn.mkdir(vim.fn.fnamemodify(path, ':h'), 'p')
    local f = assert(io.open(path, 'wb'))
    f:write(content)
    f:close()
  end
  return dir
end

--- Opens path from another current directory and returns the client's root.
local function root_of(path)
  local elsewhere = folder({ ['x'] = '' })
  vim.cmd('cd ' .. vim.fn.fnameescape(elsewhere))
  require('agentls').setup({ cmd = { H.bin } })
  vim.cmd('edit ' .. vim.fn.fnameescape(path))
  local buf = api.nvim_get_current_buf()
  local client = H.wait('the agentls client to attach', function()
    local c = vim.lsp.get_clients({ name = 'agentls', bufnr = buf })[1]
    return c and c.initialized and c
  end)
  return client.root_dir or (client.config and client.config.root_dir)
end

H.main(function()
  H.test('a file outside any project is a workspace of its own folder', function()
    local dir = folder({ ['notes/todo.txt'] = 'todo\n' })
    H.eq(root_of(dir .. '/notes/todo.txt'), dir .. '/notes', 'root')
  end)

  H.test('a project file marks the root when there is no .git', function()
    local dir = folder({ ['go.mod'] = 'module m\n', ['pkg/a/a.go'] = 'package a\n' })
    H.eq(root_of(dir .. '/pkg/a/a.go'), dir, 'root')
  end)

  H.test('.git wins over a nearer project file', function()
    local dir = folder({ ['.git/HEAD'] = 'ref: refs/heads/main\n', ['web/package.json'] = '{}\n', ['web/index.js'] = '\n' })
    H.eq(root_of(dir .. '/web/index.js'), dir, 'root')
  end)

  H.test(':help agentls lands on the introduction', function()
    local dir = vim.fn.tempname()
    vim.fn.mkdir(dir .. '/doc', 'p')
    vim.fn.writefile(vim.fn.readfile(H.plugin .. '/doc/agentls.txt', 'b'), dir .. '/doc/agentls.txt', 'b')
    vim.cmd('helptags ' .. vim.fn.fnameescape(dir .. '/doc'))
    vim.opt.runtimepath:prepend(dir)
    vim.cmd('help agentls')
    H.contains(api.nvim_get_current_line(), '*agentls*', 'the line :help agentls shows')
    H.contains(api.nvim_get_current_line(), 'INTRODUCTION', 'the line :help agentls shows')
  end)
end)
