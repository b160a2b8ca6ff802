//! Every ```console example of README.md and examples/README.md, run: each
//! `$ command` runs in `sh` (with this build's `grail` first on `PATH`, no
//! colour, standard error after standard output) from a copy of the
//! repository's layout, and prints what the document shows under it. A line
//! `...` stands for any number of lines; `echo $?` prints the status of the
//! command before it. A block that is only output (no `$`) is not a console
//! example: write it as ```text. A comment `<!-- $ command -->` just before
//! any fenced block (a ```mermaid drawing, say) makes the block that
//! command's output, exactly.
//!
//! When an output changes on purpose, refresh the documents instead of
//! editing them by hand: `GRAIL_UPDATE_DOCS=1 cargo test --test readme`
//! rewrites every example that differs (keeping as many lines around each
//! `...` as before), then review the diff.

use std::path::{Path, PathBuf};
use std::process::Command;

const DOCUMENTS: [&str; 2] = ["README.md", "examples/README.md"];
const UPDATE: &str = "GRAIL_UPDATE_DOCS";

/// One `$ command` of a console block and the lines shown under it.
struct Example {
    /// The line of the `$`, counted from 1.
    line: usize,
    command: String,
    /// Where the shown output is in the document's lines, `[start, end)`.
    output: (usize, usize),
    /// A block that is the command's output alone (`<!-- $ command -->` before it).
    exact: bool,
}

fn examples(text: &str) -> Vec<Example> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        // `<!-- $ command -->` just before a fenced block: the block is exactly its output.
        if let Some(command) = lines[i].trim().strip_prefix("<!-- $ ").and_then(|l| l.strip_suffix(" -->"))
            && lines.get(i + 1).is_some_and(|l| l.starts_with("```"))
        {
            let start = i + 2;
            let end = (start..lines.len()).find(|&j| lines[j].trim_end() == "```").unwrap_or(lines.len());
            out.push(Example { line: i + 1, command: command.to_string(), output: (start, end), exact: true });
            i = end + 1;
            continue;
        }
        if lines[i].trim_end() != "```console" {
            i += 1;
            continue;
        }
        let start = i + 1;
        let end = (start..lines.len()).find(|&j| lines[j].trim_end() == "```").unwrap_or(lines.len());
        let mut j = start;
        while j < end {
            let Some(first) = lines[j].strip_prefix("$ ") else {
                j += 1;
                continue;
            };
            let line = j + 1;
            let mut command = first.to_string();
            while command.ends_with('\\') && j + 1 < end {
                command.pop();
                command.truncate(command.trim_end().len());
                j += 1;
                command.push(' ');
                command.push_str(lines[j].trim_start());
            }
            let from = j + 1;
            let to = (from..end).find(|&k| lines[k].starts_with("$ ")).unwrap_or(end);
            out.push(Example { line, command, output: (from, to), exact: false });
            j = to;
        }
        i = end + 1;
    }
    out
}

fn is_elision(line: &str) -> bool {
    line.trim() == "..."
}

/// Whether `actual` is what `shown` shows, a `...` line standing for any lines.
fn matches(shown: &[&str], actual: &[&str]) -> bool {
    match shown.split_first() {
        None => actual.is_empty(),
        Some((first, rest)) if is_elision(first) => (0..=actual.len()).any(|k| matches(rest, &actual[k..])),
        Some((first, rest)) => {
            actual.first().is_some_and(|a| a.trim_end() == first.trim_end()) && matches(rest, &actual[1..])
        }
    }
}

/// The refreshed example: the real output, elided as the old one was
/// (as many lines kept before its first `...` and after its last).
fn refreshed(shown: &[&str], actual: &[&str]) -> Vec<String> {
    let (Some(first), Some(last)) =
        (shown.iter().position(|l| is_elision(l)), shown.iter().rposition(|l| is_elision(l)))
    else {
        return actual.iter().map(|l| l.trim_end().to_string()).collect();
    };
    let head = first.min(actual.len());
    let tail = (shown.len() - last - 1).min(actual.len() - head);
    let mut out: Vec<String> = actual[..head].iter().map(|l| l.trim_end().to_string()).collect();
    out.push(shown[first].to_string());
    out.extend(actual[actual.len() - tail..].iter().map(|l| l.trim_end().to_string()));
    out
}

