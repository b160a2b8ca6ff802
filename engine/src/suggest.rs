//! "Did you mean": the nearest known name to an unknown one.

/// The candidate closest to `name` by edit distance, if it is close enough to
/// be a plausible typo (at most a third of the name's length, and at least 1).
pub fn did_you_mean<'a>(name: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let limit = (name.chars().count() / 3).max(1);
    let mut best: Option<(usize, &'a str)> = None;
    for c in candidates {
        if c == name {
            continue;
        }
        let d = distance(name, c);
        if d <= limit && best.is_none_or(|(bd, bc)| d < bd || (d == bd && c < bc)) {
            best = Some((d, c));
        }
    }
    best.map(|(_, c)| c)
}

/// Levenshtein distance over chars.
fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = if ca == *cb { prev } else { 1 + prev.min(cur).min(row[j]) };
            prev = cur;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggests_a_near_name_and_nothing_far() {
        assert_eq!(did_you_mean("bindng", ["binding", "guardrails"]), Some("binding"));
        assert_eq!(did_you_mean("min_checker", ["min_checkers", "min_model_checkers"]), Some("min_checkers"));
        assert_eq!(did_you_mean("zzz", ["binding"]), None);
    }
}
