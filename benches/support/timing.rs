//! Timing and the table the side-by-side benches print: samples, their
//! median and 95th percentile, and rows of (measurement, tool, median, p95,
//! ratio to peer, notes) printed as markdown.

use std::time::{Duration, Instant};

pub struct Stats {
    pub median: Duration,
    pub p95: Duration,
    pub samples: usize,
}

/// Median and 95th percentile (nearest rank) of per-iteration times.
pub fn stats(mut samples: Vec<Duration>) -> Stats {
    samples.sort();
    let n = samples.len();
    let rank = |q: f64| samples[((q * n as f64).ceil() as usize).clamp(1, n) - 1];
    Stats { median: rank(0.5), p95: rank(0.95), samples: n }
}

/// Samples of `f`, each timing `batch` calls, until `budget` is spent
/// (at least `min` samples, at most `max`); per-call times. A batch of one
/// is a long run (10,000 bindings) and needs no warm-up call.
pub fn sample(batch: u32, min: usize, max: usize, budget: Duration, mut f: impl FnMut()) -> Stats {
    if batch > 1 {
        f(); // warm up
    }
    let start = Instant::now();
    let mut out = Vec::new();
    while out.len() < min || (out.len() < max && start.elapsed() < budget) {
        let t = Instant::now();
        for _ in 0..batch {
            f();
        }
        out.push(t.elapsed() / batch);
    }
    stats(out)
}

/// Samples timed by `f` itself (which leaves its setup and teardown out of
/// the time it returns), until `budget` is spent (at least `min` samples,
/// at most `max`).
pub fn sample_timed(min: usize, max: usize, budget: Duration, mut f: impl FnMut() -> Duration) -> Stats {
    let start = Instant::now();
    let mut out = Vec::new();
    while out.len() < min || (out.len() < max && start.elapsed() < budget) {
        out.push(f());
    }
    stats(out)
}

pub fn fmt(d: Duration) -> String {
    let ns = d.as_nanos() as f64;
    if ns >= 1e9 {
        format!("{:.2} s", ns / 1e9)
    } else if ns >= 1e6 {
        format!("{:.2} ms", ns / 1e6)
    } else if ns >= 1e3 {
        format!("{:.1} µs", ns / 1e3)
    } else {
        format!("{ns:.0} ns")
    }
}

pub struct Table {
    pub rows: Vec<[String; 6]>,
}

impl Table {
    pub fn row(&mut self, what: &str, tool: &str, s: Option<&Stats>, ratio: String, note: String) {
        let (median, p95) = match s {
            Some(s) => (fmt(s.median), fmt(s.p95)),
            None => ("—".into(), "—".into()),
        };
        self.rows.push([what.into(), tool.into(), median, p95, ratio, note]);
    }

    pub fn print(&self) {
        let head = ["measurement", "tool", "median", "p95", "ratio to peer", "notes"];
        let mut widths = head.map(|h| h.chars().count());
        for r in &self.rows {
            for (w, c) in widths.iter_mut().zip(r) {
                *w = (*w).max(c.chars().count());
            }
        }
        let line = |cells: &[String]| {
            let padded: Vec<String> =
                cells.iter().zip(widths).map(|(c, w)| format!("{c}{}", " ".repeat(w - c.chars().count()))).collect();
            println!("| {} |", padded.join(" | "));
        };
        line(&head.map(String::from));
        println!("|{}|", widths.map(|w| "-".repeat(w + 2)).join("|"));
        for r in &self.rows {
            line(r);
        }
    }
}

/// grail time / peer time: below 1 grail is faster.
pub fn ratio(ours: &Stats, theirs: &Stats) -> String {
    format!("{:.3}×", ours.median.as_secs_f64() / theirs.median.as_secs_f64())
}
