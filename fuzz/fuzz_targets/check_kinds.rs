//! cargo-fuzz target `check_kinds`: see `fuzz/harness.rs` for what it checks.
#![no_main]

#[path = "../harness.rs"]
mod harness;

libfuzzer_sys::fuzz_target!(|data: &[u8]| harness::check_kinds(data));
