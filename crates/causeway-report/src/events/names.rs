//! Thread labels for renderers, over the format crate's [`ThreadIndex`].

use causeway_format::{Tables, Tgid, ThreadIndex, Tid, Timestamp};

/// Thread names and processes by tid, with renames over time.
pub struct Names<'t> {
    index: ThreadIndex<'t>,
}

impl<'t> Names<'t> {
    /// Index the thread table.
    pub fn new(tables: &'t Tables) -> Names<'t> {
        Names {
            index: ThreadIndex::new(tables),
        }
    }

    /// The tables behind the index.
    pub fn tables(&self) -> &'t Tables {
        self.index.tables()
    }

    /// Name of `tid` at `ts` (`swapper` for tid 0, `?` if unknown).
    pub fn comm(&self, tid: Tid, ts: Timestamp) -> &'t str {
        if tid.is_idle() {
            return "swapper";
        }
        self.index.comm_at(tid, ts).unwrap_or("?")
    }

    /// Process of `tid` (its latest row), if the trace says.
    pub fn tgid(&self, tid: Tid) -> Option<Tgid> {
        self.index.rows(tid).last().map(|r| r.tgid)
    }

    /// `comm/tid`.
    pub fn label(&self, tid: Tid, ts: Timestamp) -> String {
        format!("{}/{}", self.comm(tid, ts), tid)
    }
}
