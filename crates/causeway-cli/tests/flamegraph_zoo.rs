//! `causeway flamegraph` on a real recording of the blocking-write workload (issue
//! 15): folded output parses back with the same totals, and equals the model's
//! blocked time of the recorded processes' threads (what the views show by default); the SVGs (parsed as XML) hold the frames the workload is known to
//! block and wake in.
//!
//! Needs root and the built zoo; skipped without root unless `CAUSEWAY_REQUIRE_ROOT=1`
//! (then it fails, as in CI).

mod common;

use causeway_stacks::Folded;
use common::causeway;
use common::zoo::{Zoo, analyse};
use quick_xml::Reader;
use quick_xml::events::Event;
use std::path::Path;

/// `causeway flamegraph ARGS TRACE`, standard output.
fn flamegraph(trace: &Path, args: &[&str]) -> String {
    String::from_utf8(analyse(trace, &[&["flamegraph"], args].concat()).stdout).unwrap()
}

/// Frame names and their weights from the `<title>` of every frame of an inferno SVG
/// (`name (1,234 ns, 5.6%)`).
fn svg_frames(path: &Path) -> Vec<(String, u64)> {
    let text = std::fs::read_to_string(path).unwrap();
    let mut r = Reader::from_str(&text);
    let mut out = Vec::new();
    let mut in_title = false;
    loop {
        match r.read_event().expect("the SVG is well-formed XML") {
            Event::Start(e) if e.name().as_ref() == b"title" => in_title = true,
            Event::End(e) if e.name().as_ref() == b"title" => in_title = false,
            Event::Text(t) if in_title => {
                let s = t.decode().unwrap().to_string();
                if let Some((name, rest)) = s.rsplit_once(" (") {
                    let n: String = rest
                        .split(' ')
                        .next()
                        .unwrap()
                        .chars()
                        .filter(char::is_ascii_digit)
                        .collect();
                    out.push((name.to_string(), n.parse().unwrap_or(0)));
                }
            }
            Event::Eof => break,
            _ => {}
        }
    }
    out
}

