//! Predictions on synthetic timelines whose answer is known by arithmetic.

use causeway_bottleneck::{Findings, Options, VertexId, VertexKind, WaitMap, analyze_with_waits};
use causeway_format::{
    EventKind, Frame, FrameId, FrameSpace, Header, Stack, StackKind, StringId, Tables, TaskState,
    Tgid,
};
use causeway_model::Trace;
use causeway_testkit::synth::{self, Synth};
use causeway_whatif::{Change, Factor, Predictor, Target};

fn tables() -> Tables {
    let mut t = Tables::default();
    t.strings.push(String::new());
    t.strings.push("virtio0-requests".into());
    t
}

fn trace(s: &Synth, ncpu: u32) -> Trace {
    Trace::from_events(tables(), Header::synthetic(ncpu), &s.events())
}

fn analyse(t: &Trace) -> (Findings, WaitMap) {
    let opts = Options {
        merge: false,
        ..Options::default()
    };
    analyze_with_waits(t, &opts).expect("analysis runs")
}

fn vertex_of(f: &Findings, tid: u32) -> VertexId {
    f.vertices
        .iter()
        .find(|v| v.threads.iter().any(|t| t.tid.0 == tid))
        .expect("vertex")
        .id
}

fn disk(f: &Findings) -> VertexId {
    f.vertices
        .iter()
        .find(|v| matches!(v.kind, VertexKind::Disk { .. }))
        .expect("disk")
        .id
}

/// wPerf's Figure 1 for 200 rounds of 1000 ns: the consumer waits 600 ns of every
/// round for the disk and works 400 (1 ns of it runnable).
fn figure1() -> Synth {
    let mut s = synth::blocking_write(1, 200);
    s.switch(200_100, 0, 1, TaskState::RUNNABLE, 0);
    s
}

fn close(got: f64, want: f64, tol: f64) {
    assert!((got - want).abs() <= tol, "got {got}, want {want} ± {tol}");
}

#[test]
fn the_consumer_is_counted_and_nothing_changed_predicts_its_recorded_rate() {
    let t = trace(&figure1(), 2);
    let (f, w) = analyse(&t);
    let p = Predictor::new(&t, &f, &w).unwrap();
    let c = p.counted();
    assert_eq!(c.basis, "knot");
    assert_eq!(c.vertices, vec![vertex_of(&f, 1)]);
    // One wake-up per 1000 ns round: 1 M per second.
    close(c.recorded_per_s, 1e6, 1e3);
    let none = p.predict(&[]).unwrap();
    close(none.gain, 0.0, 1e-9);
}

#[test]
fn removing_the_disk_wait_leaves_the_consumers_cpu_as_the_round() {
    let t = trace(&figure1(), 2);
    let (f, w) = analyse(&t);
    let p = Predictor::new(&t, &f, &w).unwrap();
    let edge = Target::edge(vertex_of(&f, 1), disk(&f));
    let removed = p
        .predict(&[Change {
            target: edge.clone(),
            factor: Factor::REMOVE,
        }])
        .unwrap();
    // A round is the consumer's 400 ns: 2.5 times the rate.
    close(removed.gain, 1.5, 0.01);
    assert!(!removed.cpu_bound, "{removed:?}");
    let halved = p
        .predict(&[Change {
            target: edge,
            factor: Factor::HALVE,
        }])
        .unwrap();
    // 300 + 400 ns a round.
    close(halved.gain, 1000.0 / 700.0 - 1.0, 0.01);
    assert!(halved.waits_changed >= 150, "{halved:?}");
}

#[test]
fn the_producers_waits_follow_the_consumer_it_waits_for() {
    // Halving the producer's CPU changes nothing: it waits for the consumer anyway.
    let t = trace(&figure1(), 2);
    let (f, w) = analyse(&t);
    let p = Predictor::new(&t, &f, &w).unwrap();
    let producer = Change {
        target: Target::Cpu {
            vertex: vertex_of(&f, 2).0,
        },
        factor: Factor::HALVE,
    };
    close(p.predict(&[producer]).unwrap().gain, 0.0, 0.01);
}

