//! Which recorded segments a set of changes reaches: the changes resolved once per
//! prediction against one trace (a call site's name becomes the set of user stacks
//! that hold it), then asked segment by segment.

use crate::change::{Change, Factor, Target};
use crate::error::WhatIfError;
use causeway_bottleneck::WaitMap;
use causeway_format::{StackId, Tables, Waker};
use causeway_model::facts::is_completion_thread;
use causeway_model::{Model, Segment, SegmentId, SegmentState, WakeInfo};
use std::collections::HashSet;

/// One change, resolved.
enum Sel {
    Edge { from: usize, to: usize },
    WaitsOn { to: usize },
    Site(HashSet<StackId>),
    Cpu { vertex: usize },
}

/// The changes of one prediction, resolved.
pub(crate) struct Selection<'a> {
    model: &'a Model,
    waits: &'a WaitMap,
    sels: Vec<(Sel, Factor)>,
    /// For each CPU change: the indices of its vertex's threads, and the factor.
    cpu_threads: Vec<(Vec<u32>, Factor)>,
}

impl<'a> Selection<'a> {
    /// Resolve `changes`; a call site that no wait's stack holds is an error (a typo
    /// would otherwise predict no gain).
    pub(crate) fn new(
        model: &'a Model,
        tables: &Tables,
        waits: &'a WaitMap,
        changes: &[Change],
    ) -> Result<Selection<'a>, WhatIfError> {
        let mut sels = Vec::with_capacity(changes.len());
        let mut cpu_threads = Vec::new();
        for c in changes {
            let sel = match &c.target {
                Target::Edge { from, to } => Sel::Edge {
                    from: *from,
                    to: *to,
                },
                Target::WaitsOn { to } => Sel::WaitsOn { to: *to },
                Target::Site { function } => {
                    let stacks = stacks_under(tables, function);
                    if !blocked_under(model, &stacks) {
                        return Err(WhatIfError::NoSite {
                            function: function.clone(),
                            nearest: crate::sitename::nearest(model, tables, function),
                        });
                    }
                    Sel::Site(stacks)
                }
                Target::Cpu { vertex } => {
                    let threads = (0u32..)
                        .zip(&waits.threads)
                        .filter(|(_, t)| t.vertex.is_some_and(|v| v.0 == *vertex))
                        .map(|(i, _)| i)
                        .collect();
                    cpu_threads.push((threads, c.factor));
                    Sel::Cpu { vertex: *vertex }
                }
            };
            sels.push((sel, c.factor));
        }
        let mut s = Selection {
            model,
            waits,
            sels,
            cpu_threads,
        };
        // Removing waits a device ended removes the I/O behind them, and with it the
        // kernel's block I/O threads' work for it: a runnable delay behind them goes
        // too (NATS's stream loop queued 13 % of its time behind kblockd's workers).
        if s.removes_device_waits() {
            let io: Vec<u32> = (0u32..)
                .zip(model.threads())
                .filter(|(_, t)| block_io_thread(&t.comm))
                .map(|(i, _)| i)
                .collect();
            if !io.is_empty() {
                s.cpu_threads.push((io, Factor::REMOVE));
            }
        }
        Ok(s)
    }

    /// True when the changes remove some wait a device ended (an interrupt, a softirq
    /// or a kernel I/O thread woke it).
    fn removes_device_waits(&self) -> bool {
        if !self.removes_waits() {
            return false;
        }
        let by_device = |w: &WakeInfo| match w.waker {
            Waker::Irq { .. } | Waker::Softirq { .. } => true,
            Waker::Thread { tid } => self
                .model
                .thread(tid)
                .is_some_and(|t| is_completion_thread(&t.comm)),
            _ => false,
        };
        (0u32..).zip(self.model.threads()).any(|(ti, t)| {
            (0u32..).zip(&t.segments).any(|(si, s)| {
                s.wake().is_some_and(by_device)
                    && self
                        .factor_of(SegmentId {
                            thread: ti,
                            index: si,
                        })
                        .is_some_and(Factor::removes)
            })
        })
    }

    /// The factor a change applies to this segment, if one does (the first change
    /// that reaches it).
    /// True when some change removes waits (rather than shortening them or CPU).
    pub(crate) fn removes_waits(&self) -> bool {
        self.sels
            .iter()
            .any(|(s, f)| f.removes() && !matches!(s, Sel::Cpu { .. }))
    }

    pub(crate) fn factor_of(&self, id: SegmentId) -> Option<Factor> {
        if self.sels.is_empty() {
            return None;
        }
        let seg = self.model.segment(id)?;
        let from = self.waits.threads.get(id.thread as usize)?.vertex;
        match seg.state {
            SegmentState::Blocked {
                switch_out_stack, ..
            } => {
                let to = self
                    .waits
                    .wait_at(id.thread as usize, seg.start)
                    .map(|w| w.to.0);
                let user = switch_out_stack.and_then(|s| s.user);
                self.sels.iter().find_map(|(sel, f)| {
                    let hit = match sel {
                        Sel::Edge { from: a, to: b } => {
                            from.is_some_and(|v| v.0 == *a) && to == Some(*b)
                        }
                        Sel::WaitsOn { to: b } => to == Some(*b),
                        Sel::Site(stacks) => user.is_some_and(|u| stacks.contains(&u)),
                        Sel::Cpu { .. } => false,
                    };
                    hit.then_some(*f)
                })
            }
            SegmentState::Running { .. } => self.sels.iter().find_map(|(sel, f)| match sel {
                Sel::Cpu { vertex } if from.is_some_and(|v| v.0 == *vertex) => Some(*f),
                _ => None,
            }),
            _ => None,
        }
    }

    /// A runnable delay's replayed length. A runnable thread runs when the CPU it then
    /// ran on frees; a CPU change that shortens the work that held that CPU during the
    /// delay frees it earlier by the time taken out. Without a CPU change, or when the
    /// CPU is not known, the delay keeps its length; work of processes outside the
    /// recording is never changed, so a delay behind it keeps its length too.
    pub(crate) fn runnable_len(&self, id: SegmentId, seg: &Segment) -> u64 {
        let d = seg.end.0.saturating_sub(seg.start.0);
        let d = d.saturating_sub(self.quota_taken(id, seg));
        if self.cpu_threads.is_empty() || d == 0 {
            return d;
        }
        let next = SegmentId {
            index: id.index + 1,
            ..id
        };
        let cpu = match (self.model.segment(next).map(|s| s.state), seg.state) {
            (Some(SegmentState::Running { cpu }), _) => cpu,
            (_, SegmentState::Runnable { cpu: Some(cpu), .. }) => cpu,
            _ => return d,
        };
        let (a, b) = (seg.start.0, seg.end.0);
        let mut freed = 0f64;
        for (threads, f) in &self.cpu_threads {
            let taken = if f.removes() {
                1.0
            } else {
                1.0 - 1.0 / f.get()
            };
            for &ti in threads.iter().filter(|&&t| t != id.thread) {
                let Some(t) = self.model.thread_by_index(ti) else {
                    continue;
                };
                let first = t.segments.partition_point(|s| s.end.0 <= a);
                let on_cpu: u64 = t.segments[first..]
                    .iter()
                    .take_while(|s| s.start.0 < b)
                    .filter(|s| s.state == SegmentState::Running { cpu })
                    .map(|s| s.end.0.min(b).saturating_sub(s.start.0.max(a)))
                    .sum();
                freed += on_cpu as f64 * taken;
            }
        }
        d.saturating_sub(freed.round() as u64)
    }
}

