//! The prebuilt library (`grail_engine::prebuilt`): what it gives is what
//! compiling the source gives, and it is used for exactly the files it was
//! built from. One test: installing a blob is process-wide.

use grail_engine::db::{QueryLog, compile_policy};
use grail_engine::{Database, PolicySet, SourceText, prebuilt};

fn shipped_set(db: &Database, edit: impl Fn(&str, &str) -> String) -> PolicySet {
    let files = grail_engine::shipped::FILES
        .iter()
        .map(|(p, t)| SourceText::new(db, p.to_string(), edit(p, t), None))
        .collect();
    PolicySet::new(db, files)
}

fn parsed_any(log: &QueryLog) -> bool {
    log.lock().expect("log lock").iter().any(|l| l.starts_with("parse_policy"))
}

#[test]
fn the_prebuilt_library_is_the_compiled_library_and_only_for_its_own_files() {
    // From source, before anything is installed.
    let (db, log) = Database::with_log();
    let from_source = compile_policy(&db, shipped_set(&db, |_, t| t.to_string())).clone();
    assert!(from_source.diagnostics.is_empty(), "{:?}", from_source.diagnostics);
    assert!(parsed_any(&log));

    // A policy with an error is never prebuilt.
    assert_eq!(prebuilt::encode(&[("bad.grail", "rule a.b require nope else fail \"x\"")]), None);

    let files: Vec<(&str, &str)> = grail_engine::shipped::FILES.to_vec();
    let blob: &'static [u8] = Box::leak(prebuilt::encode(&files).expect("the shipped library compiles").into());
    assert!(!prebuilt::installed());
    assert!(prebuilt::install(blob));
    assert!(!prebuilt::install(blob), "the first blob installed stays");

    // The same files: the prebuilt policy, equal to the compiled one, nothing parsed.
    let (db, log) = Database::with_log();
    let prebuilt = compile_policy(&db, shipped_set(&db, |_, t| t.to_string())).clone();
    assert!(!parsed_any(&log), "the prebuilt library was not used");
    assert_eq!(prebuilt, from_source);

    // One changed byte (a comment: the meaning is the same) and the source is compiled.
    let (db, log) = Database::with_log();
    let edited =
        shipped_set(&db, |p, t| if p.ends_with("/matrix.grail") { format!("{t}// edited\n") } else { t.to_string() });
    let recompiled = compile_policy(&db, edited).clone();
    assert!(parsed_any(&log), "an edited library must be compiled from its source");
    assert_eq!(recompiled.policy.rules.len(), from_source.policy.rules.len());

    // The same texts under other paths (a `--policy` folder holding a copy) are compiled too.
    let (db, log) = Database::with_log();
    let files = grail_engine::shipped::FILES
        .iter()
        .map(|(p, t)| SourceText::new(&db, format!("copy/{p}"), t.to_string(), None))
        .collect();
    let _ = compile_policy(&db, PolicySet::new(&db, files));
    assert!(parsed_any(&log));

    // Fewer files: compiled.
    let (db, log) = Database::with_log();
    let _ = compile_policy(&db, PolicySet::new(&db, grail_engine::shipped::sources(&db)[1..].to_vec()));
    assert!(parsed_any(&log));
}

/// A cached blob (`grail --policy DIR`) is used only for exactly its files:
/// any changed byte of any path or text, and any truncated or corrupted
/// blob, is refused, so the policy compiles from source.
#[test]
fn a_cached_blob_holds_exactly_its_files_whole() {
    // tests/policies/unknown/policy.grail, which compiles without a diagnostic.
    let text = "/// A policy whose one rule reports missing evidence as UNKNOWN.\ndocument Doc as doc where kind absent {\n  on syntax rule t.syntax\n  on duplicate_key rule t.duplicate_key\n  on unknown_key rule t.unknown_key\n  on type rule t.type\n  evidence?: bool\n}\n\nrule t.evidence\n  require doc.evidence else fail \"the evidence says no\"\n";
    let files =
        [("policy/one.grail", text), ("policy/two.grail", "rule t.other\n  require doc.evidence else fail \"no\"\n")];
    let blob = prebuilt::encode(&files).expect("the policy compiles");
    assert!(prebuilt::holds(&blob, &files));

    // Every byte of every path and text, changed.
    for (f, (path, text)) in files.iter().enumerate() {
        for (part, bytes) in [(0, path.as_bytes()), (1, text.as_bytes())] {
            for i in 0..bytes.len() {
                let mut changed = bytes.to_vec();
                changed[i] = if changed[i] == b'a' { b'b' } else { b'a' };
                let changed = String::from_utf8(changed).expect("ascii");
                let mut other = files;
                if part == 0 {
                    other[f].0 = &changed;
                } else {
                    other[f].1 = &changed;
                }
                assert!(!prebuilt::holds(&blob, &other), "file {f} part {part} byte {i}");
            }
        }
    }
    // A file more or less, or in another order.
    assert!(!prebuilt::holds(&blob, &files[..1]));
    assert!(!prebuilt::holds(&blob, &[files[1], files[0]]));
    assert!(!prebuilt::holds(&blob, &[files[0], files[1], files[1]]));

    // Every truncation, and every byte of the blob flipped that changes what
    // it holds or leaves it undecodable.
    for len in 0..blob.len() {
        assert!(!prebuilt::holds(&blob[..len], &files), "truncated to {len} bytes");
    }
    let mut longer = blob.clone();
    longer.push(0);
    assert!(!prebuilt::holds(&longer, &files), "a byte after the policy");
    let header = postcard::to_stdvec(&files).expect("encodes").len();
    for i in 0..header {
        let mut corrupt = blob.clone();
        corrupt[i] ^= 0x20;
        assert!(!prebuilt::holds(&corrupt, &files), "header byte {i} flipped");
    }
}