#[test]
fn one_cpu_caps_what_removing_the_wait_can_give() {
    // On one CPU the consumer (399 ns) and the producer (99 ns) share it: a round
    // cannot take less than their 498 ns of CPU.
    let t = trace(&figure1(), 1);
    let (f, w) = analyse(&t);
    let p = Predictor::new(&t, &f, &w).unwrap();
    let removed = p
        .predict(&[Change {
            target: Target::edge(vertex_of(&f, 1), disk(&f)),
            factor: Factor::REMOVE,
        }])
        .unwrap();
    assert!(removed.cpu_bound, "{removed:?}");
    close(removed.gain, 1000.0 / 498.0 - 1.0, 0.05);
}

#[test]
fn factors_below_one_and_unknown_vertices_are_refused() {
    assert!("0.5".parse::<Factor>().is_err());
    assert!("x".parse::<Factor>().is_err());
    assert!("inf".parse::<Factor>().unwrap().removes());
    let t = trace(&figure1(), 2);
    let (f, w) = analyse(&t);
    let p = Predictor::new(&t, &f, &w).unwrap();
    let bad = Change {
        target: Target::Cpu { vertex: 999 },
        factor: Factor::HALVE,
    };
    assert!(p.predict(&[bad]).is_err());
}

#[test]
fn every_wait_on_the_disk_is_the_consumers_edge_here() {
    let t = trace(&figure1(), 2);
    let (f, w) = analyse(&t);
    let p = Predictor::new(&t, &f, &w).unwrap();
    let gain = |target| {
        p.predict(&[Change {
            target,
            factor: Factor::HALVE,
        }])
        .unwrap()
        .gain
    };
    let edge = gain(Target::edge(vertex_of(&f, 1), disk(&f)));
    let on_disk = gain(Target::WaitsOn { to: disk(&f).0 });
    close(on_disk, edge, 1e-9);
    assert!(edge > 0.3, "{edge}");
}

/// Figure 1 with the consumer's disk waits blocked under `flush_log`.
fn figure1_with_stacks() -> Trace {
    let mut s = figure1();
    let switch_outs: Vec<u64> = s
        .events()
        .iter()
        .filter_map(|e| match e.kind {
            EventKind::SchedSwitch {
                prev_tid,
                prev_state,
                ..
            } if prev_tid.0 == 1 && prev_state != TaskState::RUNNABLE => Some(e.ts.0),
            _ => None,
        })
        .collect();
    for ts in &switch_outs {
        s.stack(*ts, 0, 1, StackKind::SwitchOut, Some(0), None);
    }
    let mut t = tables();
    t.strings.push("flush_log".into());
    t.frames.push(Frame::new(
        FrameSpace::User { tgid: Tgid(1) },
        0x1000,
        StringId(0),
        StringId(2),
        0,
    ));
    t.stacks.push(Stack {
        frames: vec![FrameId(0)],
        truncated: false,
    });
    Trace::from_events(t, Header::synthetic(2), &s.events())
}

#[test]
fn a_call_sites_waits_are_the_waits_blocked_under_it() {
    let t = figure1_with_stacks();
    let (f, w) = analyse(&t);
    let p = Predictor::new(&t, &f, &w).unwrap();
    let halve = |target| {
        p.predict(&[Change {
            target,
            factor: Factor::HALVE,
        }])
    };
    let site = halve(Target::Site {
        function: "flush_log".into(),
    })
    .unwrap();
    let edge = halve(Target::edge(vertex_of(&f, 1), disk(&f))).unwrap();
    close(site.gain, edge.gain, 1e-9);
    assert_eq!(site.waits_changed, edge.waits_changed);
    // A function no wait blocked under is refused, not predicted as no gain.
    let none = halve(Target::Site {
        function: "flush_lo".into(),
    });
    assert!(none.is_err(), "{none:?}");
}
