//! A trace as tracks of slices, instants and flows: the one picture the Perfetto and
//! Chrome JSON exports and the HTML timeline draw, built once from the model, the
//! per-event extras and, when given, the bottleneck verdict.
//!
//! Tracks: one per process (named by its title when the trace has one), one per
//! thread with three lanes under it (`state`: running / runnable / blocked / stopped /
//! unknown from the model's segments; `syscalls`; `calls`: spans and in-process method
//! calls as nested slices), one per CPU (who ran), and one per knot of the bottleneck
//! analysis with its edges as slices. Wake-ups are flows from an instant on the
//! waker's state lane to the wakee's next slice. A diagnosis, when one is added, is a
//! track of its culprit chain with an arrow from each cause to what it delayed.
//!
//! Thread states come from the model, not from the raw switches, so an interval the
//! model does not know (after lost events) shows as `unknown`, never as a guess.

mod analysis;
mod calls;
mod diagnosis;
mod states;
mod tracks;
mod types;

pub use types::{Arg, ArgValue, Category, Instant, Lane, Slice, Timeline, Track, TrackKind};

use crate::bottleneck::BottleneckView;
use crate::diagnose::DiagnosisView;
use causeway_model::Trace;
use causeway_stacks::Extras;

impl Timeline {
    /// Build from a trace; `extras` adds system calls, `bottleneck` the knot tracks.
    pub fn build(
        trace: &Trace,
        extras: Option<&Extras>,
        bottleneck: Option<&BottleneckView>,
    ) -> Timeline {
        let mut tl = Timeline::default();
        let ids = tracks::add(trace, &mut tl);
        states::add(trace, &ids, &mut tl);
        if let Some(x) = extras {
            calls::add_syscalls(trace, x, &ids, &mut tl);
        }
        calls::add_markers(trace, &ids, &mut tl);
        if let Some(b) = bottleneck {
            analysis::add(trace, b, &mut tl);
        }
        tl
    }

    /// Add a diagnosis's culprit chain (computed from the same trace) as tracks.
    pub fn add_diagnosis(&mut self, trace: &Trace, d: &DiagnosisView) {
        // The diagnosis counts its times from the start of the model's span.
        let origin = trace.model().span().map_or(0, |s| s.start.0);
        diagnosis::add(d.doc(), origin, self);
    }

    /// Slices on the track `uuid`.
    pub fn slices_on(&self, uuid: u64) -> impl Iterator<Item = &Slice> {
        self.slices.iter().filter(move |s| s.track == uuid)
    }

    /// The track of a thread's lane, by the thread's index in the model.
    pub fn lane_uuid(thread_index: u32, lane: Lane) -> u64 {
        tracks::lane_uuid(thread_index, lane)
    }

    /// The track of a CPU.
    pub fn cpu_uuid(cpu: u32) -> u64 {
        tracks::cpu_uuid(cpu)
    }
}
