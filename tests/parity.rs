//! The editor agrees with `grail check` (DESIGN: both call the same
//! queries). Every document of `examples/` and of every fixture folder
//! (`policies/guardrails/tests/*/`) is checked by `grail check --format json`
//! and shown by the language server (`grail lsp`, driven over its standard
//! input and output as an editor drives it); their findings must be equal:
//! rule, severity, file and line, where a FAIL is an error and an UNKNOWN is
//! an error unless the caller allows it (then a warning, as `grail check`
//! reports it).
//!
//! A document checked alone is compared with `grail check FILE` run in its
//! folder: one process a file for the examples, and `grail check --each`
//! (one report a file, the same check) for the two thousand fixture files,
//! so that the test stays fast. A member of a deployment of `grail.toml`
//! (`examples/org`) is compared with the findings of `grail check` (no files,
//! the workspace file's deployments) located in it. `examples/org` is
//! checked with its `grail.toml` and, copied, without it.
//!
//! The exceptions: a file the editor does not judge (no kind of the policy
//! picks it, or a well-known format claims it: docs/workspace.md, "Which
//! files the editor judges") shows nothing, where `grail check FILE` checks
//! whatever it is named (counted, and printed); and the editor's notes that
//! are no finding ([`EDITOR_NOTES`]).

#[allow(dead_code, reason = "this test reads the outputs apart, not as one text")]
mod common;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::Duration;

use serde_json::{Value, json};

/// One finding as both sides show it: the file it points into, its line
/// (from 1), its rule and its severity (`error` or `warning`).
type Shown = (PathBuf, u32, String, &'static str);

/// What one side shows of each document it was asked about.
type Findings = BTreeMap<PathBuf, BTreeSet<Shown>>;

/// The extensions of the files `grail check` reads as documents.
const DOCUMENTS: [&str; 5] = ["json", "jsonl", "yaml", "yml", "md"];

fn repository() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).canonicalize().expect("the repository")
}

/// The documents under `dir` (every depth), sorted.
fn documents(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).expect("read a folder").flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().and_then(|e| e.to_str()).is_some_and(|e| DOCUMENTS.contains(&e)) {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

/// The severity `grail check` gives an outcome: a FAIL fails the check, and
/// so does an UNKNOWN the caller does not allow; an allowed UNKNOWN is a warning.
fn severity(outcome: &str, allowed: bool) -> Option<&'static str> {
    match outcome {
        "fail" => Some("error"),
        "unknown" if allowed => Some("warning"),
        "unknown" => Some("error"),
        _ => None,
    }
}

/// The findings of the JSON reports `text` holds (one, or one a line), with
/// paths relative to `cwd`. A finding located in no file is the first
/// document's, as the editor shows it.
fn reported(cwd: &Path, text: &str, first: Option<&Path>) -> Vec<(Option<PathBuf>, Shown)> {
    let mut out = Vec::new();
    for report in serde_json::Deserializer::from_str(text).into_iter::<Value>() {
        let report = report.expect("a JSON report");
        let allowed = !report["unknown_allowed"].is_null();
        let checked = report["file"].as_str().map(|f| absolute(cwd, f));
        for f in report["findings"].as_array().into_iter().flatten() {
            let Some(severity) = severity(f["outcome"].as_str().unwrap_or_default(), allowed) else { continue };
            let file = match f["file"].as_str() {
                Some(file) => absolute(cwd, file),
                None => checked.clone().or_else(|| first.map(Path::to_path_buf)).expect("a document"),
            };
            let line = f["line"].as_u64().unwrap_or(1) as u32;
            out.push((checked.clone(), (file, line, f["rule"].as_str().unwrap_or_default().to_string(), severity)));
        }
    }
    out
}

fn absolute(cwd: &Path, file: &str) -> PathBuf {
    let path = cwd.join(file);
    path.canonicalize().unwrap_or(path)
}

/// `grail check --format json FILE`, run in the file's folder, for each file.
fn check_each_alone(files: &[PathBuf]) -> Findings {
    let mut out = Findings::new();
    for file in files {
        let dir = file.parent().expect("a folder");
        let name = file.file_name().and_then(|n| n.to_str()).expect("a name");
        let run = common::run_in(dir, &["check", "--format", "json", name]);
        assert!(run.code == 0 || run.code == 1, "grail check {}: {}\n{}", file.display(), run.code, run.stderr);
        let found = out.entry(file.clone()).or_default();
        found.extend(reported(dir, &run.stdout, Some(file)).into_iter().map(|(_, s)| s));
    }
    out
}

