//! A protocol client for tests: it drives `grail_lsp::serve` over an
//! in-memory duplex stream, frames messages as the protocol does, answers the
//! server's own requests with `null`, and keeps notifications until asked.

#![allow(dead_code)]

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::time::Duration;

use grail_engine::Database;
use grail_lsp::position::LineIndex;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader, DuplexStream, ReadHalf, WriteHalf};
use tower_lsp_server::ls_types::{Position, Range};

const WAIT: Duration = Duration::from_secs(20);

pub struct TestClient {
    reader: BufReader<ReadHalf<DuplexStream>>,
    writer: WriteHalf<DuplexStream>,
    next_id: i64,
    /// Notifications received while waiting for something else.
    pending: VecDeque<Value>,
    /// The version of each open document, as last sent.
    versions: std::collections::HashMap<String, i32>,
    server: tokio::task::JoinHandle<()>,
    /// What the server answered to `initialize`.
    pub capabilities: Value,
}

impl TestClient {
    /// Starts a server over `db` and initializes it with `root` as its workspace folder.
    pub async fn start(db: Database, root: Option<&Path>) -> TestClient {
        let (client, server) = tokio::io::duplex(1 << 20);
        let (server_read, server_write) = tokio::io::split(server);
        let server = tokio::spawn(grail_lsp::serve(server_read, server_write, db));
        let (read, writer) = tokio::io::split(client);
        let mut c = TestClient {
            reader: BufReader::new(read),
            writer,
            next_id: 0,
            pending: VecDeque::new(),
            versions: Default::default(),
            server,
            capabilities: Value::Null,
        };
        let folders = match root {
            Some(r) => json!([{"uri": uri(r), "name": "workspace"}]),
            None => Value::Null,
        };
        let init = c
            .request(
                "initialize",
                json!({
                    "processId": null,
                    "rootUri": null,
                    "capabilities": {"workspace": {"didChangeWatchedFiles": {"dynamicRegistration": true}}},
                    "workspaceFolders": folders,
                }),
            )
            .await;
        assert!(init["capabilities"]["hoverProvider"].as_bool().unwrap_or(false), "{init}");
        c.capabilities = init["capabilities"].clone();
        c.notify("initialized", json!({})).await;
        c
    }

    async fn send(&mut self, message: Value) {
        let body = message.to_string();
        let framed = format!("Content-Length: {}\r\n\r\n{body}", body.len());
        self.writer.write_all(framed.as_bytes()).await.expect("write to the server");
        self.writer.flush().await.expect("flush");
    }

    async fn receive(&mut self) -> Value {
        let read = async {
            let mut length = 0usize;
            loop {
                let mut line = String::new();
                let n = self.reader.read_line(&mut line).await.expect("read a header");
                assert!(n > 0, "the server closed the stream");
                let line = line.trim_end();
                if line.is_empty() {
                    break;
                }
                if let Some(v) = line.strip_prefix("Content-Length: ") {
                    length = v.parse().expect("a length");
                }
            }
            let mut body = vec![0; length];
            self.reader.read_exact(&mut body).await.expect("read a body");
            serde_json::from_slice::<Value>(&body).expect("a JSON message")
        };
        tokio::time::timeout(WAIT, read).await.expect("the server answers in time")
    }

    pub async fn notify(&mut self, method: &str, params: Value) {
        if method == "textDocument/didClose"
            && let Some(uri) = params["textDocument"]["uri"].as_str()
        {
            self.versions.remove(uri);
        }
        self.send(json!({"jsonrpc": "2.0", "method": method, "params": params})).await;
    }

