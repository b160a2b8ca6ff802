//! `grail explain`: findings with their derivations, and the effective state.

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::process::ExitCode;

use grail_engine::db::{Compiled, explain_deployment};
use grail_engine::diagnostic::{Provenance, Read, Step};
use grail_engine::explain::{Cell, subject_mentions};
use grail_engine::layers::DocLayer;
use grail_engine::question::Decision;
use grail_engine::{Database, Finding, LineIndex, Outcome, PolicySet, SourceText, Summary};
use serde_json::{Value, json};

use crate::{ExplainArgs, Fatal, Format};

pub fn run(args: &ExplainArgs) -> Result<ExitCode, Fatal> {
    let db = Database::default();
    let from_file = args.files.is_empty() && args.layers.is_empty();
    let setup = crate::workspace::Setup::resolve(&args.policy, from_file)?;
    let (set, compiled) = setup.load(&db)?;
    if let Some(rule) = &args.rule
        && !compiled.policy.rule_ids().iter().any(|(id, _)| id == rule)
    {
        let ids: Vec<String> = compiled.policy.rule_ids().iter().map(|(id, _)| id.to_string()).collect();
        let near = grail_engine::suggest::did_you_mean(rule, ids.iter().map(String::as_str));
        let hint = near.map(|n| format!("; did you mean `{n}`?")).unwrap_or_default();
        return Err(Fatal(format!("the policy has no rule `{rule}`{hint}")));
    }
    let clock = crate::Clock::of(args.now);
    let (shown, deployment, allow_file) = setup.asked_deployment(
        &db,
        set,
        compiled,
        from_file,
        crate::workspace::Asked {
            command: "explain",
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
    let explained = explain_deployment(&db, set, deployment);
    let e = &explained.explanation;
    if let Some(class) = &args.class
        && !e.cells.iter().any(|c| c.key == *class)
    {
        let mut keys: Vec<&str> = e.cells.iter().map(|c| c.key.as_str()).collect();
        keys.sort_unstable();
        keys.dedup();
        let near = grail_engine::suggest::did_you_mean(class, keys.iter().copied());
        let hint = near.map(|n| format!("; did you mean `{n}`?")).unwrap_or_default();
        let known = keys.iter().map(|k| format!("`{k}`")).collect::<Vec<_>>().join(", ");
        return Err(Fatal(format!(
            "the policy knows no class `{class}`{hint}\nhelp: --class takes one of the keys the policy's tables have: {known}"
        )));
    }
    // The tables of the documents: each row's cells and what its `detail` lists.
    let tables: &[grail_engine::table::Table] = if args.rule.is_none() && args.class.is_none() {
        grail_engine::db::table_deployment(&db, set, deployment)
    } else {
        &[]
    };

    let wanted = |f: &Finding| {
        args.rule.as_ref().is_none_or(|r| f.rule == *r)
            && args.class.as_ref().is_none_or(|c| subject_mentions(&f.subject, c))
            && (args.verbose || args.rule.is_some() || matches!(f.outcome, Outcome::Fail | Outcome::Unknown))
    };
    let findings: Vec<&Finding> = e.findings.iter().filter(|f| wanted(f)).collect();
    let keys: BTreeSet<&str> = match &args.class {
        Some(c) => [c.as_str()].into(),
        None => e
            .cells
            .iter()
            .map(|c| c.key.as_str())
            .filter(|k| findings.iter().any(|f| subject_mentions(&f.subject, k)))
            .collect(),
    };
    let cells: Vec<&Cell> = e
        .cells
        .iter()
        .filter(|c| keys.contains(c.key.as_str()) || (keys.is_empty() && (args.verbose || set_by_document(c))))
        .collect();
    let shipped = setup.shipped(&db, set);
    let allowed = crate::outcome::AllowedBy::of(args.allow_unknown, allow_file);
    let cx =
        Cx { db: &db, set, compiled, shipped: &shipped, documents: &explained.documents, layers: &e.layers, allowed };

    let reads_now = e.now_read;
    let text = match args.format {
        Format::Human => {
            let mut text = cx.human(&shown, &e.findings, &findings, &cells, &e.answers, &keys, args.verbose);
            text.push_str(&crate::tables::explained(&db, &explained.documents, tables));
            if reads_now {
                text.push_str(&clock.line());
            }
            text
        }
        Format::Json => {
            let mut json = cx.json(&e.findings, &findings, &cells, &e.answers, &keys, args.verbose);
            if !tables.is_empty() {
                json["tables"] = crate::tables::json(&db, &explained.documents, tables);
                let verdicts = grail_engine::table::verdicts(tables);
                if !verdicts.is_empty() {
                    json["verdicts"] = serde_json::json!(verdicts);
                }
            }
            if reads_now {
                json["now"] = clock.json();
            }
            format!("{}\n", serde_json::to_string_pretty(&json).unwrap_or_default())
        }
    };
    crate::write_stdout(&mut std::io::stdout().lock(), text.as_bytes())?;
    Ok(if crate::outcome::fails(Summary::of(&e.findings).verdict(), allowed) {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// A cell some document said something about (set, or tried to).
fn set_by_document(c: &Cell) -> bool {
    matches!(c.from, Provenance::Document(..)) || !c.refused.is_empty()
}

struct Cx<'a> {
    db: &'a Database,
    set: PolicySet,
    compiled: &'a Compiled,
    /// Which of the policy's files are the shipped library's.
    shipped: &'a [bool],
    documents: &'a [SourceText],
    layers: &'a [DocLayer],
    /// Who accepted UNKNOWN outcomes (`--allow-unknown`).
    allowed: Option<crate::outcome::AllowedBy>,
}

impl Cx<'_> {
    fn position(&self, doc: u32, at: usize) -> Option<(String, usize, usize)> {
        let d = self.documents.get(doc as usize)?;
        let text = d.text(self.db);
        let (line, column) = LineIndex::new(text).line_col(text, at);
        Some((d.path(self.db).clone(), line, column))
    }

    fn policy_position(&self, loc: grail_engine::hir::Loc) -> Option<(String, usize, usize)> {
        let f = self.set.files(self.db).get(loc.file as usize)?;
        let text = f.text(self.db);
        let (line, column) = LineIndex::new(text).line_col(text, loc.span.start);
        Some((f.path(self.db).clone(), line, column))
    }

    /// Whether the policy location is in the shipped library (no file of the user's).
    fn in_library(&self, loc: grail_engine::hir::Loc) -> bool {
        self.shipped.get(loc.file as usize).copied().unwrap_or(false)
    }

    /// `file:line:col (layer security)`, `policies/x.grail:3:4 (shipped)`, `absent`;
    /// a location in the shipped library with the `grail source` that prints its line.
    fn provenance(&self, p: &Provenance) -> String {
        match p {
            Provenance::Document(doc, span) => match self.position(*doc, span.start) {
                Some((path, l, c)) => {
                    let layer = self
                        .layers
                        .iter()
                        .find(|l| l.doc == *doc)
                        .map(|l| format!(" (layer {}, {})", l.layer, l.by.short()))
                        .unwrap_or_default();
                    format!("{path}:{l}:{c}{layer}")
                }
                None => "a document".into(),
            },
            Provenance::Policy(loc) => match self.policy_position(*loc) {
                Some((path, l, c)) if self.in_library(*loc) => {
                    let name = path.rsplit('/').next().unwrap_or(&path);
                    format!("{path}:{l}:{c} (shipped; `grail source {name}:{l}`)")
                }
                Some((path, l, c)) => format!("{path}:{l}:{c} (shipped)"),
                None => "the policy".into(),
            },
            Provenance::Computed => "computed".into(),
            Provenance::Missing(what) => format!("absent: {what}"),
        }
    }

    fn rule_docs(&self, id: &str) -> String {
        self.compiled.policy.rules.iter().find(|r| r.id == id).map(|r| r.docs.join(" ")).unwrap_or_default()
    }

    #[allow(clippy::too_many_arguments)]
    fn human(
        &self,
        shown: &[SourceText],
        all: &[Finding],
        findings: &[&Finding],
        cells: &[&Cell],
        answers: &[(Decision, Vec<Read>)],
        keys: &BTreeSet<&str>,
        verbose: bool,
    ) -> String {
        let mut out = String::new();
        let s = Summary::of(all);
        let files: Vec<&str> = shown.iter().map(|d| d.path(self.db).as_str()).collect();
        let verdict = crate::outcome::verdict_text(s.verdict(), self.allowed);
        let _ = writeln!(
            out,
            "{}: {verdict} ({} failed, {} unknown, {} passed, {} not applicable)",
            files.join(", "),
            s.fail,
            s.unknown,
            s.pass,
            s.not_applicable
        );
        self.layer_table(&mut out);
        if findings.is_empty() && s.fail + s.unknown == 0 {
            let _ = writeln!(
                out,
                "\nnothing failed and nothing is unknown: every rule that applies established what it requires"
            );
        } else if findings.is_empty() {
            let _ = writeln!(
                out,
                "\nno failure and no unknown outcome concerns what was asked; run without --class or --rule to see them"
            );
        }
        for f in findings {
            let _ = writeln!(out, "\n{} {}  {}", f.outcome.as_str().to_uppercase(), f.rule, f.subject);
            if !f.message.is_empty() {
                let _ = writeln!(out, "  {}", f.message);
            }
            if let Some(loc) = f.policy
                && let Some((p, l, c)) = self.policy_position(loc)
            {
                let docs = self.rule_docs(&f.rule);
                let _ = writeln!(
                    out,
                    "  rule {p}:{l}:{c}{}",
                    if docs.is_empty() { String::new() } else { format!(": {docs}") }
                );
                if self.in_library(loc) {
                    let _ = writeln!(out, "  (shipped library: `grail source {}` prints it)", f.rule);
                }
            }
            if let Some((doc, span)) = f.location
                && let Some((p, l, c)) = self.position(doc, span.start)
            {
                let _ = writeln!(out, "  at   {p}:{l}:{c}");
            }
            for (doc, span, label) in &f.labels {
                if let Some((p, l, c)) = self.position(*doc, span.start) {
                    let _ = writeln!(out, "  also {p}:{l}:{c}: {label}");
                }
            }
            for step in &f.trace {
                self.step(&mut out, step, verbose);
            }
        }
        if !cells.is_empty() {
            let _ = writeln!(out, "\neffective state");
            let width = cells.iter().map(|c| c.column.len()).max().unwrap_or(0);
            let mut last = "";
            for c in cells {
                let key = if c.key == last { "" } else { c.key.as_str() };
                last = &c.key;
                let value = match &c.demoted {
                    Some(d) => d.to.clone(),
                    None => c.value.clone(),
                };
                let _ = write!(out, "  {key:<4} {:<width$}  {value:<10} ", c.column);
                match &c.demoted {
                    Some(d) => {
                        let because: Vec<String> = d.because.iter().map(|(r, m)| format!("{r}: {m}")).collect();
                        let _ = write!(
                            out,
                            "demoted from `{}` set at {}, because {}",
                            c.value,
                            self.provenance(&c.from),
                            because.join("; ")
                        );
                    }
                    None => {
                        let _ = write!(out, "{}", self.provenance(&c.from));
                    }
                }
                for (kind, v, _) in &c.bounds {
                    let _ = write!(out, "; {kind} {v}");
                }
                let _ = writeln!(out);
                for (message, at) in &c.refused {
                    let at = at
                        .and_then(|(d, s)| self.position(d, s.start))
                        .map(|(p, l, c)| format!(" at {p}:{l}:{c}"))
                        .unwrap_or_default();
                    let _ = writeln!(out, "  {:<4} {:<width$}  refused{at}: {message}", "", "");
                }
            }
        }
        self.answers(&mut out, answers, keys, verbose);
        out
    }

    /// Per layered kind with a document in the deployment: which document is
    /// each layer, and how the invocation bound it.
    fn layer_table(&self, out: &mut String) {
        let policy = &self.compiled.policy;
        for l in &policy.layers {
            let kind = &policy.documents[l.document as usize].name;
            let mine: Vec<&DocLayer> = self.layers.iter().filter(|d| d.kind == *kind).collect();
            if mine.is_empty() {
                continue;
            }
            let _ = writeln!(
                out,
                "
layers of {kind}, most trusted first"
            );
            let width = l.layers.iter().map(String::len).max().unwrap_or(0);
            for (i, name) in l.layers.iter().enumerate() {
                match mine.iter().find(|d| d.layer == *name) {
                    Some(d) => {
                        let path = self.documents.get(d.doc as usize).map(|x| x.path(self.db).as_str()).unwrap_or("?");
                        let _ = writeln!(out, "  {name:<width$}  {path}  ({})", d.by.describe());
                    }
                    None if i == 0 => {
                        let _ = writeln!(
                            out,
                            "  {name:<width$}  no document: the shipped defaults stand in for it, and what only `{name}` sets is absent"
                        );
                    }
                    None => {
                        let _ = writeln!(out, "  {name:<width$}  no document");
                    }
                }
            }
        }
    }

    /// The answers of the questions about the documents: what is permitted, what is refused and why.
    fn answers(&self, out: &mut String, answers: &[(Decision, Vec<Read>)], keys: &BTreeSet<&str>, verbose: bool) {
        for (q, mine) in by_question(answers, keys) {
            let (first, _) = mine[0];
            let docs =
                self.compiled.policy.questions.iter().find(|x| x.id == q).map(|x| x.docs.join(" ")).unwrap_or_default();
            let _ = writeln!(
                out,
                "\n{q} ({}){}",
                first.action,
                if docs.is_empty() { String::new() } else { format!(": {docs}") }
            );
            let tuple =
                |d: &Decision| d.attributes.iter().map(|(_, a, v)| format!("{a} {v}")).collect::<Vec<_>>().join(", ");
            let permitted: Vec<String> = mine.iter().filter(|(d, _)| d.allowed).map(|(d, _)| tuple(d)).collect();
            let _ = writeln!(
                out,
                "  permitted: {}",
                if permitted.is_empty() { "nothing".into() } else { permitted.join("; ") }
            );
            for (d, reads) in mine.iter().filter(|(d, _)| !d.allowed) {
                let _ = writeln!(out, "  refused:   {}", tuple(d));
                for r in reads.iter().filter(|r| verbose || !(r.value.starts_with('{') || r.value.starts_with('['))) {
                    let _ = writeln!(out, "      {} = {}  ({})", r.expr, r.value, self.provenance(&r.from));
                }
            }
        }
    }

    fn step(&self, out: &mut String, step: &Step, verbose: bool) {
        let _ = writeln!(out, "  {}  ⇒ {}", step.clause, step.result);
        for r in &step.reads {
            // Concise: the scalar values only, not whole records and maps.
            let whole = r.value.starts_with('{') || r.value.starts_with('[');
            if verbose || !whole {
                let _ = writeln!(out, "      {} = {}  ({})", r.expr, r.value, self.provenance(&r.from));
            }
        }
    }

    fn provenance_json(&self, p: &Provenance) -> Value {
        match p {
            Provenance::Document(doc, span) => match self.position(*doc, span.start) {
                Some((path, l, c)) => {
                    let layer = self.layers.iter().find(|l| l.doc == *doc);
                    json!({"file": path, "line": l, "column": c, "layer": layer.map(|l| &l.layer), "bound": layer.map(|l| l.by.as_str())})
                }
                None => Value::Null,
            },
            Provenance::Policy(loc) => match self.policy_position(*loc) {
                Some((path, l, c)) => json!({"policy": {"file": path, "line": l, "column": c}}),
                None => Value::Null,
            },
            Provenance::Computed => json!("computed"),
            Provenance::Missing(what) => json!({"absent": what}),
        }
    }

    /// The answers as data: per question, what is permitted and what is refused, with the values read.
    fn answers_json(&self, answers: &[(Decision, Vec<Read>)], keys: &BTreeSet<&str>, verbose: bool) -> Vec<Value> {
        let mut out = Vec::new();
        for (q, mine) in by_question(answers, keys) {
            let (first, _) = mine[0];
            let attributes = |d: &Decision| {
                d.attributes
                    .iter()
                    .map(|(side, a, v)| {
                        let side = match side {
                            grail_lang::ast::RequestSide::Principal => "principal",
                            grail_lang::ast::RequestSide::Resource => "resource",
                        };
                        (format!("{side}.{a}"), json!(v))
                    })
                    .collect::<serde_json::Map<_, _>>()
            };
            let permitted: Vec<Value> =
                mine.iter().filter(|(d, _)| d.allowed).map(|(d, _)| Value::Object(attributes(d))).collect();
            let refused: Vec<Value> = mine
                .iter()
                .filter(|(d, _)| !d.allowed)
                .map(|(d, reads)| {
                    let reads: Vec<Value> = reads
                        .iter()
                        .filter(|r| verbose || !(r.value.starts_with('{') || r.value.starts_with('[')))
                        .map(|r| json!({"expr": r.expr, "value": r.value, "from": self.provenance_json(&r.from)}))
                        .collect();
                    json!({"request": Value::Object(attributes(d)), "reads": reads})
                })
                .collect();
            out.push(json!({"question": q, "action": first.action, "permitted": permitted, "refused": refused}));
        }
        out
    }

    fn json(
        &self,
        all: &[Finding],
        findings: &[&Finding],
        cells: &[&Cell],
        answers: &[(Decision, Vec<Read>)],
        keys: &BTreeSet<&str>,
        verbose: bool,
    ) -> Value {
        let s = Summary::of(all);
        let findings: Vec<Value> = findings
            .iter()
            .map(|f| {
                let location =
                    f.location.map_or(Value::Null, |(d, s)| self.provenance_json(&Provenance::Document(d, s)));
                let derivation: Vec<Value> = f
                    .trace
                    .iter()
                    .map(|st| {
                        let reads: Vec<Value> = st
                            .reads
                            .iter()
                            .map(|r| json!({"expr": r.expr, "value": r.value, "from": self.provenance_json(&r.from)}))
                            .collect();
                        json!({"clause": st.clause, "result": st.result, "reads": reads})
                    })
                    .collect();
                json!({
                    "rule": f.rule, "outcome": f.outcome.as_str(), "subject": f.subject, "message": f.message,
                    "location": location,
                    "policy": f.policy.map_or(Value::Null, |l| self.provenance_json(&Provenance::Policy(l))),
                    "derivation": derivation,
                })
            })
            .collect();
        let cells: Vec<Value> = cells
            .iter()
            .map(|c| {
                json!({
                    "key": c.key, "column": c.column,
                    "value": c.demoted.as_ref().map_or(c.value.clone(), |d| d.to.clone()),
                    "set": c.value, "from": self.provenance_json(&c.from),
                    "bounds": c.bounds.iter().map(|(k, v, _)| json!({"kind": k, "value": v})).collect::<Vec<_>>(),
                    "refused": c.refused.iter().map(|(m, _)| m.clone()).collect::<Vec<_>>(),
                    "demoted_because": c.demoted.as_ref().map(|d| d.because.iter().map(|(r, m)| json!({"rule": r, "message": m})).collect::<Vec<_>>()),
                })
            })
            .collect();
        let mut report = json!({
            "verdict": crate::outcome::verdict_word(s.verdict()),
            "summary": {"pass": s.pass, "fail": s.fail, "unknown": s.unknown, "not_applicable": s.not_applicable},
            "findings": findings,
            "layers": self.layers.iter().map(|d| json!({
                "file": self.documents.get(d.doc as usize).map(|x| x.path(self.db)),
                "kind": d.kind, "layer": d.layer, "bound": d.by.as_str(),
            })).collect::<Vec<_>>(),
            "state": cells,
            "answers": self.answers_json(answers, keys, verbose),
        });
        if let Some(by) = self.allowed {
            report["unknown_allowed"] = json!(by.as_str());
        }
        report
    }
}

/// An answer of a question with the values it read.
type Answer = (Decision, Vec<Read>);

/// The answers grouped by question, in the order they came, each group holding
/// only the answers about the `keys` asked for (all of them when none was);
/// a question left with no answer is left out.
fn by_question<'a>(answers: &'a [Answer], keys: &BTreeSet<&str>) -> Vec<(&'a str, Vec<&'a Answer>)> {
    let mut questions: Vec<&str> = answers.iter().map(|(d, _)| d.question.as_str()).collect();
    questions.dedup();
    questions
        .into_iter()
        .filter_map(|q| {
            let mine: Vec<&Answer> = answers
                .iter()
                .filter(|(d, _)| d.question == q)
                .filter(|(d, _)| keys.is_empty() || d.attributes.iter().any(|(_, _, v)| keys.contains(v.as_str())))
                .collect();
            (!mine.is_empty()).then_some((q, mine))
        })
        .collect()
}
