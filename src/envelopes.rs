//! `grail check --binding AUTONOMY --security-binding SECURITY TARGET...`:
//! queued items checked as the autonomy plugin's `check-signal-envelope.mjs`
//! checks them. Every file under the targets (folders walked recursively) is
//! read as a Markdown record, whatever its name; the two bindings are read for
//! what the record kind's rules need, not checked as a whole; only the
//! record kind's rules are reported (its structural rules and the family of
//! its marker rule, `envelope.*` in the shipped library); and finding no
//! record at all is the kind's `empty` finding.

use std::process::ExitCode;

use camino::{Utf8Path, Utf8PathBuf};
use grail_engine::db::{Report, load_document};
use grail_engine::hir::Policy;
use grail_engine::{Database, PolicySet, SourceText};

use crate::check::{Group, report};
use crate::documents::{LayerArg, deployment, lower_first};
use crate::outcome::AllowedBy;
use crate::{CheckArgs, Fatal};

pub fn run(args: &CheckArgs, db: &Database) -> Result<ExitCode, Fatal> {
    for (given, flag) in [
        (args.each, "--each"),
        (!args.base.is_empty(), "--base"),
        (args.evidence.is_some(), "--evidence"),
        (!args.attach.is_empty(), "--attach"),
    ] {
        if given {
            return Err(Fatal(format!(
                "`{flag}` is not read when queued items are checked (`--binding`, `--security-binding`): \
                 name the items, the autonomy binding and the security binding only"
            )));
        }
    }
    if args.files.is_empty() {
        return Err(Fatal(
            "name the queued items to check: `grail check --binding AUTONOMY --security-binding SECURITY ITEM.md|DIR...`"
                .into(),
        ));
    }
    let setup = crate::workspace::Setup::resolve(&args.policy, false)?;
    let (set, _) = setup.load(db)?;
    let clock = crate::Clock::of(args.now);
    let invocation = args.invocation.invocation()?;
    let mut files = Vec::new();
    for target in &args.files {
        walk(target, &mut files)?;
    }
    let mut layers = args.layers.clone();
    if let Some(security) = &args.security_binding {
        layers.push(LayerArg { layer: "security".into(), file: security.clone() });
    }
    let autonomy: Vec<Utf8PathBuf> = args.binding.iter().cloned().collect();
    let named = deployment(db, set, &files, &layers, &autonomy, args.max_document_size)?;
    // The targets, each once, are the first documents; the bindings follow.
    let targets = files
        .iter()
        .filter_map(|f| named.documents.iter().position(|d| d.path(db).as_str() == f.as_str()))
        .max()
        .map_or(0, |last| last + 1);
    for (flag, path) in [("--binding", &args.binding), ("--security-binding", &args.security_binding)] {
        let Some(path) = path else { continue };
        if let Some(doc) = named.documents[targets..].iter().find(|d| d.path(db).as_str() == path.as_str()) {
            readable(db, flag, *doc)?;
        }
    }
    let group = Group {
        name: None,
        documents: named.documents[..targets].to_vec(),
        context: named.documents[targets..].to_vec(),
        bindings: named.bindings,
        bases: Vec::new(),
        allowed: AllowedBy::of(args.allow_unknown, false),
        invocation,
        evidence: None,
        evidence_flag: "--evidence",
        envelopes: true,
    };
    let shipped = setup.shipped(db, set);
    report(args, db, set, vec![group], &shipped, &clock)
}

/// A binding that cannot be read as JSON or YAML stops the check (exit 2),
/// as upstream's checker stops on it: its rules would read nothing.
fn readable(db: &Database, flag: &str, doc: SourceText) -> Result<(), Fatal> {
    match load_document(db, doc) {
        Ok(_) => Ok(()),
        Err(e) => Err(Fatal(format!("`{flag} {}`: cannot read the binding: {}", doc.path(db), e.message))),
    }
}

/// Every file under `target`, in name order (a folder walked recursively).
/// A target that is not there stops the check (exit 2), never a finding.
fn walk(target: &Utf8Path, out: &mut Vec<Utf8PathBuf>) -> Result<(), Fatal> {
    let cannot = |e: std::io::Error| Fatal(format!("cannot read target `{target}`: {}", lower_first(&e.to_string())));
    let meta = std::fs::metadata(target).map_err(cannot)?;
    if !meta.is_dir() {
        out.push(target.to_path_buf());
        return Ok(());
    }
    let mut entries = Vec::new();
    for entry in target.read_dir_utf8().map_err(cannot)? {
        entries.push(entry.map_err(cannot)?.into_path());
    }
    entries.sort();
    for entry in entries {
        walk(&entry, out)?;
    }
    Ok(())
}

/// The findings of the envelope mode: those about a target (or about the
/// deployment as a whole: no record found), of the record kind's rules.
pub fn reported(db: &Database, set: PolicySet, report: &Report, targets: usize) -> Report {
    let compiled = grail_engine::db::compile_policy(db, set);
    let rules = record_rules(&compiled.policy);
    let mut out = report.clone();
    out.findings.retain(|f| {
        let about_target = f.location.is_none_or(|(doc, _)| (doc as usize) < targets);
        about_target && rules.iter().any(|r| r.matches(&f.rule))
    });
    out
}

/// Which rule ids are the record kind's.
enum RuleSet {
    Exactly(String),
    Family(String),
}

impl RuleSet {
    fn matches(&self, rule: &str) -> bool {
        match self {
            RuleSet::Exactly(id) => id == rule,
            RuleSet::Family(prefix) => rule.starts_with(prefix.as_str()),
        }
    }
}

/// The rules of the Markdown record kind: its structural rules, and every
/// rule of its marker rule's family (`envelope.marker`: `envelope.*`).
fn record_rules(policy: &Policy) -> Vec<RuleSet> {
    let mut out = Vec::new();
    for (d, _, rule) in policy.markdown_kinds() {
        if let Some((family, _)) = rule.rule.split_once('.') {
            out.push(RuleSet::Family(format!("{family}.")));
        }
        out.push(RuleSet::Exactly(rule.rule.clone()));
        let record = &policy.records[d.record as usize];
        out.extend(record.checks.iter().flatten().map(|c| RuleSet::Exactly(c.rule.clone())));
    }
    out
}
