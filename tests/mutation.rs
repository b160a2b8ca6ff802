//! A stable-Rust stand-in for the cargo-fuzz targets: the same properties
//! (`fuzz/harness.rs`), driven by a seeded mutation of the project's own
//! policies and documents instead of libFuzzer's coverage feedback.
//!
//! Bounded two ways, whichever comes first: `GRAIL_MUTATION_ITERATIONS` per
//! target (default 300) and `GRAIL_MUTATION_SECONDS` per target (default 10).
//! `.ci/run` runs it longer. `GRAIL_MUTATION_SEED` changes the seed. Before each
//! run the input is written to `target/mutation/<target>.last`, so that
//! even an abort (a stack overflow) leaves the input behind.

#[path = "../fuzz/harness.rs"]
mod harness;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// No single input may take longer than this (a debug build, a shared machine).
const SLOW: Duration = Duration::from_secs(5);

fn env_number(name: &str, default: u64) -> u64 {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

/// Every file under `dir` (recursively) whose name ends with one of `exts`.
fn files(dir: &Path, exts: &[&str], out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    let mut paths: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    paths.sort();
    for p in paths {
        if p.is_dir() {
            files(&p, exts, out);
        } else if p.extension().and_then(|e| e.to_str()).is_some_and(|e| exts.contains(&e)) {
            out.push(p);
        }
    }
}

fn seeds(exts: &[&str]) -> Vec<Vec<u8>> {
    let mut paths = Vec::new();
    for dir in ["examples", "tests", "policies", "fuzz/seeds"] {
        files(&Path::new(ROOT).join(dir), exts, &mut paths);
    }
    let seeds: Vec<Vec<u8>> = paths.iter().filter_map(|p| std::fs::read(p).ok()).collect();
    assert!(!seeds.is_empty(), "seed files for {exts:?}");
    seeds
}

/// xorshift64*: small, seeded, good enough to pick mutations.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        if n == 0 { 0 } else { (self.next() % n as u64) as usize }
    }
}

/// Tokens that tend to matter to the readers: structure, YAML properties,
/// edge numbers, encodings, and the policy language's own keywords.
const TOKENS: &[&str] = &[
    "{",
    "}",
    "[",
    "]",
    ":",
    ",",
    "\"",
    "'",
    "\\",
    "- ",
    "? ",
    "&a ",
    "*a",
    "!!str ",
    "!!int ",
    "!x ",
    "|\n",
    ">-\n",
    "---\n",
    "...\n",
    "#",
    "\n",
    "\r\n",
    "\t",
    "\0",
    "\u{feff}",
    "\u{a0}",
    "é",
    "😀",
    "~",
    "null",
    "true",
    "1e400",
    "9223372036854775808",
    "-9223372036854775809",
    "0x7FFFFFFFFFFFFFFF",
    ".nan",
    "<<: ",
    "C3",
    "C9",
    "auto",
    "roles",
    "override_justification",
    "schema_version",
    "rule ",
    "for ",
    " in ",
    "require ",
    "else fail ",
    "when ",
    "let ",
    "every ",
    "some ",
    "count(",
    "pairs(",
    "not ",
    " and ",
    " or ",
    "??",
    "++",
    "(",
    ")",
    "fn f(x) = f(x)\n",
    "enum ",
    "record ",
    "document ",
    "matrix ",
    "{x}",
    "///",
    "//",
];

