//! The generic built-ins over the values a real contract holds (addresses,
//! networks, host names, paths, instants, attached bytes), each edge case
//! as twin documents one token apart: one fails (or is unknown), one passes.
//! The policies are the tests' own: which ranges, hosts or paths are
//! forbidden is policy, never the engine's.

use grail_engine::db::{GivenFile, check_deployment, compile_policy};
use grail_engine::{Database, Deployment, Outcome, PolicySet, SourceText};

/// The outcome of `rule` checking the one document `doc` (YAML) against `policy`,
/// with files given under recorded paths as raw bytes (`--attach`).
#[track_caller]
fn judge(policy: &str, rule: &str, doc: &str, given: &[(&str, &[u8])]) -> (Outcome, String) {
    let db = Database::default();
    let set = PolicySet::new(&db, vec![SourceText::new(&db, "policy.grail".into(), policy.into(), None)]);
    let compiled = compile_policy(&db, set);
    assert!(!compiled.has_errors(), "the policy compiles: {:#?}", compiled.diagnostics);
    let documents = vec![SourceText::new(&db, "doc.yaml".into(), doc.into(), None)];
    let given = given
        .iter()
        .map(|(recorded, bytes)| GivenFile {
            recorded: recorded.to_string(),
            read: Ok(SourceText::from_bytes(&db, format!("local/{recorded}"), bytes.to_vec())),
        })
        .collect();
    let deployment = Deployment::builder(documents, Vec::new()).given(given).new(&db);
    let report = check_deployment(&db, set, deployment);
    report
        .findings
        .iter()
        .find(|f| f.rule == rule)
        .map(|f| (f.outcome, f.message.clone()))
        .unwrap_or_else(|| panic!("no finding of {rule}: {:#?}", report.findings))
}

/// The policy: one document kind with a string field `v`, and `rules`.
fn policy(rules: &str) -> String {
    format!(
        r#"
document Doc as doc where kind absent {{
  on syntax rule doc.syntax
  on duplicate_key rule doc.duplicate_key
  on unknown_key rule doc.unknown_key
  on type rule doc.type
  v: string
  w?: string
}}
{rules}
"#
    )
}

/// Each `(failing, passing)` pair of values of `v` gives `rule` a FAIL and a PASS.
#[track_caller]
fn twins(rules: &str, rule: &str, pairs: &[(&str, &str)]) {
    let p = policy(rules);
    for (bad, good) in pairs {
        let doc = |v: &str| format!("v: {}\n", serde_json::to_string(v).unwrap());
        let (o, m) = judge(&p, rule, &doc(bad), &[]);
        assert_eq!(o, Outcome::Fail, "`{bad}` fails {rule}: {m}");
        let (o, m) = judge(&p, rule, &doc(good), &[]);
        assert_eq!(o, Outcome::Pass, "`{good}` passes {rule}: {m}");
    }
}

/// `v` gives `rule` an UNKNOWN (missing evidence, never a pass), and its twin a PASS.
#[track_caller]
fn unknown_twins(rules: &str, rule: &str, pairs: &[(&str, &str)]) {
    let p = policy(rules);
    for (bad, good) in pairs {
        let doc = |v: &str| format!("v: {}\n", serde_json::to_string(v).unwrap());
        let (o, m) = judge(&p, rule, &doc(bad), &[]);
        assert_eq!(o, Outcome::Unknown, "`{bad}` is unknown to {rule}: {m}");
        let (o, m) = judge(&p, rule, &doc(good), &[]);
        assert_eq!(o, Outcome::Pass, "`{good}` passes {rule}: {m}");
    }
}

const LOOPBACK: &str = r#"
rule addr.no_loopback
  let a = ip(doc.v) ?? host_ip(doc.v)
  require absent(a)
    or not (a in net("127.0.0.0/8") or (some x in embedded_ipv4(a): x in net("127.0.0.0/8")))
    else fail "`{doc.v}` is a loopback address"
rule addr.in_doc_net
  require ip(doc.v) in net("2001:db8::/32") else fail "`{doc.v}` is outside"
rule addr.not_in
  require ip(doc.v) not in net("10.0.0.0/8") else fail "`{doc.v}` is inside"
