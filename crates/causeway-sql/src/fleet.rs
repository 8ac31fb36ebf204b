//! The fleet census: over the tables of many hosts, which knot and sink call sites
//! recur on the most hosts (and how much waiting they hold in all), and which hosts
//! wait differently from the rest: the Earth Mover's Distance, in octaves, between a
//! host's histogram of blocked waits and the fleet's (OSprof's comparison of profiles,
//! from causeway-latency).
//!
//! Everything is read with SQL from the tables, so the same census runs wherever the
//! tables can be queried; only the distances are computed here.

use crate::{Session, SqlError};
use arrow::array::{Array, AsArray};
use arrow::datatypes::Int64Type;
use arrow::record_batch::RecordBatch;
use causeway_latency::{Histogram, Resolution, emd_octaves};
use serde::Serialize;
use std::collections::BTreeMap;

/// The census's queries: call sites of knots and sinks, ranked by hosts then waiting.
/// A call site is where the edge's waits blocked in the program's own code
/// (`wait_site`: its innermost own functions, with the library call as context), so
/// that two programs blocked in the same C library call are two sites; tables written
/// before that column, or edges whose waits never reached the program's code, fall
/// back to the heaviest wait stack's innermost frames.
pub const SITES_QUERY: &str = "
SELECT kind, site, count(DISTINCT host) AS hosts, count(DISTINCT trace_id) AS traces,
       sum(weight_ns) AS waiting_ns
FROM (
    SELECT 'knot' AS kind, coalesce(e.wait_site, e.wait_stack) AS site, e.host, e.trace_id, e.weight_ns
    FROM bottleneck_edges e WHERE e.knot IS NOT NULL AND coalesce(e.wait_site, e.wait_stack) IS NOT NULL
    UNION ALL
    SELECT 'sink' AS kind, coalesce(e.wait_site, e.wait_stack) AS site, e.host, e.trace_id, e.weight_ns
    FROM bottleneck_edges e
    JOIN sinks s ON s.trace_id = e.trace_id AND s.host = e.host AND s.vertex = e.to_vertex
    WHERE NOT s.background AND coalesce(e.wait_site, e.wait_stack) IS NOT NULL
)
GROUP BY kind, site
ORDER BY hosts DESC, waiting_ns DESC, site";

/// The census's call sites in two queries, one per branch of [`SITES_QUERY`], whose
/// rows `census` merges in its order. On a Ballista cluster the one-query form never
/// answers when a branch is empty (a `UNION ALL` with an empty join under `GROUP BY`;
/// traces with no sink have one), and the branches never share a group (the kind
/// differs), so the merge gives the same rows.
const BRANCH_QUERIES: [&str; 2] = [
    "SELECT 'knot' AS kind, coalesce(e.wait_site, e.wait_stack) AS site, count(DISTINCT e.host) AS hosts,
            count(DISTINCT e.trace_id) AS traces, sum(e.weight_ns) AS waiting_ns
     FROM bottleneck_edges e WHERE e.knot IS NOT NULL AND coalesce(e.wait_site, e.wait_stack) IS NOT NULL
     GROUP BY coalesce(e.wait_site, e.wait_stack)",
    "SELECT 'sink' AS kind, coalesce(e.wait_site, e.wait_stack) AS site, count(DISTINCT e.host) AS hosts,
            count(DISTINCT e.trace_id) AS traces, sum(e.weight_ns) AS waiting_ns
     FROM bottleneck_edges e
     JOIN sinks s ON s.trace_id = e.trace_id AND s.host = e.host AND s.vertex = e.to_vertex
     WHERE NOT s.background AND coalesce(e.wait_site, e.wait_stack) IS NOT NULL
     GROUP BY coalesce(e.wait_site, e.wait_stack)",
];

/// Each host's histogram of blocked waits (log2 bins, summed over its traces).
pub const WAITS_QUERY: &str = "
SELECT host, from_ns, sum(count) AS count
FROM latency_bins WHERE kind = 'blocked'
GROUP BY host, from_ns ORDER BY host, from_ns";

/// One call site of the census.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Site {
    /// `knot` (a wait inside a knot) or `sink` (a wait for a sink).
    pub kind: String,
    /// Where the waits blocked in the program's own code (`slowHandler ← (anonymous)
    /// (pbkdf2Sync → kdf_pbkdf2_derive)`), or, failing that, the wait stack, outermost
    /// frame first, `;`-joined.
    pub site: String,
    /// Hosts whose recordings show it.
    pub hosts: i64,
    /// Traces that show it.
    pub traces: i64,
    /// Waiting it holds, summed over them.
    pub waiting_ns: i64,
}

/// A host and how far its waits are from the fleet's.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Outlier {
    /// The host.
    pub host: String,
    /// EMD between its blocked-wait histogram and the fleet's, in octaves.
    pub emd_octaves: f64,
    /// Blocked waits it recorded.
    pub waits: u64,
    /// Their mean, ns, counted at the bins' lower bounds (the tables keep bins, not
    /// each wait).
    pub mean_ns: u64,
    /// The fleet's mean, ns, counted the same way.
    pub fleet_mean_ns: u64,
}

/// The census.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Census {
    /// Hosts in the tables.
    pub hosts: i64,
    /// Traces in the tables.
    pub traces: i64,
    /// Call sites, most hosts first (at most `top`).
    pub sites: Vec<Site>,
    /// Hosts, farthest from the fleet first (at most `top`).
    pub outliers: Vec<Outlier>,
}

