//! A one-pass reader for strict JSON, from bytes straight to a [`Node`] tree.
//!
//! It is only a fast path: it accepts a subset of what the general path (a prescan,
//! then jsonc-parser, then a conversion) accepts, and returns `None` for anything
//! else, so that the general path reports every error with its usual message and
//! span. On everything it accepts it must build exactly the tree the general path
//! builds, spans included: a string's span (a key's too) covers its quotes, an
//! array or an object runs from its opening to its closing bracket inclusive, and
//! numbers go through the same [`json_number`].

use super::{Entry, Node, NodeKind, Span, json_number};

/// The deepest nesting this reader handles. jsonc-parser has a nesting limit of its
/// own (512 ranges, where an object property counts as one more), so beyond this
/// depth the general path decides, whatever `max_depth` says.
const MAX_DEPTH: usize = 128;

/// Reads the JSON document that starts at byte `start` of `text` (after a byte
/// order mark, if any); spans are offsets into the whole of `text`. Returns `None`
/// when the reader is not sure it would produce what the general path produces.
pub(super) fn read(text: &str, start: usize, max_depth: usize) -> Option<Node> {
    let mut reader = Reader {
        text,
        bytes: text.as_bytes(),
        at: start,
        max_depth: max_depth.min(MAX_DEPTH),
        items: Vec::new(),
        entries: Vec::new(),
    };
    reader.skip_whitespace();
    let node = reader.value(0)?;
    reader.skip_whitespace();
    // Trailing content of any kind is left to the general path, which reports it.
    (reader.at == reader.bytes.len()).then_some(node)
}

struct Reader<'a> {
    text: &'a str,
    bytes: &'a [u8],
    at: usize,
    max_depth: usize,
    /// The items of the arrays being read, innermost last: each array's
    /// are moved out at its end into a list of their exact number, so no
    /// list is grown one item at a time.
    items: Vec<Node>,
    /// The same for the entries of the objects being read.
    entries: Vec<Entry>,
}

