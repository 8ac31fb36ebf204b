//! The comparison on synthetic runs: a call site only in the slow run is named, a
//! shared one is not, and call sites resolve to the program's own function below
//! library frames.

use crate::{Run, compare};
use causeway_format::{
    Frame, FrameId, FrameSpace, Header, ProcessInfo, Stack, StackKind, StringId, Tables, TaskState,
    Tgid, Timestamp,
};
use causeway_model::Trace;
use causeway_stacks::EventExtras;
use causeway_testkit::synth::Synth;

/// Tables with the program `/bin/app` (pid 1) and two user stacks, leaf first:
/// stack 0 = libc `fsync` called from `flush_log`, stack 1 = libc `fdatasync` called
/// from `sync_index`.
fn tables() -> Tables {
    let mut t = Tables {
        strings: vec![String::new()],
        ..Tables::default()
    };
    let mut s = |x: &str| {
        t.strings.push(x.to_string());
        StringId(u32::try_from(t.strings.len() - 1).unwrap())
    };
    let (app, libc) = (s("/bin/app"), s("/lib/libc.so.6"));
    let names = [
        s("fsync"),
        s("flush_log"),
        s("fdatasync"),
        s("sync_index"),
        s("main"),
    ];
    t.processes.push(ProcessInfo {
        tgid: Tgid(1),
        parent: None,
        since: Timestamp(0),
        exe: app,
        cmdline: app,
    });
    let frame =
        |module, symbol| Frame::new(FrameSpace::User { tgid: Tgid(1) }, 0x10, module, symbol, 0);
    t.frames = vec![
        frame(libc, names[0]),
        frame(app, names[1]),
        frame(libc, names[2]),
        frame(app, names[3]),
        frame(app, names[4]),
    ];
    let stack = |ids: &[u32]| Stack {
        frames: ids.iter().map(|&i| FrameId(i)).collect(),
        truncated: false,
    };
    t.stacks = vec![stack(&[0, 1, 4]), stack(&[2, 3, 4])];
    t
}

/// Thread 1 of process 1 issues `fsync` from flush_log; with `slow`, also `fdatasync`
/// from sync_index. Each call blocks, with its switch-out stack.
fn run(slow: bool) -> (Trace, causeway_stacks::Extras) {
    let mut s = Synth::new();
    s.switch(0, 0, 0, TaskState::RUNNABLE, 1);
    let mut t = 10;
    for _ in 0..3 {
        s.syscall_enter(t, 0, 1, 74)
            .switch(t + 1, 0, 1, TaskState::UNINTERRUPTIBLE, 0)
            .stack(t + 1, 0, 1, StackKind::SwitchOut, Some(0), None)
            .wake_by(t + 50, 0, 0, 1)
            .switch(t + 51, 0, 0, TaskState::RUNNABLE, 1)
            .syscall_exit(t + 52, 0, 1, 74);
        t += 100;
        if slow {
            s.syscall_enter(t, 0, 1, 75)
                .switch(t + 1, 0, 1, TaskState::UNINTERRUPTIBLE, 0)
                .stack(t + 1, 0, 1, StackKind::SwitchOut, Some(1), None)
                .wake_by(t + 80, 0, 0, 1)
                .switch(t + 81, 0, 0, TaskState::RUNNABLE, 1)
                .syscall_exit(t + 82, 0, 1, 75);
            t += 100;
        }
    }
    let ev = s.events();
    (
        Trace::from_events(tables(), Header::synthetic(1), &ev),
        EventExtras::from_events(&ev),
    )
}

#[test]
fn names_the_syscall_and_call_site_only_in_the_slow_run() {
    let (nt, nx) = run(false);
    let (st, sx) = run(true);
    let c = compare(
        Run {
            trace: &nt,
            extras: &nx,
        },
        Run {
            trace: &st,
            extras: &sx,
        },
    );
    assert_eq!(c.only_in_slow.len(), 1);
    assert_eq!(
        (c.only_in_slow[0].nr, c.only_in_slow[0].site.as_str()),
        (75, "sync_index")
    );
    assert!(c.only_in_normal.is_empty());
    // fdatasync added the most time, so it comes first; fsync is in both runs.
    assert_eq!(c.syscalls[0].nr, 75);
    let fsync = c.syscalls.iter().find(|s| s.nr == 74).unwrap();
    assert_eq!(fsync.calls(), (3, 3));
    assert_eq!(fsync.sites[0].site, "flush_log");
    assert_eq!(fsync.time_ns(), (3 * 52, 3 * 52));
    // The slow run waits longer as well: its histogram differs.
    assert!(c.wait_emd > 0.0);
}
