//! What one uprobe hit costs on this machine, measured on a function of this very
//! process: the cost that timing a function adds to the calls around it.
//!
//! On bare metal a uprobe entry or return costs around a microsecond; in some virtual
//! machines (where the breakpoint trap is emulated) ten times more. DARC's peaks are in
//! F0's terms, so `rootpath` subtracts this cost per probe hit from F0's latency.

use crate::error::ProbeError;
use crate::funclat::{Attachment, FuncProbe, ProbeTarget};
use std::hint::black_box;
use std::time::Instant;

/// The function the calibration probes. Not inlined and with a plain symbol, so a
/// uprobe can be attached to it by name.
#[unsafe(no_mangle)]
#[inline(never)]
pub extern "C" fn causeway_probe_calibration_target(x: u64) -> u64 {
    black_box(x.wrapping_mul(3))
}

fn time_calls(n: u64) -> u64 {
    let t = Instant::now();
    let mut acc = 0u64;
    for i in 0..n {
        acc = acc.wrapping_add(causeway_probe_calibration_target(black_box(i)));
    }
    black_box(acc);
    t.elapsed().as_nanos() as u64
}

fn median(mut v: Vec<u64>) -> u64 {
    v.sort_unstable();
    v.get(v.len() / 2).copied().unwrap_or(0)
}

/// Nanoseconds one probe hit (an entry or a return) adds: the median of a few rounds
/// of `calls` calls with an entry/return probe pair, minus the median without, halved.
/// The median, not the fastest round: the traced program runs under the same load as
/// the calibration, and on a busy machine a trap costs it more than the best case.
pub fn hit_cost_ns(calls: u64) -> Result<u64, ProbeError> {
    let exe = std::fs::read_link("/proc/self/exe").map_err(|source| ProbeError::Executable {
        tgid: std::process::id(),
        source,
    })?;
    let calls = calls.max(1);
    let bare = median((0..5).map(|_| time_calls(calls)).collect());
    // A uprobe/uretprobe pair, as `rootpath` attaches its probes.
    let probe = FuncProbe::attach_as(
        &ProbeTarget {
            binary: exe,
            symbol: "causeway_probe_calibration_target".into(),
            tgid: Some(std::process::id()),
        },
        Attachment::Pair,
    )?;
    let probed = median((0..5).map(|_| time_calls(calls)).collect());
    drop(probe);
    Ok(probed.saturating_sub(bare) / calls / 2)
}
