//! What an outcome means for the command's exit status, and how every
//! format of `grail check` marks it: the one place that decides both.
//!
//! FAIL and UNKNOWN (missing evidence) fail the check: exit 1, an error in
//! every format (SARIF level `error`, a JUnit `<failure>`, a GitHub
//! `::error`, an error in the human report). An UNKNOWN the caller accepted
//! (`--allow-unknown`, or `allow_unknown` in a deployment of `grail.toml`)
//! does not fail it, and every format says so: a warning, a JUnit
//! `<skipped>`, and the report names who allowed it. PASS and NOT APPLICABLE
//! are never marked. The editor is not CI: the language server marks every
//! UNKNOWN a warning (lsp/src/convert.rs).

use grail_engine::Outcome;

/// Who accepted UNKNOWN outcomes for a check.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AllowedBy {
    /// `--allow-unknown`.
    Flag,
    /// `allow_unknown = true` in the deployment's table of `grail.toml`.
    Workspace,
}

impl AllowedBy {
    /// The JSON and SARIF value: `flag` or `workspace`, as a layer's `bound` says it.
    pub fn as_str(self) -> &'static str {
        match self {
            AllowedBy::Flag => "flag",
            AllowedBy::Workspace => "workspace",
        }
    }

    /// For people: what allowed it.
    pub fn describe(self) -> &'static str {
        match self {
            AllowedBy::Flag => "`--allow-unknown`",
            AllowedBy::Workspace => "`allow_unknown` in grail.toml",
        }
    }

    /// The allowance of a command: the flag, or else the workspace file's key.
    pub fn of(flag: bool, workspace: bool) -> Option<AllowedBy> {
        if flag {
            Some(AllowedBy::Flag)
        } else if workspace {
            Some(AllowedBy::Workspace)
        } else {
            None
        }
    }
}

/// How a finding is marked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mark {
    /// It fails the check.
    Error,
    /// It is reported and does not fail the check (an allowed UNKNOWN).
    Warning,
}

/// How every format of `grail check` marks an outcome; `None` for one that
/// is not a finding (PASS, NOT APPLICABLE).
pub fn mark(outcome: Outcome, allowed: Option<AllowedBy>) -> Option<Mark> {
    match outcome {
        Outcome::Fail => Some(Mark::Error),
        Outcome::Unknown if allowed.is_some() => Some(Mark::Warning),
        Outcome::Unknown => Some(Mark::Error),
        Outcome::Pass | Outcome::NotApplicable => None,
    }
}

/// Whether a deployment whose worst outcome is `verdict` fails the check (exit 1).
pub fn fails(verdict: Outcome, allowed: Option<AllowedBy>) -> bool {
    mark(verdict, allowed) == Some(Mark::Error)
}

/// The verdict word of a report (`fail`, `unknown`, `pass`).
pub fn verdict_word(verdict: Outcome) -> &'static str {
    match verdict {
        Outcome::Fail => "fail",
        Outcome::Unknown => "unknown",
        _ => "pass",
    }
}

/// The closing words of a human verdict: `unknown` alone, or with who allowed it.
pub fn verdict_text(verdict: Outcome, allowed: Option<AllowedBy>) -> String {
    match (verdict, allowed) {
        (Outcome::Unknown, Some(by)) => format!("unknown, allowed by {}", by.describe()),
        _ => verdict_word(verdict).to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fail_and_unknown_fail_the_check_unless_unknown_is_allowed() {
        for allowed in [None, Some(AllowedBy::Flag), Some(AllowedBy::Workspace)] {
            assert_eq!(mark(Outcome::Fail, allowed), Some(Mark::Error));
            assert!(fails(Outcome::Fail, allowed));
            assert_eq!(mark(Outcome::Pass, allowed), None);
            assert_eq!(mark(Outcome::NotApplicable, allowed), None);
            assert!(!fails(Outcome::Pass, allowed));
            assert!(!fails(Outcome::NotApplicable, allowed));
        }
        assert_eq!(mark(Outcome::Unknown, None), Some(Mark::Error));
        assert!(fails(Outcome::Unknown, None));
        assert_eq!(mark(Outcome::Unknown, Some(AllowedBy::Flag)), Some(Mark::Warning));
        assert!(!fails(Outcome::Unknown, Some(AllowedBy::Workspace)));
    }

    #[test]
    fn the_flag_wins_over_the_workspace_file() {
        assert_eq!(AllowedBy::of(true, true), Some(AllowedBy::Flag));
        assert_eq!(AllowedBy::of(false, true), Some(AllowedBy::Workspace));
        assert_eq!(AllowedBy::of(false, false), None);
        assert_eq!(verdict_text(Outcome::Unknown, None), "unknown");
        assert_eq!(verdict_text(Outcome::Unknown, Some(AllowedBy::Flag)), "unknown, allowed by `--allow-unknown`");
        assert_eq!(verdict_text(Outcome::Pass, Some(AllowedBy::Flag)), "pass");
    }
}
