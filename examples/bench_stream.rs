//! Checks the benchmarks' 10,000 generated bindings one at a time, each
//! generated, checked and dropped before the next (streamed), for a peak
//! memory figure (`/usr/bin/time -v`) and for profiling (`valgrind --tool=callgrind`).
//!
//!   cargo run --release --example bench_stream -- grail [COUNT]
//!   cargo run --release --example bench_stream -- rego [COUNT]

#[path = "../benches/support/mod.rs"]
mod support;

use grail_engine::Outcome;

fn main() {
    let mut args = std::env::args().skip(1);
    let tool = args.next().unwrap_or_else(|| "grail".into());
    let count: usize = args.next().and_then(|n| n.parse().ok()).unwrap_or(support::COUNT);
    let mut rng = support::Rng::new(support::SEED);
    let (mut bytes, mut failing) = (0, 0);
    match tool.as_str() {
        "grail" => {
            let policy = support::grail_policy();
            for _ in 0..count {
                let doc = support::binding(&mut rng);
                bytes += doc.len();
                failing += support::grail_check(&policy, &doc).iter().any(|f| f.outcome == Outcome::Fail) as usize;
            }
        }
        "rego" => {
            let mut rego = support::Rego::new();
            for _ in 0..count {
                let doc = support::binding(&mut rng);
                bytes += doc.len();
                let found = rego.eval(&doc);
                failing += found.to_json_str().is_ok_and(|s| s.contains("\"fail\"")) as usize;
            }
        }
        other => {
            eprintln!("usage: bench_stream grail|rego [COUNT] (not `{other}`)");
            std::process::exit(2);
        }
    }
    println!("{tool}: {count} bindings, {bytes} bytes of JSON, {failing} with a FAIL");
}
