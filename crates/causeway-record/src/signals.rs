//! Ctrl-C / SIGTERM end the recording cleanly; SIGUSR1 asks for a flight-recorder dump.

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};

static STOP: AtomicBool = AtomicBool::new(false);
static DUMPS: AtomicU32 = AtomicU32::new(0);

extern "C" fn on_stop(_: libc::c_int) {
    STOP.store(true, Ordering::SeqCst);
}

extern "C" fn on_dump(_: libc::c_int) {
    DUMPS.fetch_add(1, Ordering::SeqCst);
}

/// Install the handlers (idempotent).
pub fn install() {
    // SAFETY: the handlers only touch atomics, which is async-signal-safe.
    unsafe {
        libc::signal(libc::SIGINT, on_stop as *const () as libc::sighandler_t);
        libc::signal(libc::SIGTERM, on_stop as *const () as libc::sighandler_t);
        libc::signal(libc::SIGUSR1, on_dump as *const () as libc::sighandler_t);
    }
}

/// Was a stop requested?
pub fn stop_requested() -> bool {
    STOP.load(Ordering::SeqCst)
}

/// Ask the recording to stop (as a signal would).
pub fn request_stop() {
    STOP.store(true, Ordering::SeqCst);
}

/// Take the number of dump requests since the last call.
pub fn take_dump_requests() -> u32 {
    DUMPS.swap(0, Ordering::SeqCst)
}
