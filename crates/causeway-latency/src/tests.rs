//! Profiles of traces built in code.

use crate::calls::{SyscallCollector, SyscallSpans};
use crate::hist::Resolution;
use crate::profile::{Kind, Options, Subject, analyze};
use crate::select::Selection;
use causeway_format::{DurationNs, Header, Marker, StringId, TaskState, Tgid, Tid};
use causeway_model::Trace;
use causeway_testkit::synth::{Synth, named_tables};

fn trace_and_calls(s: &Synth, names: &[(u32, u32, &str)]) -> (Trace, SyscallSpans) {
    let events = s.events();
    let trace = Trace::from_events(named_tables(names), Header::synthetic(2), &events);
    let mut c = SyscallCollector::new();
    for ev in &events {
        c.push(ev);
    }
    (trace, c.finish())
}

/// Thread 7 (process 7, "op") makes 40 fast futex calls of ~10 us and 5 slow ones of
/// ~500 us; thread 9 (process 9, "other") makes reads of 2 us.
fn two_peaks_syscalls() -> Synth {
    let mut s = Synth::new();
    let mut t = 1_000;
    for i in 0..45u64 {
        let d = if i % 9 == 8 { 500_000 } else { 10_000 + i * 20 };
        s.syscall_enter(t, 0, 7, 202).syscall_exit(t + d, 0, 7, 202);
        s.syscall_enter(t + 1, 1, 9, 0)
            .syscall_exit(t + 2_001, 1, 9, 0);
        t += d + 1_000;
    }
    s
}

#[test]
fn syscalls_by_number_with_their_peaks() {
    let s = two_peaks_syscalls();
    let (trace, calls) = trace_and_calls(&s, &[(7, 7, "op"), (9, 9, "other")]);
    let p = analyze(&trace, &calls, &Options::default()).unwrap();
    let subjects: Vec<Subject> = p.profiles.iter().map(|p| p.subject).collect();
    assert_eq!(
        subjects,
        vec![Subject::Syscall { nr: 0 }, Subject::Syscall { nr: 202 }]
    );
    let futex = &p.profiles[1];
    assert_eq!(futex.hist.total(), 45);
    assert_eq!(futex.peaks.len(), 2, "{:?}", futex.peaks);
    assert_eq!(futex.peaks[0].ops, 40);
    assert_eq!(futex.peaks[1].ops, 5);
    assert!(futex.peaks[1].contains_ns(500_000));
    assert_eq!(p.profiles[0].peaks.len(), 1);
}

#[test]
fn filters_by_syscall_and_by_thread() {
    let s = two_peaks_syscalls();
    let (trace, calls) = trace_and_calls(&s, &[(7, 7, "op"), (9, 9, "other")]);
    let by_nr = Options {
        syscalls: vec![0],
        ..Options::default()
    };
    let p = analyze(&trace, &calls, &by_nr).unwrap();
    assert_eq!(p.profiles.len(), 1);
    assert_eq!(p.profiles[0].subject, Subject::Syscall { nr: 0 });
    for selection in [
        Selection {
            comm: Some("op".into()),
            ..Selection::default()
        },
        Selection {
            tgids: vec![Tgid(7)],
            ..Selection::default()
        },
        Selection {
            tids: vec![Tid(7)],
            ..Selection::default()
        },
    ] {
        let opts = Options {
            selection,
            ..Options::default()
        };
        let p = analyze(&trace, &calls, &opts).unwrap();
        assert_eq!(p.profiles.len(), 1, "{opts:?}");
        assert_eq!(p.profiles[0].subject, Subject::Syscall { nr: 202 });
    }
}

