//! `--format github`: GitHub Actions workflow commands. Each FAIL and each
//! UNKNOWN is an `::error`, as both fail the check (src/outcome.rs); an
//! UNKNOWN the caller allowed is a `::warning`. Each has the document's file, line and
//! column, the rule id as the title, and the message; the runner shows them
//! as annotations on the pull request's diff. A closing line gives the
//! counts, as the human report does. Values are escaped as the runner reads
//! them: in the message `%`, CR and LF; in properties also `:` and `,`.

use std::fmt::Write as _;

use grail_engine::{Database, Finding, LineIndex, Outcome, PolicySet, SourceText};

use crate::outcome::{self, AllowedBy, Mark};
use crate::render::{declared_at, policy_position};

/// The workflow commands of one deployment; `shipped` says which of the
/// policy's files are the shipped library's; `allowed` who accepted the
/// UNKNOWN outcomes.
pub fn annotations(
    db: &Database,
    set: PolicySet,
    shipped: &[bool],
    docs: &[SourceText],
    shown: &[SourceText],
    findings: &[Finding],
    allowed: Option<AllowedBy>,
) -> String {
    let mut out = String::new();
    for f in findings {
        let Some(mark) = outcome::mark(f.outcome, allowed) else { continue };
        let command = match mark {
            Mark::Error => "error",
            Mark::Warning => "warning",
        };
        let mut properties = Vec::new();
        match f.location.and_then(|(d, s)| Some((docs.get(d as usize)?, s))) {
            Some((doc, span)) => {
                let text = doc.text(db);
                let index = LineIndex::new(text);
                let (line, column) = index.line_col(text, span.start);
                let (end_line, end_column) = index.line_col(text, span.end.max(span.start));
                properties.push(format!("file={}", property(doc.path(db))));
                properties.push(format!("line={line}"));
                properties.push(format!("col={column}"));
                properties.push(format!("endLine={end_line}"));
                if end_line == line {
                    properties.push(format!("endColumn={end_column}"));
                }
            }
            None => {
                if let [only] = docs {
                    properties.push(format!("file={}", property(only.path(db))));
                }
            }
        }
        let outcome = if f.outcome == Outcome::Fail { "FAIL" } else { "UNKNOWN" };
        properties.push(format!("title={}", property(&format!("{outcome} {}", f.rule))));
        let mut message = format!("{}: {}", f.subject, f.message);
        if let Some(loc) = f.policy
            && let Some(at) = policy_position(db, set, loc)
        {
            let library = shipped.get(loc.file as usize).copied().unwrap_or(false);
            let _ = write!(message, "\n({})", declared_at(&f.rule, (&at.0, at.1, at.2), library));
        }
        let _ = writeln!(out, "::{command} {}::{}", properties.join(","), data(&message));
    }
    let files: Vec<&str> = shown.iter().map(|d| d.path(db).as_str()).collect();
    out.push_str(&crate::render::summary_line(&files, findings, allowed));
    out
}

/// A command's message, escaped as the runner unescapes it.
pub fn data(text: &str) -> String {
    text.replace('%', "%25").replace('\r', "%0D").replace('\n', "%0A")
}

/// A command property's value, escaped as the runner unescapes it.
pub fn property(text: &str) -> String {
    data(text).replace(':', "%3A").replace(',', "%2C")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_escaped_as_the_runner_reads_them() {
        assert_eq!(data("50% a\nb\r"), "50%25 a%0Ab%0D");
        assert_eq!(property("a:b,c%"), "a%3Ab%2Cc%25");
    }
}
