//! The SARIF 2.1.0 renderer, for code-scanning tools: one run per deployment,
//! the policy's rules as the tool's rules, one result per FAIL or UNKNOWN.
//!
//! Choices, each checked against the SARIF 2.1.0 specification and schema:
//! - FAIL and UNKNOWN (missing evidence) are level `error`, as both fail
//!   the check (src/outcome.rs); an UNKNOWN the caller allowed
//!   (`--allow-unknown`, or `allow_unknown` in `grail.toml`) is level
//!   `warning`, and the run's `properties.unknown_allowed` says who allowed
//!   it (`flag` or `workspace`). Each result has `properties.outcome`, and
//!   `properties.path`, the key path of where it is in the document (with
//!   `attachment_path` and `related` when the finding has them). All
//!   keep SARIF's default kind, `fail`: missing evidence is a problem to fix,
//!   and SARIF allows a level other than `none` only on that kind.
//! - PASS and NOT APPLICABLE are not results: a code-scanning tool shows
//!   every result as an alert. Their counts are in the run's
//!   `properties.summary`, so nothing is dropped silently; `--format json`
//!   lists each with its reason.
//! - No `helpUri`: SARIF requires an absolute URI there, and grail has no
//!   hosted documentation to point at. A rule's `help` carries its `///`
//!   documentation and the file and line that declare it; every result has
//!   that declaration as a related location.
//! - The shipped library is built into the binary, not in the checked
//!   repository: its files are given relative to the base id `GRAIL_LIBRARY`,
//!   which the run describes (and, having no URI for it, does not resolve),
//!   and a rule's `help` of the library says that `grail source RULE` prints
//!   it. A `--policy` folder's files are paths as given.
//! - Columns count Unicode code points (`columnKind: unicodeCodePoints`), as
//!   every grail report does; artifact URIs are the paths as given, relative
//!   when they were.

use grail_engine::db::compile_policy;
use grail_engine::hir::Loc;
use grail_engine::{Database, Finding, LineIndex, PolicySet, SourceText, Summary};
use serde_json::{Value, json};

use grail_lang::ast::Span;

use crate::outcome::{self, AllowedBy, Mark};

pub const SCHEMA: &str = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json";

/// The base id of the files of the shipped library.
const LIBRARY: &str = "GRAIL_LIBRARY";

/// Where a run's policy files are: `shipped[i]` when file `i` of the set is
/// the library built into grail's.
#[derive(Clone, Copy)]
pub struct Policy<'a> {
    pub set: PolicySet,
    pub shipped: &'a [bool],
}

impl Policy<'_> {
    fn is_shipped(&self, file: u32) -> bool {
        self.shipped.get(file as usize).copied().unwrap_or(false)
    }
}

/// One deployment of a log: the documents its findings point into, the
/// findings, and who accepted its UNKNOWN outcomes.
pub struct Deployment<'a> {
    pub documents: Vec<SourceText>,
    pub findings: std::borrow::Cow<'a, [Finding]>,
    pub allowed: Option<AllowedBy>,
}

/// A SARIF log of one run per deployment.
pub fn log(db: &Database, policy: Policy<'_>, deployments: &[Deployment<'_>]) -> Value {
    let runs: Vec<Value> = deployments.iter().map(|d| run(db, policy, d)).collect();
    json!({ "$schema": SCHEMA, "version": "2.1.0", "runs": runs })
}

