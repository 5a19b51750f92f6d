//! Dates and timestamps as text, read and written by hand: partition values, statistics,
//! filter literals and time-travel targets all use the forms below, and chrono's
//! format-string machinery (the `%Y-%m-%d` parsers and printers) costs the browser module
//! more than its size budget has room for. chrono still checks the calendar.
//!
//! Read: `[±]yyyy-M-d[( |T|t)H:m[:s[.f…]]][Z|±HH:mm|±HHmm|±HH]` — one or two digits for the
//! fields after the year, any number of fractional digits (nanoseconds kept, the rest
//! dropped), a bare date as midnight. Without a zone the wall-clock time is taken as UTC;
//! with one it is converted to UTC. Written: `yyyy-MM-dd` and `yyyy-MM-dd HH:mm:ss[.ffffff]`,
//! a year outside 0..=9999 with its sign (`+10000`, `-0001`).

use chrono::{DateTime, Datelike, NaiveDate, Timelike};

/// Microseconds in one day.
pub(crate) const MICROS_PER_DAY: i64 = 86_400_000_000;

/// The Unix epoch as a date.
const EPOCH: NaiveDate = match NaiveDate::from_ymd_opt(1970, 1, 1) {
    Some(d) => d,
    None => NaiveDate::MIN,
};

/// A timestamp read from text: microseconds since the epoch, and whether the text had more
/// precision than a microsecond (then the microseconds are rounded down).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ParsedTimestamp {
    /// Microseconds since the epoch, rounded down.
    pub micros: i64,
    /// Whether digits below the microsecond were dropped.
    pub truncated: bool,
}

/// Days since 1970-01-01 of a `yyyy-MM-dd` date.
pub(crate) fn parse_date(s: &str) -> Option<i32> {
    match date(s.trim_ascii())? {
        (d, "") => i32::try_from(d.signed_duration_since(EPOCH).num_days()).ok(),
        _ => None,
    }
}

/// A timestamp with or without a zone (see the module doc).
pub(crate) fn parse_timestamp(s: &str) -> Option<ParsedTimestamp> {
    parse_timestamp_zoned(s, true)
}

/// A timestamp; with `zone_allowed` false, a text with a zone is refused.
pub(crate) fn parse_timestamp_zoned(s: &str, zone_allowed: bool) -> Option<ParsedTimestamp> {
    let s = s.trim_ascii();
    let (local, offset_seconds) = split_zone(s)?;
    if !zone_allowed && local.len() != s.len() {
        return None;
    }
    let (day, rest) = date(local)?;
    let (seconds, nanos) = if rest.is_empty() {
        (0, 0)
    } else {
        let rest = rest
            .strip_prefix(['T', 't'])
            .or_else(|| Some(rest.trim_start_matches(' ')).filter(|r| r.len() < rest.len()))?;
        time(rest)?
    };
    let days = day.signed_duration_since(EPOCH).num_days();
    let seconds = days
        .checked_mul(86_400)?
        .checked_add(i64::from(seconds))?
        .checked_sub(offset_seconds)?;
    let micros = seconds
        .checked_mul(1_000_000)?
        .checked_add(i64::from(nanos / 1000))?;
    // The range chrono can write back (and Arrow's microsecond timestamps hold).
    DateTime::from_timestamp_micros(micros)?;
    Some(ParsedTimestamp {
        micros,
        truncated: nanos % 1000 != 0,
    })
}

/// Between `min` and `max` ASCII digits at the start of `s`: their value and the rest.
fn digits(s: &str, min: usize, max: usize) -> Option<(u32, &str)> {
    let n = s.bytes().take(max).take_while(u8::is_ascii_digit).count();
    if n < min {
        return None;
    }
    Some((s[..n].parse().ok()?, &s[n..]))
}

/// `[±]yyyy-M-d` at the start of `s`: the date and the rest.
fn date(s: &str) -> Option<(NaiveDate, &str)> {
    let (negative, s) = match s.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, s.strip_prefix('+').unwrap_or(s)),
    };
    let (year, s) = digits(s, 1, 6)?;
    let (month, s) = digits(s.strip_prefix('-')?, 1, 2)?;
    let (day, s) = digits(s.strip_prefix('-')?, 1, 2)?;
    let year = i32::try_from(year).ok()?;
    let year = if negative { -year } else { year };
    Some((NaiveDate::from_ymd_opt(year, month, day)?, s))
}

