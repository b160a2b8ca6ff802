//! `grail compile`: the compile targets, written to a folder.
//!
//! `--target cedar` compiles a deployment, which is checked first: one that
//! `grail check` would fail (a FAIL, or an UNKNOWN without `--allow-unknown`)
//! is refused with the same report (on standard error), exit 1, and nothing
//! is written. An UNKNOWN allowed is said on standard error. `--target json` and
//! `--target jsonschema` compile the policy alone. Every file is generated
//! before the first is written; standard output lists the files written.

use std::io::Write as _;
use std::process::ExitCode;

use camino::{Utf8Path, Utf8PathBuf};
use grail_engine::db::{check_deployment, decide_deployment};
use grail_engine::emit::{self, cedar, ir, json_schema};
use grail_engine::{Database, Outcome, Summary};

use crate::outcome::{self, AllowedBy};

use crate::documents::lower_first;
use crate::{CompileArgs, Fatal, Target, policy, render};

pub fn run(args: &CompileArgs) -> Result<ExitCode, Fatal> {
    let db = Database::default();
    let from_file = args.files.is_empty() && args.layers.is_empty();
    let setup = crate::workspace::Setup::resolve(&args.policy, from_file && args.target == Target::Cedar)?;
    let (set, compiled) = setup.load(&db)?;
    let name = policy::name(&db, set, &setup.dirs);

    let files: Vec<(String, String)> = match args.target {
        Target::Cedar => {
            let clock = crate::Clock::of(args.now);
            let (shown, deployment, allow_file) = setup.asked_deployment(
                &db,
                set,
                compiled,
                from_file,
                crate::workspace::Asked {
                    command: "compile",
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
            let verdict = Summary::of(&report.findings).verdict();
            let allowed = AllowedBy::of(args.allow_unknown, allow_file);
            if outcome::fails(verdict, allowed) {
                let shipped = setup.shipped(&db, set);
                let text =
                    render::human(&db, set, &shipped, &report.documents, &shown, &report.findings, allowed, false);
                let _ = std::io::stdout().flush();
                let mut stderr = std::io::stderr().lock();
                let _ = stderr.write_all(text.as_bytes());
                let _ = writeln!(stderr, "error: the deployment does not pass `grail check`; nothing was written");
                if verdict == Outcome::Unknown {
                    let _ = writeln!(stderr, "help: `--allow-unknown` compiles it with its UNKNOWN outcomes");
                }
                return Ok(ExitCode::from(1));
            }
            if let (Outcome::Unknown, Some(by)) = (verdict, allowed) {
                let rules = unknown_rules(&report.findings);
                let _ = std::io::stdout().flush();
                eprintln!(
                    "note: the check's {} UNKNOWN outcome(s) are allowed by {} ({rules})",
                    Summary::of(&report.findings).unknown,
                    by.describe()
                );
            }
            let decisions = decide_deployment(&db, set, deployment);
            let out = cedar::cedar(&compiled.policy, decisions);
            vec![
                (format!("{name}.cedarschema"), out.schema),
                (format!("{name}.cedar"), out.policies),
                ("entities.json".into(), out.entities),
            ]
        }
        Target::Json | Target::Jsonschema => {
            if !args.files.is_empty() || !args.binding.is_empty() || !args.layers.is_empty() {
                return Err(Fatal(format!(
                    "`--target {}` compiles the policy alone and takes no document",
                    if args.target == Target::Json { "json" } else { "jsonschema" }
                )));
            }
            if args.target == Target::Json {
                vec![(format!("{name}.ir.json"), emit::to_text(&ir::ir(&compiled.policy, &name)))]
            } else {
                json_schema::json_schemas(&compiled.policy)
                    .into_iter()
                    .map(|(kind, schema)| (format!("{kind}.schema.json"), emit::to_text(&schema)))
                    .collect()
            }
        }
    };
    write(&args.out, &files)?;
    Ok(ExitCode::SUCCESS)
}

/// The rules with an UNKNOWN outcome, each once: "`a`, `b`".
pub fn unknown_rules(findings: &[grail_engine::Finding]) -> String {
    let mut rules: Vec<&str> =
        findings.iter().filter(|f| f.outcome == Outcome::Unknown).map(|f| f.rule.as_str()).collect();
    rules.sort_unstable();
    rules.dedup();
    rules.iter().map(|r| format!("`{r}`")).collect::<Vec<_>>().join(", ")
}

fn write(dir: &Utf8Path, files: &[(String, String)]) -> Result<(), Fatal> {
    std::fs::create_dir_all(dir)
        .map_err(|e| Fatal(format!("cannot create `{dir}`: {}", lower_first(&e.to_string()))))?;
    let mut stdout = std::io::stdout().lock();
    for (file, text) in files {
        let path: Utf8PathBuf = dir.join(file);
        std::fs::write(&path, text)
            .map_err(|e| Fatal(format!("cannot write `{path}`: {}", lower_first(&e.to_string()))))?;
        crate::write_stdout(&mut stdout, format!("{path}\n").as_bytes())?;
    }
    Ok(())
}