"#;

#[test]
fn addresses_belong_to_networks_however_they_are_written() {
    twins(
        LOOPBACK,
        "addr.no_loopback",
        &[
            ("127.0.0.1", "128.0.0.1"),
            // A host written as a number, as browsers and curl read it.
            ("2130706433", "2147483648"),
            ("0x7f.1", "0x80.1"),
            ("127.1", "128.1"),
            ("017700000001", "020000000001"),
            ("127.0.0.1.", "128.0.0.1."),
            // IPv4 inside IPv6: mapped, compatible, 6to4, NAT64 (both prefixes), Teredo's client.
            ("::ffff:127.0.0.1", "::ffff:128.0.0.1"),
            ("::127.0.0.1", "::128.0.0.1"),
            ("2002:7f00:1::", "2002:8000:1::"),
            ("64:ff9b::127.0.0.1", "64:ff9b::128.0.0.1"),
            ("64:ff9b:1::127.0.0.1", "64:ff9b:1::128.0.0.1"),
            ("2001:0:4136:e378:8000:63bf:80ff:fffe", "2001:0:4136:e378:8000:63bf:7fff:fffe"),
            ("[::ffff:7f00:1]", "[::ffff:8000:1]"),
        ],
    );
    // A name is not an address: the rule passes it (another rule judges names).
    let (o, _) = judge(&policy(LOOPBACK), "addr.no_loopback", "v: egress.example.com\n", &[]);
    assert_eq!(o, Outcome::Pass);
    twins(LOOPBACK, "addr.in_doc_net", &[("2001:db9::1", "2001:db8::1"), ("10.0.0.1", "2001:DB8:0:0::1")]);
    twins(LOOPBACK, "addr.not_in", &[("10.255.0.1", "11.0.0.1"), ("10.0.0.1", "::ffff:10.0.0.1")]);
    // A value that is not an address: the membership is missing evidence, never a silent false.
    unknown_twins(LOOPBACK, "addr.not_in", &[("0x0a.1", "11.0.0.1"), ("11.0.0.01", "11.0.0.1")]);
}

#[test]
fn a_network_written_by_a_document_is_read_strictly() {
    let rules = r#"
rule net.holds
  require ip("10.1.2.3") in net(doc.v) else fail "`{doc.v}` does not hold it"
"#;
    twins(rules, "net.holds", &[("10.2.0.0/16", "10.1.0.0/16"), ("::/0", "0.0.0.0/0")]);
    // Host bits set, a length past the width, a leading zero: not a network.
    unknown_twins(
        rules,
        "net.holds",
        &[("10.1.0.1/16", "10.1.0.0/16"), ("10.0.0.0/33", "10.0.0.0/8"), ("10.0.0.0/08", "10.0.0.0/8")],
    );
}

#[test]
fn literals_are_checked_when_the_policy_compiles() {
    for (text, code, says) in [
        ("net(\"10.0.0.1/8\")", "bad-network", "the network is `10.0.0.0/8`"),
        ("net(\"10.0.0.0/33\")", "bad-network", "prefix length"),
        ("net(\"example.com/8\")", "bad-network", "not an IPv4 or IPv6 address"),
        ("ip(\"127.1\")", "bad-address", "not an IP address"),
        ("hostname(\"a..b\")", "bad-hostname", "not a host name"),
        ("in_domain(doc.v, \"example..com\")", "bad-hostname", "not a host name"),
        ("path_under(doc.v, \"C:x\")", "bad-path", "not a path"),
    ] {
        let text = policy(&format!("rule t.lit\n  require present({text}) else fail \"x\"\n"));
        let db = Database::default();
        let set = PolicySet::new(&db, vec![SourceText::new(&db, "p.grail".into(), text, None)]);
        let compiled = compile_policy(&db, set);
        let d = compiled
            .diagnostics
            .iter()
            .find(|d| d.code == code)
            .unwrap_or_else(|| panic!("{code}: {:#?}", compiled.diagnostics));
        assert!(d.message.contains(says), "{}", d.message);
    }
}

