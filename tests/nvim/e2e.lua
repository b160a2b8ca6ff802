-- End to end with a real editor: neovim starts `grail lsp`, opens a binding,
-- waits for the expected diagnostic, applies the server's code action and
-- sees the diagnostic cleared.
--
-- nvim --headless --clean -l e2e.lua GRAIL ROOT FILE LINE
-- LINE is the line (from 0) of the value the diagnostic is at. Prints `ok` and exits 0, or prints `FAIL: ...` on stderr and exits 1.

local grail, root, file, LINE = arg[1], arg[2], arg[3], tonumber(arg[4])
local RULE = "floor.min_checkers"

local function fail(message)
  io.stderr:write("FAIL: " .. message .. "\n")
  os.exit(1)
end

local function find(buf)
  for _, d in ipairs(vim.diagnostic.get(buf)) do
    if d.code == RULE then
      return d
    end
  end
end

vim.cmd.edit(vim.fn.fnameescape(file))
local buf = vim.api.nvim_get_current_buf()
local id = vim.lsp.start({ name = "grail", cmd = { grail, "lsp" }, root_dir = root }, { bufnr = buf })
if not id then
  fail("vim.lsp.start did not start the server")
end
local client = vim.lsp.get_client_by_id(id)

if not vim.wait(30000, function() return find(buf) ~= nil end, 20) then
  fail("no `" .. RULE .. "` diagnostic; got " .. vim.inspect(vim.diagnostic.get(buf)))
end
local d = find(buf)
if d.lnum ~= LINE or d.col ~= 18 then
  fail("the diagnostic is at " .. d.lnum .. ":" .. d.col .. ", not " .. LINE .. ":18")
end

local params = {
  textDocument = { uri = vim.uri_from_bufnr(buf) },
  range = { start = { line = d.lnum, character = d.col }, ["end"] = { line = d.end_lnum, character = d.end_col } },
  context = { diagnostics = { d.user_data.lsp } },
}
local response = client:request_sync("textDocument/codeAction", params, 30000, buf)
if not response or response.err or not response.result or #response.result == 0 then
  fail("no code action: " .. vim.inspect(response))
end
local action = response.result[1]
vim.lsp.util.apply_workspace_edit(action.edit, client.offset_encoding)

local line = vim.api.nvim_buf_get_lines(buf, LINE, LINE + 1, true)[1]
if line ~= "    min_checkers: 2" then
  fail("the edit gave `" .. line .. "`")
end
if not vim.wait(30000, function() return find(buf) == nil end, 20) then
  fail("the diagnostic is still there after `" .. action.title .. "`")
end

print("ok: " .. action.title)
client:stop(true)
vim.wait(5000, function() return client:is_stopped() end, 20)
vim.cmd("qa!")
