//! `grail check`.

use std::io::Write as _;
use std::process::ExitCode;

use grail_engine::db::check_deployment;
use grail_engine::{Database, Deployment, Outcome, PolicySet, SourceText, Summary};

use crate::documents::{attachments, read_document};
use crate::{CheckArgs, CheckFormat as Format, Fatal, policy, render, sarif};

/// One deployment to check: its name in `grail.toml` (none for the files
/// named on the command line), the documents the report is about, and the
/// documents checked with them without being reported on (`--binding`).
struct Group {
    name: Option<String>,
    documents: Vec<SourceText>,
    context: Vec<SourceText>,
}

pub fn run(args: &CheckArgs) -> Result<ExitCode, Fatal> {
    let db = Database::default();
    if args.files.is_empty() {
        return run_workspace(args, db);
    }
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

    let groups: Vec<Group> = if args.each {
        docs.iter().map(|d| Group { name: None, documents: vec![*d], context: context.clone() }).collect()
    } else {
        vec![Group { name: None, documents: docs, context }]
    };
    report(args, &db, set, groups, args.policy.is_none())
}

/// `grail check` with no files: the deployments of the workspace file found
/// in the working directory or its parents, with its policy.
fn run_workspace(args: &CheckArgs, db: Database) -> Result<ExitCode, Fatal> {
    if args.policy.is_some() || args.each || !args.binding.is_empty() {
        return Err(Fatal(
            "name the documents to check: `--policy`, `--each` and `--binding` need files; \
             without files the deployments of `grail.toml` are checked"
                .into(),
        ));
    }
    let cwd = std::env::current_dir().map_err(|e| Fatal(format!("cannot read the working directory: {e}")))?;
    let Some(path) = grail_workspace::find(&cwd) else {
        return Err(Fatal(format!(
            "no documents named, and no `{}` in `{}` or its parents\nhelp: name the documents to check \
             (`grail check org.yaml`), or write a `{}` (see docs/workspace.md)",
            grail_workspace::FILE_NAME,
            cwd.display(),
            grail_workspace::FILE_NAME
        )));
    };
    let ws = grail_workspace::load(&path).map_err(|e| invalid(&e))?;
    let shown = |p: &std::path::Path| grail_workspace::shown(p, &cwd);
    let files = ws.policy_files().map_err(|e| invalid(&e))?;
    let shipped = files.iter().all(|f| f.shipped);
    let sources: Vec<SourceText> = files
        .into_iter()
        .map(|f| {
            let path = if f.shipped { f.path.to_string_lossy().into_owned() } else { shown(&f.path) };
            SourceText::new(&db, path, f.text, None)
        })
        .collect();
    let set = PolicySet::new(&db, sources);
    let compiled = policy::compile(&db, set)?;
    let declared: Vec<String> = compiled.policy.layers.iter().flat_map(|l| l.layers.iter().cloned()).collect();
    ws.check_layer_names(&declared).map_err(|e| invalid(&e))?;
    if ws.file.deployments.is_empty() {
        return Err(Fatal(format!(
            "`{}` declares no deployment\nhelp: add a `[deployments.NAME]` table naming its documents",
            shown(&ws.path)
        )));
    }
    let mut groups = Vec::new();
    for d in &ws.file.deployments {
        let members = ws.documents(d).map_err(|e| invalid(&e))?;
        let mut documents = Vec::new();
        // The layer each member is bound to is read here; the check takes
        // the documents' own layers until the engine takes bindings from the caller.
        for m in members {
            documents.push(
                grail_workspace::read_document(&db, &m.path, shown(&m.path), args.max_document_size).map_err(Fatal)?,
            );
        }
        groups.push(Group { name: Some(d.name.value.clone()), documents, context: Vec::new() });
    }
    report(args, &db, set, groups, shipped)
}

fn invalid(e: &grail_workspace::Error) -> Fatal {
    match e {
        grail_workspace::Error::Invalid { path, text, error } => {
            eprint!("{}", render::workspace_error(&path.to_string_lossy(), text, error));
            Fatal(format!("`{}` cannot be used", path.display()))
        }
        grail_workspace::Error::Read { .. } => Fatal(e.summary()),
    }
}

fn report(
    args: &CheckArgs,
    db: &Database,
    set: PolicySet,
    groups: Vec<Group>,
    shipped: bool,
) -> Result<ExitCode, Fatal> {
    let mut worst = Outcome::Pass;
    let mut stdout = std::io::stdout().lock();
    let mut sarif_runs = Vec::new();
    let one_line_each = args.each || groups.iter().any(|g| g.name.is_some());
    for group in groups {
        let mut documents = group.documents.clone();
        documents.extend(group.context.iter().copied());
        let attachments = attachments(db, set, &documents);
        let deployment = Deployment::new(db, documents, attachments);
        let report = check_deployment(db, set, deployment);
        let verdict = Summary::of(&report.findings).verdict();
        worst = worst.max(verdict);
        let text = match args.format {
            Format::Human => {
                let heading = match &group.name {
                    Some(name) => format!("deployment `{name}` ({})\n", grail_workspace::FILE_NAME),
                    None => String::new(),
                };
                let body = render::human(db, set, &report.documents, &group.documents, &report.findings, args.verbose);
                format!("{heading}{body}")
            }
            Format::Json => {
                let mut json = render::json(db, set, &report.documents, &report.findings);
                if one_line_each {
                    if let Some(name) = &group.name {
                        json["deployment"] = serde_json::json!(name);
                    } else {
                        json["file"] = serde_json::json!(group.documents.first().map(|d| d.path(db).clone()));
                    }
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
        let log = sarif::log(db, sarif::Policy { set, shipped }, &sarif_runs);
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
