//! cargo-fuzz target `parse_policy`: see `fuzz/harness.rs` for what it checks.
#![no_main]

#[path = "../harness.rs"]
mod harness;

libfuzzer_sys::fuzz_target!(|data: &[u8]| harness::parse_policy(data));
