//! `grail check`.

use std::io::Write as _;
use std::process::ExitCode;

use grail_engine::db::check_deployment;
use grail_engine::{Database, Deployment, Outcome, SourceText, Summary};

use crate::documents::{attachments, deployment};
use crate::{CheckArgs, CheckFormat as Format, Fatal, policy, render, sarif};
use grail_engine::layers::BoundBy;

pub fn run(args: &CheckArgs) -> Result<ExitCode, Fatal> {
    let db = Database::default();
    let set = policy::load(&db, args.policy.as_deref())?;
    policy::compile(&db, set)?;

    if args.each && !args.layers.is_empty() {
        return Err(Fatal(
            "`--layer` binds the documents of one deployment, and `--each` checks every file as a deployment of its own; use one or the other".into(),
        ));
    }
    let named = deployment(&db, set, &args.files, &args.layers, &args.binding, args.max_document_size)?;
    let docs = named.shown.clone();
    let context: Vec<SourceText> = named.documents[docs.len()..].to_vec();

    let groups: Vec<Vec<SourceText>> = if args.each { docs.iter().map(|d| vec![*d]).collect() } else { vec![docs] };
    let path_of = |docs: &[SourceText], i: u32| docs.get(i as usize).map(|d| d.path(&db).clone()).unwrap_or_default();
    let mut worst = Outcome::Pass;
    let mut stdout = std::io::stdout().lock();
    let mut sarif_runs = Vec::new();
    for group in groups {
        let mut documents = group.clone();
        documents.extend(context.iter().copied());
        let attachments = attachments(&db, set, &documents);
        let deployment = Deployment::builder(documents, attachments).bindings(named.bindings.clone()).new(&db);
        let report = check_deployment(&db, set, deployment);
        let verdict = Summary::of(&report.findings).verdict();
        worst = worst.max(verdict);
        let text = match args.format {
            Format::Human => {
                let mut text = render::human(&db, set, &report.documents, &group, &report.findings, args.verbose);
                // Where trust came from, unless a lone document vouched for by being named alone.
                let alone = report.layers.len() == 1 && report.layers[0].by == BoundBy::Standalone;
                if !report.layers.is_empty() && !alone {
                    let bound: Vec<String> = report
                        .layers
                        .iter()
                        .map(|l| {
                            format!(
                                "{} `{}` = {} ({})",
                                l.kind,
                                l.layer,
                                path_of(&report.documents, l.doc),
                                l.by.describe()
                            )
                        })
                        .collect();
                    text.insert_str(
                        text.rfind('\n').and_then(|e| text[..e].rfind('\n')).map_or(0, |s| s + 1),
                        &format!("layers: {}\n", bound.join("; ")),
                    );
                }
                text
            }
            Format::Json => {
                let mut json = render::json(&db, set, &report.documents, &report.findings);
                json["layers"] = report
                    .layers
                    .iter()
                    .map(|l| serde_json::json!({"file": path_of(&report.documents, l.doc), "kind": l.kind, "layer": l.layer, "bound": l.by.as_str()}))
                    .collect();
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
