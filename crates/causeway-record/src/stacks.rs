//! Stacks: deduplication while recording. Their symbolization when a trace is written
//! is `causeway-symbolize`'s, re-exported here; the recorder's stack table and strings
//! are what it reads ([`StackLookup`], [`PathLookup`]).

use crate::strings::Strings;
use causeway_format::{StackId, StringId};
pub use causeway_symbolize::{
    JIT_MODULE, JitSymbols, PathLookup, StackKey, StackLookup, StackSources, Symbols, build_id,
};

/// Stacks numbered in first-seen order.
#[derive(Debug, Default)]
pub struct StackTable {
    /// Strips recorder frames from kernel stacks before they are numbered.
    pub glue: KernelGlue,
    list: Vec<StackKey>,
    /// Hashed once per stack event: Fx rather than SipHash (the keys are addresses).
    ids: rustc_hash::FxHashMap<StackKey, StackId>,
}

impl StackTable {
    /// The id of `k`, adding it if new.
    pub fn intern(&mut self, mut k: StackKey) -> StackId {
        if k.tgid == 0 {
            self.glue.strip(&mut k.frames);
        }
        if let Some(&id) = self.ids.get(&k) {
            return id;
        }
        let id = StackId(self.list.len() as u32);
        self.list.push(k.clone());
        self.ids.insert(k, id);
        id
    }

    /// The stack with this id.
    pub fn get(&self, id: StackId) -> Option<&StackKey> {
        self.list.get(id.0 as usize)
    }

    /// Number of distinct stacks.
    pub fn len(&self) -> usize {
        self.list.len()
    }

    /// No stacks yet.
    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }
}

impl StackLookup for StackTable {
    fn stack(&self, id: StackId) -> Option<&StackKey> {
        self.get(id)
    }
}

impl PathLookup for Strings {
    fn path(&self, id: StringId) -> &str {
        self.get(id)
    }
}

/// Address ranges of the kernel functions that run a BPF program from a tracepoint
/// (`bpf_trace_run*`, `__bpf_trace_*`). Kernel stacks taken inside the recorder start
/// with the program and these; they say nothing about the traced thread.
#[derive(Debug, Default, Clone)]
pub struct KernelGlue {
    ranges: Vec<(u64, u64)>,
}

impl KernelGlue {
    /// Read the ranges from `/proc/kallsyms` (empty if unreadable).
    pub fn load() -> KernelGlue {
        let text = std::fs::read_to_string("/proc/kallsyms").unwrap_or_default();
        Self::parse(&text)
    }

    /// Build from the text of a kallsyms file.
    pub fn parse(text: &str) -> KernelGlue {
        let mut syms: Vec<(u64, bool)> = text
            .lines()
            .filter_map(|l| {
                let mut f = l.split_whitespace();
                let addr = u64::from_str_radix(f.next()?, 16).ok()?;
                let _kind = f.next()?;
                let name = f.next()?;
                let glue = name.starts_with("bpf_trace_run") || name.starts_with("__bpf_trace_");
                Some((addr, glue))
            })
            .filter(|&(a, _)| a != 0)
            .collect();
        syms.sort_unstable_by_key(|s| s.0);
        let ranges = syms
            .windows(2)
            .filter(|w| w[0].1)
            .map(|w| (w[0].0, w[1].0))
            .collect();
        KernelGlue { ranges }
    }

    fn is_glue(&self, addr: u64) -> bool {
        let i = self.ranges.partition_point(|r| r.0 <= addr);
        i > 0 && addr < self.ranges[i - 1].1
    }

    /// Drop the recorder's own frames from the top of a kernel stack: everything up to
    /// the last glue frame among the first few.
    pub fn strip(&self, frames: &mut Vec<u64>) {
        let last = frames.iter().take(6).rposition(|&a| self.is_glue(a));
        if let Some(i) = last {
            frames.drain(..=i);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recorder_frames_are_stripped_from_kernel_stacks() {
        let glue = KernelGlue::parse(
            "ffffffff81000000 T __schedule\n\
             ffffffff81000400 T schedule\n\
             ffffffff81100000 T bpf_trace_run4\n\
             ffffffff81100200 T bpf_trace_run5\n\
             ffffffff81100400 t __bpf_trace_sched_switch\n\
             ffffffff81100500 T other\n",
        );
        let mut f = vec![
            0xffffffffc0001234,
            0xffffffff81100010,
            0xffffffff81000100,
            0xffffffff81000410,
        ];
        glue.strip(&mut f);
        assert_eq!(f, vec![0xffffffff81000100, 0xffffffff81000410]);
        let mut g = vec![
            0xffffffffc0001234,
            0xffffffff81100210,
            0xffffffff81100410,
            0xffffffff81100510,
        ];
        glue.strip(&mut g);
        assert_eq!(g, vec![0xffffffff81100510]);
        let mut h = vec![0xffffffff81000100];
        glue.strip(&mut h);
        assert_eq!(h, vec![0xffffffff81000100]);
    }
}
