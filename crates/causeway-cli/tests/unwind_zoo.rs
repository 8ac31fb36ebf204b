//! DWARF unwinding of user stacks on real recordings (issue 5): the zoo built without
//! frame pointers, and a Debian binary not built by us, blocked in system calls inside
//! the C library (itself built without frame pointers). Each blocking stack must come
//! out whole: from the C library's system call wrapper, through the program's own
//! functions, to the thread's start, with every frame named.
//!
//! Needs root and the built zoo (`make workloads` builds `workloads/bin-nofp`); skipped
//! without root unless `CAUSEWAY_REQUIRE_ROOT=1` (then it fails, as in CI).

mod common;

use causeway_format::{StackId, Tables, Tgid, Timestamp};
use causeway_model::{Model, SegmentState};
use common::model;
use common::zoo::Zoo;
use std::path::{Path, PathBuf};

/// A zoo workload built without frame pointers.
fn workload_nofp(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../workloads/bin-nofp")
        .join(name)
        .canonicalize()
        .unwrap_or_else(|_| panic!("{name} without frame pointers is not built: `make workloads`"))
}

/// One user stack as (function, module) pairs, innermost first, and whether the
/// recorder marked it cut short.
struct UserStack {
    frames: Vec<(String, String)>,
    truncated: bool,
    /// Function names of the wait's kernel stack, innermost first; empty when the
    /// recorder took none (it takes them for uninterruptible waits by default).
    kernel: Vec<String>,
}

impl UserStack {
    fn read(tables: &Tables, id: StackId) -> UserStack {
        let st = tables.stack(id).expect("stack in table");
        UserStack {
            frames: st
                .frames
                .iter()
                .map(|&f| {
                    let fr = tables.frame(f).expect("frame in table");
                    (
                        tables.string(fr.symbol).to_string(),
                        tables.string(fr.module).to_string(),
                    )
                })
                .collect(),
            truncated: st.truncated,
            kernel: Vec::new(),
        }
    }

    /// The same with the wait's kernel stack.
    fn read_with_kernel(tables: &Tables, id: StackId, kernel: Option<StackId>) -> UserStack {
        let mut s = UserStack::read(tables, id);
        if let Some(k) = kernel.and_then(|k| tables.stack(k)) {
            s.kernel = k
                .frames
                .iter()
                .filter_map(|&f| tables.frame(f))
                .map(|fr| tables.string(fr.symbol).to_string())
                .collect();
        }
        s
    }

    /// The thread blocked inside a page fault (on `mmap_lock`, a page being read in):
    /// its innermost user frame is the faulting instruction, which can be anywhere in
    /// the program rather than in a system call wrapper.
    fn in_page_fault(&self) -> bool {
        self.kernel
            .iter()
            .any(|f| f.contains("exc_page_fault") || f == "handle_mm_fault")
    }

    fn names(&self) -> Vec<&str> {
        self.frames.iter().map(|f| f.0.as_str()).collect()
    }

    fn has(&self, name: &str) -> bool {
        self.frames.iter().any(|f| f.0 == name)
    }

    /// Reaches the thread's start: `main`'s caller chain or a new thread's.
    fn complete(&self) -> bool {
        let outer = self.frames.last().map_or("", |f| f.0.as_str());
        !self.truncated && ["clone3", "clone", "_start"].contains(&outer)
    }
}

/// Switch-out stacks of blocking waits of the threads whose name starts with one of
/// `prefixes`, in processes running `exe`.
fn blocking_stacks(m: &Model, tables: &Tables, exe: &Path, prefixes: &[&str]) -> Vec<UserStack> {
    let exe = exe.to_str().unwrap();
    // Each process running `exe`, from when it runs it: before its exec the process is
    // the launcher (the recorder's child waiting to exec), whose stacks are not the
    // program's.
    let runs: Vec<(Tgid, Timestamp)> = tables
        .processes
        .iter()
        .filter(|p| tables.string(p.exe) == exe)
        .map(|p| (p.tgid, p.since))
        .collect();
    let mut out = Vec::new();
    for t in m.threads() {
        let Some(since) = runs
            .iter()
            .filter(|(g, _)| t.tgid == Some(*g))
            .map(|(_, since)| *since)
            .min()
        else {
            continue;
        };
        if !prefixes.iter().any(|p| t.comm.starts_with(p)) {
            continue;
        }
        for s in t.segments.iter().filter(|s| s.start >= since) {
            if let SegmentState::Blocked {
                switch_out_stack: Some(st),
                ..
            } = &s.state
                && let Some(u) = st.user
            {
                out.push(UserStack::read_with_kernel(tables, u, st.kernel));
            }
        }
    }
    out
}

