//! Renderers: findings and policy diagnostics for people (miette) and for
//! programs (JSON). The engine hands over data; only this module formats it.

use std::io::IsTerminal as _;

use crate::excerpt::Excerpt;
use crate::outcome::{self, AllowedBy, Mark};
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

fn labeled(span: grail_lang::ast::Span, doc: &Excerpt, label: Option<String>) -> LabeledSpan {
    let text = doc.text();
    // miette needs a span inside the text; an empty span marks a position.
    let start = span.start.min(text.len());
    let mut end = span.end.min(text.len()).max(start);
    // A long span on a long line (a 14 MiB string) is underlined on its first bytes.
    if end - start > LONGEST_LABEL && doc.long_lines(start, end) {
        let line_end = text[start..].find('\n').map_or(text.len(), |i| start + i);
        end = (start + LONGEST_LABEL).min(line_end);
        while !text.is_char_boundary(end) {
            end -= 1;
        }
    }
    LabeledSpan::new(label, start, end - start)
}

/// The most bytes of a document a label underlines.
const LONGEST_LABEL: usize = 200;

/// A text's excerpt, for a report of one finding or diagnostic.
fn excerpt(text: &str) -> std::sync::Arc<Excerpt> {
    std::sync::Arc::new(Excerpt::new(text.into()))
}

