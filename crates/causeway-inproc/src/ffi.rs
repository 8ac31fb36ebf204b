//! The C side's declarations, mirrored by hand from `c/causeway.h` and `c/cw_dump.h`
//! (a test checks the layouts agree with the C compiler's).

use std::ffi::c_char;

/// `struct cw_snap`: one thread's buffer, copied at a dump.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct CwSnap {
    /// Thread id.
    pub tid: i32,
    /// `CW_SNAP_*` bits.
    pub flags: u32,
    /// Slots, oldest first.
    pub slots: *const u64,
    /// Number of slots.
    pub nslots: u64,
    /// Slots overwritten by the ring or discarded as torn.
    pub lost_slots: u64,
    /// Clock when the copy was taken (open calls end here).
    pub end_tsc: u64,
    /// High half of the clock of the newest record.
    pub last_hi: u32,
    /// Zero.
    pub reserved: u32,
}

/// The thread had exited; its buffer was kept.
pub const SNAP_EXITED: u32 = 1;
/// The thread did not answer the stop request; the copy was validated instead.
pub const SNAP_FORCED: u32 = 2;
/// The buffer had wrapped.
pub const SNAP_WRAPPED: u32 = 4;

/// `struct cw_dump_req`: everything a dump writes.
#[repr(C)]
#[derive(Debug)]
pub struct CwDumpReq {
    /// Output path (NUL-terminated).
    pub path: *const c_char,
    /// Why (NUL-terminated).
    pub reason: *const c_char,
    /// `CW_TRIGGER_*`.
    pub trigger: u32,
    /// The stalled thread, or the caller.
    pub trigger_tid: i32,
    /// Clock, CLOCK_MONOTONIC and CLOCK_REALTIME read together at the dump.
    pub ref_tsc: u64,
    /// CLOCK_MONOTONIC of the pair.
    pub ref_mono_ns: u64,
    /// CLOCK_REALTIME at the same moment.
    pub ref_real_ns: u64,
    /// An earlier pair (start-up), for the clock's rate.
    pub cal_tsc: u64,
    /// CLOCK_MONOTONIC of the earlier pair.
    pub cal_mono_ns: u64,
    /// Per-thread copies.
    pub snaps: *const CwSnap,
    /// Number of copies.
    pub nsnaps: u64,
    /// Threads that ran untraced (no buffer left).
    pub untraced_threads: u64,
    /// 1: also ask flight recorders to dump.
    pub kernel_dump: u64,
}

/// Triggers (`CW_TRIGGER_*`).
pub mod trigger {
    /// `cw_dump()`.
    pub const CALL: u32 = 0;
    /// The dump signal.
    pub const SIGNAL: u32 = 1;
    /// The stall watchdog.
    pub const STALL: u32 = 2;
    /// Process exit.
    pub const EXIT: u32 = 3;
}

/// `struct cw_thread` (only what tests need to drive the encoders).
#[repr(C)]
#[derive(Debug)]
pub struct CwThread {
    /// Next slot, NULL when not tracing.
    pub cur: *mut u64,
    /// Stop protocol word.
    pub stop: usize,
    /// Buffer start.
    pub base: *mut u64,
    /// Bound the fast path checks: the ring's end, or NULL while a stop is asked.
    pub end: *mut u64,
    /// High half of the newest record's clock.
    pub last_hi: u32,
    /// Registration state.
    pub state: u32,
    /// Wrap count.
    pub wraps: u64,
    /// Last heartbeat.
    pub beat: u64,
    /// Where the thread last stopped.
    pub parked: *mut u64,
    /// The library's record.
    pub rec: *mut std::ffi::c_void,
    /// One past the ring's last slot.
    pub ring_end: *mut u64,
}

unsafe extern "C" {
    /// Out-of-line entry trace point.
    pub fn cw_enter_fn(id: usize);
    /// Out-of-line exit trace point.
    pub fn cw_exit_fn();
    /// Out-of-line heartbeat.
    pub fn cw_heartbeat_fn();
    /// Dump now.
    pub fn cw_dump(reason: *const c_char) -> i32;
    /// Stop tracing everywhere.
    pub fn cw_stop() -> i32;
    /// Restart tracing everywhere.
    pub fn cw_start() -> i32;
    /// Path of the last dump, or NULL.
    pub fn cw_last_dump() -> *const c_char;
    /// Dumps written.
    pub fn cw_dump_count() -> u64;
    /// Change a run-time setting (`CAUSEWAY_OUTPUT`, `CAUSEWAY_MAX_DUMPS`).
    pub fn cw_config(key: *const c_char, value: *const c_char) -> i32;
    /// Initialize (idempotent).
    pub fn cw_init() -> i32;
    /// Find the trace points of libraries loaded since the last look, now.
    pub fn cw_rescan() -> i32;
    /// Test hook: encode an entry into `t` at clock `ts`.
    pub fn cw_test_enter(t: *mut CwThread, id: usize, ts: u64);
    /// Test hook: encode an exit into `t` at clock `ts`.
    pub fn cw_test_exit(t: *mut CwThread, ts: u64);
    /// Test hook: sizes and offsets of the shared structs, as C sees them.
    pub fn cw_test_layout(out: *mut u64, n: u64) -> u64;
}
