//! A document's text as the human report's snippets read it: one copy
//! shared by every finding in it, indexed once, so that a snippet costs what
//! it prints and not what precedes it in the document.
//!
//! miette finds a snippet by scanning the text from its first byte to the
//! span, for every finding: 300 findings on one 15 MiB line scanned
//! gigabytes (9 s). Here the line breaks and a running count of characters
//! are recorded once per document, and a snippet is read from a window of
//! whole lines around its span:
//!
//! - a span on lines no longer than [`LONGEST_SNIPPET_LINE`] is read by
//!   miette itself from a window that starts `before + 1` lines above it and
//!   ends `after + 2` lines below it (or at the text's ends), its offsets and
//!   line numbers shifted back. miette's scan keeps no state across a line
//!   break but the counts shifted here, so the result is the one a scan of
//!   the whole text gives (a unit test compares the two on every span of
//!   texts with `\n`, `\r\n`, lone `\r`, empty lines and multibyte
//!   characters);
//! - a span on a longer line (a minified document) is printed with
//!   [`SNIPPET_MARGIN`] bytes on each side, without the lines about it.

use std::sync::Arc;

use grail_engine::LineIndex;
use miette::{MietteError, MietteSpanContents, SourceCode, SourceSpan, SpanContents};

/// The most bytes of a line a snippet prints: a longer line (a document
/// that is one 15 MiB line) is printed around the span, without the lines
/// about it. Every snippet printed the whole line: 300 findings on a 14 MiB
/// line were 4 GiB of report.
pub const LONGEST_SNIPPET_LINE: usize = 4096;

/// The bytes of a long line a snippet prints on each side of its span.
const SNIPPET_MARGIN: usize = 200;

/// The bytes between two entries of the running count of characters.
const BLOCK: usize = 4096;

/// A document's text and its index (see the module's documentation).
pub struct Excerpt {
    text: Arc<str>,
    /// Where each `\n`-separated line starts.
    lines: LineIndex,
    /// The offset just past every line break as miette counts them (`\n`,
    /// `\r\n`, a lone `\r`); `None` when the text has no `\r`, the breaks
    /// then being the newlines.
    breaks: Option<Vec<usize>>,
    /// The characters in the first `k * BLOCK` bytes, for every `k`.
    chars: Vec<usize>,
}

impl Excerpt {
    pub fn new(text: Arc<str>) -> Excerpt {
        let bytes = text.as_bytes();
        let lines = LineIndex::new(&text);
        let breaks = bytes.contains(&b'\r').then(|| {
            let mut breaks = Vec::with_capacity(lines.starts().len());
            let mut i = 0;
            while i < bytes.len() {
                match bytes[i] {
                    b'\r' if bytes.get(i + 1) == Some(&b'\n') => {
                        breaks.push(i + 2);
                        i += 1;
                    }
                    b'\r' | b'\n' => breaks.push(i + 1),
                    _ => {}
                }
                i += 1;
            }
            breaks
        });
        let mut chars = Vec::with_capacity(bytes.len() / BLOCK + 1);
        let mut seen = 0;
        chars.push(0);
        for block in bytes.chunks(BLOCK) {
            seen += count_chars(block);
            chars.push(seen);
        }
        Excerpt { text, lines, breaks, chars }
    }

    pub fn text(&self) -> &str {
        &self.text
    }

    /// Whether a line from the one holding `start` to the one holding `end`
    /// is longer than a snippet prints.
    pub fn long_lines(&self, start: usize, end: usize) -> bool {
        let (line_start, line_end) = (self.line_start(start), self.line_end(end));
        if line_end - line_start <= LONGEST_SNIPPET_LINE {
            return false;
        }
        // The lines starting after the first one, up to the last one.
        let starts = self.lines.starts();
        let first = starts.partition_point(|&s| s <= line_start);
        let last = starts.partition_point(|&s| s <= line_end);
        let mut from = line_start;
        for &next in &starts[first..last] {
            if next - 1 - from > LONGEST_SNIPPET_LINE {
                return true;
            }
            from = next;
        }
        line_end - from > LONGEST_SNIPPET_LINE
    }

    /// The start of the `\n`-separated line holding `at`.
    fn line_start(&self, at: usize) -> usize {
        let starts = self.lines.starts();
        starts[starts.partition_point(|&s| s <= at) - 1]
    }

