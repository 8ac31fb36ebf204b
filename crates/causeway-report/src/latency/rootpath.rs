//! The view of `causeway rootpath`: F0's profile with the chosen peak, the path, why
//! it ended, and each level's contributors with their maxcounts.

use super::doc::{LatencyDoc, ProfileInput, profile_doc};
use super::fmt_ns;
use super::text;
use crate::error::ReportError;
use crate::view::{View, write_json};
use causeway_latency::preempt::{interrupt, preempted_by};
use causeway_latency::{
    Decision, Histogram, Level, Peak, PeakOptions, Pseudo, RootPath, Stop, find_peaks,
};
use std::fmt::Write as _;
use std::io::Write;

/// A root-cause path, ready to render.
#[derive(Clone, Debug)]
pub struct RootPathView {
    path: RootPath,
    profile: LatencyDoc,
}

fn stop_sentence(p: &RootPath) -> String {
    let last = p.path.last().map_or("?", String::as_str);
    match p.stop {
        Stop::OwnCause => {
            format!("{last} is its own cause: its own time, not a callee's, makes the peak")
        }
        Stop::Leaf if p.from_trace => {
            format!("{last} calls no recorded function: the path ends in it")
        }
        Stop::Leaf => format!("{last} calls nothing that can be probed: the path ends in it"),
        Stop::MaxDepth => {
            format!("stopped at --max-depth in {last} (resume deeper with a larger --max-depth)")
        }
        Stop::NoSamples => format!(
            "no call of {} fell in the peak while measuring {last}",
            p.f0
        ),
        Stop::Interrupted => format!("interrupted while measuring {last}"),
        Stop::Preempted => format!(
            "{last} was {} for most of the peak's time: the thread could not run",
            p.culprit
                .as_ref()
                .map_or("preempted".to_string(), preempted_by)
        ),
        Stop::Irq => format!(
            "{last} spent most of the peak's time in {}",
            p.culprit
                .as_ref()
                .map_or("hard interrupts".to_string(), interrupt)
        ),
    }
}

/// The end of the path when it is no function: "preempted by hog (tid 42)".
fn cause(p: &RootPath) -> Option<String> {
    match p.stop {
        Stop::Preempted => Some(
            p.culprit
                .as_ref()
                .map_or("preempted".to_string(), preempted_by),
        ),
        Stop::Irq => Some(
            p.culprit
                .as_ref()
                .map_or("interrupts".to_string(), interrupt),
        ),
        _ => None,
    }
}

/// ", preempted 12 (hog, tid 42)" for a level's line; empty when never measured.
fn pseudo_text(label: &str, p: Option<&Pseudo>, chosen: bool, preemption: bool) -> String {
    let Some(p) = p else {
        return String::new();
    };
    let mark = if chosen { " (root cause)" } else { "" };
    let who = match &p.top {
        Some(c) if preemption => format!(" (most by {}, tid {})", c.name, c.id),
        Some(c) => format!(" (most IRQ {}, {})", c.id, c.name),
        None => String::new(),
    };
    format!(", {label} {}{who}{mark}", p.maxcount)
}

impl RootPathView {
    /// The view of a result.
    pub fn new(path: &RootPath) -> RootPathView {
        let label = format!("function {}", path.f0);
        let input = ProfileInput {
            label: &label,
            kind: "function",
            hist: &path.f0_hist,
            peaks: &path.peaks,
            slices: &[],
        };
        RootPathView {
            path: path.clone(),
            profile: LatencyDoc {
                bins_per_octave: 1,
                interval_ns: None,
                profiles: vec![profile_doc(&input)],
                unmeasured: None,
            },
        }
    }

    fn text(&self) -> String {
        let p = &self.path;
        let mut s = text::render(&self.profile);
        let _ = writeln!(
            s,
            "\nroot-cause path of peak {} ({} to {}): {}",
            p.peak.number,
            fmt_ns(p.peak.from_ns),
            fmt_ns(p.peak.to_ns),
            p.path
                .iter()
                .cloned()
                .chain(cause(p))
                .collect::<Vec<_>>()
                .join(" -> ")
        );
        let _ = writeln!(s, "  {}", stop_sentence(p));
        levels_text(&p.f0, &p.levels, &mut s);
        s
    }
}

