//! Instants and durations of the language: RFC 3339 date-times read by jiff,
//! held as nanoseconds since the Unix epoch, so that every comparison and
//! every difference keeps the fractional seconds a document wrote.
//!
//! jiff's parser reads a superset of RFC 3339 (the Temporal grammar: basic
//! format, offsets without minutes, annotations in brackets). A document
//! that writes one of those is not writing RFC 3339, so the text is first
//! held to the RFC's shape (`YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM)`),
//! and jiff then judges the values (the calendar, the ranges) and converts.

/// Nanoseconds since 1970-01-01T00:00:00Z, or `None` when `s` is not an RFC 3339 date-time.
pub fn rfc3339_nanos(s: &str) -> Option<i128> {
    instant(s, 9)
}

/// [`rfc3339_nanos`] with at most three fraction digits (`timestamp_millis`):
/// the strict form upstream's documents are held to.
pub fn rfc3339_millis(s: &str) -> Option<i128> {
    instant(s, 3)
}

/// `s` as an instant when it has the shape of RFC 3339 with at most
/// `fraction` digits of a second, and a second below 60: jiff would read a
/// leap second `:60` as `:59`, one instant for two texts, so the text is
/// refused before jiff sees it (grail has no leap seconds to place it).
///
/// jiff judges the calendar (`civil::Date`), and the instant is counted
/// here in nanoseconds: jiff's `Timestamp` stops short of
/// `9999-12-31T23:59:59Z` (its range leaves room for any offset), and every
/// instant RFC 3339 can write, year 0000 to 9999, is one grail reads.
fn instant(s: &str, fraction: usize) -> Option<i128> {
    let b = s.as_bytes();
    if !rfc3339_shape(b, fraction) || b[17] > b'5' {
        return None;
    }
    // INVARIANT: `rfc3339_shape` held, so these bytes are ASCII digits.
    let number = |from: usize, to: usize| b[from..to].iter().fold(0i64, |n, d| n * 10 + i64::from(d - b'0'));
    let (hour, minute, second) = (number(11, 13), number(14, 16), number(17, 19));
    let date = jiff::civil::Date::new(number(0, 4) as i16, number(5, 7) as i8, number(8, 10) as i8).ok()?;
    if hour > 23 || minute > 59 {
        return None;
    }
    let mut rest = &b[19..];
    let mut nanos: i128 = 0;
    if let Some(frac) = rest.strip_prefix(b".") {
        let n = frac.iter().take_while(|c| c.is_ascii_digit()).count();
        nanos = frac[..n].iter().chain(std::iter::repeat_n(&b'0', 9 - n)).fold(0, |x, d| x * 10 + i128::from(d - b'0'));
        rest = &frac[n..];
    }
    let offset = match rest {
        [b'+' | b'-', ..] => {
            let minutes = i64::from(rest[1] - b'0') * 600
                + i64::from(rest[2] - b'0') * 60
                + i64::from(rest[4] - b'0') * 10
                + i64::from(rest[5] - b'0');
            if rest[0] == b'-' { -minutes * 60 } else { minutes * 60 }
        }
        _ => 0,
    };
    let days = days_from_civil(i64::from(date.year()), i64::from(date.month()), i64::from(date.day()));
    let seconds = days * 86_400 + hour * 3600 + minute * 60 + second - offset;
    Some(i128::from(seconds) * NANOS_PER_SECOND + nanos)
}

/// Days from 1970-01-01 to a date of the proleptic Gregorian calendar
/// (Howard Hinnant's `days_from_civil`), for any year jiff's calendar holds.
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * (month + if month > 2 { -3 } else { 9 }) + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The date of a day counted from 1970-01-01 (the inverse of [`days_from_civil`]).
fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(month <= 2), month, day)
}

