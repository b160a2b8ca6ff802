// The grail language server (`grail lsp`) for policy files, bindings
// (JSON, YAML) and Markdown work items. The server reads `grail.toml` of the
// workspace, as `grail check` does, so the editor shows what CI reports.
// The extension starts in a workspace with a `grail.toml`, or when a `.grail`
// file is opened (package.json's activationEvents), never merely for a YAML,
// JSON or Markdown file; once started, the client hands every such file to
// the server, which judges only grail's own (docs/workspace.md, "Which files
// the editor judges") and clears the rest.
const vscode = require("vscode");
const { LanguageClient, TransportKind } = require("vscode-languageclient/node");

let client;

function activate(context) {
  const command = vscode.workspace.getConfiguration("grail").get("path") || "grail";
  const server = { command, args: ["lsp"], transport: TransportKind.stdio };
  client = new LanguageClient(
    "grail",
    "grail",
    { run: server, debug: server },
    {
      documentSelector: [
        { scheme: "file", language: "grail" },
        { scheme: "file", language: "yaml" },
        { scheme: "file", language: "json" },
        { scheme: "file", language: "markdown" },
        { scheme: "file", pattern: "**/grail.toml" },
      ],
    },
  );
  context.subscriptions.push(client);
  return client.start();
}

function deactivate() {
  return client ? client.stop() : undefined;
}

module.exports = { activate, deactivate };
