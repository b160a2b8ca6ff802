//! Hostile policy text: the parser's limits hold, each just under and just
//! over, and no input crashes or hangs it.

use std::time::{Duration, Instant};

use grail_lang::parser::{MAX_NESTING, MAX_PARSE_STEPS};

fn rule_with(check: &str) -> String {
    format!("rule a.b\n  require {check} else fail \"m\"\n")
}

/// The first `n` for which `make(n)` does not parse; every smaller `n` parses.
fn first_refused(make: impl Fn(usize) -> String) -> (usize, String) {
    for n in 1..=2 * MAX_NESTING {
        let parsed = grail_lang::parse(&make(n));
        if let Some(e) = parsed.errors.first() {
            return (n, e.message.clone());
        }
        assert_eq!(parsed.file.items.len(), 1);
    }
    panic!("never refused up to {}", 2 * MAX_NESTING);
}

#[test]
fn an_operator_chain_just_under_the_nesting_limit_parses_and_just_over_is_refused() {
    let (n, message) = first_refused(|n| rule_with(&vec!["x"; n + 1].join(" + ")));
    assert!(n > MAX_NESTING - 16, "a chain of {n} operators is refused: {message}");
    assert_eq!(message, format!("this item nests deeper than {MAX_NESTING} levels"));
    assert!(grail_lang::parse(&rule_with(&vec!["x"; n].join(" + "))).errors.is_empty());
}

#[test]
fn every_operator_counts_towards_the_nesting_limit() {
    for op in [" * ", " ?? ", " == ", " ++ "] {
        let (n, message) = first_refused(|n| rule_with(&vec!["x"; n + 1].join(op)));
        assert_eq!(message, format!("this item nests deeper than {MAX_NESTING} levels"), "{op}");
        assert!(n > MAX_NESTING - 16, "a chain of {n} `{op}` is refused: {message}");
    }
}

#[test]
fn brackets_just_under_the_nesting_limit_parse_and_just_over_are_refused() {
    let (n, message) = first_refused(|n| rule_with(&format!("{}x{}", "(".repeat(n), ")".repeat(n))));
    assert!(n > MAX_NESTING / 4, "{n} brackets are refused: {message}");
    assert_eq!(message, format!("this item nests deeper than {MAX_NESTING} levels"));
}

#[test]
fn deep_nesting_is_a_located_error_not_a_stack_overflow() {
    for text in [
        rule_with(&format!("{}x{}", "(".repeat(100_000), ")".repeat(100_000))),
        rule_with(&"[".repeat(100_000)),
        rule_with(&"not ".repeat(100_000)),
        rule_with(&"every x in y: ".repeat(20_000)),
        rule_with(&vec!["x"; 50_000].join(" and ")),
        rule_with(&vec!["x"; 50_000].join(" * ")),
        rule_with(&format!("{}x{}", "f(".repeat(50_000), ")".repeat(50_000))),
        rule_with(&format!("x{}", ".f".repeat(50_000))),
        format!("enum E {{ {} }}\n", "a ".repeat(50_000)),
    ] {
        let parsed = grail_lang::parse(&text);
        if let Some(e) = parsed.errors.first() {
            assert!(e.span.end <= text.len() && e.span.start <= e.span.end);
            assert!(!e.message.is_empty());
        }
    }
}

#[test]
fn unclosed_brackets_cannot_make_the_parser_backtrack_for_ever() {
    // Found by the mutation run: each unclosed `[` was tried as a comprehension
    // and then as a list, so the work doubled with every level. A list and a
    // comprehension now share their first element, so the parse is linear and
    // the error is the ordinary one; the step and nesting limits stay as a
    // backstop for whatever else could backtrack.
    let text = rule_with(&format!("every n in xs: n in [{}o.name for o in t]", "o.name and n in [".repeat(300)));
    let started = Instant::now();
    let parsed = grail_lang::parse(&text);
    assert!(started.elapsed() < Duration::from_secs(20), "{:?}", started.elapsed());
    let e = parsed.errors.first().expect("an error");
    assert!(
        e.message.starts_with("expected")
            || e.message
                == format!("this item takes more than {MAX_PARSE_STEPS} steps to parse; look for an unclosed bracket")
            || e.message == format!("this item nests deeper than {MAX_NESTING} levels"),
        "{e:?}"
    );
    // `count(x in xs by k)` and `count(xs)` still share a prefix: an
    // unfinished count inside an unfinished count doubles the work per
    // level, and the step limit stops it.
    let text = rule_with(&format!("count({}x) > 0", "x in count(".repeat(60)));
    let started = Instant::now();
    let parsed = grail_lang::parse(&text);
    assert!(started.elapsed() < Duration::from_secs(20), "{:?}", started.elapsed());
    let e = parsed.errors.first().expect("an error");
    assert_eq!(
        e.message,
        format!("this item takes more than {MAX_PARSE_STEPS} steps to parse; look for an unclosed bracket")
    );
    // Just under: a few levels unclosed is an ordinary, precise syntax error.
    let text = rule_with(&format!("every n in xs: n in [{}o.name for o in t]", "o.name and n in [".repeat(3)));
    let parsed = grail_lang::parse(&text);
    let e = parsed.errors.first().expect("an error");
    assert!(e.message.starts_with("expected"), "{e:?}");
}
