//! `grail compile` end to end: refusal of a failing deployment, byte-for-byte
//! determinism, the JSON form's stability under reformatting, and the JSON
//! Schemas judged by an independent validator (Python's `jsonschema`).

use std::path::{Path, PathBuf};
use std::process::Command;

use grail_engine::hir::{KeyCondDef, SelectorDef};
use grail_engine::{Database, SourceText};
use serde_json::{Value, json};

mod common;
use common::{grail, run_in};

fn run_grail(args: &[&str]) -> common::Output {
    run_in(Path::new(env!("CARGO_MANIFEST_DIR")), args)
}

/// A fresh folder for one test.
fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("compile").join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch folder");
    dir
}

/// Every file of a folder, by name, with its bytes.
fn files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut v: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
        .expect("output folder")
        .flatten()
        .map(|e| (e.file_name().to_string_lossy().into_owned(), std::fs::read(e.path()).expect("readable")))
        .collect();
    v.sort();
    v
}

fn compile(dir: &Path, args: &[&str]) -> Vec<(String, Vec<u8>)> {
    let out = dir.to_string_lossy().into_owned();
    let mut all = vec!["compile", "--out", &out];
    all.extend_from_slice(args);
    let run = run_grail(&all);
    assert_eq!(run.code, 0, "grail {all:?}\n{}{}", run.stdout, run.stderr);
    let written = files(dir);
    let listed: Vec<String> = run.stdout.lines().map(|l| l.rsplit('/').next().unwrap_or(l).to_string()).collect();
    let mut names: Vec<String> = written.iter().map(|(n, _)| n.clone()).collect();
    let mut sorted = listed.clone();
    sorted.sort();
    names.sort();
    assert_eq!(sorted, names, "standard output lists the files written");
    written
}

/// The example organisation's layers if it is there, else the good binding.
fn example_deployment() -> Vec<String> {
    let org = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/org");
    let layers = ["security.yaml", "operator.yaml", "repo.yaml"];
    if layers.iter().all(|f| org.join(f).is_file()) {
        layers.iter().map(|f| format!("--layer={}=examples/org/{f}", f.trim_end_matches(".yaml"))).collect()
    } else {
        vec!["examples/bindings/good.yaml".into()]
    }
}

#[test]
fn compile_is_deterministic_byte_for_byte() {
    let deployment = example_deployment();
    // The example organisation's deliberate gap is UNKNOWN (examples/README.md).
    let mut cedar: Vec<&str> = vec!["--target", "cedar", "--allow-unknown"];
    cedar.extend(deployment.iter().map(String::as_str));
    let targets: [(&str, Vec<&str>); 4] = [
        ("cedar", cedar),
        ("cedar-good", vec!["--target", "cedar", "examples/bindings/good.yaml"]),
        ("json", vec!["--target", "json"]),
        ("jsonschema", vec!["--target", "jsonschema"]),
    ];
    for (name, args) in targets {
        let first = compile(&scratch(&format!("twice-{name}-1")), &args);
        let second = compile(&scratch(&format!("twice-{name}-2")), &args);
        assert!(!first.is_empty());
        assert!(first == second, "{name}: two runs wrote different bytes");
    }
}

#[test]
fn cedar_files_are_named_after_the_policy() {
    let out = compile(&scratch("names"), &["--target", "cedar", "examples/bindings/good.yaml"]);
    let names: Vec<&str> = out.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["entities.json", "guardrails.cedar", "guardrails.cedarschema"]);
    let policies = String::from_utf8_lossy(&out[1].1).into_owned();
    // good.yaml lets C2 and C3 merge on their own (both ratified), and nothing be dispatched.
    assert!(policies.contains("resource.work_class == \"C2\""), "{policies}");
    assert!(policies.contains("resource.work_class == \"C3\""), "{policies}");
    assert!(!policies.contains("resource.work_class == \"C1\""), "{policies}");
}

#[test]
fn a_deployment_that_fails_check_is_refused_with_the_same_report_and_nothing_is_written() {
    let file = "examples/bindings/identical-checkers.yaml";
    let check = run_grail(&["check", file]);
    assert_eq!(check.code, 1);
    let dir = scratch("refused").join("out");
    let out = dir.to_string_lossy().into_owned();
    let refused = run_grail(&["compile", "--target", "cedar", "--out", &out, file]);
    assert_eq!(refused.code, 1, "{}", refused.stderr);
    assert_eq!(refused.stdout, "", "nothing is listed as written");
    assert!(!dir.exists(), "the output folder was created");
    assert_eq!(
        refused.stderr,
        format!("{}error: the deployment does not pass `grail check`; nothing was written\n", check.stdout)
    );
}

