//! `grail check`.

use std::process::ExitCode;

use grail_engine::check::{Attachment, Input};
use grail_engine::db::{BaseVersion, LayerBinding, Source, check_deployment};
use grail_engine::document::{Node, SyntaxError};
use grail_engine::hir::Policy;
use grail_engine::{Database, Deployment, Finding, Outcome, PolicySet, SourceText, Summary};
use rayon::prelude::*;

use grail_engine::layers::{BoundBy, DocLayer};

use crate::documents::{Attacher, attachments_within, deployment, open_document, read_source};
use crate::outcome::{self, AllowedBy};
use crate::render::Texts;
use crate::{CheckArgs, CheckFormat as Format, Fatal, github, junit, render, sarif};
use grail_workspace::Invocation;

/// One deployment to check: its name in `grail.toml` (none for the files
/// named on the command line), the documents the report is about, the
/// documents checked with them without being reported on (`--binding`), and
/// the layers the invocation (flags or the workspace file) binds.
pub(crate) struct Group {
    pub(crate) name: Option<String>,
    pub(crate) documents: Vec<SourceText>,
    pub(crate) context: Vec<SourceText>,
    pub(crate) bindings: Vec<LayerBinding>,
    /// Previous versions of documents (`--base`).
    pub(crate) bases: Vec<BaseVersion>,
    /// Who accepted UNKNOWN outcomes: `--allow-unknown`, or the deployment's
    /// `allow_unknown` in the workspace file.
    pub(crate) allowed: Option<AllowedBy>,
    /// The parameters `param("name")` reads, and the folder where `ref`
    /// fields resolve: the flags, over the deployment's keys.
    pub(crate) invocation: Invocation,
    /// The file given as `evidence` (`--evidence`, or the deployment's
    /// `evidence` in the workspace file), and which of the two gave it.
    pub(crate) evidence: Option<camino::Utf8PathBuf>,
    pub(crate) evidence_flag: &'static str,
    /// The envelope mode (`--binding`, `--security-binding`): the documents
    /// are read as Markdown records whatever their names, finding none is a
    /// finding, and only the record kind's rules are reported.
    pub(crate) envelopes: bool,
}

pub fn run(args: &CheckArgs) -> Result<ExitCode, Fatal> {
    // The process ends with the check: its database (the compiled policy, every
    // document and memo) is left to the operating system, not freed piece by
    // piece (a sixth of a cold check's instructions).
    let db = std::mem::ManuallyDrop::new(Database::default());
    if args.envelopes || args.binding.is_some() || args.security_binding.is_some() {
        return crate::envelopes::run(args, &db);
    }
    if args.files.is_empty() && args.layers.is_empty() {
        return run_workspace(args, std::mem::ManuallyDrop::into_inner(db));
    }
    let setup = crate::workspace::Setup::resolve(&args.policy, false)?;
    let (set, compiled) = setup.load(&db)?;
    let clock = crate::Clock::of(args.now);
    let invocation = args.invocation.invocation()?;
    if args.each && !args.base.is_empty() {
        return Err(Fatal(
            "`--base` compares one deployment's document with its previous version, and `--each` checks every file on its own; use one or the other".into(),
        ));
    }
    if args.each && !args.layers.is_empty() {
        return Err(Fatal(
            "`--layer` binds the documents of one deployment, and `--each` checks every file as a deployment of its own; use one or the other".into(),
        ));
    }
    // The stream takes files only (and no `--attach`): standard input, folders
    // and attached files go through the database.
    let streamable = args.attach.is_empty()
        && args.evidence.is_none()
        && args.files.iter().all(|p| p.as_str() != "-" && !p.is_dir());
    if args.each && matches!(args.format, Format::Human | Format::Json) && streamable {
        let shipped = setup.shipped(&db, set);
        return each(args, &compiled.policy, &Texts::policy(&db, set).shipped(&shipped), &clock, &invocation);
    }

    let named = deployment(&db, set, &args.files, &args.layers, &[], args.max_document_size)?;
    let docs = named.shown.clone();
    let context: Vec<SourceText> = named.documents[docs.len()..].to_vec();
    let bases = bases(&db, set, &args.base, &named, args.max_document_size)?;
    let groups: Vec<Group> = if args.each {
        docs.iter()
            .map(|d| Group {
                name: None,
                documents: vec![*d],
                context: context.clone(),
                bindings: Vec::new(),
                bases: Vec::new(),
                allowed: AllowedBy::of(args.allow_unknown, false),
                invocation: invocation.clone(),
                evidence: args.evidence.clone(),
                evidence_flag: "--evidence",
                envelopes: false,
            })
            .collect()
    } else {
        let allowed = AllowedBy::of(args.allow_unknown, false);
        vec![Group {
            name: None,
            documents: docs,
            context,
            bindings: named.bindings,
            bases,
            allowed,
            invocation,
            evidence: args.evidence.clone(),
            evidence_flag: "--evidence",
            envelopes: false,
        }]
    };
    let shipped = setup.shipped(&db, set);
    report(args, &db, set, groups, &shipped, &clock)
}