#[test]
fn flame_graphs_of_blocking_write() {
    let Some(zoo) = Zoo::start() else { return };
    // Every waker stack, so the wake-chain totals are exact (the default sampling of
    // short waits' waker stacks is checked at the end).
    let trace = zoo
        .record("blocking-write")
        .out("bw.cwt")
        .seconds("1")
        .flags(["--waker-stack-sampling", "off"])
        .run();
    // By default the views show the recorded processes' threads.
    let mut rd = causeway_format::TraceReader::open(&trace).unwrap();
    let tr = causeway_model::Trace::read(&mut rd, |_| {}).unwrap();
    let blocked = blocked_ns(&tr);

    // Folded off-CPU: parses back, same total, and that total is all blocked time.
    let text = flamegraph(&trace, &["--kind", "off-cpu", "--folded"]);
    let folded = Folded::parse(&text).expect("folded output parses");
    assert_eq!(folded.to_text(), text, "round trip");
    assert_eq!(folded.total(), blocked);
    assert!(
        folded.weight_with_frame("flush_log") > 0,
        "consumer blocks in flush_log"
    );

    // Wake-up chains: same total; the consumer's fsync waits are ended by a disk
    // completion, its queue waits by the producer.
    let text = flamegraph(&trace, &["--kind", "wake-chain", "--folded"]);
    let chains = Folded::parse(&text).unwrap();
    assert_eq!(chains.total(), blocked);
    // The first hop names the waker; a second hop follows when the producer had itself
    // waited before (on a full queue), so the key need not end with it.
    let woken_by_producer: u64 = chains
        .iter()
        .filter(|(k, _)| {
            k.starts_with("consumer;")
                && k.split(";--;")
                    .nth(1)
                    .is_some_and(|hop| hop.ends_with("producer"))
        })
        .map(|(_, w)| w)
        .sum();
    // Whether the consumer ever waited on an empty queue depends on the run (the
    // producer is faster; a clean CI run had none): the chains must show such waits
    // when the model has them.
    let producer = tr
        .model()
        .threads()
        .find(|t| t.comm == "producer")
        .map(|t| t.tid);
    let in_model = tr
        .model()
        .threads()
        .filter(|t| t.comm == "consumer")
        .flat_map(|t| &t.segments)
        .filter(|s| {
            matches!(s.wake().map(|w| w.waker), Some(causeway_format::Waker::Thread { tid })
                if Some(tid) == producer)
        })
        .count();
    assert!(
        in_model == 0 || woken_by_producer > 0,
        "consumer waits ended by the producer: {in_model} in the model, none in the chains"
    );
    sampled_wake_chains_estimate_the_blocked_time(&zoo);

    // SVGs: the root carries the total; the known frames are drawn (inferno leaves
    // out frames narrower than a tenth of a pixel, so only heavy ones are asked for).
    for (kind, want) in [
        (
            "off-cpu",
            &["consumer", "consumer_main", "flush_log", "__GI_fsync"][..],
        ),
        (
            "wake-chain",
            &["consumer", "flush_log", "--", "producer"][..],
        ),
    ] {
        let svg = zoo.dir().join(format!("{kind}.svg"));
        flamegraph(&trace, &["--kind", kind, "--svg", svg.to_str().unwrap()]);
        let frames = svg_frames(&svg);
        let all = frames.iter().find(|(n, _)| n == "all").expect("root frame");
        assert_eq!(all.1, blocked, "{kind}: root = blocked time");
        for w in want {
            assert!(
                frames.iter().any(|(n, _)| n == w),
                "{kind}: frame {w} drawn"
            );
        }
    }

    // JSON: integer nanoseconds.
    let json: serde_json::Value = serde_json::from_str(&flamegraph(&trace, &["--json"])).unwrap();
    assert_eq!(json["weight_ns"].as_u64(), Some(blocked));
}

#[test]
fn on_cpu_without_samples_is_bad_input() {
    let Some(zoo) = Zoo::start() else { return };
    // Samples are on by default; `--sample 0` records none.
    let trace = zoo
        .record("blocking-write")
        .out("bw.cwt")
        .flags(["--sample", "0"])
        .seconds("0.3")
        .run();
    let o = causeway()
        .args(["flamegraph", "--kind", "on-cpu"])
        .arg(&trace)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("sample"));
}

/// Blocked time of the recorded processes' threads, what the views show by default.
fn blocked_ns(tr: &causeway_model::Trace) -> u64 {
    let recorded = tr.facts().recorded().expect("a per-process trace").clone();
    tr.model()
        .threads()
        .filter(|t| t.tgid.is_some_and(|g| recorded.contains(&g)))
        .flat_map(|t| &t.segments)
        .filter(|s| s.state.is_blocked())
        .map(|s| s.duration().0)
        .sum()
}

/// With the default sampling of short waits' waker stacks, a wake-chain graph draws a
/// short wait from its sampled peers, each weighted by the rate: the total estimates
/// the blocked time instead of equalling it.
fn sampled_wake_chains_estimate_the_blocked_time(zoo: &Zoo) {
    let trace = zoo
        .record("blocking-write")
        .out("bw-sampled.cwt")
        .seconds("1")
        .run();
    let mut rd = causeway_format::TraceReader::open(&trace).unwrap();
    let tr = causeway_model::Trace::read(&mut rd, |_| {}).unwrap();
    assert!(tr.header().waker_stack_sampling.is_some());
    let blocked = blocked_ns(&tr);
    let text = flamegraph(&trace, &["--kind", "wake-chain", "--folded"]);
    let total = Folded::parse(&text).unwrap().total();
    let error = (total as f64 - blocked as f64).abs() / blocked as f64;
    assert!(
        error < 0.15,
        "sampled wake chains weigh {total} ns against {blocked} ns blocked"
    );
}