fn run(db: &Database, p: Policy<'_>, deployment: &Deployment<'_>) -> Value {
    let (docs, findings, allowed) = (&deployment.documents[..], &deployment.findings[..], deployment.allowed);
    let set = p.set;
    let policy = &compile_policy(db, set).policy;
    let metas = policy.rule_meta();
    let rules: Vec<Value> = metas
        .iter()
        .map(|m| {
            let docs = m.docs.join("\n");
            let full = if docs.trim().is_empty() { m.what.clone() } else { docs.clone() };
            let open = if p.is_shipped(m.loc.file) {
                format!(" (shipped library: `grail source {}` prints it)", m.id)
            } else {
                String::new()
            };
            let declared = region_of_policy(db, set, m.loc)
                .map(|(path, line, column)| format!("declared at {path}:{line}:{column}{open}"))
                .unwrap_or_default();
            let mut rule = json!({
                "id": m.id,
                "name": m.id,
                "shortDescription": { "text": first_sentence(&full) },
                "fullDescription": { "text": unwrap_lines(&full) },
                "help": {
                    "text": format!("{}\n\n{declared}", unwrap_lines(&full)).trim().to_string(),
                    "markdown": format!("{}\n\n{}", unwrap_lines(&full), if declared.is_empty() { String::new() } else { format!("Rule `{}` is {declared}.", m.id) }).trim().to_string(),
                },
            });
            if let Some(location) = policy_location(db, p, m.loc, None) {
                rule["properties"] = json!({ "declaration": location["physicalLocation"] });
            }
            rule
        })
        .collect();

    let results: Vec<Value> = findings
        .iter()
        .filter_map(|f| Some((f, outcome::mark(f.outcome, allowed)?)))
        .map(|(f, mark)| result(db, p, docs, f, mark, metas.iter().position(|m| m.id == f.rule)))
        .collect();

    let s = Summary::of(findings);
    let artifacts: Vec<Value> = docs.iter().map(|d| json!({ "location": { "uri": uri(d.path(db)) } })).collect();
    let mut run = json!({
        "tool": {
            "driver": {
                "name": "grail",
                "semanticVersion": env!("CARGO_PKG_VERSION"),
                "rules": rules,
            }
        },
        "invocations": [{ "executionSuccessful": true }],
        "columnKind": "unicodeCodePoints",
        "artifacts": artifacts,
        "results": results,
        "properties": {
            "verdict": outcome::verdict_word(s.verdict()),
            "summary": {"pass": s.pass, "fail": s.fail, "unknown": s.unknown, "not_applicable": s.not_applicable},
        },
    });
    if let Some(by) = allowed {
        run["properties"]["unknown_allowed"] = json!(by.as_str());
    }
    if p.shipped.contains(&true) {
        run["originalUriBaseIds"] = json!({
            LIBRARY: { "description": { "text": "the guardrail library built into grail: policies/guardrails/ of grail's own source; `grail source` prints its files" } }
        });
    }
    run
}

fn result(
    db: &Database,
    p: Policy<'_>,
    docs: &[SourceText],
    f: &Finding,
    mark: Mark,
    rule_index: Option<usize>,
) -> Value {
    let text = if f.message.is_empty() { f.subject.clone() } else { f.message.clone() };
    let mut r = json!({
        "ruleId": f.rule,
        "level": match mark { Mark::Error => "error", Mark::Warning => "warning" },
        "message": { "text": text },
        "properties": { "outcome": f.outcome.as_str(), "subject": f.subject },
    });
    if let Some(paths) = &f.place.paths {
        r["properties"]["path"] = json!(paths.path);
        if let Some(inner) = &paths.attachment_path {
            r["properties"]["attachment_path"] = json!(inner);
        }
        if !paths.related.is_empty() {
            r["properties"]["related"] = json!(paths.related);
        }
    }
    if let Some(i) = rule_index {
        r["ruleIndex"] = json!(i);
    }
    let located = f.location.and_then(|(d, span)| Some((docs.get(d as usize)?, span)));
    let location = match located {
        Some((doc, span)) => Some(document_location(db, doc, span, Some(&f.subject))),
        // Not placed in the text: the document as a whole, when there is one.
        None => match docs {
            [only] => Some(json!({ "physicalLocation": { "artifactLocation": { "uri": uri(only.path(db)) } } })),
            _ => None,
        },
    };
    if let Some(location) = location {
        r["locations"] = json!([location]);
    }
    let mut related = Vec::new();
    if let Some(loc) = f.policy
        && let Some(mut l) = policy_location(db, p, loc, Some(&format!("rule `{}` is declared here", f.rule)))
    {
        l["id"] = json!(related.len());
        related.push(l);
    }
    for (d, span, label) in &f.labels {
        if let Some(doc) = docs.get(*d as usize) {
            let mut l = document_location(db, doc, *span, Some(label));
            l["id"] = json!(related.len());
            related.push(l);
        }
    }
    if !related.is_empty() {
        r["relatedLocations"] = json!(related);
    }
    r
}