/// The previous versions `--base` names: `OLD` for the one document checked,
/// `NAME=OLD` for the document bound to layer `NAME`. Each must be of a kind
/// whose policy says how it may change (`on change rule`), and a document of
/// that kind (not empty, JSON or YAML), or the check does not run: a
/// comparison that cannot be made is never a silent pass.
fn bases(
    db: &Database,
    set: PolicySet,
    args: &[String],
    named: &crate::documents::Named,
    limit: u64,
) -> Result<Vec<BaseVersion>, Fatal> {
    let mut out = Vec::new();
    for arg in args {
        let flag = format!("`--base {arg}`: ");
        let bound = arg.split_once('=').and_then(|(layer, old)| {
            let docs: Vec<SourceText> =
                named.bindings.iter().filter(|b| b.layer == layer).map(|b| b.document).collect();
            (!docs.is_empty()).then_some((layer, old, docs))
        });
        let (document, old) = match bound {
            Some((_, old, docs)) if docs.len() == 1 => (docs[0], old),
            Some((layer, _, _)) => {
                return Err(Fatal(format!(
                    "{flag}several documents are bound to `{layer}`; name one with its own binding"
                )));
            }
            None if named.shown.len() == 1 => (named.shown[0], arg.as_str()),
            None => {
                return Err(Fatal(format!(
                    "{flag}{} documents are checked; say whose previous version this is with `--base LAYER=OLD` (and `--layer LAYER=NEW`)",
                    named.shown.len()
                )));
            }
        };
        grail_engine::db::change_rule(db, set, document).map_err(|m| Fatal(format!("{flag}{m}")))?;
        let base = crate::documents::read_document(db, camino::Utf8Path::new(old), limit)
            .map_err(|Fatal(m)| Fatal(format!("{flag}{m}")))?;
        // A previous version that cannot be read is never the policy's defaults.
        if let Some(why) = grail_engine::db::base_unreadable(db, set, document, base) {
            return Err(Fatal(format!("{flag}{why}")));
        }
        if out.iter().any(|b: &BaseVersion| b.document == document) {
            return Err(Fatal(format!("{flag}`{}` already has a previous version", document.path(db))));
        }
        out.push(BaseVersion { document, base });
    }
    Ok(out)
}

/// `grail check` with no files: the deployments of the workspace file found
/// in the working directory or its parents, with its policy (or `--policy`);
/// each member bound to the layer the workspace file gives it.
fn run_workspace(args: &CheckArgs, db: Database) -> Result<ExitCode, Fatal> {
    if args.each {
        return Err(Fatal(
            "name the documents to check: `--each` needs files; \
             without files the deployments of `grail.toml` are checked"
                .into(),
        ));
    }
    let setup = crate::workspace::Setup::resolve(&args.policy, true)?;
    let (set, compiled) = setup.load(&db)?;
    let shipped = setup.shipped(&db, set);
    let clock = crate::Clock::of(args.now);
    let flags = args.invocation.invocation()?;
    let named =
        setup.deployments(&db, compiled, "check", None, &flags, args.evidence.as_ref(), args.max_document_size)?;
    let groups = named
        .into_iter()
        .map(|d| Group {
            name: Some(d.name),
            documents: d.documents,
            context: Vec::new(),
            bindings: d.bindings,
            bases: Vec::new(),
            allowed: AllowedBy::of(args.allow_unknown, d.allow_unknown),
            invocation: d.invocation,
            evidence: d.evidence,
            evidence_flag: d.evidence_flag,
            envelopes: false,
        })
        .collect();
    report(args, &db, set, groups, &shipped, &clock)
}

