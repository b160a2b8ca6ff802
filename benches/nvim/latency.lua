-- Edit-to-diagnostics latency of `grail lsp` in a real client (issue 17,
-- item 5): neovim, with the change debounce at 0, on a workspace of a
-- policy of at least 5,000 lines (the shipped library and generated rules
-- of the organisation's own) and 200 open bindings.
--
-- nvim --headless --clean -l benches/nvim/latency.lua GRAIL REPO DIR [EDITS]
--
-- DIR is created (it must not exist): `grail.toml`, `rules/bench.grail`
-- and `bindings/b-NNN.yaml`, copies of REPO's examples/bindings/good.yaml.
-- Every binding is opened and its first diagnostics awaited; then EDITS
-- (default 400) edits, each in the next binding round the 200, toggle its
-- `min_checkers` between 2 and 1 (below the floor: a FAIL comes and goes).
-- An edit's latency runs from the buffer change to the arrival of the
-- diagnostics the server publishes for that document's new text (with the
-- floor's FAIL after a 1, without it after a 2). Prints the
-- percentiles, and exits 1 when an edit gets no answer in 10 s.

local grail, repo, dir, edits = arg[1], arg[2], arg[3], tonumber(arg[4] or "400")
local uv = vim.uv
local BINDINGS, POLICY_LINES = 200, 5000

local function fail(message)
  io.stderr:write("FAIL: " .. message .. "\n")
  os.exit(1)
end

local function write(path, text)
  local f = assert(io.open(path, "w"))
  f:write(text)
  f:close()
end

if vim.fn.isdirectory(dir) == 1 then
  fail(dir .. " exists")
end
vim.fn.mkdir(dir .. "/rules", "p")
vim.fn.mkdir(dir .. "/bindings", "p")

-- The shipped library's length, as `grail source` counts it.
local listing = vim.fn.system({ grail, "source" })
local shipped = tonumber(listing:match("(%d+) lines, %d+ rule ids"))
if not shipped then
  fail("`grail source` printed no line count: " .. listing)
end
local rules, lines, n = {}, 0, 0
while shipped + lines < POLICY_LINES do
  local need = n % 3
  local rule = string.format(
    [[
/// Generated for the editor benchmark: rule %d.
rule bench.rule_%04d
  for c, t in binding.verification_topology
  when present(t.roles) else "no roles are declared"
  require count([s for s in t.roles if s.role == "checker"]) >= %d
    else fail "{c} has fewer than %d checkers"
  at t.roles

]],
    n, n, need, need)
  table.insert(rules, rule)
  lines = lines + select(2, rule:gsub("\n", ""))
  n = n + 1
end
write(dir .. "/rules/bench.grail", table.concat(rules))
write(dir .. "/grail.toml", '[policy]\nfolders = ["shipped", "rules"]\n')
local template = table.concat(vim.fn.readfile(repo .. "/examples/bindings/good.yaml"), "\n") .. "\n"
local paths = {}
for i = 1, BINDINGS do
  paths[i] = string.format("%s/bindings/b-%03d.yaml", dir, i)
  write(paths[i], template)
end

-- When the diagnostics of each document last arrived, and whether they had
-- the floor's FAIL (so that an edit's answer is told from a late one).
local arrived, floored = {}, {}
local publish = vim.lsp.handlers["textDocument/publishDiagnostics"]
vim.lsp.handlers["textDocument/publishDiagnostics"] = function(err, result, ctx, config)
  if result then
    arrived[result.uri] = uv.hrtime()
    floored[result.uri] = false
    for _, d in ipairs(result.diagnostics) do
      if d.code == "floor.min_checkers" then
        floored[result.uri] = true
      end
    end
  end
  return publish(err, result, ctx, config)
end

local config = { name = "grail", cmd = { grail, "lsp" }, root_dir = dir, flags = { debounce_text_changes = 0 } }
local buffers, client = {}, nil
local started = uv.hrtime()
for i, path in ipairs(paths) do
  vim.cmd.edit(vim.fn.fnameescape(path))
  buffers[i] = vim.api.nvim_get_current_buf()
  local id = vim.lsp.start(config, { bufnr = buffers[i] })
  if not id then
    fail("vim.lsp.start did not start the server")
  end
  client = client or vim.lsp.get_client_by_id(id)
end
local function answered()
  for _, b in ipairs(buffers) do
    if not arrived[vim.uri_from_bufnr(b)] then
      return false
    end
  end
  return true
end
if not vim.wait(120000, answered, 5) then
  fail("not every binding got its first diagnostics in 120 s")
end
local opened = (uv.hrtime() - started) / 1e6

local latencies = {}
for k = 1, edits do
  local b = buffers[(k - 1) % BINDINGS + 1]
  local uri = vim.uri_from_bufnr(b)
  local row
  for r, text in ipairs(vim.api.nvim_buf_get_lines(b, 0, -1, true)) do
    if text:match("^    min_checkers: [12]$") then
      row = r
      break
    end
  end
  local text = vim.api.nvim_buf_get_lines(b, row - 1, row, true)[1]
  local toggled = text:sub(-1) == "2" and "    min_checkers: 1" or "    min_checkers: 2"
  local t0 = uv.hrtime()
  vim.api.nvim_buf_set_lines(b, row - 1, row, true, { toggled })
  local below = toggled:sub(-1) == "1"
  local function answer()
    return (arrived[uri] or 0) > t0 and floored[uri] == below
  end
  if not vim.wait(10000, answer, 0) then
    fail("edit " .. k .. " got no diagnostics of its text in 10 s")
  end
  table.insert(latencies, (arrived[uri] - t0) / 1e6)
end

table.sort(latencies)
local function at(p)
  return latencies[math.max(1, math.ceil(p * #latencies))]
end
print(string.format(
  "policy %d lines (%d shipped, %d generated rules), %d open bindings, first diagnostics of all in %.0f ms",
  shipped + lines, shipped, n, BINDINGS, opened))
print(string.format("%d edits: p50 %.2f ms, p90 %.2f ms, p99 %.2f ms, max %.2f ms",
  #latencies, at(0.50), at(0.90), at(0.99), latencies[#latencies]))
client:stop(true)
vim.wait(5000, function() return client:is_stopped() end, 20)
vim.cmd("qa!")
