//! Writing a dump as a causeway trace: the one entry point the C side calls
//! ([`cw_rs_write_trace`]), and the pure-Rust writer behind it ([`write_trace`]).
//!
//! Calls are stored as [`Marker::MethodEnter`] / [`Marker::MethodExit`] events named at
//! the dump (calls still running at the dump have no exit) (see docs/libcauseway.md for why the existing markers and not a new event
//! kind): readers from format 1.0 on read them, and `causeway calls` rebuilds the trees.
//! Times are `CLOCK_MONOTONIC` nanoseconds, the kernel recorder's clock, rebuilt from the
//! TSC with the (TSC, CLOCK_MONOTONIC) pairs read at start-up and at the dump.

use crate::calls::{Balanced, CallEvent, balance};
use crate::decode::decode;
use crate::ffi::{self, CwDumpReq};
use crate::{names, procinfo};
use causeway_format::{
    ClockSource, Cpu, Event, EventKind, Header, HostInfo, Mapping, Marker, ProcessInfo, Scope,
    StringId, Tgid, ThreadInfo, Tid, Timestamp, TraceWriter,
};
use std::collections::HashMap;
use std::ffi::CStr;
use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};

/// Name of calls whose entry was before the recorded stretch.
pub const UNKNOWN_CALL: &str = "[before trace]";

/// Why a dump could not be written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DumpError {
    /// The trace file could not be created or written.
    #[error("cannot write {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// The trace writer refused.
    #[error("trace writer: {0}")]
    Format(#[from] causeway_format::FormatError),
}

/// Maps the trace point clock to `CLOCK_MONOTONIC` nanoseconds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ClockMap {
    /// Clock value of the reference pair.
    pub ref_tsc: u64,
    /// CLOCK_MONOTONIC of the reference pair.
    pub ref_mono_ns: u64,
    /// Clock ticks per nanosecond.
    pub ticks_per_ns: f64,
}

impl ClockMap {
    /// From two pairs taken apart in time (start-up and dump).
    pub fn from_pairs(cal: (u64, u64), reference: (u64, u64)) -> ClockMap {
        let dt = reference.0.wrapping_sub(cal.0) as f64;
        let dn = reference.1.saturating_sub(cal.1) as f64;
        ClockMap {
            ref_tsc: reference.0,
            ref_mono_ns: reference.1,
            ticks_per_ns: if dn > 0.0 && dt > 0.0 { dt / dn } else { 1.0 },
        }
    }

    /// Nanoseconds of `CLOCK_MONOTONIC` at clock value `tsc`.
    pub fn mono_ns(&self, tsc: u64) -> u64 {
        let d = tsc as i128 - self.ref_tsc as i128;
        let ns = self.ref_mono_ns as i128 + (d as f64 / self.ticks_per_ns) as i128;
        ns.max(0) as u64
    }
}

/// One thread's copied buffer.
#[derive(Clone, Debug, Default)]
pub struct ThreadSlots {
    /// Thread id.
    pub tid: i32,
    /// Thread name.
    pub comm: String,
    /// Slots, oldest first.
    pub slots: Vec<u64>,
    /// High half of the clock of the newest record.
    pub last_hi: u32,
    /// Clock when the copy was taken.
    pub end_tsc: u64,
    /// Slots overwritten or discarded before the copy.
    pub lost_slots: u64,
    /// `ffi::SNAP_*` bits.
    pub flags: u32,
}

/// Everything a dump writes.
#[derive(Clone, Debug)]
pub struct DumpInput {
    /// Why.
    pub reason: String,
    /// `ffi::trigger::*`.
    pub trigger: u32,
    /// The stalled thread or the caller.
    pub trigger_tid: i32,
    /// Clock conversion.
    pub clock: ClockMap,
    /// CLOCK_REALTIME minus CLOCK_MONOTONIC at the dump.
    pub realtime_offset_ns: i64,
    /// The threads.
    pub threads: Vec<ThreadSlots>,
    /// Threads that ran untraced.
    pub untraced_threads: u64,
}

