//! The error corpus: every file in `tests/errors/` is a bad input, run
//! through the command line; the exact output is snapshotted, one snapshot per
//! file (`tests/snapshots/errors__*.snap`). Policies with errors
//! (`tests/errors/policies/*.grail`) are checked as the policy of a good
//! binding; documents (`tests/errors/documents/*`) against the shipped library.
//!
//! Review a changed snapshot against STYLE.md: lower case, no final period,
//! user input in backticks, a span, help text, "did you mean" where a near
//! name exists.

use std::path::Path;

mod common;
use common::grail;

/// The path relative to the repository, with `/` separators.
fn relative(path: &Path) -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    path.strip_prefix(root).unwrap_or(path).to_string_lossy().replace('\\', "/")
}

#[test]
fn bad_policies() {
    insta::glob!("errors/policies/*.grail", |path| {
        let out = grail(&["check", "--policy", &relative(path), "examples/bindings/good.yaml"]);
        assert!(out.starts_with("exit: 2"), "a policy with errors stops the check: {out}");
        insta::assert_snapshot!(out);
    });
}

#[test]
fn bad_documents() {
    insta::glob!("errors/documents/*", |path| {
        let out = grail(&["check", &relative(path)]);
        assert!(out.starts_with("exit: 1"), "a bad document is a finding: {out}");
        insta::assert_snapshot!(out);
    });
}

#[test]
fn the_corpus_has_at_least_40_inputs() {
    let count = |dir: &str| std::fs::read_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join(dir)).map_or(0, |d| d.count());
    let (policies, documents) = (count("tests/errors/policies"), count("tests/errors/documents"));
    assert!(policies >= 20 && documents >= 20 && policies + documents >= 40, "{policies} + {documents}");
}