/// One line per level: the function, its in-peak calls, and each contributor's maxcount.
fn levels_text(f0: &str, levels: &[Level], s: &mut String) {
    for (depth, l) in levels.iter().enumerate() {
        let _ = write!(
            s,
            "  level {depth}: {} ({} in-peak calls of {}): itself {}",
            l.function, l.samples, f0, l.own_maxcount
        );
        let chosen: Vec<usize> = match &l.decision {
            Decision::Callees { causes } => causes.clone(),
            _ => Vec::new(),
        };
        for (i, c) in l.callees.iter().enumerate() {
            let mark = if chosen.first() == Some(&i) {
                " (root cause)"
            } else if chosen.contains(&i) {
                " (also a cause)"
            } else {
                ""
            };
            let via = if c.indirect { " (via pointer)" } else { "" };
            let _ = write!(s, ", {}{via} {}{mark}", c.function, c.maxcount);
        }
        s.push_str(&pseudo_text(
            "preempted",
            l.preemption.as_ref(),
            l.decision == Decision::Preempted,
            true,
        ));
        s.push_str(&pseudo_text(
            "interrupts",
            l.interrupts.as_ref(),
            l.decision == Decision::Interrupts,
            false,
        ));
        if l.indirect_sites > 0 {
            let _ = write!(s, "; {} indirect call sites read", l.indirect_sites);
        }
        if l.unresolved_calls > 0 {
            let _ = write!(s, "; {} call sites not probed", l.unresolved_calls);
        }
        s.push('\n');
    }
}

/// What `causeway rootpath` is doing, for its status while it runs (SIGUSR1).
#[derive(Clone, Debug)]
pub struct RootPathStatus<'a> {
    /// F0's symbol.
    pub f0: &'a str,
    /// F0's profile so far (while profiling) or the one the peak was chosen on.
    pub hist: &'a Histogram,
    /// The peak studied, once chosen.
    pub peak: Option<&'a Peak>,
    /// F0 and the functions chosen so far.
    pub path: &'a [String],
    /// The levels decided so far, then the one being measured (its counts so far).
    pub levels: &'a [Level],
    /// The phase, as a sentence ("measuring level 1 (slow_path): 80 of 200 calls").
    pub state: &'a str,
}

/// The status text: F0's histogram with its peaks, the state, the path so far and the
/// function tree with the maxcounts counted so far.
pub fn status_text(st: &RootPathStatus<'_>) -> String {
    let label = format!("function {}", st.f0);
    let peaks = find_peaks(st.hist, &PeakOptions::default());
    let input = ProfileInput {
        label: &label,
        kind: "function",
        hist: st.hist,
        peaks: &peaks,
        slices: &[],
    };
    let doc = LatencyDoc {
        bins_per_octave: 1,
        interval_ns: None,
        profiles: vec![profile_doc(&input)],
        unmeasured: None,
    };
    let mut s = format!("causeway rootpath status: {}\n", st.state);
    s.push_str(&text::render(&doc));
    if let Some(p) = st.peak {
        let _ = writeln!(
            s,
            "\npeak {} ({} to {}), path so far: {}",
            p.number,
            fmt_ns(p.from_ns),
            fmt_ns(p.to_ns),
            st.path.join(" -> ")
        );
    }
    levels_text(st.f0, st.levels, &mut s);
    s
}

