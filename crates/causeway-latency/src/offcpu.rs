//! Preemption and hard interrupts inside a recorded call (DARC §3.6, offline): from
//! the model's scheduler segments and interrupt intervals, when the trace has them (a
//! kernel recording merged with, or alongside, the calls). A trace of calls alone has
//! neither, and every call then counts zero of both.

use causeway_format::{Cpu, Tid, Timestamp};
use causeway_model::{InterruptSource, SegmentState, Trace};
use rustc_hash::FxHashMap;

/// Who ran on a CPU from when to when: (start, end, tid, command).
type Run = (u64, u64, u32, String);

/// Time off the CPU or in IRQ handlers during an interval of one thread.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct OffCpu {
    /// Time runnable after a preemption.
    pub preempted_ns: u64,
    /// Time in hard IRQ handlers on its CPU while it ran.
    pub irq_ns: u64,
    /// The thread that ran longest on its CPU while it was preempted.
    pub preemptor: Option<(u32, String)>,
    /// The IRQ whose handlers took longest.
    pub irq: Option<(u32, String)>,
}

/// Indexes of the trace's scheduling, built once per analysis.
pub struct OffCpuIndex<'t> {
    trace: &'t Trace,
    /// Running stretches per CPU, by start.
    runs: FxHashMap<Cpu, Vec<Run>>,
    /// Hard IRQ handler runs per CPU, by start: (start, end, irq, name).
    irqs: FxHashMap<Cpu, Vec<(u64, u64, u32, String)>>,
}

fn overlap(a: (u64, u64), b: (u64, u64)) -> u64 {
    a.1.min(b.1).saturating_sub(a.0.max(b.0))
}

/// Sum `ns` per (id, name) and return the largest.
fn largest(by: FxHashMap<u32, (String, u64)>) -> Option<(u32, String)> {
    by.into_iter()
        .max_by(|a, b| (a.1.1, std::cmp::Reverse(a.0)).cmp(&(b.1.1, std::cmp::Reverse(b.0))))
        .map(|(id, (name, _))| (id, name))
}

impl<'t> OffCpuIndex<'t> {
    /// Index the trace's running stretches and IRQ handler runs by CPU.
    pub fn new(trace: &'t Trace) -> OffCpuIndex<'t> {
        let mut runs: FxHashMap<Cpu, Vec<Run>> = FxHashMap::default();
        for t in trace.model().threads() {
            for s in &t.segments {
                if let SegmentState::Running { cpu } = s.state {
                    runs.entry(cpu).or_default().push((
                        s.start.0,
                        s.end.0,
                        t.tid.0,
                        t.comm.clone(),
                    ));
                }
            }
        }
        let mut irqs: FxHashMap<Cpu, Vec<(u64, u64, u32, String)>> = FxHashMap::default();
        for i in trace.model().interrupts() {
            if let InterruptSource::Irq { irq, name } = i.source
                && i.end_known
            {
                let name = trace.tables().string(name).to_string();
                irqs.entry(i.cpu)
                    .or_default()
                    .push((i.start.0, i.end.0, irq, name));
            }
        }
        runs.values_mut().for_each(|v| v.sort_by_key(|r| r.0));
        irqs.values_mut().for_each(|v| v.sort_by_key(|r| r.0));
        OffCpuIndex { trace, runs, irqs }
    }

    /// What `tid` lost during `[start, end)`.
    pub fn during(&self, tid: Tid, start: Timestamp, end: Timestamp) -> OffCpu {
        let span = (start.0, end.0);
        let mut out = OffCpu::default();
        let mut by_thread: FxHashMap<u32, (String, u64)> = FxHashMap::default();
        let mut by_irq: FxHashMap<u32, (String, u64)> = FxHashMap::default();
        for t in self.trace.model().threads_with_tid(tid) {
            for s in &t.segments {
                let seg = (s.start.0, s.end.0);
                let ns = overlap(seg, span);
                if ns == 0 {
                    continue;
                }
                let part = (seg.0.max(span.0), seg.1.min(span.1));
                match s.state {
                    SegmentState::Runnable {
                        cpu: Some(cpu),
                        preempted: true,
                    } => {
                        out.preempted_ns += ns;
                        self.charge(&self.runs, cpu, part, tid.0, &mut by_thread);
                    }
                    SegmentState::Runnable {
                        preempted: true, ..
                    } => out.preempted_ns += ns,
                    SegmentState::Running { cpu } => {
                        out.irq_ns += self.charge_irqs(cpu, part, &mut by_irq);
                    }
                    _ => {}
                }
            }
        }
        out.preemptor = largest(by_thread);
        out.irq = largest(by_irq);
        out
    }

    /// Charge the threads other than `me` that ran on `cpu` during `part`.
    fn charge(
        &self,
        runs: &FxHashMap<Cpu, Vec<Run>>,
        cpu: Cpu,
        part: (u64, u64),
        me: u32,
        by: &mut FxHashMap<u32, (String, u64)>,
    ) {
        let Some(v) = runs.get(&cpu) else { return };
        let first = v.partition_point(|r| r.0 < part.0).saturating_sub(1);
        for r in v[first..].iter().take_while(|r| r.0 < part.1) {
            let ns = overlap((r.0, r.1), part);
            if ns > 0 && r.2 != me {
                by.entry(r.2).or_insert_with(|| (r.3.clone(), 0)).1 += ns;
            }
        }
    }

    /// Time of IRQ handlers on `cpu` during `part` (the thread was running there).
    fn charge_irqs(
        &self,
        cpu: Cpu,
        part: (u64, u64),
        by: &mut FxHashMap<u32, (String, u64)>,
    ) -> u64 {
        let Some(v) = self.irqs.get(&cpu) else {
            return 0;
        };
        let first = v.partition_point(|r| r.0 < part.0).saturating_sub(1);
        let mut sum = 0;
        for r in v[first..].iter().take_while(|r| r.0 < part.1) {
            let ns = overlap((r.0, r.1), part);
            if ns > 0 {
                sum += ns;
                by.entry(r.2).or_insert_with(|| (r.3.clone(), 0)).1 += ns;
            }
        }
        sum
    }
}
