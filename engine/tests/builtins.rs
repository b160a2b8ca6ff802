//! The catalogue of built-in functions (`grail_engine::builtins`) agrees with
//! the compiler, with docs/language.md, and answers the editor: every entry
//! is a function the compiler knows, every function the docs' table lists is
//! in it (and no other), and a policy file gets hovers and signature help
//! for each.

use std::collections::BTreeSet;

use grail_engine::builtins::{FUNCTIONS, function, parameters};
use grail_engine::db::compile_policy;
use grail_engine::ide;
use grail_engine::{Database, PolicySet, SourceText};

fn policy(db: &Database, text: &str) -> (PolicySet, SourceText) {
    let file = SourceText::new(db, "policy.grail".into(), text.into(), None);
    (PolicySet::new(db, vec![file]), file)
}

#[test]
fn every_function_of_the_catalogue_is_one_the_compiler_knows() {
    for f in FUNCTIONS {
        let n = parameters(f.signatures[0]).len();
        let args: Vec<String> = (0..n).map(|i| format!("a{i}")).collect();
        let values: Vec<String> = (0..n).map(|i| i.to_string()).collect();
        // A function's body is lowered where it is called: a rule calls it.
        let text = format!(
            "fn probe({}) = {}({})\n\nrule t.probe\n  require present(probe({})) else fail \"x\"\n",
            args.join(", "),
            f.name,
            args.join(", "),
            values.join(", ")
        );
        let db = Database::default();
        let (set, _) = policy(&db, &text);
        let compiled = compile_policy(&db, set);
        let unknown: Vec<String> =
            compiled.diagnostics.iter().filter(|d| d.code == "unknown-name").map(|d| d.message.clone()).collect();
        assert!(unknown.is_empty(), "`{}`: {unknown:?}", f.name);
    }
    // A name that is not one is refused, and the catalogue suggests the near one.
    let db = Database::default();
    let (set, _) = policy(&db, "fn probe(a) = is_nul(a)\n\nrule t.probe\n  require probe(1) else fail \"x\"\n");
    let compiled = compile_policy(&db, set);
    let d = compiled.diagnostics.iter().find(|d| d.code == "unknown-name").expect("an unknown function");
    assert!(d.help.as_deref().unwrap_or_default().contains("is_null"), "{d:?}");
}

#[test]
fn the_table_of_docs_language_lists_exactly_the_catalogue() {
    let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/language.md")).expect("docs");
    let start = doc.find("## Expressions").expect("the Expressions section");
    let mut listed = BTreeSet::new();
    for line in doc[start..].lines().skip_while(|l| !l.starts_with("| form")).take_while(|l| l.starts_with('|')) {
        let form = line.split('|').nth(1).unwrap_or_default();
        // Every `name(` in the first column, outside the operators' rows.
        for piece in form.split('`').skip(1).step_by(2) {
            if let Some((name, _)) = piece.split_once('(')
                && !name.is_empty()
                && name.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
            {
                listed.insert(name.to_string());
            }
        }
    }
    let catalogue: BTreeSet<String> = FUNCTIONS.iter().map(|f| f.name.to_string()).collect();
    assert_eq!(listed, catalogue, "docs/language.md's table and builtins::FUNCTIONS");
}

/// A policy text with `$0` as the cursor.
fn at(marked: &str) -> (Database, PolicySet, SourceText, usize) {
    let offset = marked.find("$0").expect("a cursor");
    let db = Database::default();
    let (set, file) = policy(&db, &marked.replacen("$0", "", 1));
    (db, set, file, offset)
}

#[test]
fn a_call_of_a_built_in_has_a_hover_and_signature_help() {
    let (db, set, file, offset) = at("fn recent(g) = ti$0mestamp(g.at)\n");
    let hover = ide::hover(&db, set, file, offset).expect("a hover on a built-in");
    assert!(hover.markdown.contains("timestamp(s)") && hover.markdown.contains("RFC 3339"), "{}", hover.markdown);

    let (db, set, file, offset) = at("fn joined(a, b) = replace(a, \"x, y\", $0b)\n");
    let help = ide::signature_help(&db, set, file, offset).expect("signature help");
    assert_eq!(help.signatures, vec!["replace(s, from, to)".to_string()]);
    assert_eq!(help.argument, 2, "the comma inside the string is not an argument's");
    assert_eq!(help.doc, function("replace").map(|f| f.doc).unwrap_or_default());

    // Two forms, nested calls: the innermost open call is the one helped.
    let (db, set, file, offset) = at("fn n(xs) = count(x in xs by lower($0x.k))\n");
    let help = ide::signature_help(&db, set, file, offset).expect("signature help");
    assert_eq!(help.signatures, vec!["lower(s)".to_string()]);
    let (db, set, file, offset) = at("fn n(xs) = count($0xs)\n");
    let help = ide::signature_help(&db, set, file, offset).expect("signature help");
    assert_eq!(help.signatures.len(), 2, "{help:?}");

    // A declared function: its own parameters; outside any call, none.
    let (db, set, file, offset) = at("/// Twice.\nfn twice(n) = n * 2\nfn four() = twice($0)\n");
    let help = ide::signature_help(&db, set, file, offset).expect("signature help");
    assert_eq!(help.signatures, vec!["twice(n)".to_string()]);
    assert_eq!(help.doc, "Twice.");
    let (db, set, file, offset) = at("fn four() = 2 *$0 2\n");
    assert_eq!(ide::signature_help(&db, set, file, offset), None);
}

#[test]
fn completion_in_a_policy_offers_every_built_in_with_its_signature() {
    let (db, set, file, offset) = at("fn f(x) = $0\n");
    let items = ide::completions(&db, set, file, offset).expect("completions").items;
    for f in FUNCTIONS {
        let item = items.iter().find(|i| i.label == f.name).unwrap_or_else(|| panic!("`{}` is offered", f.name));
        assert!(item.detail.contains(f.signatures[0]), "{item:?}");
    }
}

#[test]
fn parameters_of_a_signature_are_split_at_its_own_commas() {
    assert_eq!(parameters("max(a, b)"), vec!["a", "b"]);
    assert_eq!(parameters("now()"), Vec::<&str>::new());
    assert_eq!(parameters("holds([\"rule.id\", \"prefix.*\"], x)"), vec!["[\"rule.id\", \"prefix.*\"]", "x"]);
    assert_eq!(parameters("split(s, \",\")"), vec!["s", "\",\""]);
}