/// A scratch copy of the repository's layout: the commands read `examples/`
/// and `policies/` and may write (`--out build/...`) without touching the tree.
fn workspace() -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = std::env::temp_dir().join(format!("grail-readme-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a scratch folder");
    for name in ["examples", "policies", "tests", "benches"] {
        std::os::unix::fs::symlink(root.join(name), dir.join(name)).expect("link into the scratch folder");
    }
    dir
}

fn run(dir: &Path, command: &str, last: i32) -> (i32, String) {
    if command.trim() == "echo $?" {
        return (0, format!("{last}\n"));
    }
    let bin = Path::new(env!("CARGO_BIN_EXE_grail")).parent().expect("the binary's folder").to_path_buf();
    let path = std::env::join_paths(
        std::iter::once(bin).chain(std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())),
    )
    .expect("a PATH");
    let out = Command::new("sh")
        .arg("-c")
        .arg(format!("{{ {command}\n}} 2>&1"))
        .current_dir(dir)
        .env("PATH", path)
        .env("NO_COLOR", "1")
        .env("COLUMNS", "100")
        .output()
        .expect("sh runs");
    (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stdout).into_owned())
}

#[test]
fn the_console_examples_print_what_they_show() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = workspace();
    let update = std::env::var_os(UPDATE).is_some();
    let mut problems = Vec::new();
    let mut ran = 0;
    for document in DOCUMENTS {
        let path = root.join(document);
        let text = std::fs::read_to_string(&path).expect("the document");
        let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
        let mut last = 0;
        // Replaced from the end, so earlier positions stay right.
        let mut replacements = Vec::new();
        for e in examples(&text) {
            let (code, actual) = run(&dir, &e.command, last);
            last = code;
            ran += 1;
            let mut shown: Vec<&str> = text.lines().collect::<Vec<_>>()[e.output.0..e.output.1].to_vec();
            // Blank lines between two commands of a block are layout, not output.
            let mut blank = 0;
            while shown.last().is_some_and(|l| l.trim().is_empty()) {
                shown.pop();
                blank += 1;
            }
            let mut actual: Vec<&str> = actual.lines().collect();
            while e.exact && actual.last().is_some_and(|l| l.trim().is_empty()) {
                actual.pop();
            }
            if matches(&shown, &actual) {
                continue;
            }
            if update {
                let mut new = refreshed(&shown, &actual);
                new.extend(std::iter::repeat_n(String::new(), blank));
                replacements.push((e.output, new));
            } else {
                problems.push(format!(
                    "{document}:{}: `$ {}` prints something else than the document shows\n--- shown\n{}\n--- printed\n{}\n",
                    e.line,
                    e.command,
                    shown.join("\n"),
                    actual.join("\n")
                ));
            }
        }
        if update && !replacements.is_empty() {
            for ((from, to), new) in replacements.into_iter().rev() {
                lines.splice(from..to, new);
            }
            let mut new = lines.join("\n");
            new.push('\n');
            std::fs::write(&path, new).expect("rewrite the document");
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    assert!(ran >= 8, "only {ran} console examples were found");
    assert!(
        problems.is_empty(),
        "{}\n{} console example(s) differ from the real output. If the new output is right, refresh them with\n    {UPDATE}=1 cargo test --test readme\nand review the diff of README.md and examples/README.md.",
        problems.join("\n"),
        problems.len()
    );
}

#[test]
fn an_elision_stands_for_any_lines_and_nothing_else_differs() {
    assert!(matches(&["a", "...", "d"], &["a", "b", "c", "d"]));
    assert!(matches(&["a", "  ...", "d"], &["a", "d"]));
    assert!(!matches(&["a", "...", "d"], &["a", "b", "c"]));
    assert!(!matches(&["a", "b"], &["a", "c"]));
    assert!(!matches(&["a"], &["a", "b"]));
    assert_eq!(refreshed(&["x", "...", "z"], &["a", "b", "c", "d"]), ["a", "...", "d"]);
    assert_eq!(refreshed(&["x"], &["a", "b"]), ["a", "b"]);
    let found = examples("```console\n$ grail a \\\n    b\nout\n$ echo $?\n0\n```\n```console\nonly output\n```\n");
    assert_eq!(found.len(), 2);
    assert_eq!(found[0].command, "grail a b");
    assert_eq!(found[0].output, (3, 4));
    assert_eq!(found[1].line, 5);
    let drawn = examples("<!-- $ grail graph x -->\n```mermaid\nflowchart LR\n```\n");
    assert_eq!((drawn[0].command.as_str(), drawn[0].output, drawn[0].exact), ("grail graph x", (2, 3), true));
}
