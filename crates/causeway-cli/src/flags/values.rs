//! Value parsers shared by the commands' flags, for clap's `value_parser`.
//!
//! Durations, sizes and rates are read by `causeway_format::units`, the one grammar
//! the recorder's trigger expressions also use; the flags call it directly. This module
//! holds the few value types that are the CLI's own (positive numbers, directory lists)
//! and [`FlagError`], the message clap prints after "invalid value 'X' for '--flag'".
//! Nothing here reads a file or asks the system anything, except [`pid`], which reads
//! the kernel's largest PID so that a PID no process can have is refused by name.

use std::convert::Infallible;
use std::path::PathBuf;

/// Why a flag's value was refused (beyond the unit grammar's own errors).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum FlagError {
    /// A percentage that is not a number.
    #[error("invalid threshold `{0}`: expected e.g. 20%")]
    Percent(String),
    /// A negative percentage.
    #[error("invalid threshold `{0}`: must be a non-negative percentage")]
    NegativePercent(String),
    /// A bare number outside 0..=1.
    #[error(
        "invalid threshold `{0}`: a bare number is a share between 0 and 1; add `s` or `ms` for a time"
    )]
    Share(String),
    /// Neither a share nor a time.
    #[error("invalid threshold `{0}`: expected a share (20%, 0.2) or a time (1.5s)")]
    Threshold(String),
    /// A process name the kernel cannot have.
    #[error("`{0}` is not a process name: it has 1 to 15 bytes (the kernel's comm)")]
    Comm(String),
    /// A watch target that is neither a symbol nor an address.
    #[error("`{0}` is no variable: give a symbol name or a hex address (0x...)")]
    WatchTarget(String),
    /// A watchpoint length the hardware does not have.
    #[error("`{0}` is no watchpoint length: give 1, 2, 4 or 8 (bytes)")]
    WatchLen(String),
    /// A count or rate that must be above zero.
    #[error("invalid number `{0}`: must be a positive number")]
    Positive(String),
    /// A duration that must be above zero.
    #[error("`{0}` is no time: give a duration above zero, e.g. 10s")]
    ZeroDuration(String),
    /// PID 0 is the idle task, not a process.
    #[error("PID 0 is the kernel's idle task, not a process (give a PID from `ps`)")]
    PidZero,
    /// A PID above the system's `pid_max`.
    #[error("no process can have PID {pid}: PIDs on this system go up to {max} (kernel.pid_max)")]
    PidRange {
        /// The PID given.
        pid: u64,
        /// The largest PID the kernel hands out.
        max: u64,
    },
    /// A PID that is not a number.
    #[error("`{0}` is not a PID (a positive number)")]
    Pid(String),
    /// A flight-recorder window too small to hold a useful dump.
    #[error(
        "flight window `{input}` is too small: it must hold at least {min_events} events ({min_bytes} bytes, about {min_kib}K)"
    )]
    FlightTooSmall {
        /// The size given.
        input: String,
        /// The fewest events a window keeps.
        min_events: u64,
        /// Their size.
        min_bytes: u64,
        /// The same in KiB, rounded up.
        min_kib: u64,
    },
    /// A ring buffer size out of range.
    #[error("buffer size `{0}` must be between 4K and 1G per CPU")]
    BufferSize(String),
    /// A wall-clock time in neither accepted form.
    #[error(
        "`{0}` is no time of day: give RFC 3339 (2026-11-29T06:30:00Z, or with +01:00) or @SECONDS since the epoch (`date +@%s`)"
    )]
    WallTime(String),
    /// A duration, size or rate that does not follow the unit grammar.
    #[error(transparent)]
    Unit(#[from] causeway_format::UnitError),
}

/// A wall-clock time: RFC 3339 with a zone (`2026-11-29T06:30:00Z`,
/// `2026-11-29T07:30:00.5+01:00`) or `@SECONDS[.FRACTION]` since the Unix epoch.
pub fn wall_time(s: &str) -> Result<std::time::SystemTime, FlagError> {
    let bad = || FlagError::WallTime(s.to_string());
    let ns = match s.strip_prefix('@') {
        Some(secs) => {
            let v: f64 = secs.parse().map_err(|_| bad())?;
            if !v.is_finite() || v < 0.0 {
                return Err(bad());
            }
            (v * 1e9) as i128
        }
        None => rfc3339_ns(s).ok_or_else(bad)?,
    };
    let ns = u64::try_from(ns).map_err(|_| bad())?;
    Ok(std::time::UNIX_EPOCH + std::time::Duration::from_nanos(ns))
}

/// Nanoseconds since the epoch of `YYYY-MM-DDTHH:MM:SS[.frac](Z|±HH:MM)`.
fn rfc3339_ns(s: &str) -> Option<i128> {
    let num = |t: &str| -> Option<i64> {
        (!t.is_empty() && t.bytes().all(|b| b.is_ascii_digit())).then(|| t.parse().ok())?
    };
    let (date, rest) = s.split_once(['T', 't', ' '])?;
    let mut d = date.splitn(3, '-');
    let (y, mo, da) = (num(d.next()?)?, num(d.next()?)?, num(d.next()?)?);
    let zone_at = rest.find(['Z', 'z', '+', '-'])?;
    let (time, zone) = rest.split_at(zone_at);
    let (hms, frac) = time.split_once('.').unwrap_or((time, ""));
    let mut t = hms.splitn(3, ':');
    let (h, mi, sec) = (num(t.next()?)?, num(t.next()?)?, num(t.next()?)?);
    if !(1..=12).contains(&mo) || !(1..=31).contains(&da) || h > 23 || mi > 59 || sec > 60 {
        return None;
    }
    let frac_ns = if frac.is_empty() {
        0
    } else {
        let digits: String = frac.chars().take(9).collect();
        num(&digits)? * 10i64.pow(9 - digits.len() as u32)
    };
    let offset_s = match zone {
        "Z" | "z" => 0,
        z => {
            let sign = if z.starts_with('-') { -1 } else { 1 };
            let (oh, om) = z[1..].split_once(':')?;
            sign * (num(oh)? * 3600 + num(om)? * 60)
        }
    };
    // Days since the epoch of a proleptic Gregorian date (Howard Hinnant's
    // days_from_civil).
    let yy = if mo <= 2 { y - 1 } else { y };
    let era = yy.div_euclid(400);
    let yoe = yy - era * 400;
    let mp = (mo + 9) % 12;
    let doy = (153 * mp + 2) / 5 + da - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    let secs = days * 86_400 + h * 3600 + mi * 60 + sec - offset_s;
    Some(i128::from(secs) * 1_000_000_000 + i128::from(frac_ns))
}