    /// Sends a request and returns its result; an error answer is returned as `{"error": ...}`.
    pub async fn request(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})).await;
        loop {
            let m = self.receive().await;
            if m.get("id") == Some(&json!(id)) && m.get("method").is_none() {
                return match m.get("error") {
                    Some(e) => json!({"error": e}),
                    None => m["result"].clone(),
                };
            }
            self.other(m).await;
        }
    }

    /// A message that is not the answer awaited: a request of the server is answered, a notification kept.
    async fn other(&mut self, m: Value) {
        if m.get("method").is_some() && m.get("id").is_some() {
            let id = m["id"].clone();
            self.send(json!({"jsonrpc": "2.0", "id": id, "result": null})).await;
        } else {
            self.pending.push_back(m);
        }
    }

    /// The next diagnostics published for `uri` (for an open document, for the version last sent).
    pub async fn diagnostics(&mut self, uri: &str) -> Vec<Value> {
        let version = self.versions.get(uri).copied();
        loop {
            let found = self.pending.iter().position(|m| {
                m["method"] == "textDocument/publishDiagnostics"
                    && m["params"]["uri"] == uri
                    && version.is_none_or(|v| m["params"]["version"] == v)
            });
            if let Some(i) = found {
                let m = self.pending.remove(i).expect("just found");
                return m["params"]["diagnostics"].as_array().cloned().unwrap_or_default();
            }
            let m = self.receive().await;
            self.other(m).await;
        }
    }

    /// The next notification of `method` (`window/showMessage`...), and how many more of it are pending.
    pub async fn notification(&mut self, method: &str) -> Value {
        loop {
            if let Some(i) = self.pending.iter().position(|m| m["method"] == method && m.get("id").is_none()) {
                let m = self.pending.remove(i).expect("just found");
                return m["params"].clone();
            }
            let m = self.receive().await;
            self.other(m).await;
        }
    }

    /// How many notifications of `method` have arrived and are not yet taken.
    pub fn pending_count(&self, method: &str) -> usize {
        self.pending.iter().filter(|m| m["method"] == method).count()
    }

    /// Takes the diagnostics published for `uri` that arrived and were not
    /// taken yet, and says how many there were.
    pub fn take_pending_diagnostics(&mut self, uri: &str) -> usize {
        let before = self.pending.len();
        self.pending.retain(|m| !(m["method"] == "textDocument/publishDiagnostics" && m["params"]["uri"] == uri));
        before - self.pending.len()
    }

    /// Diagnostics published for `uri` until they satisfy `done` (or the wait times out).
    pub async fn diagnostics_until(&mut self, uri: &str, done: impl Fn(&[Value]) -> bool) -> Vec<Value> {
        loop {
            let d = self.diagnostics(uri).await;
            if done(&d) {
                return d;
            }
        }
    }

    pub async fn open(&mut self, uri: &str, text: &str) {
        self.versions.insert(uri.to_string(), 1);
        let language = if uri.ends_with(".grail") { "grail" } else { "yaml" };
        self.notify(
            "textDocument/didOpen",
            json!({"textDocument": {"uri": uri, "languageId": language, "version": 1, "text": text}}),
        )
        .await;
    }

    pub async fn change(&mut self, uri: &str, version: i32, changes: Value) {
        self.versions.insert(uri.to_string(), version);
        self.notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": uri, "version": version}, "contentChanges": changes}),
        )
        .await;
    }

    pub async fn shutdown(mut self) {
        let r = self.request("shutdown", Value::Null).await;
        assert_eq!(r, Value::Null);
        self.notify("exit", Value::Null).await;
        tokio::time::timeout(WAIT, self.server).await.expect("the server exits").expect("the server task");
    }
}

pub fn uri(path: &Path) -> String {
    format!("file://{}", path.display())
}

/// The protocol position of the first occurrence of `needle` in `text`, `k` bytes in.
pub fn position_of(text: &str, needle: &str, k: usize) -> Value {
    let at = text.find(needle).unwrap_or_else(|| panic!("`{needle}` in the text")) + k;
    let p = LineIndex::new(text).position(text, at);
    json!({"line": p.line, "character": p.character})
}

/// Applies protocol text edits to a text.
pub fn apply_edits(text: &str, edits: &[Value]) -> String {
    let idx = LineIndex::new(text);
    let mut spans: Vec<(usize, usize, String)> = edits
        .iter()
        .map(|e| {
            let range: Range = serde_json::from_value(e["range"].clone()).expect("a range");
            let span = idx.span(text, range);
            (span.start, span.end, e["newText"].as_str().unwrap_or_default().to_string())
        })
        .collect();
    spans.sort_by_key(|s| std::cmp::Reverse(s.0));
    let mut out = text.to_string();
    for (start, end, new) in spans {
        out.replace_range(start..end, &new);
    }
    out
}

pub fn position(line: u32, character: u32) -> Position {
    Position::new(line, character)
}

/// A folder removed when dropped.
pub struct TempDir(pub PathBuf);

impl TempDir {
    pub fn new(name: &str) -> TempDir {
        let dir = std::env::temp_dir().join(format!("grail-lsp-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("create a temporary folder");
        TempDir(dir.canonicalize().expect("canonical temporary folder"))
    }

    /// A copy of the shipped library in `policies/`, which the workspace file names as the policy.
    pub fn with_shipped_policy(name: &str) -> TempDir {
        let dir = TempDir::new(name);
        for (path, text) in grail_engine::shipped::FILES {
            let target = dir.0.join(path);
            std::fs::create_dir_all(target.parent().expect("a parent")).expect("create folders");
            std::fs::write(target, text).expect("write a policy file");
        }
        std::fs::write(dir.0.join("grail.toml"), "[policy]\nfolders = [\"policies\"]\n").expect("write grail.toml");
        dir
    }

    /// A copy of the example organisation (`examples/org`, with its `grail.toml`).
    pub fn with_org(name: &str) -> TempDir {
        let dir = TempDir::new(name);
        let org = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/org");
        copy_tree(&org, &dir.0);
        dir
    }
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("create a folder");
    for entry in std::fs::read_dir(from).expect("read a folder").flatten() {
        let target = to.join(entry.file_name());
        if entry.path().is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).expect("copy a file");
        }
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