#[test]
fn an_unknown_is_refused_unless_allowed() {
    let args = ["--policy", "tests/policies/stated-unknown", "tests/inputs/no-evidence.yaml"];
    let dir = scratch("unknown");
    let out = dir.join("allowed").to_string_lossy().into_owned();
    let mut allowed = vec!["compile", "--target", "cedar", "--allow-unknown", "--out", &out];
    allowed.extend(args);
    assert_eq!(run_grail(&allowed).code, 0);
    let out = dir.join("refused").to_string_lossy().into_owned();
    let mut refused = vec!["compile", "--target", "cedar", "--out", &out];
    refused.extend(args);
    let run = run_grail(&refused);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(!dir.join("refused").exists());
}

#[test]
fn misuse_is_a_usage_error() {
    let out = scratch("misuse").to_string_lossy().into_owned();
    let no_documents = grail(&["compile", "--target", "cedar", "--out", &out]);
    assert!(
        no_documents.starts_with("exit: 2") && no_documents.contains("no documents named, and no `grail.toml`"),
        "{no_documents}"
    );
    let documents = grail(&["compile", "--target", "json", "--out", &out, "examples/bindings/good.yaml"]);
    assert!(documents.starts_with("exit: 2") && documents.contains("takes no document"), "{documents}");
    let no_target = grail(&["compile", "--out", &out]);
    assert!(no_target.starts_with("exit: 2"), "{no_target}");
}

// ------------------------------------------------------------------ the JSON form

/// The same source with comments and blank lines inserted and continuation
/// lines indented further: different text, the same meaning.
fn reformat(text: &str) -> String {
    let mut out = String::new();
    let mut after_doc = false;
    for line in text.lines() {
        let doc = line.trim_start().starts_with("///");
        if !after_doc && !doc {
            out.push_str("\n// a comment the formatter test inserted\n\n");
        }
        if line.starts_with([' ', '\t']) {
            out.push_str("    ");
        }
        out.push_str(line);
        if !doc && !line.trim().is_empty() && !line.trim_start().starts_with("//") {
            out.push_str("   // and one at the end of the line");
        }
        out.push('\n');
        after_doc = doc;
    }
    out
}

fn copy_library(dir: &Path, edit: fn(&str) -> String) {
    let lib = dir.join("guardrails");
    std::fs::create_dir_all(&lib).expect("library folder");
    for (path, text) in grail_engine::shipped::FILES {
        let name = Path::new(path).file_name().expect("a file name");
        std::fs::write(lib.join(name), edit(text)).expect("writable");
    }
}

#[test]
fn the_json_form_is_stable_under_reformatting() {
    let dir = scratch("reformat");
    copy_library(&dir.join("plain"), |t| t.to_string());
    copy_library(&dir.join("reformatted"), reformat);
    let first = grail_engine::shipped::FILES[0];
    let edited = std::fs::read_to_string(
        dir.join("reformatted/guardrails").join(Path::new(first.0).file_name().expect("a file name")),
    )
    .expect("readable");
    assert_ne!(edited, first.1, "the reformatting changed nothing");

    let shipped = compile(&dir.join("out-shipped"), &["--target", "json"]);
    let plain = dir.join("plain/guardrails").to_string_lossy().into_owned();
    let copied = compile(&dir.join("out-plain"), &["--target", "json", "--policy", &plain]);
    let moved = dir.join("reformatted/guardrails").to_string_lossy().into_owned();
    let reformatted = compile(&dir.join("out-reformatted"), &["--target", "json", "--policy", &moved]);
    assert_eq!(shipped.len(), 1);
    assert!(shipped == copied, "the shipped library and its copy compile to different JSON");
    if reformatted != copied {
        let a = String::from_utf8_lossy(&copied[0].1).into_owned();
        let b = String::from_utf8_lossy(&reformatted[0].1).into_owned();
        let line = a.lines().zip(b.lines()).position(|(x, y)| x != y).unwrap_or(0);
        panic!(
            "reformatting changed the JSON form at line {}:\n  {}\n  {}",
            line + 1,
            a.lines().nth(line).unwrap_or(""),
            b.lines().nth(line).unwrap_or("")
        );
    }
    let ir: Value = serde_json::from_slice(&shipped[0].1).expect("JSON");
    assert_eq!(ir["format_version"], 1);
    assert_eq!(ir["policy"], "guardrails");
    for key in ["enums", "matrices", "records", "documents", "layers", "rules", "questions"] {
        assert!(ir[key].as_array().is_some_and(|a| !a.is_empty()), "`{key}` is missing or empty");
    }
    // Every field and column of every expression tree is named: the types were inferred.
    fn unnamed(v: &Value, at: &str, out: &mut Vec<String>) {
        match v {
            Value::Object(o) => {
                if matches!(o.get("op").and_then(Value::as_str), Some("field" | "column")) && o["name"].is_null() {
                    out.push(at.to_string());
                }
                for (k, x) in o {
                    unnamed(x, &format!("{at}/{k}"), out);
                }
            }
            Value::Array(a) => a.iter().enumerate().for_each(|(i, x)| unnamed(x, &format!("{at}/{i}"), out)),
            _ => {}
        }
    }
    let mut missing = Vec::new();
    unnamed(&ir, "", &mut missing);
    assert!(missing.is_empty(), "fields without a name: {missing:?}");
    assert_eq!(ir["rules"][0]["clauses"][0]["in"]["tree"]["op"], "field", "{}", ir["rules"][0]);
}

