//! `--format junit`: JUnit XML for test reporters, as conftest writes it: a
//! test suite per deployment, a test case per rule and subject. FAIL and
//! UNKNOWN (missing evidence) are a `<failure>`, as both fail the check
//! (src/outcome.rs); NOT APPLICABLE, and an UNKNOWN the caller allowed
//! (`--allow-unknown`, or `allow_unknown` in `grail.toml`, named in its
//! message), are `<skipped>`, with the reason as the message and the
//! outcome as the type, so a reporter never counts an unproven rule as
//! passed. No `time`
//! attributes: the output is the same, byte for byte, for the same inputs.
//! Checked against the JUnit schema of Jenkins' xUnit plugin (tests/data/).

use std::fmt::Write as _;

use grail_engine::{Database, Finding, LineIndex, Outcome, SourceText, Summary};

use crate::outcome::{self, AllowedBy, Mark};

/// One `<testsuite>` element, and its counts.
pub struct Suite {
    xml: String,
    tests: usize,
    failures: usize,
}

/// The test suite of one deployment: `docs` are the documents the findings
/// point into, `shown` those the suite is named after; `allowed` who
/// accepted its UNKNOWN outcomes.
pub fn suite(
    db: &Database,
    docs: &[SourceText],
    shown: &[SourceText],
    findings: &[Finding],
    allowed: Option<AllowedBy>,
) -> Suite {
    let s = Summary::of(findings);
    let name: Vec<&str> = shown.iter().map(|d| d.path(db).as_str()).collect();
    let name = name.join(", ");
    let failures = findings.iter().filter(|f| outcome::mark(f.outcome, allowed) == Some(Mark::Error)).count();
    let mut xml = String::new();
    let _ = writeln!(
        xml,
        "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{failures}\" errors=\"0\" skipped=\"{}\">",
        escape(&name),
        findings.len(),
        s.fail + s.unknown + s.not_applicable - failures
    );
    for f in findings {
        let case = format!("{} {}", f.rule, f.subject);
        let at = location(db, docs, f).map(|l| format!("{l}: ")).unwrap_or_default();
        let _ = write!(xml, "    <testcase name=\"{}\" classname=\"{}\"", escape(&case), escape(&f.rule));
        if f.outcome == Outcome::Pass {
            xml.push_str("/>\n");
            continue;
        }
        let kind = match f.outcome {
            Outcome::Fail => "FAIL",
            Outcome::Unknown => "UNKNOWN",
            _ => "NOT APPLICABLE",
        };
        let reason = if f.message.is_empty() { kind.to_lowercase() } else { f.message.clone() };
        let (element, title) = match (outcome::mark(f.outcome, allowed), f.outcome) {
            (Some(Mark::Error), Outcome::Fail) => ("failure", f.message.clone()),
            (Some(Mark::Error), _) => ("failure", format!("{kind}: {reason}")),
            (Some(Mark::Warning), _) => {
                ("skipped", format!("{kind} (allowed by {}): {reason}", allowed.map_or("", AllowedBy::describe)))
            }
            (None, _) => ("skipped", format!("{kind}: {reason}")),
        };
        let _ = writeln!(
            xml,
            ">\n      <{element} type=\"{kind}\" message=\"{}\">{}</{element}>\n    </testcase>",
            escape(&title),
            escape(&format!("{at}{reason}"))
        );
    }
    xml.push_str("  </testsuite>\n");
    Suite { xml, tests: findings.len(), failures }
}

/// The whole document: every suite in one `<testsuites>`.
pub fn document(suites: &[Suite]) -> String {
    let tests: usize = suites.iter().map(|s| s.tests).sum();
    let failures: usize = suites.iter().map(|s| s.failures).sum();
    let mut out = format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"grail\" tests=\"{tests}\" failures=\"{failures}\" errors=\"0\">\n"
    );
    for s in suites {
        out.push_str(&s.xml);
    }
    out.push_str("</testsuites>\n");
    out
}

/// `file:line:column` of a finding, or the one document's path.
fn location(db: &Database, docs: &[SourceText], f: &Finding) -> Option<String> {
    match f.location.and_then(|(d, s)| Some((docs.get(d as usize)?, s))) {
        Some((doc, span)) => {
            let text = doc.text(db);
            let (line, column) = LineIndex::new(text).line_col(text, span.start);
            Some(format!("{}:{line}:{column}", doc.path(db)))
        }
        None => match docs {
            [only] => Some(only.path(db).clone()),
            _ => None,
        },
    }
}

/// Text for an XML attribute or element: the five special characters as
/// entities, and each character XML 1.0 cannot carry at all (C0 controls
/// other than tab, line feed and carriage return) as U+FFFD.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\n' => out.push_str("&#10;"),
            '\t' | '\r' => {
                let _ = write!(out, "&#{};", c as u32);
            }
            c if (c as u32) < 0x20 || c == '\u{FFFE}' || c == '\u{FFFF}' => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::escape;

    #[test]
    fn text_is_escaped_for_xml() {
        assert_eq!(escape("a<b & \"c\" 'd'>"), "a&lt;b &amp; &quot;c&quot; &apos;d&apos;&gt;");
        assert_eq!(escape("line\nnext\u{1}"), "line&#10;next\u{FFFD}");
    }
}
