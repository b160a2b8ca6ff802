//! `grail doc`: docs/library.md is the shipped library's reference as `grail
//! doc` writes it today (never stale), every rule has its entry, and the HTML
//! site works in a real browser: headless Chromium (Debian's `chromium`,
//! which scripts/test installs) opens it, searches a rule id and finds its
//! entry. The screenshot it takes is left in the target folder
//! (`doc-search.png` under CARGO_TARGET_TMPDIR).

#[allow(dead_code, reason = "this test binary uses part of the shared runner only")]
mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::run_in;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn docs_library_md_is_the_reference_of_the_shipped_library() {
    let out = run_in(root(), &["doc"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let committed = std::fs::read_to_string(root().join("docs/library.md")).unwrap_or_default();
    if committed != out.stdout {
        let first = committed
            .lines()
            .zip(out.stdout.lines())
            .position(|(a, b)| a != b)
            .unwrap_or(committed.lines().count().min(out.stdout.lines().count()));
        panic!(
            "docs/library.md is stale (first difference at line {}): the library or `grail doc` changed.\nRefresh it with\n    cargo run -q -- doc --out docs\nand commit the result.",
            first + 1
        );
    }
}

#[test]
fn every_rule_has_an_entry_with_its_example() {
    let out = run_in(root(), &["doc"]).stdout;
    let db = grail_engine::Database::default();
    let compiled = grail_engine::db::compile_policy(&db, grail_engine::shipped::policy_set(&db));
    let mut with_example = 0;
    for (id, _) in compiled.policy.rule_ids() {
        let heading = format!("### `{id}` <a id=\"rule-{id}\"></a>");
        let at = out.find(&heading).unwrap_or_else(|| panic!("no entry for `{id}`"));
        let entry = &out[at..];
        let entry = &entry[..entry[heading.len()..].find("\n### ").map_or(entry.len(), |e| e + heading.len())];
        assert!(entry.contains("- Reports: "), "{entry}");
        with_example += usize::from(entry.contains("fires it:"));
    }
    assert_eq!(with_example, compiled.policy.rule_ids().len(), "every rule of the library has a fixture pair");
    // The reference says what the matrix says, and links only inside itself.
    assert!(out.contains("## Matrices <a id=\"matrices\"></a>"));
    for link in out.split("](").skip(1) {
        assert!(link.starts_with('#'), "a link that leaves the page: ]({}", &link[..link.len().min(40)]);
    }
}

fn chromium() -> PathBuf {
    std::env::var_os("GRAIL_CHROMIUM").map(PathBuf::from).unwrap_or_else(|| PathBuf::from("chromium"))
}

fn headless(profile: &Path) -> Command {
    let mut cmd = Command::new(chromium());
    cmd.args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        "--disable-dev-shm-usage",
        "--virtual-time-budget=5000",
    ])
    .arg(format!("--user-data-dir={}", profile.display()));
    cmd
}

#[test]
fn the_html_reference_finds_a_rule_in_a_real_browser() {
    let tmp = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let site = tmp.join("doc-site");
    let _ = std::fs::remove_dir_all(&site);
    let out = run_in(root(), &["doc", "--format", "html", "--out", site.to_str().expect("UTF-8")]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let found = Command::new(chromium()).arg("--version").output();
    assert!(
        found.as_ref().is_ok_and(|o| o.status.success()),
        "this test needs Debian's chromium: run scripts/test (it installs it), or set GRAIL_CHROMIUM"
    );
    let url = format!("file://{}/index.html?q=topology.checker_count", site.display());
    let profile = tmp.join(format!("chromium-profile-{}", std::process::id()));
    let dom = headless(&profile).arg("--dump-dom").arg(&url).output().expect("chromium runs");
    let html = String::from_utf8_lossy(&dom.stdout);
    assert!(dom.status.success() && html.contains("<section"), "chromium: {}", String::from_utf8_lossy(&dom.stderr));
    // The search ran: the rule's entry is listed first and shown, the others hidden.
    let results = html.split("<ol id=\"results\"").nth(1).and_then(|r| r.split("</ol>").next()).expect("the results");
    let first = results.split("<li>").nth(1).expect("a result");
    assert!(first.contains("href=\"#rule-topology.checker_count\""), "{results}");
    let section = |id: &str| {
        let start = html.find(&format!("<section id=\"{id}\"")).unwrap_or_else(|| panic!("no section {id}"));
        html[start..].split('>').next().expect("a tag").to_string()
    };
    assert!(!section("rule-topology.checker_count").contains("hidden"), "{}", section("rule-topology.checker_count"));
    assert!(section("rule-merge.unanimity").contains("hidden"));
    assert!(section("document-Binding").contains("hidden"));
    // Without a query nothing is hidden.
    let all = headless(&profile)
        .arg("--dump-dom")
        .arg(format!("file://{}/index.html", site.display()))
        .output()
        .expect("chromium runs");
    assert!(!String::from_utf8_lossy(&all.stdout).contains(" hidden="));

    let shot = tmp.join("doc-search.png");
    let _ = std::fs::remove_file(&shot);
    let taken = headless(&profile)
        .arg(format!("--screenshot={}", shot.display()))
        .arg("--window-size=1280,900")
        .arg(&url)
        .output()
        .expect("chromium runs");
    assert!(taken.status.success(), "{}", String::from_utf8_lossy(&taken.stderr));
    let png = std::fs::read(&shot).expect("the screenshot");
    assert!(png.starts_with(b"\x89PNG") && png.len() > 10_000, "a PNG of the page");
    let _ = std::fs::remove_dir_all(&profile);
}
