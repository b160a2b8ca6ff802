//! `grail authorize` (asked beside cedar-policy on the Cedar that `grail
//! compile` writes), `grail graph` (DOT read back by pydot, SVG by an XML
//! parser), `grail completions` and `grail man`.

mod common;

use std::path::Path;
use std::process::Command;

use cedar_policy::{Authorizer, Context, Decision, Entities, PolicySet, Request, Schema};
use common::{grail, run_in};
use serde_json::{Value, json};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The example organisation, at a fixed time of the check nine days after
/// its probes' capture: the time and its three layers bound by the
/// invocation (the first eight arguments), `--allow-unknown` (its deliberate
/// gap, an L3 probe that could not run, is UNKNOWN: examples/README.md), and
/// a step of its history.
const ORG: [&str; 10] = [
    "--now",
    "2026-08-20T00:00:00Z",
    "--layer",
    "security=examples/org/security.yaml",
    "--layer",
    "operator=examples/org/operator.yaml",
    "--layer",
    "repo=examples/org/repo.yaml",
    "--allow-unknown",
    "examples/org/history/step-002.yaml",
];

struct Cedar {
    schema: Schema,
    policies: PolicySet,
    actions: Vec<Value>,
}

fn compiled(dir: &Path) -> Cedar {
    let mut args = vec!["compile", "--target", "cedar", "--out", dir.to_str().expect("UTF-8")];
    args.extend(ORG);
    let out = run_in(root(), &args);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let read = |f: &str| std::fs::read_to_string(dir.join(f)).expect("written by grail compile");
    let (schema, _) = Schema::from_cedarschema_str(&read("guardrails.cedarschema")).expect("a schema");
    let policies: PolicySet = read("guardrails.cedar").parse().expect("policies");
    let actions: Vec<Value> = serde_json::from_str(&read("entities.json")).expect("entities");
    Cedar { schema, policies, actions }
}

fn cedar_allows(c: &Cedar, principal: &Value, action: &str, resource: &Value) -> bool {
    let mut list = c.actions.clone();
    list.push(json!({"uid": {"type": "Principal", "id": "agent-7"}, "attrs": principal, "parents": []}));
    list.push(json!({"uid": {"type": "Resource", "id": "item"}, "attrs": resource, "parents": []}));
    let entities = Entities::from_json_value(Value::Array(list), Some(&c.schema)).expect("entities");
    let request = Request::new(
        r#"Principal::"agent-7""#.parse().expect("uid"),
        format!("Action::{action:?}").parse().expect("uid"),
        r#"Resource::"item""#.parse().expect("uid"),
        Context::empty(),
        Some(&c.schema),
    )
    .expect("a valid request");
    Authorizer::new().is_authorized(&request, &c.policies, &entities).decision() == Decision::Allow
}

fn authorize(principal: &Value, action: &str, resource: &Value) -> common::Output {
    let mut args: Vec<String> = vec!["authorize".into(), "--action".into(), action.into()];
    for (side, attrs) in [("--principal", principal), ("--resource", resource)] {
        for (k, v) in attrs.as_object().expect("attributes") {
            args.push(side.into());
            args.push(format!("{k}={}", v.as_str().expect("a string")));
        }
    }
    args.extend(ORG.iter().map(|s| s.to_string()));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    run_in(root(), &args)
}

