//! The Rego peer as a cold process, for the "one binding, cold process"
//! figure: loads the Rego translation and one binding from files, evaluates
//! `data.guardrails.findings` with regorus and prints them as JSON (what
//! `grail check --format json BINDING` is measured against).
//!
//!   cargo run --release --example bench_rego_cold -- benches/rego/guardrails.rego benches/data/binding-3k.json

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let (Some(rego), Some(binding)) = (args.next(), args.next()) else {
        eprintln!("usage: bench_rego_cold POLICY.rego BINDING.json");
        std::process::exit(2);
    };
    let mut engine = regorus::Engine::new();
    engine.add_policy_from_file(&rego)?;
    engine.set_input_json(&std::fs::read_to_string(&binding)?)?;
    let findings = engine.eval_rule("data.guardrails.findings".into())?;
    println!("{}", findings.to_json_str()?);
    Ok(())
}
