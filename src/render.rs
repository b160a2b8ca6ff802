//! Renderers: findings and policy diagnostics for people (miette) and for
//! programs (JSON). The engine hands over data; only this module formats it.

use std::io::IsTerminal as _;

use grail_engine::hir::Loc;
use grail_engine::{Database, Finding, LineIndex, Outcome, PolicyDiagnostic, PolicySet, Severity, SourceText, Summary};
use miette::{GraphicalReportHandler, GraphicalTheme, LabeledSpan, MietteDiagnostic, NamedSource};

fn handler() -> GraphicalReportHandler {
    let color = std::env::var_os("NO_COLOR").is_none() && std::io::stdout().is_terminal();
    let theme = if color { GraphicalTheme::unicode() } else { GraphicalTheme::unicode_nocolor() };
    GraphicalReportHandler::new_themed(theme).with_width(100).with_links(false)
}

/// The files a report points into (a policy's, or a deployment's
/// documents), by index, each with its line index built once, when a
/// position in it is first asked for.
pub struct Texts<'a> {
    files: Vec<(&'a str, &'a str)>,
    lines: Vec<std::sync::OnceLock<LineIndex>>,
    /// Which files are the shipped library's (a policy's; see [`Texts::shipped`]).
    shipped: Vec<bool>,
}

