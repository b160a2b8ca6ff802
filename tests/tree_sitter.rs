//! The tree-sitter grammar of `.grail` (`editors/tree-sitter-grail/`), with
//! the tree-sitter CLI (`cargo install tree-sitter-cli`, as `scripts/test`
//! does; `GRAIL_TREE_SITTER` names another binary):
//! - the committed parser (`src/`) is what `tree-sitter generate` makes of
//!   `grammar.js` today, so the two cannot drift;
//! - `tree-sitter test` passes on its corpus (`test/corpus/`: every example
//!   of docs/language.md and one case of each remaining construct), and the
//!   highlight and fold queries name only nodes the grammar has;
//! - every `.grail` file of the repository that grail's own parser accepts,
//!   and every `grail` example of docs/language.md, parses without an ERROR
//!   or MISSING node.

use std::path::{Path, PathBuf};
use std::process::Command;

fn tree_sitter() -> PathBuf {
    let bin = std::env::var_os("GRAIL_TREE_SITTER").map(PathBuf::from).unwrap_or_else(|| PathBuf::from("tree-sitter"));
    let found = Command::new(&bin).arg("--version").output();
    assert!(
        found.as_ref().is_ok_and(|o| o.status.success()),
        "this test needs the tree-sitter CLI 0.26: `cargo install tree-sitter-cli --version 0.26.13 --locked` \
         (as scripts/test does), or set GRAIL_TREE_SITTER"
    );
    bin
}

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// A copy of the grammar's folder to work in (generate and test write into it).
fn workdir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("grail-tree-sitter-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    copy(&root().join("editors/tree-sitter-grail"), &dir);
    dir
}

fn copy(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("a folder");
    for entry in std::fs::read_dir(from).expect("a readable folder").flatten() {
        let path = entry.path();
        if path.is_dir() {
            copy(&path, &to.join(entry.file_name()));
        } else {
            std::fs::copy(&path, to.join(entry.file_name())).expect("a file copied");
        }
    }
}

fn run(dir: &Path, args: &[&str]) -> (bool, String) {
    let out = Command::new(tree_sitter())
        .args(args)
        .current_dir(dir)
        // Compiled parsers go to the work folder, not the user's cache.
        .env("TREE_SITTER_LIBDIR", dir.join("lib"))
        .output()
        .expect("tree-sitter runs");
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    (out.status.success(), text)
}

#[test]
fn the_committed_parser_is_generated_from_the_grammar() {
    let dir = workdir("generate");
    let (ok, out) = run(&dir, &["generate"]);
    assert!(ok, "tree-sitter generate: {out}");
    for file in ["src/parser.c", "src/grammar.json", "src/node-types.json"] {
        let generated = std::fs::read_to_string(dir.join(file)).expect("generated");
        let committed =
            std::fs::read_to_string(root().join("editors/tree-sitter-grail").join(file)).unwrap_or_else(|e| {
                panic!("{file} is not committed ({e}): run `tree-sitter generate` in editors/tree-sitter-grail")
            });
        assert!(
            generated == committed,
            "editors/tree-sitter-grail/{file} is not what grammar.js generates: run `tree-sitter generate` there"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_corpus_passes_tree_sitter_test() {
    let dir = workdir("test");
    let (ok, out) = run(&dir, &["test"]);
    assert!(ok, "tree-sitter test:\n{out}");
    let cases = out.lines().filter(|l| l.contains('✓')).count();
    assert!(cases >= 20, "only {cases} corpus cases ran:\n{out}");
    // The editors' queries name only nodes the grammar has.
    let sample = dir.join("sample.grail");
    std::fs::copy(root().join("policies/guardrails/binding.grail"), &sample).expect("a sample");
    for query in ["queries/highlights.scm", "queries/folds.scm"] {
        let (ok, out) = run(&dir, &["query", query, sample.to_string_lossy().as_ref()]);
        assert!(ok, "tree-sitter query {query}:\n{out}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Every `.grail` file under `dir`, except build output and fuzz corpora.
fn grail_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("a readable folder").flatten() {
        let path = entry.path();
        let name = entry.file_name();
        if path.is_dir() {
            if !["target", ".git", "corpus", "node_modules"].contains(&name.to_string_lossy().as_ref()) {
                grail_files(&path, out);
            }
        } else if path.extension().is_some_and(|e| e == "grail") {
            out.push(path);
        }
    }
}

#[test]
fn every_grail_file_grail_accepts_parses_without_an_error_node() {
    let dir = workdir("parse");
    let mut files = Vec::new();
    grail_files(root(), &mut files);
    files.sort();
    let mut accepted: Vec<PathBuf> = Vec::new();
    for f in &files {
        let text = std::fs::read_to_string(f).expect("a policy file");
        if grail_lang::parse(&text).errors.is_empty() {
            accepted.push(f.clone());
        }
    }
    // The examples of docs/language.md, one file each.
    let doc = std::fs::read_to_string(root().join("docs/language.md")).expect("docs/language.md");
    let mut block: Option<String> = None;
    let mut examples = 0;
    for line in doc.lines() {
        match (&mut block, line) {
            (None, "```grail") => block = Some(String::new()),
            (Some(b), "```") => {
                let path = dir.join(format!("language-{examples}.grail"));
                std::fs::write(&path, b.as_str()).expect("an example written");
                accepted.push(path);
                examples += 1;
                block = None;
            }
            (Some(b), l) => {
                b.push_str(l);
                b.push('\n');
            }
            (None, _) => {}
        }
    }
    assert!(examples >= 20 && accepted.len() >= 60, "{examples} examples, {} files", accepted.len());
    let (ok, out) = run(&dir, &["generate"]);
    assert!(ok, "tree-sitter generate: {out}");
    let mut broken = Vec::new();
    for f in &accepted {
        let path = f.to_string_lossy();
        let (_, tree) = run(&dir, &["parse", path.as_ref()]);
        if tree.contains("(ERROR") || tree.contains("(MISSING") {
            let at: Vec<&str> = tree.lines().filter(|l| l.contains("ERROR") || l.contains("MISSING")).take(3).collect();
            broken.push(format!("{path}: {}", at.join(" | ")));
        }
    }
    assert!(broken.is_empty(), "{} of {} files do not parse:\n{}", broken.len(), accepted.len(), broken.join("\n"));
    eprintln!(
        "{} files parsed without an ERROR node ({examples} examples of docs/language.md); {} grail refuses",
        accepted.len(),
        files.len() + examples - accepted.len()
    );
    let _ = std::fs::remove_dir_all(&dir);
}