/// Checks each deployment and writes its report in the format asked for;
/// `shipped` says which of the policy's files are the shipped library's.
pub(crate) fn report(
    args: &CheckArgs,
    db: &Database,
    set: PolicySet,
    groups: Vec<Group>,
    shipped: &[bool],
    clock: &crate::Clock,
) -> Result<ExitCode, Fatal> {
    let path_of = |docs: &[SourceText], i: u32| docs.get(i as usize).map(|d| d.path(db).clone()).unwrap_or_default();
    let mut failed = false;
    let mut stdout = std::io::stdout().lock();
    let mut sarif_runs = Vec::new();
    let mut junit_suites = Vec::new();
    let one_line_each = args.each || groups.iter().any(|g| g.name.is_some());
    for group in groups {
        let mut documents = group.documents.clone();
        documents.extend(group.context.iter().copied());
        let root = group.invocation.evidence_root.as_deref();
        let attachments = attachments_within(db, set, &documents, args.max_total_size, root);
        let given = crate::documents::given(db, &args.attach, args.max_document_size)?;
        let evidence = crate::documents::given_evidence(
            db,
            set,
            group.evidence_flag,
            group.evidence.as_deref(),
            args.max_document_size,
        )?;
        let deployment = Deployment::builder(documents, attachments)
            .bindings(group.bindings.clone())
            .params(group.invocation.params.clone())
            .now(Some(clock.nanos))
            .given(given)
            .named(evidence)
            .bases(group.bases.clone())
            .markdown(group.envelopes.then(|| group.documents.clone()))
            .new(db);
        crate::tables::refuse_crowded(db, set, deployment)?;
        let report = check_deployment(db, set, deployment);
        let report = if group.envelopes {
            std::borrow::Cow::Owned(crate::envelopes::reported(db, set, report, group.documents.len()))
        } else {
            std::borrow::Cow::Borrowed(report)
        };
        let verdict = Summary::of(&report.findings).verdict();
        let allowed = group.allowed;
        failed |= outcome::fails(verdict, allowed);
        let text = match args.format {
            Format::Human => {
                let mut text = match &group.name {
                    Some(name) => format!("deployment `{name}` ({})\n", grail_workspace::FILE_NAME),
                    None => String::new(),
                };
                let mut body = render::human(
                    db,
                    set,
                    shipped,
                    &report.documents,
                    &group.documents,
                    &report.findings,
                    allowed,
                    args.verbose,
                );
                with_layers(&mut body, &report.layers, |i| path_of(&report.documents, i));
                text.push_str(&body);
                // As upstream's checker prints them: the verdicts of a check that did not
                // fail (the envelope mode's bindings are read, not judged: none).
                if Summary::of(&report.findings).verdict() != Outcome::Fail && !group.envelopes {
                    let tables = grail_engine::db::table_deployment(db, set, deployment);
                    text.push_str(&verdict_lines(&grail_engine::table::verdicts(tables)));
                }
                if report.now_read {
                    text.push_str(&clock.line());
                }
                text
            }
            Format::Json => {
                let first = group.documents.first().map(|d| d.path(db).as_str());
                let added = render::Added {
                    layers: layers_json(&report.layers, |i| path_of(&report.documents, i)),
                    now: report.now_read.then(|| clock.json()),
                    allowed,
                    deployment: group.name.as_deref().filter(|_| one_line_each),
                    file: first.filter(|_| one_line_each && group.name.is_none()),
                    verdicts: Some(grail_engine::table::verdicts(grail_engine::db::table_deployment(
                        db, set, deployment,
                    )))
                    .filter(|v| !v.is_empty() && !group.envelopes),
                    passes: 0,
                };
                let (policy, docs) = (render::Texts::policy(db, set), render::Texts::sources(db, &report.documents));
                render::json_text(&policy, &docs, &report.findings, added, !one_line_each)
            }
            Format::Junit => {
                // One document for the whole command: a test suite per deployment.
                junit_suites.push(junit::suite(db, &report.documents, &group.documents, &report.findings, allowed));
                continue;
            }
            Format::Github => {
                github::annotations(db, set, shipped, &report.documents, &group.documents, &report.findings, allowed)
            }
            Format::Table => {
                let tables = grail_engine::db::table_deployment(db, set, deployment);
                let mut text = match &group.name {
                    Some(name) => format!("deployment `{name}` ({})\n", grail_workspace::FILE_NAME),
                    None => String::new(),
                };
                // The envelope mode's bindings are read, not judged: their tables are not its.
                if !group.envelopes {
                    text.push_str(&crate::tables::human(db, &report.documents, tables));
                }
                let shown: Vec<&str> = group.documents.iter().map(|d| d.path(db).as_str()).collect();
                text.push_str(&render::summary_line(&shown, &report.findings, allowed));
                text
            }
            Format::Sarif => {
                // One log for the whole command: a run per deployment.
                sarif_runs.push(sarif::Deployment {
                    documents: report.documents.clone(),
                    findings: match &report {
                        std::borrow::Cow::Borrowed(r) => std::borrow::Cow::Borrowed(r.findings.as_slice()),
                        std::borrow::Cow::Owned(r) => std::borrow::Cow::Owned(r.findings.clone()),
                    },
                    allowed,
                });
                continue;
            }
        };
        crate::write_stdout(&mut stdout, text.as_bytes())?;
    }
    if args.format == Format::Sarif {
        let log = sarif::log(db, sarif::Policy { set, shipped }, &sarif_runs);
        let text = format!("{}\n", serde_json::to_string_pretty(&log).unwrap_or_default());
        crate::write_stdout(&mut stdout, text.as_bytes())?;
    }
    if args.format == Format::Junit {
        crate::write_stdout(&mut stdout, junit::document(&junit_suites).as_bytes())?;
    }
    Ok(exit(failed))
}