#[test]
fn blocked_and_runnable_waits_from_the_model() {
    let mut s = Synth::new();
    // Thread 7 runs, blocks 100 us, is woken, waits 3 us for a CPU, runs; twice.
    let mut t = 0;
    s.switch(t, 0, 0, TaskState::RUNNABLE, 7);
    for _ in 0..2 {
        s.switch(t + 1_000, 0, 7, TaskState::INTERRUPTIBLE, 0)
            .wake_by(t + 101_000, 1, 9, 7)
            .switch(t + 104_000, 0, 0, TaskState::RUNNABLE, 7);
        t += 104_000;
    }
    let (trace, calls) = trace_and_calls(&s, &[(7, 7, "op"), (9, 9, "other")]);
    let opts = Options {
        kinds: vec![Kind::Blocked, Kind::Runnable],
        ..Options::default()
    };
    let p = analyze(&trace, &calls, &opts).unwrap();
    let blocked = p
        .profiles
        .iter()
        .find(|p| p.subject == Subject::Blocked)
        .unwrap();
    let runnable = p
        .profiles
        .iter()
        .find(|p| p.subject == Subject::Runnable)
        .unwrap();
    assert_eq!(blocked.hist.total(), 2);
    assert_eq!(blocked.hist.min_ns(), Some(100_000));
    assert_eq!(runnable.hist.total(), 2);
    assert_eq!(runnable.hist.max_ns(), Some(3_000));
}

#[test]
fn methods_and_spans_from_markers() {
    let mut s = Synth::new();
    let m = StringId(1);
    let span = StringId(2);
    for i in 0..10u64 {
        let t = i * 100_000;
        s.marker(t, 0, 7, Marker::MethodEnter { method: m })
            .marker(t + 5_000 + i, 0, 7, Marker::MethodExit { method: m })
            .marker(t + 10, 1, 9, Marker::SpanBegin { name: span, id: i })
            .marker(t + 80_010, 1, 9, Marker::SpanEnd { name: span, id: i });
    }
    s.marker(2_000_000, 0, 7, Marker::MethodExit { method: m });
    let (trace, calls) = trace_and_calls(&s, &[(7, 7, "op"), (9, 9, "other")]);
    let opts = Options {
        kinds: vec![Kind::Function],
        ..Options::default()
    };
    let p = analyze(&trace, &calls, &opts).unwrap();
    assert_eq!(p.profiles.len(), 2);
    assert_eq!(p.profiles[0].subject, Subject::Method { name: m });
    assert_eq!(p.profiles[0].hist.total(), 10);
    assert_eq!(p.profiles[1].subject, Subject::Span { name: span });
    assert_eq!(p.profiles[1].hist.min_ns(), Some(80_000));
    assert_eq!(p.unmeasured.unmatched_markers, 1);
}

#[test]
fn time_lapse_profiles_show_when_a_peak_appears() {
    // First second: fast calls only; second second: slow ones too.
    let mut s = Synth::new();
    for i in 0..200u64 {
        let t = i * 10_000_000;
        let d = if i >= 100 && i % 4 == 0 {
            800_000
        } else {
            9_000
        };
        s.syscall_enter(t, 0, 7, 202).syscall_exit(t + d, 0, 7, 202);
    }
    let (trace, calls) = trace_and_calls(&s, &[(7, 7, "op")]);
    let opts = Options {
        interval: Some(DurationNs(1_000_000_000)),
        resolution: Resolution::per_octave(2).unwrap(),
        ..Options::default()
    };
    let p = analyze(&trace, &calls, &opts).unwrap();
    let slices = &p.profiles[0].slices;
    assert_eq!(slices.len(), 2);
    assert_eq!(slices[0].offset_ns, 0);
    assert_eq!(slices[1].offset_ns, 1_000_000_000);
    assert_eq!(slices[0].peaks.len(), 1);
    assert_eq!(slices[1].peaks.len(), 2);
    assert_eq!(p.profiles[0].peaks.len(), 2);
    let zero = Options {
        interval: Some(DurationNs(0)),
        ..Options::default()
    };
    assert!(analyze(&trace, &calls, &zero).is_err());
}
