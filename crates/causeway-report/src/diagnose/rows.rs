//! The culprit chain as plain rows, for tables: one row per hop, with the same ids,
//! names and times as `diagnose --json`'s `chain`.

use super::doc::DiagnosisDoc;

/// One hop of the culprit chain.
#[derive(Clone, Debug, PartialEq)]
pub struct ChainRow {
    /// 0 for the stalled vertex, 1 for its culprit, 2 for the culprit's culprit...
    pub step: u32,
    /// The vertex (an id of the diagnosis graph).
    pub vertex: u32,
    /// Its thread.
    pub tid: u32,
    /// The thread's name.
    pub thread: String,
    /// Its process.
    pub pid: Option<u32>,
    /// The goroutine, when goroutines stand in for threads.
    pub goroutine: Option<u64>,
    /// Start, trace clock.
    pub start_ns: u64,
    /// Length.
    pub dur_ns: u64,
    /// `run` or `wait` (the vertex's kind in the JSON).
    pub kind: &'static str,
    /// The block type (`blocked`, `runnable`, `stopped`, ...).
    pub block: &'static str,
    /// What it waited on for the next hop (the last hop: on what it waited itself).
    pub link: &'static str,
    /// Algorithm 1's case when the diagnosis reports the vertex.
    pub case: Option<&'static str>,
    /// The system call it waited in.
    pub wait_call: Option<String>,
    /// Who woke it, in words.
    pub woken_by: Option<String>,
    /// The user stack where it blocked, outermost frame first, `;`-joined.
    pub stack: Option<String>,
}

/// The rows of `doc`'s chain.
pub(super) fn chain_rows(doc: &DiagnosisDoc) -> Vec<ChainRow> {
    doc.chain
        .iter()
        .enumerate()
        .map(|(i, hop)| {
            let v = &hop.vertex;
            let case = doc
                .findings
                .iter()
                .find(|f| f.vertex.id == v.id)
                .map(|f| f.case);
            let stack = (!v.frames.is_empty()).then(|| {
                v.frames
                    .iter()
                    .rev()
                    .map(String::as_str)
                    .collect::<Vec<_>>()
                    .join(";")
            });
            ChainRow {
                step: i as u32,
                vertex: v.id,
                tid: v.tid,
                thread: v.thread.clone(),
                pid: v.pid,
                goroutine: v.goroutine,
                start_ns: v.start_ns,
                dur_ns: v.duration_ns,
                kind: v.kind,
                block: v.block,
                link: hop.kind,
                case,
                wait_call: v.wait_call.clone(),
                woken_by: v.woken_by.clone(),
                stack,
            }
        })
        .collect()
}
