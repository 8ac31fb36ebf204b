//! Two synthetic hosts, a client and a server exchanging TCP requests and replies:
//! joined, each one's waits are woken by the other's thread, and a clock that runs
//! ahead is found from the traffic alone.

use causeway_format::{
    Cpu, Endpoint, Event, EventKind, Flow, Header, SockFamily, SockProto, SoftirqVec, TaskState,
    Tgid, ThreadInfo, Tid, Timestamp, TraceReader, TraceWriter, Waker,
};
use causeway_join::{HostTrace, join};
use causeway_model::SegmentState;
use std::io::Cursor;

const ROUNDS: u64 = 300;
const PERIOD: u64 = 200_000;
const ONE_WAY: u64 = 30_000;
const START: u64 = 1_000_000_000;

struct Host {
    name: &'static str,
    tid: u32,
    local: Endpoint,
    remote: Endpoint,
    /// Added to every timestamp of this host's file: a clock running ahead.
    skew: i64,
}

/// Round k at time T: the client sends a 100-byte request at T+10 µs and blocks; the
/// server wakes at T+10+ONE_WAY, works 50 µs, replies with 200 bytes and blocks; the
/// client wakes ONE_WAY after the reply.
fn events(h: &Host, client: bool) -> Vec<Event> {
    let t = Tid(h.tid);
    let mut out = Vec::new();
    let mut at = |ts: u64, kind: EventKind| {
        out.push(Event {
            ts: Timestamp(ts.saturating_add_signed(h.skew)),
            cpu: Cpu(0),
            kind,
        })
    };
    let switch = |prev: Tid, state, next: Tid| EventKind::SchedSwitch {
        prev_tid: prev,
        prev_state: state,
        next_tid: next,
    };
    let (send_off, send_bytes, recv_bytes, seq_out, seq_in) = if client {
        (10_000, 100u32, 200u32, 1_000u32, 5_000u32)
    } else {
        (10_000 + ONE_WAY + 50_000, 200, 100, 5_000, 1_000)
    };
    if client {
        at(START - 1, switch(Tid(0), TaskState::RUNNABLE, t));
    }
    // Data arriving for `t`: the network's wake-up, the socket's mark, the switch in.
    let arrival = |at: &mut dyn FnMut(u64, EventKind), ts: u64, n: u32| {
        at(
            ts,
            EventKind::Wakeup {
                wakee: t,
                target_cpu: Cpu(0),
                waker: Waker::Softirq {
                    vec: SoftirqVec::NET_RX,
                },
            },
        );
        at(
            ts,
            EventKind::SockReady {
                wakee: t,
                host: Tid(0),
                flow: causeway_format::FlowId(0),
                seq: Some(seq_in + recv_bytes * n),
            },
        );
        at(ts + 1_000, switch(Tid(0), TaskState::RUNNABLE, t));
    };
    for k in 0..ROUNDS {
        let base = START + k * PERIOD;
        let arrive = if client {
            base + 10_000 + ONE_WAY + 50_000 + ONE_WAY
        } else {
            base + 10_000 + ONE_WAY
        };
        let n = k as u32 + 1;
        if !client {
            arrival(&mut at, arrive, n);
        }
        at(
            base + send_off,
            EventKind::SockSend {
                tid: t,
                flow: causeway_format::FlowId(0),
                bytes: send_bytes,
                seq: Some(seq_out + send_bytes * n),
            },
        );
        at(
            base + send_off + 1_000,
            switch(t, TaskState::INTERRUPTIBLE, Tid(0)),
        );
        if client {
            arrival(&mut at, arrive, n);
        }
    }
    out.sort_by_key(|e| e.ts);
    out
}