/// Counters a dump writes into the trace's statistics (names stable: `causeway calls`
/// reads them).
pub mod counters {
    /// `ffi::trigger` code + 1 (0 is "not a libcauseway dump").
    pub const TRIGGER: &str = "inproc.trigger";
    /// The stalled thread or the thread that called `cw_dump`.
    pub const TRIGGER_TID: &str = "inproc.trigger_tid";
    /// CLOCK_MONOTONIC ns of the dump.
    pub const TRIGGER_TS: &str = "inproc.trigger_ts_ns";
    /// Slots overwritten by ring wrap or discarded as torn.
    pub const LOST_SLOTS: &str = "inproc.lost_slots";
    /// Calls whose entry was not in the buffer.
    pub const CUT_AT_START: &str = "inproc.calls_cut_at_start";
    /// Calls still open (or paused) at the end of their stretch.
    pub const OPEN_AT_END: &str = "inproc.calls_open_at_end";
    /// Threads copied without answering the stop request.
    pub const FORCED: &str = "inproc.forced_copies";
    /// Threads that had no buffer.
    pub const UNTRACED: &str = "inproc.untraced_threads";
    /// Times raised to keep a thread's clock non-decreasing.
    pub const CLAMPED: &str = "inproc.clamped_times";
}

fn header(input: &DumpInput) -> Header {
    let mut u: libc::utsname = unsafe_zeroed_utsname();
    // SAFETY: uname fills the struct it is given.
    let ok = unsafe { libc::uname(&mut u) } == 0;
    let s = |f: &[libc::c_char]| {
        let b: Vec<u8> = f
            .iter()
            .take_while(|&&c| c != 0)
            .map(|&c| c as u8)
            .collect();
        String::from_utf8_lossy(&b).into_owned()
    };
    let host = if ok {
        HostInfo {
            hostname: s(&u.nodename),
            kernel_release: s(&u.release),
            arch: s(&u.machine),
            ..HostInfo::default()
        }
    } else {
        HostInfo::default()
    };
    // SAFETY: sysconf has no preconditions.
    let cpus = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_CONF) }.max(1) as u32;
    Header {
        clock: ClockSource::Monotonic,
        clock_to_realtime_ns: input.realtime_offset_ns,
        clock_to_monotonic_ns: 0,
        host,
        cpu_count: cpus,
        command_line: procinfo::cmdline(),
        writer: format!(
            "libcauseway {} ({})",
            env!("CARGO_PKG_VERSION"),
            input.reason
        ),
        scope: Scope::Processes,
        target_pids: vec![std::process::id()],
        target_comm: None,
        file_id: 0,
        salvaged: None,
        waker_stack_sampling: None,
    }
}

fn unsafe_zeroed_utsname() -> libc::utsname {
    // SAFETY: utsname is plain bytes; all zeros is a valid value.
    unsafe { std::mem::zeroed() }
}