/// Exit 1 when some deployment fails the check (a FAIL, or an UNKNOWN not allowed).
fn exit(failed: bool) -> ExitCode {
    if failed { ExitCode::from(1) } else { ExitCode::SUCCESS }
}

/// How many files are read and checked at once, per thread: enough to keep
/// every core busy, few enough that memory is bounded by them.
const IN_FLIGHT_PER_THREAD: usize = 8;

/// `--each` (human or JSON): every file a deployment of its own, checked as a
/// stream outside the database, a window of files at a time on every core,
/// the reports written in the order of the arguments. The report of each file
/// is the one the database gives (`check_deployment`): the same documents,
/// attachments and findings, through the same functions.
fn each(
    args: &CheckArgs,
    policy: &Policy,
    policy_texts: &Texts<'_>,
    clock: &crate::Clock,
    invocation: &Invocation,
) -> Result<ExitCode, Fatal> {
    // A file that cannot be opened stops the command before anything is
    // checked, as when every file was read first.
    for path in &args.files {
        open_document(path)?;
    }
    // Queued items checked with their bindings (`--binding`) are one
    // deployment, never streamed: nothing is read with every file here.
    let context: Vec<(Source, Option<Result<Node, SyntaxError>>)> = Vec::new();

    let window = rayon::current_num_threads().max(1) * IN_FLIGHT_PER_THREAD;
    let allowed = AllowedBy::of(args.allow_unknown, false);
    let mut failed = false;
    let mut stdout = std::io::stdout().lock();
    for files in args.files.chunks(window) {
        let reports: Vec<Result<(String, Outcome), Fatal>> = files
            .par_iter()
            .map(|path| check_one(args, policy, policy_texts, clock, invocation, path, &context))
            .collect();
        for report in reports {
            let (text, verdict) = report?;
            failed |= outcome::fails(verdict, allowed);
            crate::write_stdout(&mut stdout, text.as_bytes())?;
        }
    }
    Ok(exit(failed))
}

