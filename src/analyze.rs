//! `grail analyze`: witnesses, conflicts, dead rules, fixture pairs and lints.

use std::process::ExitCode;

use camino::Utf8Path;
use grail_engine::analyze::{Analysis, DocText, Member, RuleReport, Status};
use grail_engine::db::analyze_policy;
use grail_engine::hir::Loc;
use grail_engine::{Database, PolicySet, Severity};
use serde_json::{Value, json};

use crate::{AnalyzeArgs, Fatal, Format, render};

pub fn run(args: &AnalyzeArgs) -> Result<ExitCode, Fatal> {
    let db = Database::default();
    let setup = crate::workspace::Setup::resolve(&args.policy, false)?;
    let (set, _) = setup.load(&db)?;
    let Some(analysis) = analyze_policy(&db, set) else {
        return Err(Fatal("the policy does not compile".into()));
    };
    if let Some(dir) = &args.emit_fixtures {
        emit(dir, analysis)?;
    }
    match args.format {
        Format::Human => print!("{}", human(&db, set, analysis)),
        Format::Json => println!("{}", serde_json::to_string_pretty(&to_json(&db, set, analysis)).unwrap_or_default()),
    }
    Ok(if analysis.failed() { ExitCode::from(1) } else { ExitCode::SUCCESS })
}

/// Writes each rule's fixture pair: `DIR/<rule>/fail.<ext>` and `pass.<ext>`,
/// or folders `fail/` and `pass/` when a deployment has several documents,
/// binds one to a layer (`layers.bind`) or names files by `ref` (written with
/// the text the analysis read them as).
fn emit(dir: &Utf8Path, analysis: &Analysis) -> Result<(), Fatal> {
    let write = |path: &Utf8Path, text: &str| -> Result<(), Fatal> {
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| Fatal(format!("cannot create `{parent}`: {e}")))?;
        }
        std::fs::write(path, text).map_err(|e| Fatal(format!("cannot write `{path}`: {e}")))
    };
    let mut left_out = Vec::new();
    for r in &analysis.rules {
        let Some(f) = &r.fixture else { continue };
        // Only pairs `grail test` holds: confirmed by the checker, one line apart.
        if let Some(problem) = &f.problem {
            left_out.push(format!("{}: {problem}", r.id));
            continue;
        }
        let lines = f.lines_apart();
        if lines > 1 {
            left_out.push(format!("{}: the closest twins found are {lines} lines apart", r.id));
            continue;
        }
        for (name, docs, attached) in [("fail", &f.fail, &f.attached.0), ("pass", &f.pass, &f.attached.1)] {
            let bound: Vec<String> =
                docs.iter().filter_map(|d| Some(format!("{}={}\n", d.layer.as_ref()?, d.path))).collect();
            match docs.as_slice() {
                [one] if bound.is_empty() && attached.is_empty() => {
                    let ext = one.path.rsplit_once('.').map_or("yaml", |(_, e)| e);
                    write(&dir.join(&r.id).join(format!("{name}.{ext}")), &one.text)?;
                }
                many => {
                    let folder = dir.join(&r.id).join(name);
                    for d in many {
                        write(&folder.join(&d.path), &d.text)?;
                    }
                    for path in attached {
                        write(&folder.join(path), grail_engine::analyze::ATTACHED)?;
                    }
                    if !bound.is_empty() {
                        write(&folder.join(grail_engine::testing::LAYERS_FILE), &bound.concat())?;
                    }
                }
            }
        }
    }
    if !left_out.is_empty() {
        eprintln!("not written ({} rule(s); write their pairs by hand):", left_out.len());
        for l in left_out {
            eprintln!("  {l}");
        }
    }
    Ok(())
}

fn position(db: &Database, set: PolicySet, loc: Loc) -> String {
    render::policy_position(db, set, loc).map(|(p, l, c)| format!("{p}:{l}:{c}")).unwrap_or_default()
}