/// Write `input` as a trace at `path`; `namer` names ids (see [`names::resolve`]).
pub fn write_trace(
    path: &Path,
    input: &DumpInput,
    namer: &dyn Fn(&[u64]) -> HashMap<u64, String>,
) -> Result<(), DumpError> {
    let io = |source| DumpError::Io {
        path: path.to_path_buf(),
        source,
    };
    let file = File::create(path).map_err(io)?;
    let mut w = TraceWriter::new(BufWriter::new(file), &header(input))?;
    let tgid = Tgid(std::process::id());
    let exe = w.intern(&procinfo::exe());
    let cmd = w.intern(&procinfo::cmdline().join(" "));
    w.add_process(ProcessInfo {
        tgid,
        parent: None,
        since: Timestamp(0),
        exe,
        cmdline: cmd,
    });
    for m in procinfo::exec_mappings() {
        let p = w.intern(&m.path);
        w.add_mapping(Mapping {
            tgid,
            since: Timestamp(0),
            start: m.start,
            end: m.end,
            file_offset: m.offset,
            path: p,
            build_id: procinfo::build_id(&m.path),
        });
    }
    let balanced: Vec<Balanced> = input
        .threads
        .iter()
        .map(|t| balance(&decode(&t.slots, t.last_hi).records, t.end_tsc))
        .collect();
    let mut ids: Vec<u64> = balanced
        .iter()
        .flat_map(|b| b.events.iter())
        .filter_map(|e| match e {
            CallEvent::Enter { id, .. } => *id,
            CallEvent::Exit { .. } => None,
        })
        .collect();
    ids.sort_unstable();
    ids.dedup();
    let names = namer(&ids);
    let mut name_ids: HashMap<u64, StringId> = HashMap::new();
    for (&id, n) in &names {
        name_ids.insert(id, w.intern(n));
    }
    let unknown = w.intern(UNKNOWN_CALL);
    let mut events = Vec::new();
    for (k, (t, b)) in input.threads.iter().zip(&balanced).enumerate() {
        let comm = w.intern(&t.comm);
        w.add_thread(ThreadInfo {
            tid: Tid(t.tid as u32),
            tgid,
            since: Timestamp(0),
            comm,
        });
        thread_events(k, t.tid, b, &input.clock, &name_ids, unknown, &mut events);
    }
    events.sort_by_key(|&(ts, k, seq, _)| (ts, k, seq));
    for (_, _, _, ev) in &events {
        w.push(ev)?;
    }
    add_counters(&mut w, input, &balanced);
    w.finish()?;
    Ok(())
}

type Keyed = (u64, usize, usize, Event);

fn thread_events(
    k: usize,
    tid: i32,
    b: &Balanced,
    clock: &ClockMap,
    name_ids: &HashMap<u64, StringId>,
    unknown: StringId,
    out: &mut Vec<Keyed>,
) {
    let tid = Tid(tid as u32);
    let mut stack: Vec<StringId> = Vec::new();
    let mut last = 0u64;
    // Calls still running at the copy are left open: readers end them at the dump
    // (the `inproc.trigger_ts_ns` counter) and can say they were still running.
    let written = b.events.len() - b.final_open as usize;
    for (seq, e) in b.events[..written].iter().enumerate() {
        let (tsc, marker) = match *e {
            CallEvent::Enter { tsc, id } => {
                let name = id
                    .and_then(|i| name_ids.get(&i).copied())
                    .unwrap_or(unknown);
                stack.push(name);
                (tsc, Marker::MethodEnter { method: name })
            }
            CallEvent::Exit { tsc } => {
                let name = stack.pop().unwrap_or(unknown);
                (tsc, Marker::MethodExit { method: name })
            }
        };
        // The conversion is monotonic, but rounding must not reorder a thread's events.
        let ts = clock.mono_ns(tsc).max(last);
        last = ts;
        let ev = Event {
            ts: Timestamp(ts),
            cpu: Cpu(0),
            kind: EventKind::Marker { tid, marker },
        };
        out.push((ts, k, seq, ev));
    }
}

fn add_counters<W: std::io::Write>(w: &mut TraceWriter<W>, input: &DumpInput, bal: &[Balanced]) {
    let sum = |f: &dyn Fn(&Balanced) -> u64| bal.iter().map(f).sum::<u64>();
    w.add_counter(counters::TRIGGER, u64::from(input.trigger) + 1);
    w.add_counter(counters::TRIGGER_TID, input.trigger_tid.max(0) as u64);
    w.add_counter(counters::TRIGGER_TS, input.clock.ref_mono_ns);
    w.add_counter(
        counters::LOST_SLOTS,
        input.threads.iter().map(|t| t.lost_slots).sum(),
    );
    w.add_counter(counters::CUT_AT_START, sum(&|b| b.cut_at_start));
    w.add_counter(counters::OPEN_AT_END, sum(&|b| b.open_at_end));
    w.add_counter(counters::CLAMPED, sum(&|b| b.clamped));
    let forced = input
        .threads
        .iter()
        .filter(|t| t.flags & ffi::SNAP_FORCED != 0)
        .count();
    w.add_counter(counters::FORCED, forced as u64);
    w.add_counter(counters::UNTRACED, input.untraced_threads);
}

