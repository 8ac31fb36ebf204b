//! Stack events: attached to the switch-out or wake-up just before on the same CPU.

use super::ModelBuilder;
use crate::cpu::StackTarget;
use crate::segment::{SegmentState, StackRef};
use crate::tracker::Life;
use causeway_format::{Cpu, StackKind, Tid, Timestamp};

impl ModelBuilder<'_> {
    pub(super) fn on_stack(
        &mut self,
        ts: Timestamp,
        c: Cpu,
        tid: Tid,
        kind: StackKind,
        stack: StackRef,
    ) {
        if !matches!(kind, StackKind::SwitchOut) && !kind.is_waker() {
            return;
        }
        let weight = if kind == StackKind::WakerSample {
            self.waker_sample_weight
        } else {
            1
        };
        let pending = self.cpu(c).pending.filter(|p| p.ts == ts);
        match (kind, pending.map(|p| p.target)) {
            (StackKind::SwitchOut, Some(StackTarget::SwitchOut { tid: t })) if t == tid => {
                self.cpu(c).pending = None;
                // Only a blocking switch-out has a segment to hold the stack; a
                // preempted thread's stack is not needed.
                if let Some(th) = self.threads.get_mut(tid)
                    && let Life::Live(open) = &mut th.life
                    && open.start == ts
                    && let SegmentState::Blocked {
                        switch_out_stack, ..
                    } = &mut open.state
                {
                    *switch_out_stack = Some(stack);
                }
            }
            (StackKind::SwitchOut, Some(StackTarget::GoPark { event })) => {
                self.cpu(c).pending = None;
                if let Some(crate::goroutines::GoEvent {
                    kind: crate::goroutines::GoEventKind::Park { stack: s, .. },
                    ..
                }) = self.go_events.get_mut(event)
                {
                    *s = Some(stack);
                }
            }
            (k, Some(StackTarget::WakerUnused)) if k.is_waker() => self.cpu(c).pending = None,
            (k, Some(StackTarget::Waker { wakee, seg })) if k.is_waker() => {
                self.cpu(c).pending = None;
                if let Some(SegmentState::Blocked { waker: Some(w), .. }) = self
                    .threads
                    .get_mut(wakee)
                    .and_then(|th| th.segments.get_mut(seg))
                    .map(|s| &mut s.state)
                {
                    w.waker_stack = Some(stack);
                    w.waker_stack_weight = weight;
                }
            }
            _ => self.stats.unattached_stacks += 1,
        }
    }
}
