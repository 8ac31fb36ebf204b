//! What to fold: the kind of flame graph and the options.

use causeway_format::Tgid;

/// Which flame graph.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FlameKind {
    /// Where threads ran: sample stacks, one unit of weight per sample.
    OnCpu,
    /// Where threads blocked: switch-out stacks weighted by blocked nanoseconds.
    OffCpu,
    /// Why they stayed blocked: each blocked stack with the stacks of the wakers that
    /// ended the wait stacked on top, hop after hop; weighted by blocked nanoseconds.
    WakeChain,
}

impl FlameKind {
    /// Short name (`on-cpu`, `off-cpu`, `wake-chain`).
    pub fn name(self) -> &'static str {
        match self {
            FlameKind::OnCpu => "on-cpu",
            FlameKind::OffCpu => "off-cpu",
            FlameKind::WakeChain => "wake-chain",
        }
    }

    /// What one unit of weight is (`samples` or `ns`).
    pub fn unit(self) -> &'static str {
        match self {
            FlameKind::OnCpu => "samples",
            FlameKind::OffCpu | FlameKind::WakeChain => "ns",
        }
    }
}

/// What to fold.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Options {
    /// Only threads of these processes; `None`: every thread.
    pub processes: Option<Vec<Tgid>>,
    /// Wake-up chains: how many wakers to stack on a blocked stack at most.
    pub hops: usize,
    /// Blocked segments without a switch-out stack count under one `[no stack]` frame,
    /// so the off-CPU total is the whole blocked time; false leaves them out.
    pub keep_unstacked: bool,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            processes: None,
            // Three hops cover a request going through a queue and a worker pool
            // without letting long chains of unrelated wakers take over the graph.
            hops: 3,
            keep_unstacked: true,
        }
    }
}

/// Frame standing for a blocked segment without a recorded stack.
pub const NO_STACK: &str = "[no stack]";

/// True if the thread's process is among those asked for.
pub(crate) fn selected(opts: &Options, tgid: Option<Tgid>) -> bool {
    match &opts.processes {
        None => true,
        Some(ps) => tgid.is_some_and(|t| ps.contains(&t)),
    }
}
