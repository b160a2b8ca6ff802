//! `grail check`.

use std::io::Write as _;
use std::process::ExitCode;

use grail_engine::db::check_deployment;
use grail_engine::{Database, Deployment, Outcome, SourceText, Summary};

use crate::documents::{Attacher, read_document};
use crate::{CheckArgs, CheckFormat as Format, Fatal, policy, render, sarif};

pub fn run(args: &CheckArgs) -> Result<ExitCode, Fatal> {
    let db = Database::default();
    let set = policy::load(&db, args.policy.as_deref())?;
    policy::compile(&db, set)?;

    let mut docs = Vec::new();
    for path in &args.files {
        docs.push(read_document(&db, path, args.max_document_size)?);
    }

    let mut context = Vec::new();
    for path in &args.binding {
        context.push(read_document(&db, path, args.max_document_size)?);
    }

    let groups: Vec<Vec<SourceText>> = if args.each { docs.iter().map(|d| vec![*d]).collect() } else { vec![docs] };
    let mut worst = Outcome::Pass;
    let mut stdout = std::io::stdout().lock();
    let mut sarif_runs = Vec::new();
    for group in groups {
        let mut documents = group.clone();
        documents.extend(context.iter().copied());
        let attachments = Attacher::new(args.max_total_size).attachments(&db, set, &documents);
        let deployment = Deployment::new(&db, documents, attachments);
        let report = check_deployment(&db, set, deployment);
        let verdict = Summary::of(&report.findings).verdict();
        worst = worst.max(verdict);
        let text = match args.format {
            Format::Human => render::human(&db, set, &report.documents, &group, &report.findings, args.verbose),
            Format::Json => {
                let mut json = render::json(&db, set, &report.documents, &report.findings);
                if args.each {
                    json["file"] = serde_json::json!(group.first().map(|d| d.path(&db).clone()));
                    format!("{json}\n")
                } else {
                    format!("{}\n", serde_json::to_string_pretty(&json).unwrap_or_default())
                }
            }
            Format::Sarif => {
                // One log for the whole command: a run per deployment.
                sarif_runs.push((report.documents.clone(), report.findings.as_slice()));
                continue;
            }
        };
        if stdout.write_all(text.as_bytes()).is_err() {
            return Err(Fatal("cannot write to standard output".into()));
        }
    }
    if args.format == Format::Sarif {
        let log = sarif::log(&db, sarif::Policy { set, shipped: args.policy.is_none() }, &sarif_runs);
        let text = format!("{}\n", serde_json::to_string_pretty(&log).unwrap_or_default());
        if stdout.write_all(text.as_bytes()).is_err() {
            return Err(Fatal("cannot write to standard output".into()));
        }
    }
    Ok(match worst {
        Outcome::Fail => ExitCode::from(1),
        Outcome::Unknown if args.deny_unknown => ExitCode::from(1),
        _ => ExitCode::SUCCESS,
    })
}
