//! The facts trackers, read through the one ingestion path.

use causeway_format::{
    EventKindTag, Header, Marker, ProcessInfo, Scope, StringId, Tgid, Tid, Timestamp,
};
use causeway_model::Trace;
use causeway_testkit::synth::{Synth, named_tables};

/// Process 10 (thread 10) forks process 20, which execs; 10 writes a flag 20 reads;
/// a span marker; events lost on CPU 1.
fn trace(scope: Scope) -> Trace {
    let mut tables = named_tables(&[(10, 10, "server"), (20, 20, "worker")]);
    tables.strings.push("/usr/bin/server --port 5432".into()); // 3
    tables.strings.push("/usr/bin/worker".into()); // 4
    tables.strings.push("server: log flusher".into()); // 5
    tables.strings.push("request".into()); // 6
    let row = |tgid, since, cmdline| ProcessInfo {
        tgid: Tgid(tgid),
        parent: None,
        since: Timestamp(since),
        exe: StringId(4),
        cmdline: StringId(cmdline),
    };
    tables.processes = vec![row(10, 0, 3), row(20, 0, 3), row(20, 500, 5)];
    let mut s = Synth::new();
    s.switch(0, 0, 0, causeway_format::TaskState::RUNNABLE, 10)
        .fork(100, 0, (10, 10), (20, 20))
        .exec(300, 1, 20, 2, 4)
        .marker(400, 0, 10, Marker::FlagWrite { addr: 0x1000 })
        .marker(450, 1, 20, Marker::FlagRead { addr: 0x1000 })
        .marker(
            460,
            0,
            10,
            Marker::SpanBegin {
                name: StringId(6),
                id: 1,
            },
        )
        .marker(
            470,
            0,
            10,
            Marker::SpanEnd {
                name: StringId(6),
                id: 1,
            },
        )
        .lost(480, 1, 7)
        .lost(490, 1, 5);
    let mut header = Header::synthetic(2);
    header.scope = scope;
    header.target_pids = vec![10];
    Trace::from_events(tables, header, &s.events())
}

#[test]
fn flags_markers_counts_and_losses_are_kept() {
    let t = trace(Scope::System);
    let f = t.facts();
    let w: Vec<(u64, u32)> = f
        .flag_writes(0x1000)
        .iter()
        .map(|a| (a.ts.0, a.tid.0))
        .collect();
    assert_eq!(w, vec![(400, 10)]);
    let r: Vec<(u64, u32)> = f
        .flag_reads(0x1000)
        .iter()
        .map(|a| (a.ts.0, a.tid.0))
        .collect();
    assert_eq!(r, vec![(450, 20)]);
    assert!(f.flag_reads(0x2000).is_empty());
    let spans: Vec<u64> = f.markers().iter().map(|m| m.ts.0).collect();
    assert_eq!(spans, vec![460, 470]);
    assert_eq!(f.event_counts().get(&EventKindTag::Marker), Some(&4));
    assert_eq!(f.event_counts().get(&EventKindTag::Lost), Some(&2));
    assert_eq!(f.event_counts().get(&EventKindTag::Wakeup), None);
    let total: u64 = f.event_counts().values().sum();
    assert_eq!(total, 9);
    assert_eq!(f.lost_by_cpu().get(&1), Some(&12));
    // A system-wide trace follows every process.
    assert_eq!(f.recorded(), None);
    assert_eq!(f.exec_time(Tgid(20)), None);
}

#[test]
fn titles_take_the_latest_command_line_of_each_process() {
    let t = trace(Scope::System);
    assert_eq!(
        t.facts().title(Tgid(10)),
        Some("/usr/bin/server --port 5432")
    );
    assert_eq!(t.facts().title(Tgid(20)), Some("server: log flusher"));
    assert_eq!(t.facts().title(Tgid(30)), None);
}

#[test]
fn a_per_process_trace_knows_what_it_followed_and_when_it_execd() {
    let t = trace(Scope::Processes);
    let f = t.facts();
    let recorded: Vec<u32> = f
        .recorded()
        .expect("per-process")
        .iter()
        .map(|g| g.0)
        .collect();
    assert_eq!(recorded, vec![10, 20]);
    assert_eq!(f.exec_time(Tgid(20)), Some(Timestamp(300)));
    assert_eq!(f.exec_time(Tgid(10)), None);
    assert!(t.model().thread(Tid(20)).is_some());
}