fn status_word(r: &RuleReport) -> &'static str {
    match &r.status {
        Status::Fires if r.fixture.as_ref().is_some_and(|f| f.problem.is_none()) => "fires",
        Status::Fires => "fires (no confirmed twin)",
        Status::Dead(_) => "DEAD",
        Status::NotShown(_) => "not shown within the bounds",
        Status::Unconfirmed(_) => "unconfirmed",
    }
}

fn indent(text: &str, by: &str) -> String {
    text.lines().map(|l| format!("{by}{l}\n")).collect()
}

fn members(ms: &[Member]) -> String {
    ms.iter().map(|m| format!("{} `{}`", m.kind.as_str(), m.id)).collect::<Vec<_>>().join(", ")
}

fn human(db: &Database, set: PolicySet, a: &Analysis) -> String {
    let mut out = String::new();
    let b = &a.bounds;
    out.push_str(&format!(
        "bounds: one document per kind (a layered kind at its most trusted layer); lists of at most {} entries ({} inside a list entry); maps keyed by a string of at most {} entries; string fields over the literals they meet and {} fresh names\n\n",
        b.list, b.inner_list, b.map, b.fresh
    ));
    out.push_str("subjects\n");
    for s in &a.subjects {
        match (&s.witness, s.conflict) {
            (Some(docs), _) => {
                let verdict = match &s.problem {
                    None => "witness confirmed by the checker".to_string(),
                    Some(p) => format!("witness NOT confirmed: {p}"),
                };
                let n = s.applies.len();
                let rules = if n == 1 { "1 rule applies".to_string() } else { format!("{n} rules apply") };
                out.push_str(&format!("  {}: {verdict}; {rules}\n", s.name));
                for d in docs {
                    out.push_str(&format!("    --- {}\n", d.path));
                    out.push_str(&indent(&d.text, "    "));
                }
            }
            (None, Some(c)) => out.push_str(&format!("  {}: UNSATISFIABLE (conflict {})\n", s.name, c + 1)),
            (None, None) => {
                out.push_str(&format!("  {}: no witness: {}\n", s.name, s.problem.clone().unwrap_or_default()))
            }
        }
    }
    out.push_str("\nrules\n");
    let width = a.rules.iter().map(|r| r.id.len()).max().unwrap_or(0);
    for r in &a.rules {
        let mut line = format!("  {:<width$}  {}", r.id, status_word(r));
        if let Some(f) = &r.fixture {
            let lines = f.lines_apart();
            line.push_str(&format!(
                "; twins {} atom{} ({lines} line{}) apart",
                f.distance,
                if f.distance == 1 { "" } else { "s" },
                if lines == 1 { "" } else { "s" }
            ));
            if let Some(p) = &f.problem {
                line.push_str(&format!(" ({p})"));
            }
        }
        if !r.fires_with.is_empty() {
            line.push_str(&format!("; fires with {}", r.fires_with.join(", ")));
        }
        match &r.status {
            Status::Dead(ms) | Status::NotShown(ms) if !ms.is_empty() => {
                line.push_str(&format!("; prevented by {}", members(ms)))
            }
            Status::Unconfirmed(why) => line.push_str(&format!("; {why}")),
            _ => {}
        }
        if !r.approximate.is_empty() {
            line.push_str(&format!("; approximate: {}", r.approximate.join(", ")));
        }
        if !r.pooled.is_empty() {
            line.push_str(&format!("; over the string pool: {}", r.pooled.join(", ")));
        }
        out.push_str(&line);
        out.push('\n');
    }
    if !a.structural.is_empty() {
        let ids: Vec<&str> = a.structural.iter().map(|(id, _)| id.as_str()).collect();
        out.push_str(&format!("\nnot analysed (structural checks, judged on a document's text): {}\n", ids.join(", ")));
    }
    let diagnostics = render::policy_diagnostics(db, set, &a.diagnostics);
    if !diagnostics.is_empty() {
        out.push('\n');
        out.push_str(&diagnostics);
    }
    let fires = a.rules.iter().filter(|r| r.status == Status::Fires).count();
    let dead = a.rules.iter().filter(|r| matches!(r.status, Status::Dead(_))).count();
    let satisfiable = a.subjects.iter().filter(|s| s.witness.is_some()).count();
    let warnings = a.diagnostics.iter().filter(|d| d.severity == Severity::Warning).count();
    out.push_str(&format!(
        "\n{satisfiable} of {} subjects satisfiable, {} conflict{}, {fires} of {} rules fire, {dead} dead, {warnings} warning{} ({} variables, {} clauses, {} solver calls)\n",
        a.subjects.len(),
        a.conflicts.len(),
        if a.conflicts.len() == 1 { "" } else { "s" },
        a.rules.len(),
        if warnings == 1 { "" } else { "s" },
        a.stats.variables,
        a.stats.clauses,
        a.stats.solves
    ));
    let _ = position;
    out
}

