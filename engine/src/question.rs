//! Admission questions: for every tuple of a question's variables, whether its
//! action is allowed, given a deployment's documents and the rules' findings.
//! The answers are what `grail compile --target cedar` hands to Cedar.

use grail_lang::ast::RequestSide;

use crate::check::Run;
use crate::diagnostic::Read;
use crate::hir::{Policy, QuestionDef};
use crate::value::{Truth, Val};

/// One answer: a question, the request's attributes, and whether it is allowed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Decision {
    pub question: String,
    pub action: String,
    /// `(side, attribute, value)` for every variable of the question.
    pub attributes: Vec<(RequestSide, String, String)>,
    /// Allowed only when `allow` is true: false and unknown both deny.
    pub allowed: bool,
}

/// Every answer of every question, in declaration and domain order.
pub fn decide(policy: &Policy, run: &Run) -> Vec<Decision> {
    answer(policy, run, false).into_iter().map(|(d, _)| d).collect()
}

/// The answers of the questions whose documents were all checked, each with
/// the values its `allow` read (for explanations).
pub fn decide_traced(policy: &Policy, run: &Run) -> Vec<(Decision, Vec<Read>)> {
    answer(policy, run, true)
}

fn answer(policy: &Policy, run: &Run, trace: bool) -> Vec<(Decision, Vec<Read>)> {
    let mut out = Vec::new();
    for q in &policy.questions {
        // Explanations answer the questions about the documents checked, and only those: a
        // question is about them when a kind it reads is among them (the histories, or the
        // task states that attach them).
        let about = q.reads.iter().any(|k| run.all.get(*k as usize).is_some_and(|d| !d.is_empty()));
        if trace && (q.reads.is_empty() || !about) {
            continue;
        }
        let mut ev = crate::eval::Evaluator {
            policy,
            single: &run.single,
            all: &run.all,
            layers: &run.layers,
            prior: &run.findings,
            env: vec![Val::unknown(); q.slots as usize],
            reads: trace.then(Vec::new),
            fuel: crate::eval::MAX_STEPS_PER_RULE,
            exhausted: false,
            now: run.now,
            now_read: false,
            given: &run.given,
            params: &run.params,
            calls: None,
        };
        tuples(q, 0, &mut ev, &mut Vec::new(), &mut out);
    }
    out
}

fn tuples(
    q: &QuestionDef,
    i: usize,
    ev: &mut crate::eval::Evaluator<'_>,
    attrs: &mut Vec<(RequestSide, String, String)>,
    out: &mut Vec<(Decision, Vec<Read>)>,
) {
    let Some(var) = q.body.vars.get(i) else {
        if let Some(reads) = ev.reads.as_mut() {
            reads.clear();
        }
        let allowed = ev.eval(&q.body.allow).as_truth() == Truth::True;
        let reads = crate::eval::last_reads(ev.reads.as_mut().map(std::mem::take).unwrap_or_default());
        let decision =
            Decision { question: q.id.clone(), action: q.action.clone(), attributes: attrs.clone(), allowed };
        out.push((decision, reads));
        return;
    };
    let domain = ev.eval(&var.domain);
    // An unknown domain has no tuples: nothing is allowed (fail-closed).
    let Some(elements) = ev.elements_of(&domain, &var.pattern) else { return };
    for (n, values) in elements.into_iter().enumerate() {
        let key = values.first().and_then(|v| v.label(ev.policy)).unwrap_or_else(|| n.to_string());
        attrs.push((var.side, var.attribute.clone(), key));
        ev.bind_pattern(&var.pattern, values);
        tuples(q, i + 1, ev, attrs, out);
        attrs.pop();
    }
}
