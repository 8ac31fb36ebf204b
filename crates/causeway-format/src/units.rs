//! How people write the quantities causeway takes as input: durations, sizes and rates.
//!
//! One grammar for each, shared by every command-line flag and by the recorder's
//! trigger expressions (`blocked>200ms`), so `200ms` means the same everywhere.
//!
//! It lives here, next to [`DurationNs`], because both the CLI and the recorder need
//! it and the recorder must not depend on the CLI; the format crate is the one both
//! already use, and a textual trace form would read durations the same way. It parses
//! strings into numbers and nothing else: which values a flag allows (a power of two,
//! a range) is decided by the flag or the config that uses it, and nothing here prints
//! or knows about clap.
//!
//! The grammars (outer whitespace and whitespace between number and unit are ignored):
//!
//! - duration: `NUMBER UNIT`, NUMBER a decimal (`200`, `1.5`, `.5`; no sign, no
//!   exponent), UNIT one of `ns`, `us` (or `µs`), `ms`, `s`, `min`. A bare number is
//!   seconds ([`parse_duration_ns`]) except where a unit is required
//!   ([`parse_duration_ns_with_unit`], for trigger expressions, where `200` would be
//!   ambiguous). Rounded to the nearest nanosecond.
//! - size: a whole number of bytes with an optional binary unit, case-insensitive:
//!   `B`, `K`/`KiB` (1024), `M`/`MiB`, `G`/`GiB`. `KB`/`MB`/`GB` are refused because
//!   rates use them for powers of ten.
//! - rate (per second, optionally written with `/s`): a positive decimal with an
//!   optional unit, bytes in powers of ten `B`, `KB` (or `kB`), `MB`, `GB`, or bits
//!   `Kbit` (or `kbit`), `Mbit`, `Gbit`; a bare number is bytes.

use crate::ids::DurationNs;

/// Why a duration, size or rate could not be read.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum UnitError {
    /// Not a duration.
    #[error(
        "invalid duration `{0}`: expected a number with a unit ns, us, ms, s or min, like 200ms or 1.5s"
    )]
    Duration(String),
    /// A duration without its unit where one is required.
    #[error("duration `{0}` needs a unit (ns, us, ms, s, min), like 200ms")]
    DurationUnit(String),
    /// Not a size.
    #[error(
        "invalid size `{0}`: expected a whole number of bytes with an optional unit K, M or G (1K = 1024 bytes)"
    )]
    Size(String),
    /// Not a rate.
    #[error(
        "invalid rate `{0}`: expected a number per second with an optional unit Gbit, Mbit, Kbit, GB, MB, KB or B"
    )]
    Rate(String),
    /// A rate of zero.
    #[error("invalid rate `{0}`: must be positive")]
    ZeroRate(String),
    /// A negative quantity.
    #[error("invalid {what} `{input}`: must not be negative")]
    Negative {
        /// `duration`, `size` or `rate`.
        what: &'static str,
        /// The text given.
        input: String,
    },
    /// More than 64 bits hold.
    #[error("{what} `{input}` is too large")]
    TooLarge {
        /// `duration` or `size`.
        what: &'static str,
        /// The text given.
        input: String,
    },
}

/// Duration units and their length in nanoseconds.
const DURATION_UNITS: [(&str, u64); 6] = [
    ("ns", 1),
    ("us", 1_000),
    ("µs", 1_000),
    ("ms", 1_000_000),
    ("s", 1_000_000_000),
    ("min", 60_000_000_000),
];

/// Size units (binary, matched without regard to case) and their length in bytes.
const SIZE_UNITS: [(&str, u64); 8] = [
    ("", 1),
    ("b", 1),
    ("k", 1 << 10),
    ("kib", 1 << 10),
    ("m", 1 << 20),
    ("mib", 1 << 20),
    ("g", 1 << 30),
    ("gib", 1 << 30),
];

/// Rate units (case-sensitive: `b` is a bit, `B` a byte) in bytes per second.
const RATE_UNITS: [(&str, f64); 10] = [
    ("", 1.0),
    ("B", 1.0),
    ("KB", 1e3),
    ("kB", 1e3),
    ("MB", 1e6),
    ("GB", 1e9),
    ("Kbit", 1e3 / 8.0),
    ("kbit", 1e3 / 8.0),
    ("Mbit", 1e6 / 8.0),
    ("Gbit", 1e9 / 8.0),
];

/// A non-negative decimal as written: whole digits and fraction digits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Decimal<'a> {
    whole: &'a str,
    fraction: &'a str,
}

/// Split `s` into its leading decimal number and the rest (trimmed). `None` if it does
/// not start with a digit or a `.` followed by a digit.
fn split_decimal(s: &str) -> Option<(Decimal<'_>, &str)> {
    let whole_len = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    let (whole, rest) = s.split_at(whole_len);
    let (fraction, rest) = match rest.strip_prefix('.') {
        Some(after) => {
            let n = after
                .find(|c: char| !c.is_ascii_digit())
                .unwrap_or(after.len());
            after.split_at(n)
        }
        None => ("", rest),
    };
    if whole.is_empty() && fraction.is_empty() {
        return None;
    }
    Some((Decimal { whole, fraction }, rest.trim()))
}

