//! `grail fmt` end to end: what it prints, what it rewrites, its exit codes.

use std::path::{Path, PathBuf};

mod common;
use common::{grail, grail_in};

/// A fresh folder holding copies of the named files of `tests/inputs/fmt`.
fn scratch(name: &str, files: &[&str]) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("policies")).expect("scratch folder");
    for file in files {
        let from = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/inputs/fmt").join(file);
        std::fs::copy(from, dir.join("policies").join(file)).expect("copy");
    }
    dir
}

#[test]
fn the_shipped_library_is_formatted() {
    let out = grail(&["fmt", "--check", "policies"]);
    assert_eq!(out, "exit: 0\n--- stdout\n--- stderr\n");
}

#[test]
fn check_prints_a_diff_and_exits_1() {
    insta::assert_snapshot!(grail(&["fmt", "--check", "tests/inputs/fmt/unformatted.grail"]));
}

#[test]
fn check_changes_nothing() {
    let dir = scratch("check_changes_nothing", &["unformatted.grail"]);
    let before = std::fs::read_to_string(dir.join("policies/unformatted.grail")).expect("copied");
    let out = grail_in(&dir, &["fmt", "--check", "policies"]);
    assert!(out.starts_with("exit: 1"), "{out}");
    let after = std::fs::read_to_string(dir.join("policies/unformatted.grail")).expect("still there");
    assert_eq!(before, after);
}

#[test]
fn fmt_rewrites_a_folder_and_prints_what_it_changed() {
    let dir = scratch("fmt_rewrites", &["unformatted.grail"]);
    let out = grail_in(&dir, &["fmt", "policies"]);
    assert_eq!(out, "exit: 0\n--- stdout\npolicies/unformatted.grail\n--- stderr\n");
    let formatted = std::fs::read_to_string(dir.join("policies/unformatted.grail")).expect("rewritten");
    insta::assert_snapshot!(formatted);
    // Formatted once, nothing is left to change.
    let again = grail_in(&dir, &["fmt", "policies"]);
    assert_eq!(again, "exit: 0\n--- stdout\n--- stderr\n");
    let check = grail_in(&dir, &["fmt", "--check", "policies"]);
    assert_eq!(check, "exit: 0\n--- stdout\n--- stderr\n");
}

#[test]
fn a_file_that_does_not_parse_is_left_alone_and_exits_2() {
    let dir = scratch("does_not_parse", &["unparsable.grail", "unformatted.grail"]);
    let before = std::fs::read_to_string(dir.join("policies/unparsable.grail")).expect("copied");
    let out = grail_in(&dir, &["fmt", "policies"]);
    insta::assert_snapshot!(out);
    assert_eq!(std::fs::read_to_string(dir.join("policies/unparsable.grail")).expect("kept"), before);

    let check = grail_in(&dir, &["fmt", "--check", "policies/unparsable.grail"]);
    assert!(check.starts_with("exit: 2"), "{check}");
}

#[test]
fn a_missing_file_cannot_be_formatted() {
    let out = grail(&["fmt", "--check", "tests/inputs/fmt/no-such-file.grail"]);
    assert_eq!(
        out,
        "exit: 2\n--- stdout\n--- stderr\nerror: cannot format `tests/inputs/fmt/no-such-file.grail`: no such file or folder\n"
    );
}

#[test]
fn help_shows_examples_and_exit_codes() {
    let help = grail(&["fmt", "--help"]);
    assert!(help.contains("grail fmt --check policies examples"), "{help}");
    assert!(help.contains("1 with --check when a file would change"), "{help}");
}
