//! `lost` records: what the CPU and its threads were doing is unknown from the last
//! event seen there.

use super::ModelBuilder;
use crate::segment::{SegmentState, UnknownCause};
use crate::stats::LossWindow;
use causeway_format::{Cpu, Timestamp};

impl ModelBuilder<'_> {
    pub(super) fn on_lost(&mut self, ts: Timestamp, c: Cpu, count: u64) {
        self.stats.lost_records += 1;
        self.stats.lost_events = self.stats.lost_events.saturating_add(count);
        let trace_start = self.trace_start();
        let cpu = self.cpu(c);
        let from = cpu.last_ts.unwrap_or(trace_start).min(ts);
        cpu.lost(from);
        self.losses.push(LossWindow {
            cpu: c,
            from,
            to: ts,
            count,
        });
        self.irqs.abandon_cpu(c, from);
        for th in self.threads.values_mut() {
            let Some(open) = th.open_seg().copied() else {
                continue;
            };
            let here = match open.state {
                SegmentState::Running { cpu } => cpu == c,
                SegmentState::Runnable { cpu, .. } => cpu == Some(c),
                _ => false,
            };
            if here {
                th.mark_unknown(from.max(open.start), UnknownCause::LostEvents);
                th.syscall = None;
            }
        }
    }
}