impl Decimal<'_> {
    /// The number times `scale`, rounded to the nearest integer; `None` past `u64`.
    fn scaled(self, scale: u64) -> Option<u64> {
        let whole: u128 = if self.whole.is_empty() {
            0
        } else {
            self.whole.parse().ok()?
        };
        // Digits past the 18th cannot change a result rounded to a unit of at most
        // 10^-9 of a minute, and keep 10^len within u128.
        let digits = &self.fraction[..self.fraction.len().min(18)];
        let fraction = if digits.is_empty() {
            0
        } else {
            let num: u128 = digits.parse().ok()?;
            let den = 10u128.pow(digits.len() as u32);
            (num * scale as u128 + den / 2) / den
        };
        let total = whole.checked_mul(scale as u128)?.checked_add(fraction)?;
        u64::try_from(total).ok()
    }

    /// The number as a float (for rates, which are floats downstream).
    fn as_f64(self) -> Option<f64> {
        let whole = if self.whole.is_empty() {
            "0"
        } else {
            self.whole
        };
        format!("{whole}.{}0", self.fraction).parse().ok()
    }
}

fn negative(what: &'static str, input: &str) -> Option<UnitError> {
    input
        .trim_start()
        .starts_with('-')
        .then(|| UnitError::Negative {
            what,
            input: input.to_string(),
        })
}

fn parse_duration(s: &str, unit_required: bool) -> Result<DurationNs, UnitError> {
    if let Some(e) = negative("duration", s) {
        return Err(e);
    }
    let bad = || UnitError::Duration(s.to_string());
    let (num, unit) = split_decimal(s.trim()).ok_or_else(bad)?;
    let scale = if unit.is_empty() {
        if unit_required {
            return Err(UnitError::DurationUnit(s.to_string()));
        }
        1_000_000_000
    } else {
        DURATION_UNITS
            .iter()
            .find(|(name, _)| *name == unit)
            .map(|&(_, ns)| ns)
            .ok_or_else(bad)?
    };
    num.scaled(scale)
        .map(DurationNs)
        .ok_or_else(|| UnitError::TooLarge {
            what: "duration",
            input: s.to_string(),
        })
}

/// Parse a duration: a decimal with a unit `ns`, `us`, `ms`, `s` or `min`; a bare
/// number is seconds (as in `perf script --time`). `1.5s`, `200ms`, `10`.
pub fn parse_duration_ns(s: &str) -> Result<DurationNs, UnitError> {
    parse_duration(s, false)
}

/// Parse a duration whose unit is required: `200ms` but not `200`.
pub fn parse_duration_ns_with_unit(s: &str) -> Result<DurationNs, UnitError> {
    parse_duration(s, true)
}

/// Parse a size in bytes: a whole number with an optional binary unit `B`, `K`/`KiB`,
/// `M`/`MiB`, `G`/`GiB` (any case). `64M`, `8KiB`, `4096`.
pub fn parse_size_bytes(s: &str) -> Result<u64, UnitError> {
    if let Some(e) = negative("size", s) {
        return Err(e);
    }
    let bad = || UnitError::Size(s.to_string());
    let t = s.trim();
    let (whole, unit) = t.split_at(t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len()));
    if whole.is_empty() {
        return Err(bad());
    }
    let num = Decimal {
        whole,
        fraction: "",
    };
    let scale = SIZE_UNITS
        .iter()
        .find(|(name, _)| name.eq_ignore_ascii_case(unit.trim()))
        .map(|&(_, bytes)| bytes)
        .ok_or_else(bad)?;
    num.scaled(scale).ok_or_else(|| UnitError::TooLarge {
        what: "size",
        input: s.to_string(),
    })
}