/// A positive, finite number (`--disk-iops`).
pub fn positive_f64(s: &str) -> Result<f64, FlagError> {
    match s.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 => Ok(v),
        _ => Err(FlagError::Positive(s.to_string())),
    }
}

/// A duration above zero (`--duration`: a zero-length recording records nothing).
pub fn positive_duration(s: &str) -> Result<causeway_format::DurationNs, FlagError> {
    let d = causeway_format::units::parse_duration_ns(s)?;
    if d.0 == 0 {
        return Err(FlagError::ZeroDuration(s.to_string()));
    }
    Ok(d)
}

/// The largest PID this kernel hands out (`/proc/sys/kernel/pid_max`; the kernel's
/// upper limit, 2^22, when it cannot be read).
fn pid_max() -> u64 {
    std::fs::read_to_string("/proc/sys/kernel/pid_max")
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(1 << 22)
}

/// A PID that some process could have: 1 to `pid_max` (whether it exists is for the
/// recorder to say, when it starts).
pub fn pid(s: &str) -> Result<u32, FlagError> {
    let n: u64 = s
        .trim()
        .parse()
        .map_err(|_| FlagError::Pid(s.to_string()))?;
    if n == 0 {
        return Err(FlagError::PidZero);
    }
    let max = pid_max();
    // pid_max is one past the largest PID.
    if n >= max {
        return Err(FlagError::PidRange {
            pid: n,
            max: max - 1,
        });
    }
    Ok(n as u32)
}

/// Directories given as one comma-separated value; empty items are dropped, so an empty
/// value is an empty list.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PathList(pub Vec<PathBuf>);

/// Read a [`PathList`] (every text is one).
pub fn path_list(s: &str) -> Result<PathList, Infallible> {
    Ok(PathList(
        s.split(',')
            .map(str::trim)
            .filter(|p| !p.is_empty())
            .map(PathBuf::from)
            .collect(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positive_numbers() {
        for (s, v) in [("1", 1.0), ("2.5", 2.5), (" 300 ", 300.0), ("1e3", 1e3)] {
            assert_eq!(positive_f64(s), Ok(v), "{s}");
        }
        for s in ["0", "-1", "inf", "NaN", "", "many"] {
            assert_eq!(positive_f64(s), Err(FlagError::Positive(s.into())), "{s}");
        }
    }

    #[test]
    fn pids_no_process_can_have_are_refused_by_name() {
        assert_eq!(pid("1"), Ok(1));
        assert_eq!(pid("0"), Err(FlagError::PidZero));
        assert_eq!(pid("x1"), Err(FlagError::Pid("x1".into())));
        let big = pid("4294967295").unwrap_err();
        assert!(
            matches!(big, FlagError::PidRange { pid: 4294967295, max } if max < 4294967295),
            "{big:?}"
        );
        assert!(big.to_string().contains("pid_max"), "{big}");
        // Past u32 too: still a range error, not a parse error.
        assert!(matches!(
            pid("99999999999"),
            Err(FlagError::PidRange { .. })
        ));
    }

    #[test]
    fn durations_must_be_above_zero() {
        assert_eq!(positive_duration("1.5").unwrap().0, 1_500_000_000);
        for s in ["0", "0s", "0ms"] {
            assert_eq!(positive_duration(s), Err(FlagError::ZeroDuration(s.into())));
        }
        assert!(matches!(positive_duration("soon"), Err(FlagError::Unit(_))));
    }

    #[test]
    fn wall_times_in_rfc_3339_and_epoch_seconds() {
        let at = |s| {
            wall_time(s)
                .unwrap()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_nanos()
        };
        // `date -d 2026-11-29T06:30:00Z +%s` = 1795933800.
        assert_eq!(at("2026-11-29T06:30:00Z"), 1_795_933_800_000_000_000);
        assert_eq!(at("2026-11-29T07:30:00+01:00"), 1_795_933_800_000_000_000);
        assert_eq!(at("2026-11-29T06:30:00.25Z"), 1_795_933_800_250_000_000);
        assert_eq!(at("@1795933800.5"), 1_795_933_800_500_000_000);
        assert_eq!(at("1970-01-01T00:00:00Z"), 0);
        for bad in [
            "06:30",
            "2026-13-01T00:00:00Z",
            "2026-11-29T06:30:00",
            "@-1",
            "@x",
        ] {
            assert_eq!(
                wall_time(bad),
                Err(FlagError::WallTime(bad.into())),
                "{bad}"
            );
        }
    }

    #[test]
    fn path_lists() {
        assert_eq!(path_list(""), Ok(PathList(Vec::new())));
        assert_eq!(
            path_list("/a, /b,,"),
            Ok(PathList(vec![PathBuf::from("/a"), PathBuf::from("/b")]))
        );
    }
}