fn mutate(rng: &mut Rng, seeds: &[Vec<u8>]) -> Vec<u8> {
    let mut data = seeds[rng.below(seeds.len())].clone();
    for _ in 0..=rng.below(8) {
        let at = rng.below(data.len() + 1);
        match rng.below(9) {
            0 if !data.is_empty() => {
                let i = rng.below(data.len());
                data[i] ^= 1 << rng.below(8);
            }
            1 => data.insert(at, rng.next() as u8),
            2 if at < data.len() => {
                let len = 1 + rng.below((data.len() - at).min(64));
                data.drain(at..at + len);
            }
            3 | 4 => {
                let token = TOKENS[rng.below(TOKENS.len())].as_bytes();
                data.splice(at..at, token.iter().copied());
            }
            5 if at < data.len() => {
                // Repeat a piece, sometimes many times: depth and size.
                let len = 1 + rng.below((data.len() - at).min(32));
                let piece = data[at..at + len].to_vec();
                let times = if rng.below(8) == 0 { 1 + rng.below(400) } else { 1 };
                for _ in 0..times {
                    data.splice(at..at, piece.iter().copied());
                }
            }
            6 => {
                // Splice in part of another seed.
                let other = &seeds[rng.below(seeds.len())];
                let from = rng.below(other.len());
                let len = rng.below((other.len() - from).min(256) + 1);
                data.splice(at..at, other[from..from + len].iter().copied());
            }
            7 if at < data.len() => {
                let end = at + rng.below(data.len() - at);
                data.truncate(end.max(at));
            }
            _ => {
                let i = rng.below(data.len() + 1);
                data.insert(i, b"{}[]:,-\n \"'&*!|>#%"[rng.below(18)]);
            }
        }
    }
    data
}

fn run(name: &str, exts: &[&str], target: fn(&[u8])) {
    run_seeded(name, seeds(exts), target);
}

fn run_seeded(name: &str, seeds: Vec<Vec<u8>>, target: fn(&[u8])) {
    let iterations = env_number("GRAIL_MUTATION_ITERATIONS", 300);
    let budget = Duration::from_secs(env_number("GRAIL_MUTATION_SECONDS", 10));
    let mut rng = Rng(env_number("GRAIL_MUTATION_SEED", 0x5eed_6a11) | 1);
    let dir = Path::new(ROOT).join("target/mutation");
    std::fs::create_dir_all(&dir).expect("target/mutation can be made");
    let last = dir.join(format!("{name}.last"));

    let started = Instant::now();
    let mut executions = 0u64;
    // The seeds themselves first, then mutants.
    for seed in &seeds {
        target(seed);
        executions += 1;
    }
    while executions < iterations + seeds.len() as u64 && started.elapsed() < budget {
        let input = mutate(&mut rng, &seeds);
        std::fs::write(&last, &input).expect("the input can be saved");
        let one = Instant::now();
        let outcome = std::panic::catch_unwind(|| target(&input));
        let took = one.elapsed();
        if outcome.is_err() || took > SLOW {
            let saved = dir.join(format!("{name}.crash"));
            std::fs::write(&saved, &input).expect("the input can be saved");
            panic!(
                "{name}: {} after {executions} executions; input saved to {}",
                if outcome.is_err() { "a panic".to_string() } else { format!("{took:?} on one input") },
                saved.display()
            );
        }
        executions += 1;
    }
    eprintln!("{name}: {executions} executions in {:.1?}, no finding", started.elapsed());
}

#[test]
fn mutated_policies_never_crash_the_parser_or_lowering() {
    run("parse_policy", &["grail"], harness::parse_policy);
}

#[test]
fn mutated_documents_never_crash_the_json_reader() {
    run("load_json", &["json", "yaml", "yml", "bin"], harness::load_json);
}

#[test]
fn mutated_documents_never_crash_the_yaml_reader() {
    run("load_yaml", &["json", "yaml", "yml", "bin"], harness::load_yaml);
}

#[test]
fn mutated_documents_never_crash_a_check_against_the_shipped_library() {
    thread_local! {
        static SHIPPED: (grail_engine::Database, grail_engine::PolicySet) = harness::shipped();
    }
    run("check_shipped", &["json", "jsonl", "yaml", "yml", "bin", "md"], |data| {
        // Every reader, in one database for speed (libFuzzer makes one per input).
        SHIPPED.with(|(db, set)| {
            for path in ["mutant.yaml", "mutant.json", "mutant.md", "mutant.jsonl"] {
                harness::check_shipped_in(db, *set, path, data);
            }
        });
    });
}

