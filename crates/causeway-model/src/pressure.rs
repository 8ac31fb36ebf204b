//! Pressure stall information over a recording: the share of the time some (or all)
//! tasks of the system, or of a cgroup, stalled on CPU, memory or I/O, from the PSI
//! totals the recorder sampled (format 1.9).
//!
//! PSI is the kernel's own account of what a shortage costs; it is given beside the
//! answers that name a limit, as a second measure from outside the trace's model.

use causeway_format::{CgroupRow, PressureResource, Tables};
use std::collections::BTreeMap;

/// One resource's stalls over the recording, for one cgroup or the system.
#[derive(Clone, Debug, PartialEq)]
pub struct PressureShare {
    /// The cgroup's path (v2), or `/` for the whole system.
    pub path: String,
    /// Which resource.
    pub resource: PressureResource,
    /// Share of the time some tasks stalled on it, 0 to 1.
    pub some: f64,
    /// Share of the time all non-idle tasks stalled on it at once, 0 to 1.
    pub full: f64,
}

/// The stall shares between the first and the last sample of each cgroup and
/// resource (at least two samples a tenth of a second apart), by path then resource.
pub fn pressure_shares(tables: &Tables) -> Vec<PressureShare> {
    type Key = (String, PressureResource);
    // First and last (ts ns, some µs, full µs).
    let mut span: BTreeMap<Key, [(u64, u64, u64); 2]> = BTreeMap::new();
    for r in &tables.cgroups {
        let CgroupRow::Pressure(p) = r else { continue };
        let now = (p.ts.0, p.some_us, p.full_us);
        let key = (tables.string(p.path).to_string(), p.resource);
        span.entry(key)
            .and_modify(|s| {
                if now.0 < s[0].0 {
                    s[0] = now;
                }
                if now.0 >= s[1].0 {
                    s[1] = now;
                }
            })
            .or_insert([now, now]);
    }
    span.into_iter()
        .filter_map(|((path, resource), [a, b])| {
            let ns = b.0.checked_sub(a.0).filter(|&ns| ns >= 100_000_000)?;
            let share = |x: u64, y: u64| (y.saturating_sub(x) as f64 * 1e3 / ns as f64).min(1.0);
            Some(PressureShare {
                path,
                resource,
                some: share(a.1, b.1),
                full: share(a.2, b.2),
            })
        })
        .collect()
}

/// The shares of cgroup `path`, else of the system, for `resource`.
pub fn pressure_of<'a>(
    shares: &'a [PressureShare],
    path: &str,
    resource: PressureResource,
) -> Option<&'a PressureShare> {
    let of = |p: &str| {
        shares
            .iter()
            .find(|s| s.path == p && s.resource == resource)
    };
    of(path).or_else(|| of("/"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use causeway_format::{PressureSample, StringId, Timestamp};

    fn row(ts: u64, path: u32, r: PressureResource, some: u64, full: u64) -> CgroupRow {
        CgroupRow::Pressure(PressureSample {
            ts: Timestamp(ts),
            path: StringId(path),
            resource: r,
            some_us: some,
            full_us: full,
        })
    }

    #[test]
    fn shares_are_the_stall_time_between_the_first_and_last_sample() {
        let m = PressureResource::Memory;
        let cgroups = vec![
            row(1_000_000_000, 1, m, 5_000, 1_000),
            row(1_500_000_000, 1, m, 100_000, 50_000),
            // Two seconds later: 760 ms of some, 400 ms of full stalls.
            row(3_000_000_000, 1, m, 765_000, 401_000),
            // One sample only: no share.
            row(2_000_000_000, 2, m, 1, 1),
            // Too close together.
            row(2_000_000_000, 2, PressureResource::Io, 1, 1),
        ];
        let t = Tables {
            strings: vec![String::new(), "/".into(), "/app".into()],
            cgroups,
            ..Default::default()
        };
        let s = pressure_shares(&t);
        assert_eq!(s.len(), 1, "{s:?}");
        assert_eq!(s[0].path, "/");
        assert!((s[0].some - 0.38).abs() < 1e-9, "{s:?}");
        assert!((s[0].full - 0.2).abs() < 1e-9, "{s:?}");
        // A cgroup without its own falls back to the system's.
        assert_eq!(
            pressure_of(&s, "/app", m).map(|p| p.path.as_str()),
            Some("/")
        );
        assert!(pressure_of(&s, "/app", PressureResource::Cpu).is_none());
    }
}
