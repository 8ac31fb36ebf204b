//! Eight threads trace calls while another thread stops and restarts tracing thousands
//! of times (Hubble's Figure 4 protocol) and dumps now and then: every dump must decode
//! to properly nested, time-ordered calls whose structure is the one the threads made.

use causeway_format::{EventKind, Marker, Tid, TraceReader};
use causeway_inproc::api;
use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

const BASE_ID: usize = 0x1000;

/// Calls nested `depth` deep: function `BASE_ID + d` calls `BASE_ID + d + 1`.
fn nest(d: usize, depth: usize) -> u64 {
    api::enter(BASE_ID + d);
    let mut s = d as u64;
    if d + 1 < depth {
        s += nest(d + 1, depth);
        s += nest(d + 1, depth);
    }
    api::exit();
    std::hint::black_box(s)
}

/// Check one dump: per thread, enters and exits nest, names match, times never go
/// back, and every call's parent is the function one level up (or a call cut at the
/// start of a stretch).
fn check_dump(path: &std::path::Path, workers: &[u32], mono: (u64, u64)) -> usize {
    let f = std::fs::File::open(path).expect("open dump");
    let mut r = TraceReader::new(std::io::BufReader::new(f)).expect("read dump");
    let names: Vec<String> = r.tables().strings.clone();
    let mut stacks: HashMap<Tid, Vec<String>> = HashMap::new();
    let mut last: HashMap<Tid, u64> = HashMap::new();
    let mut calls = 0;
    for ev in r.events() {
        let ev = ev.expect("event");
        let EventKind::Marker { tid, marker } = ev.kind else {
            continue;
        };
        // Times are CLOCK_MONOTONIC, the kernel recorder's clock: inside the test's run.
        assert!(
            (mono.0..=mono.1).contains(&ev.ts.0),
            "{} outside CLOCK_MONOTONIC {mono:?}",
            ev.ts.0
        );
        let prev = last.insert(tid, ev.ts.0).unwrap_or(0);
        assert!(ev.ts.0 >= prev, "time went back in thread {tid:?}");
        let st = stacks.entry(tid).or_default();
        match marker {
            Marker::MethodEnter { method } => {
                let n = names[method.0 as usize].clone();
                if let (Some(parent), Some(d)) = (st.last(), depth_of(&n))
                    && let Some(pd) = depth_of(parent)
                {
                    assert_eq!(pd + 1, d, "{n} called from {parent}");
                }
                st.push(n);
                calls += 1;
            }
            Marker::MethodExit { method } => {
                let top = st.pop().expect("exit without entry");
                assert_eq!(top, names[method.0 as usize]);
            }
            _ => {}
        }
    }
    // Calls running when the buffer was copied stay open (no exit): at most one chain
    // per thread, no deeper than the threads nest.
    for (tid, st) in &stacks {
        assert!(st.len() <= 8, "thread {tid:?} left {st:?} open");
    }
    assert!(
        workers.iter().all(|w| stacks.contains_key(&Tid(*w))),
        "every worker appears in the dump"
    );
    calls
}

fn mono_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes the timespec it is given.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

fn depth_of(name: &str) -> Option<usize> {
    let v = usize::from_str_radix(name.strip_prefix("0x")?, 16).ok()?;
    v.checked_sub(BASE_ID).filter(|d| *d < 64)
}

#[test]
fn stop_start_toggles_leave_every_dump_balanced_and_ordered() {
    let dir = std::env::temp_dir().join(format!("cw-threads-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mono_start = mono_ns();
    api::init().unwrap();
    api::config("CAUSEWAY_OUTPUT", dir.to_str().unwrap()).unwrap();
    api::config("CAUSEWAY_MAX_DUMPS", "0").unwrap();
    // Small buffers so that they wrap many times between dumps.
    api::config("CAUSEWAY_BUFFER", "256K").unwrap();
    let done = Arc::new(AtomicBool::new(false));
    let traced = Arc::new(AtomicUsize::new(0));
    let (tx, rx) = std::sync::mpsc::channel();
    let workers: Vec<_> = (0..8)
        .map(|i| {
            let done = done.clone();
            let traced = traced.clone();
            let tx = tx.clone();
            std::thread::spawn(move || {
                // SAFETY: gettid has no preconditions.
                tx.send(unsafe { libc::gettid() } as u32).unwrap();
                let mut s = 0;
                let mut n = 0u64;
                while !done.load(Ordering::Relaxed) {
                    s += nest(0, 4 + i % 4);
                    // Short sleeps now and then: the 2-CPU test machine keeps the
                    // toggling thread running, and dumps meet blocked threads too
                    // (copied without a stop answer) as well as running ones.
                    n += 1;
                    if n == 1 {
                        traced.fetch_add(1, Ordering::Relaxed);
                    }
                    if n.is_multiple_of(64) {
                        std::thread::sleep(std::time::Duration::from_micros(50));
                    }
                }
                s
            })
        })
        .collect();
    let tids: Vec<u32> = (0..8).map(|_| rx.recv().unwrap()).collect();
    // Every worker must be in every dump, so none may be dumped before its first call:
    // on two CPUs a new thread can wait a while before it first runs.
    while traced.load(Ordering::Relaxed) < 8 {
        std::thread::yield_now();
    }
    let mut dumps = Vec::new();
    for round in 0..2000 {
        api::stop().unwrap();
        std::thread::yield_now();
        api::start().unwrap();
        if round % 200 == 199 {
            dumps.push(api::dump("toggle test").unwrap());
        }
        if round % 500 == 0 {
            // A look for new libraries while the workers trace: finds none, changes
            // nothing.
            api::rescan().unwrap();
        }
    }
    done.store(true, Ordering::Relaxed);
    for w in workers {
        w.join().unwrap();
    }
    assert_eq!(dumps.len(), 10);
    let mono_end = mono_ns();
    for d in &dumps {
        let calls = check_dump(d, &tids, (mono_start, mono_end));
        assert!(calls > 1000, "{} holds only {calls} calls", d.display());
    }
    std::fs::remove_dir_all(&dir).ok();
}
