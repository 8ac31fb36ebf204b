//! Fast thread-name lookup over the trace's thread table, for renderers.

use causeway_format::{Tables, Tgid, Tid, Timestamp};
use std::collections::HashMap;

/// Thread names and processes by tid, with renames over time.
pub struct Names<'t> {
    tables: &'t Tables,
    by_tid: HashMap<Tid, Vec<(Timestamp, Tgid, &'t str)>>,
}

impl<'t> Names<'t> {
    /// Index the thread table.
    pub fn new(tables: &'t Tables) -> Names<'t> {
        let mut by_tid: HashMap<Tid, Vec<(Timestamp, Tgid, &'t str)>> = HashMap::new();
        for t in &tables.threads {
            by_tid
                .entry(t.tid)
                .or_default()
                .push((t.since, t.tgid, tables.string(t.comm)));
        }
        for rows in by_tid.values_mut() {
            rows.sort_by_key(|r| r.0);
        }
        Names { tables, by_tid }
    }

    /// The tables behind the index.
    pub fn tables(&self) -> &'t Tables {
        self.tables
    }

    fn row(&self, tid: Tid, ts: Timestamp) -> Option<&(Timestamp, Tgid, &'t str)> {
        let rows = self.by_tid.get(&tid)?;
        let i = rows.partition_point(|r| r.0 <= ts);
        rows.get(i.saturating_sub(1))
    }

    /// Name of `tid` at `ts` (`swapper` for tid 0, `?` if unknown).
    pub fn comm(&self, tid: Tid, ts: Timestamp) -> &'t str {
        if tid.is_idle() {
            return "swapper";
        }
        self.row(tid, ts).map(|r| r.2).unwrap_or("?")
    }

    /// Process of `tid`, if the trace says.
    pub fn tgid(&self, tid: Tid) -> Option<Tgid> {
        self.by_tid.get(&tid).and_then(|r| r.last()).map(|r| r.1)
    }

    /// `comm/tid`.
    pub fn label(&self, tid: Tid, ts: Timestamp) -> String {
        format!("{}/{}", self.comm(tid, ts), tid)
    }
}
