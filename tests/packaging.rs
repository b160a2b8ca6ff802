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

/// The README installs with the lockfile's versions, and the VS Code
/// extension packages on a fresh machine without a warning of vsce's: a
/// repository, a licence and its file, a lockfile for `npm ci`, and a
/// `.vscodeignore` that keeps only the bundle and what the manifest names.
#[test]
fn the_install_and_the_extension_package_as_the_readme_says() {
    let readme = read(&root().join("README.md"));
    assert!(readme.contains("cargo install --path . --locked"), "README installs with --locked");
    assert!(readme.contains("npm ci && npx @vscode/vsce package"), "README installs the extension's packages first");
    let dir = root().join("editors/vscode");
    let manifest: serde_json::Value =
        serde_json::from_str(&read(&dir.join("package.json"))).expect("package.json parses");
    assert!(manifest.pointer("/repository/url").and_then(|u| u.as_str()).is_some(), "package.json names a repository");
    assert_eq!(manifest["license"], cargo_licence());
    assert_eq!(read(&dir.join("LICENSE")), read(&root().join("LICENSE")), "the extension ships the licence's text");
    assert!(dir.join("package-lock.json").is_file(), "a lockfile, for `npm ci`");
    // The bundle that `vscode:prepublish` writes is what `main` names.
    let main = manifest["main"].as_str().expect("main").trim_start_matches("./");
    let prepublish =
        manifest.pointer("/scripts/vscode:prepublish").and_then(|s| s.as_str()).expect("a prepublish bundle");
    assert!(prepublish.contains("--bundle") && prepublish.contains(&format!("--outfile={main}")), "{prepublish}");
    let ignore = read(&dir.join(".vscodeignore"));
    let lines: Vec<&str> = ignore.lines().collect();
    assert_eq!(lines.first(), Some(&"**"), "everything is left out but what is named");
    for kept in [main, "package.json", "README.md", "LICENSE", "language-configuration.json", "syntaxes/**"] {
        assert!(lines.contains(&format!("!{kept}").as_str()), ".vscodeignore keeps {kept}");
    }
    assert!(!lines.iter().any(|l| l.contains("node_modules")), "node_modules is bundled, not shipped");
}

/// A release build carries no debug information and no symbols (78 MB with
/// them, about 15 MB without). Read from Cargo.toml: no test builds a release.
#[test]
fn the_release_binary_is_stripped() {
    let cargo: toml::Table = toml::from_str(&read(&root().join("Cargo.toml"))).expect("Cargo.toml parses");
    let release = cargo["profile"]["release"].as_table().expect("[profile.release]");
    assert_eq!(release.get("strip").and_then(toml::Value::as_bool), Some(true), "strip = true");
    assert_eq!(release.get("debug").and_then(toml::Value::as_bool), Some(false), "debug = false");
}

