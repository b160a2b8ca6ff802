//! grail and its peer side by side, in one run: first the agreement
//! assertion (grail and the Rego translation give the same FAIL and UNKNOWN
//! verdicts, as (rule, subject, outcome), on every generated binding), then
//! the timings, printed as one table (median, p95, ratio to the peer).
//!
//!   cargo bench --bench side_by_side                 # agreement, then the table
//!   cargo bench --bench side_by_side -- --agree-only # agreement only
//!   cargo bench --bench side_by_side -- --quick      # fewer samples
//!   cargo bench --bench side_by_side -- --cold-only  # the cold processes alone
//!   cargo bench --bench side_by_side -- --upstream   # against upstream's node checker
//!
//! The cold-process rows spawn the release `grail` binary and the
//! `bench_rego_cold` example; the memory rows run the `bench_stream` example
//! under `/usr/bin/time -v`. `scripts/bench.sh` builds both first; a row
//! whose program is missing says so.
//!
//! `--upstream` runs only grail beside upstream's node checker, on
//! upstream's corpus (`support/upstream.rs`): `GRAIL_UPSTREAM_CHECKER` names
//! the checker (skipped with a message where it is absent), `GRAIL_BIN` the
//! `grail` binary timed (default: this profile's).

mod support;
#[path = "support/upstream.rs"]
mod upstream;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use support::timing::*;
use support::*;

fn release_dir() -> PathBuf {
    Path::new(env!("CARGO_BIN_EXE_grail")).parent().expect("target/release").to_path_buf()
}

fn workspace() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Wall time of `runs` spawns of each command, interleaved so that noise on
/// a shared machine falls on both alike.
fn cold(commands: &[Vec<String>], runs: usize) -> Vec<Stats> {
    let mut times = vec![Vec::new(); commands.len()];
    for round in 0..runs + 2 {
        for (i, argv) in commands.iter().enumerate() {
            let t = Instant::now();
            // No `current_dir` (cargo runs benches from the package root):
            // without it the standard library can use posix_spawn, whose cost
            // does not grow with this process's memory.
            let status = Command::new(&argv[0])
                .args(&argv[1..])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .expect("the program runs");
            let elapsed = t.elapsed();
            assert!(status.code().is_some_and(|c| c <= 1), "{argv:?} failed: {status}");
            if round >= 2 {
                times[i].push(elapsed); // the first two rounds warm the page cache
            }
        }
    }
    times.into_iter().map(stats).collect()
}

/// Peak resident set of a command, from `/usr/bin/time -v`, in MB.
fn peak_rss(argv: &[String]) -> Option<(f64, String)> {
    let out = Command::new("/usr/bin/time").arg("-v").args(argv).current_dir(workspace()).output().ok()?;
    let err = String::from_utf8_lossy(&out.stderr);
    let kb: f64 =
        err.lines().find_map(|l| l.trim().strip_prefix("Maximum resident set size (kbytes): "))?.parse().ok()?;
    let wall = err
        .lines()
        .find_map(|l| l.trim().strip_prefix("Elapsed (wall clock) time (h:mm:ss or m:ss): "))
        .unwrap_or("?")
        .to_string();
    Some((kb / 1024.0, wall))
}

/// The two cold processes: `grail check` and the Rego peer, on the 3 KB binding.
fn cold_commands() -> Vec<Vec<String>> {
    let grail = release_dir().join("grail");
    let rego = release_dir().join("examples").join("bench_rego_cold");
    vec![
        vec![grail.display().to_string(), "check".into(), "--format".into(), "json".into(), BINDING_3K_PATH.into()],
        vec![rego.display().to_string(), "benches/rego/guardrails.rego".into(), BINDING_3K_PATH.into()],
    ]
}