/// `grail check --each --format json FILE...` in `cwd`: one report a file.
fn check_each(cwd: &Path, files: &[PathBuf]) -> Findings {
    let names: Vec<String> =
        files.iter().map(|f| f.strip_prefix(cwd).expect("under the folder").to_string_lossy().into_owned()).collect();
    let mut args = vec!["check", "--each", "--format", "json"];
    args.extend(names.iter().map(String::as_str));
    let run = common::run_in(cwd, &args);
    assert!(run.code == 0 || run.code == 1, "grail check --each: {}\n{}", run.code, run.stderr);
    let mut out: Findings = files.iter().map(|f| (f.clone(), BTreeSet::new())).collect();
    for (checked, shown) in reported(cwd, &run.stdout, None) {
        out.entry(checked.expect("`--each` names the file of each report")).or_default().insert(shown);
    }
    out
}

/// `grail check --format json` in `cwd`: the deployments of its workspace
/// file, each finding under the file it points into.
fn check_deployments(cwd: &Path) -> Findings {
    let run = common::run_in(cwd, &["check", "--format", "json"]);
    assert!(run.code == 0 || run.code == 1, "grail check: {}\n{}", run.code, run.stderr);
    let mut out = Findings::new();
    for (_, shown) in reported(cwd, &run.stdout, None) {
        out.entry(shown.0.clone()).or_default().insert(shown);
    }
    out
}

/// The language server, `grail lsp`, as an editor runs it.
struct Server {
    child: Child,
    input: ChildStdin,
    messages: Receiver<Value>,
    next_id: i64,
    /// The last diagnostics published for each URI, and the version they are of.
    published: HashMap<String, (Value, Vec<Value>)>,
}

const WAIT: Duration = Duration::from_secs(60);

impl Server {
    fn start(root: &Path) -> Server {
        let mut child = Command::new(env!("CARGO_BIN_EXE_grail"))
            .arg("lsp")
            .current_dir(root)
            .env("XDG_CACHE_HOME", Path::new(env!("CARGO_TARGET_TMPDIR")).join("parity-cache"))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start `grail lsp`");
        let input = child.stdin.take().expect("its input");
        let output = child.stdout.take().expect("its output");
        let (send, messages) = channel();
        std::thread::spawn(move || {
            let mut reader = BufReader::new(output);
            loop {
                let mut length = 0usize;
                loop {
                    let mut line = String::new();
                    if reader.read_line(&mut line).unwrap_or(0) == 0 {
                        return;
                    }
                    let line = line.trim_end();
                    if line.is_empty() {
                        break;
                    }
                    if let Some(v) = line.strip_prefix("Content-Length: ") {
                        length = v.parse().expect("a length");
                    }
                }
                let mut body = vec![0; length];
                if reader.read_exact(&mut body).is_err() {
                    return;
                }
                if send.send(serde_json::from_slice(&body).expect("a JSON message")).is_err() {
                    return;
                }
            }
        });
        let mut server = Server { child, input, messages, next_id: 0, published: HashMap::new() };
        let folder = json!([{"uri": uri(root), "name": "workspace"}]);
        let init = server.request(
            "initialize",
            json!({"processId": null, "rootUri": null, "capabilities": {}, "workspaceFolders": folder}),
        );
        assert!(init["capabilities"]["hoverProvider"].as_bool().unwrap_or(false), "{init}");
        server.notify("initialized", json!({}));
        server
    }

    fn send(&mut self, message: Value) {
        let body = message.to_string();
        write!(self.input, "Content-Length: {}\r\n\r\n{body}", body.len()).expect("write to the server");
        self.input.flush().expect("flush");
    }

