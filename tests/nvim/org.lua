-- End to end with a real editor: neovim starts `grail lsp` in a copy of the
-- example organisation, whose `grail.toml` declares one deployment. PLAN (a
-- JSON file written by tests/nvim.rs) says what `repo.yaml` must show, as
-- `grail check` gives it for that deployment, at the start and after each
-- edit made in the editor (not on disk) to one of the deployment's files.
--
-- nvim --headless --clean -l org.lua GRAIL ROOT PLAN
-- Prints `ok` and exits 0, or prints `FAIL: ...` on stderr and exits 1.

local grail, root, plan_file = arg[1], arg[2], arg[3]

local function fail(message)
  io.stderr:write("FAIL: " .. message .. "\n")
  os.exit(1)
end

local f = assert(io.open(plan_file, "r"))
local plan = vim.json.decode(f:read("a"))
f:close()

-- Every publication of diagnostics, counted per URI, so that an empty list
-- is known to be the server's answer and not the absence of one.
local published = {}
local default = vim.lsp.handlers["textDocument/publishDiagnostics"]
vim.lsp.handlers["textDocument/publishDiagnostics"] = function(err, result, ctx, config)
  published[result.uri] = (published[result.uri] or 0) + 1
  return default(err, result, ctx, config)
end

-- `rule line:column` of each diagnostic, sorted (from 1, as grail check counts).
local function shown(buf)
  local out = {}
  for _, d in ipairs(vim.diagnostic.get(buf)) do
    table.insert(out, string.format("%s %d:%d", d.code, d.lnum + 1, d.col + 1))
  end
  table.sort(out)
  return out
end

local function expected(findings)
  local out = {}
  for _, finding in ipairs(findings) do
    table.insert(out, string.format("%s %d:%d", finding.rule, finding.line, finding.column))
  end
  table.sort(out)
  return out
end

local function open(name)
  vim.cmd.edit(vim.fn.fnameescape(root .. "/" .. name))
  return vim.api.nvim_get_current_buf()
end

local repo = open("repo.yaml")
local id = vim.lsp.start({ name = "grail", cmd = { grail, "lsp" }, root_dir = root }, { bufnr = repo })
if not id then
  fail("vim.lsp.start did not start the server")
end
local client = vim.lsp.get_client_by_id(id)
local repo_uri = vim.uri_from_bufnr(repo)

local function expect(want, after, seen)
  if not vim.wait(30000, function() return (published[repo_uri] or 0) > seen and vim.deep_equal(shown(repo), want) end, 20) then
    fail(after .. ", repo.yaml shows " .. vim.inspect(shown(repo)) .. ", grail check gives " .. vim.inspect(want))
  end
  -- Any later publication must not change the answer.
  vim.wait(300, function() return false end, 20)
  if not vim.deep_equal(shown(repo), want) then
    fail(after .. ", repo.yaml then shows " .. vim.inspect(shown(repo)) .. ", grail check gives " .. vim.inspect(want))
  end
end

local first = expected(plan.initial)
expect(first, "at the start", 0)
local counts = { #first }
for _, step in ipairs(plan.steps) do
  local buf = open(step.file)
  vim.lsp.buf_attach_client(buf, id)
  local seen = published[repo_uri]
  vim.api.nvim_buf_set_lines(buf, step.line - 1, step.line - 1 + step.replace, true, step.lines)
  local want = expected(step.expected)
  expect(want, "after the edit of " .. step.file, seen)
  table.insert(counts, #want)
end

print("ok: repo.yaml shows " .. table.concat(counts, ", then ") .. " findings, as grail check gives them")
client:stop(true)
vim.wait(5000, function() return client:is_stopped() end, 20)
vim.cmd("qa!")