fn document_location(db: &Database, doc: &SourceText, span: Span, label: Option<&str>) -> Value {
    let mut l = json!({
        "physicalLocation": {
            "artifactLocation": { "uri": uri(doc.path(db)) },
            "region": region(doc.text(db), span),
        }
    });
    if let Some(label) = label {
        l["message"] = json!({ "text": label });
    }
    l
}

fn policy_location(db: &Database, p: Policy<'_>, loc: Loc, label: Option<&str>) -> Option<Value> {
    let file = p.set.files(db).get(loc.file as usize)?;
    let mut artifact = json!({ "uri": uri(file.path(db)) });
    if p.is_shipped(loc.file) {
        artifact["uriBaseId"] = json!(LIBRARY);
    }
    let mut l = json!({
        "physicalLocation": {
            "artifactLocation": artifact,
            "region": region(file.text(db), loc.span),
        }
    });
    if let Some(label) = label {
        l["message"] = json!({ "text": label });
    }
    Some(l)
}

fn region_of_policy(db: &Database, set: PolicySet, loc: Loc) -> Option<(String, usize, usize)> {
    let file = set.files(db).get(loc.file as usize)?;
    let text = file.text(db);
    let (line, column) = LineIndex::new(text).line_col(text, loc.span.start);
    Some((file.path(db).clone(), line, column))
}

/// A SARIF region: 1-based lines, 1-based code-point columns, the end column
/// exclusive (the character after the span), as SARIF defines it.
fn region(text: &str, span: Span) -> Value {
    let index = LineIndex::new(text);
    let (start_line, start_column) = index.line_col(text, span.start);
    let (end_line, end_column) = index.line_col(text, span.end.max(span.start));
    json!({
        "startLine": start_line,
        "startColumn": start_column,
        "endLine": end_line,
        "endColumn": end_column,
    })
}

/// A path as a URI reference: `/` separators, and every byte outside the
/// unreserved set and `/` percent-encoded. An absolute path becomes a `file:` URI.
pub fn uri(path: &str) -> String {
    let path = path.replace('\\', "/");
    let mut out = String::new();
    for b in path.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~/".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    if path.starts_with('/') { format!("file://{out}") } else { out }
}

/// Documentation lines joined into one paragraph, keeping blank-line breaks.
fn unwrap_lines(docs: &str) -> String {
    docs.split("\n\n").map(|p| p.split_whitespace().collect::<Vec<_>>().join(" ")).collect::<Vec<_>>().join("\n\n")
}

/// The first sentence of a description (up to the first `. ` or the end).
fn first_sentence(docs: &str) -> String {
    let text = unwrap_lines(docs);
    let first = text.split("\n\n").next().unwrap_or_default();
    match first.find(". ") {
        Some(at) => first[..=at].to_string(),
        None => first.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_become_uri_references() {
        assert_eq!(uri("examples/bindings/good.yaml"), "examples/bindings/good.yaml");
        assert_eq!(uri("a b/é#1.yaml"), "a%20b/%C3%A9%231.yaml");
        assert_eq!(uri("/tmp/x.yaml"), "file:///tmp/x.yaml");
        assert_eq!(uri("dir\\x.json"), "dir/x.json");
    }

    #[test]
    fn a_description_starts_with_its_first_sentence() {
        assert_eq!(first_sentence("Enough slots. Each counts\nonce."), "Enough slots.");
        assert_eq!(first_sentence("no period here"), "no period here");
        assert_eq!(unwrap_lines("a\nb\n\nc"), "a b\n\nc");
    }

    #[test]
    fn regions_end_after_the_span_and_count_code_points() {
        let text = "a: é\nbc: 1\n";
        assert_eq!(
            region(text, Span::new(3, 5)),
            json!({"startLine": 1, "startColumn": 4, "endLine": 1, "endColumn": 5})
        );
        assert_eq!(
            region(text, Span::new(6, 8)),
            json!({"startLine": 2, "startColumn": 1, "endLine": 2, "endColumn": 3})
        );
    }
}