/// Every stack complete, every frame named, a named frame of the program, and the
/// innermost frame in the C library unless the wait began in a page fault (a new
/// thread's first touch of a page can wait for `mmap_lock` while another thread maps
/// a stack; seen once in CI).
fn check_whole(stacks: &[UserStack], exe: &Path, what: &str) {
    let exe = exe.to_str().unwrap();
    assert!(stacks.len() >= 20, "{what}: only {} stacks", stacks.len());
    for s in stacks {
        assert!(s.complete(), "{what}: cut short: {:?}", s.names());
        assert!(
            s.frames.iter().all(|f| !f.0.is_empty()),
            "{what}: unnamed frame in {:?}",
            s.frames
        );
        assert!(
            s.frames[0].1.contains("libc.so") || s.in_page_fault(),
            "{what}: the wait is not in the C library: {:?}, kernel stack {:?}",
            s.frames,
            s.kernel
        );
        assert!(
            s.frames.iter().any(|f| f.1 == exe),
            "{what}: no frame of the program: {:?}",
            s.frames
        );
    }
}

#[test]
fn lock_waits_without_frame_pointers_reach_the_worker_through_glibc() {
    let Some(zoo) = Zoo::start() else { return };
    let bin = workload_nofp("lock-contention");
    let out = zoo.record_program(&bin).out("t.cwt").seconds("1").run();
    let (m, tables, stats) = model(&out);
    let stacks = blocking_stacks(&m, &tables, &bin, &["worker-"]);
    check_whole(&stacks, &bin, "lock-contention");
    // The mutex path: the lock wait inside the C library, then the worker that took
    // the lock.
    let lock = stacks
        .iter()
        .filter(|s| s.has("___pthread_mutex_lock") && s.has("worker_main"))
        .count();
    assert!(
        lock * 10 >= stacks.len() * 9,
        "{lock} of {} stacks through pthread_mutex_lock to worker_main",
        stacks.len()
    );
    eprintln!(
        "lock-contention (no frame pointers): {} worker stacks, all complete, {lock} via pthread_mutex_lock -> worker_main; unwinds complete: {:?}",
        stacks.len(),
        stats.counters.get("unwind_complete")
    );
}

/// The kernel recognizes repeated stacks from what their first unwind read (the unwind
/// memo): most stacks of a lock-contended run arrive as memo ids, and they name the same
/// call paths as a recording that copies and unwinds every stack.
#[test]
fn stacks_the_kernel_recognizes_are_the_stacks_a_full_unwind_gives() {
    let Some(zoo) = Zoo::start() else { return };
    let bin = workload_nofp("lock-contention");
    let paths = |flags: &[&str], file: &str| {
        let out = zoo
            .record_program(&bin)
            .out(file)
            .flags(flags)
            .seconds("1")
            .run();
        let (m, tables, stats) = model(&out);
        let stacks = blocking_stacks(&m, &tables, &bin, &["worker-"]);
        check_whole(&stacks, &bin, file);
        // Call paths taken by at least a twentieth of the waits: the ones both runs have.
        let mut count = std::collections::BTreeMap::<Vec<String>, usize>::new();
        for s in &stacks {
            *count
                .entry(s.names().into_iter().map(str::to_owned).collect())
                .or_default() += 1;
        }
        let all: Vec<Vec<String>> = count.keys().cloned().collect();
        let names: Vec<Vec<String>> = count
            .into_iter()
            .filter(|(_, n)| n * 20 >= stacks.len())
            .map(|(p, _)| p)
            .collect();
        (names, all, stats.counters)
    };
    let (memo, _, counters) = paths(&[], "memo.cwt");
    let (_, full, full_counters) = paths(&["--no-unwind-memo"], "full.cwt");
    let known = counters
        .get("user_stacks_recognized_in_kernel")
        .copied()
        .unwrap_or(0);
    let copied = counters.get("user_stack_copies").copied().unwrap_or(0);
    assert!(
        known > copied,
        "the kernel recognized {known} stacks and copied {copied}"
    );
    assert_eq!(full_counters.get("user_stacks_recognized_in_kernel"), None);
    // The workers block at the same few places either way.
    assert!(!memo.is_empty());
    for p in &memo {
        assert!(
            full.contains(p),
            "only with the memo: {p:?}\nwithout: {full:?}"
        );
    }
    eprintln!(
        "lock-contention: {known} stacks recognized in the kernel, {copied} copied; {} distinct call paths ({} without the memo)",
        memo.len(),
        full.len()
    );
}

