//! A JVM's own threads (`jvm`): known by the thread loop they run, their wake-ups are
//! the JVM's pauses, a pseudo-vertex that is a brief stop when its waits are, and the
//! answer when they are long.

use super::pauses::{edges, vertices};
use super::{no_merge, run, string, tables};
use crate::findings::{ManagedRuntime, VertexId, VertexKind};
use crate::knots::{Limits, find};
use crate::pauses;
use causeway_format::{
    DurationNs, Frame, FrameId, FrameSpace, Stack, StackKind, StringId, Tables, TaskState, Tgid,
};
use causeway_testkit::synth::Synth;

const S: u64 = 1_000_000_000;
const MS: u64 = 1_000_000;

/// A stack of process `tgid` from `(module, symbol)` pairs, innermost first; its id.
fn stack(t: &mut Tables, tgid: u32, frames: &[(&str, &str)]) -> u32 {
    let mut ids = Vec::new();
    for (i, (module, symbol)) in frames.iter().enumerate() {
        let (m, s) = (string(t, module), string(t, symbol));
        t.frames.push(Frame::new(
            FrameSpace::User { tgid: Tgid(tgid) },
            0x1000 + 0x100 * i as u64,
            StringId(m),
            StringId(s),
            4,
        ));
        ids.push(FrameId(t.frames.len() as u32 - 1));
    }
    t.stacks.push(Stack {
        frames: ids,
        truncated: false,
    });
    t.stacks.len() as u32 - 1
}

const LIBJVM: &str = "/usr/lib/jvm/java-17/lib/server/libjvm.so";
const LIBC: &str = "/usr/lib/x86_64-linux-gnu/libc.so.6";

/// The VM Thread between safepoints: its loop right inside HotSpot's start routine.
fn vm_thread_stack(t: &mut Tables) -> u32 {
    stack(
        t,
        10,
        &[
            (LIBC, "__futex_abstimed_wait_common"),
            (LIBJVM, "Monitor::wait_without_safepoint_check(long)"),
            (LIBJVM, "VMThread::wait_for_operation()"),
            (LIBJVM, "VMThread::loop()"),
            (LIBJVM, "VMThread::run()"),
            (LIBJVM, "Thread::call_run()"),
            (LIBJVM, "thread_native_entry(Thread*)"),
            (LIBC, "start_thread"),
        ],
    )
}

/// A Java thread that asked the VM Thread for a collection: the same class, deep down.
fn java_thread_stack(t: &mut Tables) -> u32 {
    stack(
        t,
        10,
        &[
            (LIBC, "__futex_abstimed_wait_common"),
            (LIBJVM, "Monitor::wait(long)"),
            (LIBJVM, "VMThread::execute(VM_Operation*)"),
            (
                LIBJVM,
                "G1CollectedHeap::attempt_allocation_slow(unsigned long)",
            ),
            (LIBJVM, "OptoRuntime::new_array_C(Klass*, int, JavaThread*)"),
            ("", ""),
            (
                LIBJVM,
                "JavaCalls::call_helper(JavaValue*, methodHandle const&, JavaCallArguments*, JavaThread*)",
            ),
            (LIBJVM, "thread_entry(JavaThread*, JavaThread*)"),
            (LIBJVM, "JavaThread::thread_main_inner()"),
            (LIBJVM, "JavaThread::run()"),
            (LIBJVM, "Thread::call_run()"),
            (LIBJVM, "thread_native_entry(Thread*)"),
            (LIBC, "start_thread"),
        ],
    )
}

/// JVM process 10: the VM Thread (11) stops worker 12 (a Java thread) and GC thread 13
/// (known only by its name) twenty times for 1 ms; worker 12 otherwise runs. `stop`: how
/// long each stop lasts.
fn safepoints(stop: u64) -> (Synth, Tables) {
    let mut t = tables(&[
        (11, 10, "VM Thread"),
        (12, 10, "worker"),
        (13, 10, "GC Thread#0"),
    ]);
    let vm = vm_thread_stack(&mut t);
    let java = java_thread_stack(&mut t);
    let mut s = Synth::new();
    s.switch(0, 0, 0, TaskState::RUNNABLE, 12)
        .switch(0, 1, 0, TaskState::RUNNABLE, 11)
        .switch(1, 1, 11, TaskState::INTERRUPTIBLE, 13)
        .stack(1, 1, 11, StackKind::SwitchOut, Some(vm), None)
        .switch(2, 1, 13, TaskState::INTERRUPTIBLE, 0);
    for k in 0..20u64 {
        let at = 10 * MS + k * 20 * MS;
        // The worker stops; the VM Thread and the GC thread do the work and release it.
        s.switch(at, 0, 12, TaskState::INTERRUPTIBLE, 0)
            .stack(at, 0, 12, StackKind::SwitchOut, Some(java), None)
            .wake_by(at + 10, 1, 0, 11)
            .switch(at + 20, 1, 0, TaskState::RUNNABLE, 11)
            .wake_by(at + 30, 1, 11, 13)
            .switch(at + 40, 1, 11, TaskState::INTERRUPTIBLE, 13)
            .stack(at + 40, 1, 11, StackKind::SwitchOut, Some(vm), None)
            .wake_by(at + stop - 20, 1, 13, 11)
            .switch(at + stop - 10, 1, 13, TaskState::INTERRUPTIBLE, 11)
            .wake_by(at + stop, 1, 11, 12)
            .switch(at + stop + 5, 0, 0, TaskState::RUNNABLE, 12)
            .switch(at + stop + 10, 1, 11, TaskState::INTERRUPTIBLE, 0)
            .stack(at + stop + 10, 1, 11, StackKind::SwitchOut, Some(vm), None);
    }
    s.switch(420 * MS, 0, 12, TaskState::RUNNABLE, 0);
    (s, t)
}

