//! Value parsers shared by the commands' flags, for clap's `value_parser`.
//!
//! Durations, sizes and rates are read by `causeway_format::units`, the one grammar
//! the recorder's trigger expressions also use; the flags call it directly. This module
//! holds the few value types that are the CLI's own (positive numbers, directory lists)
//! and [`FlagError`], the message clap prints after "invalid value 'X' for '--flag'".
//! Nothing here reads a file or asks the system anything.

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
    /// A count or rate that must be above zero.
    #[error("invalid number `{0}`: must be a positive number")]
    Positive(String),
    /// A ring buffer size out of range.
    #[error("buffer size `{0}` must be between 4K and 1G per CPU")]
    BufferSize(String),
    /// A duration, size or rate that does not follow the unit grammar.
    #[error(transparent)]
    Unit(#[from] causeway_format::UnitError),
}

/// A positive, finite number (`--disk-iops`).
pub fn positive_f64(s: &str) -> Result<f64, FlagError> {
    match s.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 => Ok(v),
        _ => Err(FlagError::Positive(s.to_string())),
    }
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
    fn path_lists() {
        assert_eq!(path_list(""), Ok(PathList(Vec::new())));
        assert_eq!(
            path_list("/a, /b,,"),
            Ok(PathList(vec![PathBuf::from("/a"), PathBuf::from("/b")]))
        );
    }
}