#[test]
fn fsync_waits_without_frame_pointers_reach_flush_log_through_glibc() {
    let Some(zoo) = Zoo::start() else { return };
    let bin = workload_nofp("blocking-write");
    let out = zoo.record_program(&bin).out("t.cwt").seconds("1").run();
    let (m, tables, _) = model(&out);
    let stacks = blocking_stacks(&m, &tables, &bin, &["consumer", "producer"]);
    check_whole(&stacks, &bin, "blocking-write");
    let fsync = stacks
        .iter()
        .filter(|s| s.has("flush_log") && s.frames[0].0.contains("fsync"))
        .count();
    assert!(fsync >= 10, "only {fsync} stacks in fsync <- flush_log");
    eprintln!(
        "blocking-write (no frame pointers): {} consumer/producer stacks, all complete, {fsync} in fsync <- flush_log, {} in a page fault",
        stacks.len(),
        stacks.iter().filter(|s| s.in_page_fault()).count()
    );
}

#[test]
fn frame_pointers_alone_lose_the_callers_of_glibc() {
    let Some(zoo) = Zoo::start() else { return };
    // The comparison that motivates DWARF unwinding: the same program, walked by frame
    // pointers in the kernel, loses the program's frames below the C library's lock
    // wait in most stacks.
    let bin = workload_nofp("lock-contention");
    let out = zoo
        .record_program(&bin)
        .out("t.cwt")
        .flags([
            "--unwind",
            "fp",
            "--stack-mode",
            "all",
            "--stack-depth",
            "32",
        ])
        .seconds("1")
        .run();
    let (m, tables, _) = model(&out);
    let stacks = blocking_stacks(&m, &tables, &bin, &["worker-"]);
    assert!(!stacks.is_empty());
    let whole = stacks.iter().filter(|s| s.complete()).count();
    assert!(
        whole * 2 < stacks.len(),
        "frame pointers gave {whole} of {} complete stacks",
        stacks.len()
    );
    eprintln!(
        "lock-contention (no frame pointers) with --unwind fp: {whole} of {} stacks complete",
        stacks.len()
    );
}

/// `gzip` from Debian, reading a pipe that stays empty between two bursts: it blocks
/// in `read`. Its binary is stripped and has no debug package here; `main` and
/// `_start` are named from the C library's start code around them.
fn gzip_stacks(zoo: &Zoo, debug_dirs: Option<&str>) -> Vec<UserStack> {
    let gzip = PathBuf::from("/usr/bin/gzip");
    assert!(gzip.exists(), "gzip is not installed (scripts/setup.sh)");
    let script = "{ sleep 0.2; head -c 100000 /dev/urandom; sleep 0.3; head -c 100 /dev/urandom; sleep 0.2; } | /usr/bin/gzip -c > /dev/null";
    let flags: Vec<String> = debug_dirs
        .map(|d| format!("--debug-dirs={d}"))
        .into_iter()
        .collect();
    // One file per run: the two runs of the test share the scratch directory.
    let name = if debug_dirs.is_some() {
        "gzip-dirs.cwt"
    } else {
        "gzip.cwt"
    };
    let out = zoo
        .record_program("/bin/sh")
        .out(name)
        .flags(flags)
        .args(["-c", script])
        .run();
    let (m, tables, _) = model(&out);
    blocking_stacks(&m, &tables, &gzip, &["gzip"])
}

#[test]
fn debian_gzip_blocked_in_read_reaches_main_with_and_without_debug_info() {
    let Some(zoo) = Zoo::start() else { return };
    for (debug_dirs, libc_frame) in [
        // With the C library's debug information (libc6-dbg): internal names.
        (None, "__libc_start_call_main"),
        // Without any: exported names only; the start frame between is unnamed.
        (Some(""), "__libc_start_main"),
    ] {
        // The waits this test is about are the reads of the empty pipe. On a busy
        // machine gzip may also block before `main`, in the dynamic loader waiting for
        // a page of a library to be read from disk: such a stack rightly has no `main`.
        let stacks: Vec<UserStack> = gzip_stacks(&zoo, debug_dirs)
            .into_iter()
            .filter(|s| s.frames.first().is_some_and(|f| f.0.contains("read")))
            .collect();
        assert!(!stacks.is_empty(), "no stack of gzip blocked in read");
        for s in &stacks {
            assert!(s.complete(), "cut short: {:?}", s.names());
            assert!(
                s.has("main") && s.has(libc_frame),
                "debug dirs {debug_dirs:?}: {:?}",
                s.names()
            );
            assert!(s.frames[0].1.contains("libc.so"), "{:?}", s.frames);
        }
        eprintln!(
            "gzip (debug dirs {debug_dirs:?}): {} blocking stacks reach main, e.g. {:?}",
            stacks.len(),
            stacks[0].names()
        );
    }
}