    fn notify(&mut self, method: &str, params: Value) {
        self.send(json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    /// The next message; a request of the server is answered with `null`,
    /// published diagnostics are kept.
    fn receive(&mut self) -> Value {
        let m = self.messages.recv_timeout(WAIT).expect("the server answers in time");
        if m.get("method").is_some() && m.get("id").is_some() {
            self.send(json!({"jsonrpc": "2.0", "id": m["id"], "result": null}));
        } else if m["method"] == "textDocument/publishDiagnostics" {
            let p = &m["params"];
            let diagnostics = p["diagnostics"].as_array().cloned().unwrap_or_default();
            self.published
                .insert(p["uri"].as_str().unwrap_or_default().to_string(), (p["version"].clone(), diagnostics));
        }
        m
    }

    fn request(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let m = self.receive();
            if m["id"] == json!(id) && m.get("method").is_none() {
                return m["result"].clone();
            }
        }
    }

    /// The diagnostics published for `uri` at `version` (`null`: a file not open).
    fn diagnostics(&mut self, uri: &str, version: Value) -> Vec<Value> {
        loop {
            if let Some((v, d)) = self.published.get(uri)
                && *v == version
            {
                return d.clone();
            }
            self.receive();
        }
    }

    /// Whether the server judges the document: it puts a code lens on every one it judges.
    fn judges(&mut self, uri: &str) -> bool {
        let lenses = self.request("textDocument/codeLens", json!({"textDocument": {"uri": uri}}));
        lenses.as_array().is_some_and(|l| !l.is_empty())
    }

    /// Opens `file` and returns whether the server judges it, and what it
    /// shows then of every file it published: the document, and the files it
    /// attaches (where some findings are located). Closes it again, and
    /// waits until what the close cleared is published.
    fn open(&mut self, file: &Path) -> (bool, Findings) {
        let uri = uri(file);
        let text = String::from_utf8_lossy(&std::fs::read(file).expect("read a document")).into_owned();
        let document = json!({"uri": uri, "languageId": "yaml", "version": 1, "text": text});
        self.published.clear();
        self.notify("textDocument/didOpen", json!({"textDocument": document}));
        self.diagnostics(&uri, json!(1));
        // Answered after every diagnostic of the open is published: the server takes one message at a time.
        let judged = self.judges(&uri);
        let shown: Findings = self
            .published
            .drain()
            .map(|(u, (_, d))| {
                let path = PathBuf::from(u.strip_prefix("file://").expect("a file URI"));
                let found = shown(&path, &d);
                (path, found)
            })
            .collect();
        // What the close clears is published before the next open's diagnostics.
        self.notify("textDocument/didClose", json!({"textDocument": {"uri": uri}}));
        (judged, shown)
    }

    fn stop(mut self) {
        self.request("shutdown", Value::Null);
        self.notify("exit", Value::Null);
        let _ = self.child.wait();
    }
}

fn uri(path: &Path) -> String {
    format!("file://{}", path.display())
}

/// What the editor says that is no finding of `grail check`, by diagnostic
/// code, with the reason: the exceptions.
const EDITOR_NOTES: [(&str, &str); 1] = [(
    "marker",
    "a line that is nearly the marker of a Markdown kind: the editor says so (docs/workspace.md), \
     `grail check FILE` reads the file as its name selects it and has no finding of it",
)];

/// The findings of published diagnostics, as [`Shown`] (less the editor's notes).
fn shown(file: &Path, diagnostics: &[Value]) -> BTreeSet<Shown> {
    diagnostics
        .iter()
        .filter(|d| !EDITOR_NOTES.iter().any(|(code, _)| d["code"] == *code))
        .map(|d| {
            let severity = match d["severity"].as_i64() {
                Some(1) => "error",
                Some(2) => "warning",
                Some(3) => "information",
                _ => "hint",
            };
            let line = d["range"]["start"]["line"].as_u64().unwrap_or_default() as u32 + 1;
            (file.to_path_buf(), line, d["code"].as_str().unwrap_or_default().to_string(), severity)
        })
        .collect()
}

/// What the two sides disagree on, a line a finding, and how many files differ.
#[derive(Default)]
struct Comparison {
    compared: usize,
    not_judged: usize,
    differing: Vec<String>,
}

impl Comparison {
    fn compare(&mut self, file: &Path, check: &BTreeSet<Shown>, editor: &BTreeSet<Shown>) {
        self.compared += 1;
        if check == editor {
            return;
        }
        let only = |a: &BTreeSet<Shown>, b: &BTreeSet<Shown>| -> Vec<String> {
            a.difference(b).map(|(_, line, rule, severity)| format!("{rule} {severity} line {line}")).collect()
        };
        self.differing.push(format!(
            "{}\n  only `grail check`: {:?}\n  only the editor:   {:?}",
            file.display(),
            only(check, editor),
            only(editor, check)
        ));
    }