/// `H:m[:s[.f…]]`, the whole of `s`: seconds of the day and nanoseconds.
fn time(s: &str) -> Option<(u32, u32)> {
    let (hour, s) = digits(s, 1, 2)?;
    let (minute, s) = digits(s.strip_prefix(':')?, 1, 2)?;
    let (second, nanos, s) = match s.strip_prefix(':') {
        None => (0, 0, s),
        Some(s) => {
            let (second, s) = digits(s, 1, 2)?;
            match s.strip_prefix('.') {
                None => (second, 0, s),
                Some(s) => {
                    let n = s.bytes().take_while(u8::is_ascii_digit).count();
                    let (kept, _) = digits(s, 1, 9)?;
                    let width = n.min(9);
                    let nanos = kept.checked_mul(10u32.pow(u32::try_from(9 - width).ok()?))?;
                    (second, nanos, &s[n..])
                }
            }
        }
    };
    (s.is_empty() && hour < 24 && minute < 60 && second < 60)
        .then_some((hour * 3600 + minute * 60 + second, nanos))
}

/// Splits a zone suffix off a timestamp text: the text before it and the offset in seconds.
fn split_zone(s: &str) -> Option<(&str, i64)> {
    if let Some(rest) = s.strip_suffix(['Z', 'z']) {
        return Some((rest, 0));
    }
    // A zone sign can only come after the date part (`yyyy-MM-dd`, 10 characters).
    let sign_pos = s
        .char_indices()
        .skip(10)
        .filter(|(_, c)| *c == '+' || *c == '-')
        .map(|(i, _)| i)
        .last();
    let Some(pos) = sign_pos else {
        return Some((s, 0));
    };
    let (naive, zone) = s.split_at(pos);
    let negative = zone.starts_with('-');
    let zone = &zone[1..];
    let (hours, minutes) = match zone.split_once(':') {
        Some((h, m)) => (h, m),
        // `hhmm`: only ASCII digits split in two (a 4-byte zone may be one multi-byte
        // character).
        None if zone.len() == 4 && zone.is_ascii() => zone.split_at(2),
        None => (zone, "0"),
    };
    let hours: i64 = hours.parse().ok().filter(|h| *h <= 18)?;
    let minutes: i64 = minutes.parse().ok().filter(|m| *m < 60)?;
    let seconds = hours * 3600 + minutes * 60;
    Some((naive.trim_end(), if negative { -seconds } else { seconds }))
}

/// A year as `yyyy`, with its sign outside 0..=9999.
fn year_text(year: i32) -> String {
    if (0..=9999).contains(&year) {
        format!("{year:04}")
    } else {
        let sign = if year < 0 { '-' } else { '+' };
        format!("{sign}{:04}", year.unsigned_abs())
    }
}

/// `yyyy-MM-dd` of a date.
fn date_text(d: NaiveDate) -> String {
    format!("{}-{:02}-{:02}", year_text(d.year()), d.month(), d.day())
}

/// `yyyy-MM-dd` of a day count since 1970-01-01.
pub(crate) fn format_date(days: i32) -> String {
    match EPOCH.checked_add_signed(chrono::Duration::days(i64::from(days))) {
        Some(date) => date_text(date),
        None => format!("{days} days after 1970-01-01"),
    }
}

