//! The wall-clock time of a recording, for report headers: people match a report to
//! their logs by date and time, not by a monotonic clock reading.

use causeway_format::{ClockSource, Header, Timestamp};

/// When the recording began, `YYYY-MM-DD HH:MM:SS UTC`, from the first timestamp and
/// the header's offset to real time; `None` for synthetic traces.
pub fn recorded_at(header: &Header, first: Option<Timestamp>) -> Option<String> {
    if header.clock == ClockSource::Synthetic {
        return None;
    }
    let ns = i128::from(first?.0) + i128::from(header.clock_to_realtime_ns);
    let secs = i64::try_from(ns.div_euclid(1_000_000_000)).ok()?;
    Some(format_utc(secs))
}

/// Seconds since the Unix epoch as `YYYY-MM-DD HH:MM:SS UTC` (proleptic Gregorian).
pub fn format_utc(secs: i64) -> String {
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    let (y, m, d) = civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02} UTC",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// Year, month, day of a day count since 1970-01-01, by 400-year eras.
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

#[cfg(test)]
mod tests {
    use super::format_utc;

    #[test]
    fn known_dates() {
        assert_eq!(format_utc(0), "1970-01-01 00:00:00 UTC");
        assert_eq!(format_utc(951_782_400), "2000-02-29 00:00:00 UTC");
        assert_eq!(format_utc(1_700_000_000), "2023-11-14 22:13:20 UTC");
        assert_eq!(format_utc(-1), "1969-12-31 23:59:59 UTC");
    }
}
