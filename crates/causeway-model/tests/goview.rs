//! The goroutine view on a synthetic trace: a goroutine parks on a channel and is
//! readied by another, makes a blocking system call on its thread, and the other
//! goroutine's thread wakes a thread of another program.

use causeway_format::{EventKind, StringId, TaskState, Tid, Timestamp, Waker};
use causeway_model::{GOROUTINE_TID_BASE, SegmentState};
use causeway_testkit::synth::{Synth, named_tables};

fn go_run(s: &mut Synth, ts: u64, cpu: u32, tid: u32, goid: u64) {
    s.push(
        ts,
        cpu,
        EventKind::GoRun {
            tid: Tid(tid),
            goid,
            parent: 1,
            start: None,
        },
    );
}

#[test]
fn goroutines_stand_in_for_their_threads() {
    // Process 100 is a Go program with threads 101 and 102; 200 is another program.
    let mut tables = named_tables(&[(101, 100, "app"), (102, 100, "app"), (200, 200, "other")]);
    tables.strings.push("chan receive".into());
    let chan = StringId(tables.strings.len() as u32 - 1);
    let mut s = Synth::new();
    s.switch(0, 0, 0, TaskState::RUNNABLE, 101)
        .switch(0, 1, 0, TaskState::RUNNABLE, 102);
    go_run(&mut s, 10, 0, 101, 5);
    go_run(&mut s, 20, 1, 102, 6);
    // Goroutine 5 parks on a channel; its thread sleeps in the scheduler.
    s.push(
        30,
        0,
        EventKind::GoPark {
            tid: Tid(101),
            goid: 5,
            reason: chan,
        },
    );
    s.switch(31, 0, 101, TaskState::INTERRUPTIBLE, 0);
    // Goroutine 6 sends on it: it readies 5 and wakes an idle thread for it.
    s.push(
        50,
        1,
        EventKind::GoReady {
            tid: Tid(102),
            goid: 5,
            by: 6,
        },
    );
    s.wake_by(55, 1, 102, 101)
        .switch(56, 0, 0, TaskState::RUNNABLE, 101);
    go_run(&mut s, 60, 0, 101, 5);
    // Goroutine 5 blocks in a system call on its thread, which another program's
    // thread ends.
    s.switch(70, 0, 101, TaskState::UNINTERRUPTIBLE, 0)
        .switch(75, 0, 0, TaskState::RUNNABLE, 200)
        .wake_by(90, 0, 200, 101)
        .switch(91, 0, 200, TaskState::INTERRUPTIBLE, 101);
    // Goroutine 6's thread wakes the other program's thread.
    s.wake_by(100, 1, 102, 200)
        .switch(101, 0, 101, TaskState::RUNNABLE, 200);
    let model = s.model_with(&tables, 2);
    assert!(model.has_goroutines());
    let view = model.goroutine_view(&tables);

    // The Go program's threads are gone; its goroutines stand as threads.
    assert!(view.threads().all(|t| t.tid.0 != 101 && t.tid.0 != 102));
    let g = |goid: u64| {
        view.threads()
            .find(|t| view.goroutine(t.tid).is_some_and(|i| i.goid == goid))
            .unwrap_or_else(|| panic!("no goroutine {goid}"))
    };
    let (g5, g6) = (g(5), g(6));
    assert!(g5.tid.0 >= GOROUTINE_TID_BASE && g6.tid.0 >= GOROUTINE_TID_BASE);
    assert_eq!(g5.tgid.map(|t| t.0), Some(100));

    // Goroutine 5: running, parked until goroutine 6 readied it, runnable until it
    // ran again, then blocked in its system call until the other program's thread.
    let blocked: Vec<(u64, u64, Waker)> = g5
        .segments
        .iter()
        .filter_map(|seg| match seg.state {
            SegmentState::Blocked { waker: Some(w), .. } => Some((seg.start.0, seg.end.0, w.waker)),
            _ => None,
        })
        .collect();
    assert_eq!(
        blocked,
        vec![
            (30, 50, Waker::Thread { tid: g6.tid }),
            (70, 90, Waker::Thread { tid: Tid(200) }),
        ],
        "{:#?}",
        g5.segments
    );
    let at = |ts: u64| g5.segment_at(Timestamp(ts)).map(|s| s.state);
    assert!(matches!(at(40), Some(SegmentState::Blocked { .. })));
    assert!(matches!(at(55), Some(SegmentState::Runnable { .. })));
    assert!(matches!(at(65), Some(SegmentState::Running { .. })));

    // The other program's thread was woken by goroutine 6, not by thread 102.
    let other = view.thread(Tid(200)).unwrap();
    let woke = other
        .segments
        .iter()
        .find_map(|seg| match seg.state {
            SegmentState::Blocked { waker: Some(w), .. } if w.ts.0 == 100 => Some(w.waker),
            _ => None,
        })
        .expect("the wait that ends at 100");
    assert_eq!(woke, Waker::Thread { tid: g6.tid });
}