fn col_i64(b: &RecordBatch, name: &str, row: usize) -> i64 {
    let a = b.column_by_name(name).expect("the query names it");
    let a = a.as_primitive::<Int64Type>();
    if a.is_null(row) { 0 } else { a.value(row) }
}

fn col_str(b: &RecordBatch, name: &str, row: usize) -> String {
    let a = b.column_by_name(name).expect("the query names it");
    // Text may come back as Utf8 or Utf8View depending on the plan.
    arrow::util::display::array_value_to_string(a, row).unwrap_or_default()
}

/// Run the census over the session's tables.
pub fn census(s: &Session, top: usize) -> Result<Census, SqlError> {
    let counts = s.query(
        "SELECT count(DISTINCT host) AS hosts, count(DISTINCT trace_id) AS traces FROM traces",
    )?;
    let (hosts, traces) = counts
        .first()
        .filter(|b| b.num_rows() > 0)
        .map_or((0, 0), |b| {
            (col_i64(b, "hosts", 0), col_i64(b, "traces", 0))
        });
    let mut sites = Vec::new();
    for q in BRANCH_QUERIES {
        for b in s.query(q)? {
            for r in 0..b.num_rows() {
                sites.push(Site {
                    kind: col_str(&b, "kind", r),
                    site: col_str(&b, "site", r),
                    hosts: col_i64(&b, "hosts", r),
                    traces: col_i64(&b, "traces", r),
                    waiting_ns: col_i64(&b, "waiting_ns", r),
                });
            }
        }
    }
    // SITES_QUERY's order, then the kind (its ties are left open there).
    sites.sort_by(|a, b| {
        (b.hosts, b.waiting_ns)
            .cmp(&(a.hosts, a.waiting_ns))
            .then_with(|| a.site.cmp(&b.site))
            .then_with(|| a.kind.cmp(&b.kind))
    });
    sites.truncate(top);
    let mut per_host: BTreeMap<String, Histogram> = BTreeMap::new();
    let res = Resolution::LOG2;
    for b in s.query(WAITS_QUERY)? {
        for r in 0..b.num_rows() {
            let h = per_host
                .entry(col_str(&b, "host", r))
                .or_insert_with(|| Histogram::new(res));
            let from = col_i64(&b, "from_ns", r).max(0) as u64;
            h.add_bin(res.bin_of(from), col_i64(&b, "count", r).max(0) as u64);
        }
    }
    Ok(Census {
        hosts,
        traces,
        sites,
        outliers: outliers(&per_host, top),
    })
}

/// Weight of one host in the fleet's histogram: every host's waits are scaled to this
/// many, so each host counts once.
const HOST_WEIGHT: f64 = 1e6;

/// Hosts ranked by the distance of their wait histogram from the fleet's, farthest
/// first. The fleet's histogram is the mean of the hosts' normalised histograms, not
/// the sum of their waits: a host that waited ten times as often would otherwise
/// define what is normal, and the odd one out among busy hosts would be a quiet one.
pub fn outliers(per_host: &BTreeMap<String, Histogram>, top: usize) -> Vec<Outlier> {
    let mut fleet = Histogram::new(Resolution::LOG2);
    for h in per_host.values().filter(|h| !h.is_empty()) {
        let scale = HOST_WEIGHT / h.total() as f64;
        for (bin, &n) in h.counts().iter().enumerate() {
            if n > 0 {
                fleet.add_bin(bin as u32, (n as f64 * scale).round() as u64);
            }
        }
    }
    let mut out: Vec<Outlier> = per_host
        .iter()
        .map(|(host, h)| Outlier {
            host: host.clone(),
            emd_octaves: emd_octaves(h, &fleet).unwrap_or(0.0),
            waits: h.total(),
            mean_ns: h.mean_ns(),
            fleet_mean_ns: fleet.mean_ns(),
        })
        .collect();
    out.sort_by(|a, b| {
        b.emd_octaves
            .total_cmp(&a.emd_octaves)
            .then(a.host.cmp(&b.host))
    });
    out.truncate(top);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hist(bins: &[(u32, u64)]) -> Histogram {
        let mut h = Histogram::new(Resolution::LOG2);
        for &(b, n) in bins {
            h.add_bin(b, n);
        }
        h
    }

    #[test]
    fn the_host_whose_waits_moved_is_the_first_outlier() {
        let mut m = BTreeMap::new();
        for i in 0..9 {
            m.insert(format!("h{i}"), hist(&[(10, 100), (11, 50)]));
        }
        m.insert("slow".to_string(), hist(&[(20, 100), (21, 50)]));
        let o = outliers(&m, 3);
        assert_eq!(o[0].host, "slow");
        assert!(o[0].emd_octaves > 8.0, "{o:?}");
        assert!(o[1].emd_octaves < 1.5, "{o:?}");
        assert_eq!(o.len(), 3);
    }

    #[test]
    fn a_busy_host_does_not_define_what_is_normal() {
        let mut m = BTreeMap::new();
        for i in 0..3 {
            m.insert(format!("quiet{i}"), hist(&[(10, 100)]));
        }
        m.insert("busy".to_string(), hist(&[(20, 100_000)]));
        assert_eq!(outliers(&m, 1)[0].host, "busy");
    }
}