/// Parse a rate per second into bytes per second: a positive decimal with an optional
/// unit `Gbit`, `Mbit`, `Kbit`, `GB`, `MB`, `KB` or `B` and an optional `/s`; a bare
/// number is bytes. `10Gbit`, `125MB/s`, `4096`.
pub fn parse_rate_bytes_per_sec(s: &str) -> Result<f64, UnitError> {
    if let Some(e) = negative("rate", s) {
        return Err(e);
    }
    let bad = || UnitError::Rate(s.to_string());
    let (num, unit) = split_decimal(s.trim()).ok_or_else(bad)?;
    let unit = unit.strip_suffix("/s").map_or(unit, str::trim_end);
    let scale = RATE_UNITS
        .iter()
        .find(|(name, _)| *name == unit)
        .map(|&(_, scale)| scale)
        .ok_or_else(bad)?;
    let v = num.as_f64().ok_or_else(bad)? * scale;
    if !v.is_finite() || v <= 0.0 {
        return Err(UnitError::ZeroRate(s.to_string()));
    }
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_accept() {
        let cases: &[(&str, u64)] = &[
            ("1.5", 1_500_000_000),
            ("1.5s", 1_500_000_000),
            ("200ms", 200_000_000),
            ("30us", 30_000),
            ("30µs", 30_000),
            ("100ns", 100),
            ("10", 10_000_000_000),
            ("2min", 120_000_000_000),
            (" 1.5 s ", 1_500_000_000),
            (".5s", 500_000_000),
            ("5.s", 5_000_000_000),
            ("0", 0),
            ("0.1s", 100_000_000),
            ("0.3ms", 300_000),
            ("1.5ns", 2),
            ("0.0000000004", 0),
            ("18446744073709551615ns", u64::MAX),
        ];
        for &(s, ns) in cases {
            assert_eq!(parse_duration_ns(s), Ok(DurationNs(ns)), "{s}");
        }
    }

    #[test]
    fn durations_reject() {
        let cases: &[(&str, &str)] = &[
            ("abc", "invalid duration"),
            ("-1s", "must not be negative"),
            ("", "invalid duration"),
            (".", "invalid duration"),
            ("1e3", "invalid duration"),
            ("+1s", "invalid duration"),
            ("1.2.3s", "invalid duration"),
            ("5 m", "invalid duration"),
            ("1h", "invalid duration"),
            ("200MS", "invalid duration"),
            ("inf", "invalid duration"),
            ("NaN", "invalid duration"),
            ("1s2", "invalid duration"),
            ("18446744073709551616ns", "too large"),
            ("1000000000000min", "too large"),
        ];
        for &(s, msg) in cases {
            let e = parse_duration_ns(s).unwrap_err().to_string();
            assert!(e.contains(msg), "{s}: {e}");
        }
    }

    #[test]
    fn durations_with_a_required_unit() {
        assert_eq!(
            parse_duration_ns_with_unit("200ms"),
            Ok(DurationNs(200_000_000))
        );
        assert_eq!(
            parse_duration_ns_with_unit("1.5s"),
            Ok(DurationNs(1_500_000_000))
        );
        let e = parse_duration_ns_with_unit("200").unwrap_err();
        assert_eq!(e, UnitError::DurationUnit("200".into()));
        assert!(e.to_string().contains("needs a unit"), "{e}");
        assert!(matches!(
            parse_duration_ns_with_unit("fast"),
            Err(UnitError::Duration(_))
        ));
    }

    #[test]
    fn sizes_accept() {
        let cases: &[(&str, u64)] = &[
            ("64M", 64 << 20),
            ("512k", 512 << 10),
            ("4096", 4096),
            ("4096B", 4096),
            ("8K", 8192),
            ("16KiB", 16384),
            ("16kib", 16384),
            ("2MiB", 2 << 20),
            ("1G", 1 << 30),
            ("1GiB", 1 << 30),
            (" 64 M ", 64 << 20),
            ("0", 0),
        ];
        for &(s, bytes) in cases {
            assert_eq!(parse_size_bytes(s), Ok(bytes), "{s}");
        }
    }

    #[test]
    fn sizes_reject() {
        let cases: &[(&str, &str)] = &[
            ("12X", "invalid size"),
            ("M", "invalid size"),
            ("", "invalid size"),
            ("64MB", "invalid size"),
            ("1.5M", "invalid size"),
            (".5K", "invalid size"),
            ("big", "invalid size"),
            ("-4K", "must not be negative"),
            ("17179869184G", "too large"),
            ("99999999999999999999", "too large"),
        ];
        for &(s, msg) in cases {
            let e = parse_size_bytes(s).unwrap_err().to_string();
            assert!(e.contains(msg), "{s}: {e}");
        }
    }

    #[test]
    fn rates_accept() {
        let cases: &[(&str, f64)] = &[
            ("10Gbit", 1.25e9),
            ("100Mbit", 1.25e7),
            ("8Kbit", 1e3),
            ("8kbit", 1e3),
            ("125MB", 1.25e8),
            ("2GB", 2e9),
            ("4KB", 4e3),
            ("4kB", 4e3),
            ("4096", 4096.0),
            ("4096B", 4096.0),
            ("1.5GB", 1.5e9),
            ("10Gbit/s", 1.25e9),
            ("125 MB/s", 1.25e8),
        ];
        for &(s, v) in cases {
            assert_eq!(parse_rate_bytes_per_sec(s), Ok(v), "{s}");
        }
    }

    #[test]
    fn rates_reject() {
        let cases: &[(&str, &str)] = &[
            ("0", "must be positive"),
            ("0Gbit", "must be positive"),
            ("fast", "invalid rate"),
            ("10gbit", "invalid rate"),
            ("10Gb", "invalid rate"),
            ("1e9", "invalid rate"),
            ("", "invalid rate"),
            ("-1MB", "must not be negative"),
        ];
        for &(s, msg) in cases {
            let e = parse_rate_bytes_per_sec(s).unwrap_err().to_string();
            assert!(e.contains(msg), "{s}: {e}");
        }
    }
}
