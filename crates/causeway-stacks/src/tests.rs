//! Folding on synthetic traces with hand-made stacks.

use crate::{EventExtras, FlameKind, Folded, Options, fold};
use causeway_format::{
    Frame, FrameId, FrameSpace, Header, Stack, StackKind, StringId, Tables, TaskState, Tgid,
};
use causeway_model::Trace;
use causeway_testkit::synth::{Synth, named_tables};

/// Tables naming threads 1, 2, 3 (`wakee`, `relay`, `source`) and holding one user
/// stack per entry of `stacks` (frame names leaf first); stack `i` has id `i`.
fn tables(stacks: &[&[&str]]) -> Tables {
    let mut t = named_tables(&[(1, 1, "wakee"), (2, 1, "relay"), (3, 1, "source")]);
    for names in stacks {
        let mut frames = Vec::new();
        for n in *names {
            t.strings.push((*n).to_string());
            let sym = StringId(u32::try_from(t.strings.len() - 1).unwrap());
            t.frames.push(Frame::new(
                FrameSpace::User { tgid: Tgid(1) },
                0x1000,
                StringId(0),
                sym,
                0,
            ));
            frames.push(FrameId(u32::try_from(t.frames.len() - 1).unwrap()));
        }
        t.stacks.push(Stack {
            frames,
            truncated: false,
        });
    }
    t
}

/// Thread 1 blocks in `read` (stack 0) from 100 to 1000 and is woken by thread 2 in
/// `hand_over` (stack 1); thread 2 had blocked in `wait_job` (stack 2) from 50 to 600
/// and was woken by thread 3 in `post_job` (stack 3).
fn two_hops() -> (Trace, Vec<causeway_format::Event>) {
    let tables = tables(&[
        &["read", "do_io", "main"],
        &["hand_over", "relay_loop"],
        &["wait_job", "relay_loop"],
        &["post_job", "source_main"],
    ]);
    let mut s = Synth::new();
    s.switch(0, 0, 0, TaskState::RUNNABLE, 1)
        .switch(0, 1, 0, TaskState::RUNNABLE, 2)
        .switch(0, 2, 0, TaskState::RUNNABLE, 3)
        .switch(50, 1, 2, TaskState::INTERRUPTIBLE, 0)
        .stack(50, 1, 2, StackKind::SwitchOut, Some(2), None)
        .switch(100, 0, 1, TaskState::INTERRUPTIBLE, 0)
        .stack(100, 0, 1, StackKind::SwitchOut, Some(0), None)
        .wake_by(600, 2, 3, 2)
        .stack(600, 2, 3, StackKind::Waker, Some(3), None)
        .switch(601, 1, 0, TaskState::RUNNABLE, 2)
        .wake_by(1000, 1, 2, 1)
        .stack(1000, 1, 2, StackKind::Waker, Some(1), None)
        .switch(1001, 0, 0, TaskState::RUNNABLE, 1)
        .switch(1100, 2, 3, TaskState::RUNNABLE, 0);
    let events = s.events();
    let trace = Trace::from_events(tables, Header::synthetic(3), &events);
    (trace, events)
}

#[test]
fn off_cpu_weighs_blocked_stacks_by_time() {
    let (trace, _) = two_hops();
    let f = fold(&trace, None, FlameKind::OffCpu, &Options::default()).unwrap();
    let lines: Vec<(&str, u64)> = f.iter().collect();
    assert_eq!(
        lines,
        vec![
            ("relay;relay_loop;wait_job", 550),
            ("wakee;main;do_io;read", 900)
        ]
    );
}

#[test]
fn wake_chain_stacks_two_hops_of_wakers() {
    let (trace, _) = two_hops();
    let f = fold(&trace, None, FlameKind::WakeChain, &Options::default()).unwrap();
    let want = "wakee;main;do_io;read;--;hand_over;relay_loop;relay;--;post_job;source_main;source";
    assert_eq!(
        f.iter().find(|(k, _)| k.starts_with("wakee")),
        Some((want, 900))
    );
    // One hop only: the chain stops at the first waker.
    let one = Options {
        hops: 1,
        ..Options::default()
    };
    let f = fold(&trace, None, FlameKind::WakeChain, &one).unwrap();
    let want = "wakee;main;do_io;read;--;hand_over;relay_loop;relay";
    assert_eq!(
        f.iter().find(|(k, _)| k.starts_with("wakee")),
        Some((want, 900))
    );
}

#[test]
fn on_cpu_counts_samples_and_needs_them() {
    let tables = tables(&[&["spin", "main"], &["hash", "main"]]);
    let mut s = Synth::new();
    s.switch(0, 0, 0, TaskState::RUNNABLE, 1);
    for k in 0..10u64 {
        let st = if k < 7 { 0 } else { 1 };
        s.stack(10 + k * 10, 0, 1, StackKind::Sample, Some(st), None);
    }
    s.switch(200, 0, 1, TaskState::RUNNABLE, 0);
    let events = s.events();
    let trace = Trace::from_events(tables, Header::synthetic(1), &events);
    assert!(fold(&trace, None, FlameKind::OnCpu, &Options::default()).is_err());
    let x = EventExtras::from_events(&events);
    let f = fold(&trace, Some(&x), FlameKind::OnCpu, &Options::default()).unwrap();
    assert_eq!(f.total(), 10);
    assert_eq!(f.weight_with_frame("spin"), 7);
    assert_eq!(f.weight_with_frame("hash"), 3);
}

#[test]
fn folded_text_round_trips() {
    let (trace, _) = two_hops();
    for kind in [FlameKind::OffCpu, FlameKind::WakeChain] {
        let f = fold(&trace, None, kind, &Options::default()).unwrap();
        let back = Folded::parse(&f.to_text()).unwrap();
        assert_eq!(back, f);
        assert_eq!(back.total(), f.total());
    }
    assert!(Folded::parse("a;b x").is_err());
    assert!(Folded::parse("nospace").is_err());
    let mut f = Folded::new();
    f.add(&["a;b", "c\nd"], 3);
    assert_eq!(f.to_text(), "a:b;c d 3\n");
}

#[test]
fn syscall_spans_pair_entries_exits_and_call_sites() {
    let mut s = Synth::new();
    s.syscall_enter(10, 0, 1, 1)
        .stack(10, 0, 1, StackKind::Syscall, Some(4), None)
        .syscall_exit(20, 0, 1, 1)
        .syscall_exit(25, 0, 2, 0) // entry before the recording
        .syscall_enter(30, 0, 1, 74)
        .switch(35, 0, 1, TaskState::UNINTERRUPTIBLE, 0)
        .stack(35, 0, 1, StackKind::SwitchOut, Some(6), Some(7));
    let x = EventExtras::from_events(&s.events());
    assert_eq!(x.syscalls.len(), 2);
    assert_eq!(x.unmatched_exits, 1);
    let w = x.syscalls[0];
    assert_eq!((w.nr, w.start.0, w.end.map(|e| e.0)), (1, 10, Some(20)));
    assert_eq!(w.stack.and_then(|s| s.user).map(|u| u.0), Some(4));
    assert_eq!(x.syscalls[1].end, None);
    // The second call had no entry stack: it takes its switch-out stack.
    assert_eq!(
        x.syscalls[1].stack.and_then(|s| s.user).map(|u| u.0),
        Some(6)
    );
    assert!(x.syscalls[1].stack_from_switch && !w.stack_from_switch);
}