#[test]
fn authorize_answers_as_the_compiled_cedar_does() {
    let dir = std::env::temp_dir().join(format!("grail-authorize-{}", std::process::id()));
    let cedar = compiled(&dir);
    let agent = json!({"kind": "agent"});
    let human = json!({"kind": "human"});
    let requests = [
        (&agent, "dispatch", json!({"work_class": "C2", "surface": "ci-pool-a"})),
        (&agent, "dispatch", json!({"work_class": "C1", "surface": "laptop-runner"})),
        (&agent, "dispatch", json!({"work_class": "C3", "surface": "laptop-runner"})),
        (&agent, "dispatch", json!({"work_class": "C4", "surface": "secure-pool"})),
        (&agent, "dispatch", json!({"work_class": "C9", "surface": "ci-pool-a"})),
        (&agent, "dispatch", json!({"surface": "ci-pool-a"})),
        (&agent, "auto-merge", json!({"work_class": "C1"})),
        (&agent, "auto-merge", json!({"work_class": "C2"})),
        (&agent, "auto-merge", json!({"work_class": "C3"})),
        (&agent, "write", json!({"layer": "security"})),
        (&agent, "write", json!({"layer": "repo"})),
        (&human, "write", json!({"layer": "security"})),
        (&agent, "record", json!({"event": "remediation"})),
        (&agent, "record", json!({"event": "split-required"})),
        (&agent, "record", json!({"event": "stop-escalate"})),
    ];
    let mut allowed = 0;
    for (principal, action, resource) in &requests {
        let out = authorize(principal, action, resource);
        let expected = cedar_allows(&cedar, principal, action, resource);
        assert_eq!(
            out.code,
            if expected { 0 } else { 1 },
            "{action} {resource}: Cedar says {}, grail says\n{}{}",
            if expected { "ALLOW" } else { "DENY" },
            out.stdout,
            out.stderr
        );
        assert!(out.stdout.starts_with(if expected { "ALLOW " } else { "DENY " }), "{}", out.stdout);
        allowed += usize::from(expected);
    }
    assert!(allowed >= 3 && allowed < requests.len(), "both answers are asked: {allowed} allowed");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn authorize_says_why() {
    let ask = |args: &[&str]| {
        let mut all = vec!["authorize"];
        all.extend_from_slice(args);
        all.extend(ORG);
        grail(&all)
    };
    insta::assert_snapshot!("allowed", ask(&["--action", "auto-merge", "--resource", "work_class=C3"]));
    insta::assert_snapshot!(
        "refused",
        ask(&["--action", "dispatch", "--resource", "work_class=C2", "--resource", "surface=ci-pool-a"])
    );
    insta::assert_snapshot!("unclassified", ask(&["--action", "dispatch", "--resource", "surface=ci-pool-a"]));
    insta::assert_snapshot!("no_such_action", ask(&["--action", "dispatchh", "--resource", "surface=ci-pool-a"]));
    insta::assert_snapshot!("no_such_attribute", ask(&["--action", "dispatch", "--resource", "class=C2"]));
    // A deployment that fails the check compiles to no Cedar: everything is denied.
    let out = grail(&[
        "authorize",
        "--action",
        "auto-merge",
        "--resource",
        "work_class=C1",
        "examples/bindings/identical-checkers.yaml",
    ]);
    assert!(out.starts_with("exit: 1"), "{out}");
    assert!(out.contains("does not pass `grail check`"), "{out}");
    let json: Value = serde_json::from_str(
        &run_in(
            root(),
            &[
                "authorize",
                "--format",
                "json",
                "--action",
                "auto-merge",
                "--resource",
                "work_class=C3",
                "--now",
                "2026-08-20T00:00:00Z",
                "--allow-unknown",
                "examples/org/security.yaml",
            ],
        )
        .stdout,
    )
    .expect("JSON");
    assert_eq!(json["decision"], "allow");
    assert_eq!(json["unknown_allowed"], "flag");
    assert_eq!(json["permitted_by"], json!(["merge.auto_merge"]));
}

fn python(script: &str, input: &str) -> (bool, String) {
    use std::io::Write as _;
    let mut child = Command::new("python3")
        .args(["-c", script])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("python3 runs");
    child.stdin.take().expect("stdin").write_all(input.as_bytes()).expect("write");
    let out = child.wait_with_output().expect("python3 ends");
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(!text.contains("No module named 'pydot'"), "this test needs pydot: run scripts/test, which installs it");
    (out.status.success(), text)
}

/// pydot's reading of a DOT text: its node and edge counts, one per line.
const PYDOT: &str = "import sys, pydot
graphs = pydot.graph_from_dot_data(sys.stdin.read())
if not graphs:
    sys.exit('not DOT')
g = graphs[0]
nodes = sum(len(s.get_nodes()) for s in g.get_subgraphs()) + len([n for n in g.get_nodes() if n.get_name() not in ('node', 'edge', 'graph')])
print(len(g.get_subgraphs()), nodes, len(g.get_edges()))";

#[test]
fn graph_dot_is_read_by_pydot_with_every_slot_and_relation() {
    let out = run_in(root(), &["graph", "examples/bindings/good.yaml"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let (ok, counts) = python(PYDOT, &out.stdout);
    assert!(ok, "pydot cannot read it: {counts}\n{}", out.stdout);
    let counts: Vec<usize> = counts.split_whitespace().map(|n| n.parse().expect("a count")).collect();
    assert_eq!(counts[0], out.stdout.matches("subgraph cluster_").count());
    assert_eq!(counts[2], out.stdout.matches(" -> ").count());
    assert!(counts[2] > 0 && counts[1] > counts[0]);
    // The reader is not a rubber stamp.
    assert!(!python(PYDOT, &out.stdout.replacen("digraph grail {", "digraph grail {{", 1)).0);
    insta::assert_snapshot!(out.stdout);
}

#[test]
fn graph_shows_what_is_missing_and_the_layers() {
    let out = run_in(root(), &["graph", "--format", "mermaid", "examples/bindings/identical-checkers.yaml"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stdout.starts_with("flowchart LR\n"));
    assert!(out.stdout.contains("FAIL topology.duplicate_scanner_class"), "{}", out.stdout);
    let mut args = vec!["graph", "--format", "mermaid"];
    args.extend(&ORG[..8]);
    let out = run_in(root(), &args);
    assert!(out.stdout.contains("layer operator"), "{}", out.stdout);
    assert!(out.stdout.contains("|\"sets\"|"), "{}", out.stdout);
    insta::assert_snapshot!(out.stdout);
}

#[test]
fn graph_svg_is_well_formed_and_places_every_node() {
    let mut args = vec!["graph", "--format", "svg"];
    args.extend(&ORG[..8]);
    let out = run_in(root(), &args);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let (ok, text) = python(
        "import sys, xml.etree.ElementTree as ET
root = ET.fromstring(sys.stdin.read())
ns = '{http://www.w3.org/2000/svg}'
assert root.tag == ns + 'svg', root.tag
w, h = float(root.get('width')), float(root.get('height'))
for g in root.iter(ns + 'g'):
    if g.get('class') == 'node':
        r = g.find(ns + 'rect')
        x, y = float(r.get('x')), float(r.get('y'))
        assert 0 <= x <= w and 0 <= y <= h, (x, y, w, h)
print(sum(1 for g in root.iter(ns + 'g') if g.get('class') == 'node'))",
        &out.stdout,
    );
    assert!(ok, "{text}");
    let nodes: usize = text.trim().parse().expect("a count");
    let dot = run_in(root(), &[&["graph"], &ORG[..8]].concat()).stdout;
    let dot_nodes = dot.lines().filter(|l| l.starts_with("    n") && l.contains(" [label=")).count();
    assert_eq!(nodes, dot_nodes, "every node of the graph is drawn");
}

/// A drawing read back: each node's first line (the slot's name, the
/// finding's rule) by its id, and each edge as (from, to, label) by those lines.
struct Drawn {
    nodes: std::collections::HashMap<String, String>,
    edges: Vec<(String, String, String)>,
}

impl Drawn {
    fn has(&self, from: &str, to: &str, label: &str) -> bool {
        self.edges.iter().any(|(f, t, l)| f == from && t == to && l == label)
    }

    fn named(&self, ids: Vec<(String, String, String)>) -> Vec<(String, String, String)> {
        let name = |id: &str| self.nodes.get(id).cloned().unwrap_or_else(|| panic!("no node `{id}`"));
        ids.into_iter().map(|(f, t, l)| (name(&f), name(&t), l)).collect()
    }
}

/// Between `open` and `close` after the first `after` in `text`.
fn between<'t>(text: &'t str, after: &str, open: &str, close: &str) -> Option<&'t str> {
    let rest = &text[text.find(after)? + after.len()..];
    let rest = &rest[rest.find(open)? + open.len()..];
    Some(&rest[..rest.find(close)?])
}

fn read_dot(text: &str) -> Drawn {
    let mut nodes = std::collections::HashMap::new();
    let mut ids = Vec::new();
    // A node's label may hold new lines: read statement by statement, not line by line.
    let mut rest = text;
    while let Some(at) = rest.find("\n    n").or_else(|| rest.find("\n  n")) {
        let statement = &rest[at + 1..];
        let end = statement.find("];").map_or(statement.len(), |e| e + 2);
        let (statement, after) = statement.split_at(end);
        let statement = statement.trim();
        if let Some((from, edge)) = statement.split_once(" -> ") {
            let to = edge.split_whitespace().next().unwrap_or_default().to_string();
            let label = between(edge, "label=", "\"", "\"").unwrap_or_default().to_string();
            ids.push((from.to_string(), to, label));
        } else if let Some((id, _)) = statement.split_once(" [label=") {
            let first = between(statement, "[label=", "\"", "\"").unwrap_or_default();
            nodes.insert(id.to_string(), first.lines().next().unwrap_or_default().to_string());
        }
        rest = after;
    }
    let mut d = Drawn { nodes, edges: Vec::new() };
    d.edges = d.named(ids);
    d
}

fn read_mermaid(text: &str) -> Drawn {
    let mut nodes = std::collections::HashMap::new();
    let mut ids = Vec::new();
    for line in text.lines().map(str::trim) {
        let words: Vec<&str> = line.split_whitespace().collect();
        if words.len() >= 3 && (words[1].starts_with("-->") || words[1].starts_with("-.->")) {
            let label = between(line, "|", "\"", "\"").unwrap_or_default().to_string();
            ids.push((words[0].to_string(), words[words.len() - 1].to_string(), label));
        } else if let Some((id, rest)) = line.split_once("[\"")
            && id.starts_with('n')
        {
            nodes.insert(
                id.to_string(),
                rest.split("<br/>").next().unwrap_or_default().trim_end_matches("\"]").to_string(),
            );
        }
    }
    let mut d = Drawn { nodes, edges: Vec::new() };
    d.edges = d.named(ids);
    d
}

fn read_svg(text: &str) -> Drawn {
    let mut nodes = std::collections::HashMap::new();
    let mut ids = Vec::new();
    for line in text.lines() {
        if line.starts_with("<g class=\"node\"") {
            let id = between(line, "id=", "\"", "\"").unwrap_or_default().to_string();
            nodes.insert(id, between(line, "<text", ">", "</text>").unwrap_or_default().to_string());
        } else if line.starts_with("<g class=\"edge\"") {
            let from = between(line, "data-from=", "\"", "\"").unwrap_or_default().to_string();
            let to = between(line, "data-to=", "\"", "\"").unwrap_or_default().to_string();
            let label = between(line, "<text", ">", "</text>").unwrap_or_default().to_string();
            ids.push((from, to, label));
        }
    }
    let mut d = Drawn { nodes, edges: Vec::new() };
    d.edges = d.named(ids);
    d
}

/// Issue 41, item 5: `identical-checkers.yaml` drawn in every format shows
/// its slots, the relations between them ("distinct vendor"), and which slots
/// its findings are about.
#[test]
fn graph_draws_the_slots_their_relations_and_what_each_finding_is_about() {
    for format in ["dot", "mermaid", "svg"] {
        let out = run_in(root(), &["graph", "--format", format, "examples/bindings/identical-checkers.yaml"]);
        assert_eq!(out.code, 0, "{}", out.stderr);
        let drawn = match format {
            "dot" => read_dot(&out.stdout),
            "mermaid" => read_mermaid(&out.stdout),
            _ => read_svg(&out.stdout),
        };
        let names: Vec<&str> = drawn.nodes.values().map(String::as_str).collect();
        for slot in ["author", "sast-1", "sast-2", "reviewer-a", "reviewer-b"] {
            assert!(names.contains(&slot), "{format}: no slot `{slot}` in {names:?}");
        }
        assert!(drawn.has("reviewer-a", "author", "distinct vendor"), "{format}: {:?}", drawn.edges);
        assert!(drawn.has("reviewer-b", "author", "distinct vendor"), "{format}: {:?}", drawn.edges);
        // The two pairwise rules name both reviewers; the repeated scanner class names no slot.
        for rule in ["FAIL topology.pairwise_distinct", "FAIL topology.cross_vendor_pairwise"] {
            let about: Vec<&str> =
                drawn.edges.iter().filter(|(f, _, _)| f == rule).map(|(_, t, _)| t.as_str()).collect();
            assert_eq!(about, ["reviewer-a", "reviewer-b"], "{format}: {rule}");
        }
        assert!(names.contains(&"FAIL topology.duplicate_scanner_class"), "{format}");
        assert!(!drawn.edges.iter().any(|(f, _, _)| f == "FAIL topology.duplicate_scanner_class"), "{format}");
    }
}

/// The box of every `<text>` of an SVG that grail drew, estimated as its
/// writer estimates it: 0.6 em per character, from one em above the
/// baseline to a quarter em below, centred for `text-anchor="middle"`; with
/// whether it is an edge's label, and the text.
fn text_boxes(svg: &str) -> Vec<([f64; 4], bool, String)> {
    let root_size: f64 = between(svg, "<svg", "font-size=\"", "\"").and_then(|s| s.parse().ok()).expect("a font size");
    let mut out = Vec::new();
    for line in svg.lines() {
        let edge = line.starts_with("<g class=\"edge\"");
        let mut rest = line;
        while let Some(at) = rest.find("<text ") {
            let tag = &rest[at..];
            let (attrs, after) = tag.split_once('>').expect("a tag");
            let (content, after) = after.split_once("</text>").expect("a closed text");
            let attr = |name: &str| between(attrs, &format!(" {name}="), "\"", "\"");
            let number = |name: &str| attr(name).and_then(|v| v.parse::<f64>().ok());
            let text = content.replace("&lt;", "<").replace("&gt;", ">").replace("&quot;", "\"").replace("&amp;", "&");
            let size = number("font-size").unwrap_or(root_size);
            let (x, y) = (number("x").expect("x"), number("y").expect("y"));
            let width = text.chars().count() as f64 * size * 0.6;
            let x0 = if attr("text-anchor") == Some("middle") { x - width / 2.0 } else { x };
            out.push(([x0, y - size, x0 + width, y + size * 0.25], edge, text));
            rest = after;
        }
    }
    out
}

fn overlap(a: &[f64; 4], b: &[f64; 4]) -> bool {
    a[0] < b[2] && b[0] < a[2] && a[1] < b[3] && b[1] < a[3]
}

/// Issue 41, item 5: in the example organisation's drawing (its deployment,
/// `grail graph` in examples/org), no two labels overlap, and no edge's label
/// lies on a node, estimated as the writer estimates them.
#[test]
fn graph_svg_labels_never_overlap() {
    let org = root().join("examples/org");
    let bindings = root().join("examples/bindings");
    for (dir, args) in [
        (org.as_path(), vec!["graph", "--format", "svg"]),
        (bindings.as_path(), vec!["graph", "--format", "svg", "identical-checkers.yaml"]),
        (bindings.as_path(), vec!["graph", "--format", "svg", "good.yaml"]),
    ] {
        let out = run_in(dir, &args);
        assert_eq!(out.code, 0, "{}", out.stderr);
        let boxes = text_boxes(&out.stdout);
        let labels = boxes.iter().filter(|(_, edge, _)| *edge).count();
        assert!(labels >= 8, "{args:?}: the edges' labels are drawn ({labels})");
        for (i, (a, _, ta)) in boxes.iter().enumerate() {
            for (b, _, tb) in &boxes[i + 1..] {
                assert!(!overlap(a, b), "{args:?}: `{ta}` {a:?} overlaps `{tb}` {b:?}");
            }
        }
        let rects: Vec<[f64; 4]> = out
            .stdout
            .lines()
            .filter(|l| l.starts_with("<g class=\"node\""))
            .map(|l| {
                let n = |name: &str| {
                    between(l, &format!(" {name}="), "\"", "\"").and_then(|v| v.parse::<f64>().ok()).expect("a number")
                };
                [n("x"), n("y"), n("x") + n("width"), n("y") + n("height")]
            })
            .collect();
        for (a, _, text) in boxes.iter().filter(|(_, edge, _)| *edge) {
            assert!(!rects.iter().any(|r| overlap(a, r)), "{args:?}: the label `{text}` {a:?} lies on a node");
        }
    }
}

#[test]
fn completions_load_in_bash_and_name_every_command() {
    let out = run_in(root(), &["completions", "bash"]);
    assert_eq!(out.code, 0);
    let script = std::env::temp_dir().join(format!("grail-completion-{}.bash", std::process::id()));
    std::fs::write(&script, &out.stdout).expect("write");
    let check = Command::new("bash")
        .arg("-c")
        .arg(format!(
            "source {} && complete -p grail && COMP_WORDS=(grail ch); COMP_CWORD=1; COMP_LINE='grail ch'; COMP_POINT=8; _grail grail ch grail; printf '%s\\n' \"${{COMPREPLY[@]}}\"",
            script.display()
        ))
        .output()
        .expect("bash runs");
    let _ = std::fs::remove_file(&script);
    let stdout = String::from_utf8_lossy(&check.stdout);
    assert!(check.status.success(), "{stdout}{}", String::from_utf8_lossy(&check.stderr));
    assert!(stdout.lines().any(|l| l == "check"), "{stdout}");
    for shell in ["zsh", "fish", "powershell", "elvish"] {
        let out = run_in(root(), &["completions", shell]);
        assert_eq!(out.code, 0);
        for command in ["check", "explain", "doc", "authorize", "graph", "source"] {
            assert!(out.stdout.contains(command), "{shell}: {command}");
        }
    }
    assert!(grail(&["completions", "tcsh"]).starts_with("exit: 2"));
}

#[test]
fn man_pages_render_with_groff() {
    let out = run_in(root(), &["man"]);
    assert_eq!(out.code, 0);
    assert!(out.stdout.starts_with(".ie \\n(.g .ds Aq"), "{}", &out.stdout[..80.min(out.stdout.len())]);
    assert!(out.stdout.contains(".TH grail 1"), "{}", out.stdout);
    let dir = std::env::temp_dir().join(format!("grail-man-{}", std::process::id()));
    let listed = run_in(root(), &["man", "--out", dir.to_str().expect("UTF-8")]);
    assert_eq!(listed.code, 0, "{}", listed.stderr);
    let pages: Vec<&str> = listed.stdout.lines().collect();
    assert!(pages.iter().any(|p| p.ends_with("/grail-check.1")), "{pages:?}");
    assert!(pages.iter().any(|p| p.ends_with("/grail-authorize.1")), "{pages:?}");
    assert!(pages.iter().any(|p| p.ends_with("/grail-source.1")), "{pages:?}");
    let check = std::fs::read_to_string(dir.join("grail-check.1")).expect("grail-check.1");
    assert!(check.contains("allow\\-unknown"), "{check}");
    assert!(!check.contains("deny\\-unknown"), "{check}");
    // groff reads it, when it is there (man-db's dependency on Debian).
    for page in ["grail-check.1", "grail-source.1"] {
        if let Ok(rendered) = Command::new("groff").args(["-man", "-Tutf8", "-ww", "-z"]).arg(dir.join(page)).output() {
            assert!(rendered.status.success(), "{page}: {}", String::from_utf8_lossy(&rendered.stderr));
            assert!(rendered.stderr.is_empty(), "groff warns on {page}: {}", String::from_utf8_lossy(&rendered.stderr));
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn explain_json_includes_the_permitted_and_refused_answers() {
    // The answers about the classes asked of (as the human explanation lists them).
    let dispatch = |class: &str| {
        let mut args = vec!["explain", "--format", "json", "--class", class];
        args.extend(&ORG[..8]);
        let out = run_in(root(), &args);
        let json: Value = serde_json::from_str(&out.stdout).expect("JSON");
        let answers = json["answers"].as_array().expect("answers").clone();
        answers.into_iter().find(|a| a["question"] == "admission.dispatch").expect("admission.dispatch")
    };
    // No surface proves a level that needs a proof yet: every class is refused everywhere.
    let c2 = dispatch("C2");
    assert_eq!(c2["action"], "dispatch");
    assert_eq!(c2["permitted"], json!([]), "{c2}");
    let refused = c2["refused"].as_array().expect("refused");
    let on_pool = refused
        .iter()
        .find(|r| r["request"] == json!({"resource.work_class": "C2", "resource.surface": "ci-pool-a"}))
        .expect("C2 on ci-pool-a is refused");
    assert!(!on_pool["reads"].as_array().expect("reads").is_empty(), "{on_pool}");
    let c4 = dispatch("C4");
    let refused = c4["refused"].as_array().expect("refused");
    let c4 = refused
        .iter()
        .find(|r| r["request"] == json!({"resource.work_class": "C4", "resource.surface": "secure-pool"}))
        .expect("C4 on the L3 pool is refused");
    assert!(!c4["reads"].as_array().expect("reads").is_empty(), "{c4}");
    // As the human explanation says.
    let human = grail(&[&["explain"], &ORG[..8]].concat());
    assert!(human.contains("permitted: nothing\n  refused:   work_class C1, surface ci-pool-a"), "{human}");
    assert!(human.contains("refused:   work_class C4, surface secure-pool"), "{human}");
}

#[test]
fn a_version_written_as_a_number_is_reported_as_written() {
    let out = grail(&["check", "tests/inputs/schema-version-number.yaml"]);
    assert!(out.contains("found the number `1.0`; quote it to write a string"), "{out}");
    assert!(!out.contains("`1`"), "{out}");
    // The version rule reads the value as written there and invalid, never as
    // absent: whether it is present is unknown, and so is the rule.
    assert!(out.contains("UNKNOWN: cannot be established: a value it reads is invalid"), "{out}");
    assert!(!out.contains("schema_version is `absent`"), "{out}");
}

#[test]
fn unknowns_after_a_typo_speak_of_the_document_not_of_the_rule() {
    let out = run_in(root(), &["check", "--format", "json", "tests/inputs/role-typo.yaml"]);
    let json: Value = serde_json::from_str(&out.stdout).expect("JSON");
    let findings = json["findings"].as_array().expect("findings");
    let typo = findings.iter().find(|f| f["rule"] == "schema.type").expect("the type finding");
    assert!(typo["message"].as_str().expect("a message").contains("did you mean `checker`?"));
    let unknown: Vec<&str> = findings
        .iter()
        .filter(|f| f["outcome"] == "unknown")
        .map(|f| f["message"].as_str().expect("a message"))
        .collect();
    assert!(!unknown.is_empty(), "the typo leaves rules unable to tell");
    for m in &unknown {
        for internal in ["`m`", "`models`", "model_slots(", "`t.roles`", "pairs("] {
            assert!(!m.contains(internal), "an UNKNOWN shows the rule's internals ({internal}): {m}");
        }
    }
    assert!(unknown.iter().all(|m| m.starts_with("cannot ")), "{unknown:?}");
    // Each says that a value of the document is invalid, never only that something could not be established.
    assert!(unknown.iter().all(|m| m.contains("a value it reads is invalid")), "{unknown:?}");
}
