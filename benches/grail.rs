//! grail's own benchmarks under divan (`cargo bench --bench grail`): the
//! detail behind the side-by-side table of `benches/side_by_side.rs`.

mod support;

use std::sync::LazyLock;

use grail_engine::check::Input;
use grail_engine::document::{self, Format, Limits};
use grail_engine::hir::Policy;
use support::*;

fn main() {
    divan::main();
}

static POLICY: LazyLock<std::sync::Arc<Policy>> = LazyLock::new(grail_policy);
static DOCS: LazyLock<Vec<String>> = LazyLock::new(|| bindings(SEED, COUNT));

/// Parse and compile the shipped library, as the command line does for a
/// policy folder (`--policy`; the shipped library is compiled at build time).
#[divan::bench]
fn compile_library() -> std::sync::Arc<Policy> {
    grail_policy()
}

/// Parse the shipped library's files (the syntax trees only).
#[divan::bench]
fn parse_library() -> usize {
    grail_engine::shipped::FILES
        .iter()
        .map(|(_, text)| grail_lang::parse(divan::black_box(text)).file.items.len())
        .sum()
}

static PREBUILT: LazyLock<Vec<u8>> = LazyLock::new(|| {
    let files: Vec<(&str, &str)> = grail_engine::shipped::FILES.to_vec();
    grail_engine::prebuilt::encode(&files).expect("the shipped library compiles")
});

/// Read the library as the `grail` binary carries it, compiled at build time.
#[divan::bench]
fn read_prebuilt_library() -> Policy {
    grail_engine::prebuilt::decode(divan::black_box(&PREBUILT)).expect("the blob decodes")
}

/// Load (JSON) one ~3 KB binding.
#[divan::bench]
fn load_one_3k() -> document::Node {
    document::load(divan::black_box(BINDING_3K), Format::Json, &Limits::default()).expect("valid JSON")
}

/// Load and check one ~3 KB binding against the whole library.
#[divan::bench]
fn check_one_3k(bencher: divan::Bencher) {
    let policy = &**POLICY;
    bencher.bench(|| grail_check(policy, divan::black_box(BINDING_3K)));
}

/// `explain` of one failure: the 3 KB binding with C3 auto-merge demoted.
#[divan::bench]
fn explain_one_failure(bencher: divan::Bencher) {
    let policy = &**POLICY;
    bencher.bench(|| {
        let text = divan::black_box(BINDING_3K_DEMOTED);
        let loaded = document::load(text, Format::Json, &Limits::default());
        grail_engine::explain::explain(
            policy,
            &[Input { path: PATH, text, loaded: Some(&loaded), given: None, markdown: false }],
            &[],
        )
    });
}

/// Load and check the 10,000 generated bindings, one after the other.
#[divan::bench(sample_count = 5, sample_size = 1)]
fn check_10k(bencher: divan::Bencher) {
    let policy = &**POLICY;
    let docs = &*DOCS;
    bencher.counter(divan::counter::BytesCount::new(docs.iter().map(String::len).sum::<usize>())).bench(|| {
        let mut fails = 0;
        for d in docs {
            fails += grail_check(policy, d).iter().filter(|f| f.outcome == grail_engine::Outcome::Fail).count();
        }
        fails
    });
}

/// The Rego peer on one binding (regorus, `benches/rego/guardrails.rego`).
#[divan::bench]
fn rego_one_3k(bencher: divan::Bencher) {
    let mut rego = Rego::new();
    bencher.bench_local(|| rego.eval(divan::black_box(BINDING_3K)));
}
