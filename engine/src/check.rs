//! Checking one document against a compiled policy: load, select its kind,
//! conform it to its schema, evaluate every rule that reads it.

use crate::conform::{conform, select_kind};
use crate::diagnostic::{Finding, Outcome};
use crate::document::{Node, SyntaxError};
use crate::eval::{Roots, evaluate_rule};
use crate::hir::{CHECK_SYNTAX, Policy};

/// Every outcome for one document (index 0); sorted by position, then rule.
pub fn check_one(policy: &Policy, loaded: &Result<Node, SyntaxError>) -> Vec<Finding> {
    let mut findings = Vec::new();
    match loaded {
        Err(e) => {
            // The document's kind cannot be known; the first kind's syntax rule reports it.
            let check = policy.documents.first().and_then(|d| d.checks[CHECK_SYNTAX].clone());
            findings.push(Finding {
                rule: check.as_ref().map(|c| c.rule.clone()).unwrap_or_else(|| "syntax".into()),
                outcome: Outcome::Fail,
                subject: "document".into(),
                message: e.message.clone(),
                location: Some((0, e.span)),
                policy: check.map(|c| c.loc),
                labels: Vec::new(),
            });
        }
        Ok(root) => match select_kind(policy, 0, root) {
            Err(f) => findings.push(*f),
            Ok(kind) => {
                let (value, structural) = conform(policy, kind, 0, root);
                findings.extend(structural);
                let mut roots = vec![None; policy.documents.len()];
                roots[kind as usize] = Some(value);
                let roots = Roots { roots: &roots };
                for rule in &policy.rules {
                    evaluate_rule(policy, rule, &roots, &mut findings);
                }
            }
        },
    }
    findings.sort_by(|a, b| {
        let pos = |f: &Finding| f.location.map(|(d, s)| (d, s.start)).unwrap_or((u32::MAX, usize::MAX));
        pos(a).cmp(&pos(b)).then_with(|| a.rule.cmp(&b.rule)).then_with(|| a.subject.cmp(&b.subject))
    });
    findings
}
