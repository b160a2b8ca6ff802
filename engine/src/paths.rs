//! File paths read by their text alone, for `normalize_path`, `path_parts`
//! and `path_under`: no file system is asked (a document's paths are often
//! on another machine). Back slashes are slashes; the root is `/`, a drive
//! `C:/` (its letter in upper case, `c:\` alike) or a UNC share
//! `//host/share/` (the host in lower case); repeated slashes and `.` go;
//! `..` takes away the segment before it. A `..` at a root stays at the
//! root (`/..` is `/`); a `..` that climbs above the start of a relative
//! path is kept (`a/../../x` is `../x`), never dropped. Which paths are
//! allowed is the policy's to say.

/// A path: its root (empty for a relative path) and its segments.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Path {
    pub root: String,
    pub segments: Vec<String>,
}

/// `p` read as a path; `None` for an empty text, a control character
/// (NUL included), a drive-relative path (`C:x`), a UNC path without its
/// share (`//host`), and the device and verbatim forms `//./` and `//?/`.
pub fn parse(p: &str) -> Option<Path> {
    if p.is_empty() || p.chars().any(char::is_control) {
        return None;
    }
    let p = p.replace('\\', "/");
    let (root, rest) = root(&p)?;
    let absolute = !root.is_empty();
    let mut segments: Vec<String> = Vec::new();
    for s in rest.split('/') {
        match s {
            "" | "." => {}
            ".." => match segments.last() {
                Some(last) if last != ".." => {
                    segments.pop();
                }
                _ if absolute => {}
                _ => segments.push("..".into()),
            },
            _ => segments.push(s.into()),
        }
    }
    Some(Path { root, segments })
}

impl Path {
    /// Whether the path climbs above the start of a relative path (`../x`):
    /// it leads out of whatever folder it is read against.
    pub fn climbs(&self) -> bool {
        self.root.is_empty() && self.segments.first().is_some_and(|s| s == "..")
    }
}

/// The root of `p` (slashes already forward) and what follows it.
fn root(p: &str) -> Option<(String, &str)> {
    let b = p.as_bytes();
    if p.starts_with("//") && !p.starts_with("///") {
        let mut parts = p[2..].splitn(3, '/');
        let host = parts.next().filter(|h| !h.is_empty() && !matches!(*h, "." | ".." | "?"))?;
        let share = parts.next().filter(|s| !s.is_empty() && !matches!(*s, "." | ".."))?;
        return Some((format!("//{}/{share}/", host.to_lowercase()), parts.next().unwrap_or("")));
    }
    if p.starts_with('/') {
        return Some(("/".into(), p));
    }
    if b.len() >= 2 && b[0].is_ascii_alphabetic() && b[1] == b':' {
        // `C:x` is relative to the drive's current folder, which a text does not know.
        if b.get(2) != Some(&b'/') {
            return None;
        }
        return Some((format!("{}:/", (b[0] as char).to_ascii_uppercase()), &p[2..]));
    }
    Some((String::new(), p))
}

impl std::fmt::Display for Path {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.root.is_empty() && self.segments.is_empty() {
            return f.write_str(".");
        }
        write!(f, "{}{}", self.root, self.segments.join("/"))
    }
}

/// `normalize_path(p)`.
pub fn normalize(p: &str) -> Option<String> {
    parse(p).map(|p| p.to_string())
}

/// `path_parts(p)`: the root, when there is one, then every segment.
pub fn parts(p: &str) -> Option<Vec<String>> {
    let p = parse(p)?;
    Some(if p.root.is_empty() { p.segments } else { std::iter::once(p.root).chain(p.segments).collect() })
}

/// `path_under(p, root)`: `p` is `root` or below it, decided on whole
/// segments of both paths normalised (`/a/bc` is not under `/a/b`;
/// `docs/../private/x` is not under `docs`; `../x` is not under
/// `.`). `None` when either is not a path, or when one is relative and the
/// other not: where a relative path lies depends on a folder the text does
/// not name (resolve it first: `resolve_path`).
pub fn under(p: &str, root: &str) -> Option<bool> {
    let (p, r) = (parse(p)?, parse(root)?);
    if p.root.is_empty() != r.root.is_empty() {
        return None;
    }
    Some(
        p.root == r.root
            && p.segments.len() >= r.segments.len()
            && p.segments[..r.segments.len()] == r.segments[..]
            && !p.segments[r.segments.len()..].iter().any(|s| s == ".."),
    )
}

#[cfg(test)]
mod tests {
    use super::{normalize, parse, parts, under};

    #[test]
    fn normalises_by_the_text() {
        for (p, n) in [
            ("/a/./b/../c", "/a/c"),
            ("a//b///c/", "a/b/c"),
            ("a\\b\\..\\c", "a/c"),
            ("/..", "/"),
            ("/../etc/passwd", "/etc/passwd"),
            ("a/../../x", "../x"),
            ("../../x", "../../x"),
            ("./", "."),
            ("a/..", "."),
            ("C:/Users/../Windows", "C:/Windows"),
            ("c:\\Windows\\System32", "C:/Windows/System32"),
            ("C:/..", "C:/"),
            ("//Server/share/a/../b", "//server/share/b"),
            ("\\\\server\\share\\..\\..\\x", "//server/share/x"),
            ("///a", "/a"),
        ] {
            assert_eq!(normalize(p).as_deref(), Some(n), "{p}");
        }
        for bad in ["", "C:x", "c:", "//server", "//server/", "\\\\?\\C:\\x", "//./pipe/x", "a\0b", "a\nb", "a:b/c"] {
            assert_eq!(normalize(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn a_relative_path_that_leaves_its_folder_climbs() {
        for (p, climbs) in [("../x", true), ("a/../../x", true), ("a/../x", false), ("/../x", false), ("..", true)] {
            assert_eq!(parse(p).map(|p| p.climbs()), Some(climbs), "{p}");
        }
    }

    #[test]
    fn parts_carry_the_root() {
        assert_eq!(parts("/a/b").unwrap(), ["/", "a", "b"]);
        assert_eq!(parts("a/b").unwrap(), ["a", "b"]);
        assert_eq!(parts("c:\\x").unwrap(), ["C:/", "x"]);
        assert_eq!(parts("//h/s/x").unwrap(), ["//h/s/", "x"]);
        assert_eq!(parts(".").unwrap(), Vec::<String>::new());
    }

    #[test]
    fn under_is_decided_on_segments() {
        assert_eq!(under("/a/b/c", "/a/b"), Some(true));
        assert_eq!(under("/a/b", "/a/b/"), Some(true));
        assert_eq!(under("/a/bc", "/a/b"), Some(false));
        assert_eq!(under("docs/../private/x", "docs"), Some(false));
        assert_eq!(under("evidence/./run/x", "evidence"), Some(true));
        assert_eq!(under("../x", "."), Some(false));
        assert_eq!(under("../a/x", "../a"), Some(true));
        assert_eq!(under("../../a", ".."), Some(false));
        assert_eq!(under("C:\\data\\x", "c:/data"), Some(true));
        assert_eq!(under("D:/data/x", "C:/data"), Some(false));
        assert_eq!(under("//srv/share/x", "//SRV/share"), Some(true));
        assert_eq!(under("//srv/other/x", "//srv/share"), Some(false));
        assert_eq!(under("/a/../../etc", "/a"), Some(false));
        assert_eq!(under("a/x", "/a"), None);
        assert_eq!(under("", "/a"), None);
    }
}
