//! The thin safe Rust interface over the C library.
//!
//! Rust code calls the out-of-line trace points (`cw_enter_fn`), a direct call into the
//! statically linked C code; C and C++ inline them from `causeway.h`.

use crate::ffi;
use std::ffi::{CStr, CString};
use std::path::PathBuf;

/// Record the entry of a call to `id` (a function address or a number of your choice;
/// numbers below 2^32 take one slot, others two).
#[inline]
pub fn enter(id: usize) {
    // SAFETY: the trace point only touches the calling thread's buffer.
    unsafe { ffi::cw_enter_fn(id) }
}

/// Record the exit of the innermost call.
#[inline]
pub fn exit() {
    // SAFETY: as `enter`.
    unsafe { ffi::cw_exit_fn() }
}

/// Mark the calling thread alive for the stall watchdog.
#[inline]
pub fn heartbeat() {
    // SAFETY: writes the calling thread's own heartbeat word.
    unsafe { ffi::cw_heartbeat_fn() }
}

/// A call for the lifetime of the guard.
#[derive(Debug)]
pub struct Span(());

impl Span {
    /// Enter `id` now; the exit is recorded when the guard drops.
    pub fn enter(id: usize) -> Span {
        enter(id);
        Span(())
    }
}

impl Drop for Span {
    fn drop(&mut self) {
        exit();
    }
}

/// Errors of the control calls (a negative errno from the C side).
#[derive(Debug, thiserror::Error)]
#[error("libcauseway: {0}")]
pub struct ControlError(#[from] std::io::Error);

fn check(rc: i32) -> Result<(), ControlError> {
    if rc < 0 {
        Err(std::io::Error::from_raw_os_error(-rc).into())
    } else {
        Ok(())
    }
}

/// Initialize (the constructor normally has; idempotent).
pub fn init() -> Result<(), ControlError> {
    // SAFETY: no preconditions.
    check(unsafe { ffi::cw_init() })
}

/// Change a run-time setting: `CAUSEWAY_OUTPUT` (directory of the traces) or
/// `CAUSEWAY_MAX_DUMPS` (0 = no limit).
pub fn config(key: &str, value: &str) -> Result<(), ControlError> {
    let k = CString::new(key).map_err(std::io::Error::other)?;
    let v = CString::new(value).map_err(std::io::Error::other)?;
    // SAFETY: both are valid NUL-terminated strings for the call.
    check(unsafe { ffi::cw_config(k.as_ptr(), v.as_ptr()) })
}

/// Write a trace now and return its path.
pub fn dump(reason: &str) -> Result<PathBuf, ControlError> {
    let c = CString::new(reason.replace('\0', " ")).unwrap_or_default();
    // SAFETY: c is a valid NUL-terminated string for the call.
    check(unsafe { ffi::cw_dump(c.as_ptr()) })?;
    last_dump().ok_or_else(|| std::io::Error::other("no dump path").into())
}

/// Stop tracing in every thread.
pub fn stop() -> Result<(), ControlError> {
    // SAFETY: no preconditions.
    check(unsafe { ffi::cw_stop() })
}

/// Start tracing in every thread again.
pub fn start() -> Result<(), ControlError> {
    // SAFETY: no preconditions.
    check(unsafe { ffi::cw_start() })
}

/// Find the trace points (keyed, patched entries) of libraries loaded with `dlopen`
/// since the library last looked, now rather than at its control thread's next tick;
/// call it after loading a plugin. See docs/libcauseway.md, "Libraries loaded later".
pub fn rescan() -> Result<(), ControlError> {
    // SAFETY: no preconditions.
    check(unsafe { ffi::cw_rescan() })
}

/// Path of the last trace written.
pub fn last_dump() -> Option<PathBuf> {
    // SAFETY: returns NULL or a NUL-terminated string owned by the library.
    let p = unsafe { ffi::cw_last_dump() };
    if p.is_null() {
        return None;
    }
    // SAFETY: non-null, NUL-terminated.
    let s = unsafe { CStr::from_ptr(p) };
    Some(PathBuf::from(s.to_string_lossy().into_owned()))
}