/// `grail check` with no files and no `grail.toml` helps with the file
/// itself: an example that works, written in the message (an installed
/// binary has no docs/ beside it); and the release archive holds docs/, so
/// the reference the help names travels with the binary.
#[test]
fn the_help_for_a_missing_workspace_file_is_self_contained_and_its_docs_ship() {
    let dir = std::env::temp_dir().join(format!("grail-packaging-ws-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a scratch folder");
    let grail = |dir: &Path| {
        std::process::Command::new(env!("CARGO_BIN_EXE_grail"))
            .arg("check")
            .current_dir(dir)
            .output()
            .expect("grail runs")
    };
    let out = grail(&dir);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    let example: String = err
        .lines()
        .skip_while(|l| *l != "[policy]")
        .take_while(|l| !l.starts_with('('))
        .map(|l| format!("{l}\n"))
        .collect();
    assert!(example.contains("[deployments."), "the help shows a grail.toml:\n{err}");
    // The example is a workspace file that works.
    std::fs::write(dir.join("grail.toml"), &example).expect("write grail.toml");
    std::fs::copy(root().join("examples/bindings/good.yaml"), dir.join("security.yaml")).expect("a binding");
    std::fs::copy(root().join("examples/org/autonomy.yaml"), dir.join("autonomy.yaml")).expect("an autonomy binding");
    let out = grail(&dir);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let _ = std::fs::remove_dir_all(&dir);
    // Every docs/ file the help names is in the release archive.
    let release = read(&root().join(".github/workflows/release.yml"));
    assert!(release.contains("cp -R docs \"dist/$name/docs\""), "the release archive holds docs/");
    assert!(release.contains("README.md LICENSE"), "the release archive holds the licence");
    for named in err.split_whitespace().filter(|w| w.starts_with("docs/")) {
        assert!(root().join(named.trim_end_matches([',', ')', '.'])).is_file(), "{named} exists");
    }
}

/// Every file a manifest of an editor names exists: `main`, and the query
/// files of the tree-sitter grammar (no `bindings/node` that is not there).
#[test]
fn the_editor_manifests_name_only_files_that_exist() {
    for dir in ["editors/tree-sitter-grail", "editors/vscode"] {
        let dir = root().join(dir);
        let manifest: serde_json::Value =
            serde_json::from_str(&read(&dir.join("package.json"))).expect("package.json parses");
        let mut named: Vec<String> = Vec::new();
        if let Some(main) = manifest["main"].as_str() {
            // The VS Code extension's bundle is built by `vscode:prepublish`; its source must exist.
            if manifest.pointer("/scripts/vscode:prepublish").is_none() {
                named.push(main.to_string());
            }
        }
        for grammar in manifest["tree-sitter"].as_array().into_iter().flatten() {
            for key in ["highlights", "folds", "injections", "locals", "tags"] {
                named.extend(grammar[key].as_str().map(str::to_string));
            }
        }
        for name in named {
            assert!(dir.join(&name).exists(), "{}/package.json names {name}, which does not exist", dir.display());
        }
    }
}

/// The tags of the dynamic section of an ELF64 little-endian file (empty
/// for any other file): what the loader reads at start.
fn dynamic_tags(bytes: &[u8]) -> Vec<(u64, u64)> {
    let word = |at: usize, len: usize| -> Option<u64> {
        let b = bytes.get(at..at + len)?;
        Some(b.iter().rev().fold(0, |n, &byte| n << 8 | u64::from(byte)))
    };
    if bytes.get(..6) != Some(b"\x7fELF\x02\x01".as_slice()) {
        return Vec::new();
    }
    let (Some(phoff), Some(phentsize), Some(phnum)) = (word(0x20, 8), word(0x36, 2), word(0x38, 2)) else {
        return Vec::new();
    };
    let mut tags = Vec::new();
    for i in 0..phnum {
        let ph = usize::try_from(phoff + i * phentsize).unwrap_or(usize::MAX);
        if word(ph, 4) != Some(2) {
            continue; // not PT_DYNAMIC
        }
        let (Some(offset), Some(size)) = (word(ph + 8, 8), word(ph + 32, 8)) else { continue };
        let (offset, size) = (usize::try_from(offset).unwrap_or(usize::MAX), usize::try_from(size).unwrap_or(0));
        for entry in (offset..offset.saturating_add(size)).step_by(16) {
            match (word(entry, 8), word(entry + 8, 8)) {
                (Some(0), _) | (None, _) | (_, None) => break,
                (Some(tag), Some(value)) => tags.push((tag, value)),
            }
        }
    }
    tags
}

/// Where build.rs found the toolchain and the C library able to (Linux,
/// glibc 2.36, a linker that knows `-z pack-relative-relocs`), the binary
/// carries its relative relocations packed (`DT_RELR`): a few KB of bitmaps
/// the loader walks at start instead of 20,000 entries of 24 bytes.
#[test]
fn the_binary_packs_its_relative_relocations_where_the_toolchain_can() {
    let packed = env!("GRAIL_PACKED_RELOCATIONS") == "yes";
    let bytes = std::fs::read(env!("CARGO_BIN_EXE_grail")).expect("the binary is readable");
    let tags = dynamic_tags(&bytes);
    let tag = |t: u64| tags.iter().find(|(tag, _)| *tag == t).map(|(_, v)| *v);
    const DT_RELR: u64 = 36;
    const DT_RELRSZ: u64 = 35;
    const DT_RELACOUNT: u64 = 0x6fff_fff9;
    if !packed {
        assert_eq!(tag(DT_RELR), None, "no DT_RELR where build.rs did not ask for it");
        return;
    }
    assert!(tag(DT_RELR).is_some(), "DT_RELR in the dynamic section: {tags:x?}");
    let size = tag(DT_RELRSZ).expect("DT_RELRSZ");
    assert!(size < 64 * 1024, "the packed relocations take {size} bytes");
    // What stays in `.rela.dyn` is the few relocations that name symbols.
    assert!(tag(DT_RELACOUNT).unwrap_or(0) < 100, "relative relocations left unpacked: {tags:x?}");
}
