//! Byte offsets of the engine to the UTF-16 line/character positions of the
//! protocol, and back. This is the only module that knows how the protocol
//! counts: lines end at `\n`, `\r\n` or a lone `\r`; a character is a UTF-16
//! code unit, so a character outside the Basic Multilingual Plane counts two.
//!
//! Conversions are total: a position past the end of its line clamps to the
//! end of the line (before its line break), a line past the end of the text
//! clamps to the end of the text, and an offset inside a character or a
//! `\r\n` pair snaps back to the start of it.

use grail_lang::ast::Span;
use tower_lsp_server::ls_types::{Position, Range};

/// The start of every line of one text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LineIndex {
    /// Byte offset where each line starts; `starts[0] == 0`.
    starts: Vec<usize>,
}

impl LineIndex {
    pub fn new(text: &str) -> LineIndex {
        let mut starts = vec![0];
        let bytes = text.as_bytes();
        let mut i = 0;
        while i < bytes.len() {
            match bytes[i] {
                b'\n' => starts.push(i + 1),
                b'\r' if bytes.get(i + 1) == Some(&b'\n') => {
                    starts.push(i + 2);
                    i += 1;
                }
                b'\r' => starts.push(i + 1),
                _ => {}
            }
            i += 1;
        }
        LineIndex { starts }
    }

    /// The protocol position of a byte offset of `text` (the indexed text).
    pub fn position(&self, text: &str, offset: usize) -> Position {
        let offset = floor_boundary(text, offset.min(text.len()));
        let line = self.starts.partition_point(|&s| s <= offset).saturating_sub(1);
        let start = self.starts[line];
        // An offset between `\r` and `\n` belongs to the end of its line.
        let end = self.content_end(text, line);
        let character: usize = text[start..offset.min(end)].chars().map(char::len_utf16).sum();
        Position::new(line as u32, character as u32)
    }

    /// The byte offset of a protocol position in `text` (the indexed text).
    pub fn offset(&self, text: &str, position: Position) -> usize {
        let line = position.line as usize;
        let Some(&start) = self.starts.get(line) else { return text.len() };
        let end = self.content_end(text, line);
        let mut units = 0usize;
        for (at, c) in text[start..end].char_indices() {
            if units >= position.character as usize {
                return start + at;
            }
            units += c.len_utf16();
            if units > position.character as usize {
                // Inside a surrogate pair: the start of the character.
                return start + at;
            }
        }
        end
    }

    pub fn range(&self, text: &str, span: Span) -> Range {
        Range::new(self.position(text, span.start), self.position(text, span.end.max(span.start)))
    }

    pub fn span(&self, text: &str, range: Range) -> Span {
        let start = self.offset(text, range.start);
        let end = self.offset(text, range.end);
        Span::new(start.min(end), start.max(end))
    }

    /// Where line `line` ends, before its line break.
    fn content_end(&self, text: &str, line: usize) -> usize {
        let Some(&next) = self.starts.get(line + 1) else { return text.len() };
        let bytes = text.as_bytes();
        // INVARIANT: a line that is not the last one ends with `\n`, `\r\n` or `\r`.
        if bytes[next - 1] == b'\n' && next >= 2 && bytes[next - 2] == b'\r' { next - 2 } else { next - 1 }
    }
}

/// The greatest char boundary at or before `offset`.
fn floor_boundary(text: &str, mut offset: usize) -> usize {
    while offset > 0 && !text.is_char_boundary(offset) {
        offset -= 1;
    }
    offset
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pos(line: u32, character: u32) -> Position {
        Position::new(line, character)
    }

    /// Every char boundary maps to a position that maps back to it.
    fn round_trips(text: &str) {
        let idx = LineIndex::new(text);
        for (at, _) in text.char_indices().chain([(text.len(), ' ')]) {
            let p = idx.position(text, at);
            let back = idx.offset(text, p);
            // `\n` of a `\r\n` pair is not addressable: it maps to the `\r`.
            let expected = if at > 0 && text.as_bytes()[at - 1] == b'\r' && text.as_bytes().get(at) == Some(&b'\n') {
                at - 1
            } else {
                at
            };
            assert_eq!(back, expected, "offset {at} -> {p:?} -> {back} in {text:?}");
        }
    }

    #[test]
    fn ascii_lines() {
        let text = "a: 1\nbc: 2\n";
        let idx = LineIndex::new(text);
        assert_eq!(idx.position(text, 0), pos(0, 0));
        assert_eq!(idx.position(text, 5), pos(1, 0));
        assert_eq!(idx.position(text, 9), pos(1, 4));
        assert_eq!(idx.position(text, text.len()), pos(2, 0));
        assert_eq!(idx.offset(text, pos(1, 1)), 6);
        round_trips(text);
    }

    #[test]
    fn astral_characters_count_two_code_units() {
        // U+1F600 is four bytes in UTF-8 and two code units in UTF-16.
        let text = "k: \u{1F600}x\né: y";
        let idx = LineIndex::new(text);
        let x = text.find('x').unwrap();
        assert_eq!(idx.position(text, x), pos(0, 5));
        assert_eq!(idx.offset(text, pos(0, 5)), x);
        // The middle of the surrogate pair snaps to the start of the character.
        assert_eq!(idx.offset(text, pos(0, 4)), 3);
        // A byte offset inside the character snaps back to its start.
        assert_eq!(idx.position(text, 5), pos(0, 3));
        // `é` is two bytes and one code unit.
        let y = text.find('y').unwrap();
        assert_eq!(idx.position(text, y), pos(1, 3));
        round_trips(text);
    }

    #[test]
    fn crlf_is_one_line_break() {
        let text = "a: 1\r\nb: 2\r\n";
        let idx = LineIndex::new(text);
        assert_eq!(idx.position(text, 6), pos(1, 0));
        assert_eq!(idx.offset(text, pos(1, 0)), 6);
        // Past the end of a line: the end of its content, before `\r\n`.
        assert_eq!(idx.offset(text, pos(0, 99)), 4);
        // The offset between `\r` and `\n` is the end of the line.
        assert_eq!(idx.position(text, 5), pos(0, 4));
        assert_eq!(idx.position(text, text.len()), pos(2, 0));
        round_trips(text);
    }

    #[test]
    fn lone_carriage_return_and_mixed_breaks() {
        let text = "a\rb\nc\r\nd";
        let idx = LineIndex::new(text);
        assert_eq!(idx.position(text, 2), pos(1, 0));
        assert_eq!(idx.position(text, 4), pos(2, 0));
        assert_eq!(idx.position(text, 7), pos(3, 0));
        assert_eq!(idx.offset(text, pos(0, 5)), 1);
        round_trips(text);
    }

    #[test]
    fn out_of_range_positions_clamp() {
        let text = "ab\ncd";
        let idx = LineIndex::new(text);
        assert_eq!(idx.offset(text, pos(7, 0)), text.len());
        assert_eq!(idx.offset(text, pos(1, 40)), text.len());
        assert_eq!(idx.position(text, 400), pos(1, 2));
        let span = idx.span(text, Range::new(pos(1, 1), pos(0, 1)));
        assert_eq!(span, Span::new(1, 4));
    }

    #[test]
    fn empty_text() {
        let idx = LineIndex::new("");
        assert_eq!(idx.position("", 0), pos(0, 0));
        assert_eq!(idx.offset("", pos(0, 3)), 0);
        assert_eq!(idx.offset("", pos(2, 3)), 0);
    }
}
