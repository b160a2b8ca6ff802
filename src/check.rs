//! `grail check`.

use std::io::Write as _;
use std::process::ExitCode;

use grail_engine::db::check_deployment;
use grail_engine::{Database, Deployment, Outcome, SourceText, Summary};

use crate::{CheckArgs, Fatal, Format, policy, render};

pub fn run(args: &CheckArgs) -> Result<ExitCode, Fatal> {
    let db = Database::default();
    let set = policy::load(&db, args.policy.as_deref())?;
    policy::compile(&db, set)?;

    let mut docs = Vec::new();
    for path in &args.files {
        if path.is_dir() {
            return Err(Fatal(format!("cannot check `{path}`: it is a folder; name the documents in it")));
        }
        let bytes =
            std::fs::read(path).map_err(|e| Fatal(format!("cannot read `{path}`: {}", lower_first(&e.to_string()))))?;
        docs.push(SourceText::from_bytes(&db, path.to_string(), bytes));
    }

    let groups: Vec<Vec<SourceText>> = if args.each { docs.iter().map(|d| vec![*d]).collect() } else { vec![docs] };
    let mut worst = Outcome::Pass;
    let mut stdout = std::io::stdout().lock();
    for group in groups {
        let deployment = Deployment::new(&db, group.clone());
        let findings = check_deployment(&db, set, deployment);
        let verdict = Summary::of(findings).verdict();
        worst = worst.max(verdict);
        let text = match args.format {
            Format::Human => render::human(&db, set, &group, findings, args.verbose),
            Format::Json => {
                let mut report = render::json(&db, set, &group, findings);
                if args.each {
                    report["file"] = serde_json::json!(group.first().map(|d| d.path(&db).clone()));
                    format!("{report}\n")
                } else {
                    format!("{}\n", serde_json::to_string_pretty(&report).unwrap_or_default())
                }
            }
        };
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

/// `No such file or directory (os error 2)` reads `no such file or directory (os error 2)`.
fn lower_first(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_lowercase().chain(c).collect(),
        None => String::new(),
    }
}