impl Selection<'_> {
    /// The part of a runnable delay a change takes out when the delay was (in part) a
    /// wait on a cgroup's CPU quota (`causeway_model::quota`: the bottleneck's wait
    /// map holds it as a wait from the delay's start on the quota vertex) and an edge
    /// or `--waits-on` change selects that wait: removing it is lifting the quota,
    /// halving it is about doubling the quota.
    pub(crate) fn quota_taken(&self, id: SegmentId, seg: &Segment) -> u64 {
        let Some(w) = self.waits.wait_at(id.thread as usize, seg.start) else {
            return 0;
        };
        let from = self
            .waits
            .threads
            .get(id.thread as usize)
            .and_then(|t| t.vertex);
        let to = w.to.0;
        let Some(f) = self.sels.iter().find_map(|(sel, f)| {
            let hit = match sel {
                Sel::Edge { from: a, to: b } => from.is_some_and(|v| v.0 == *a) && to == *b,
                Sel::WaitsOn { to: b } => to == *b,
                _ => false,
            };
            hit.then_some(*f)
        }) else {
            return 0;
        };
        let held = w.end.0.saturating_sub(w.start.0) as f64;
        let taken = if f.removes() {
            held
        } else {
            held * (1.0 - 1.0 / f.get())
        };
        taken.round() as u64
    }
}

/// The user stacks that hold a frame of `function` (the frame's own function or one
/// inlined into it), by the names users type (`crate::sitename::same_function`).
fn stacks_under(tables: &Tables, function: &str) -> HashSet<StackId> {
    let same =
        |id: causeway_format::StringId| crate::sitename::same_function(tables.string(id), function);
    let named = |f: &causeway_format::FrameId| {
        tables
            .frame(*f)
            .is_some_and(|fr| same(fr.symbol) || fr.inlined.iter().any(|i| same(i.symbol)))
    };
    (0u32..)
        .zip(&tables.stacks)
        .filter(|(_, s)| s.frames.iter().any(named))
        .map(|(i, _)| StackId(i))
        .collect()
}

