//! "Did you mean": the nearest known name to an unknown one.

/// The candidate closest to `name` by edit distance, if it is close enough to
/// be a plausible typo (at most a third of the name's length, and at least 1),
/// and the only one that close: for `C6` among `C1`..`C5` no one is nearer
/// than the others, and a guess would mislead. A candidate that differs only
/// in case wins outright (`c3` is `C3`).
pub fn did_you_mean<'a>(name: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let length = name.chars().count();
    let limit = (length / 3).max(1);
    let mut best: Option<(usize, &'a str)> = None;
    let mut tied = false;
    for c in candidates {
        if c == name {
            continue;
        }
        let d = if same_but_case(c, name) {
            0
        } else if c.chars().count().abs_diff(length) > limit {
            // Each edit changes the length by one at most: too far, without the table.
            limit + 1
        } else {
            distance(name, c)
        };
        match best {
            _ if d > limit => {}
            Some((bd, bc)) if d == bd => {
                tied |= bc != c;
            }
            Some((bd, _)) if d > bd => {}
            _ => {
                best = Some((d, c));
                tied = false;
            }
        }
    }
    if tied { None } else { best.map(|(_, c)| c) }
}

/// Whether two names differ only in case (`str::to_lowercase` on both,
/// without allocating when both are ASCII).
fn same_but_case(a: &str, b: &str) -> bool {
    if a.is_ascii() && b.is_ascii() { a.eq_ignore_ascii_case(b) } else { a.to_lowercase() == b.to_lowercase() }
}

/// Edit distance over chars, counting a swap of two neighbours as one edit
/// (optimal string alignment), since `rde` for `red` is one slip of the hand.
fn distance(a: &str, b: &str) -> usize {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    let width = b.len() + 1;
    let mut d = vec![0usize; (a.len() + 1) * width];
    for i in 0..=a.len() {
        d[i * width] = i;
    }
    for (j, cell) in d.iter_mut().enumerate().take(width) {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut best =
                (d[(i - 1) * width + j] + 1).min(d[i * width + j - 1] + 1).min(d[(i - 1) * width + j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(d[(i - 2) * width + j - 2] + 1);
            }
            d[i * width + j] = best;
        }
    }
    d[a.len() * width + b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggests_a_near_name_and_nothing_far() {
        assert_eq!(did_you_mean("bindng", ["binding", "guardrails"]), Some("binding"));
        assert_eq!(did_you_mean("max_retry", ["max_retries", "min_retries"]), Some("max_retries"));
        assert_eq!(did_you_mean("zzz", ["binding"]), None);
        assert_eq!(did_you_mean("rde", ["red", "green"]), Some("red"));
        // Ties are no suggestion; a difference of case is the nearest of all.
        assert_eq!(did_you_mean("K6", ["K1", "K2", "K3", "K4", "K5"]), None);
        assert_eq!(did_you_mean("k3", ["K1", "K2", "K3", "K4", "K5"]), Some("K3"));
    }
}
