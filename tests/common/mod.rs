//! What the command-line tests share.

use std::path::Path;
use std::process::Command;

/// The example organisation's three layers, as its invocation binds them.
#[allow(dead_code, reason = "not every test binary checks the example organisation")]
pub const ORG_LAYERS: [&str; 6] = [
    "--layer",
    "security=examples/org/security.yaml",
    "--layer",
    "operator=examples/org/operator.yaml",
    "--layer",
    "repo=examples/org/repo.yaml",
];

/// What a run of `grail` gave.
pub struct Output {
    /// The exit status; -1 when a signal ended the process.
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

/// Runs `grail` from the repository root, without colour, and returns its
/// exit status, standard output and standard error as one text.
pub fn grail(args: &[&str]) -> String {
    grail_in(Path::new(env!("CARGO_MANIFEST_DIR")), args)
}

/// Runs `grail` from `dir`, as [`grail`] does from the repository root.
pub fn grail_in(dir: &Path, args: &[&str]) -> String {
    let out = run_in(dir, args);
    format!(
        "exit: {}\n--- stdout\n{}--- stderr\n{}",
        if out.code < 0 { "signal".into() } else { out.code.to_string() },
        out.stdout,
        out.stderr
    )
}

/// Runs `grail` from `dir`, without colour: its exit status and outputs apart.
pub fn run_in(dir: &Path, args: &[&str]) -> Output {
    let out = Command::new(env!("CARGO_BIN_EXE_grail"))
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        // A `--policy DIR` is cached under cargo's temporary folder, not the user's.
        .env("GRAIL_CACHE_DIR", Path::new(env!("CARGO_TARGET_TMPDIR")).join("grail-cache"))
        .output()
        .expect("grail runs");
    Output {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// A message map of docs/upstream.md: the rows of the table under the
/// heading `section`, each the text an upstream message holds and the grail
/// rules that report it.
#[allow(dead_code, reason = "only the agreement tests read docs/upstream.md")]
pub fn message_table(section: &str) -> Vec<(String, Vec<String>)> {
    let doc = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/upstream.md"))
        .expect("docs/upstream.md");
    let section = doc.split(&format!("## {section}")).nth(1).expect("the section");
    let section = section.split("\n## ").next().unwrap_or("");
    let ticked = |cell: &str| -> Vec<String> { cell.split('`').skip(1).step_by(2).map(str::to_string).collect() };
    section
        .lines()
        .filter(|l| l.starts_with("| `"))
        .map(|l| {
            let cells: Vec<&str> = l.split(" | ").collect();
            (ticked(cells[0]).into_iter().next().unwrap_or_default(), ticked(cells.get(1).copied().unwrap_or("")))
        })
        .collect()
}

/// The text of every file of the shipped library, one after the other.
#[allow(dead_code, reason = "only the agreement tests read the library's text")]
pub fn library_text() -> String {
    std::fs::read_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("policies/guardrails"))
        .expect("the library")
        .filter_map(|e| e.ok())
        .filter(|e| e.path().extension().is_some_and(|x| x == "grail"))
        .map(|e| std::fs::read_to_string(e.path()).unwrap_or_default())
        .collect()
}