// ------------------------------------------------------------------ JSON Schema

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir).expect("readable").flatten().map(|e| e.path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            walk(&p, out);
        } else {
            out.push(p);
        }
    }
}

/// The examples that show a document the format refuses, and why.
const INVALID_EXAMPLES: &[(&str, &str)] = &[(
    "examples/self-promotion/agent.yaml",
    "an agent's file that claims the security layer with `layer:`, a key the format does not have",
)];

/// A schema with no key required anywhere.
fn strip_required(schema: &mut Value) {
    match schema {
        Value::Object(o) => {
            o.remove("required");
            o.values_mut().for_each(strip_required);
        }
        Value::Array(a) => a.iter_mut().for_each(strip_required),
        _ => {}
    }
}

/// The JSON Pointers of every object in `value` whose schema admits no other key.
fn closed_objects(root: &Value, schema: &Value, value: &Value, at: String, out: &mut Vec<String>) {
    if let Some(r) = schema.get("$ref").and_then(Value::as_str) {
        let name = r.trim_start_matches("#/$defs/");
        return closed_objects(root, &root["$defs"][name], value, at, out);
    }
    if let Some(branches) = schema.get("anyOf").and_then(Value::as_array) {
        for b in branches.iter().filter(|b| b.get("type") != Some(&json!("string"))) {
            closed_objects(root, b, value, at.clone(), out);
        }
        return;
    }
    match value {
        Value::Object(map) => {
            if schema.get("additionalProperties") == Some(&json!(false)) {
                out.push(at.clone());
            }
            for (k, v) in map {
                let sub = schema
                    .get("properties")
                    .and_then(|p| p.get(k))
                    .or_else(|| schema.get("additionalProperties").filter(|a| a.is_object()));
                if let Some(sub) = sub {
                    closed_objects(root, sub, v, format!("{at}/{}", k.replace('~', "~0").replace('/', "~1")), out);
                }
            }
        }
        Value::Array(items) => {
            if let Some(sub) = schema.get("items") {
                for (i, v) in items.iter().enumerate() {
                    closed_objects(root, sub, v, format!("{at}/{i}"), out);
                }
            }
        }
        _ => {}
    }
}

const VALIDATE: &str = r#"
import json, sys
try:
    from jsonschema import Draft202012Validator
except ImportError:
    sys.exit("python3 has no `jsonschema` module: pip install jsonschema")
cases = json.load(open(sys.argv[1]))
failed = 0
for c in cases:
    schema = json.load(open(c["schema"]))
    Draft202012Validator.check_schema(schema)
    errors = [e.message for e in Draft202012Validator(schema).iter_errors(c["document"])]
    if (not errors) != c["valid"]:
        failed += 1
        print("MISMATCH", c["name"], "expected", "valid" if c["valid"] else "invalid", errors[:3])
print(f"{len(cases) - failed} passed, {failed} failed")
"#;