    /// The end (its `\n`, or the text's end) of the line holding `at`.
    fn line_end(&self, at: usize) -> usize {
        let starts = self.lines.starts();
        starts.get(starts.partition_point(|&s| s <= at)).map_or(self.text.len(), |next| next - 1)
    }

    /// The characters in the first `at` bytes.
    fn chars_before(&self, at: usize) -> usize {
        let block = at / BLOCK;
        self.chars[block] + count_chars(&self.text.as_bytes()[block * BLOCK..at])
    }

    /// A span on a long line, printed around the span (see the module).
    fn read_long<'a>(&'a self, start: usize, end: usize) -> MietteSpanContents<'a> {
        let text: &str = &self.text;
        let line_start = self.line_start(start);
        let line_end = self.line_end(start);
        let mut from = start.saturating_sub(SNIPPET_MARGIN).max(line_start);
        while !text.is_char_boundary(from) {
            from += 1;
        }
        let mut to = end.saturating_add(SNIPPET_MARGIN).min(line_end).min(from + LONGEST_SNIPPET_LINE).max(from);
        while !text.is_char_boundary(to) {
            to -= 1;
        }
        let line = self.lines.starts().partition_point(|&s| s <= from) - 1;
        let column = self.chars_before(from) - self.chars_before(line_start);
        let data = &text.as_bytes()[from..to];
        let lines = 1 + data.iter().filter(|b| **b == b'\n').count();
        MietteSpanContents::new(data, (from, to - from).into(), line, column, lines)
    }

    /// miette's own reading of a span, from a window of whole lines around
    /// it (see the module).
    fn read_window<'a>(
        &'a self,
        span: &SourceSpan,
        before: usize,
        after: usize,
    ) -> Result<MietteSpanContents<'a>, MietteError> {
        let bytes = self.text.as_bytes();
        // Without `\r` a break ends just past each newline.
        let at = |i: usize| match &self.breaks {
            Some(breaks) => breaks[i],
            None => self.lines.starts()[i + 1],
        };
        let count = self.breaks.as_ref().map_or(self.lines.starts().len() - 1, Vec::len);
        // The line of an offset: the breaks at or before it.
        let line_of = |offset: usize| partition(count, |i| at(i) > offset);
        let start = span.offset();
        let end = span.offset().saturating_add(span.len());
        let first = line_of(start).saturating_sub(before + 1);
        let from = if first == 0 { 0 } else { at(first - 1) };
        let last = line_of(end).saturating_add(after + 2);
        let to = if last < count { at(last) } else { bytes.len() };
        let window = &bytes[from..to];
        let inner = <[u8] as SourceCode>::read_span(window, &(start - from, span.len()).into(), before, after)?;
        Ok(MietteSpanContents::new(
            inner.data(),
            (inner.span().offset() + from, inner.span().len()).into(),
            inner.line() + first,
            inner.column(),
            inner.line_count() + first,
        ))
    }
}

impl SourceCode for Excerpt {
    fn read_span<'a>(
        &'a self,
        span: &SourceSpan,
        before: usize,
        after: usize,
    ) -> Result<Box<dyn SpanContents<'a> + 'a>, MietteError> {
        let len = self.text.len();
        let start = span.offset().min(len);
        let end = (span.offset() + span.len()).clamp(start, len);
        if span.offset() > len {
            // Outside the text: miette's answer, whatever it is.
            return self.text.read_span(span, before, after);
        }
        if self.long_lines(start, end) {
            return Ok(Box::new(self.read_long(start, end)));
        }
        Ok(Box::new(self.read_window(span, before, after)?))
    }
}

/// The least `i` in `0..n` for which `past(i)` holds (`past` is false, then true).
fn partition(n: usize, past: impl Fn(usize) -> bool) -> usize {
    let (mut lo, mut hi) = (0, n);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if past(mid) { hi = mid } else { lo = mid + 1 }
    }
    lo
}

