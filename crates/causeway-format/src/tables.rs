//! Tables stored once per trace: strings, threads, processes, mappings, frames, stacks.
//!
//! Events refer to table rows by id. Rows are appended while recording and written in
//! table blocks interleaved with event chunks (so a salvaged file keeps most of them);
//! a reader concatenates all blocks of a table into one [`Tables`].

use crate::ids::{FrameId, StackId, StringId, Tgid, Tid, Timestamp};
use crate::sockets::{Flow, FlowId};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// A thread's identity from `since` on: its process and its name. A thread that renames
/// itself (or execs) has several rows; the latest row not after a time applies then.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ThreadInfo {
    /// The thread.
    pub tid: Tid,
    /// Its process.
    pub tgid: Tgid,
    /// From when this row holds (0 if from before the recording).
    pub since: Timestamp,
    /// Thread name (`comm`).
    pub comm: StringId,
}

/// A process from `since` on: parent, executable and command line.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProcessInfo {
    /// The process.
    pub tgid: Tgid,
    /// Its parent, if known.
    pub parent: Option<Tgid>,
    /// From when this row holds (0 if from before the recording); a new row after exec.
    pub since: Timestamp,
    /// Path of the executable.
    pub exe: StringId,
    /// Command line, arguments separated by spaces.
    pub cmdline: StringId,
}

/// An executable memory mapping of a process, for offline symbolization.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Mapping {
    /// The process.
    pub tgid: Tgid,
    /// From when the mapping exists (0 if from before the recording).
    pub since: Timestamp,
    /// First address.
    pub start: u64,
    /// One past the last address.
    pub end: u64,
    /// Offset in the file of `start`.
    pub file_offset: u64,
    /// Path of the mapped file.
    pub path: StringId,
    /// GNU build ID of the file, empty if unknown.
    pub build_id: Vec<u8>,
}

/// Whose address space a frame's address is in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "space", rename_all = "snake_case")]
pub enum FrameSpace {
    /// The kernel.
    Kernel,
    /// A user process.
    User {
        /// The process.
        tgid: Tgid,
    },
}

/// One code address of a stack, symbolized when the trace was written.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Frame {
    /// Address space of `addr`.
    pub space: FrameSpace,
    /// The instruction address: a virtual address of the process (or kernel) when the
    /// recorder knows it; a file-relative address when the source only gave that (perf
    /// prints user callchain addresses relative to their file). `module` says which file.
    pub addr: u64,
    /// File (module) the address is in; empty string if unknown.
    pub module: StringId,
    /// Function name; empty string if unknown.
    pub symbol: StringId,
    /// `addr` minus the function's start (0 if unknown).
    pub sym_offset: u64,
    /// Source file of the instruction in `symbol` (for a frame with inlined calls: of
    /// the call to the outermost inlined function); empty string if unknown. Since
    /// format 1.1.
    #[serde(default)]
    pub file: StringId,
    /// Line in `file`, 0 if unknown. Since format 1.1.
    #[serde(default)]
    pub line: u32,
    /// Functions inlined at this address, innermost first: the instruction is in
    /// `inlined[0]`, which was inlined into `inlined[1]`, ..., and the last into
    /// `symbol`. Empty when nothing is inlined or no debug information was found.
    /// Since format 1.1.
    #[serde(default)]
    pub inlined: Vec<InlinedFrame>,
}

impl Frame {
    /// A frame with no source information.
    pub fn new(
        space: FrameSpace,
        addr: u64,
        module: StringId,
        symbol: StringId,
        sym_offset: u64,
    ) -> Frame {
        Frame {
            space,
            addr,
            module,
            symbol,
            sym_offset,
            file: StringId::default(),
            line: 0,
            inlined: Vec::new(),
        }
    }
}

/// A function inlined at a frame's address (debug information's inline tree).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct InlinedFrame {
    /// The inlined function's name.
    pub symbol: StringId,
    /// Source file of the location inside it (the instruction, or the call to the next
    /// inner inlined function); empty string if unknown.
    pub file: StringId,
    /// Line in `file`, 0 if unknown.
    pub line: u32,
}

/// A deduplicated call stack.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Stack {
    /// Frames, innermost (leaf) first.
    pub frames: Vec<FrameId>,
    /// The walk stopped before reaching the outermost frame (depth budget, unwind
    /// failure or scope), so this is not the whole stack.
    pub truncated: bool,
}

