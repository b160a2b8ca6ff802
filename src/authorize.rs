//! `grail authorize`: one admission question answered locally, with the
//! reason, exactly as the Cedar that `grail compile --target cedar` writes
//! for the same deployment would answer it:
//! - a deployment that `grail check` fails (a FAIL, or an UNKNOWN without
//!   `--allow-unknown`) compiles to no policy: DENY; with `--allow-unknown`
//!   the answer says the UNKNOWNs were allowed, and what an answer could not
//!   establish is still refused (fail-closed);
//! - ALLOW when some answer the policy allows names the request's action and
//!   every attribute of that answer has the request's value (Cedar: one
//!   `permit` per allowed answer, each `has` and `==` every attribute);
//! - anything else is DENY: a missing attribute, a value no answer names, a
//!   refused answer (with the values it read and where each came from).
//!
//! An action no question asks, or an attribute no question of the action
//! declares, cannot be asked (exit 2), as Cedar's schema refuses the request.

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::process::ExitCode;

use grail_engine::db::{check_deployment, decide_deployment, explain_deployment};
use grail_engine::diagnostic::Provenance;
use grail_engine::layers::DocLayer;
use grail_engine::question::Decision;
use grail_engine::{Database, LineIndex, Outcome, SourceText, Summary};
use grail_lang::ast::RequestSide;
use serde_json::json;

use crate::outcome::{self, AllowedBy};
use crate::{AuthorizeArgs, Fatal, Format};

fn side_name(side: RequestSide) -> &'static str {
    match side {
        RequestSide::Principal => "principal",
        RequestSide::Resource => "resource",
    }
}

fn parse_pairs(side: RequestSide, pairs: &[String]) -> Result<Vec<(RequestSide, String, String)>, Fatal> {
    let mut out: Vec<(RequestSide, String, String)> = Vec::new();
    for p in pairs {
        let Some((attr, value)) = p.split_once('=') else {
            return Err(Fatal(format!(
                "`--{} {p}` is not an attribute and its value; write `ATTRIBUTE=VALUE`, e.g. `work_class=C2`",
                side_name(side)
            )));
        };
        if out.iter().any(|(_, a, _)| a == attr) {
            return Err(Fatal(format!(
                "`{}.{attr}` is given twice; a request has one value per attribute",
                side_name(side)
            )));
        }
        out.push((side, attr.to_string(), value.to_string()));
    }
    Ok(out)
}