/// The characters of UTF-8 bytes (a slice may cut one: its first bytes count).
fn count_chars(bytes: &[u8]) -> usize {
    bytes.iter().filter(|b| (**b as i8) >= -0x40).count()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The texts the tests read: line breaks of every kind, empty lines,
    /// multibyte characters, with and without a final break.
    const TEXTS: &[&str] = &[
        "",
        "a",
        "a\n",
        "\n\n\n",
        "one\ntwo\nthree\nfour\nfive\nsix\nseven",
        "one\r\ntwo\r\n\r\nthree\rfour\n\rfive\r\n",
        "é\nü ß\n\nπ𝄞x\ny\n",
        "{\n  \"k\": \"v\",\n  \"l\": [1, 2],\r\n  \"m\": \"ж\"\n}\n",
    ];

    fn fields<'a>(c: &(dyn SpanContents<'a> + 'a)) -> (Vec<u8>, usize, usize, usize, usize, usize) {
        (c.data().to_vec(), c.span().offset(), c.span().len(), c.line(), c.column(), c.line_count())
    }

    #[test]
    fn a_window_reads_every_span_as_a_scan_of_the_whole_text_does() {
        let mut compared = 0;
        for text in TEXTS {
            let excerpt = Excerpt::new(Arc::from(*text));
            for start in 0..=text.len() {
                for len in 0..=text.len() - start {
                    for (before, after) in [(0, 0), (1, 1), (2, 3), (0, 2), (3, 0)] {
                        let span: SourceSpan = (start, len).into();
                        let whole = text.read_span(&span, before, after);
                        let window = excerpt.read_window(&span, before, after);
                        match (whole, window) {
                            (Ok(w), Ok(x)) => assert_eq!(
                                fields(w.as_ref()),
                                fields(&x),
                                "{text:?} span {start}+{len}, {before} before, {after} after"
                            ),
                            (Err(_), Err(_)) => {}
                            (w, x) => panic!("{text:?} span {start}+{len}: {:?} against {:?}", w.is_ok(), x.is_ok()),
                        }
                        compared += 1;
                    }
                }
            }
        }
        assert!(compared > 1000, "{compared}");
    }

    /// The reading of a span on a long line the index replaced: scans of
    /// the text from its start.
    fn long_by_scans(text: &str, start: usize, end: usize) -> (Vec<u8>, usize, usize, usize, usize, usize) {
        let line_start = text[..start].rfind('\n').map_or(0, |i| i + 1);
        let line_end = text[start..].find('\n').map_or(text.len(), |i| start + i);
        let mut from = start.saturating_sub(SNIPPET_MARGIN).max(line_start);
        while !text.is_char_boundary(from) {
            from += 1;
        }
        let mut to = end.saturating_add(SNIPPET_MARGIN).min(line_end).min(from + LONGEST_SNIPPET_LINE).max(from);
        while !text.is_char_boundary(to) {
            to -= 1;
        }
        let line = text.as_bytes()[..from].iter().filter(|b| **b == b'\n').count();
        let column = text[line_start..from].chars().count();
        let data = &text.as_bytes()[from..to];
        let lines = 1 + data.iter().filter(|b| **b == b'\n').count();
        (data.to_vec(), from, to - from, line, column, lines)
    }

    fn long_lines_by_scans(text: &str, start: usize, end: usize) -> bool {
        let line_start = text[..start].rfind('\n').map_or(0, |i| i + 1);
        let line_end = text[end..].find('\n').map_or(text.len(), |i| end + i);
        line_end - line_start > LONGEST_SNIPPET_LINE
            && text[line_start..line_end].split('\n').any(|l| l.len() > LONGEST_SNIPPET_LINE)
    }

    #[test]
    fn a_long_line_is_read_around_its_span_as_by_scans() {
        // Short lines, then a long line of multibyte characters across
        // several blocks of the character count, then short lines again.
        let mut text = String::from("a\nbb\r\nccc\n");
        for i in 0..3000 {
            text.push_str(if i % 3 == 0 { "é" } else { "x𝄞" });
        }
        text.push_str("\nshort\n");
        text.push_str(&"y".repeat(LONGEST_SNIPPET_LINE + 1));
        text.push('\n');
        let excerpt = Excerpt::new(Arc::from(text.as_str()));
        let mut long = 0;
        let ends: Vec<usize> = (0..=text.len()).filter(|i| text.is_char_boundary(*i)).collect();
        for (k, &start) in ends.iter().enumerate().step_by(37) {
            for &end in ends[k..].iter().step_by(97).take(20) {
                assert_eq!(excerpt.long_lines(start, end), long_lines_by_scans(&text, start, end), "{start}..{end}");
                if excerpt.long_lines(start, end) {
                    assert_eq!(
                        fields(&excerpt.read_long(start, end)),
                        long_by_scans(&text, start, end),
                        "{start}..{end}"
                    );
                    long += 1;
                }
            }
        }
        assert!(long > 100, "{long}");
    }
}
