//! A dump copies a thread that never answers the stop: it spins on another CPU in code
//! without trace points. Trace points store their slots non-temporally, so the copy is
//! right only if the dump drains the spinning thread's write-combining buffers first.
//! Every call the thread made before it began to spin must be in the dump, exactly, and
//! the call it spins in must be open at the end.

use causeway_format::{EventKind, Marker, TraceReader};
use causeway_inproc::api;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};

const OUTER: usize = 0x2000;
const INNER: usize = 0x2001;
const SPIN: usize = 0x2002;
/// Odd, so the last slots before the spin do not fill a whole cache line.
const CALLS: usize = 1001;

#[test]
fn a_thread_copied_while_it_runs_untraced_code_has_every_call_it_made() {
    let dir = std::env::temp_dir().join(format!("cw-running-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    api::init().unwrap();
    api::config("CAUSEWAY_OUTPUT", dir.to_str().unwrap()).unwrap();
    api::config("CAUSEWAY_MAX_DUMPS", "0").unwrap();
    let spinning = Arc::new(AtomicBool::new(false));
    let release = Arc::new(AtomicBool::new(false));
    let tid = Arc::new(AtomicU32::new(0));
    let worker = {
        let (spinning, release, tid) = (spinning.clone(), release.clone(), tid.clone());
        std::thread::spawn(move || {
            // SAFETY: gettid has no preconditions.
            tid.store(unsafe { libc::gettid() } as u32, Ordering::Relaxed);
            for _ in 0..CALLS {
                api::enter(OUTER);
                api::enter(INNER);
                api::exit();
                api::exit();
            }
            api::enter(SPIN);
            spinning.store(true, Ordering::Release);
            // No trace point until released: the stop request stays unanswered.
            while !release.load(Ordering::Acquire) {
                std::hint::spin_loop();
            }
            api::exit();
        })
    };
    while !spinning.load(Ordering::Acquire) {
        std::thread::yield_now();
    }
    let path = api::dump("running copy").unwrap();
    release.store(true, Ordering::Release);
    worker.join().unwrap();
    let tid = tid.load(Ordering::Relaxed);

    let mut r = TraceReader::open(&path).expect("read dump");
    let forced = r.stats().counters.get("inproc.forced_copies").copied();
    assert_eq!(
        forced,
        Some(1),
        "the spinning thread was copied while it ran"
    );
    let names = r.tables().strings.clone();
    let mut seq = Vec::new();
    for ev in r.events() {
        let ev = ev.expect("event");
        if let EventKind::Marker { tid: t, marker } = ev.kind
            && t.0 == tid
        {
            match marker {
                Marker::MethodEnter { method } => {
                    seq.push(format!(">{}", names[method.0 as usize]))
                }
                Marker::MethodExit { method } => seq.push(format!("<{}", names[method.0 as usize])),
                _ => {}
            }
        }
    }
    let (o, i, s) = (
        format!("{OUTER:#x}"),
        format!("{INNER:#x}"),
        format!("{SPIN:#x}"),
    );
    let mut want = Vec::new();
    for _ in 0..CALLS {
        want.extend([
            format!(">{o}"),
            format!(">{i}"),
            format!("<{i}"),
            format!("<{o}"),
        ]);
    }
    want.push(format!(">{s}"));
    assert_eq!(seq.len(), want.len(), "calls in the dump");
    assert_eq!(seq, want);
    std::fs::remove_dir_all(&dir).ok();
}
