//! The shipped library parses without a single error.

use std::fs;

#[test]
fn shipped_library_parses() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../policies/guardrails");
    let mut files = 0;
    for entry in fs::read_dir(dir).expect("policies/guardrails exists") {
        let path = entry.expect("readable entry").path();
        if path.extension().is_some_and(|e| e == "grail") {
            let text = fs::read_to_string(&path).expect("readable policy");
            let parsed = grail_lang::parse(&text);
            let errors: Vec<String> = parsed
                .errors
                .iter()
                .map(|e| format!("{}:{}: {}", path.display(), line_of(&text, e.span.start), e.message))
                .collect();
            assert!(errors.is_empty(), "{}", errors.join("\n"));
            assert!(!parsed.file.items.is_empty(), "{} declares nothing", path.display());
            files += 1;
        }
    }
    assert!(files >= 5, "found only {files} policy files");
}

fn line_of(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())].matches('\n').count() + 1
}