    /// Each file checked alone: the editor opens it, `check` holds what
    /// `grail check FILE` found (in it and in the files it attaches), and
    /// `base` what the deployments of the workspace file find, file by file.
    fn alone(&mut self, server: &mut Server, check: &BTreeMap<PathBuf, BTreeSet<Shown>>, base: &Findings) {
        for (file, found) in check {
            let (judged, editor) = server.open(file);
            if !judged {
                self.not_judged += 1;
            }
            let mut expected: Findings = Findings::new();
            expected.entry(file.clone()).or_default();
            // A document the editor does not judge shows nothing of its own check.
            for s in found.iter().filter(|_| judged) {
                expected.entry(s.0.clone()).or_default().insert(s.clone());
            }
            let files: BTreeSet<PathBuf> = expected.keys().chain(editor.keys()).cloned().collect();
            let none = BTreeSet::new();
            for f in files {
                let mut want = expected.get(&f).cloned().unwrap_or_default();
                want.extend(base.get(&f).into_iter().flatten().cloned());
                let label = if f == *file {
                    f.clone()
                } else {
                    PathBuf::from(format!("{} (attached by {})", f.display(), file.display()))
                };
                self.compare(&label, &want, editor.get(&f).unwrap_or(&none));
            }
        }
    }
}

/// A copy of `examples/org` without its workspace file, removed when dropped.
struct Copy(PathBuf);

impl Copy {
    fn of_org() -> Copy {
        let to = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("parity-org-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&to);
        copy_tree(&repository().join("examples/org"), &to);
        std::fs::remove_file(to.join("grail.toml")).expect("remove grail.toml");
        Copy(to.canonicalize().expect("the copy"))
    }
}

impl Drop for Copy {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
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

fn assert_agree(what: &str, c: &Comparison) {
    assert!(c.compared > 0, "{what}: no document compared");
    assert!(
        c.differing.is_empty(),
        "{what}: the editor and `grail check` disagree on {} of {} documents ({} not judged by the editor):\n{}",
        c.differing.len(),
        c.compared,
        c.not_judged,
        c.differing.join("\n")
    );
}

#[test]
fn the_editor_shows_what_check_finds_in_every_fixture() {
    let tests = repository().join("policies/guardrails/tests");
    let files = documents(&tests);
    let check = check_each(&tests, &files);
    let mut server = Server::start(&tests);
    let mut c = Comparison::default();
    c.alone(&mut server, &check, &Findings::new());
    server.stop();
    eprintln!("fixtures: {} documents compared, {} not judged by the editor", c.compared, c.not_judged);
    assert_agree("fixtures", &c);
}

#[test]
fn the_editor_shows_what_check_finds_in_every_example() {
    let examples = repository().join("examples");
    let org = examples.join("org");
    let mut c = Comparison::default();

    // Every example but the organisation, which has a workspace file: alone.
    let files: Vec<PathBuf> = documents(&examples).into_iter().filter(|f| !f.starts_with(&org)).collect();
    let check = check_each_alone(&files);
    let mut server = Server::start(&examples);
    c.alone(&mut server, &check, &Findings::new());
    server.stop();

    // The organisation with its workspace file: a member shows the findings
    // of its deployment located in it; any other document is checked alone.
    let deployments = check_deployments(&org);
    let mut server = Server::start(&org);
    let mut alone = Vec::new();
    for file in documents(&org) {
        let uri = uri(&file);
        let member = server
            .request("textDocument/codeLens", json!({"textDocument": {"uri": uri}}))
            .as_array()
            .and_then(|l| l.first().cloned())
            .is_some_and(|l| l["command"]["title"].as_str().unwrap_or_default().contains("of deployment"));
        if member {
            let editor = shown(&file, &server.diagnostics(&uri, Value::Null));
            c.compare(&file, deployments.get(&file).unwrap_or(&BTreeSet::new()), &editor);
        } else {
            alone.push(file);
        }
    }
    let check = check_each_alone(&alone);
    c.alone(&mut server, &check, &deployments);
    server.stop();

    // The organisation without it: every document alone.
    let copy = Copy::of_org();
    let check = check_each_alone(&documents(&copy.0));
    let mut server = Server::start(&copy.0);
    c.alone(&mut server, &check, &Findings::new());
    server.stop();

    eprintln!("examples: {} documents compared, {} not judged by the editor", c.compared, c.not_judged);
    assert_agree("examples", &c);
}
