//! Byte offsets to 1-based lines and columns (columns count characters).

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LineIndex {
    starts: Vec<usize>,
}

impl LineIndex {
    pub fn new(text: &str) -> LineIndex {
        // Room for a line per 24 bytes (documents' lines are longer, most
        // often), bounded: a long file of long lines grows the index instead.
        let bytes = text.as_bytes();
        let mut starts = Vec::with_capacity((bytes.len() / 24).min(1 << 16) + 1);
        starts.push(0);
        for_each_newline(bytes, |i| starts.push(i + 1));
        LineIndex { starts }
    }

    /// The offset where each line starts: 0, then just past every `\n`.
    pub fn starts(&self) -> &[usize] {
        &self.starts
    }

    /// The 1-based line and column of a byte offset; `text` must be the indexed text.
    pub fn line_col(&self, text: &str, offset: usize) -> (usize, usize) {
        let offset = offset.min(text.len());
        let line = self.starts.partition_point(|&s| s <= offset).saturating_sub(1);
        let start = self.starts[line];
        // An ASCII line's columns are its bytes: counted without decoding.
        let column =
            text.get(start..offset).map_or(offset - start, |s| if s.is_ascii() { s.len() } else { s.chars().count() });
        (line + 1, column + 1)
    }
}

/// Calls `found` with the offset of every `\n` of `bytes`, in order, eight
/// bytes at a time: a word with no newline costs a few instructions.
fn for_each_newline(bytes: &[u8], mut found: impl FnMut(usize)) {
    const LOW7: u64 = 0x7f7f_7f7f_7f7f_7f7f;
    const NEWLINES: u64 = 0x0a0a_0a0a_0a0a_0a0a;
    let mut words = bytes.chunks_exact(8);
    for (w, word) in words.by_ref().enumerate() {
        let x = u64::from_le_bytes(word.try_into().unwrap_or_default()) ^ NEWLINES;
        // The high bit of each byte that was a newline (now zero), and of no
        // other: the sum of a byte's low seven bits and 0x7f cannot carry out of it.
        let mut zero = !(((x & LOW7) + LOW7) | x | LOW7);
        while zero != 0 {
            found(w * 8 + zero.trailing_zeros() as usize / 8);
            zero &= zero - 1;
        }
    }
    let tail = bytes.len() - words.remainder().len();
    for (i, b) in words.remainder().iter().enumerate() {
        if *b == b'\n' {
            found(tail + i);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::LineIndex;

    /// The index is the offsets after each newline, whatever the bytes around
    /// them (every byte value, newlines at every position of a word, a tail).
    #[test]
    fn every_newline_is_found_and_nothing_else() {
        let mut text = String::new();
        for i in 0..600u32 {
            let c = char::from_u32(i % 300).filter(|c| *c != '\n').unwrap_or('é');
            text.push(c);
            if i % 7 == 0 || i % 11 == 3 {
                text.push('\n');
            }
        }
        for end in 0..text.len() {
            let Some(prefix) = text.get(..end) else { continue };
            let mut expected = vec![0];
            expected.extend(prefix.match_indices('\n').map(|(i, _)| i + 1));
            assert_eq!(LineIndex::new(prefix).starts, expected, "{end}");
        }
    }

    #[test]
    fn lines_and_columns_are_one_based_and_count_characters() {
        let text = "a: 1\nbé: 2\n";
        let idx = LineIndex::new(text);
        assert_eq!(idx.line_col(text, 0), (1, 1));
        assert_eq!(idx.line_col(text, 5), (2, 1));
        let two = text.find('2').unwrap();
        assert_eq!(idx.line_col(text, two), (2, 5));
    }
}
