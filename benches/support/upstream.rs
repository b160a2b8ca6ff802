//! grail beside the checker the autonomy plugin's users run today:
//! upstream's `check-security-binding.mjs` under node, on upstream's own
//! corpus (`tests/data/upstream/`), as `tests/upstream.rs` runs it: in
//! `fixtures/security-binding/`, with each case's arguments from
//! `oracle.json`, the same arguments for both tools.
//!
//! The checker is upstream's code and is never kept in this repository: it
//! is read from `GRAIL_UPSTREAM_CHECKER` (default
//! `/tmp/upstream/check-security-binding.mjs`, BENCHMARKS.md says how to
//! rebuild it). Without it, or without `node`, the run says so and is
//! skipped. Included by `benches/side_by_side.rs` (`--upstream`) by path, so
//! that no bench target of its own is built.
//!
//! First, untimed, the agreement: node must give the exit status the oracle
//! recorded on every case (else it is not upstream's checker), and grail the
//! same exit status as node on as many cases as `agreement.toml` lists
//! (`exit = true`), so the timing is of like work. Then, interleaved:
//! - per binding, cold: one `grail check ARGS` and one `node CHECKER ARGS`
//!   per case, the order swapped every round;
//! - the batch: `grail check --each` over the corpus (one process per set of
//!   flags) against the loop of one node process per binding.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::support::timing::{Stats, Table, fmt, ratio, stats};

/// Where the checker is looked for when `GRAIL_UPSTREAM_CHECKER` is unset.
pub const DEFAULT_CHECKER: &str = "/tmp/upstream/check-security-binding.mjs";

/// One case of the corpus: a security binding of upstream's manifest that
/// the oracle ran, its arguments, and the exit status upstream's checker gave.
struct Case {
    name: String,
    args: Vec<String>,
    exit: i32,
}

fn corpus(workspace: &Path) -> PathBuf {
    workspace.join("tests/data/upstream")
}

fn read_json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{} is not JSON: {e}", path.display()))
}

/// The cases: the oracle's fixtures that the manifest names as security
/// bindings (the manifest's other fixtures were not run: their files are
/// missing upstream), sorted by name.
fn cases(workspace: &Path) -> Vec<Case> {
    let oracle = read_json(&corpus(workspace).join("oracle.json"));
    let manifest = read_json(&corpus(workspace).join("manifest.json"));
    let bindings = manifest["fixtures"].as_object().expect("manifest.json has `fixtures`");
    let mut out: Vec<Case> = oracle["fixtures"]
        .as_object()
        .expect("oracle.json has `fixtures`")
        .iter()
        .filter(|(name, _)| bindings.contains_key(name.as_str()))
        .map(|(name, f)| Case {
            name: name.clone(),
            args: f["args"].as_array().into_iter().flatten().filter_map(|a| a.as_str().map(String::from)).collect(),
            exit: f["exit"].as_i64().expect("an exit status") as i32,
        })
        .collect();
    out.sort_by(|a, b| a.name.cmp(&b.name));
    out
}

/// How many cases `agreement.toml` lists with the same exit status as
/// upstream (`exit = true`): the figure of `tests/upstream.rs`.
fn listed_exit_agreement(workspace: &Path) -> usize {
    let path = corpus(workspace).join("agreement.toml");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let file: toml::Table = toml::from_str(&text).expect("agreement.toml is TOML");
    let fixtures = file.get("fixtures").and_then(|f| f.as_table()).expect("agreement.toml has `fixtures`");
    fixtures.values().filter(|e| e.get("exit").and_then(toml::Value::as_bool) == Some(true)).count()
}

/// The two programs, each with its fixed leading arguments.
struct Tools {
    grail: Vec<String>,
    node: Vec<String>,
    dir: PathBuf,
}

impl Tools {
    fn grail(&self, args: &[String]) -> Vec<String> {
        self.grail.iter().cloned().chain(["check".to_string()]).chain(args.iter().cloned()).collect()
    }

    fn node(&self, args: &[String]) -> Vec<String> {
        self.node.iter().cloned().chain(args.iter().cloned()).collect()
    }

