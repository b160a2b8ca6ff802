//! The one reader of documents and attachments (`grail_workspace::read`),
//! which the command line and the language server share: a FIFO is refused
//! without being opened, an attachment is read once however many fields name
//! it, and the attachments of a check hold at most a budget together.

use std::path::Path;
use std::sync::mpsc;
use std::time::Duration;

use grail_workspace::{Attacher, read_source};

fn temp(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("grail-read-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a temporary folder");
    dir
}

#[cfg(unix)]
#[test]
fn a_fifo_named_as_a_document_is_refused_without_waiting_for_a_writer() {
    let dir = temp("fifo");
    let fifo = dir.join("binding.yaml");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status().expect("mkfifo runs");
    assert!(made.success());
    let (tx, rx) = mpsc::channel();
    let path = fifo.clone();
    std::thread::spawn(move || {
        let _ = tx.send(read_source(&path, "binding.yaml", 1 << 20).map(|_| ()));
    });
    let read = rx.recv_timeout(Duration::from_secs(5)).expect("the reader returned instead of blocking on the FIFO");
    let message = read.expect_err("a FIFO is not a document");
    assert_eq!(message, "cannot read `binding.yaml`: it is a FIFO, not a regular file; grail reads files only");
    // As an attachment too.
    std::fs::write(dir.join("doc.yaml"), "x: 1\n").expect("a document");
    let mut attacher = Attacher::new(1 << 20);
    let refused = attacher.attach("doc.yaml", &dir.join("doc.yaml"), "binding.yaml");
    assert_eq!(refused, Err("it is a FIFO, not a regular file".to_string()));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn an_attachment_is_read_once_and_the_attachments_share_one_budget() {
    let dir = temp("budget");
    let doc = dir.join("binding.yaml");
    std::fs::write(&doc, "x: 1\n").expect("a document");
    std::fs::write(dir.join("a.txt"), "a".repeat(600)).expect("an attachment");
    std::fs::write(dir.join("b.txt"), "b".repeat(600)).expect("another");
    let mut attacher = Attacher::new(1000);
    let first = attacher.attach("org/binding.yaml", &doc, "a.txt");
    let again = attacher.attach("org/binding.yaml", &doc, "./a.txt");
    assert_eq!(first, Ok(0));
    assert_eq!(again, Ok(0), "the same file under another spelling is the same attachment");
    let over = attacher.attach("org/binding.yaml", &doc, "b.txt").expect_err("600 + 600 bytes is over 1000");
    assert!(
        over.contains("may hold 1000 bytes together (`--max-total-size`) and 400 bytes of that are left"),
        "{over}"
    );
    let escape = attacher.attach("org/binding.yaml", &doc, "../binding.yaml");
    assert!(escape.is_err(), "{escape:?}");
    let files = attacher.into_files();
    assert_eq!(files.len(), 1);
    // Shown under the document's folder as it is shown, found under its folder on disk.
    assert_eq!(files[0].path, "org/a.txt");
    assert_eq!(files[0].text.len(), 600);
    assert!(Path::new(&dir).exists());
    let _ = std::fs::remove_dir_all(&dir);
}