impl<'a> Texts<'a> {
    /// The files as (path, text).
    pub fn new(files: Vec<(&'a str, &'a str)>) -> Texts<'a> {
        let lines = files.iter().map(|_| std::sync::OnceLock::new()).collect();
        Texts { files, lines, shipped: Vec::new() }
    }

    /// The same files, those flagged being the shipped library's, which
    /// the user has no file of (help lines then say how to print them).
    pub fn shipped(mut self, flags: &[bool]) -> Texts<'a> {
        self.shipped = flags.to_vec();
        self
    }

    /// Whether file `i` is the shipped library's.
    pub fn is_shipped(&self, i: u32) -> bool {
        self.shipped.get(i as usize).copied().unwrap_or(false)
    }

    /// The path of file `i`.
    pub fn path(&self, i: u32) -> Option<&'a str> {
        self.files.get(i as usize).map(|(p, _)| *p)
    }

    /// A policy's files.
    pub fn policy(db: &'a Database, set: PolicySet) -> Texts<'a> {
        Texts::new(set.files(db).iter().map(|f| (f.path(db).as_str(), f.text(db).as_str())).collect())
    }

    /// Database inputs.
    pub fn sources(db: &'a Database, docs: &[SourceText]) -> Texts<'a> {
        Texts::new(docs.iter().map(|d| (d.path(db).as_str(), d.text(db).as_str())).collect())
    }

    fn get(&self, i: u32) -> Option<(&'a str, &'a str)> {
        self.files.get(i as usize).copied()
    }

    fn len(&self) -> usize {
        self.files.len()
    }

    /// The 1-based line and column of a byte offset in file `i`.
    fn line_col(&self, i: u32, offset: usize) -> (usize, usize) {
        let Some((_, text)) = self.get(i) else { return (1, 1) };
        self.lines[i as usize].get_or_init(|| LineIndex::new(text)).line_col(text, offset)
    }

    /// `path:line:column` of a policy location.
    pub fn position(&self, loc: Loc) -> Option<(&'a str, usize, usize)> {
        let (path, _) = self.get(loc.file)?;
        let (line, column) = self.line_col(loc.file, loc.span.start);
        Some((path, line, column))
    }
}

/// The help line of a finding: where its rule is declared and, when that
/// is the shipped library (built into grail, no file of the user's), the
/// command that prints it.
pub fn declared_at(rule: &str, (path, line, column): (&str, usize, usize), shipped: bool) -> String {
    let mut help = format!("rule `{rule}` is declared at {path}:{line}:{column}");
    if shipped {
        help.push_str(&format!(" (shipped library: `grail source {rule}` prints it)"));
    }
    help
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
/// `docs` are the documents the findings point into; `shown` those the report is about;
/// `shipped` which of the policy's files are the shipped library's.
pub fn human(
    db: &Database,
    set: PolicySet,
    shipped: &[bool],
    docs: &[SourceText],
    shown: &[SourceText],
    findings: &[Finding],
    verbose: bool,
) -> String {
    let shown: Vec<&str> = shown.iter().map(|d| d.path(db).as_str()).collect();
    human_of(&Texts::policy(db, set).shipped(shipped), &Texts::sources(db, docs), &shown, findings, verbose)
}

/// [`human`] on texts read outside the database.
pub fn human_of(policy: &Texts<'_>, docs: &Texts<'_>, shown: &[&str], findings: &[Finding], verbose: bool) -> String {
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
            && let Some(at) = policy.position(loc)
        {
            diag = diag.with_help(declared_at(&f.rule, at, policy.is_shipped(loc.file)));
        }
        match f.location.and_then(|(d, s)| docs.get(d).map(|doc| (d, doc, s))) {
            Some((d, (path, text), span)) => {
                diag = diag.with_label(labeled(span, text, Some(f.subject.clone())));
                for (other, s, label) in &f.labels {
                    if *other == d {
                        diag = diag.and_label(labeled(*s, text, Some(label.clone())));
                    }
                }
                out.push_str(&render(diag, path, text));
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
    out.push_str(&summary_line(shown, findings));
    out
}

/// The closing line of a report: the files, the count of each outcome, the verdict.
pub fn summary_line(shown: &[&str], findings: &[Finding]) -> String {
    let s = Summary::of(findings);
    format!(
        "{}: {} failed, {} unknown, {} passed, {} not applicable ({})\n",
        shown.join(", "),
        s.fail,
        s.unknown,
        s.pass,
        s.not_applicable,
        match s.verdict() {
            Outcome::Fail => "fail",
            Outcome::Unknown => "unknown",
            _ => "pass",
        }
    )
}

/// The fields `grail check` adds to a report: the layers of its documents,
/// the time of the check (when the policy reads it), and which deployment
/// or file a report of many is about.
pub struct Added<'a> {
    pub layers: serde_json::Value,
    pub now: Option<serde_json::Value>,
    pub deployment: Option<&'a str>,
    pub file: Option<&'a str>,
}

/// The JSON report of `findings`, with the fields `grail check` adds, written out (pretty, or
/// on one line as `--each --format json` prints it): serialised from the
/// report directly, without a `serde_json::Value` in between (the same bytes).
pub fn json_text(policy: &Texts<'_>, docs: &Texts<'_>, findings: &[Finding], added: Added<'_>, pretty: bool) -> String {
    let mut report = report(policy, docs, findings, added.file);
    report.layers = Some(added.layers);
    report.now = added.now;
    report.deployment = added.deployment;
    // About 300 bytes a listed finding: written once, not grown a dozen times.
    let mut out = Vec::with_capacity(512 + 320 * report.findings.len());
    let written =
        if pretty { serde_json::to_writer_pretty(&mut out, &report) } else { serde_json::to_writer(&mut out, &report) };
    if written.is_err() {
        out.clear();
    }
    out.push(b'\n');
    // serde_json writes UTF-8 only.
    String::from_utf8(out).unwrap_or_default()
}

/// The JSON report, field by field in the documented order.
#[derive(serde::Serialize)]
struct Report<'a> {
    verdict: &'static str,
    summary: Counts,
    findings: Vec<Listed<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    layers: Option<serde_json::Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    now: Option<serde_json::Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    deployment: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    file: Option<&'a str>,
}

#[derive(serde::Serialize)]
struct Counts {
    pass: usize,
    fail: usize,
    unknown: usize,
    not_applicable: usize,
}

#[derive(serde::Serialize)]
struct Listed<'a> {
    rule: &'a str,
    outcome: &'static str,
    subject: &'a str,
    message: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    file: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    line: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    column: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    policy: Option<PolicyAt<'a>>,
}

#[derive(serde::Serialize)]
struct PolicyAt<'a> {
    file: &'a str,
    line: usize,
    column: usize,
}