    /// Runs `argv` in the fixtures' folder (upstream resolves
    /// `--probe-evidence-root .` there), output discarded: its wall time and
    /// exit status.
    fn run(&self, argv: &[String]) -> (Duration, i32) {
        let t = Instant::now();
        let status = Command::new(&argv[0])
            .args(&argv[1..])
            .current_dir(&self.dir)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .unwrap_or_else(|e| panic!("cannot run {argv:?}: {e}"));
        let elapsed = t.elapsed();
        let code = status.code().unwrap_or(-1);
        assert!((0..=1).contains(&code), "{argv:?} in {} ended with {status}", self.dir.display());
        (elapsed, code)
    }
}

fn load() -> String {
    std::fs::read_to_string("/proc/loadavg").unwrap_or_default().split(' ').take(3).collect::<Vec<_>>().join(" ")
}

/// The version `node --version` prints, or why there is none.
fn node_version(node: &str) -> Result<String, String> {
    match Command::new(node).arg("--version").output() {
        Ok(out) if out.status.success() => Ok(String::from_utf8_lossy(&out.stdout).trim().to_string()),
        Ok(out) => Err(format!("`{node} --version` ended with {}", out.status)),
        Err(e) => Err(format!("`{node}` cannot be run: {e}")),
    }
}

/// The cases grouped by their arguments other than the binding (the first
/// argument), in the order first met: one `grail check --each` per group.
fn groups(cases: &[Case]) -> Vec<(Vec<String>, Vec<String>)> {
    let mut order: Vec<Vec<String>> = Vec::new();
    let mut files: BTreeMap<Vec<String>, Vec<String>> = BTreeMap::new();
    for c in cases {
        let flags = c.args[1..].to_vec();
        if !files.contains_key(&flags) {
            order.push(flags.clone());
        }
        files.entry(flags).or_default().push(c.args[0].clone());
    }
    order
        .into_iter()
        .map(|flags| {
            let f = files.remove(&flags).unwrap_or_default();
            (flags, f)
        })
        .collect()
}

/// How many times faster grail is: the peer's median over grail's.
fn speedup(ours: &Stats, theirs: &Stats) -> f64 {
    theirs.median.as_secs_f64() / ours.median.as_secs_f64()
}