impl Reader<'_> {
    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.at).copied()
    }

    /// Skips the four whitespace characters of JSON; any other whitespace is an
    /// error the general path reports, so it stops the reader.
    fn skip_whitespace(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.peek() {
            self.at += 1;
        }
    }

    /// A value at `depth` containers deep; the reader stands on its first byte.
    fn value(&mut self, depth: usize) -> Option<Node> {
        let start = self.at;
        let kind = match self.peek()? {
            b'{' => self.object(depth)?,
            b'[' => self.array(depth)?,
            b'"' => NodeKind::Str(self.string()?),
            b't' => self.word(b"true", NodeKind::Bool(true))?,
            b'f' => self.word(b"false", NodeKind::Bool(false))?,
            b'n' => self.word(b"null", NodeKind::Null)?,
            b'-' | b'0'..=b'9' => self.number()?,
            _ => return None,
        };
        Some(Node { span: Span::new(start, self.at), kind })
    }

    /// A keyword. What follows it is checked by the caller, which accepts only
    /// whitespace, a comma, a closing bracket or the end, so `truex` is declined.
    fn word(&mut self, word: &[u8], kind: NodeKind) -> Option<NodeKind> {
        if self.bytes[self.at..].starts_with(word) {
            self.at += word.len();
            Some(kind)
        } else {
            None
        }
    }

    fn array(&mut self, depth: usize) -> Option<NodeKind> {
        // The general path refuses a container at depth `max_depth` and beyond.
        if depth >= self.max_depth {
            return None;
        }
        self.at += 1;
        self.skip_whitespace();
        if self.peek()? == b']' {
            self.at += 1;
            return Some(NodeKind::List(Vec::new()));
        }
        let first = self.items.len();
        loop {
            let item = self.value(depth + 1)?;
            self.items.push(item);
            self.skip_whitespace();
            match self.peek()? {
                b',' => {
                    self.at += 1;
                    self.skip_whitespace();
                }
                b']' => {
                    self.at += 1;
                    return Some(NodeKind::List(self.items.drain(first..).collect()));
                }
                _ => return None,
            }
        }
    }

    fn object(&mut self, depth: usize) -> Option<NodeKind> {
        if depth >= self.max_depth {
            return None;
        }
        self.at += 1;
        self.skip_whitespace();
        if self.peek()? == b'}' {
            self.at += 1;
            return Some(NodeKind::Map(Vec::new()));
        }
        let first = self.entries.len();
        loop {
            if self.peek()? != b'"' {
                return None;
            }
            let key_start = self.at;
            let key = self.string()?;
            let key_span = Span::new(key_start, self.at);
            self.skip_whitespace();
            if self.peek()? != b':' {
                return None;
            }
            self.at += 1;
            self.skip_whitespace();
            let value = self.value(depth + 1)?;
            // Duplicate keys are kept in order, as the general path does.
            self.entries.push(Entry { key, key_span, value });
            self.skip_whitespace();
            match self.peek()? {
                b',' => {
                    self.at += 1;
                    self.skip_whitespace();
                }
                b'}' => {
                    self.at += 1;
                    return Some(NodeKind::Map(self.entries.drain(first..).collect()));
                }
                _ => return None,
            }
        }
    }

    /// A string, unescaped; the reader stands on its opening quote. Quotes and
    /// backslashes are ASCII and never part of a longer UTF-8 sequence, so a byte
    /// loop finds them and the slices between them fall on character boundaries.
    fn string(&mut self) -> Option<String> {
        let start = self.at + 1;
        let mut at = start;
        // Eight bytes at a time past those that need no look: not a quote,
        // a backslash or a control character.
        while let Some(word) = self.bytes.get(at..at + 8) {
            if special(u64::from_le_bytes(word.try_into().unwrap_or_default())) {
                break;
            }
            at += 8;
        }
        // Most strings have no escape: find the end and copy them once.
        loop {
            match *self.bytes.get(at)? {
                b'"' => {
                    self.at = at + 1;
                    return Some(self.text[start..at].to_owned());
                }
                b'\\' => break,
                // A raw control character is an error the general path reports.
                byte if byte < 0x20 => return None,
                _ => at += 1,
            }
        }
        let mut out = String::with_capacity(at - start + 16);
        let mut segment = start;
        loop {
            match *self.bytes.get(at)? {
                b'"' => {
                    out.push_str(&self.text[segment..at]);
                    self.at = at + 1;
                    return Some(out);
                }
                b'\\' => {
                    out.push_str(&self.text[segment..at]);
                    let (c, len) = self.escape(at)?;
                    out.push(c);
                    at += len;
                    segment = at;
                }
                byte if byte < 0x20 => return None,
                _ => at += 1,
            }
        }
    }

    /// The character of the escape whose backslash is at byte `at`, and the
    /// escape's length in bytes.
    fn escape(&self, at: usize) -> Option<(char, usize)> {
        let c = match *self.bytes.get(at + 1)? {
            b'"' => '"',
            b'\\' => '\\',
            b'/' => '/',
            b'b' => '\u{8}',
            b'f' => '\u{c}',
            b'n' => '\n',
            b'r' => '\r',
            b't' => '\t',
            b'u' => return self.unicode_escape(at),
            _ => return None,
        };
        Some((c, 2))
    }

    /// A `\uXXXX` escape, or a surrogate pair of two; a lone surrogate is declined.
    fn unicode_escape(&self, at: usize) -> Option<(char, usize)> {
        let high = self.hex4(at + 2)?;
        if (0xD800..=0xDBFF).contains(&high) {
            if self.bytes.get(at + 6..at + 8)? != b"\\u" {
                return None;
            }
            let low = self.hex4(at + 8)?;
            if !(0xDC00..=0xDFFF).contains(&low) {
                return None;
            }
            let code = 0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00);
            return Some((char::from_u32(code)?, 12));
        }
        // A low surrogate alone is not a character, so from_u32 declines it.
        Some((char::from_u32(high)?, 6))
    }

    fn hex4(&self, at: usize) -> Option<u32> {
        let digits = self.bytes.get(at..at + 4)?;
        digits.iter().try_fold(0, |value, &digit| Some(value * 16 + char::from(digit).to_digit(16)?))
    }

    /// A number in the strict JSON grammar: `-`, then `0` or digits without a
    /// leading zero, then an optional fraction and an optional exponent, each with
    /// at least one digit. A number out of range is declined, so the general path
    /// reports it.
    fn number(&mut self) -> Option<NodeKind> {
        let start = self.at;
        let mut at = start;
        if self.bytes[at] == b'-' {
            at += 1;
        }
        match *self.bytes.get(at)? {
            b'0' => at += 1,
            b'1'..=b'9' => at = self.digits(at + 1),
            _ => return None,
        }
        if self.bytes.get(at) == Some(&b'.') {
            let end = self.digits(at + 1);
            if end == at + 1 {
                return None;
            }
            at = end;
        }
        if let Some(b'e' | b'E') = self.bytes.get(at) {
            at += 1;
            if let Some(b'+' | b'-') = self.bytes.get(at) {
                at += 1;
            }
            let end = self.digits(at);
            if end == at {
                return None;
            }
            at = end;
        }
        // A digit right after a leading zero (`01`) is left to the caller, which
        // declines it because only a comma, a bracket or whitespace may follow.
        self.at = at;
        json_number(&self.text[start..at])
    }

    fn digits(&self, mut at: usize) -> usize {
        while let Some(b'0'..=b'9') = self.bytes.get(at) {
            at += 1;
        }
        at
    }
}