fn report<'a>(policy: &Texts<'a>, docs: &Texts<'a>, findings: &'a [Finding], file: Option<&'a str>) -> Report<'a> {
    let s = Summary::of(findings);
    let findings = findings
        .iter()
        .filter(|f| f.outcome != Outcome::Pass)
        .map(|f| {
            let mut o = Listed {
                rule: &f.rule,
                outcome: f.outcome.as_str(),
                subject: &f.subject,
                message: &f.message,
                file: None,
                line: None,
                column: None,
                policy: None,
            };
            let doc = f.location.and_then(|(d, s)| docs.get(d).map(|doc| (d, doc, s)));
            if let Some((d, (path, _), span)) = doc {
                let (line, column) = docs.line_col(d, span.start);
                (o.file, o.line, o.column) = (Some(path), Some(line), Some(column));
            } else if docs.len() == 1
                && let Some((only, _)) = docs.get(0)
            {
                o.file = Some(only);
            }
            o.policy = f.policy.and_then(|loc| policy.position(loc)).map(|(file, line, column)| PolicyAt {
                file,
                line,
                column,
            });
            o
        })
        .collect();
    Report {
        verdict: match s.verdict() {
            Outcome::Fail => "fail",
            Outcome::Unknown => "unknown",
            _ => "pass",
        },
        summary: Counts { pass: s.pass, fail: s.fail, unknown: s.unknown, not_applicable: s.not_applicable },
        findings,
        layers: None,
        now: None,
        deployment: None,
        file,
    }
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

/// Two documents that one check may not hold together (`at most one per
/// deployment`): the second with its first line, the first named in help.
pub fn crowded(db: &Database, set: PolicySet, docs: &[SourceText], c: &grail_engine::check::Crowded) -> String {
    let name = |i: u32| docs.get(i as usize).map(|d| d.path(db).clone()).unwrap_or_default();
    let at = |(i, span): (u32, grail_lang::ast::Span)| {
        let text = docs.get(i as usize).map(|d| d.text(db).as_str()).unwrap_or_default();
        let (line, column) = LineIndex::new(text).line_col(text, span.start);
        format!("{}:{line}:{column}", name(i))
    };
    let (doc, span) = c.second;
    let text = docs.get(doc as usize).map(|d| d.text(db).as_str()).unwrap_or_default();
    let start = span.start.min(text.len());
    let end = text[start..].find('\n').map_or(span.end.min(text.len()), |n| start + n).max(start);
    let mut help = vec![
        format!("the first `{}` document: {}", c.kind, at(c.first)),
        "check each in a command of its own".to_string(),
    ];
    if let Some((p, l, col)) = policy_position(db, set, c.loc) {
        help.push(format!("`at most one per deployment` is declared at {p}:{l}:{col}"));
    }
    let diag = MietteDiagnostic::new(format!(
        "`{}` is a second `{}` document, after `{}`: one check holds at most one",
        name(doc),
        c.kind,
        name(c.first.0)
    ))
    .with_code("usage")
    .with_severity(miette::Severity::Error);
    // A document on one long line (minified JSON) is named by its position, not printed.
    if end - start > LONGEST_SHOWN_LINE {
        help.insert(0, format!("the second: {}", at(c.second)));
        let diag = diag.with_help(help.join("\n"));
        let mut out = String::new();
        if handler().render_report(&mut out, &diag).is_err() {
            out = format!("{diag}\n");
        }
        return out;
    }
    let diag = diag
        .with_label(labeled(grail_lang::ast::Span::new(start, end), text, Some(format!("a second `{}`", c.kind))))
        .with_help(help.join("\n"));
    render(diag, &name(doc), text)
}

/// The longest line of a document a usage error prints.
const LONGEST_SHOWN_LINE: usize = 200;