#[test]
fn the_jvms_threads_are_its_pauses_and_a_java_thread_stays_a_thread() {
    let (s, t) = safepoints(MS);
    let r = run(&s, &t, 2, &no_merge());
    // No vertex for the VM Thread (its loop) nor the GC thread (its name).
    for comm in ["VM Thread", "GC Thread#0"] {
        assert!(
            !r.vertices
                .iter()
                .any(|v| v.threads.iter().any(|th| th.comm == comm)),
            "{comm} is a vertex"
        );
    }
    // The worker calls VMThread::execute deep in its stack and stays a thread.
    let worker = super::v(&r, 12);
    let pause = r
        .vertices
        .iter()
        .find(|v| matches!(v.kind, VertexKind::RuntimePauses { .. }))
        .unwrap_or_else(|| panic!("no pause vertex: {:?}", r.vertices));
    let VertexKind::RuntimePauses {
        runtime,
        tgid,
        pauses,
        longest,
        total,
    } = pause.kind
    else {
        unreachable!()
    };
    assert_eq!((runtime, tgid), (ManagedRuntime::Jvm, Tgid(10)));
    assert_eq!(pauses, 20);
    assert_eq!(longest, DurationNs(MS));
    assert_eq!(total, DurationNs(20 * MS));
    let edge = r
        .edges
        .iter()
        .find(|e| e.from == worker && e.to == pause.id)
        .expect("worker -> pauses");
    assert_eq!(edge.direct_waits, 20);
}

/// Limits of a 2 s recording.
fn limits() -> Limits {
    Limits {
        min_edge_ns: 20 * MS,
        threshold_ns: 400 * MS,
        leak_fraction: 0.05,
    }
}

#[test]
fn brief_pauses_are_set_aside_even_with_one_waiter() {
    // sync ⇄ disk; sync also waits 40 times 0.5 ms for the JVM's pauses: a single
    // waiter, which would make no brief stopper of a thread.
    let vs = vertices(&[
        (VertexKind::Thread, 1, S, S / 2),
        (VertexKind::Disk { device: None }, 0, 0, 0),
        (
            VertexKind::RuntimePauses {
                runtime: ManagedRuntime::Jvm,
                tgid: Tgid(10),
                pauses: 40,
                longest: DurationNs(MS),
                total: DurationNs(20 * MS),
            },
            0,
            0,
            0,
        ),
    ]);
    let es = edges(&[
        (0, 1, 17 * S, 30_000, S),
        (1, 0, 1_300 * MS, 0, 0),
        (0, 2, 20 * MS, 40, 20 * MS),
    ]);
    let stoppers = pauses::find(&vs, &es);
    assert_eq!(stoppers.len(), 1);
    assert_eq!(stoppers[0].vertex, 2);
    let t = find(&vs, &es, &limits(), DurationNs(2 * S));
    assert_eq!(t.knots.len(), 1);
    assert_eq!(t.knots[0].vertices, vec![VertexId(0), VertexId(1)]);
}

#[test]
fn long_pauses_are_the_answer() {
    // Two workers that only ever wait for the collector: 40 pauses of 30 ms.
    let vs = vertices(&[
        (VertexKind::SimilarThreads, 2, 2 * 1_200 * MS, 2 * 800 * MS),
        (
            VertexKind::RuntimePauses {
                runtime: ManagedRuntime::Jvm,
                tgid: Tgid(10),
                pauses: 40,
                longest: DurationNs(30 * MS),
                total: DurationNs(1_200 * MS),
            },
            0,
            0,
            0,
        ),
    ]);
    let es = edges(&[(0, 1, 2_400 * MS, 80, 2_400 * MS)]);
    assert!(pauses::find(&vs, &es).is_empty());
    let t = find(&vs, &es, &limits(), DurationNs(2 * S));
    assert!(t.knots.is_empty());
    assert_eq!(t.sinks.len(), 1);
    assert_eq!(t.sinks[0].vertex, VertexId(1));
}
