//! What ships, read from the repository's own files: one licence everywhere
//! (the `LICENSE` file and every manifest naming what `Cargo.toml` names).

use std::path::{Path, PathBuf};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The licence `Cargo.toml` names for the workspace.
fn cargo_licence() -> String {
    let cargo: toml::Table = toml::from_str(&read(&root().join("Cargo.toml"))).expect("Cargo.toml parses");
    cargo["workspace"]["package"]["license"].as_str().expect("[workspace.package] license").to_string()
}

/// Every manifest of the repository (`Cargo.toml`, `package.json`,
/// `tree-sitter.json`, `pyproject.toml`), build output and installed
/// packages left out.
fn manifests() -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).expect("a readable folder").flatten() {
            let path = entry.path();
            let name = entry.file_name().to_string_lossy().into_owned();
            if path.is_dir() {
                if !matches!(name.as_str(), "target" | "node_modules" | ".git") {
                    walk(&path, out);
                }
            } else if matches!(name.as_str(), "Cargo.toml" | "package.json" | "tree-sitter.json" | "pyproject.toml") {
                out.push(path);
            }
        }
    }
    let mut out = Vec::new();
    walk(root(), &mut out);
    out.sort();
    out
}

/// The licence a manifest names; `None` when it names none. A member of the
/// root workspace that inherits (`license.workspace = true`) names the root's.
fn licence_of(path: &Path) -> Option<String> {
    let text = read(path);
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or_default();
    match name {
        "Cargo.toml" | "pyproject.toml" => {
            let table: toml::Table = toml::from_str(&text).expect("a manifest that parses");
            let package = table.get("package").or_else(|| table.get("project"))?;
            match package.get("license")? {
                toml::Value::String(s) => Some(s.clone()),
                toml::Value::Table(t) if t.get("workspace").and_then(toml::Value::as_bool) == Some(true) => {
                    Some(cargo_licence())
                }
                other => Some(format!("{other:?}")),
            }
        }
        "package.json" => {
            let json: serde_json::Value = serde_json::from_str(&text).expect("a manifest that parses");
            json.get("license").and_then(|l| l.as_str()).map(str::to_string)
        }
        "tree-sitter.json" => {
            let json: serde_json::Value = serde_json::from_str(&text).expect("a manifest that parses");
            json.pointer("/metadata/license").and_then(|l| l.as_str()).map(str::to_string)
        }
        _ => unreachable!("not a manifest: {name}"),
    }
}

#[test]
fn one_licence_everywhere_and_its_text_at_the_root() {
    let licence = cargo_licence();
    assert_eq!(licence, "Apache-2.0");
    let text = read(&root().join("LICENSE"));
    assert!(
        text.contains("Apache License") && text.contains("Version 2.0, January 2004"),
        "LICENSE is the Apache License 2.0's text"
    );
    assert!(text.contains("END OF TERMS AND CONDITIONS"), "LICENSE is the full text");
    let manifests = manifests();
    for expected in ["Cargo.toml", "editors/vscode/package.json", "editors/tree-sitter-grail/package.json"] {
        assert!(manifests.contains(&root().join(expected)), "{expected} is among the manifests found: {manifests:?}");
    }
    let disagree: Vec<String> = manifests
        .iter()
        .filter_map(|path| {
            let named = licence_of(path);
            (named.as_deref() != Some(licence.as_str())).then(|| {
                format!(
                    "{}: {}",
                    path.strip_prefix(root()).unwrap_or(path).display(),
                    named.as_deref().unwrap_or("no licence")
                )
            })
        })
        .collect();
    assert!(
        disagree.is_empty(),
        "every manifest names {licence}, as Cargo.toml does; these do not:\n{}",
        disagree.join("\n")
    );
    // The README says which licence covers what, the fixtures of others included.
    let readme = read(&root().join("README.md"));
    assert!(readme.contains("## Licence") && readme.contains("`LICENSE`") && readme.contains("LICENSE.upstream"));
    assert!(
        root().join("tests/data/upstream/LICENSE.upstream").is_file(),
        "upstream's notice travels with its fixtures"
    );
}