/// The seeds of `check_kinds`: each layout's own file behind its byte (a
/// document of every kind, and every kind of attached file), then the
/// examples and the fuzz seeds, each behind the byte of a layout in turn
/// (`fuzz/seeds/kinds/` holds the first ones for `fuzz/run`).
fn kinds_seeds() -> Vec<Vec<u8>> {
    let layouts = harness::Layout::ALL;
    let mut out: Vec<Vec<u8>> = layouts.iter().enumerate().map(|(i, l)| kind_seed(i, l)).collect();
    let mut paths = Vec::new();
    for dir in ["examples", "fuzz/seeds/documents"] {
        files(&Path::new(ROOT).join(dir), &["json", "jsonl", "yaml", "yml", "md"], &mut paths);
    }
    let others = paths.iter().filter_map(|p| std::fs::read(p).ok());
    for (n, seed) in others.enumerate() {
        let i = n % layouts.len();
        out.push([&[i as u8][..], &seed].concat());
    }
    out
}

fn kind_seed(i: usize, layout: &harness::Layout) -> Vec<u8> {
    [&[i as u8][..], layout.seed().as_bytes()].concat()
}

/// `fuzz/seeds/kinds/` holds a seed per layout of `check_kinds`, named by its
/// byte and kind, and each is the layout's example file behind its byte:
/// `fuzz/run` starts libFuzzer from them, so they may not drift.
#[test]
fn the_kinds_seeds_are_the_layouts_files() {
    let dir = Path::new(ROOT).join("fuzz/seeds/kinds");
    let mut names: Vec<String> = Vec::new();
    for (i, layout) in harness::Layout::ALL.iter().enumerate() {
        let name = format!("{i:02}-{}", layout.hostile.replace('/', "-"));
        let kept = std::fs::read(dir.join(&name)).unwrap_or_default();
        if std::env::var_os("GRAIL_UPDATE_SEEDS").is_some() {
            std::fs::create_dir_all(&dir).expect("the seed folder can be made");
            std::fs::write(dir.join(&name), kind_seed(i, layout)).expect("the seed can be written");
        } else {
            assert!(
                kept == kind_seed(i, layout),
                "fuzz/seeds/kinds/{name} is not layout {i} ({}) behind its byte; GRAIL_UPDATE_SEEDS=1 writes it",
                layout.kind
            );
        }
        names.push(name);
    }
    let mut found: Vec<String> = std::fs::read_dir(&dir)
        .expect("fuzz/seeds/kinds exists")
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .collect();
    found.sort();
    names.sort();
    assert_eq!(found, names, "fuzz/seeds/kinds holds one seed per layout, and nothing else");
}

/// Each layout's own example, unmutated, is read as the kind it stands
/// for: no syntax, type or unknown-key finding, so the mutants start from
/// documents every rule of the kind reads.
#[test]
fn every_layout_reads_its_example_as_its_kind() {
    let (db, set) = harness::shipped();
    for layout in harness::Layout::ALL {
        let broken = harness::structural_findings(&db, set, layout);
        assert!(broken.is_empty(), "layout {} ({}): {broken:?}", layout.kind, layout.hostile);
    }
}

#[test]
fn mutated_documents_of_every_kind_never_crash_a_deployment() {
    thread_local! {
        static SHIPPED: (grail_engine::Database, grail_engine::PolicySet) = harness::shipped();
    }
    run_seeded("check_kinds", kinds_seeds(), |data| {
        // The first byte picks the layout, as the cargo-fuzz target reads it.
        let Some((first, rest)) = data.split_first() else { return };
        let layout = harness::Layout::ALL[*first as usize % harness::Layout::ALL.len()];
        SHIPPED.with(|(db, set)| harness::check_kinds_in(db, *set, layout, rest));
    });
}
