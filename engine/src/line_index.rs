//! Byte offsets to 1-based lines and columns (columns count characters).

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LineIndex {
    starts: Vec<usize>,
}

impl LineIndex {
    pub fn new(text: &str) -> LineIndex {
        let mut starts = vec![0];
        starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        LineIndex { starts }
    }

    /// The 1-based line and column of a byte offset; `text` must be the indexed text.
    pub fn line_col(&self, text: &str, offset: usize) -> (usize, usize) {
        let offset = offset.min(text.len());
        let line = self.starts.partition_point(|&s| s <= offset).saturating_sub(1);
        let start = self.starts[line];
        let column = text.get(start..offset).map_or(offset - start, |s| s.chars().count());
        (line + 1, column + 1)
    }
}

#[cfg(test)]
mod tests {
    use super::LineIndex;

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