#[test]
fn a_model_without_goroutine_events_is_its_own_view() {
    let tables = named_tables(&[(7, 7, "a")]);
    let mut s = Synth::new();
    s.switch(0, 0, 0, TaskState::RUNNABLE, 7)
        .switch(10, 0, 7, TaskState::INTERRUPTIBLE, 0);
    let m = s.model_with(&tables, 1);
    assert!(!m.has_goroutines());
    assert_eq!(m.goroutine_view(&tables), m);
}

/// A Go program's end wakes its parent (`waitid`) from whichever thread dies last,
/// long after that thread carried a goroutine: the wake-up names the goroutine the
/// program ran last, the one that ended it, not an unknown context.
#[test]
fn a_go_program_s_exit_wakes_its_parent_from_its_last_goroutine() {
    let mut tables = named_tables(&[(101, 100, "app"), (102, 100, "app"), (200, 200, "parent")]);
    tables.strings.push("select".into());
    let select = StringId(tables.strings.len() as u32 - 1);
    let mut s = Synth::new();
    s.switch(0, 0, 0, TaskState::RUNNABLE, 101)
        .switch(0, 1, 0, TaskState::RUNNABLE, 200)
        .switch(5, 1, 200, TaskState::INTERRUPTIBLE, 102);
    go_run(&mut s, 10, 0, 101, 1); // runtime.main
    // Thread 102 ran goroutine 7 long before and then idled in the scheduler.
    go_run(&mut s, 20, 1, 102, 7);
    s.push(
        29,
        1,
        EventKind::GoPark {
            tid: Tid(102),
            goid: 7,
            reason: select,
        },
    );
    s.switch(30, 1, 102, TaskState::INTERRUPTIBLE, 0);
    // Goroutine 1 calls exit 5 ms later; its thread dies, then 102 dies last and wakes
    // the parent.
    s.exit(5_000_000, 0, 101)
        .switch(5_000_001, 0, 101, TaskState::DEAD, 0)
        .wake_by(5_000_100, 1, 0, 102)
        .switch(5_000_200, 1, 0, TaskState::RUNNABLE, 102)
        .wake_by(5_000_300, 1, 102, 200)
        .exit(5_000_400, 1, 102)
        .switch(5_000_500, 1, 102, TaskState::DEAD, 200);
    let model = s.model_with(&tables, 2);
    let view = model.goroutine_view(&tables);
    let g1 = view
        .threads()
        .find(|t| view.goroutine(t.tid).is_some_and(|i| i.goid == 1))
        .expect("goroutine 1");
    let parent = view.thread(Tid(200)).unwrap();
    let woke = parent
        .segments
        .iter()
        .find_map(|seg| match seg.state {
            SegmentState::Blocked { waker: Some(w), .. } if w.ts.0 == 5_000_300 => Some(w.waker),
            _ => None,
        })
        .expect("the parent's wait that ends at the exit");
    assert_eq!(woke, Waker::Thread { tid: g1.tid });
}

/// A Go program that execs another program (a container runtime's `runc init` that
/// becomes the container's process): from the exec on, its thread is the new
/// program's, kept in the view as an OS thread; before, it carried goroutines and is
/// left out.
#[test]
fn a_go_program_that_execs_another_is_that_program_afterwards() {
    let mut tables = named_tables(&[(101, 101, "runc:[2:INIT]")]);
    tables.strings.push("/bin/server".into());
    let exe = StringId(tables.strings.len() as u32 - 1);
    // The recorder writes a process row when it first sees a process and at each
    // exec.
    tables.processes.push(causeway_format::ProcessInfo {
        tgid: causeway_format::Tgid(101),
        parent: None,
        since: Timestamp(0),
        exe: StringId(0),
        cmdline: StringId(0),
    });
    tables.processes.push(causeway_format::ProcessInfo {
        tgid: causeway_format::Tgid(101),
        parent: None,
        since: Timestamp(100),
        exe,
        cmdline: exe,
    });
    let mut s = Synth::new();
    s.switch(0, 0, 0, TaskState::RUNNABLE, 101);
    go_run(&mut s, 10, 0, 101, 1);
    s.push(
        100,
        0,
        EventKind::Exec {
            tid: Tid(101),
            comm: exe,
            filename: exe,
        },
    );
    // The new program blocks and is woken.
    s.switch(200, 0, 101, TaskState::INTERRUPTIBLE, 0)
        .wake_by(300, 0, 0, 101)
        .switch(310, 0, 0, TaskState::RUNNABLE, 101)
        .switch(400, 0, 101, TaskState::RUNNABLE, 0);
    let m = s.model_with(&tables, 1);
    assert!(m.has_goroutines());
    let view = m.goroutine_view(&tables);
    let kept: Vec<_> = view.threads().filter(|t| t.tid == Tid(101)).collect();
    assert_eq!(kept.len(), 1, "the thread after the exec is in the view");
    let t = kept[0];
    assert!(
        t.segments.iter().all(|s| s.start >= Timestamp(100)),
        "{:?}",
        t.segments
    );
    assert!(t.segments.iter().any(|s| s.state.is_blocked()));
}
