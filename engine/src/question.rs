//! Admission questions: for every tuple of a question's variables, whether its
//! action is allowed, given a deployment's documents and the rules' findings.
//! The answers are what `grail compile --target cedar` hands to Cedar.

use grail_lang::ast::RequestSide;

use crate::check::Run;
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
    let mut out = Vec::new();
    for q in &policy.questions {
        let mut ev = crate::eval::Evaluator {
            policy,
            single: &run.single,
            all: &run.all,
            prior: &run.findings,
            env: vec![Val::unknown(); q.slots as usize],
            reads: None,
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
    out: &mut Vec<Decision>,
) {
    let Some(var) = q.vars.get(i) else {
        let allowed = ev.eval(&q.allow).as_truth() == Truth::True;
        out.push(Decision { question: q.id.clone(), action: q.action.clone(), attributes: attrs.clone(), allowed });
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
