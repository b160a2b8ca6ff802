-- Edit-to-diagnostics latency of `grail lsp` in a real client (issue 17,
-- item 5; issue 42, item 3): neovim, with the change debounce at 0, on a
-- workspace of a policy of at least 5,000 lines (the shipped library and
-- generated rules of the organisation's own) and 200 open security
-- bindings in upstream's own format.
--
-- nvim --headless --clean -l benches/nvim/latency.lua GRAIL REPO DIR [EDITS]
--
-- DIR is created (it must not exist): `grail.toml`, `rules/bench.grail`
-- and `bindings/NNN/`, each a copy of upstream's graded `valid.json`
-- (REPO's tests/data/upstream/fixtures/security-binding/) with the probe
-- transcript its `probe_evidence` names beside it, as in upstream's layout.
-- No deployment names them: each is checked alone, as `grail check FILE`
-- run in its folder checks it, with the transcript it attaches (where the
-- check locates a finding of its own) and the clock of the edit.
-- Every binding is opened and its first diagnostics awaited; then EDITS
-- (default 400) edits, each in the next binding round the 200, toggle its
-- `merge_policy.C4` between "human" and "auto" (above the class's merge
-- cap: the shipped library's `merge.ceiling` FAIL comes and goes).
-- An edit's latency runs from the buffer change to the arrival of the
-- diagnostics the server publishes for that document's new text (with the
-- FAIL after "auto", without it after "human"); the edit is done when the
-- diagnostics of the transcript it attaches have arrived too, and the next
-- edit waits for it. Prints the percentiles of both, and exits 1 when an
-- edit gets no answer in 10 s.

local grail, repo, dir, edits = arg[1], arg[2], arg[3], tonumber(arg[4] or "400")
local uv = vim.uv
local BINDINGS, POLICY_LINES = 200, 5000
local FIXTURES = "/tests/data/upstream/fixtures/security-binding/"
local TRANSCRIPT = "probe-transcripts/ci-pool-a-l2.json"
-- The finding the edit turns on and off, and the line it toggles.
local FLIPPED, ROW = "merge.ceiling", '^    "C4": "(%a+)",$'

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
  local need = n % 2
  local rule = string.format(
    [[
/// Generated for the editor benchmark: rule %d.
rule bench.rule_%04d
  for i, r in binding.admission.rules
  require count([j for j, q in binding.admission.rules if q.work_class == r.work_class]) >= %d
    else fail "{r.work_class} is matched by fewer than %d rules"
  at r

]],
    n, n, need, need)
  table.insert(rules, rule)
  lines = lines + select(2, rule:gsub("\n", ""))
  n = n + 1
end
write(dir .. "/rules/bench.grail", table.concat(rules))
write(dir .. "/grail.toml", '[policy]\nfolders = ["shipped", "rules"]\n')
local template = table.concat(vim.fn.readfile(repo .. FIXTURES .. "valid.json"), "\n") .. "\n"
local transcript = table.concat(vim.fn.readfile(repo .. FIXTURES .. TRANSCRIPT), "\n") .. "\n"
if not template:find('"probe_evidence": "' .. TRANSCRIPT .. '"', 1, true) then
  fail("valid.json no longer names " .. TRANSCRIPT)
end
local paths, attached = {}, {}
for i = 1, BINDINGS do
  local folder = string.format("%s/bindings/%03d", dir, i)
  vim.fn.mkdir(folder .. "/probe-transcripts", "p")
  paths[i] = folder .. "/security-binding.json"
  attached[i] = vim.uri_from_fname(folder .. "/" .. TRANSCRIPT)
  write(paths[i], template)
  write(folder .. "/" .. TRANSCRIPT, transcript)
end

-- When the diagnostics of each file last arrived, and whether they had the
-- flipped FAIL (so that an edit's answer is told from a late one).
local arrived, flipped = {}, {}
local publish = vim.lsp.handlers["textDocument/publishDiagnostics"]
vim.lsp.handlers["textDocument/publishDiagnostics"] = function(err, result, ctx, config)
  if result then
    arrived[result.uri] = uv.hrtime()
    flipped[result.uri] = false
    for _, d in ipairs(result.diagnostics) do
      if d.code == FLIPPED then
        flipped[result.uri] = true
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
  for i, b in ipairs(buffers) do
    if not arrived[vim.uri_from_bufnr(b)] or not arrived[attached[i]] then
      return false
    end
  end
  return true
end
if not vim.wait(120000, answered, 5) then
  fail("not every binding and transcript got its first diagnostics in 120 s")
end
local opened = (uv.hrtime() - started) / 1e6

for i, b in ipairs(buffers) do
  if flipped[vim.uri_from_bufnr(b)] then
    fail("binding " .. i .. " has `" .. FLIPPED .. "` before any edit")
  end
end

local latencies, whole = {}, {}
for k = 1, edits do
  local i = (k - 1) % BINDINGS + 1
  local b = buffers[i]
  local uri = vim.uri_from_bufnr(b)
  local row, value
  for r, text in ipairs(vim.api.nvim_buf_get_lines(b, 0, -1, true)) do
    value = text:match(ROW)
    if value == "human" or value == "auto" then
      row = r
      break
    end
  end
  if not row then
    fail("binding " .. i .. " has no merge_policy.C4 line")
  end
  local toggled = value == "human" and "auto" or "human"
  local t0 = uv.hrtime()
  vim.api.nvim_buf_set_lines(b, row - 1, row, true, { '    "C4": "' .. toggled .. '",' })
  local above = toggled == "auto"
  local function answer()
    return (arrived[uri] or 0) > t0 and flipped[uri] == above
  end
  if not vim.wait(10000, answer, 0) then
    fail("edit " .. k .. " got no diagnostics of its text in 10 s")
  end
  table.insert(latencies, (arrived[uri] - t0) / 1e6)
  local function done()
    return (arrived[attached[i]] or 0) > t0
  end
  if not vim.wait(10000, done, 0) then
    fail("edit " .. k .. " got no diagnostics of the transcript it attaches in 10 s")
  end
  table.insert(whole, (arrived[attached[i]] - t0) / 1e6)
end

local function percentiles(samples)
  table.sort(samples)
  local function at(p)
    return samples[math.max(1, math.ceil(p * #samples))]
  end
  return string.format("p50 %.2f ms, p90 %.2f ms, p99 %.2f ms, max %.2f ms",
    at(0.50), at(0.90), at(0.99), samples[#samples])
end
print(string.format(
  "policy %d lines (%d shipped, %d generated rules), %d open bindings, first diagnostics of all in %.0f ms",
  shipped + lines, shipped, n, BINDINGS, opened))
print(string.format("%d edits: %s", #latencies, percentiles(latencies)))
print(string.format("with the transcript's: %s", percentiles(whole)))
client:stop(true)
vim.wait(5000, function() return client:is_stopped() end, 20)
vim.cmd("qa!")
