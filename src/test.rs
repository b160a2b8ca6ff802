//! `grail test`: the fixture pairs next to a policy, and the coverage they give.

use std::process::ExitCode;

use camino::{Utf8Path, Utf8PathBuf};
use grail_engine::Database;
use grail_engine::testing::{self, File};

use crate::{Fatal, TestArgs, policy};

pub fn run(args: &TestArgs) -> Result<ExitCode, Fatal> {
    let db = Database::default();
    let setup = crate::workspace::Setup::resolve(&args.policy, false)?;
    let (_, compiled) = setup.load(&db)?;
    let rules: Vec<String> = compiled.policy.rule_ids().into_iter().map(|(id, _)| id.to_string()).collect();

    let owned: Vec<(String, String)> = policy::fixtures(&setup.dirs)?;
    let files: Vec<File<'_>> = owned.iter().map(|(path, text)| File { path, text }).collect();
    // Never the machine's clock: a case states its time, or `--now` gives one
    // to every case, or `now()` is missing evidence (so an outcome is the same on every run).
    let report = testing::run(&compiled.policy, &rules, &files, args.now);

    let mut out = String::new();
    for r in &report.results {
        match &r.problem {
            Some(problem) => out.push_str(&format!("FAIL tests/{}/{}: {problem}\n", r.case.rule, r.case.name)),
            None if args.verbose => out.push_str(&format!("ok   tests/{}/{}\n", r.case.rule, r.case.name)),
            None => {}
        }
    }
    for p in &report.problems {
        out.push_str(&format!("FAIL {p}\n"));
    }
    let uncovered = report.uncovered();
    if args.coverage {
        out.push_str("\ncoverage: a case that fires the rule, a case that passes it\n");
        for (rule, c) in &report.coverage {
            let mark = |b: bool| if b { "yes" } else { "NO " };
            out.push_str(&format!("  fires {}  passes {}  {rule}\n", mark(c.fires), mark(c.passes)));
        }
        let covered = report.coverage.len() - uncovered.len();
        out.push_str(&format!(
            "{covered} of {} rules covered ({}%)\n",
            report.coverage.len(),
            if report.coverage.is_empty() { 100 } else { covered * 100 / report.coverage.len() }
        ));
    }
    let failed = report.failed();
    if args.coverage && !uncovered.is_empty() {
        let names: Vec<&str> = uncovered.iter().map(|(r, _)| *r).collect();
        out.push_str(&format!(
            "coverage incomplete: {} rule(s) lack a firing or a passing case: {}\n",
            names.len(),
            names.join(", ")
        ));
    }
    let passed = report.results.iter().filter(|r| r.problem.is_none()).count();
    out.push_str(&format!("{passed} passed, {failed} failed\n"));
    if compiled.policy.reads_now {
        out.push_str(&match args.now {
            Some(now) => format!(
                "time of the check: {} (--now), unless a case states its own ({})\n",
                grail_engine::time::show_instant(now),
                testing::NOW_FILE
            ),
            None => format!(
                "time of the check: the one a case states ({}); without it, now() is missing evidence\n",
                testing::NOW_FILE
            ),
        });
    }
    print!("{out}");
    Ok(if failed > 0 || (args.coverage && !uncovered.is_empty()) { ExitCode::from(1) } else { ExitCode::SUCCESS })
}

/// The files under `DIR/tests`, by their path relative to `DIR`.
pub fn read_fixtures(dir: &Utf8Path) -> Result<Vec<(String, String)>, Fatal> {
    let mut out = Vec::new();
    let tests = dir.join("tests");
    if tests.is_dir() {
        walk(dir, &tests, &mut out)?;
    }
    out.sort();
    Ok(out)
}

fn walk(root: &Utf8Path, dir: &Utf8PathBuf, out: &mut Vec<(String, String)>) -> Result<(), Fatal> {
    let entries = dir.read_dir_utf8().map_err(|e| Fatal(format!("cannot read `{dir}`: {e}")))?;
    for entry in entries {
        let entry = entry.map_err(|e| Fatal(format!("cannot read `{dir}`: {e}")))?;
        let path = entry.path().to_owned();
        if path.is_dir() {
            walk(root, &path, out)?;
        } else {
            let text = std::fs::read_to_string(&path).map_err(|e| Fatal(format!("cannot read `{path}`: {e}")))?;
            let rel =
                path.strip_prefix(root).map(|p| p.as_str().replace('\\', "/")).unwrap_or_else(|_| path.to_string());
            out.push((rel, text));
        }
    }
    Ok(())
}