/// True if some wait of the model blocked with one of `stacks` as its user stack.
fn blocked_under(model: &Model, stacks: &HashSet<StackId>) -> bool {
    !stacks.is_empty()
        && model.threads().any(|t| {
            t.segments.iter().any(|s| match s.state {
                SegmentState::Blocked {
                    switch_out_stack, ..
                } => switch_out_stack
                    .and_then(|s| s.user)
                    .is_some_and(|u| stacks.contains(&u)),
                _ => false,
            })
        })
}

/// A kernel thread doing block I/O work: a journal's thread, `kblockd`, and the
/// workqueue workers that run it (the high-priority `kworker/N:MH`, or a worker the
/// kernel names after a block or writeback workqueue). Other kworkers and ksoftirqd
/// serve the network and everything else, which removing disk waits does not remove.
fn block_io_thread(comm: &str) -> bool {
    if comm.starts_with("jbd2/") || comm.starts_with("kblockd") {
        return true;
    }
    let Some(rest) = comm.strip_prefix("kworker/") else {
        return false;
    };
    let (id, queue) = rest.split_once('-').unwrap_or((rest, ""));
    id.ends_with('H')
        || [
            "kblockd",
            "writeback",
            "flush",
            "ext4",
            "xfs",
            "btrfs",
            "dio",
        ]
        .iter()
        .any(|q| queue.contains(q))
}

#[cfg(test)]
mod tests {
    use super::*;
    use causeway_bottleneck::{ThreadWaits, VertexId};
    use causeway_format::{Header, TaskState};
    use causeway_testkit::synth::Synth;

    /// Thread 1 waits for CPU 0 from 100 to 300 ns while thread 2 runs there; thread 3
    /// runs on CPU 1 meanwhile.
    fn queued_behind() -> (Model, WaitMap) {
        let mut s = Synth::new();
        s.switch(0, 0, 0, TaskState::RUNNABLE, 1)
            .switch(0, 1, 0, TaskState::RUNNABLE, 3)
            .switch(50, 0, 1, TaskState::INTERRUPTIBLE, 2)
            .wake_by(100, 0, 2, 1)
            .switch(300, 0, 2, TaskState::RUNNABLE, 1)
            .switch(400, 0, 1, TaskState::INTERRUPTIBLE, 2)
            .switch(400, 1, 3, TaskState::INTERRUPTIBLE, 0);
        let model = Model::from_events(&Tables::default(), &Header::synthetic(2), &s.events());
        let waits = WaitMap {
            threads: model
                .threads()
                .map(|t| ThreadWaits {
                    vertex: Some(VertexId(t.tid.0 as usize)),
                    ..ThreadWaits::default()
                })
                .collect(),
        };
        (model, waits)
    }

    fn runnable_of_thread_1(model: &Model) -> (SegmentId, Segment) {
        let (ti, t) = (0u32..)
            .zip(model.threads())
            .find(|(_, t)| t.tid.0 == 1)
            .unwrap();
        let (si, seg) = (0u32..)
            .zip(&t.segments)
            .find(|(_, s)| s.state.is_runnable() && s.start.0 == 100)
            .expect("runnable from 100");
        assert_eq!(seg.end.0, 300);
        let id = SegmentId {
            thread: ti,
            index: si,
        };
        (id, *seg)
    }

    #[test]
    fn a_cpu_change_shrinks_the_queueing_behind_the_changed_work_on_that_cpu() {
        let (model, waits) = queued_behind();
        let (id, seg) = runnable_of_thread_1(&model);
        let len = |vertex, factor| {
            let c = Change {
                target: Target::Cpu { vertex },
                factor,
            };
            let sel = Selection::new(&model, &Tables::default(), &waits, &[c]).unwrap();
            sel.runnable_len(id, &seg)
        };
        // 200 ns of thread 2's work held CPU 0; halved, 100 ns of it is freed.
        assert_eq!(len(2, Factor::HALVE), 100);
        assert_eq!(len(2, Factor::REMOVE), 0);
        // Thread 3's work was on the other CPU, and a thread's own CPU change does not
        // shorten its own queueing.
        assert_eq!(len(3, Factor::HALVE), 200);
        assert_eq!(len(1, Factor::HALVE), 200);
        let none = Selection::new(&model, &Tables::default(), &waits, &[]).unwrap();
        assert_eq!(none.runnable_len(id, &seg), 200);
    }

    #[test]
    fn block_io_threads_by_name() {
        for c in [
            "kworker/1:1H",
            "kworker/0:2H-kblockd",
            "kworker/u8:3-writeback",
            "jbd2/vda1-8",
            "kworker/u8:0-ext4-rsv-conversion",
        ] {
            assert!(block_io_thread(c), "{c}");
        }
        for c in [
            "kworker/1:1",
            "kworker/u8:2-events_unbound",
            "ksoftirqd/0",
            "kworker/1:0-mm_percpu_wq",
            "nats-server",
        ] {
            assert!(!block_io_thread(c), "{c}");
        }
    }
}
