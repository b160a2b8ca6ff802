//! Renderers: findings and policy diagnostics for people (miette) and for
//! programs (JSON). The engine hands over data; only this module formats it.

use std::io::IsTerminal as _;

use grail_engine::hir::Loc;
use grail_engine::{Database, Finding, LineIndex, Outcome, PolicyDiagnostic, PolicySet, Severity, SourceText, Summary};
use miette::{GraphicalReportHandler, GraphicalTheme, LabeledSpan, MietteDiagnostic, NamedSource};
use serde_json::{Value, json};

fn handler() -> GraphicalReportHandler {
    let color = std::env::var_os("NO_COLOR").is_none() && std::io::stdout().is_terminal();
    let theme = if color { GraphicalTheme::unicode() } else { GraphicalTheme::unicode_nocolor() };
    GraphicalReportHandler::new_themed(theme).with_width(100).with_links(false)
}

/// `path:line:column` of a policy location.
pub fn policy_position(db: &Database, set: PolicySet, loc: Loc) -> Option<(String, usize, usize)> {
    let file = set.files(db).get(loc.file as usize)?;
    let text = file.text(db);
    let (line, column) = LineIndex::new(text).line_col(text, loc.span.start);
    Some((file.path(db).clone(), line, column))
}

fn labeled(span: grail_lang::ast::Span, text: &str, label: Option<String>) -> LabeledSpan {
    // miette needs a span inside the text; an empty span marks a position.
    let start = span.start.min(text.len());
    let len = span.end.min(text.len()).saturating_sub(start);
    LabeledSpan::new(label, start, len)
}

fn render(diag: MietteDiagnostic, path: &str, text: &str) -> String {
    let report = miette::Report::new(diag).with_source_code(NamedSource::new(path, text.to_string()));
    let mut out = String::new();
    if handler().render_report(&mut out, report.as_ref()).is_err() {
        out = format!("{report}\n");
    }
    out
}

pub fn policy_diagnostics(db: &Database, set: PolicySet, diagnostics: &[PolicyDiagnostic]) -> String {
    let mut out = String::new();
    for d in diagnostics {
        let Some(file) = set.files(db).get(d.loc.file as usize) else { continue };
        let text = file.text(db);
        let mut diag = MietteDiagnostic::new(d.message.clone()).with_code(d.code).with_severity(match d.severity {
            Severity::Error => miette::Severity::Error,
            Severity::Warning => miette::Severity::Warning,
        });
        // A label at the primary span takes the place of the unlabelled mark.
        if !d.labels.iter().any(|(loc, _)| *loc == d.loc) {
            diag = diag.with_label(labeled(d.loc.span, text, None));
        }
        for (loc, label) in &d.labels {
            if loc.file == d.loc.file {
                diag = diag.and_label(labeled(loc.span, text, Some(label.clone())));
            }
        }
        let mut help: Vec<String> = d.help.iter().cloned().collect();
        for (loc, label) in &d.labels {
            if loc.file != d.loc.file
                && let Some((p, l, c)) = policy_position(db, set, *loc)
            {
                help.push(format!("{label}: {p}:{l}:{c}"));
            }
        }
        if !help.is_empty() {
            diag = diag.with_help(help.join("\n"));
        }
        out.push_str(&render(diag, file.path(db), text));
    }
    out
}

/// The syntax errors of one policy file, as `grail check` shows them.
pub fn syntax_errors(path: &str, text: &str, errors: &[grail_lang::ParseError]) -> String {
    let mut out = String::new();
    for e in errors {
        let diag = MietteDiagnostic::new(e.message.clone())
            .with_code("syntax")
            .with_severity(miette::Severity::Error)
            .with_label(labeled(e.span, text, None));
        out.push_str(&render(diag, path, text));
    }
    out
}

fn outcome_word(o: Outcome) -> &'static str {
    match o {
        Outcome::Pass => "pass",
        Outcome::Fail => "FAIL",
        Outcome::Unknown => "UNKNOWN",
        Outcome::NotApplicable => "not applicable",
    }
}