/// Whether one of the eight bytes of `word` is a quote, a backslash or
/// below 0x20 (a control character). Exact for each byte: the sums of a
/// byte's low seven bits cannot carry into the next byte.
fn special(word: u64) -> bool {
    const LOW7: u64 = 0x7f7f_7f7f_7f7f_7f7f;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let zero = |x: u64| !(((x & LOW7) + LOW7) | x | LOW7);
    let quote = zero(word ^ 0x2222_2222_2222_2222);
    let backslash = zero(word ^ 0x5c5c_5c5c_5c5c_5c5c);
    // Below 0x20: the high bit clear, and bits 5 and 6 clear too.
    let control = !word & HIGH & !((word & LOW7) + 0x6060_6060_6060_6060);
    (quote | backslash | control) != 0
}

#[cfg(test)]
mod tests {
    use super::super::{Limits, load_json, load_json_generally};
    use super::*;

    /// Runs both paths on `text` and fails if the fast one accepts what the general
    /// one refuses or builds a different tree; returns whether the fast one accepted.
    fn agree(text: &str, max_depth: usize) -> bool {
        let limits = Limits { max_depth, ..Limits::default() };
        let general = load_json_generally(text, bom(text), &limits);
        let fast = read(text, bom(text), max_depth);
        assert_eq!(load_json(text, &limits), general, "load_json differs for {text:?}");
        match fast {
            Some(node) => {
                assert_eq!(Ok(&node), general.as_ref(), "the fast path differs for {text:?}");
                true
            }
            None => false,
        }
    }

    fn bom(text: &str) -> usize {
        if text.starts_with('\u{feff}') { '\u{feff}'.len_utf8() } else { 0 }
    }

    fn accepted(text: &str) {
        assert!(agree(text, 128), "the fast path declined {text:?}");
    }

    fn declined(text: &str) {
        assert!(!agree(text, 128), "the fast path accepted {text:?}");
    }

    fn fast(text: &str) -> Node {
        read(text, 0, 128).unwrap_or_else(|| panic!("the fast path declined {text:?}"))
    }