#[test]
fn cpp_frames_are_demangled_through_an_inlined_call() {
    let Some(zoo) = Zoo::start() else { return };
    // A C++ program without frame pointers: a method in a namespace sleeps through a
    // helper that the compiler inlines.
    let src = zoo.dir().join("napper.cpp");
    std::fs::write(
        &src,
        r#"#include <time.h>
namespace zoo {
static inline void nap() { struct timespec t = {0, 20000000}; nanosleep(&t, 0); }
struct Sleeper {
    __attribute__((noinline)) void run(int n) { for (int i = 0; i < n; i++) nap(); }
};
}
int main() { zoo::Sleeper s; s.run(20); return 0; }
"#,
    )
    .unwrap();
    let bin = zoo.dir().join("napper");
    let cc = std::process::Command::new("g++")
        .args(["-O2", "-g", "-fomit-frame-pointer", "-o"])
        .arg(&bin)
        .arg(&src)
        .status()
        .expect("g++ (build-essential, scripts/setup.sh)");
    assert!(cc.success());
    let out = zoo.record_program(&bin).out("napper.cwt").run();
    let (m, tables, _) = model(&out);
    // The sleeps this test is about; a cold start may also block in the dynamic
    // loader (a library page read from disk), before `main` runs.
    let stacks: Vec<UserStack> = blocking_stacks(&m, &tables, &bin, &["napper"])
        .into_iter()
        .filter(|s| s.frames.first().is_some_and(|f| f.0.contains("nanosleep")))
        .collect();
    assert!(stacks.len() >= 10, "only {} stacks", stacks.len());
    for s in &stacks {
        assert!(s.complete(), "cut short: {:?}", s.names());
        assert!(
            s.has("zoo::Sleeper::run(int)") && s.has("main"),
            "not demangled or incomplete: {:?}",
            s.names()
        );
    }
    // The inlined helper is in the frame's inline chain, with its source line.
    let inlined: Vec<String> = tables
        .frames
        .iter()
        .flat_map(|f| {
            f.inlined
                .iter()
                .map(|i| tables.string(i.symbol).to_string())
        })
        .collect();
    assert!(
        // DWARF names an inlined subprogram by its short name.
        inlined.iter().any(|n| n == "nap" || n.ends_with("::nap")),
        "inlined functions seen: {inlined:?}"
    );
    eprintln!("C++: {} stacks, e.g. {:?}", stacks.len(), stacks[0].names());
}

/// A workload run as a container runtime starts a service (`workloads/ns-run.sh`: its
/// own mount and PID namespaces, its root a copy of its files at /opt/app, paths the
/// host lacks): its stacks are unwound and named as on the host, from files the
/// recorder opened through the process while it ran. Before, 0.6 % of them reached the
/// thread's start and the call sites were bare addresses in `libc.so.6`.
#[test]
fn a_workload_in_its_own_mount_namespace_unwinds_and_names_as_on_the_host() {
    let Some(zoo) = Zoo::start() else { return };
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../workloads/ns-run.sh");
    let bin = workload_nofp("lock-contention");
    let out = zoo
        .record_program(&script)
        .args([bin.as_os_str(), "--seconds".as_ref(), "1".as_ref()])
        .out("ns.cwt")
        .run();
    let (m, tables, _) = model(&out);
    let mut stacks = Vec::new();
    for t in m.threads().filter(|t| t.comm.starts_with("worker-")) {
        for s in &t.segments {
            if let SegmentState::Blocked {
                switch_out_stack: Some(st),
                ..
            } = &s.state
                && let Some(u) = st.user
            {
                stacks.push(UserStack::read(&tables, u));
            }
        }
    }
    assert!(stacks.len() >= 20, "only {} worker stacks", stacks.len());
    let whole = stacks
        .iter()
        .filter(|s| s.complete() && s.has("worker_main") && s.has("___pthread_mutex_lock"))
        .count();
    assert!(
        whole * 100 >= stacks.len() * 95,
        "{whole} of {} worker stacks whole through pthread_mutex_lock to worker_main; one: {:?}",
        stacks.len(),
        stacks[0].frames
    );
    // Named from the container's own files, under the paths the process saw.
    let s = stacks
        .iter()
        .find(|s| s.has("worker_main"))
        .expect("a worker stack");
    assert!(
        s.frames
            .iter()
            .any(|f| f.0 == "worker_main" && f.1 == "/opt/app/bin/lock-contention"),
        "{:?}",
        s.frames
    );
    assert!(
        s.frames[0].1.starts_with("/opt/app/lib/libc.so"),
        "{:?}",
        s.frames
    );
}