/// The human report of one deployment.
/// `docs` are the documents the findings point into; `shown` those the report is about.
pub fn human(
    db: &Database,
    set: PolicySet,
    docs: &[SourceText],
    shown: &[SourceText],
    findings: &[Finding],
    verbose: bool,
) -> String {
    let mut out = String::new();
    for f in findings.iter().filter(|f| matches!(f.outcome, Outcome::Fail | Outcome::Unknown)) {
        let title = format!("{}: {}", outcome_word(f.outcome), f.message);
        let mut diag =
            MietteDiagnostic::new(title).with_code(f.rule.clone()).with_severity(if f.outcome == Outcome::Fail {
                miette::Severity::Error
            } else {
                miette::Severity::Warning
            });
        if let Some(loc) = f.policy
            && let Some((p, l, c)) = policy_position(db, set, loc)
        {
            diag = diag.with_help(format!("rule `{}` is declared at {p}:{l}:{c}", f.rule));
        }
        match f.location.and_then(|(d, s)| docs.get(d as usize).map(|doc| (doc, s))) {
            Some((doc, span)) => {
                let text = doc.text(db);
                diag = diag.with_label(labeled(span, text, Some(f.subject.clone())));
                for (d, s, label) in &f.labels {
                    if docs.get(*d as usize) == Some(doc) {
                        diag = diag.and_label(labeled(*s, text, Some(label.clone())));
                    }
                }
                out.push_str(&render(diag, doc.path(db), text));
            }
            None => {
                let report = miette::Report::new(diag);
                let mut s = String::new();
                if handler().render_report(&mut s, report.as_ref()).is_err() {
                    s = format!("{report}\n");
                }
                out.push_str(&s);
            }
        }
    }
    if verbose {
        for f in findings.iter().filter(|f| matches!(f.outcome, Outcome::Pass | Outcome::NotApplicable)) {
            let reason = if f.message.is_empty() { String::new() } else { format!(": {}", f.message) };
            out.push_str(&format!("  {:<14} {} {}{reason}\n", outcome_word(f.outcome), f.rule, f.subject));
        }
    }
    let s = Summary::of(findings);
    let files: Vec<&str> = shown.iter().map(|d| d.path(db).as_str()).collect();
    out.push_str(&format!(
        "{}: {} failed, {} unknown, {} passed, {} not applicable ({})\n",
        files.join(", "),
        s.fail,
        s.unknown,
        s.pass,
        s.not_applicable,
        match s.verdict() {
            Outcome::Fail => "fail",
            Outcome::Unknown => "unknown",
            _ => "pass",
        }
    ));
    out
}

/// The JSON report of one deployment (DESIGN.md, "Command line contract").
pub fn json(db: &Database, set: PolicySet, docs: &[SourceText], findings: &[Finding]) -> Value {
    let s = Summary::of(findings);
    let listed: Vec<Value> = findings
        .iter()
        .filter(|f| f.outcome != Outcome::Pass)
        .map(|f| {
            let mut o = json!({
                "rule": f.rule,
                "outcome": f.outcome.as_str(),
                "subject": f.subject,
                "message": f.message,
            });
            let doc = f.location.and_then(|(d, s)| docs.get(d as usize).map(|doc| (doc, s)));
            if let Some((doc, span)) = doc {
                let text = doc.text(db);
                let (line, column) = LineIndex::new(text).line_col(text, span.start);
                o["file"] = json!(doc.path(db));
                o["line"] = json!(line);
                o["column"] = json!(column);
            } else if let [only] = docs {
                o["file"] = json!(only.path(db));
            }
            if let Some((p, l, c)) = f.policy.and_then(|loc| policy_position(db, set, loc)) {
                o["policy"] = json!({"file": p, "line": l, "column": c});
            }
            o
        })
        .collect();
    json!({
        "verdict": match s.verdict() { Outcome::Fail => "fail", Outcome::Unknown => "unknown", _ => "pass" },
        "summary": {"pass": s.pass, "fail": s.fail, "unknown": s.unknown, "not_applicable": s.not_applicable},
        "findings": listed,
    })
}

/// Why a workspace file (`grail.toml`) cannot be used, with its lines.
pub fn workspace_error(path: &str, text: &str, e: &grail_engine::workspace_file::WorkspaceFileError) -> String {
    let mut diag =
        MietteDiagnostic::new(e.message.clone()).with_code("workspace").with_severity(miette::Severity::Error);
    if let Some(span) = e.span {
        diag = diag.with_label(labeled(span, text, None));
    }
    if let Some(help) = &e.help {
        diag = diag.with_help(help.clone());
    }
    render(diag, path, text)
}
