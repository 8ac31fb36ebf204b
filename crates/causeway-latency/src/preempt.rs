//! Preemption and interrupts as pseudo-callees (DARC §3.6): who took the CPU from the
//! function under study, and which IRQ, summed over the in-peak calls of F0.
//!
//! Each in-peak call names at most one preempting thread (the one that held the CPU
//! longest during that call) and one IRQ; their times are summed here per thread or
//! IRQ number, and the one with the most time is reported.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// A thread that preempted the function, or an IRQ that interrupted it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Culprit {
    /// Thread id, or IRQ number.
    pub id: u32,
    /// Thread command name, or IRQ handler name.
    pub name: String,
    /// Time it took, summed over the in-peak calls it was named in. JSON names it
    /// `time_ns` (the `_ns` convention); resume files written before still read.
    #[serde(rename = "time_ns", alias = "ns")]
    pub ns: u64,
}

/// Time taken per thread or per IRQ number.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Culprits {
    by_id: BTreeMap<u32, (String, u64)>,
}

impl Culprits {
    /// Add `ns` taken by `id` (named `name`).
    pub fn add(&mut self, id: u32, name: &str, ns: u64) {
        let e = self
            .by_id
            .entry(id)
            .or_insert_with(|| (name.to_string(), 0));
        e.1 += ns;
        if e.0.is_empty() {
            e.0 = name.to_string();
        }
    }

    /// The one that took the most time (the lowest id on a tie).
    pub fn top(&self) -> Option<Culprit> {
        self.ranked(1).pop()
    }

    /// The `n` that took the most time, most first (lower ids first on ties).
    pub fn ranked(&self, n: usize) -> Vec<Culprit> {
        let mut all: Vec<Culprit> = self
            .by_id
            .iter()
            .map(|(&id, (name, ns))| Culprit {
                id,
                name: name.clone(),
                ns: *ns,
            })
            .collect();
        all.sort_by(|a, b| b.ns.cmp(&a.ns).then(a.id.cmp(&b.id)));
        all.truncate(n);
        all
    }
}

/// One pseudo-callee of a level: preemption, or hard interrupts.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pseudo {
    /// Times it was a largest contributor.
    pub maxcount: u64,
    /// Its time, summed over the in-peak calls.
    pub total_ns: u64,
    /// The thread (or IRQ) that took the most of it.
    pub top: Option<Culprit>,
    /// The few that took the most of it, most first: on a busy machine the competitor
    /// that makes the peak shares the CPU with everything else that runs.
    #[serde(default)]
    pub ranked: Vec<Culprit>,
}

/// Culprits listed per level.
pub const RANKED: usize = 5;

/// How a report names a culprit: "preempted by COMM (tid N)".
pub fn preempted_by(c: &Culprit) -> String {
    format!("preempted by {} (tid {})", c.name, c.id)
}

/// How a report names an IRQ: "interrupt N (NAME)".
pub fn interrupt(c: &Culprit) -> String {
    format!("interrupt {} ({})", c.id, c.name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_thread_with_the_most_time_is_the_culprit() {
        let mut c = Culprits::default();
        assert_eq!(c.top(), None);
        c.add(300, "cc1", 2_000_000);
        c.add(42, "hog", 1_500_000);
        c.add(42, "hog", 1_500_000);
        let top = c.top().unwrap();
        assert_eq!((top.id, top.name.as_str(), top.ns), (42, "hog", 3_000_000));
        assert_eq!(preempted_by(&top), "preempted by hog (tid 42)");
        // A tie goes to the lowest id, so the answer does not depend on map order.
        c.add(7, "other", 3_000_000);
        assert_eq!(c.top().unwrap().id, 7);
        let ids: Vec<u32> = c.ranked(5).iter().map(|c| c.id).collect();
        assert_eq!(ids, [7, 42, 300]);
        assert_eq!(c.ranked(1).len(), 1);
    }

    #[test]
    fn interrupts_are_named_by_number_and_handler() {
        let mut c = Culprits::default();
        c.add(11, "virtio0-input.0", 40_000);
        assert_eq!(
            interrupt(&c.top().unwrap()),
            "interrupt 11 (virtio0-input.0)"
        );
    }
}