fn docs_json(docs: &[DocText]) -> Value {
    Value::Array(docs.iter().map(|d| json!({"path": d.path, "text": d.text, "layer": d.layer})).collect())
}

fn members_json(db: &Database, set: PolicySet, ms: &[Member]) -> Value {
    Value::Array(
        ms.iter()
            .map(|m| json!({"id": m.id, "kind": m.kind.as_str(), "policy": position(db, set, m.loc), "note": m.note}))
            .collect(),
    )
}

fn to_json(db: &Database, set: PolicySet, a: &Analysis) -> Value {
    let subjects: Vec<Value> = a
        .subjects
        .iter()
        .map(|s| {
            json!({
                "subject": s.name,
                "satisfiable": s.witness.is_some(),
                "confirmed": s.witness.is_some() && s.problem.is_none(),
                "problem": s.problem,
                "applies": s.applies,
                "witness": s.witness.as_deref().map(docs_json),
                "conflict": s.conflict,
            })
        })
        .collect();
    let conflicts: Vec<Value> = a
        .conflicts
        .iter()
        .map(|c| json!({"subjects": c.subjects, "members": members_json(db, set, &c.members)}))
        .collect();
    let rules: Vec<Value> = a
        .rules
        .iter()
        .map(|r| {
            let (status, why) = match &r.status {
                Status::Fires => ("fires", Value::Null),
                Status::Dead(ms) => ("dead", members_json(db, set, ms)),
                Status::NotShown(ms) => ("not_shown", members_json(db, set, ms)),
                Status::Unconfirmed(w) => ("unconfirmed", json!(w)),
            };
            json!({
                "rule": r.id,
                "kind": r.kind.as_str(),
                "policy": position(db, set, r.loc),
                "status": status,
                "why": why,
                "approximate": r.approximate,
                "pooled": r.pooled,
                "fires_with": r.fires_with,
                "fixture": r.fixture.as_ref().map(|f| json!({
                    "distance": f.distance,
                    "lines": f.lines_apart(),
                    "confirmed": f.problem.is_none(),
                    "problem": f.problem,
                    "fail": docs_json(&f.fail),
                    "pass": docs_json(&f.pass),
                })),
            })
        })
        .collect();
    let diagnostics: Vec<Value> = a
        .diagnostics
        .iter()
        .map(|d| {
            json!({
                "code": d.code,
                "severity": if d.severity == Severity::Error { "error" } else { "warning" },
                "message": d.message,
                "policy": position(db, set, d.loc),
                "labels": d.labels.iter().map(|(l, t)| json!({"label": t, "policy": position(db, set, *l)})).collect::<Vec<_>>(),
                "help": d.help,
            })
        })
        .collect();
    let b = &a.bounds;
    json!({
        "verdict": if a.failed() { "fail" } else { "pass" },
        "bounds": {"list": b.list, "inner_list": b.inner_list, "map": b.map, "fresh_names": b.fresh},
        "subjects": subjects,
        "conflicts": conflicts,
        "rules": rules,
        "structural": a.structural.iter().map(|(id, _)| id.clone()).collect::<Vec<_>>(),
        "diagnostics": diagnostics,
        "stats": {"variables": a.stats.variables, "clauses": a.stats.clauses, "solves": a.stats.solves},
    })
}
