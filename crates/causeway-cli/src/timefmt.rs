//! Parsing of user time arguments (`1.5s`, `200ms`).

use anyhow::{Result, bail};

/// Parse a duration: a number with an optional unit `s`, `ms`, `us` or `ns`; a bare
/// number is seconds (as in `perf script --time`).
pub fn parse_duration_ns(s: &str) -> Result<u64> {
    let t = s.trim();
    let (num, scale) = if let Some(n) = t.strip_suffix("ns") {
        (n, 1.0)
    } else if let Some(n) = t.strip_suffix("us") {
        (n, 1e3)
    } else if let Some(n) = t.strip_suffix("ms") {
        (n, 1e6)
    } else if let Some(n) = t.strip_suffix('s') {
        (n, 1e9)
    } else {
        (t, 1e9)
    };
    let v: f64 = match num.trim().parse() {
        Ok(v) => v,
        Err(_) => {
            bail!("invalid time `{s}`: expected a number with an optional unit s, ms, us or ns")
        }
    };
    if !v.is_finite() || v < 0.0 {
        bail!("invalid time `{s}`: must be a non-negative number");
    }
    Ok((v * scale).round() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units() {
        assert_eq!(parse_duration_ns("1.5").unwrap(), 1_500_000_000);
        assert_eq!(parse_duration_ns("1.5s").unwrap(), 1_500_000_000);
        assert_eq!(parse_duration_ns("200ms").unwrap(), 200_000_000);
        assert_eq!(parse_duration_ns("30us").unwrap(), 30_000);
        assert_eq!(parse_duration_ns("100ns").unwrap(), 100);
        assert!(parse_duration_ns("abc").is_err());
        assert!(parse_duration_ns("-1s").is_err());
    }
}
