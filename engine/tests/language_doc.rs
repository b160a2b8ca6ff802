//! Every `grail` example in docs/language.md compiles, all of them together as
//! one policy, without a single diagnostic.

use grail_engine::db::compile_policy;
use grail_engine::{Database, PolicySet, SourceText};

#[test]
fn the_language_reference_examples_compile() {
    let doc = include_str!("../../docs/language.md");
    let mut blocks = Vec::new();
    let mut current: Option<String> = None;
    for line in doc.lines() {
        match (&mut current, line.trim_end()) {
            (None, "```grail") => current = Some(String::new()),
            (Some(_), "```") => blocks.push(current.take().unwrap_or_default()),
            (Some(block), _) => {
                block.push_str(line);
                block.push('\n');
            }
            _ => {}
        }
    }
    assert!(blocks.len() >= 6, "found {} grail blocks", blocks.len());
    let db = Database::default();
    let files: Vec<SourceText> = blocks
        .iter()
        .enumerate()
        .map(|(i, b)| SourceText::new(&db, format!("block-{i}.grail"), b.clone(), None))
        .collect();
    let compiled = compile_policy(&db, PolicySet::new(&db, files));
    let problems: Vec<String> = compiled
        .diagnostics
        .iter()
        .map(|d| {
            format!(
                "block {}: {} {} at {:?}: {:?}",
                d.loc.file,
                d.code,
                d.message,
                d.loc.span,
                &blocks[d.loc.file as usize].get(d.loc.span.start..d.loc.span.end)
            )
        })
        .collect();
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    assert!(compiled.policy.rules.len() >= 3);
}
