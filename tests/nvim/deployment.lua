-- End to end with a real editor, through a workspace file: neovim opens
-- `repo.yaml` of a copy of the example organisation (its `grail.toml` binds
-- it as the repo layer of a deployment), shows exactly the findings that
-- `grail check` gives in that file, then edits `security.yaml` in another
-- buffer and sees what `repo.yaml` shows change.
--
-- nvim --headless --clean -l deployment.lua GRAIL ROOT EXPECTED LINE EDIT
-- EXPECTED: `grail check`'s findings in repo.yaml, `rule@line:column`,
-- sorted, joined by commas. LINE, EDIT: a line of security.yaml and what it
-- becomes, after which repo.yaml shows nothing.
-- Prints `ok` and exits 0, or prints `FAIL: ...` on stderr and exits 1.

local grail, root, expected, line, edit = arg[1], arg[2], arg[3], arg[4], arg[5]

local function fail(message)
  io.stderr:write("FAIL: " .. message .. "\n")
  os.exit(1)
end

-- What the editor shows in a buffer, in the form of EXPECTED.
local function shown(buf)
  local out = {}
  for _, d in ipairs(vim.diagnostic.get(buf)) do
    table.insert(out, string.format("%s@%d:%d", d.code, d.lnum + 1, d.col + 1))
  end
  table.sort(out)
  return table.concat(out, ",")
end

local config = { name = "grail", cmd = { grail, "lsp" }, root_dir = root, flags = { debounce_text_changes = 0 } }
vim.cmd.edit(vim.fn.fnameescape(root .. "/repo.yaml"))
local repo = vim.api.nvim_get_current_buf()
local id = vim.lsp.start(config, { bufnr = repo })
if not id then
  fail("vim.lsp.start did not start the server")
end
local client = vim.lsp.get_client_by_id(id)

if not vim.wait(30000, function() return shown(repo) == expected end, 20) then
  fail("repo.yaml shows `" .. shown(repo) .. "`; grail check gives `" .. expected .. "`")
end
-- And nothing else arrives later.
vim.wait(500)
if shown(repo) ~= expected then
  fail("repo.yaml then shows `" .. shown(repo) .. "`; grail check gives `" .. expected .. "`")
end

vim.cmd.edit(vim.fn.fnameescape(root .. "/security.yaml"))
local security = vim.api.nvim_get_current_buf()
vim.lsp.buf_attach_client(security, id)
local at
for i, text in ipairs(vim.api.nvim_buf_get_lines(security, 0, -1, true)) do
  if text == line then
    at = i
  end
end
if not at then
  fail("security.yaml has no line `" .. line .. "`")
end
vim.api.nvim_buf_set_lines(security, at - 1, at, true, { edit })

if not vim.wait(30000, function() return shown(repo) == "" end, 20) then
  fail("after the edit of security.yaml, repo.yaml still shows `" .. shown(repo) .. "`")
end

print("ok: repo.yaml showed " .. expected .. ", then nothing")
client:stop(true)
vim.wait(5000, function() return client:is_stopped() end, 20)
vim.cmd("qa!")