/// The side-by-side run; the process's exit status (0 when skipped).
pub fn run(workspace: &Path, grail: &Path, quick: bool) -> i32 {
    let checker =
        std::env::var_os("GRAIL_UPSTREAM_CHECKER").map_or_else(|| PathBuf::from(DEFAULT_CHECKER), PathBuf::from);
    let node = std::env::var("GRAIL_NODE").unwrap_or_else(|_| "node".to_string());
    if !checker.is_file() {
        println!(
            "upstream peer: skipped, no checker at {} (set GRAIL_UPSTREAM_CHECKER to upstream's check-security-binding.mjs; BENCHMARKS.md, \"The upstream peer\", says how to rebuild it)",
            checker.display()
        );
        return 0;
    }
    let version = match node_version(&node) {
        Ok(v) => v,
        Err(why) => {
            println!("upstream peer: skipped, {why} (set GRAIL_NODE to a node 20 binary)");
            return 0;
        }
    };
    let cases = cases(workspace);
    let tools = Tools {
        grail: vec![grail.display().to_string()],
        node: vec![node.clone(), checker.display().to_string()],
        dir: corpus(workspace).join("fixtures/security-binding"),
    };
    let load_before = load();

    // ---- agreement, untimed (it also warms the page cache)
    let mut grail_exit = Vec::with_capacity(cases.len());
    for c in &cases {
        let (_, theirs) = tools.run(&tools.node(&c.args));
        if theirs != c.exit {
            eprintln!(
                "upstream peer: {} is not upstream's checker: exit {theirs} on `{}` where oracle.json says {}",
                checker.display(),
                c.name,
                c.exit
            );
            return 1;
        }
        grail_exit.push(tools.run(&tools.grail(&c.args)).1);
    }
    let same = cases.iter().zip(&grail_exit).filter(|(c, g)| c.exit == **g).count();
    let listed = listed_exit_agreement(workspace);
    println!(
        "agreement: node gives the oracle's exit status on all {} bindings; grail the same exit status as node on {same} ({} listed in agreement.toml)",
        cases.len(),
        listed
    );
    if same != listed {
        eprintln!("upstream peer: grail agrees on the exit status of {same} bindings, agreement.toml lists {listed}");
        return 1;
    }

    // ---- per binding, cold: a pair per case, the order swapped every round
    let rounds = if quick { 1 } else { 3 };
    let mut ours = Vec::new();
    let mut theirs = Vec::new();
    let mut per_binding: Vec<Vec<(Duration, Duration)>> = vec![Vec::new(); cases.len()];
    for round in 0..rounds {
        for (i, c) in cases.iter().enumerate() {
            let g = tools.grail(&c.args);
            let n = tools.node(&c.args);
            let ((tg, eg), (tn, en)) = if round % 2 == 0 {
                let a = tools.run(&g);
                (a, tools.run(&n))
            } else {
                let b = tools.run(&n);
                (tools.run(&g), b)
            };
            assert_eq!((eg, en), (grail_exit[i], c.exit), "{}: the exit statuses changed between runs", c.name);
            ours.push(tg);
            theirs.push(tn);
            per_binding[i].push((tg, tn));
        }
    }
    let mut ratios: Vec<f64> = per_binding
        .iter()
        .map(|runs| {
            let g = stats(runs.iter().map(|r| r.0).collect()).median;
            let n = stats(runs.iter().map(|r| r.1).collect()).median;
            n.as_secs_f64() / g.as_secs_f64()
        })
        .collect();
    ratios.sort_by(f64::total_cmp);
    let one_g = stats(ours);
    let one_n = stats(theirs);

    // ---- the batch: the whole corpus, grail `--each` per set of flags against the node loop
    let batch_rounds = if quick { 1 } else { 3 };
    let groups = groups(&cases);
    let mut batch_g = Vec::new();
    let mut batch_n = Vec::new();
    for _ in 0..batch_rounds {
        let t = Instant::now();
        for (flags, files) in &groups {
            let args: Vec<String> =
                ["--each".to_string()].into_iter().chain(files.iter().cloned()).chain(flags.iter().cloned()).collect();
            tools.run(&tools.grail(&args));
        }
        batch_g.push(t.elapsed());
        let t = Instant::now();
        for c in &cases {
            tools.run(&tools.node(&c.args));
        }
        batch_n.push(t.elapsed());
    }
    let batch_g = stats(batch_g);
    let batch_n = stats(batch_n);
    let load_after = load();

    let n = cases.len();
    let x = speedup(&one_g, &one_n);
    let mut table = Table { rows: Vec::new() };
    table.row(
        "one binding, cold process",
        "grail",
        Some(&one_g),
        ratio(&one_g, &one_n),
        format!(
            "`grail check ARGS`, {n} bindings × {rounds} runs; {x:.1}× faster (≥ 20×: {}); per binding {:.1}× median, {:.1}× lowest",
            if x >= 20.0 { "met" } else { "NOT met" },
            ratios[ratios.len() / 2],
            ratios[0]
        ),
    );
    table.row(
        "",
        "upstream (node)",
        Some(&one_n),
        String::new(),
        format!("`node check-security-binding.mjs ARGS`, node {version}"),
    );
    let per_s = |s: &Stats| n as f64 / s.median.as_secs_f64();
    table.row(
        "the corpus, batch",
        "grail",
        Some(&batch_g),
        ratio(&batch_g, &batch_n),
        format!(
            "`grail check --each`, {} processes (one per set of flags), {batch_rounds} runs; {:.0} bindings/s; {:.1}× faster (no target: node's start-up dominates)",
            groups.len(),
            per_s(&batch_g),
            speedup(&batch_g, &batch_n)
        ),
    );
    table.row(
        "",
        "upstream (node)",
        Some(&batch_n),
        String::new(),
        format!("a loop of {n} node processes; {:.0} bindings/s", per_s(&batch_n)),
    );

    println!();
    println!("grail: {}", grail.display());
    println!("upstream: node {version} {}", checker.display());
    println!(
        "corpus: {n} security bindings of tests/data/upstream (manifest ∩ oracle), run in fixtures/security-binding"
    );
    println!("load average (1, 5, 15 min): {load_before} at the start, {load_after} at the end");
    println!(
        "per binding, all runs: grail {} median / {} p95, node {} / {}",
        fmt(one_g.median),
        fmt(one_g.p95),
        fmt(one_n.median),
        fmt(one_n.p95)
    );
    println!();
    table.print();
    0
}
