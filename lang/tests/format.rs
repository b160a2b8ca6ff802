//! The formatter's invariants on every policy we ship or document: every
//! `.grail` file under `policies/` and `examples/`, and every `grail` block
//! of `docs/language.md`, formats to text that parses to the same tree
//! (spans aside), keeps the same comments, and formats to itself.

use std::fs;
use std::path::{Path, PathBuf};

use grail_lang::format::{comment_texts, format, shape};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn grail_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else { return };
    for entry in entries {
        let path = entry.expect("readable entry").path();
        if path.is_dir() {
            grail_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "grail") {
            out.push(path);
        }
    }
}

/// The `grail` blocks of a markdown text.
fn grail_blocks(markdown: &str) -> Vec<String> {
    let mut blocks = Vec::new();
    let mut current: Option<String> = None;
    for line in markdown.lines() {
        match (&mut current, line.trim_end()) {
            (None, "```grail") => current = Some(String::new()),
            (Some(_), "```") => blocks.extend(current.take()),
            (Some(block), _) => {
                block.push_str(line);
                block.push('\n');
            }
            _ => {}
        }
    }
    blocks
}

/// Every text the formatter must handle, with a name for messages.
fn corpus() -> Vec<(String, String)> {
    let mut paths = Vec::new();
    grail_files(&root().join("policies"), &mut paths);
    grail_files(&root().join("examples"), &mut paths);
    paths.sort();
    let mut texts: Vec<(String, String)> =
        paths.iter().map(|p| (p.display().to_string(), fs::read_to_string(p).expect("readable policy"))).collect();
    let language = fs::read_to_string(root().join("docs/language.md")).expect("docs/language.md");
    texts.extend(
        grail_blocks(&language).into_iter().enumerate().map(|(i, b)| (format!("docs/language.md block {i}"), b)),
    );
    texts
}

#[test]
fn formatting_preserves_meaning_and_comments_and_is_idempotent() {
    let corpus = corpus();
    assert!(corpus.len() >= 14, "found only {} texts", corpus.len());
    for (name, text) in &corpus {
        let before = grail_lang::parse(text);
        assert!(before.errors.is_empty(), "{name} does not parse: {:?}", before.errors);
        let formatted = format(text).unwrap_or_else(|e| panic!("{name} is refused: {e:?}"));

        let after = grail_lang::parse(&formatted);
        assert!(after.errors.is_empty(), "{name} formatted does not parse: {:?}\n{formatted}", after.errors);
        assert_eq!(shape(&before.file), shape(&after.file), "{name}: formatting changed the tree\n{formatted}");
        assert_eq!(comment_texts(text), comment_texts(&formatted), "{name}: formatting changed the comments");

        let again = format(&formatted).unwrap_or_else(|e| panic!("{name} formatted is refused: {e:?}"));
        assert_eq!(formatted, again, "{name}: formatting is not idempotent");
    }
}

#[test]
fn the_language_reference_is_formatted() {
    let language = fs::read_to_string(root().join("docs/language.md")).expect("docs/language.md");
    for (i, block) in grail_blocks(&language).iter().enumerate() {
        let formatted = format(block).expect("the examples parse");
        assert_eq!(&formatted, block, "block {i} of docs/language.md is not formatted");
    }
}

#[test]
fn spans_do_not_count_but_everything_else_does() {
    let a = grail_lang::parse("enum A { x y }\n").file;
    let moved = grail_lang::parse("\n\nenum   A {\n  x\n  y\n}\n").file;
    let other = grail_lang::parse("enum A { y x }\n").file;
    assert_ne!(a, moved, "the spans differ");
    assert_eq!(shape(&a), shape(&moved));
    assert_ne!(shape(&a), shape(&other));
}

#[test]
fn comments_anywhere_survive() {
    // Every text of the corpus with a comment put before each newline (but
    // after a top-level `///` line, which must stay right above its item):
    // in turn at the end of the line, on a line of its own, indented or not.
    const COMMENTS: [&str; 3] = [" // trailing", "\n// own line", "\n    // indented"];
    for (name, text) in corpus() {
        for turn in 0..COMMENTS.len() {
            let mut variant = String::new();
            let mut from = 0;
            for (n, (at, _)) in text.match_indices('\n').enumerate() {
                let line = &text[from..at];
                variant.push_str(line);
                if !line.trim_start_matches('\n').starts_with("///") {
                    variant.push_str(COMMENTS[(n + turn) % COMMENTS.len()]);
                    variant.push_str(&format!(" {n}"));
                }
                from = at;
            }
            variant.push_str(&text[from..]);
            let context = format!("{name} with comments, turn {turn}");
            assert!(grail_lang::parse(&variant).errors.is_empty(), "{context}: does not parse\n{variant}");
            let formatted = format(&variant).unwrap_or_else(|e| panic!("{context}: refused: {e:?}\n{variant}"));
            assert_eq!(comment_texts(&variant), comment_texts(&formatted), "{context}");
            let again = format(&formatted).unwrap_or_else(|e| panic!("{context}: refused once formatted: {e:?}"));
            assert_eq!(formatted, again, "{context}: not idempotent");
        }
    }
}