    /// Every `.json` and `.jsonl` file under the given folders of the repository.
    fn corpus() -> Vec<(std::path::PathBuf, String)> {
        crate::test_files::repository_files(&["examples", "tests", "policies/guardrails/tests"], &["json", "jsonl"])
    }

    /// The word test says what a look at each byte says, for every byte
    /// value at every position, beside bytes that need a look and bytes that do not.
    #[test]
    fn a_word_needs_a_look_exactly_when_one_of_its_bytes_does() {
        let needs = |b: u8| b == b'"' || b == b'\\' || b < 0x20;
        for fill in [b'a', 0x7f, 0x80, 0xff, b' ', b'"', 0x1f] {
            for position in 0..8 {
                for b in 0..=255u8 {
                    let mut word = [fill; 8];
                    word[position] = b;
                    assert_eq!(special(u64::from_le_bytes(word)), word.iter().any(|&x| needs(x)), "{word:?}");
                }
            }
        }
    }

    #[test]
    fn the_repository_documents_read_the_same_both_ways() {
        let files = corpus();
        assert!(files.len() > 50, "only {} documents found", files.len());
        let mut accepted_count = 0;
        let mut missed = Vec::new();
        for (path, text) in &files {
            let mut texts = vec![text.as_str()];
            if path.extension().is_some_and(|e| e == "jsonl") {
                texts.extend(text.lines().map(|line| line.strip_suffix('\r').unwrap_or(line)));
            }
            for text in texts {
                for max_depth in [0, 1, 2, 3] {
                    agree(text, max_depth);
                }
                let general_ok = load_json_generally(text, bom(text), &Limits::default()).is_ok();
                if agree(text, 128) {
                    accepted_count += 1;
                } else if general_ok {
                    // Every document the general path reads is plain strict JSON, which
                    // the fast path is meant to read too.
                    missed.push(path.display().to_string());
                }
            }
        }
        assert!(missed.is_empty(), "the fast path declined valid documents: {missed:?}");
        assert!(accepted_count > 50, "the fast path accepted only {accepted_count} documents");
    }