/// `yyyy-MM-dd HH:mm:ss[.ffffff]` of microseconds since the epoch (fractional digits only
/// when not zero), followed by `Z` when `utc`.
pub(crate) fn format_timestamp(micros: i64, utc: bool) -> String {
    let zone = if utc { "Z" } else { "" };
    match DateTime::from_timestamp_micros(micros) {
        Some(t) => {
            let (d, time) = (t.date_naive(), t.time());
            let base = format!(
                "{} {:02}:{:02}:{:02}",
                date_text(d),
                time.hour(),
                time.minute(),
                time.second()
            );
            let frac = micros.rem_euclid(1_000_000);
            if frac == 0 {
                format!("{base}{zone}")
            } else {
                format!("{base}.{frac:06}{zone}")
            }
        }
        None => format!("{micros} microseconds after 1970-01-01"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates() {
        assert_eq!(parse_date("2024-01-01"), Some(19723));
        assert_eq!(parse_date(" 2024-1-1 "), Some(19723));
        assert_eq!(parse_date("1970-01-01"), Some(0));
        assert_eq!(parse_date("1969-12-31"), Some(-1));
        assert_eq!(parse_date("0001-01-01"), Some(-719_162));
        assert_eq!(parse_date("+10000-01-01"), Some(2_932_897));
        assert_eq!(parse_date("0000-12-31"), Some(-719_163));
        assert_eq!(parse_date("-0001-12-31"), Some(-719_529));
        for bad in [
            "2024-13-01",
            "2023-02-29",
            "2024-01-01x",
            "2024-01",
            "2024/01/01",
            "",
            "2024-001-01",
            "yesterday",
        ] {
            assert_eq!(parse_date(bad), None, "{bad}");
        }
        assert_eq!(format_date(19723), "2024-01-01");
        assert_eq!(format_date(-719_162), "0001-01-01");
        assert_eq!(format_date(2_932_897), "+10000-01-01");
        assert_eq!(format_date(-719_163), "0000-12-31");
        assert_eq!(format_date(-719_529), "-0001-12-31");
        assert_eq!(format_date(i32::MAX), "2147483647 days after 1970-01-01");
    }

    #[test]
    fn timestamps() {
        let t = |s: &str| parse_timestamp(s).map(|p| (p.micros, p.truncated));
        let base = 19723 * MICROS_PER_DAY;
        assert_eq!(t("2024-01-01"), Some((base, false)));
        assert_eq!(t("2024-01-01 00:00:01.5"), Some((base + 1_500_000, false)));
        assert_eq!(t("2024-01-01T00:00:00.123Z"), Some((base + 123_000, false)));
        assert_eq!(t("2024-01-01t00:00:00.123z"), Some((base + 123_000, false)));
        assert_eq!(t("2024-01-01T02:00:00+02:00"), Some((base, false)));
        assert_eq!(t("2023-12-31T22:00:00-0200"), Some((base, false)));
        assert_eq!(t("2024-01-01T03:00:00+03"), Some((base, false)));
        assert_eq!(t("2024-01-01 00:01"), Some((base + 60_000_000, false)));
        assert_eq!(t("2024-1-1 1:2:3"), Some((base + 3_723_000_000, false)));
        assert_eq!(t("2024-01-01  00:00:00"), Some((base, false)));
        assert_eq!(t("2024-01-01 00:00:00.0000015"), Some((base + 1, true)));
        assert_eq!(
            t("2024-01-01 00:00:00.123456789123"),
            Some((base + 123_456, true))
        );
        assert_eq!(t("1969-12-31 23:59:59.999999"), Some((-1, false)));
        for bad in [
            "2024-01-01 25:00:00",
            "2024-01-01 00:60",
            "2024-01-01 00:00:60",
            "2024-01-01 00:00:00.",
            "2024-01-01 00:00.5",
            "2024-01-01 00",
            "2024-01-01X00:00:00",
            "2024-01-01 00:00:00 extra",
            "2024-01-01T00:00:00+19:00",
            "yesterday",
            "",
        ] {
            assert_eq!(t(bad), None, "{bad}");
        }
        // A zone of one multi-byte character (4 bytes) is refused, not split inside it (a
        // fuzzing finding: this panicked).
        assert_eq!(t("2024-01-01 00:00-\u{10348}"), None);
        assert_eq!(t("2024-01-01 00:00 -\u{73a4}o"), None);
        // Past chrono's calendar.
        assert_eq!(t("+300000-01-01"), None);
        // A zone where none may be.
        let ntz = |s: &str| parse_timestamp_zoned(s, false).map(|p| p.micros);
        assert_eq!(ntz("2024-01-01 00:00:00"), Some(base));
        assert_eq!(ntz("2024-01-01 00:00:00Z"), None);
        assert_eq!(ntz("2024-01-01T02:00:00+02:00"), None);
        assert_eq!(
            format_timestamp(base + 1_500_000, true),
            "2024-01-01 00:00:01.500000Z"
        );
        assert_eq!(format_timestamp(base, false), "2024-01-01 00:00:00");
        assert_eq!(format_timestamp(-1, false), "1969-12-31 23:59:59.999999");
        assert_eq!(
            format_timestamp(-62_135_596_800_000_000, true),
            "0001-01-01 00:00:00Z"
        );
    }

    /// What chrono's format strings read, this reads the same (the forms writers use).
    #[test]
    fn agrees_with_chrono_on_writers_forms() {
        use chrono::NaiveDateTime;
        for s in [
            "2021-03-04 05:06:07",
            "2021-03-04 05:06:07.1",
            "2021-03-04T05:06:07.123456",
            "2021-03-04 05:06:07.123456789",
            "1900-01-01 00:00:00",
            "9999-12-31 23:59:59.999999",
            "2000-02-29T12:00:00",
        ] {
            let chrono = ["%Y-%m-%d %H:%M:%S%.f", "%Y-%m-%dT%H:%M:%S%.f"]
                .iter()
                .find_map(|f| NaiveDateTime::parse_from_str(s, f).ok())
                .map(|n| n.and_utc().timestamp_micros());
            assert_eq!(parse_timestamp(s).map(|p| p.micros), chrono, "{s}");
        }
        let zoned = "2021-03-04T05:06:07.5+05:30";
        let chrono = DateTime::parse_from_rfc3339(zoned)
            .map(|d| d.timestamp_micros())
            .ok();
        assert_eq!(parse_timestamp(zoned).map(|p| p.micros), chrono);
    }
}