/// Whether `b` has the shape of an RFC 3339 `date-time` (section 5.6):
/// `full-date "T" full-time`, `T` and `Z` in either case, a fraction of at
/// least one digit (at most `fraction`, never more than nine: jiff counts
/// in nanoseconds), and an
/// offset of `Z` or a sign with two-digit hours and minutes.
fn rfc3339_shape(b: &[u8], fraction: usize) -> bool {
    let digits = |from: usize, to: usize| b.get(from..to).is_some_and(|p| p.iter().all(u8::is_ascii_digit));
    if b.len() < 20
        || !digits(0, 4)
        || b[4] != b'-'
        || !digits(5, 7)
        || b[7] != b'-'
        || !digits(8, 10)
        || !matches!(b[10], b'T' | b't')
        || !digits(11, 13)
        || b[13] != b':'
        || !digits(14, 16)
        || b[16] != b':'
        || !digits(17, 19)
    {
        return false;
    }
    let mut rest = &b[19..];
    if let Some(frac) = rest.strip_prefix(b".") {
        let n = frac.iter().take_while(|c| c.is_ascii_digit()).count();
        if n == 0 || n > fraction {
            return false;
        }
        rest = &frac[n..];
    }
    match rest {
        [b'Z' | b'z'] => true,
        // time-numoffset: hours 00-23 and minutes 00-59 (jiff alone would take up to 25:59).
        [b'+' | b'-', h1, h2, b':', m1, m2] => {
            [h1, h2, m1, m2].iter().all(|c| c.is_ascii_digit())
                && (h1 - b'0') * 10 + (h2 - b'0') <= 23
                && (m1 - b'0') * 10 + (m2 - b'0') <= 59
        }
        _ => false,
    }
}

/// An instant as RFC 3339 in UTC, with as many fractional digits as it needs.
pub fn show_instant(nanos: i128) -> String {
    let (seconds, fraction) = (nanos.div_euclid(NANOS_PER_SECOND), nanos.rem_euclid(NANOS_PER_SECOND));
    let Ok(seconds) = i64::try_from(seconds) else { return format!("{nanos} ns after the epoch") };
    let (date, time) = (seconds.div_euclid(86_400), seconds.rem_euclid(86_400));
    let (year, month, day) = civil_from_days(date);
    if !(0..=9999).contains(&year) {
        return format!("{nanos} ns after the epoch");
    }
    let mut out = format!("{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}", time / 3600, time / 60 % 60, time % 60);
    if fraction != 0 {
        out.push_str(format!(".{fraction:09}").trim_end_matches('0'));
    }
    out.push('Z');
    out
}

/// A duration as a person reads it: `72h`, `72h 999ms`, `-1s`, `0s`.
pub fn show_duration(nanos: i128) -> String {
    use jiff::fmt::friendly::{Direction, SpanPrinter};
    const PRINTER: SpanPrinter = SpanPrinter::new().direction(Direction::Sign);
    let secs = nanos / NANOS_PER_SECOND;
    match i64::try_from(secs) {
        Ok(secs) => PRINTER.duration_to_string(&jiff::SignedDuration::new(secs, (nanos % NANOS_PER_SECOND) as i32)),
        Err(_) => format!("{nanos}ns"),
    }
}

/// Nanoseconds in one unit of a duration constructor.
pub const NANOS_PER_SECOND: i128 = 1_000_000_000;

#[cfg(test)]
mod tests {
    use super::{rfc3339_millis, rfc3339_nanos, show_duration, show_instant};

    const S: i128 = 1_000_000_000;

    #[test]
    fn reads_rfc3339() {
        assert_eq!(rfc3339_nanos("1970-01-01T00:00:00Z"), Some(0));
        assert_eq!(rfc3339_nanos("2026-08-11T09:00:00Z"), Some(1_786_438_800 * S));
        assert_eq!(rfc3339_nanos("2026-08-11T11:00:00+02:00"), rfc3339_nanos("2026-08-11T09:00:00Z"));
        assert_eq!(rfc3339_nanos("2024-02-29T00:00:00.25Z"), Some(1_709_164_800 * S + S / 4));
        assert_eq!(rfc3339_nanos("1970-01-01t00:00:00.000000001z"), Some(1));
        assert_eq!(rfc3339_nanos("1969-12-31T23:59:59.5Z"), Some(-S / 2));
        assert_eq!(rfc3339_nanos("2026-08-11T09:00:00-00:30"), rfc3339_nanos("2026-08-11T09:30:00Z"));
    }