fn trace(h: &Host, client: bool) -> Vec<u8> {
    let mut header = Header::synthetic(1);
    header.host.hostname = h.name.to_string();
    header.clock_to_realtime_ns = 1_700_000_000_000_000_000;
    let mut w = TraceWriter::new(Vec::new(), &header).unwrap();
    let comm = w.intern(if client { "client" } else { "server" });
    w.add_thread(ThreadInfo {
        tid: Tid(h.tid),
        tgid: Tgid(h.tid),
        since: Timestamp(0),
        comm,
    });
    let flow = w.intern_flow(Flow {
        family: SockFamily::INET,
        proto: SockProto::TCP,
        local: h.local,
        remote: h.remote,
    });
    assert_eq!(flow.0, 0);
    for ev in events(h, client) {
        w.push(&ev).unwrap();
    }
    w.finish().unwrap()
}

fn hosts(server_skew: i64) -> (Vec<u8>, Vec<u8>) {
    let (c, s) = (
        Endpoint::v4([10, 0, 0, 1], 40_000),
        Endpoint::v4([10, 0, 0, 2], 80),
    );
    let client = Host {
        name: "a",
        tid: 100,
        local: c,
        remote: s,
        skew: 0,
    };
    let server = Host {
        name: "b",
        tid: 200,
        local: s,
        remote: c,
        skew: server_skew,
    };
    (trace(&client, true), trace(&server, false))
}

fn joined(server_skew: i64) -> causeway_join::Joined {
    let (a, b) = hosts(server_skew);
    let mut inputs = vec![
        HostTrace {
            name: "a".into(),
            reader: TraceReader::new(Cursor::new(a)).unwrap(),
        },
        HostTrace {
            name: "b".into(),
            reader: TraceReader::new(Cursor::new(b)).unwrap(),
        },
    ];
    join(&mut inputs, |_| {}).unwrap()
}

/// The tids that woke `tid`'s blocked segments.
fn wakers(j: &causeway_join::Joined, tid: Tid) -> Vec<Waker> {
    let th = j
        .trace
        .model()
        .thread(tid)
        .expect("thread in the joined model");
    th.segments
        .iter()
        .filter(|s| matches!(s.state, SegmentState::Blocked { .. }))
        .filter_map(|s| s.wake().map(|w| w.waker))
        .collect()
}

#[test]
fn each_side_is_woken_by_the_other_hosts_thread() {
    let j = joined(0);
    let server = Tid(200 | 1 << 22);
    let client = Tid(100);
    let cw = wakers(&j, client);
    assert!(cw.len() >= ROUNDS as usize - 1, "{}", cw.len());
    assert!(
        cw.iter().all(|w| *w == Waker::Thread { tid: server }),
        "{cw:?}"
    );
    let sw = wakers(&j, server);
    assert!(sw.len() >= ROUNDS as usize - 1, "{}", sw.len());
    assert!(
        sw.iter().all(|w| *w == Waker::Thread { tid: client }),
        "{sw:?}"
    );
    let names = &j.trace.tables();
    assert_eq!(names.comm_at(server, Timestamp(START)), Some("server@b"));
    assert_eq!(j.hosts[1].flows_joined, 1);
    assert_eq!(j.hosts[1].flows_alone, 0);
    assert_eq!(j.hosts[0].crossings, ROUNDS);
    assert_eq!(j.hosts[1].short_waits_unlinked, 0);
}

#[test]
fn a_clock_running_ahead_or_behind_is_measured_and_removed() {
    let plain = joined(0);
    for skew in [37_000_000i64, -120_000_000] {
        let j = joined(skew);
        let o = j.hosts[1].clock;
        assert!((o.offset_ns - skew).abs() <= 200_000, "{skew}: {o:?}");
        assert!(o.uncertainty_ns.is_some_and(|u| u <= 2 * ONE_WAY), "{o:?}");
        // The same model as without the skew (up to a shift of the whole clock).
        let (a, b) = (wakers(&plain, Tid(100)), wakers(&j, Tid(100)));
        assert_eq!(a, b);
        let server = Tid(200 | 1 << 22);
        let blocked =
            |j: &causeway_join::Joined| j.trace.model().thread(server).unwrap().totals.blocked().0;
        assert_eq!(blocked(&plain), blocked(&j));
    }
}