pub fn run(args: &AuthorizeArgs) -> Result<ExitCode, Fatal> {
    let db = Database::default();
    let from_file = args.files.is_empty() && args.layers.is_empty();
    let setup = crate::workspace::Setup::resolve(&args.policy, from_file)?;
    let (set, compiled) = setup.load(&db)?;
    let questions: Vec<&grail_engine::hir::QuestionDef> =
        compiled.policy.questions.iter().filter(|q| q.action == args.action).collect();
    if questions.is_empty() {
        let actions: BTreeSet<&str> = compiled.policy.questions.iter().map(|q| q.action.as_str()).collect();
        let near = grail_engine::suggest::did_you_mean(&args.action, actions.iter().copied());
        let hint = near.map(|n| format!("; did you mean `{n}`?")).unwrap_or_default();
        return Err(Fatal(format!(
            "the policy asks no question with action `{}`{hint} (its actions: {})",
            args.action,
            actions.iter().map(|a| format!("`{a}`")).collect::<Vec<_>>().join(", ")
        )));
    }
    let mut request = parse_pairs(RequestSide::Principal, &args.principal)?;
    request.extend(parse_pairs(RequestSide::Resource, &args.resource)?);
    for (side, attr, _) in &request {
        // Cedar's schema declares every attribute of every question on its
        // entity type: a request may carry one that this action ignores.
        let declared: BTreeSet<String> = compiled
            .policy
            .questions
            .iter()
            .flat_map(|q| q.body.vars.iter())
            .filter(|v| v.side == *side)
            .map(|v| v.attribute.clone())
            .collect();
        if !declared.contains(attr) {
            return Err(Fatal(format!(
                "`{}.{attr}` is not an attribute of action `{}`: its {} attributes are {}",
                side_name(*side),
                args.action,
                side_name(*side),
                if declared.is_empty() {
                    "none".into()
                } else {
                    declared.iter().map(|a| format!("`{a}`")).collect::<Vec<_>>().join(", ")
                }
            )));
        }
    }

    let clock = crate::Clock::of(args.now);
    let (_, deployment, allow_file) = setup.asked_deployment(
        &db,
        set,
        compiled,
        from_file,
        crate::workspace::Asked {
            command: "authorize",
            deployment: args.deployment.as_deref(),
            files: &args.files,
            layers: &args.layers,
            binding: &args.binding,
            attach: &args.attach,
            invocation: &args.invocation,
            evidence: args.evidence.as_ref(),
            now: clock.nanos,
        },
    )?;
    let report = check_deployment(&db, set, deployment);
    let summary = Summary::of(&report.findings);
    let verdict = summary.verdict();

    let has = |d: &Decision| {
        d.action == args.action
            && d.attributes.iter().all(|(s, a, v)| request.iter().any(|(rs, ra, rv)| rs == s && ra == a && rv == v))
    };
    let mut reasons: Vec<String> = Vec::new();
    let mut permitted_by: Vec<String> = Vec::new();
    let allowed = AllowedBy::of(args.allow_unknown, allow_file);
    // Who allowed the check's UNKNOWNs, when it has some and they were.
    let unknown_allowed = allowed.filter(|_| summary.unknown > 0 && verdict == Outcome::Unknown);
    if outcome::fails(verdict, allowed) {
        let mut rules: Vec<&str> =
            report.findings.iter().filter(|f| f.outcome == verdict).map(|f| f.rule.as_str()).collect();
        rules.dedup();
        reasons.push(format!(
            "the deployment does not pass `grail check` ({} failed, {} unknown: {}): `grail compile --target cedar` refuses it, so no permit exists{}",
            summary.fail,
            summary.unknown,
            rules.iter().map(|r| format!("`{r}`")).collect::<Vec<_>>().join(", "),
            if verdict == Outcome::Unknown { " (`--allow-unknown` accepts UNKNOWN)" } else { "" }
        ));
    } else {
        let decisions = decide_deployment(&db, set, deployment);
        for d in decisions.iter().filter(|d| d.allowed && has(d)) {
            if !permitted_by.contains(&d.question) {
                permitted_by.push(d.question.clone());
            }
        }
        if permitted_by.is_empty() {
            let explained = explain_deployment(&db, set, deployment);
            for q in &questions {
                reasons.extend(why_not(
                    &db,
                    &explained.documents,
                    &explained.explanation.layers,
                    q,
                    decisions,
                    &explained.explanation.answers,
                    &request,
                ));
            }
        }
    }
    let allowed = !permitted_by.is_empty();
    let tuple = request.iter().map(|(s, a, v)| format!("{}.{a}={v}", side_name(*s))).collect::<Vec<_>>().join(" ");
    let text = match args.format {
        Format::Human => {
            let mut out = format!(
                "{} {}{}{tuple}\n",
                if allowed { "ALLOW" } else { "DENY" },
                args.action,
                if tuple.is_empty() { "" } else { " " }
            );
            for q in &permitted_by {
                let docs = questions.iter().find(|x| x.id == *q).map(|x| x.docs.join(" ")).unwrap_or_default();
                let _ =
                    writeln!(out, "  permitted by `{q}`: {}", docs.split_whitespace().collect::<Vec<_>>().join(" "));
            }
            for r in &reasons {
                let _ = writeln!(out, "  {r}");
            }
            if let Some(by) = unknown_allowed {
                let _ = writeln!(
                    out,
                    "  the check's {} UNKNOWN outcome(s) are allowed by {} ({})",
                    summary.unknown,
                    by.describe(),
                    crate::compile::unknown_rules(&report.findings)
                );
            }
            if report.now_read {
                out.push_str(&clock.line());
            }
            out
        }
        Format::Json => {
            let attrs = |side: RequestSide| {
                request
                    .iter()
                    .filter(|(s, _, _)| *s == side)
                    .map(|(_, a, v)| (a.clone(), json!(v)))
                    .collect::<serde_json::Map<_, _>>()
            };
            let mut value = json!({
                "decision": if allowed { "allow" } else { "deny" },
                "action": args.action,
                "principal": attrs(RequestSide::Principal),
                "resource": attrs(RequestSide::Resource),
                "permitted_by": permitted_by,
                "reasons": reasons,
            });
            if report.now_read {
                value["now"] = clock.json();
            }
            if let Some(by) = unknown_allowed {
                value["unknown_allowed"] = json!(by.as_str());
            }
            format!("{}\n", serde_json::to_string_pretty(&value).unwrap_or_default())
        }
    };
    crate::write_stdout(&mut std::io::stdout().lock(), text.as_bytes())?;
    Ok(if allowed { ExitCode::SUCCESS } else { ExitCode::from(1) })
}

