//! `grail doc`: docs/library.md is the shipped library's reference as `grail
//! doc` writes it today (never stale), every rule has its entry, and the HTML
//! site works in a real browser: headless Chromium (Debian's `chromium`,
//! which scripts/test installs) opens it, searches a rule id and finds its
//! entry first, says when nothing matches, and lays every page out within
//! 800 pixels. The ranking itself runs in Node.js, as tests/tree_sitter.rs
//! needs it. The screenshot it takes is left in the target folder
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

/// The site of the shipped library, written once per test into its own folder.
fn site(name: &str) -> PathBuf {
    let site = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&site);
    let out = run_in(root(), &["doc", "--format", "html", "--out", site.to_str().expect("UTF-8")]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    site
}

/// The HTML pages of a site, by file name.
fn pages(site: &Path) -> Vec<(String, String)> {
    let mut pages: Vec<(String, String)> = std::fs::read_dir(site)
        .expect("the site")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".html"))
        .map(|n| {
            let text = std::fs::read_to_string(site.join(&n)).expect("a page");
            (n, text)
        })
        .collect();
    pages.sort();
    pages
}

fn require_chromium() {
    let found = Command::new(chromium()).arg("--version").output();
    assert!(
        found.as_ref().is_ok_and(|o| o.status.success()),
        "this test needs Debian's chromium: run scripts/test (it installs it), or set GRAIL_CHROMIUM"
    );
}

/// The DOM of `url` once its scripts ran, in a window `width` pixels wide.
fn dom(profile: &Path, url: &str, width: u32) -> String {
    let out = headless(profile)
        .arg(format!("--window-size={width},900"))
        .arg("--dump-dom")
        .arg(url)
        .output()
        .expect("chromium runs");
    let html = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success() && html.contains("<main"), "chromium: {}", String::from_utf8_lossy(&out.stderr));
    html
}

/// The start tag of the element with `id`.
fn tag<'h>(html: &'h str, id: &str) -> &'h str {
    let at = html.find(&format!(" id=\"{id}\"")).unwrap_or_else(|| panic!("no element {id}"));
    let start = html[..at].rfind('<').expect("a tag");
    let end = at + html[at..].find('>').expect("a tag's end");
    &html[start..=end]
}