/// All tables of a trace.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tables {
    /// Strings by [`StringId`]; id 0 is always the empty string.
    pub strings: Vec<String>,
    /// Thread rows, in the order written.
    pub threads: Vec<ThreadInfo>,
    /// Process rows, in the order written.
    pub processes: Vec<ProcessInfo>,
    /// Mapping rows, in the order written.
    pub mappings: Vec<Mapping>,
    /// Frames by [`FrameId`].
    pub frames: Vec<Frame>,
    /// Stacks by [`StackId`].
    pub stacks: Vec<Stack>,
    /// Socket flows by [`FlowId`] (format 1.4; empty before).
    #[serde(default)]
    pub flows: Vec<Flow>,
    /// Cgroup memberships and limit samples (format 1.7; empty before).
    #[serde(default)]
    pub cgroups: Vec<crate::cgroups::CgroupRow>,
}

/// Shown for ids that point past the end of a table (a damaged or salvaged trace).
pub const MISSING: &str = "<missing>";

impl Tables {
    /// The string with this id, or [`MISSING`].
    pub fn string(&self, id: StringId) -> &str {
        self.strings
            .get(id.0 as usize)
            .map(String::as_str)
            .unwrap_or(MISSING)
    }

    /// Each process's cgroup (CPU controller) as last noted while recorded
    /// ([`crate::cgroups::CgroupRow::Member`]).
    pub fn process_cgroups(&self) -> std::collections::BTreeMap<Tgid, &str> {
        self.cgroups
            .iter()
            .filter_map(|r| match r {
                crate::cgroups::CgroupRow::Member { tgid, path, .. } => {
                    Some((*tgid, self.string(*path)))
                }
                _ => None,
            })
            .collect()
    }

    /// The frame with this id.
    pub fn frame(&self, id: FrameId) -> Option<&Frame> {
        self.frames.get(id.0 as usize)
    }

    /// The flow with this id.
    pub fn flow(&self, id: FlowId) -> Option<&Flow> {
        self.flows.get(id.0 as usize)
    }

    /// The stack with this id.
    pub fn stack(&self, id: StackId) -> Option<&Stack> {
        self.stacks.get(id.0 as usize)
    }

    /// The thread row in force for `tid` at `ts`: the latest one with `since <= ts`, or
    /// failing that the earliest one. This scans the whole thread table; for many
    /// lookups build a [`ThreadIndex`].
    pub fn thread_at(&self, tid: Tid, ts: Timestamp) -> Option<&ThreadInfo> {
        let mut best: Option<&ThreadInfo> = None;
        let mut earliest: Option<&ThreadInfo> = None;
        for t in self.threads.iter().filter(|t| t.tid == tid) {
            if t.since <= ts && best.is_none_or(|b| t.since >= b.since) {
                best = Some(t);
            }
            if earliest.is_none_or(|e| t.since < e.since) {
                earliest = Some(t);
            }
        }
        best.or(earliest)
    }

    /// Thread name of `tid` at `ts`, or `None` if the trace does not know the thread.
    pub fn comm_at(&self, tid: Tid, ts: Timestamp) -> Option<&str> {
        self.thread_at(tid, ts).map(|t| self.string(t.comm))
    }

    /// Texts of a frame with the functions inlined at it, innermost first, each with
    /// its source file (base name) and line when known:
    /// `take_lock (inlined) lock.h:7`, ..., `worker_main+0x30 worker.c:42`.
    pub fn frame_texts(&self, id: FrameId) -> Vec<String> {
        let Some(f) = self.frame(id) else {
            return vec![MISSING.to_string()];
        };
        let at = |file: StringId, line: u32| {
            let file = self.string(file);
            let base = file.rsplit('/').next().unwrap_or(file);
            match (base.is_empty(), line) {
                (true, _) => String::new(),
                (false, 0) => format!(" {base}"),
                (false, l) => format!(" {base}:{l}"),
            }
        };
        let mut out: Vec<String> = f
            .inlined
            .iter()
            .map(|i| format!("{} (inlined){}", self.string(i.symbol), at(i.file, i.line)))
            .collect();
        out.push(format!("{}{}", self.frame_text(id), at(f.file, f.line)));
        out
    }