#[test]
fn json_schemas_accept_every_example_and_reject_unknown_keys() {
    let dir = scratch("jsonschema");
    let written = compile(&dir.join("schemas"), &["--target", "jsonschema"]);
    let db = Database::default();
    let set = grail_engine::shipped::policy_set(&db);
    let policy = grail_engine::db::compile_policy(&db, set).policy.clone();
    assert_eq!(written.len(), policy.documents.len(), "one schema per document kind");

    // The examples, less the files another document attaches (probe transcripts).
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut paths = Vec::new();
    walk(&root.join("examples"), &mut paths);
    let mut attached = Vec::new();
    for p in &paths {
        let Ok(text) = std::fs::read_to_string(p) else { continue };
        let src = SourceText::new(&db, p.to_string_lossy().into_owned(), text, None);
        for r in grail_engine::db::document_references(&db, set, src) {
            attached.push(p.parent().expect("a folder").join(r));
        }
    }
    // The documents a `layers.bind` binds below the most trusted layer of their kind.
    let mut lower_layers = Vec::new();
    for bind in paths.iter().filter(|p| p.file_name().is_some_and(|n| n == "layers.bind")) {
        let text = std::fs::read_to_string(bind).expect("readable");
        let folder = bind.parent().expect("a folder");
        let bound: Vec<(&str, PathBuf)> = text
            .lines()
            .filter(|l| !l.starts_with('#'))
            .filter_map(|l| l.split_once('='))
            .map(|(layer, file)| (layer, folder.join(file.trim())))
            .collect();
        for (layer, file) in &bound {
            if !policy.layers.iter().any(|l| l.layers.first().is_some_and(|t| t == layer)) {
                lower_layers.push(file.clone());
            }
        }
        // A document the file binds to no layer, beside those it binds, is of the lowest.
        for p in paths.iter().filter(|p| p.parent() == Some(folder) && !bound.iter().any(|(_, f)| f == *p)) {
            lower_layers.push(p.clone());
        }
    }
    let mut cases = Vec::new();
    let mut kinds_seen = std::collections::BTreeSet::new();
    // Probe transcripts (examples/org/probes/) are read by no document kind
    // until transcripts are verified (issue 38); no other example is left out.
    for p in paths.iter().filter(|p| !attached.contains(p) && !p.parent().is_some_and(|d| d.ends_with("probes"))) {
        let name = p.strip_prefix(root).unwrap_or(p).to_string_lossy().into_owned();
        let Ok(text) = std::fs::read_to_string(p) else { continue };
        let (kind, document) = if name.ends_with(".md") {
            let Some((d, marker)) = policy.documents.iter().find_map(|d| match &d.selector {
                SelectorDef::Markdown { marker, .. } => Some((d, marker)),
                _ => None,
            }) else {
                continue;
            };
            let Ok((start, end)) = grail_engine::check::extract(&text, marker) else { continue };
            let Ok(node) = grail_engine::document::load(
                &text[start..end],
                grail_engine::document::Format::Json,
                &Default::default(),
            ) else {
                continue;
            };
            (d, node.to_json())
        } else if let Some(format) = grail_engine::document::format_for_path(&name) {
            // A document that does not parse (`broken.yaml`) has no shape to judge.
            let Ok(node) = grail_engine::document::load(&text, format, &Default::default()) else { continue };
            let mut value = node.to_json();
            // A list given under a name (promotion evidence) is the record its kind's `list into` fills.
            if let Value::Array(items) = value.clone()
                && let Some(d) = policy.documents.iter().find(
                    |d| matches!(&d.selector, SelectorDef::Given { name: given } if name.contains(given.as_str())),
                )
                && let Some(into) = &d.list_into
            {
                kinds_seen.insert(d.name.clone());
                let schema_path = dir.join("schemas").join(format!("{}.schema.json", d.name));
                let document = json!({ into.as_str(): items });
                cases.push(json!({"name": name, "schema": schema_path, "document": document, "valid": true}));
                continue;
            }
            // A JSON Lines document is its header with its further lines in the list its kind fills.
            if format == grail_engine::document::Format::JsonLines
                && let Value::Array(lines) = value.clone()
                && let Some((Value::Object(header), entries)) = lines.split_first()
            {
                let mut header = header.clone();
                let kind = policy.documents.iter().find(|d| match &d.selector {
                    SelectorDef::Keys(tests) => tests.iter().all(|t| match &t.test {
                        KeyCondDef::Equals(v) => header.get(&t.key) == Some(&json!(v)),
                        _ => false,
                    }),
                    SelectorDef::Markdown { .. } | SelectorDef::Given { .. } => false,
                });
                if let Some(into) = kind.and_then(|d| d.lines_into.clone()) {
                    header.insert(into, Value::Array(entries.to_vec()));
                }
                value = Value::Object(header);
            }
            let Some(d) = policy.documents.iter().find(|d| match &d.selector {
                SelectorDef::Keys(tests) => tests.iter().all(|t| match &t.test {
                    KeyCondDef::Absent => value.get(&t.key).is_none(),
                    KeyCondDef::Present => value.get(&t.key).is_some(),
                    KeyCondDef::Equals(v) => value.get(&t.key) == Some(&json!(v)),
                }),
                SelectorDef::Markdown { .. } | SelectorDef::Given { .. } => false,
            }) else {
                continue;
            };
            (d, value)
        } else {
            continue;
        };
        kinds_seen.insert(kind.name.clone());
        let schema_path = dir.join("schemas").join(format!("{}.schema.json", kind.name));
        let mut schema: Value = serde_json::from_slice(&std::fs::read(&schema_path).expect("schema")).expect("JSON");
        // A lower layer's document is partial (docs/language.md, "Layers of
        // trust"): the kind's shape, with no key required.
        let schema_path = if lower_layers.contains(p) {
            strip_required(&mut schema);
            let partial = dir.join("schemas").join(format!("{}.partial.schema.json", kind.name));
            std::fs::write(&partial, serde_json::to_vec(&schema).expect("JSON")).expect("writable");
            partial
        } else {
            schema_path
        };
        let valid = !INVALID_EXAMPLES.iter().any(|(n, _)| *n == name);
        cases.push(json!({"name": name, "schema": schema_path, "document": document, "valid": valid}));
        let mut closed = Vec::new();
        closed_objects(&schema, &schema, &document, String::new(), &mut closed);
        assert!(closed.contains(&String::new()), "{name}: the top level admits unknown keys");
        for at in closed {
            let mut mutated = document.clone();
            if let Some(Value::Object(o)) = mutated.pointer_mut(&at) {
                o.insert("grail_unknown_key".into(), json!(true));
            }
            cases.push(json!({
                "name": format!("{name} with an unknown key at `{at}`"),
                "schema": schema_path,
                "document": mutated,
                "valid": false,
            }));
        }
    }
    let kinds: std::collections::BTreeSet<String> = policy.documents.iter().map(|d| d.name.clone()).collect();
    assert_eq!(kinds_seen, kinds, "every document kind has an example to validate");
    let cases_path = dir.join("cases.json");
    std::fs::write(&cases_path, serde_json::to_string(&cases).expect("JSON")).expect("writable");
    let out = Command::new("python3").arg("-c").arg(VALIDATE).arg(&cases_path).output().expect("python3 runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.ends_with(&format!("{} passed, 0 failed\n", cases.len())),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(cases.len() > 20, "only {} cases", cases.len());
}

#[test]
fn a_folder_and_standard_input_are_inputs_as_for_check() {
    // A folder: every document in it, as `grail check` reads it.
    let by_folder =
        compile(&scratch("folder"), &["--target", "cedar", "--now", "2026-08-20T00:00:00Z", "examples/org/history"]);
    let by_file = compile(
        &scratch("file"),
        &["--target", "cedar", "--now", "2026-08-20T00:00:00Z", "examples/org/history/step-002.yaml"],
    );
    assert_eq!(by_folder, by_file);
    // `-`: the document on standard input.
    let text =
        std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/org/history/step-002.yaml")).expect("read");
    let dir = scratch("stdin");
    let out = dir.to_string_lossy().into_owned();
    let mut child = Command::new(env!("CARGO_BIN_EXE_grail"))
        .args(["compile", "--target", "cedar", "--now", "2026-08-20T00:00:00Z", "--out", &out, "-"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env("NO_COLOR", "1")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("grail runs");
    use std::io::Write as _;
    child.stdin.take().expect("stdin").write_all(&text).expect("write");
    let status = child.wait_with_output().expect("grail ends");
    assert!(status.status.success(), "{}", String::from_utf8_lossy(&status.stdout));
    let cedar = |files: &[(String, Vec<u8>)]| files.iter().find(|(n, _)| n.ends_with(".cedar")).map(|(_, b)| b.clone());
    assert_eq!(cedar(&files(&dir)), cedar(&by_file), "the same permits from standard input");
}
