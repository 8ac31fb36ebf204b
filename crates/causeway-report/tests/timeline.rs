//! The timeline behind the exports, on a synthetic trace: state slices per segment,
//! a wake-up flow from the waker to the wakee's next slice, syscalls with their call
//! site, method calls nested, spans paired by id; and the Perfetto and Chrome JSON
//! writers keep every slice properly nested and every flow paired.

use causeway_format::{Header, Marker, StringId, TaskState};
use causeway_model::Trace;
use causeway_report::timeline::{Category, Lane, Timeline};
use causeway_report::{chrome, perfetto};
use causeway_stacks::EventExtras;
use causeway_testkit::synth::{Synth, named_tables};

fn trace() -> (Trace, causeway_stacks::Extras) {
    let mut tables = named_tables(&[(1, 1, "main"), (2, 1, "helper")]);
    tables.strings.push("outer".into()); // 3
    tables.strings.push("inner".into()); // 4
    tables.strings.push("request".into()); // 5
    tables
        .strings
        .push("/kubepods.slice/cri-containerd-3f2a9c1b0d4e5f60718293a4b5c6d7e8f90123456789abcdef0123456789abcd.scope".into()); // 6
    tables.cgroups.push(causeway_format::CgroupRow::Member {
        tgid: causeway_format::Tgid(1),
        since: causeway_format::Timestamp(0),
        path: StringId(6),
    });
    let m = |id: u32| StringId(id);
    let mut s = Synth::new();
    s.switch(0, 0, 0, TaskState::RUNNABLE, 1)
        .switch(0, 1, 0, TaskState::RUNNABLE, 2)
        .marker(5, 0, 1, Marker::SpanBegin { name: m(5), id: 9 })
        .marker(10, 0, 1, Marker::MethodEnter { method: m(3) })
        .marker(20, 0, 1, Marker::MethodEnter { method: m(4) })
        .syscall_enter(30, 0, 1, 0)
        .switch(40, 0, 1, TaskState::INTERRUPTIBLE, 0)
        .wake_by(100, 1, 2, 1)
        .switch(110, 0, 0, TaskState::RUNNABLE, 1)
        .syscall_exit(120, 0, 1, 0)
        .marker(130, 0, 1, Marker::MethodExit { method: m(4) })
        .marker(140, 0, 1, Marker::MethodExit { method: m(3) })
        .marker(150, 0, 1, Marker::SpanEnd { name: m(5), id: 9 })
        .switch(200, 0, 1, TaskState::RUNNABLE, 0)
        .switch(200, 1, 2, TaskState::RUNNABLE, 0);
    let events = s.events();
    let x = EventExtras::from_events(&events);
    (Trace::from_events(tables, Header::synthetic(2), &events), x)
}

#[test]
fn timeline_holds_states_flows_syscalls_and_nested_calls() {
    let (t, x) = trace();
    let tl = Timeline::build(&t, Some(&x), None);
    let main = t.model().threads().position(|th| th.tid.0 == 1).unwrap() as u32;
    let states: Vec<&str> = tl
        .slices_on(Timeline::lane_uuid(main, Lane::State))
        .map(|s| s.name.as_str())
        .collect();
    let segs = &t.model().thread_by_index(main).unwrap().segments;
    assert_eq!(states.len(), segs.len());
    assert!(
        states.contains(&"blocked (S)") && states.contains(&"running"),
        "{states:?}"
    );
    // One wake-up by a thread: one flow, out of helper's lane, into main's next slice.
    assert_eq!(tl.flows, 1);
    let wake = tl
        .instants
        .iter()
        .find(|i| i.category == Category::Wakeup)
        .unwrap();
    assert_eq!(wake.ts_ns, 100);
    let into = tl.slices.iter().find(|s| s.flows_in == vec![1]).unwrap();
    assert_eq!((into.start_ns, into.name.as_str()), (100, "runnable"));
    let sys: Vec<_> = tl
        .slices_on(Timeline::lane_uuid(main, Lane::Syscalls))
        .collect();
    assert_eq!(sys.len(), 1);
    assert_eq!(
        (sys[0].name.as_str(), sys[0].start_ns, sys[0].end_ns),
        ("read", 30, 120)
    );
    let mut calls: Vec<(&str, u64, u64)> = tl
        .slices_on(Timeline::lane_uuid(main, Lane::Calls))
        .map(|s| (s.name.as_str(), s.start_ns, s.end_ns))
        .collect();
    calls.sort_by_key(|c| c.1);
    assert_eq!(
        calls,
        vec![("request", 5, 150), ("outer", 10, 140), ("inner", 20, 130)]
    );
    let cpu_slices = tl
        .slices
        .iter()
        .filter(|s| s.category == Category::Cpu)
        .count();
    let running = t
        .model()
        .threads()
        .flat_map(|t| &t.segments)
        .filter(|s| s.state.is_running())
        .count();
    assert_eq!(cpu_slices, running);
}

#[test]
fn chrome_json_pairs_every_async_slice_and_flow() {
    let (t, x) = trace();
    let tl = Timeline::build(&t, Some(&x), None);
    let mut out = Vec::new();
    chrome::write(&tl, &mut out).unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
    let evs = v["traceEvents"].as_array().unwrap();
    let n = |ph: &str| evs.iter().filter(|e| e["ph"] == ph).count();
    assert_eq!(n("b"), n("e"));
    assert_eq!(n("b"), 4, "one syscall, two methods, one span");
    assert_eq!((n("s"), n("f")), (1, 1));
    let mut pf = Vec::new();
    perfetto::write(&tl, &mut pf).unwrap();
    assert!(pf.len() > 100);
}

/// A process in a container is named with it in the exports' process tracks.
#[test]
fn a_process_track_names_its_container() {
    let (t, x) = trace();
    let tl = Timeline::build(&t, Some(&x), None);
    assert!(
        tl.tracks
            .iter()
            .any(|k| k.name == "main [container 3f2a9c1b0d4e]"),
        "{:?}",
        tl.tracks.iter().map(|k| &k.name).collect::<Vec<_>>()
    );
}
