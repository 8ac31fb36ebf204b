//! The text forms of predictions.

use super::doc::{CountedDoc, GainsDoc, OutcomeDoc, PredictionDoc};
use std::fmt::Write;

/// The limits every prediction carries, in one line each.
const ASSUMPTIONS: &str = "\
The replay keeps the recorded order of wake-ups: who woke whom, and what each thread
did between its waits. Waits on timers, disks, NICs and brief stoppers keep their
lengths; waits on processes outside the recording end no earlier than they did. A removed
wait takes its call's own CPU with it (the fix that drops the call). It cannot know work the
fix itself adds or removes, nor contention that a faster program would meet where the
recording had none (a lock it never waited for); CPU demand above the machine's CPUs
caps the prediction.
";

fn percent(gain: f64) -> String {
    if gain.is_infinite() {
        "unbounded".into()
    } else {
        format!("{:+.0}%", gain * 100.0)
    }
}

fn rate(per_s: f64) -> String {
    if per_s.is_infinite() {
        "unbounded".into()
    } else if per_s >= 100.0 {
        format!("{per_s:.0}/s")
    } else {
        format!("{per_s:.2}/s")
    }
}

fn counted_line(c: &CountedDoc) -> String {
    let basis = match c.basis {
        "knot" => "the first knot's threads",
        "sink" => "the waiters on the first sink",
        _ => "every recorded thread",
    };
    format!(
        "counted: wake-ups of {} ({basis}, {} thread{}): {} in the middle 80% of the recording, {}",
        c.labels.join(", "),
        c.threads,
        if c.threads == 1 { "" } else { "s" },
        c.cycles,
        rate(c.recorded_per_s),
    )
}

/// `causeway whatif`'s text.
pub(crate) fn prediction(p: &PredictionDoc) -> String {
    let mut out = String::new();
    for c in &p.changes {
        let how = match c.factor {
            None => "removed".to_string(),
            Some(k) => format!("divided by {k}"),
        };
        let what = match c.target {
            "cpu" => format!("{} time on CPU", c.label),
            "waits_on" => format!("every wait on {}", c.label),
            "site" => format!("the waits under {}", c.label),
            _ => format!("{} waits", c.label),
        };
        let _ = writeln!(out, "causeway whatif: {what} {how}");
    }
    let _ = writeln!(out, "{}", counted_line(&p.counted));
    let _ = writeln!(
        out,
        "changed: {} waits, {:.3}s of recorded time taken out{}",
        p.waits_changed,
        p.removed_ns as f64 / 1e9,
        if p.call_cpu_ns > 0 {
            format!(
                ", of it {:.3}s the removed calls' own CPU (from {} samples in them)",
                p.call_cpu_ns as f64 / 1e9,
                p.call_cpu_samples
            )
        } else {
            String::new()
        }
    );
    let w = &p.waits;
    let _ = writeln!(
        out,
        "replayed waits: {} followed their waker, {} kept their length, {} held to their recorded end (woken from outside), {} idle polls folded into the wait after them, {} changed",
        w.followed, w.kept, w.outside, w.idle_polls, w.changed
    );
    let _ = writeln!(
        out,
        "predicted: {} ({} of the recorded rate)",
        rate(p.predicted_per_s),
        percent(p.gain)
    );
    match p.cpu_demand {
        Some(d) if p.cpu_bound => {
            let _ = writeln!(
                out,
                "capped by the CPUs: the replayed work needs {d:.2} CPUs, the machine has {}",
                p.cpus
            );
        }
        Some(d) => {
            let _ = writeln!(
                out,
                "CPU: the replayed work needs {d:.2} of {} CPUs",
                p.cpus
            );
        }
        None => {}
    }
    for c in certainty(p) {
        let _ = writeln!(out, "how sure: {c}");
    }
    out.push('\n');
    out.push_str(ASSUMPTIONS);
    out
}

/// Below this many samples in the removed calls, their CPU is a rough estimate.
const FEW_CALL_SAMPLES: u64 = 50;

/// From this share of the counted threads' time queued behind other programs, the
/// machine's load is part of the figure.
const BUSY_MACHINE: f64 = 0.1;

/// What limits how far a prediction can be trusted, one sentence each.
fn certainty(p: &PredictionDoc) -> Vec<String> {
    let mut out = Vec::new();
    if p.waits.outside > 0 {
        out.push(format!(
            "{} held to {} recorded end{} (woken from outside the recording); where {} in the counted work, the figure is a floor",
            match p.waits.outside {
                1 => "1 wait was".to_string(),
                n => format!("{n} waits were"),
            },
            if p.waits.outside == 1 { "its" } else { "their" },
            if p.waits.outside == 1 { "" } else { "s" },
            if p.waits.outside == 1 { "it falls" } else { "they fall" }
        ));
    }
    if p.call_cpu_ns > 0 && p.call_cpu_samples < FEW_CALL_SAMPLES {
        out.push(format!(
            "the removed calls' CPU rests on {} samples; record longer or with a higher `--sample` rate for a firmer figure",
            p.call_cpu_samples
        ));
    }
    let c = &p.counted;
    if c.cpu_wait_behind_others_share >= BUSY_MACHINE {
        out.push(format!(
            "the counted threads waited for a CPU {:.0}% of their time, {:.0}% while other programs or kernel threads held it; the replay keeps that load as recorded, so the figure holds at the recording's load, and a fix measured at another load differs",
            c.cpu_wait_share * 100.0,
            c.cpu_wait_behind_others_share * 100.0
        ));
    }
    if p.counted.cycles < 1000 {
        out.push(format!(
            "the rate rests on {} counted wake-ups",
            p.counted.cycles
        ));
    }
    out.push(match p.recorder_ns {
        Some(ns) => format!(
            "the recorder's measured work in the recorded threads' runs ({:.3}s) is out of both replays, the fixed program's and the recorded one's; the traps of its uprobes (Go's scheduler) are not measured and stay",
            ns as f64 / 1e9
        ),
        None => "the recorder's own work in the recorded threads (a stack taken at every switch-out) stays in the replay, while the fixed program would run unrecorded: the figure is low by about that share (this trace did not measure it)".to_string(),
    });
    out
}