    #[test]
    fn escapes() {
        let text = r#"["\"", "\\", "\/", "\b", "\f", "\n", "\r", "\t", "\u00e9", "\u00E9", "\ud83d\ude00", "a\u0000b", "x\"y\\z", "\u20ac\u0041"]"#;
        accepted(text);
        let NodeKind::List(items) = fast(text).kind else { panic!("expected a list") };
        let strings: Vec<_> = items.iter().map(|n| n.kind.clone()).collect();
        let expected = ["\"", "\\", "/", "\u{8}", "\u{c}", "\n", "\r", "\t", "é", "é", "😀", "a\0b", "x\"y\\z", "€A"];
        assert_eq!(strings, expected.map(|s| NodeKind::Str(s.to_string())));
        assert_eq!(items[10].span, Span::new(text.find(r#""\ud83d"#).unwrap(), text.find(r#", "a\u0000"#).unwrap()));
        accepted(r#"{"\ud83d\ude00k\n": "v"}"#);
        // Lone surrogates, unknown escapes and short escapes are left to the general path.
        for text in [
            r#""\ud83d""#,
            r#""\ud83dx""#,
            r#""\ud83d\n""#,
            r#""\ud83d\u0041""#,
            r#""\ude00""#,
            r#""\ude00\ud83d""#,
            r#""\u12""#,
            r#""\u12g4""#,
            r#""\x41""#,
            r#""\v""#,
            r#""\0""#,
            r#""\'""#,
            r#""\
""#,
            "\"\\",
            "\"\\u",
        ] {
            declined(text);
        }
    }

    #[test]
    fn text_and_spans() {
        let text = "{\"é😀\": \"café 😀\", \"k\": [1, {\"x\": null}], \"\": \"\"}";
        accepted(text);
        let root = fast(text);
        let NodeKind::Map(entries) = &root.kind else { panic!("expected a map") };
        assert_eq!(&text[entries[0].key_span.start..entries[0].key_span.end], "\"é😀\"");
        assert_eq!(&text[entries[0].value.span.start..entries[0].value.span.end], "\"café 😀\"");
        assert_eq!(&text[entries[1].value.span.start..entries[1].value.span.end], "[1, {\"x\": null}]");
        accepted(" \t\r\n{ \"a\" : [ 1 , 2 ] , \"b\" : { } } \n\t\r ");
        accepted("\u{feff}{\"a\": [1, \"é\"]}");
        accepted("\u{feff} [] ");
        accepted("\"\u{7f}\u{80}\u{2028}\"");
        for text in ["true", "false", "null", "[true, false, null]", "{}", "[]", "[[], {}, [{}]]", "\"\"", "0"] {
            accepted(text);
        }
        let root = fast(r#"{"a": 1, "b": 2, "a": 3}"#);
        let NodeKind::Map(entries) = &root.kind else { panic!("expected a map") };
        let keys: Vec<_> = entries.iter().map(|e| e.key.as_str()).collect();
        assert_eq!(keys, ["a", "b", "a"]);
        accepted(r#"{"a": 1, "b": 2, "a": 3}"#);
    }

    #[test]
    fn numbers() {
        for text in [
            "0",
            "-0",
            "12",
            "-12",
            "1.5",
            "-0.0",
            "1e3",
            "1E3",
            "1e+3",
            "1e-3",
            "-2.5E-3",
            "0e0",
            "9223372036854775807",
            "-9223372036854775808",
            "9223372036854775808",
            "-9223372036854775809",
            "123456789012345678901234567890",
            "1e-400",
            "[1.7976931348623157e308, 5e-324, 0.1, 100]",
        ] {
            accepted(text);
        }
        assert_eq!(fast("-0").kind, NodeKind::Int(0));
        // Integers of any size stay integers, exactly, on both paths.
        assert_eq!(fast("9223372036854775808").kind, NodeKind::BigInt("9223372036854775808".into()));
        assert_eq!(fast("-9223372036854775809").kind, NodeKind::BigInt("-9223372036854775809".into()));
        assert_eq!(fast("-9223372036854775808").kind, NodeKind::Int(i64::MIN));
        assert_eq!(fast("1e19").kind, NodeKind::Float(1e19));
        for text in [
            "01",
            "-01",
            "00",
            "[01]",
            "1.",
            "1.e3",
            ".5",
            "+1",
            "-",
            "--1",
            "1e",
            "1e+",
            "1E-",
            "0x10",
            "1e400",
            "-1e400",
            "[1e999]",
            "NaN",
            "-Infinity",
            "Infinity",
            "1 2",
            "1_000",
        ] {
            declined(text);
        }
    }

    #[test]
    fn everything_else_is_declined() {
        for text in [
            "",
            " ",
            "\u{feff}",
            "[1,]",
            "[,1]",
            "{\"a\":1,}",
            "{\"a\" 1}",
            "{a: 1}",
            "{'a': 1}",
            "{1: 1}",
            "[1] [2]",
            "[1] x",
            "[1]]",
            "{}}",
            "[1 2]",
            "[1, 2",
            "{\"a\": 1",
            "\"abc",
            "tru",
            "truex",
            "nul",
            "[true1]",
            "[1] // c",
            "/* c */ [1]",
            "[\"a\tb\"]",
            "[\"a\nb\"]",
            "[\"a\u{1}\"]",
            "[1,\u{a0}2]",
            "[1,\u{b}2]",
            "[1,\u{c}2]",
            "[1,\u{2028}2]",
            "\u{3000}1",
            "[\0]",
            "\u{feff}\u{feff}[]",
            "[é]",
        ] {
            declined(text);
        }
    }

    #[test]
    fn depth_limit() {
        let nested =
            |open: &str, close: &str, levels: usize| format!("{}1{}", open.repeat(levels), close.repeat(levels));
        for (open, close) in [("[", "]"), ("{\"a\":", "}"), ("[{\"a\":", "}]")] {
            for max_depth in [0, 1, 2, 3, 10, 128] {
                // `[{"a":` opens two levels at a time.
                let per = if open.len() == 6 { 2 } else { 1 };
                let fits = max_depth / per;
                assert!(fits == 0 || agree(&nested(open, close, fits), max_depth), "{open} {max_depth}");
                assert!(!agree(&nested(open, close, fits + 1), max_depth), "{open} {max_depth}");
            }
        }
        // Beyond the reader's own cap the general path decides, whatever the limit says.
        let limit = 10_000;
        for levels in [128, 129, 200, 256, 257, 300, 600] {
            let arrays = nested("[", "]", levels);
            assert_eq!(agree(&arrays, limit), levels <= 128, "{levels}");
            let objects = nested("{\"a\":", "}", levels);
            assert_eq!(agree(&objects, limit), levels <= 128, "{levels}");
        }
        declined(&"[".repeat(100_000));
    }

    #[test]
    fn every_prefix_of_a_document() {
        let text = "\u{feff}{\"name\": \"web é\\u00e9\\ud83d\\ude00\", \"ports\": [80, -443, 1.5e3, 0], \"tls\": {\"on\": true, \"off\": false}, \"x\": null, \"n\": -0.25E-2}\n";
        accepted(text);
        let mut accepted_prefixes = 0;
        for end in 0..=text.len() {
            if let Some(prefix) = text.get(..end) {
                accepted_prefixes += usize::from(agree(prefix, 128));
            }
        }
        // Only the whole document, with and without its final newline, is complete.
        assert_eq!(accepted_prefixes, 2);
        for end in 0..=text.len() {
            if let Some(rest) = text.get(end..) {
                agree(rest, 128);
            }
        }
    }

    #[test]
    fn random_edits_never_make_the_paths_disagree() {
        let seeds = [
            "{\"name\": \"web\", \"ports\": [80, 443], \"tls\": {\"on\": true, \"cert\": null}, \"ratio\": -1.5e-3}",
            "[{\"a\": \"x\\u00e9\\n\\\"\", \"b\": [[], {}, 0, -0, 12345678901234567890]}, \"\\ud83d\\ude00\", false]",
            "{\"k\": {\"k\": {\"k\": [1, 2, {\"k\": \"v\"}]}}, \"k\": \"dup\"}",
        ];
        let alphabet: &[u8] = b"{}[]\",:\\ 0123456789eE+-.uatfnl\t\n\r\x00\x01\x0b\x7f";
        let mut state: u64 = 0x2545_f491_4f6c_dd1d;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let (mut fast_count, mut declined_count) = (0, 0);
        for round in 0..6000 {
            let mut bytes = seeds[round % seeds.len()].as_bytes().to_vec();
            for _ in 0..(1 + next() % 3) {
                let at = (next() as usize) % (bytes.len() + 1);
                let byte = alphabet[(next() as usize) % alphabet.len()];
                match next() % 3 {
                    0 => bytes.insert(at, byte),
                    1 if at < bytes.len() => {
                        bytes.remove(at);
                    }
                    _ if at < bytes.len() => bytes[at] = byte,
                    _ => bytes.push(byte),
                }
            }
            let text = String::from_utf8(bytes).expect("ASCII edits of ASCII text");
            if agree(&text, 128) {
                fast_count += 1;
            } else {
                declined_count += 1;
            }
            agree(&text, 2);
        }
        // Both outcomes must be common, or the test exercises too little.
        assert!(fast_count > 500 && declined_count > 500, "{fast_count} accepted, {declined_count} declined");
    }
}