    #[test]
    fn reads_every_year_rfc3339_writes() {
        // jiff's `Timestamp` stops short of the last second of 9999; grail does not.
        let first = rfc3339_nanos("0000-01-01T00:00:00Z").unwrap();
        let last = rfc3339_nanos("9999-12-31T23:59:59.999999999Z").unwrap();
        assert_eq!(first, -62_167_219_200 * S);
        assert_eq!(last, 253_402_300_800 * S - 1);
        assert_eq!(rfc3339_nanos("9999-12-31T23:59:59-23:59").map(|t| t > last), Some(true));
        assert_eq!(show_instant(last), "9999-12-31T23:59:59.999999999Z");
        assert_eq!(show_instant(first), "0000-01-01T00:00:00Z");
        assert_eq!(show_instant(rfc3339_nanos("0001-01-01T00:00:00Z").unwrap()), "0001-01-01T00:00:00Z");
        let span = rfc3339_nanos("9999-12-31T23:59:59Z").unwrap() - rfc3339_nanos("0001-01-01T00:00:00Z").unwrap();
        assert_eq!(show_duration(span), format!("{}h 59m 59s", span / S / 3600));
    }

    #[test]
    fn keeps_fractional_seconds() {
        let a = rfc3339_nanos("2026-08-11T09:00:00Z").unwrap();
        let b = rfc3339_nanos("2026-08-14T09:00:00.999Z").unwrap();
        assert_eq!(b - a, 72 * 3600 * S + 999_000_000);
    }

    #[test]
    fn refuses_what_is_not_rfc3339() {
        for bad in [
            "",
            "2026-08-11",
            "2026-13-01T00:00:00Z",
            "2025-02-29T00:00:00Z",
            "2026-08-11T09:00:00",
            "2026-08-11 09:00:00Z",
            "２026-08-11T09:00:00Z",
            "2026-08-11T09:00:00-+9:00",
            "2026-08-11T09:00:00+9:00",
            "2026-08-11T09:00:00+09",
            "2026-08-11T09:00:00+0900",
            "2026-08-11T09:00:00.Z",
            "2026-08-11T09:00:00,5Z",
            "2026-08-11T09:00:00.1234567890Z",
            "20260811T090000Z",
            "2026-08-11T09:00:00Z[Europe/Paris]",
            "2026-08-11T24:00:00Z",
            "2026-08-11T09:00:00+24:00",
            "2026-08-11T09:00:00+23:60",
            "2026-02-30T00:00:00Z",
            "2026-04-31T00:00:00Z",
            "2016-12-31T23:59:60Z",
            "2016-12-31T23:59:60.5Z",
            "2026-08-11T09:00:61Z",
            "2026-08-11T09:60:00Z",
        ] {
            assert_eq!(rfc3339_nanos(bad), None, "{bad}");
            assert_eq!(rfc3339_millis(bad), None, "{bad}");
        }
    }

    #[test]
    fn keeps_sub_millisecond_fractions_exact_and_the_strict_form_refuses_them() {
        let a = rfc3339_nanos("2026-08-11T09:00:00.0001Z").unwrap();
        let b = rfc3339_nanos("2026-08-11T09:00:00.0002Z").unwrap();
        assert_eq!(b - a, 100_000);
        assert_eq!(rfc3339_nanos("2026-08-11T09:00:00.123456789Z").unwrap() % S, 123_456_789);
        assert_eq!(rfc3339_millis("2026-08-11T09:00:00.0001Z"), None);
        assert_eq!(rfc3339_millis("2026-08-11T09:00:00.123Z").map(|t| t % S), Some(123_000_000));
        assert_eq!(rfc3339_millis("2026-08-11T09:00:00Z"), rfc3339_nanos("2026-08-11T09:00:00Z"));
        assert_eq!(rfc3339_millis("2016-12-31T23:59:59.999Z").map(|t| t % S), Some(999_000_000));
    }

    #[test]
    fn shows_instants_and_durations() {
        assert_eq!(show_instant(0), "1970-01-01T00:00:00Z");
        assert_eq!(show_instant(S / 2), "1970-01-01T00:00:00.5Z");
        assert_eq!(show_duration(72 * 3600 * S), "72h");
        assert_eq!(show_duration(72 * 3600 * S + 999_000_000), "72h 999ms");
        assert_eq!(show_duration(-S), "-1s");
        assert_eq!(show_duration(0), "0s");
    }
}
