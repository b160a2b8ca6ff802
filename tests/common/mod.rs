//! What the command-line tests share.

use std::path::Path;
use std::process::Command;

/// Runs `grail` from the repository root, without colour, and returns its
/// exit status, standard output and standard error as one text.
pub fn grail(args: &[&str]) -> String {
    grail_in(Path::new(env!("CARGO_MANIFEST_DIR")), args)
}

/// Runs `grail` from `dir`, as [`grail`] does from the repository root.
pub fn grail_in(dir: &Path, args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_grail"))
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .output()
        .expect("grail runs");
    format!(
        "exit: {}\n--- stdout\n{}--- stderr\n{}",
        out.status.code().map_or("signal".into(), |c| c.to_string()),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}