#[test]
fn host_names_are_normalised_and_their_labels_checked() {
    let rules = r#"
rule host.valid
  require present(hostname(doc.v)) else fail "`{doc.v}` is not a host name"
rule host.allowed
  require in_domain(doc.v, "example.com") else fail "`{doc.v}` is outside example.com"
rule host.not_internal
  require tld(doc.v) != "internal" else fail "`{doc.v}` is internal"
rule host.normal
  require hostname(doc.v) == "egress.example.com" else fail "`{doc.v}` is another host"
"#;
    let long = "a".repeat(64);
    let fits = "a".repeat(63);
    twins(
        rules,
        "host.valid",
        &[
            ("egress..example.com", "egress.example.com"),
            (&format!("{long}.example.com"), &format!("{fits}.example.com")),
            ("egress.example.com..", "egress.example.com."),
            (".example.com", "x.example.com"),
            ("-egress.example.com", "e-gress.example.com"),
            ("egress-.example.com", "egress.example.com"),
            ("127.1", "127.a"),
        ],
    );
    twins(rules, "host.allowed", &[("evil-example.com", "evil.example.com"), ("example.com.evil.net", "example.com.")]);
    twins(rules, "host.not_internal", &[("db.INTERNAL.", "db.internat.")]);
    twins(rules, "host.normal", &[("Egress.Example.CON.", "Egress.Example.COM.")]);
    unknown_twins(rules, "host.normal", &[("Egress.Example.COM..", "Egress.Example.COM.")]);
}

#[test]
fn paths_are_under_a_root_by_whole_segments() {
    let rules = r#"
rule path.evidence
  require path_under(doc.v, "evidence") else fail "`{doc.v}` is not under evidence"
rule path.abs
  require path_under(doc.v, "/a/b") else fail "`{doc.v}` is not under /a/b"
rule path.drive
  require path_under(doc.v, "c:\\data") else fail "`{doc.v}` is not under C:/data"
rule path.unc
  require path_under(doc.v, "//srv/share") else fail "`{doc.v}` is not under the share"
rule path.normal
  require normalize_path(doc.v) == "../x" else fail "`{doc.v}` is `{normalize_path(doc.v)}`"
rule path.depth
  require count(path_parts(doc.v)) == 3 else fail "`{doc.v}` has not three parts"
"#;
    twins(
        rules,
        "path.evidence",
        &[
            ("evidence/../secrets/x", "evidence/./secrets/x"),
            ("../evidence/x", "./evidence/x"),
            ("evidence2/x", "evidence/x"),
            ("evidence/../../evidence/x", "evidence/../evidence/x"),
            ("evidence\\..\\secrets", "evidence\\.\\secrets"),
        ],
    );
    twins(rules, "path.abs", &[("/a/bc", "/a/b/c"), ("/a/b/../c", "/a/b/./c"), ("/a//b/../../a/c", "/a//b/../../a/b")]);
    twins(rules, "path.drive", &[("D:\\data\\x", "C:\\data\\x"), ("c:/date/x", "c:/data/x")]);
    twins(rules, "path.unc", &[("\\\\srv\\sharf\\x", "\\\\SRV\\share\\x"), ("//srv/other/../x", "//srv/share/../x")]);
    // A `..` stays at a root (`//srv/share/..` is the share), and above a relative start is kept, never dropped.
    twins(rules, "path.normal", &[("a/../x", "a/../../x")]);
    twins(rules, "path.depth", &[("a/b", "/a/b"), ("C:/a", "C:/a/b"), ("//h/s/a/b/c", "//h/s/a/b")]);
    // A relative path against an absolute root: where it lies is not in the text.
    unknown_twins(rules, "path.abs", &[("a/b/c", "/a/b/c")]);
    unknown_twins(rules, "path.evidence", &[("C:evidence/x", "evidence/x")]);
}