fn outcome(o: &OutcomeDoc) -> String {
    format!(
        "{}{}",
        percent(o.gain),
        if o.cpu_bound { " (CPU-bound)" } else { "" }
    )
}

/// The section `bottleneck --what-if` adds.
pub(crate) fn gains(out: &mut String, g: &GainsDoc) {
    let _ = writeln!(out, "Predicted gains (what-if replay of the recording):");
    let _ = writeln!(out, "  {}", counted_line(&g.counted));
    if g.edges.is_empty() {
        let _ = writeln!(out, "  no wait edge of a knot or sink to change\n");
        return;
    }
    let width = g.edges.iter().map(|e| e.label.len()).max().unwrap_or(0);
    let _ = writeln!(
        out,
        "  {:<width$}  {:>18}  {:>18}",
        "edge", "waits removed", "waits halved"
    );
    for e in &g.edges {
        let _ = writeln!(
            out,
            "  {:<width$}  {:>18}  {:>18}",
            e.label,
            outcome(&e.removed),
            outcome(&e.halved)
        );
    }
    out.push('\n');
    for l in ASSUMPTIONS.lines() {
        let _ = writeln!(out, "  {l}");
    }
    out.push('\n');
}

#[cfg(test)]
mod tests {
    use super::super::doc::{ChangeDoc, CountedDoc, EdgeGainDoc, GainsDoc, OutcomeDoc, RulesDoc};
    use super::*;

    fn counted() -> CountedDoc {
        CountedDoc {
            basis: "knot",
            vertices: vec![0],
            labels: vec!["consumer (12)".into()],
            threads: 1,
            cycles: 1000,
            window_start_ns: 0,
            window_end_ns: 2_000_000_000,
            recorded_per_s: 500.0,
            cpu_wait_share: 0.02,
            cpu_wait_behind_others_share: 0.01,
        }
    }

    #[test]
    fn a_prediction_says_the_change_what_was_counted_and_the_gain() {
        let p = PredictionDoc {
            changes: vec![ChangeDoc {
                target: "edge",
                from: Some(0),
                to: Some(1),
                vertex: None,
                function: None,
                label: "consumer (12) -> disk vda".into(),
                factor: Some(2.0),
                removes: false,
            }],
            counted: counted(),
            recorded_per_s: 500.0,
            predicted_per_s: 800.0,
            gain: 0.6,
            waits_changed: 900,
            waits: RulesDoc {
                followed: 10,
                kept: 5,
                outside: 0,
                changed: 900,
                idle_polls: 2,
            },
            removed_ns: 450_000_000,
            call_cpu_ns: 50_000_000,
            call_cpu_samples: 12,
            recorder_ns: None,
            cpu_demand: Some(2.5),
            cpus: 2,
            cpu_bound: true,
        };
        let t = prediction(&p);
        assert!(
            t.contains("0.450s of recorded time taken out, of it 0.050s the removed calls' own CPU (from 12 samples in them)"),
            "{t}"
        );
        assert!(
            t.contains("how sure: the removed calls' CPU rests on 12 samples"),
            "{t}"
        );
        assert!(!t.contains("held to its recorded end"), "{t}");
        assert!(
            t.starts_with("causeway whatif: consumer (12) -> disk vda waits divided by 2\n"),
            "{t}"
        );
        assert!(t.contains("wake-ups of consumer (12) (the first knot's threads, 1 thread): 1000"));
        assert!(
            t.contains("predicted: 800/s (+60% of the recorded rate)"),
            "{t}"
        );
        assert!(
            t.contains("capped by the CPUs: the replayed work needs 2.50 CPUs"),
            "{t}"
        );
        assert!(t.contains("2 idle polls folded"), "{t}");
        assert!(!t.contains("waited for a CPU"), "{t}");
        assert!(t.contains("(this trace did not measure it)"), "{t}");
        // Queued behind other programs a fifth of the time: said, with both shares.
        let mut busy = p.clone();
        busy.recorder_ns = Some(120_000_000);
        busy.counted.cpu_wait_share = 0.3;
        busy.counted.cpu_wait_behind_others_share = 0.2;
        let t = prediction(&busy);
        assert!(
            t.contains("how sure: the counted threads waited for a CPU 30% of their time, 20% while other programs"),
            "{t}"
        );
        assert!(
            t.contains("how sure: the recorder's measured work in the recorded threads' runs (0.120s) is out of both replays"),
            "{t}"
        );
    }

    #[test]
    fn the_gains_table_has_a_row_per_edge() {
        let o = |gain, cpu_bound| OutcomeDoc {
            predicted_per_s: 500.0 * (1.0 + gain),
            gain,
            cpu_bound,
        };
        let g = GainsDoc {
            counted: counted(),
            edges: vec![EdgeGainDoc {
                edge: 0,
                from: 0,
                to: 1,
                label: "consumer (12) -> disk vda".into(),
                removed: o(1.5, true),
                halved: o(0.43, false),
            }],
        };
        let mut out = String::new();
        gains(&mut out, &g);
        let row = out
            .lines()
            .find(|l| l.contains("consumer (12) -> disk vda"))
            .expect("a row");
        assert!(
            row.contains("+150% (CPU-bound)") && row.contains("+43%"),
            "{row}"
        );
    }
}
