//! Checks the benchmarks' 10,000 generated bindings one at a time, each
//! generated, checked and dropped before the next (streamed), for a peak
//! memory figure (`/usr/bin/time -v`) and for profiling (`valgrind --tool=callgrind`).
//!
//!   cargo run --release --example bench_stream -- grail [COUNT]
//!   cargo run --release --example bench_stream -- rego [COUNT]
//!   cargo run --release --example bench_stream -- write DIR [COUNT]
//!   cargo run --release --example bench_stream -- agree [COUNT]
//!
//!   cargo run --release --example bench_stream -- rego-each FILE...
//!   cargo run --release --example bench_stream -- agree-each GRAIL_JSONL FILE...
//!
//! `rego-each` is the Rego side of `grail check --each` over files on disk
//! (the corpus of `benches/upstream-corpus/generate.py`): each file read,
//! evaluated and dropped in turn. `agree-each` compares, file by file, the
//! FAIL and UNKNOWN verdicts of the translated rules in grail's `--each
//! --format json` lines (GRAIL_JSONL, one line per file, in FILE order) with
//! the Rego translation's on the same files.
//! `write` puts the same bindings on disk, one file each (`DIR/00000.json`, ...),
//! for `grail check --each` as a user runs it; `agree` checks that grail and
//! the Rego translation give the same FAIL and UNKNOWN verdicts on them.
//! With `GRAIL_BENCH_SET=examples`, the bindings are the second data set
//! (`support::example_bindings`: the examples, mutated) instead of the
//! generated ones.

#[path = "../benches/support/mod.rs"]
mod support;

use grail_engine::Outcome;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let tool = args.first().cloned().unwrap_or_else(|| "grail".into());
    if tool == "rego-each" || tool == "agree-each" {
        return on_files(&tool, &args[1..]);
    }
    // `write DIR [COUNT]`: the count comes after the folder.
    let at = if tool == "write" { 2 } else { 1 };
    let count: usize = args.get(at).and_then(|n| n.parse().ok()).unwrap_or(support::COUNT);
    let examples = std::env::var("GRAIL_BENCH_SET").is_ok_and(|s| s == "examples");
    // The examples are few and small: the whole set is made up front (a few MB).
    let mut made = examples.then(|| support::example_bindings(support::SEED, count).into_iter());
    let mut rng = support::Rng::new(support::SEED);
    let mut next = move || match made.as_mut() {
        Some(docs) => docs.next().unwrap_or_default(),
        None => support::binding(&mut rng),
    };
    let (mut bytes, mut failing) = (0, 0);
    match tool.as_str() {
        "grail" => {
            let policy = support::grail_policy();
            for _ in 0..count {
                let doc = next();
                bytes += doc.len();
                failing += support::grail_check(&policy, &doc).iter().any(|f| f.outcome == Outcome::Fail) as usize;
            }
        }
        "rego" => {
            let mut rego = support::Rego::new();
            for _ in 0..count {
                let doc = next();
                bytes += doc.len();
                let found = rego.eval(&doc);
                failing += found.to_json_str().is_ok_and(|s| s.contains("\"fail\"")) as usize;
            }
        }
        "write" => {
            let dir = std::path::PathBuf::from(args.get(1).cloned().unwrap_or_else(|| "bindings".into()));
            std::fs::create_dir_all(&dir).expect("the folder can be created");
            for i in 0..count {
                let doc = next();
                bytes += doc.len();
                std::fs::write(dir.join(format!("{i:05}.json")), &doc).expect("the file can be written");
            }
            println!("wrote {count} bindings, {bytes} bytes of JSON, to {}", dir.display());
            return;
        }
        "agree" => {
            let policy = support::grail_policy();
            let mut rego = support::Rego::new();
            let docs: Vec<String> = (0..count).map(|_| next()).collect();
            match support::agreement(&policy, &mut rego, &docs) {
                Ok(compared) => {
                    println!("agree: {count} bindings, {compared} FAIL and UNKNOWN verdicts, the same on both sides")
                }
                Err(report) => {
                    eprintln!("{report}");
                    std::process::exit(1);
                }
            }
            return;
        }
        other => {
            eprintln!("usage: bench_stream grail|rego|agree [COUNT] | write DIR [COUNT] (not `{other}`)");
            std::process::exit(2);
        }
    }
    println!("{tool}: {count} bindings, {bytes} bytes of JSON, {failing} with a FAIL");
}

/// `rego-each FILE...` and `agree-each GRAIL_JSONL FILE...`.
fn on_files(tool: &str, args: &[String]) {
    let read = |path: &String| std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let mut rego = support::Rego::new();
    if tool == "rego-each" {
        let (mut bytes, mut failing) = (0, 0);
        for path in args {
            let doc = read(path);
            bytes += doc.len();
            failing += rego.eval(&doc).to_json_str().is_ok_and(|s| s.contains("\"fail\"")) as usize;
        }
        println!("rego-each: {} files, {bytes} bytes of JSON, {failing} with a FAIL", args.len());
        return;
    }
    let Some((jsonl, files)) = args.split_first() else {
        eprintln!("usage: bench_stream agree-each GRAIL_JSONL FILE...");
        std::process::exit(2);
    };
    let lines: Vec<String> = read(jsonl).lines().map(str::to_string).collect();
    match support::agreement_on_files(&mut rego, &lines, files) {
        Ok((compared, tally)) => {
            for ((rule, outcome), n) in &tally {
                println!("  {rule:<32} {outcome:<8} {n:>6} files");
            }
            println!(
                "agree-each: {} files, {compared} FAIL and UNKNOWN verdicts of the {} translated rules, the same on both sides",
                files.len(),
                support::COMPARED.len() + support::COMPARED_UPSTREAM.len()
            );
        }
        Err(report) => {
            eprintln!("{report}");
            std::process::exit(1);
        }
    }
}