const BINDING_3K_PATH: &str = "benches/data/binding-3k.json";

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let agree_only = args.iter().any(|a| a == "--agree-only");
    let cold_only = args.iter().any(|a| a == "--cold-only");
    let quick = args.iter().any(|a| a == "--quick");
    let budget = Duration::from_secs(if quick { 2 } else { 8 });

    let load = || {
        std::fs::read_to_string("/proc/loadavg").unwrap_or_default().split(' ').take(3).collect::<Vec<_>>().join(" ")
    };
    let load_before = load();
    if args.iter().any(|a| a == "--upstream") {
        let grail = std::env::var_os("GRAIL_BIN").map_or_else(|| release_dir().join("grail"), PathBuf::from);
        std::process::exit(upstream::run(workspace(), &grail, quick));
    }
    if cold_only {
        // The cold-process rows alone, for checking them (no agreement, no table).
        let s = cold(&cold_commands(), if quick { 20 } else { 100 });
        println!("grail cold: median {}, p95 {}", fmt(s[0].median), fmt(s[0].p95));
        println!("regorus cold: median {}, p95 {}", fmt(s[1].median), fmt(s[1].p95));
        return;
    }
    let policy = grail_policy();
    let mut rego = Rego::new();
    let docs = bindings(SEED, COUNT);
    let bytes: usize = docs.iter().map(String::len).sum();
    let failing = docs
        .iter()
        .filter(|d| grail_check(&policy, d).iter().any(|f| f.outcome == grail_engine::Outcome::Fail))
        .count();

    // ---- the agreement assertion, before any timing
    let t = Instant::now();
    match agreement(&policy, &mut rego, &docs) {
        Ok(compared) => println!(
            "agreement: grail and the Rego translation agree on all {} bindings ({compared} FAIL/UNKNOWN verdicts as (rule, subject, outcome); {failing} bindings fail, {} pass; {:.1} MB of JSON; {:.1} s)",
            docs.len(),
            docs.len() - failing,
            bytes as f64 / 1e6,
            t.elapsed().as_secs_f64()
        ),
        Err(report) => {
            eprintln!("agreement FAILED: {report}");
            std::process::exit(1);
        }
    }
    // The 3 KB binding too (it passes every rule).
    let ours = grail_verdicts(&grail_check(&policy, BINDING_3K));
    assert_eq!(ours, rego.verdicts(BINDING_3K), "grail and Rego disagree on benches/data/binding-3k.json");
    assert!(ours.is_empty(), "benches/data/binding-3k.json is meant to pass: {ours:?}");
    if agree_only {
        println!("bindings with each verdict (rule, outcome):");
        for ((rule, outcome), n) in tally(&policy, &docs) {
            println!("  {n:5}  {outcome:8} {rule}");
        }
        return;
    }

    let mut table = Table { rows: Vec::new() };

    // ---- parse + compile of the shipped library (the peer: regorus parsing the .rego)
    let compile = sample(5, 10, 200, budget, || {
        std::hint::black_box(grail_policy());
    });
    let rego_load = sample(5, 10, 200, budget, || {
        std::hint::black_box(Rego::new());
    });
    table.row(
        "parse + compile the library",
        "grail",
        Some(&compile),
        ratio(&compile, &rego_load),
        "shipped library, 12 files, sections 1-10".into(),
    );
    table.row("", "regorus", Some(&rego_load), String::new(), "parse guardrails.rego (sections 1-6)".into());

    // ---- one binding, in process
    let one = sample(50, 20, 2000, budget, || {
        std::hint::black_box(grail_check(&policy, BINDING_3K));
    });
    let rego_one = sample(5, 10, 1000, budget, || {
        std::hint::black_box(rego.eval(BINDING_3K));
    });
    table.row(
        "check one 3 KB binding (warm)",
        "grail",
        Some(&one),
        ratio(&one, &rego_one),
        "load JSON + every rule".into(),
    );
    table.row("", "regorus", Some(&rego_one), String::new(), "set_input_json + eval findings".into());

    // ---- one binding, cold process
    let grail_bin = release_dir().join("grail");
    let rego_bin = release_dir().join("examples").join("bench_rego_cold");
    let runs = if quick { 20 } else { 100 };
    if rego_bin.exists() {
        let s = cold(&cold_commands(), runs);
        let target = if s[0].median <= Duration::from_millis(10) { "≤ 10 ms: met" } else { "≤ 10 ms: NOT met" };
        let r = s[0].median.as_secs_f64() / s[1].median.as_secs_f64();
        let rt = if r <= 0.5 { "≤ 0.5×: met" } else { "≤ 0.5×: NOT met" };
        table.row(
            "one binding, cold process",
            "grail",
            Some(&s[0]),
            ratio(&s[0], &s[1]),
            format!("`grail check --format json`, {runs} runs; {target}; {rt}"),
        );
        table.row("", "regorus", Some(&s[1]), String::new(), "`bench_rego_cold`: load .rego + input, eval".into());
    } else {
        table.row(
            "one binding, cold process",
            "grail",
            None,
            String::new(),
            "build the examples first (scripts/bench.sh)".into(),
        );
    }

    // ---- explain one failure
    let explain = sample(20, 10, 2000, budget, || {
        let loaded =
            grail_engine::document::load(BINDING_3K_DEMOTED, grail_engine::document::Format::Json, &Default::default());
        let input = grail_engine::check::Input {
            path: PATH,
            text: BINDING_3K_DEMOTED,
            loaded: Some(&loaded),
            given: None,
            markdown: false,
        };
        std::hint::black_box(grail_engine::explain::explain(&policy, &[input], &[]));
    });
    table.row(
        "explain one failure",
        "grail",
        Some(&explain),
        "no peer".into(),
        "3 KB binding, C3 auto-merge demoted".into(),
    );

    // ---- 10,000 bindings in one process
    let many = sample(1, 5, 50, budget * 2, || {
        for d in &docs {
            std::hint::black_box(grail_check(&policy, d));
        }
    });
    let rego_many = sample(1, if quick { 1 } else { 3 }, 10, budget * 2, || {
        for d in &docs {
            std::hint::black_box(rego.eval(d));
        }
    });
    let mbs = |s: &Stats| bytes as f64 / 1e6 / s.median.as_secs_f64();
    let per_s = |s: &Stats| docs.len() as f64 / s.median.as_secs_f64();
    let speedup = rego_many.median.as_secs_f64() / many.median.as_secs_f64();
    table.row(
        "check 10,000 bindings (one process)",
        "grail",
        Some(&many),
        ratio(&many, &rego_many),
        format!(
            "{:.0} bindings/s, {:.1} MB/s; throughput {speedup:.1}× regorus (≥ 5×: {}); ≥ 100 MB/s: {}",
            per_s(&many),
            mbs(&many),
            if speedup >= 5.0 { "met" } else { "NOT met" },
            if mbs(&many) >= 100.0 { "met" } else { "NOT met" }
        ),
    );
    table.row(
        "",
        "regorus",
        Some(&rego_many),
        String::new(),
        format!("{:.0} bindings/s, {:.1} MB/s", per_s(&rego_many), mbs(&rego_many)),
    );

    // ---- memory peak, 10,000 streamed
    let stream = release_dir().join("examples").join("bench_stream");
    if stream.exists() {
        for tool in ["grail", "rego"] {
            let argv = vec![stream.display().to_string(), tool.to_string()];
            match peak_rss(&argv) {
                Some((mb, wall)) => {
                    let note = if tool == "grail" {
                        format!(
                            "max RSS, `/usr/bin/time -v bench_stream grail` ({wall} wall); ≤ 50 MB: {}",
                            if mb <= 50.0 { "met" } else { "NOT met" }
                        )
                    } else {
                        format!("max RSS, `/usr/bin/time -v bench_stream rego` ({wall} wall)")
                    };
                    table.rows.push([
                        if tool == "grail" { "peak memory, 10,000 streamed".into() } else { String::new() },
                        if tool == "grail" { "grail".into() } else { "regorus".into() },
                        format!("{mb:.1} MB"),
                        "—".into(),
                        String::new(),
                        note,
                    ]);
                }
                None => table.row(
                    "peak memory, 10,000 streamed",
                    tool,
                    None,
                    String::new(),
                    "/usr/bin/time -v unavailable".into(),
                ),
            }
        }
    } else {
        table.row(
            "peak memory, 10,000 streamed",
            "grail",
            None,
            String::new(),
            "build the examples first (scripts/bench.sh)".into(),
        );
    }

    // ---- analyze of the shipped library, as a cold process (it has no peer)
    let analyze_runs = if quick { 2 } else { 5 };
    let argv = vec![grail_bin.display().to_string(), "analyze".into()];
    let s = &cold(&[argv], analyze_runs)[0];
    table.row(
        "analyze the library (cold process)",
        "grail",
        Some(s),
        "no peer".into(),
        format!(
            "`grail analyze`, {analyze_runs} runs; ≤ 1 s: {}",
            if s.median <= Duration::from_secs(1) { "met" } else { "NOT met" }
        ),
    );
    table.row(
        "compiled admission questions",
        "cedar-policy",
        None,
        String::new(),
        "measured by `cargo bench --bench cedar_peer` (BENCHMARKS.md, \"Cedar peer\")".into(),
    );

    println!();
    println!(
        "{} generated bindings (seed {SEED:#x}), {:.1} MB of JSON, {:.0} bytes on average; one binding = benches/data/binding-3k.json ({} bytes)",
        docs.len(),
        bytes as f64 / 1e6,
        bytes as f64 / docs.len() as f64,
        BINDING_3K.len()
    );
    println!("load average (1, 5, 15 min): {load_before} at the start, {} at the end", load());
    println!(
        "samples: compile {}, one {}, explain {}, 10,000 grail {} / regorus {}",
        compile.samples, one.samples, explain.samples, many.samples, rego_many.samples
    );
    println!();
    table.print();
}