/// Read the C request into owned data.
///
/// # Safety
/// `req` must point to a valid `cw_dump_req` whose pointers are valid for its counts.
unsafe fn input_from(req: &CwDumpReq) -> (PathBuf, DumpInput) {
    // SAFETY: the caller passes NUL-terminated strings.
    let path = unsafe { CStr::from_ptr(req.path) }
        .to_string_lossy()
        .into_owned();
    // SAFETY: as above.
    let reason = unsafe { CStr::from_ptr(req.reason) }
        .to_string_lossy()
        .into_owned();
    let snaps = if req.nsnaps == 0 || req.snaps.is_null() {
        &[][..]
    } else {
        // SAFETY: the caller passes nsnaps valid snapshots.
        unsafe { std::slice::from_raw_parts(req.snaps, req.nsnaps as usize) }
    };
    let threads = snaps
        .iter()
        .map(|s| ThreadSlots {
            tid: s.tid,
            comm: procinfo::thread_comm(s.tid),
            slots: if s.nslots == 0 || s.slots.is_null() {
                Vec::new()
            } else {
                // SAFETY: each snapshot holds nslots valid slots.
                unsafe { std::slice::from_raw_parts(s.slots, s.nslots as usize) }.to_vec()
            },
            last_hi: s.last_hi,
            end_tsc: s.end_tsc,
            lost_slots: s.lost_slots,
            flags: s.flags,
        })
        .collect();
    let input = DumpInput {
        reason,
        trigger: req.trigger,
        trigger_tid: req.trigger_tid,
        clock: ClockMap::from_pairs(
            (req.cal_tsc, req.cal_mono_ns),
            (req.ref_tsc, req.ref_mono_ns),
        ),
        realtime_offset_ns: req.ref_real_ns as i64 - req.ref_mono_ns as i64,
        threads,
        untraced_threads: req.untraced_threads,
    };
    (PathBuf::from(path), input)
}

/// Ask running flight recorders to dump their window too (one timeline for both).
fn poke_flight_recorders() {
    for pid in procinfo::flight_recorders() {
        // SAFETY: kill only sends a signal.
        unsafe { libc::kill(pid, libc::SIGUSR1) };
    }
}

/// Called by the C side at a dump. Never unwinds into C.
///
/// # Safety
/// `req` must point to a valid `cw_dump_req` (see `c/cw_dump.h`).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cw_rs_write_trace(req: *const CwDumpReq) -> i32 {
    if req.is_null() {
        return -libc::EINVAL;
    }
    let r = std::panic::catch_unwind(|| {
        // SAFETY: the C caller passes a valid request that outlives this call.
        let (path, input) = unsafe { input_from(&*req) };
        // SAFETY: as above. A dump asked for by a signal is not passed on: the sender
        // (`causeway trigger`, a flight recorder's condition) chose which recorders
        // dump, and passing it on would make the flight recorder dump twice.
        let kernel = unsafe { (*req).kernel_dump != 0 && (*req).trigger != ffi::trigger::SIGNAL };
        let res = write_trace(&path, &input, &names::resolve);
        if kernel {
            poke_flight_recorders();
        }
        match res {
            Ok(()) => {
                eprintln!("libcauseway: wrote {} ({})", path.display(), input.reason);
                0
            }
            Err(e) => {
                eprintln!("libcauseway: {e}");
                -libc::EIO
            }
        }
    });
    r.unwrap_or(-libc::EFAULT)
}
