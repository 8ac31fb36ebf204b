//! Goroutine records → trace events: a goroutine's start function and parent are
//! written on its first run in the trace only, and park reasons are named from the
//! runtime's own table of the binary that was probed.

use crate::records::Body;
use crate::stacks::{StackKey, StackTable};
use crate::strings::Strings;
use causeway_format::{EventKind, Tid};
use std::collections::HashMap;

/// The recorder's tables a goroutine record may add to.
pub struct Tables<'a> {
    /// Strings (park reasons).
    pub strings: &'a mut Strings,
    /// Stacks (start functions).
    pub stacks: &'a mut StackTable,
    /// Socket flows (network waits).
    pub flows: &'a mut crate::socket_events::FlowTable,
}

/// What the conversion of goroutine records remembers.
#[derive(Debug, Default)]
pub struct GoEvents {
    /// Goroutines whose first run was converted, by process.
    seen: rustc_hash::FxHashSet<(u32, u64)>,
    /// Wait reason names of each probed binary, by slot.
    reasons: HashMap<u32, Vec<String>>,
}

impl GoEvents {
    /// The wait reason names of the binary probed in `slot`.
    pub fn set_reasons(&mut self, slot: u32, names: Vec<String>) {
        self.reasons.insert(slot, names);
    }

    /// The trace event of a goroutine record by thread `tid` of process `tgid`; `None`
    /// for any other body.
    pub fn event(&mut self, t: Tables<'_>, tid: u32, tgid: u32, body: &Body) -> Option<EventKind> {
        Some(match *body {
            Body::GoRun {
                goid,
                parent,
                start_pc,
            } => {
                let first = self.seen.insert((tgid, goid));
                // Stack frames are return addresses, looked up one byte back: the
                // entry plus one names the function that starts there.
                let start = (first && start_pc != 0).then(|| {
                    t.stacks.intern(StackKey {
                        tgid,
                        frames: vec![start_pc + 1],
                        truncated: false,
                        leaf: false,
                    })
                });
                EventKind::GoRun {
                    tid: Tid(tid),
                    goid,
                    parent: if first { parent } else { 0 },
                    start,
                }
            }
            Body::GoPark { goid, reason, slot } => {
                let name = self
                    .reasons
                    .get(&slot)
                    .and_then(|r| r.get(reason as usize))
                    .filter(|n| !n.is_empty())
                    .cloned()
                    .unwrap_or_else(|| format!("wait reason {reason}"));
                EventKind::GoPark {
                    tid: Tid(tid),
                    goid,
                    reason: t.strings.intern(&name),
                }
            }
            Body::GoNetWait { goid, flow, seq } => EventKind::GoNetWait {
                tid: Tid(tid),
                goid,
                flow: t.flows.intern(crate::socket_events::flow_of(&flow)),
                seq,
            },
            Body::GoReady { goid, by } => EventKind::GoReady {
                tid: Tid(tid),
                goid,
                by,
            },
            _ => return None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn start_function_once_and_reasons_by_name() {
        let mut g = GoEvents::default();
        let mut strings = Strings::default();
        let mut stacks = StackTable::default();
        let mut flows = crate::socket_events::FlowTable::default();
        macro_rules! tables {
            () => {
                Tables {
                    strings: &mut strings,
                    stacks: &mut stacks,
                    flows: &mut flows,
                }
            };
        }
        g.set_reasons(2, vec![String::new(), "chan receive".into()]);
        let run = Body::GoRun {
            goid: 9,
            parent: 1,
            start_pc: 0x40_1000,
        };
        let first = g.event(tables!(), 10, 100, &run);
        let Some(EventKind::GoRun {
            start: Some(s),
            parent: 1,
            ..
        }) = first
        else {
            panic!("first run: {first:?}");
        };
        assert_eq!(stacks.get(s).unwrap().frames, vec![0x40_1001]);
        let again = g.event(tables!(), 11, 100, &run);
        assert!(matches!(
            again,
            Some(EventKind::GoRun {
                start: None,
                parent: 0,
                ..
            })
        ));
        // The same goroutine id in another process is another goroutine.
        let other = g.event(tables!(), 12, 200, &run);
        assert!(matches!(
            other,
            Some(EventKind::GoRun { start: Some(_), .. })
        ));
        for (reason, slot, want) in [
            (1, 2, "chan receive"),
            (0, 2, "wait reason 0"),
            (1, 5, "wait reason 1"),
        ] {
            let park = Body::GoPark {
                goid: 9,
                reason,
                slot,
            };
            let Some(EventKind::GoPark { reason: id, .. }) = g.event(tables!(), 10, 100, &park)
            else {
                panic!("park");
            };
            assert_eq!(strings.get(id), want);
        }
    }
}