/// One file of `--each`: read, checked with the context documents and the
/// files their `ref` fields name, rendered; nothing of it is kept.
fn check_one(
    args: &CheckArgs,
    policy: &Policy,
    policy_texts: &Texts<'_>,
    clock: &crate::Clock,
    invocation: &Invocation,
    path: &camino::Utf8Path,
    context: &[(Source, Option<Result<Node, SyntaxError>>)],
) -> Result<(String, Outcome), Fatal> {
    let source = read_source(path, args.max_document_size)?;
    let loaded = source.load();
    let mut documents: Vec<(&Source, &Option<Result<Node, SyntaxError>>)> = vec![(&source, &loaded)];
    documents.extend(context.iter().map(|(s, l)| (s, l)));
    let inputs: Vec<Input<'_>> = documents.iter().map(|(s, l)| s.input(l)).collect();

    // The files the documents' `ref` fields name, each read once.
    let mut attacher = Attacher::new(args.max_total_size).within(invocation.evidence_root.clone());
    let mut named = Vec::new();
    for (from, input) in inputs.iter().enumerate() {
        for ref_path in grail_engine::check::references(policy, input) {
            let read = attacher.attach(input.path, std::path::Path::new(input.path), &ref_path);
            named.push((from, ref_path, read));
        }
    }
    if let Some(c) = grail_engine::check::crowded(policy, &inputs).first() {
        let name = |i: u32| inputs.get(i as usize).map(|x| x.path).unwrap_or_default();
        return Err(Fatal(format!(
            "one check holds at most one `{}` document, and `{}` and `{}` are two",
            c.kind,
            name(c.first.0),
            name(c.second.0)
        )));
    }
    let files = attacher.into_files();
    let loaded_files: Vec<_> =
        files.iter().map(|s| grail_engine::db::load_text(&s.path, &s.text, s.read_error)).collect();
    // Each file's text as one shared copy, however many fields name it.
    let texts: Vec<std::sync::Arc<str>> = files.iter().map(|s| s.text.as_str().into()).collect();
    let attached: Vec<Attachment<'_>> = named
        .iter()
        .map(|(from, ref_path, read)| Attachment {
            from: *from,
            path: ref_path,
            read: match read {
                Err(reason) => Err(reason.clone()),
                Ok(i) => Ok(((documents.len() + i) as u32, &loaded_files[*i])),
            },
            text: match read {
                Err(_) => "".into(),
                Ok(i) => texts[*i].clone(),
            },
            raw: read.as_ref().ok().and_then(|i| files[*i].raw.clone()),
        })
        .collect();
    // A PASS is listed only by the human report with `--verbose`; else it is a count.
    let run = grail_engine::check::run_wanting(
        policy,
        &inputs,
        &attached,
        &[],
        false,
        Some(clock.nanos),
        &invocation.params,
        false,
        args.verbose && args.format == Format::Human,
    );
    let verdicts = match args.format {
        Format::Json | Format::Human => grail_engine::table::verdicts(&grail_engine::table::tables(policy, &run)),
        _ => Vec::new(),
    };
    let summary = run.summary();
    let findings: Vec<Finding> = run.findings;

    let mut texts: Vec<(&str, &str)> = documents.iter().map(|(s, _)| (s.path.as_str(), s.text.as_str())).collect();
    texts.extend(files.iter().map(|s| (s.path.as_str(), s.text.as_str())));
    let docs = Texts::new(texts);
    let verdict = summary.verdict();
    let path_of = |i: u32| docs.path(i).unwrap_or_default().to_string();
    let text = match args.format {
        Format::Json => {
            let now = run.now_read.then(|| clock.json());
            let added = render::Added {
                layers: layers_json(&run.layers, path_of),
                now,
                allowed: AllowedBy::of(args.allow_unknown, false),
                deployment: None,
                file: Some(&source.path),
                verdicts: Some(verdicts).filter(|v| !v.is_empty()),
                passes: run.passes,
            };
            render::json_text(policy_texts, &docs, &findings, added, false)
        }
        _ => {
            let mut text = render::human_of(
                policy_texts,
                &docs,
                &[source.path.as_str()],
                &findings,
                summary,
                AllowedBy::of(args.allow_unknown, false),
                args.verbose,
            );
            with_layers(&mut text, &run.layers, path_of);
            if verdict != Outcome::Fail {
                text.push_str(&verdict_lines(&verdicts));
            }
            if run.now_read {
                text.push_str(&clock.line());
            }
            text
        }
    };
    Ok((text, verdict))
}

/// The verdict lines of a human report, one `- ` line each, as upstream's
/// checker prints them under a binding it accepts.
fn verdict_lines(verdicts: &[String]) -> String {
    verdicts.iter().map(|v| format!("- {v}\n")).collect()
}

/// Where trust came from, in a human report (a line before its summary),
/// unless a lone document vouched for by being named alone.
fn with_layers(text: &mut String, layers: &[DocLayer], path_of: impl Fn(u32) -> String) {
    let alone = layers.len() == 1 && layers[0].by == BoundBy::Standalone;
    if layers.is_empty() || alone {
        return;
    }
    let bound: Vec<String> =
        layers.iter().map(|l| format!("{} `{}` = {} ({})", l.kind, l.layer, path_of(l.doc), l.by.describe())).collect();
    text.insert_str(
        text.rfind('\n').and_then(|e| text[..e].rfind('\n')).map_or(0, |s| s + 1),
        &format!("layers: {}\n", bound.join("; ")),
    );
}

/// The layers of a JSON report.
fn layers_json(layers: &[DocLayer], path_of: impl Fn(u32) -> String) -> serde_json::Value {
    layers
        .iter()
        .map(|l| serde_json::json!({"file": path_of(l.doc), "kind": l.kind, "layer": l.layer, "bound": l.by.as_str()}))
        .collect()
}
