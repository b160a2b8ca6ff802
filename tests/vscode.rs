//! The VS Code extension starts the server as `editors/vscode/extension.js`
//! says: its command and `args`, and, for `TransportKind.stdio`, the
//! `--stdio` that vscode-languageclient appends. This test reads the
//! extension's own file, starts exactly that command line, and speaks the
//! protocol to it: initialize, shutdown, exit.

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Command, Stdio};

/// The `args` of the server in extension.js, and whether its transport is stdio.
fn extension_command_line() -> (Vec<String>, bool) {
    let js = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/editors/vscode/extension.js"))
        .expect("the extension's source");
    let server = js.lines().find(|l| l.contains("const server")).expect("the server options");
    let inside = server.split("args: [").nth(1).and_then(|s| s.split(']').next()).expect("args: [...]");
    let args = inside.split(',').map(|a| a.trim().trim_matches('"').to_string()).filter(|a| !a.is_empty()).collect();
    (args, server.contains("TransportKind.stdio"))
}

/// One message framed as the protocol frames it.
fn frame(body: &str) -> Vec<u8> {
    format!("Content-Length: {}\r\n\r\n{body}", body.len()).into_bytes()
}

/// Reads one framed message.
fn read_message(out: &mut impl BufRead) -> String {
    let mut length = 0;
    loop {
        let mut line = String::new();
        out.read_line(&mut line).expect("a header line");
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some(n) = line.strip_prefix("Content-Length: ") {
            length = n.parse().expect("a length");
        }
    }
    let mut body = vec![0; length];
    out.read_exact(&mut body).expect("the body");
    String::from_utf8(body).expect("UTF-8")
}

#[test]
fn the_server_starts_with_the_command_line_the_extension_spawns() {
    let (mut args, stdio) = extension_command_line();
    assert_eq!(args, ["lsp"], "the extension starts `grail lsp`");
    assert!(stdio, "the extension's transport is stdio");
    // vscode-languageclient appends the transport's flag to a stdio server's arguments.
    args.push("--stdio".into());
    let mut child = Command::new(env!("CARGO_BIN_EXE_grail"))
        .args(&args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the server starts");
    let mut input = child.stdin.take().expect("stdin");
    let mut output = BufReader::new(child.stdout.take().expect("stdout"));
    let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"processId":null,"rootUri":null,"capabilities":{}}}"#;
    input.write_all(&frame(init)).expect("initialize sent");
    input.flush().expect("flushed");
    let reply = read_message(&mut output);
    assert!(reply.contains("\"id\":1") && reply.contains("capabilities"), "{reply}");
    input.write_all(&frame(r#"{"jsonrpc":"2.0","method":"initialized","params":{}}"#)).expect("sent");
    input.write_all(&frame(r#"{"jsonrpc":"2.0","id":2,"method":"shutdown"}"#)).expect("shutdown sent");
    input.flush().expect("flushed");
    // Skip notifications until the shutdown's answer.
    loop {
        let m = read_message(&mut output);
        if m.contains("\"id\":2") {
            break;
        }
    }
    input.write_all(&frame(r#"{"jsonrpc":"2.0","method":"exit"}"#)).expect("exit sent");
    drop(input);
    let status = child.wait().expect("the server exits");
    let mut stderr = String::new();
    child.stderr.take().expect("stderr").read_to_string(&mut stderr).expect("stderr read");
    assert!(status.success(), "exit {status}: {stderr}");
}

/// The extension starts for grail's files, never merely because a YAML, JSON
/// or Markdown file was opened (issue 41, item 2): in a workspace with a
/// `grail.toml`, or when a `.grail` file is opened. Which of the files it then
/// hands to the server are judged is the server's decision
/// (lsp/tests/ownership.rs).
#[test]
fn the_extension_activates_on_grail_files_only() {
    let manifest = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/editors/vscode/package.json"))
        .expect("the extension's manifest");
    let manifest: serde_json::Value = serde_json::from_str(&manifest).expect("JSON");
    let events: Vec<&str> =
        manifest["activationEvents"].as_array().expect("activationEvents").iter().filter_map(|e| e.as_str()).collect();
    assert_eq!(events, ["onLanguage:grail", "workspaceContains:grail.toml"]);
}
