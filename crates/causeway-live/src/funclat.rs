//! A function's latency profile, live: a probe pair whose BPF programs count each
//! call into log2 slots in the kernel; the slots are read until a stop, the duration,
//! or the process's end, and every interval for the time-lapse slices.
//!
//! Decisions: live profiles are log2 only (the kernel keeps 64 slots; finer bins would
//! cost more per call). A slice's offset is where its interval starts; the last slice
//! may be shorter than the interval (the measurement ended inside it).

use crate::control::{Control, Probed};
use crate::error::LiveError;
use causeway_latency::{Histogram, Peak, PeakOptions, Slice, find_peaks};
use causeway_probe::launch::Launched;
use causeway_probe::{Attachment, FuncProbe, ProbeTarget, Slots};
use std::time::{Duration, Instant};

/// How often the loop looks at the clock, the control and the process.
const TICK: Duration = Duration::from_millis(50);

/// What to profile, resolved.
pub struct FuncRequest {
    /// The function, its binary and process.
    pub target: ProbeTarget,
    /// The command started for it, still stopped before its `exec`.
    pub launched: Option<Launched>,
    /// How to attach; `None`: the cheapest the kernel offers.
    pub attachment: Option<Attachment>,
    /// Stop after this long; `None`: at a stop request or the process's end.
    pub duration: Option<Duration>,
    /// Cut a time-lapse slice every this long.
    pub interval: Option<Duration>,
}

/// What a profile run reports while it runs.
#[derive(Clone, Copy, Debug)]
pub enum FuncNotice<'a> {
    /// The probes are attached and the process runs.
    Timing {
        /// What is timed.
        target: &'a ProbeTarget,
        /// How.
        attachment: Attachment,
    },
}

/// The profile of a live function.
#[derive(Clone, Debug)]
pub struct FuncProfile {
    /// The kernel's counts at the end.
    pub slots: Slots,
    /// Those counts as a histogram.
    pub hist: Histogram,
    /// Its peaks.
    pub peaks: Vec<Peak>,
    /// One profile per interval, when asked for.
    pub slices: Vec<Slice>,
}

/// Profile the function until a stop, the duration, or the process's end.
pub fn profile(
    req: FuncRequest,
    ctl: &dyn Control,
    notify: &mut dyn FnMut(FuncNotice<'_>),
) -> Result<FuncProfile, LiveError> {
    let t = &req.target;
    let attached = match req.attachment {
        Some(how) => FuncProbe::attach_as(t, how),
        None => FuncProbe::attach(t),
    };
    let probe = attached.map_err(|source| LiveError::Attach {
        symbol: t.symbol.clone(),
        source,
    })?;
    let probed = Probed::go(t.tgid.unwrap_or(0), req.launched);
    notify(FuncNotice::Timing {
        target: t,
        attachment: probe.attachment(),
    });
    let (slots, slices) = probe_loop(&probe, probed, (req.duration, req.interval), ctl)?;
    drop(probe);
    let hist = Histogram::from_log2_slots(&slots.slots);
    let peaks = find_peaks(&hist, &PeakOptions::default());
    Ok(FuncProfile {
        slots,
        hist,
        peaks,
        slices,
    })
}

/// Read the probe until the end; the slices every interval.
fn probe_loop(
    probe: &FuncProbe,
    mut probed: Probed,
    (limit, interval): (Option<Duration>, Option<Duration>),
    ctl: &dyn Control,
) -> Result<(Slots, Vec<Slice>), LiveError> {
    let start = Instant::now();
    let interval = interval.map(|i| i.max(Duration::from_nanos(1)));
    let mut slices = Vec::new();
    // From zero, not from a first read: the command runs from `Probed::go` on, and the
    // calls it makes before this loop's first read belong in the first slice (else the
    // slices do not add up to the profile).
    let mut last = Slots::zero();
    let mut next_slice = interval.map(|i| start + i);
    loop {
        std::thread::sleep(TICK);
        let now = Instant::now();
        let done =
            ctl.stop_requested() || limit.is_some_and(|l| now - start >= l) || !probed.alive();
        if let (Some(at), Some(iv)) = (next_slice, interval)
            && (now >= at || done)
        {
            let cur = probe.read()?;
            let h = Histogram::from_log2_slots(&cur.since(&last).slots);
            let offset = at.saturating_duration_since(start + iv);
            slices.push(Slice {
                offset_ns: offset.as_nanos() as u64,
                peaks: find_peaks(&h, &PeakOptions::default()),
                hist: h,
            });
            last = cur;
            next_slice = Some(at + iv);
        }
        if done {
            break;
        }
    }
    probed.finish();
    Ok((probe.read()?, slices))
}