fn render(diag: MietteDiagnostic, path: &str, doc: std::sync::Arc<Excerpt>) -> String {
    let report = miette::Report::new(diag).with_source_code(NamedSource::new(path, doc));
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
        let doc = excerpt(file.text(db));
        let mut diag = MietteDiagnostic::new(d.message.clone()).with_code(d.code).with_severity(match d.severity {
            Severity::Error => miette::Severity::Error,
            Severity::Warning => miette::Severity::Warning,
        });
        // A label at the primary span takes the place of the unlabelled mark.
        if !d.labels.iter().any(|(loc, _)| *loc == d.loc) {
            diag = diag.with_label(labeled(d.loc.span, &doc, None));
        }
        for (loc, label) in &d.labels {
            if loc.file == d.loc.file {
                diag = diag.and_label(labeled(loc.span, &doc, Some(label.clone())));
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
        out.push_str(&render(diag, file.path(db), doc));
    }
    out
}

/// The syntax errors of one policy file, as `grail check` shows them.
pub fn syntax_errors(path: &str, text: &str, errors: &[grail_lang::ParseError]) -> String {
    let mut out = String::new();
    let doc = excerpt(text);
    for e in errors {
        let diag = MietteDiagnostic::new(e.message.clone())
            .with_code("syntax")
            .with_severity(miette::Severity::Error)
            .with_label(labeled(e.span, &doc, None));
        out.push_str(&render(diag, path, doc.clone()));
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
/// `shipped` which of the policy's files are the shipped library's; `allowed`
/// who accepted UNKNOWN outcomes.
#[allow(clippy::too_many_arguments)]
pub fn human(
    db: &Database,
    set: PolicySet,
    shipped: &[bool],
    docs: &[SourceText],
    shown: &[SourceText],
    findings: &[Finding],
    allowed: Option<AllowedBy>,
    verbose: bool,
) -> String {
    let shown: Vec<&str> = shown.iter().map(|d| d.path(db).as_str()).collect();
    let (policy, docs) = (Texts::policy(db, set).shipped(shipped), Texts::sources(db, docs));
    human_of(&policy, &docs, &shown, findings, Summary::of(findings), allowed, verbose)
}

/// [`human`] on texts read outside the database; `summary` counts the
/// outcomes, those of the PASS outcomes counted and not in `findings`
/// included (which `verbose` then cannot list).
pub fn human_of(
    policy: &Texts<'_>,
    docs: &Texts<'_>,
    shown: &[&str],
    findings: &[Finding],
    summary: Summary,
    allowed: Option<AllowedBy>,
    verbose: bool,
) -> String {
    let mut out = String::new();
    // Each document's text copied and indexed once for all its findings' snippets.
    let mut shared: std::collections::HashMap<u32, std::sync::Arc<Excerpt>> = std::collections::HashMap::new();
    for f in findings {
        let Some(mark) = outcome::mark(f.outcome, allowed) else { continue };
        let title = format!("{}: {}", outcome_word(f.outcome), f.message);
        let mut diag = MietteDiagnostic::new(title).with_code(f.rule.clone()).with_severity(match mark {
            Mark::Error => miette::Severity::Error,
            Mark::Warning => miette::Severity::Warning,
        });
        if let Some(loc) = f.policy
            && let Some(at) = policy.position(loc)
        {
            diag = diag.with_help(declared_at(&f.rule, at, policy.is_shipped(loc.file)));
        }
        match f.location.and_then(|(d, s)| docs.get(d).map(|doc| (d, doc, s))) {
            Some((d, (path, text), span)) => {
                let doc = shared.entry(d).or_insert_with(|| excerpt(text)).clone();
                diag = diag.with_label(labeled(span, &doc, Some(f.subject.clone())));
                for (other, s, label) in &f.labels {
                    if *other == d {
                        diag = diag.and_label(labeled(*s, &doc, Some(label.clone())));
                    }
                }
                out.push_str(&render(diag, path, doc));
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
    out.push_str(&summary_text(shown, summary, allowed));
    out
}

/// The closing line of a report: the files, the count of each outcome, the
/// verdict (and who allowed an UNKNOWN one).
pub fn summary_line(shown: &[&str], findings: &[Finding], allowed: Option<AllowedBy>) -> String {
    summary_text(shown, Summary::of(findings), allowed)
}

/// [`summary_line`] of outcomes counted.
fn summary_text(shown: &[&str], s: Summary, allowed: Option<AllowedBy>) -> String {
    format!(
        "{}: {} failed, {} unknown, {} passed, {} not applicable ({})\n",
        shown.join(", "),
        s.fail,
        s.unknown,
        s.pass,
        s.not_applicable,
        outcome::verdict_text(s.verdict(), allowed)
    )
}

/// The fields `grail check` adds to a report: the layers of its documents,
/// the time of the check (when the policy reads it), who accepted UNKNOWN
/// outcomes, and which deployment or file a report of many is about.
pub struct Added<'a> {
    pub layers: serde_json::Value,
    pub now: Option<serde_json::Value>,
    pub allowed: Option<AllowedBy>,
    pub deployment: Option<&'a str>,
    pub file: Option<&'a str>,
    /// The verdict lines of the policy's tables (see [`grail_engine::table::verdicts`]), when there are some.
    pub verdicts: Option<Vec<String>>,
    /// The PASS outcomes counted and not among the findings (see
    /// [`grail_engine::check::run_wanting`]); a report lists no PASS.
    pub passes: usize,
}

/// The JSON report of `findings`, with the fields `grail check` adds, written out (pretty, or
/// on one line as `--each --format json` prints it), without a
/// `serde_json::Value` in between. The one-line form, which `--each` prints
/// for every file, is written by hand ([`write_line`]); the pretty form, one
/// per command, goes through serde_json. Both give the bytes serde_json gives.
pub fn json_text(policy: &Texts<'_>, docs: &Texts<'_>, findings: &[Finding], added: Added<'_>, pretty: bool) -> String {
    let mut report = report(policy, docs, findings, added.file, added.passes);
    report.layers = Some(added.layers);
    report.now = added.now;
    report.unknown_allowed = added.allowed.map(AllowedBy::as_str);
    report.deployment = added.deployment;
    report.verdicts = added.verdicts;
    if pretty {
        let mut out = serde_json::to_string_pretty(&report).unwrap_or_default();
        out.push('\n');
        return out;
    }
    // About 300 bytes a listed finding: written once, not grown a dozen times.
    let mut out = String::with_capacity(512 + 320 * report.findings.len());
    if write_line(&mut out, &report).is_err() {
        out.clear();
    }
    out.push('\n');
    out
}

/// Writes `report` on one line, as `serde_json::to_string` would: the
/// fields in the order of [`Report`], [`Counts`], [`Listed`] and
/// [`PolicyAt`], those they skip when absent left out. The names are
/// written as they are, with no escaping to look for.
fn write_line(out: &mut String, report: &Report<'_>) -> serde_json::Result<()> {
    // The quotes around each string are written with the names before and
    // after it: one copy instead of three.
    out.push_str("{\"verdict\":\"");
    push_escaped(out, report.verdict);
    let c = &report.summary;
    out.push_str("\",\"summary\":{\"pass\":");
    push_number(out, c.pass);
    out.push_str(",\"fail\":");
    push_number(out, c.fail);
    out.push_str(",\"unknown\":");
    push_number(out, c.unknown);
    out.push_str(",\"not_applicable\":");
    push_number(out, c.not_applicable);
    out.push_str("},\"findings\":[");
    for (i, f) in report.findings.iter().enumerate() {
        out.push_str(if i == 0 { "{\"rule\":\"" } else { ",{\"rule\":\"" });
        push_escaped(out, f.rule);
        out.push_str("\",\"outcome\":\"");
        push_escaped(out, f.outcome);
        out.push_str("\",\"subject\":\"");
        push_escaped(out, f.subject);
        out.push_str("\",\"message\":\"");
        push_escaped(out, f.message);
        out.push('"');
        if let Some(path) = f.path {
            out.push_str(",\"path\":\"");
            push_escaped(out, path);
            out.push('"');
        }
        if let Some(inner) = f.attachment_path {
            out.push_str(",\"attachment_path\":\"");
            push_escaped(out, inner);
            out.push('"');
        }
        if let Some(related) = f.related {
            out.push_str(",\"related\":[");
            for (i, r) in related.iter().enumerate() {
                out.push_str(if i == 0 { "\"" } else { ",\"" });
                push_escaped(out, r);
                out.push('"');
            }
            out.push(']');
        }
        if let Some(file) = f.file {
            out.push_str(",\"file\":\"");
            push_escaped(out, file);
            out.push('"');
        }
        if let Some(line) = f.line {
            out.push_str(",\"line\":");
            push_number(out, line);
        }
        if let Some(column) = f.column {
            out.push_str(",\"column\":");
            push_number(out, column);
        }
        if let Some(at) = &f.policy {
            out.push_str(",\"policy\":{\"file\":\"");
            push_escaped(out, at.file);
            out.push_str("\",\"line\":");
            push_number(out, at.line);
            out.push_str(",\"column\":");
            push_number(out, at.column);
            out.push('}');
        }
        out.push('}');
    }
    out.push(']');
    // The layers and the time are small trees of any shape: serde_json writes them.
    if let Some(layers) = &report.layers {
        out.push_str(",\"layers\":");
        out.push_str(&serde_json::to_string(layers)?);
    }
    if let Some(now) = &report.now {
        out.push_str(",\"now\":");
        out.push_str(&serde_json::to_string(now)?);
    }
    if let Some(by) = report.unknown_allowed {
        out.push_str(",\"unknown_allowed\":\"");
        push_escaped(out, by);
        out.push('"');
    }
    if let Some(deployment) = report.deployment {
        out.push_str(",\"deployment\":\"");
        push_escaped(out, deployment);
        out.push('"');
    }
    if let Some(file) = report.file {
        out.push_str(",\"file\":\"");
        push_escaped(out, file);
        out.push('"');
    }
    if let Some(verdicts) = &report.verdicts {
        out.push_str(",\"verdicts\":");
        out.push_str(&serde_json::to_string(verdicts)?);
    }
    out.push('}');
    Ok(())
}

/// A number as serde_json writes it: its decimal digits.
fn push_number(out: &mut String, mut n: usize) {
    // Most numbers here are lines and columns of one or two digits.
    if n < 10 {
        out.push(char::from(b'0' + n as u8));
        return;
    }
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    while n > 0 {
        at -= 1;
        digits[at] = b'0' + (n % 10) as u8;
        n /= 10;
    }
    for &d in &digits[at..] {
        out.push(char::from(d));
    }
}

/// How serde_json escapes each byte of a string: 0 for none, `u` for
/// `\u00XX`, otherwise the letter after the backslash.
const ESCAPE: [u8; 256] = {
    let mut table = [0u8; 256];
    let mut b = 0;
    while b < 0x20 {
        table[b] = b'u';
        b += 1;
    }
    table[0x08] = b'b';
    table[0x09] = b't';
    table[0x0a] = b'n';
    table[0x0c] = b'f';
    table[0x0d] = b'r';
    table[b'"' as usize] = b'"';
    table[b'\\' as usize] = b'\\';
    table
};

/// Whether any of the eight bytes of `word` may need escaping: a control
/// byte, a quote or a backslash. It can say yes for a byte next to one that
/// does (a borrow in the subtraction), never no for one that does.
fn may_escape(word: u64) -> bool {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let below = |x: u64, n: u64| x.wrapping_sub(ONES * n) & !x & HIGH;
    let control = below(word, 0x20);
    let quote = below(word ^ (ONES * u64::from(b'"')), 1);
    let backslash = below(word ^ (ONES * u64::from(b'\\')), 1);
    control | quote | backslash != 0
}

/// The inside of `s` as a JSON string (without its quotes), escaped as
/// serde_json escapes it (`\"`, `\\`, `\b`, `\f`, `\n`, `\r`, `\t`,
/// `\u00XX` in lowercase hex for the other control bytes; `/`, DEL and
/// non-ASCII as they are). The bytes between escapes are copied a run at a
/// time, eight bytes checked at once.
fn push_escaped(out: &mut String, s: &str) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let bytes = s.as_bytes();
    let mut start = 0;
    let mut i = 0;
    while i < bytes.len() {
        if let Some(word) = bytes.get(i..i + 8) {
            if !may_escape(word_of(word)) {
                i += 8;
                continue;
            }
        } else if i >= 8 && !may_escape(word_of(&bytes[bytes.len() - 8..])) {
            // The last bytes, fewer than eight, checked with some already
            // checked before them.
            break;
        }
        let byte = bytes[i];
        let escape = ESCAPE[byte as usize];
        if escape == 0 {
            i += 1;
            continue;
        }
        // The run ends before an ASCII byte, so on a character boundary.
        out.push_str(&s[start..i]);
        out.push('\\');
        out.push(char::from(escape));
        if escape == b'u' {
            out.push_str("00");
            out.push(char::from(HEX[usize::from(byte >> 4)]));
            out.push(char::from(HEX[usize::from(byte & 0xf)]));
        }
        i += 1;
        start = i;
    }
    out.push_str(&s[start..]);
}

/// Eight bytes as one word.
fn word_of(bytes: &[u8]) -> u64 {
    u64::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7]])
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
    /// Who accepted UNKNOWN outcomes (`flag`, `workspace`), when someone did.
    #[serde(skip_serializing_if = "Option::is_none")]
    unknown_allowed: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    deployment: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    file: Option<&'a str>,
    /// The verdict lines of the policy's tables, in declaration order.
    #[serde(skip_serializing_if = "Option::is_none")]
    verdicts: Option<Vec<String>>,
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
    /// The key path of where the finding is (see grail_engine::keypath).
    #[serde(skip_serializing_if = "Option::is_none")]
    path: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    attachment_path: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    related: Option<&'a [String]>,
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

fn report<'a>(
    policy: &Texts<'a>,
    docs: &Texts<'a>,
    findings: &'a [Finding],
    file: Option<&'a str>,
    passes: usize,
) -> Report<'a> {
    let mut s = Summary::of(findings);
    s.pass += passes;
    let findings = findings
        .iter()
        .filter(|f| f.outcome != Outcome::Pass)
        .map(|f| {
            let mut o = Listed {
                rule: &f.rule,
                outcome: f.outcome.as_str(),
                subject: &f.subject,
                message: &f.message,
                path: f.place.paths.as_ref().map(|p| p.path.as_str()),
                attachment_path: f.place.paths.as_ref().and_then(|p| p.attachment_path.as_deref()),
                related: f.place.paths.as_ref().map(|p| p.related.as_slice()).filter(|r| !r.is_empty()),
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
        verdict: outcome::verdict_word(s.verdict()),
        summary: Counts { pass: s.pass, fail: s.fail, unknown: s.unknown, not_applicable: s.not_applicable },
        findings,
        layers: None,
        now: None,
        unknown_allowed: None,
        deployment: None,
        file,
        verdicts: None,
    }
}

/// Why a workspace file (`grail.toml`) cannot be used, with its lines.
pub fn workspace_error(path: &str, text: &str, e: &grail_engine::workspace_file::WorkspaceFileError) -> String {
    let doc = excerpt(text);
    let mut diag =
        MietteDiagnostic::new(e.message.clone()).with_code("workspace").with_severity(miette::Severity::Error);
    if let Some(span) = e.span {
        diag = diag.with_label(labeled(span, &doc, None));
    }
    if let Some(help) = &e.help {
        diag = diag.with_help(help.clone());
    }
    render(diag, path, doc)
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
    let second = excerpt(text);
    let diag = diag
        .with_label(labeled(grail_lang::ast::Span::new(start, end), &second, Some(format!("a second `{}`", c.kind))))
        .with_help(help.join("\n"));
    render(diag, &name(doc), second)
}

/// The longest line of a document a usage error prints.
const LONGEST_SHOWN_LINE: usize = 200;

#[cfg(test)]
mod tests {
    use super::*;

    fn escaped(s: &str) -> String {
        let mut out = String::from('"');
        push_escaped(&mut out, s);
        out.push('"');
        out
    }

    /// A small deterministic generator (xorshift64), so that a failure repeats.
    struct Xorshift(u64);

    impl Xorshift {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }

        fn below(&mut self, n: usize) -> usize {
            (self.next() % n as u64) as usize
        }
    }

    #[test]
    fn every_ascii_character_is_escaped_as_serde_json_escapes_it() {
        for b in 0u8..=0x7f {
            let c = char::from(b);
            // Alone, and at every place of a word of eight and beyond it.
            let mut cases = vec![c.to_string()];
            for at in 0..20 {
                let mut s: String = "abcdefghijklmnopqrst".chars().take(at).collect();
                s.push(c);
                s.push_str("uvwxyz0123456789");
                cases.push(s);
            }
            for s in cases {
                assert_eq!(escaped(&s), serde_json::to_string(&s).unwrap(), "byte {b:#04x} in {s:?}");
            }
        }
    }

    #[test]
    fn non_ascii_is_written_as_it_is() {
        for s in
            ["é", "中文", "😀", "\u{80}\u{9f}\u{a0}\u{ff}", "\u{2028}\u{2029}", "\u{feff}", "a/b\u{7f}c", "ÿ\"ÿ\\ÿ\nÿ"]
        {
            assert_eq!(escaped(s), serde_json::to_string(s).unwrap(), "{s:?}");
        }
        // Every character up to U+07FF, a few at a time.
        let all: Vec<char> = (0u32..0x800).filter_map(char::from_u32).collect();
        for chunk in all.chunks(11) {
            let s: String = chunk.iter().collect();
            assert_eq!(escaped(&s), serde_json::to_string(&s).unwrap(), "{s:?}");
        }
    }

    #[test]
    fn random_strings_are_escaped_as_serde_json_escapes_them() {
        let alphabet: Vec<char> = (0u8..0x80)
            .map(char::from)
            .chain(['é', 'ÿ', '\u{80}', '中', '😀', '\u{2028}', '/', '"', '\\', '\n', 'a', 'b', ' '])
            .collect();
        let mut random = Xorshift(0x9e37_79b9_7f4a_7c15);
        for _ in 0..20_000 {
            let len = random.below(70);
            // Some strings mostly plain (long runs), some of any character.
            let plain = random.below(2) == 0;
            let s: String = (0..len)
                .map(|_| {
                    if plain && random.below(16) != 0 {
                        char::from(b'a' + random.below(26) as u8)
                    } else {
                        alphabet[random.below(alphabet.len())]
                    }
                })
                .collect();
            assert_eq!(escaped(&s), serde_json::to_string(&s).unwrap(), "{s:?}");
        }
    }

    #[test]
    fn numbers_are_written_as_serde_json_writes_them() {
        for n in (0..2000).chain([9_999, 10_000, 123_456_789, u32::MAX as usize, usize::MAX]) {
            let mut out = String::new();
            push_number(&mut out, n);
            assert_eq!(out, serde_json::to_string(&n).unwrap());
        }
    }

    fn line(report: &Report<'_>) -> String {
        let mut out = String::new();
        write_line(&mut out, report).unwrap();
        out
    }

    /// Every combination of the fields a report may leave out, with strings
    /// that need escaping.
    #[test]
    fn a_report_line_is_the_one_serde_json_writes() {
        let strange = "a \"quoted\" back\\slash\n\t\u{1}\u{1f}\u{7f} é/中";
        let mut findings = Vec::new();
        let related = [strange.to_string(), "a.b[2]".to_string()];
        for mask in 0..16u32 {
            findings.push(Listed {
                rule: "rule.name",
                outcome: "fail",
                subject: strange,
                message: if mask % 3 == 0 { "" } else { strange },
                path: (mask % 5 != 0).then_some("a.\"x.y\"[1]"),
                attachment_path: (mask % 4 == 1).then_some(strange),
                related: (mask % 3 == 1).then_some(&related[..mask as usize % 2 + 1]),
                file: (mask & 1 != 0).then_some("dir/fi\"le.yaml"),
                line: (mask & 2 != 0).then_some(mask as usize * 37),
                column: (mask & 4 != 0).then_some(1),
                policy: (mask & 8 != 0).then_some(PolicyAt { file: "policies/x.grail", line: 12, column: 106 }),
            });
        }
        for mask in 0..16u32 {
            let report = Report {
                verdict: "unknown",
                summary: Counts { pass: 0, fail: 7, unknown: 12, not_applicable: 1234 },
                findings: if mask == 0 { Vec::new() } else { findings.iter().map(copy).collect() },
                layers: (mask & 1 != 0).then(|| serde_json::json!([{"file": strange, "kind": "Binding"}])),
                now: (mask & 2 != 0).then(|| serde_json::json!({"value": "2026-08-20T00:00:00Z", "source": "--now"})),
                unknown_allowed: (mask & 2 != 0).then_some(if mask & 1 != 0 { "flag" } else { "workspace" }),
                deployment: (mask & 4 != 0).then_some(strange),
                file: (mask & 8 != 0).then_some("x.json"),
                verdicts: (mask & 4 != 0).then(|| vec![strange.to_string(), "- a \"line\"".into()]),
            };
            assert_eq!(line(&report), serde_json::to_string(&report).unwrap());
        }
    }

    fn copy<'a>(f: &Listed<'a>) -> Listed<'a> {
        Listed { policy: f.policy.as_ref().map(|p| PolicyAt { file: p.file, line: p.line, column: p.column }), ..*f }
    }

    /// The reports of the example documents, checked with the shipped
    /// library, each alone, written both ways.
    #[test]
    fn the_reports_of_the_examples_are_the_ones_serde_json_writes() {
        use grail_engine::db::Source;

        let db = Database::default();
        let set = PolicySet::new(&db, grail_engine::shipped::sources(&db));
        let compiled = grail_engine::db::compile_policy(&db, set);
        let policy = Texts::policy(&db, set);
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut paths = Vec::new();
        let mut folders = vec![root.join("examples")];
        while let Some(folder) = folders.pop() {
            for entry in std::fs::read_dir(&folder).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    folders.push(path);
                } else if path
                    .extension()
                    .is_some_and(|e| ["json", "jsonl", "yaml", "yml", "md"].iter().any(|x| e == *x))
                {
                    paths.push(path);
                }
            }
        }
        paths.sort();
        assert!(paths.len() > 10, "the examples are missing: {paths:?}");
        let mut listed = 0;
        for path in paths {
            let name = path.strip_prefix(root).unwrap().to_string_lossy().into_owned();
            let source = Source::from_bytes(name.clone(), std::fs::read(&path).unwrap());
            let loaded = source.load();
            let inputs = [source.input(&loaded)];
            let run = grail_engine::check::run(&compiled.policy, &inputs, &[], &[], false, Some(0));
            let docs = Texts::new(vec![(source.path.as_str(), source.text.as_str())]);
            let mut report = report(&policy, &docs, &run.findings, Some(&name), 0);
            report.layers = Some(serde_json::json!([{"file": name, "layer": "security"}]));
            report.now = run.now_read.then(|| serde_json::json!({"value": "1970-01-01T00:00:00Z"}));
            listed += report.findings.len();
            assert_eq!(line(&report), serde_json::to_string(&report).unwrap(), "{name}");
        }
        assert!(listed > 100, "too few findings to compare: {listed}");
    }
}