/// Why question `q` permits nothing for the request.
fn why_not(
    db: &Database,
    documents: &[SourceText],
    layers: &[DocLayer],
    q: &grail_engine::hir::QuestionDef,
    decisions: &[Decision],
    traced: &[(Decision, Vec<grail_engine::diagnostic::Read>)],
    request: &[(RequestSide, String, String)],
) -> Vec<String> {
    let mut out = Vec::new();
    let docs = q.docs.join(" ").split_whitespace().collect::<Vec<_>>().join(" ");
    out.push(format!("`{}`: {docs}", q.id));
    let missing: Vec<String> = q
        .body
        .vars
        .iter()
        .filter(|v| !request.iter().any(|(s, a, _)| *s == v.side && *a == v.attribute))
        .map(|v| format!("`{}.{}`", side_name(v.side), v.attribute))
        .collect();
    if !missing.is_empty() {
        out.push(format!("    the request has no {}: it matches no permit", missing.join(" and no ")));
        return out;
    }
    let mine: Vec<&Decision> = decisions.iter().filter(|d| d.question == q.id).collect();
    for v in &q.body.vars {
        let Some((_, _, value)) = request.iter().find(|(s, a, _)| *s == v.side && *a == v.attribute) else { continue };
        let known: BTreeSet<&str> = mine
            .iter()
            .flat_map(|d| d.attributes.iter())
            .filter(|(s, a, _)| *s == v.side && *a == v.attribute)
            .map(|(_, _, x)| x.as_str())
            .collect();
        if !known.contains(value.as_str()) {
            out.push(format!(
                "    `{value}` is not a value `{}` answers for `{}.{}` ({}): it matches no permit",
                q.id,
                side_name(v.side),
                v.attribute,
                if known.is_empty() {
                    "it answers none".into()
                } else {
                    known.iter().map(|k| format!("`{k}`")).collect::<Vec<_>>().join(", ")
                }
            ));
        }
    }
    let exact = |d: &Decision| {
        d.question == q.id
            && d.attributes.iter().all(|(s, a, v)| request.iter().any(|(rs, ra, rv)| rs == s && ra == a && rv == v))
    };
    for (_, reads) in traced.iter().filter(|(d, _)| !d.allowed && exact(d)) {
        out.push("    refused, having read:".into());
        for r in reads.iter().filter(|r| !(r.value.starts_with('{') || r.value.starts_with('['))) {
            out.push(format!("      {} = {}  ({})", r.expr, r.value, provenance(db, documents, layers, &r.from)));
        }
    }
    if out.len() == 1 && mine.iter().any(|d| !d.allowed && exact(d)) {
        out.push("    refused".into());
    }
    out
}

fn provenance(db: &Database, documents: &[SourceText], layers: &[DocLayer], p: &Provenance) -> String {
    match p {
        Provenance::Document(doc, span) => match documents.get(*doc as usize) {
            Some(d) => {
                let text = d.text(db);
                let (l, c) = LineIndex::new(text).line_col(text, span.start);
                let layer = layers
                    .iter()
                    .find(|l| l.doc == *doc)
                    .map(|l| format!(" (layer {}, {})", l.layer, l.by.short()))
                    .unwrap_or_default();
                format!("{}:{l}:{c}{layer}", d.path(db))
            }
            None => "a document".into(),
        },
        Provenance::Policy(_) => "the policy".into(),
        Provenance::Computed => "computed".into(),
        Provenance::Missing(what) => format!("absent: {what}"),
    }
}