    /// The functions of one frame without offsets or lines, innermost first (inlined
    /// calls, then the function the address is in): what profiles group samples by, so
    /// that samples at different instructions of one function count together. An
    /// unsymbolized frame is its address and module.
    pub fn frame_functions(&self, id: FrameId) -> Vec<String> {
        let Some(f) = self.frame(id) else {
            return vec![MISSING.to_string()];
        };
        let mut out: Vec<String> = f
            .inlined
            .iter()
            .map(|i| self.string(i.symbol).to_string())
            .collect();
        if self.string(f.symbol).is_empty() {
            out.push(self.frame_text(id));
        } else {
            out.push(self.string(f.symbol).to_string());
        }
        out
    }

    /// Text of one frame: `symbol+0xoff`, or the address and module when the symbol is
    /// unknown (source lines and inlined calls: [`Tables::frame_texts`]).
    pub fn frame_text(&self, id: FrameId) -> String {
        match self.frame(id) {
            None => MISSING.to_string(),
            Some(f) => {
                let sym = self.string(f.symbol);
                let module = self.string(f.module);
                let module = module.rsplit('/').next().unwrap_or(module);
                match (sym.is_empty(), module.is_empty()) {
                    (false, _) => format!("{sym}+{:#x}", f.sym_offset),
                    (true, false) => format!("{:#x} ({module})", f.addr),
                    (true, true) => format!("{:#x}", f.addr),
                }
            }
        }
    }
}

/// Thread rows grouped by tid and sorted by time, for repeated lookups of a thread's
/// identity at a time (renderers, the model). Built once in O(rows log rows).
#[derive(Debug)]
pub struct ThreadIndex<'t> {
    tables: &'t Tables,
    by_tid: HashMap<Tid, Vec<&'t ThreadInfo>>,
}

impl<'t> ThreadIndex<'t> {
    /// Index the thread table of `tables`.
    pub fn new(tables: &'t Tables) -> ThreadIndex<'t> {
        let mut by_tid: HashMap<Tid, Vec<&'t ThreadInfo>> = HashMap::new();
        for t in &tables.threads {
            by_tid.entry(t.tid).or_default().push(t);
        }
        for rows in by_tid.values_mut() {
            // Stable: rows with equal times keep their table order (the later one wins).
            rows.sort_by_key(|r| r.since);
        }
        ThreadIndex { tables, by_tid }
    }

    /// The tables behind the index.
    pub fn tables(&self) -> &'t Tables {
        self.tables
    }

    /// All rows of `tid`, oldest first (empty if the trace does not know it).
    pub fn rows(&self, tid: Tid) -> &[&'t ThreadInfo] {
        self.by_tid.get(&tid).map_or(&[], Vec::as_slice)
    }

    /// The row in force for `tid` at `ts`, with the same rule as [`Tables::thread_at`].
    pub fn at(&self, tid: Tid, ts: Timestamp) -> Option<&'t ThreadInfo> {
        let rows = self.rows(tid);
        let i = rows.partition_point(|r| r.since <= ts);
        rows.get(i.saturating_sub(1)).copied()
    }

    /// Name of `tid` at `ts`, or `None` if the trace does not know the thread.
    pub fn comm_at(&self, tid: Tid, ts: Timestamp) -> Option<&'t str> {
        self.at(tid, ts).map(|t| self.tables.string(t.comm))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thread_index_agrees_with_the_table_scan() {
        let mut t = Tables {
            strings: vec!["".into(), "a".into(), "b".into(), "c".into()],
            ..Tables::default()
        };
        for (tid, since, comm) in [(5, 100, 2), (5, 0, 1), (7, 50, 3), (5, 300, 3)] {
            t.threads.push(ThreadInfo {
                tid: Tid(tid),
                tgid: Tgid(5),
                since: Timestamp(since),
                comm: StringId(comm),
            });
        }
        let idx = ThreadIndex::new(&t);
        for tid in [5, 7, 9] {
            for ts in [0, 49, 50, 99, 100, 299, 300, 1000] {
                let (tid, ts) = (Tid(tid), Timestamp(ts));
                assert_eq!(idx.at(tid, ts), t.thread_at(tid, ts), "{tid} at {ts}");
            }
        }
        assert_eq!(idx.comm_at(Tid(5), Timestamp(150)), Some("b"));
        assert_eq!(idx.comm_at(Tid(7), Timestamp(0)), Some("c"));
        assert_eq!(idx.comm_at(Tid(9), Timestamp(0)), None);
    }
}
