-- Which files the server judges, in a real editor: neovim opens, in a
-- folder whose `grail.toml` names `guardrails/security.yaml`, that binding,
-- the folder's `package.json` and its `.github/workflows/release.yml`, all
-- three attached to one `grail lsp`. Once the server has published for each
-- of them, the binding shows its findings and the other two show nothing;
-- the binding's code lens says which deployment it belongs to.
--
-- nvim --headless --clean -l ownership.lua GRAIL ROOT
-- Prints `ok: ...` and exits 0, or prints `FAIL: ...` on stderr and exits 1.

local grail, root = arg[1], arg[2]

local function fail(message)
  io.stderr:write("FAIL: " .. message .. "\n")
  os.exit(1)
end

-- How many times the server published diagnostics for each file (an empty list counts).
local published = {}
local default = vim.lsp.handlers["textDocument/publishDiagnostics"]
vim.lsp.handlers["textDocument/publishDiagnostics"] = function(err, result, ctx, config)
  published[result.uri] = (published[result.uri] or 0) + 1
  return default(err, result, ctx, config)
end

local names = { "guardrails/security.yaml", "package.json", ".github/workflows/release.yml" }
local buffers = {}
local config = { name = "grail", cmd = { grail, "lsp" }, root_dir = root, flags = { debounce_text_changes = 0 } }
local id
for i, name in ipairs(names) do
  vim.cmd.edit(vim.fn.fnameescape(root .. "/" .. name))
  buffers[i] = vim.api.nvim_get_current_buf()
  if i == 1 then
    id = vim.lsp.start(config, { bufnr = buffers[i] })
    if not id then
      fail("vim.lsp.start did not start the server")
    end
  else
    vim.lsp.buf_attach_client(buffers[i], id)
  end
end
local client = vim.lsp.get_client_by_id(id)

local function all_published()
  for _, buf in ipairs(buffers) do
    if not published[vim.uri_from_bufnr(buf)] then
      return false
    end
  end
  return #vim.diagnostic.get(buffers[1]) > 0
end
if not vim.wait(30000, all_published, 20) then
  fail("the server did not publish for every file: " .. vim.inspect(published))
end
-- And nothing else arrives later.
vim.wait(500)

local counts = {}
for i, buf in ipairs(buffers) do
  counts[i] = #vim.diagnostic.get(buf)
end
if counts[1] == 0 or counts[2] ~= 0 or counts[3] ~= 0 then
  local shown = {}
  for i, name in ipairs(names) do
    local codes = {}
    for _, d in ipairs(vim.diagnostic.get(buffers[i])) do
      table.insert(codes, tostring(d.code))
    end
    table.insert(shown, name .. ": " .. counts[i] .. " (" .. table.concat(codes, ",") .. ")")
  end
  fail("diagnostics on the binding only, but " .. table.concat(shown, "; "))
end

local answer = client:request_sync(
  "textDocument/codeLens",
  { textDocument = { uri = vim.uri_from_bufnr(buffers[1]) } },
  10000,
  buffers[1]
)
local lens = answer and answer.result and answer.result[1] and answer.result[1].command
if not lens then
  fail("no code lens on the binding: " .. vim.inspect(answer))
end

print(
  "ok: diagnostics on the binding only ("
    .. counts[1]
    .. " on security.yaml, 0 on package.json and release.yml); lens: "
    .. lens.title
)
client:stop(true)
vim.wait(5000, function() return client:is_stopped() end, 20)
vim.cmd("qa!")