#[test]
fn the_html_reference_finds_a_rule_in_a_real_browser() {
    let tmp = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let site = site("doc-site");
    require_chromium();
    let profile = tmp.join(format!("chromium-profile-{}", std::process::id()));
    let url = format!("file://{}/index.html?q=topology.checker_count", site.display());
    let html = dom(&profile, &url, 1280);
    // The search ran: the rule's entry is listed first, on the page of its file, and
    // the page's own text gives way to the results.
    let results = html.split("<ol id=\"results\"").nth(1).and_then(|r| r.split("</ol>").next()).expect("the results");
    let first = results.split("<li>").nth(1).expect("a result");
    assert!(first.contains("href=\"rules-topology.html#rule-topology.checker_count\""), "{results}");
    assert!(tag(&html, "nothing").contains("hidden"), "{}", tag(&html, "nothing"));
    assert!(html.contains("<body class=\"searching\""), "the page gives way to the results");
    // A result opens its entry: the page of the file holds it.
    let page = std::fs::read_to_string(site.join("rules-topology.html")).expect("the rules of topology.grail");
    assert!(page.contains("<section id=\"rule-topology.checker_count\""));

    // Nothing matches: a message, and no item in the list.
    let none = dom(&profile, &format!("file://{}/records.html?q=no-such-thing-at-all", site.display()), 1280);
    let message = tag(&none, "nothing");
    assert!(!message.contains("hidden"), "{message}");
    assert!(none.contains("Nothing matches “no-such-thing-at-all”."), "the message says so");
    let list = none.split("<ol id=\"results\"").nth(1).and_then(|r| r.split("</ol>").next()).expect("the list");
    assert!(!list.contains("<li"), "no item numbers the message: {list}");

    // Without a query nothing is hidden but the results.
    let all = dom(&profile, &format!("file://{}/index.html", site.display()), 1280);
    assert!(tag(&all, "found").contains("hidden") && !all.contains("class=\"searching\""));

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

/// Issue 41, item 8: every page fits a window 800 pixels wide: nothing in
/// it reaches past the window's right edge (long code and tables wrap).
/// Headless Chromium opens a probe page beside the site that loads every
/// page in a frame 800 pixels wide (a file may read its neighbours with
/// `--allow-file-access-from-files`) and measures every element once each
/// is laid out.
#[test]
fn every_page_of_the_html_reference_fits_an_800_pixel_window() {
    let tmp = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let site = site("doc-site-800");
    require_chromium();
    let profile = tmp.join(format!("chromium-profile-800-{}", std::process::id()));
    let all: Vec<String> = pages(&site).into_iter().map(|(name, _)| name).collect();
    let probe = format!(
        r##"<!DOCTYPE html><html><body><output id="probe"></output><script>
var pages = {pages}, out = [], left = pages.length;
pages.forEach(function (page) {{
  var frame = document.createElement("iframe");
  frame.style.cssText = "width: 800px; height: 900px; border: 0; display: block";
  frame.onload = function () {{
    var doc = frame.contentDocument, width = doc.documentElement.clientWidth, wide = [];
    doc.querySelectorAll("body *").forEach(function (el) {{
      var r = el.getBoundingClientRect();
      if (r.width > 0 && r.right > width + 0.5) wide.push(el.tagName + (el.id ? "#" + el.id : "") + " " + Math.round(r.right));
    }});
    out.push(page + " scroll=" + doc.documentElement.scrollWidth + " width=" + width + " wide=" + wide.slice(0, 5).join(","));
    if (--left === 0) document.getElementById("probe").textContent = out.sort().join("\n");
  }};
  frame.src = page;
  document.body.appendChild(frame);
}});
</script></body></html>
"##,
        pages = serde_json::to_string(&all).expect("JSON")
    );
    std::fs::write(site.join("probe.html"), probe).expect("write the probe");
    let out = headless(&profile)
        .args(["--allow-file-access-from-files", "--window-size=900,900", "--dump-dom"])
        .arg(format!("file://{}/probe.html", site.display()))
        .output()
        .expect("chromium runs");
    let html = String::from_utf8_lossy(&out.stdout);
    let _ = std::fs::remove_dir_all(&profile);
    let measured = html.split("<output id=\"probe\">").nth(1).and_then(|r| r.split("</output>").next()).unwrap_or("");
    let lines: Vec<&str> = measured.lines().collect();
    assert_eq!(lines.len(), all.len(), "every page measured: {measured}\n{}", String::from_utf8_lossy(&out.stderr));
    let mut wide = Vec::new();
    for line in lines {
        let n = |key: &str| -> u32 {
            line.split(key).nth(1).and_then(|r| r.split(' ').next()).and_then(|v| v.parse().ok()).expect("a number")
        };
        let (scroll, width) = (n("scroll="), n("width="));
        assert!(width <= 800 && width > 700, "{line}: the frame is the window");
        if scroll > width || !line.ends_with("wide=") {
            wide.push(line);
        }
    }
    assert!(wide.is_empty(), "pages wider than 800 pixels:\n{}", wide.join("\n"));
}

/// The site is split: no page holds the whole reference, and every link
/// between its pages leads to an element that is there.
#[test]
fn the_html_reference_is_split_into_pages_whose_links_all_resolve() {
    let site = site("doc-site-links");
    let all = pages(&site);
    assert!(all.len() > 5, "a page per part at least: {:?}", all.iter().map(|(n, _)| n).collect::<Vec<_>>());
    for (name, text) in &all {
        assert!(text.len() < 400_000, "{name} is {} bytes", text.len());
        for link in text.split("href=\"").skip(1) {
            let target = &link[..link.find('"').expect("a closed attribute")];
            if target.ends_with(".css") || target.starts_with("http") {
                continue;
            }
            let (page, anchor) = target.split_once('#').unwrap_or((target, ""));
            let page = if page.is_empty() { name.as_str() } else { page };
            let held = &all.iter().find(|(n, _)| n == page).unwrap_or_else(|| panic!("{name}: no page {page}")).1;
            assert!(
                anchor.is_empty() || held.contains(&format!(" id=\"{anchor}\"")),
                "{name}: `{target}` leads nowhere"
            );
        }
    }
    let index = std::fs::read_to_string(site.join("search-index.js")).expect("the search index");
    assert!(index.contains("\"page\":\"rules-topology.html\""), "each entry names its page");
}

/// Node.js (which tests/tree_sitter.rs needs too), or the test fails saying so.
fn node() -> PathBuf {
    let node = std::env::var_os("GRAIL_NODE").map(PathBuf::from).unwrap_or_else(|| PathBuf::from("node"));
    let found = Command::new(&node).arg("--version").output();
    assert!(
        found.as_ref().is_ok_and(|o| o.status.success()),
        "this test needs Node.js (as tests/tree_sitter.rs does), or GRAIL_NODE naming it"
    );
    node
}

/// The names `rank` of the site's `search.js` gives for each query, in
/// order, over `index` (JSON; `null` for the site's own index).
fn ranked(site: &Path, index: &str, queries: &[&str]) -> Vec<Vec<String>> {
    let script = format!(
        r#"const {{ rank }} = require({search});
const vm = require("vm"), fs = require("fs");
let index = {index};
if (index === null) {{
  const sandbox = {{ window: {{}} }};
  vm.runInNewContext(fs.readFileSync({site_index}, "utf8"), sandbox);
  index = sandbox.window.GRAIL_INDEX;
}}
console.log(JSON.stringify({queries}.map(q => rank(index, q).map(e => e.name))));
"#,
        search = serde_json::to_string(&site.join("search.js")).expect("JSON"),
        site_index = serde_json::to_string(&site.join("search-index.js")).expect("JSON"),
        queries = serde_json::to_string(queries).expect("JSON"),
    );
    let out = Command::new(node()).arg("-e").arg(&script).output().expect("node runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).expect("the ranked names")
}

/// Issue 41, item 8: the search ranks what it finds: the entry whose id is
/// the query first, then the ids that start with it, then those holding its
/// words, then the entries whose summary holds them, then the rest; in the
/// reference's order within each. `rank` of the generated search.js, run by
/// Node.js on a small index and on the shipped library's.
#[test]
fn the_search_ranks_exact_ids_then_prefixes_then_summaries() {
    let site = site("doc-site-rank");
    let entry = |name: &str, summary: &str, text: &str| serde_json::json!({"id": format!("rule-{name}"), "name": name, "kind": "rule", "page": "x.html", "summary": summary, "text": text});
    let index = serde_json::json!([
        entry("merge.ceiling", "The merge policy stays under the ceiling.", "reads merge_policy"),
        entry("topology.checker_count_floor", "Counts of checkers.", ""),
        entry("other.rule", "Nothing about it here.", "the checker count is read here"),
        entry("topology.checker_count", "Enough checking roles: distinct names.", ""),
        entry("count.checker", "A checker named once.", ""),
        entry("summary.rule", "Each checker count is distinct.", ""),
    ])
    .to_string();
    let got = ranked(&site, &index, &["topology.checker_count", "TOPOLOGY.", "checker count", "nothing-like-it", "  "]);
    assert_eq!(got[0], ["topology.checker_count", "topology.checker_count_floor"], "exact, then prefix");
    assert_eq!(got[1], ["topology.checker_count_floor", "topology.checker_count"], "a prefix, in order, any case");
    assert_eq!(
        got[2],
        ["topology.checker_count_floor", "topology.checker_count", "count.checker", "summary.rule", "other.rule"],
        "words in the id, then in the summary, then anywhere"
    );
    assert!(got[3].is_empty() && got[4].is_empty());

    let got = ranked(&site, "null", &["topology.checker_count", "slot", "topology", "merge"]);
    assert_eq!(got[0][0], "topology.checker_count");
    assert_eq!(got[1][0], "Slot", "the record named by the query first");
    assert_eq!(got[2][0], "Topology");
    let prefixed = got[2].iter().skip(1).take_while(|n| n.starts_with("topology")).count();
    assert!(prefixed > 10, "the topology rules come next: {:?}", &got[2][..12]);
    assert!(got[2].iter().skip(1 + prefixed).all(|n| !n.to_lowercase().starts_with("topology")), "{:?}", got[2]);
    let merge = |n: &String| n.to_lowercase().starts_with("merge");
    let first_other = got[3].iter().position(|n| !merge(n)).unwrap_or(got[3].len());
    assert!(got[3][..first_other].contains(&"merge.ceiling".to_string()), "{:?}", &got[3][..first_other]);
    assert!(got[3][first_other..].iter().all(|n| !merge(n)), "{:?}", got[3]);
}