impl View for RootPathView {
    fn name(&self) -> &'static str {
        "rootpath"
    }

    /// Found: the path went below F0 or ended in a cause (its own time, preemption, an
    /// interrupt).
    fn found(&self) -> bool {
        self.path.path.len() > 1
            || matches!(self.path.stop, Stop::OwnCause | Stop::Preempted | Stop::Irq)
    }

    fn write_text(&self, out: &mut dyn Write) -> Result<(), ReportError> {
        out.write_all(self.text().as_bytes())?;
        Ok(())
    }

    fn write_json(&self, out: &mut dyn Write) -> Result<(), ReportError> {
        let doc = serde_json::json!({
            "f0": self.path.f0,
            "profile": self.profile.profiles.first(),
            "peak": self.path.peak,
            "path": self.path.path,
            "stop": self.path.stop,
            "stop_sentence": stop_sentence(&self.path),
            "cause": cause(&self.path),
            "culprit": self.path.culprit,
            "levels": self.path.levels,
            "from_trace": self.path.from_trace,
        });
        write_json(self.name(), &doc, out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use causeway_latency::{Culprit, Histogram, Level, PeakOptions, Resolution, Tally, find_peaks};

    fn culprit() -> Culprit {
        Culprit {
            id: 42,
            name: "hog".into(),
            ns: 90_000_000,
        }
    }

    /// spin_op with a fast peak and a preempted one, ended in preemption by `hog`.
    fn preempted() -> RootPath {
        let mut hist = Histogram::new(Resolution::LOG2);
        hist.add_bin(Resolution::LOG2.bin_of(300_000), 900);
        hist.add_bin(Resolution::LOG2.bin_of(80_000_000), 100);
        let peaks = find_peaks(&hist, &PeakOptions::default());
        let mut t = Tally::new(0);
        t.own = 11;
        t.preempted = 49;
        t.samples = 60;
        t.preemptors.add(42, "hog", 90_000_000);
        t.preemptors.add(7, "python", 10_000_000);
        RootPath {
            f0: "spin_op".into(),
            f0_hist: hist,
            peak: *peaks.last().unwrap(),
            peaks,
            levels: vec![Level {
                function: "spin_op".into(),
                samples: t.samples,
                own_maxcount: t.own,
                callees: Vec::new(),
                unresolved_calls: 0,
                indirect_sites: 0,
                preemption: Some(t.preemption()),
                interrupts: Some(t.interrupt_time()),
                decision: t.decide(0.9),
            }],
            path: vec!["spin_op".into()],
            stop: Stop::Preempted,
            culprit: Some(culprit()),
            from_trace: false,
        }
    }

    #[test]
    fn a_path_ended_by_preemption_names_the_thread() {
        let p = preempted();
        assert_eq!(p.peaks.len(), 2);
        let v = RootPathView::new(&p);
        let text = v.text();
        assert!(
            text.contains("spin_op -> preempted by hog (tid 42)"),
            "{text}"
        );
        assert!(
            text.contains("preempted 49 (most by hog, tid 42) (root cause)"),
            "{text}"
        );
        assert!(v.found());
        let mut out = Vec::new();
        v.write_json(&mut out).unwrap();
        let j: serde_json::Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(j["cause"], "preempted by hog (tid 42)", "{j}");
        assert_eq!(j["culprit"]["id"], 42);
        assert_eq!(j["stop"], "preempted");
        assert_eq!(j["levels"][0]["decision"]["decision"], "preempted");
        assert_eq!(j["levels"][0]["preemption"]["ranked"][1]["name"], "python");
    }

    #[test]
    fn a_path_ended_by_an_interrupt_names_the_irq() {
        let mut p = preempted();
        p.stop = Stop::Irq;
        p.culprit = Some(Culprit {
            id: 11,
            name: "virtio0-input.0".into(),
            ns: 5_000_000,
        });
        let text = RootPathView::new(&p).text();
        assert!(
            text.contains("spin_op -> interrupt 11 (virtio0-input.0)"),
            "{text}"
        );
        assert!(text.contains("spent most of the peak's time in interrupt 11"));
    }

    #[test]
    fn callees_found_through_a_pointer_are_marked() {
        let mut p = preempted();
        let l = &mut p.levels[0];
        l.callees = vec![
            causeway_latency::Candidate {
                function: "log_op".into(),
                binary: "/bin/prog".into(),
                maxcount: 1,
                indirect: false,
            },
            causeway_latency::Candidate {
                function: "slow_handler".into(),
                binary: "/bin/prog".into(),
                maxcount: 58,
                indirect: true,
            },
        ];
        l.indirect_sites = 1;
        l.decision = Decision::Callees { causes: vec![1] };
        let text = RootPathView::new(&p).text();
        assert!(
            text.contains(", log_op 1, slow_handler (via pointer) 58 (root cause)"),
            "{text}"
        );
        assert!(text.contains("; 1 indirect call sites read"), "{text}");
        let json = serde_json::to_value(&p.levels[0]).unwrap();
        assert_eq!(json["callees"][1]["indirect"], true);
        // Absent when false or zero, as in results saved before indirect calls.
        assert!(json["callees"][0].get("indirect").is_none());
        p.levels[0].indirect_sites = 0;
        let json = serde_json::to_value(&p.levels[0]).unwrap();
        assert!(json.get("indirect_sites").is_none());
    }

    #[test]
    fn a_leaf_of_a_trace_is_a_function_that_calls_no_recorded_one() {
        let mut p = preempted();
        p.stop = Stop::Leaf;
        p.culprit = None;
        p.from_trace = true;
        let text = RootPathView::new(&p).text();
        assert!(
            text.contains("spin_op calls no recorded function: the path ends in it"),
            "{text}"
        );
        p.from_trace = false;
        let text = RootPathView::new(&p).text();
        assert!(text.contains("calls nothing that can be probed"), "{text}");
    }

    #[test]
    fn the_status_shows_the_state_the_peak_and_the_levels_so_far() {
        let p = preempted();
        let names = vec!["spin_op".to_string()];
        let text = status_text(&RootPathStatus {
            f0: "spin_op",
            hist: &p.f0_hist,
            peak: Some(&p.peak),
            path: &names,
            levels: &p.levels,
            state: "measuring level 0 (spin_op): 60 of 200 in-peak calls",
        });
        assert!(
            text.starts_with(
                "causeway rootpath status: measuring level 0 (spin_op): 60 of 200 in-peak calls\n"
            ),
            "{text}"
        );
        assert!(text.contains("function spin_op: 1000 calls"), "{text}");
        assert!(text.contains("peak 2 ("), "{text}");
        assert!(text.contains("path so far: spin_op"), "{text}");
        assert!(
            text.contains("level 0: spin_op (60 in-peak calls of spin_op): itself 11"),
            "{text}"
        );
        // Before the peak is chosen there is no path line.
        let early = status_text(&RootPathStatus {
            peak: None,
            levels: &[],
            state: "profiling spin_op: 500 of 2000 calls",
            f0: "spin_op",
            hist: &p.f0_hist,
            path: &names,
        });
        assert!(!early.contains("path so far"), "{early}");
    }
}