#[test]
fn instants_are_strict_exact_and_never_clamped() {
    let rules = r#"
rule time.before
  require timestamp(doc.v) < timestamp("2026-03-01T00:00:00Z") else fail "`{doc.v}` is late"
rule time.sub_milli
  require timestamp(doc.v) < timestamp("2026-01-01T00:00:00.0002Z") else fail "`{doc.v}` is late"
rule time.strict
  require timestamp_millis(doc.v) < timestamp_millis("2026-03-01T00:00:00Z") else fail "`{doc.v}` is late"
"#;
    // Sub-millisecond fractions are kept: .0002 is not before .0002, .0001 is.
    twins(rules, "time.sub_milli", &[("2026-01-01T00:00:00.0002Z", "2026-01-01T00:00:00.0001Z")]);
    twins(rules, "time.before", &[("2026-03-01T00:00:00Z", "2026-02-28T23:59:59.999999999Z")]);
    unknown_twins(
        rules,
        "time.before",
        &[
            ("2026-02-30T00:00:00Z", "2026-02-28T00:00:00Z"),
            // A leap second is refused, never read as :59 (which would pass).
            ("2026-02-28T23:59:60Z", "2026-02-28T23:59:59Z"),
            ("2026-02-28T23:59:59", "2026-02-28T23:59:59Z"),
            ("2026-02-28T23:59:59+1:00", "2026-02-28T23:59:59+01:00"),
        ],
    );
    unknown_twins(
        rules,
        "time.strict",
        &[("2026-02-28T23:59:59.0001Z", "2026-02-28T23:59:59.001Z"), ("2026-02-28T23:59:60Z", "2026-02-28T23:59:59Z")],
    );
}

fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest as _;
    sha2::Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect()
}

#[test]
fn attached_files_are_hashed_over_their_exact_bytes() {
    let p = policy(
        r#"
rule file.hash
  require sha256(attached(doc.v)) == doc.w else fail "`{doc.v}` differs"
rule file.text
  require text(attached(doc.v)) != "" else fail "`{doc.v}` is empty"
"#,
    );
    let doc = |hash: &str| format!("v: /out/blob.bin\nw: \"{hash}\"\n");
    let utf16: &[u8] = &[0xff, 0xfe, b'o', 0, b'k', 0];
    for bytes in [&[0x00, 0xff, 0x80, b'a', 0xc3][..], utf16, b"ok\n"] {
        let given = [("/out/blob.bin", bytes)];
        let (o, m) = judge(&p, "file.hash", &doc(&sha256_hex(bytes)), &given);
        assert_eq!(o, Outcome::Pass, "{bytes:?}: {m}");
        // The hash of what a lossy decoding would read is not the file's.
        let lossy = String::from_utf8_lossy(bytes);
        let (o, m) = judge(&p, "file.hash", &doc(&sha256_hex(lossy.as_bytes())), &given);
        assert_eq!(o, if lossy.as_bytes() == bytes { Outcome::Pass } else { Outcome::Fail }, "{bytes:?}: {m}");
    }
    // The text of a file that is not UTF-8 is not established: never a lossy decoding a rule passes on.
    let (o, m) = judge(&p, "file.text", &doc(""), &[("/out/blob.bin", &[b'o', 0xff])]);
    assert_eq!(o, Outcome::Unknown, "{m}");
    assert!(m.contains("not UTF-8 text"), "{m}");
    let (o, m) = judge(&p, "file.text", &doc(""), &[("/out/blob.bin", b"ok")]);
    assert_eq!(o, Outcome::Pass, "{m}");
}

#[test]
fn one_line_is_replaced_by_its_index_every_line_end_kept() {
    let p = policy(
        r#"
rule text.one_line
  require replace_line(doc.v, 1, "X") == doc.w else fail "`{doc.v}` is not `a`, a line, `c`"
"#,
    );
    let doc = |v: &str| format!("v: {}\nw: \"a\\nX\\r\\nc\"\n", serde_json::to_string(v).unwrap());
    // A last line end added, a line that is not there, another line changed: each fails its twin's test.
    for (bad, good) in [("a\nb\r\nc\n", "a\nb\r\nc"), ("a", "a\n  b\r\nc"), ("a \nb\r\nc", "a\nb\r\nc")] {
        let (o, m) = judge(&p, "text.one_line", &doc(bad), &[]);
        assert_eq!(o, Outcome::Fail, "{bad:?}: {m}");
        let (o, m) = judge(&p, "text.one_line", &doc(good), &[]);
        assert_eq!(o, Outcome::Pass, "{good:?}: {m}");
    }
}
