//! Who performed a wake-up: interrupt context tracking and its callchain fallback.
//!
//! Two sources, in this order of trust:
//!
//! 1. **Tracked nesting.** `irq:irq_handler_entry/exit` and `irq:softirq_entry/exit`
//!    maintain a per-CPU stack of active hard IRQ handlers and softirq vectors. A wake-up
//!    while a handler is active is `Waker::Irq{irq, name}` with the exact number and name;
//!    while a softirq is active (and no handler), `Waker::Softirq{vec}`. A
//!    `sched_switch` or a lost-events record on a CPU clears its stack (neither can
//!    happen inside an interrupt on a non-RT kernel, so leftovers are stale).
//! 2. **Callchain inference** (used when tracking shows no hard IRQ): the kernel
//!    callchain of the wake-up, innermost frame first, is scanned for the first frame
//!    that marks an interrupt context:
//!    - IRQ dispatch (`__handle_irq_event_percpu`, `handle_irq_event[_percpu]`,
//!      `handle_{edge,level,fasteoi,simple}_irq`): a hard IRQ whose handler is the frame
//!      just inside the dispatcher (e.g. `vring_interrupt`); reported as
//!      `Waker::Irq{irq: 0, name: <handler symbol>}` since the number is not in the stack.
//!    - Interrupt entry (`common_interrupt`, `asm_common_interrupt`, `do_IRQ`,
//!      `[asm_|__]sysvec_<vector>`, `smp_<vector>_interrupt`, `exc_nmi`): a hard IRQ
//!      without device dispatch, e.g. the local timer (`hrtimer_wakeup` of `nanosleep`)
//!      or an IPI; `Waker::Irq{irq: 0, name: "<vector>"}` (`apic_timer_interrupt`,
//!      `call_function_single`, ...). Note that timer and IPI vectors never produce
//!      `irq_handler_entry`, so this also refines tracked results.
//!    - A softirq action (`blk_done_softirq` = BLOCK, `net_rx_action` = NET_RX,
//!      `net_tx_action` = NET_TX, `run_timer_softirq` = TIMER, `hrtimer_run_softirq` =
//!      HRTIMER, `rcu_core_si` = RCU, `tasklet_action` = TASKLET, `tasklet_hi_action` =
//!      HI, `run_rebalance_domains`/`sched_balance_softirq` = SCHED, `irq_poll_softirq`
//!      = IRQ_POLL): `Waker::Softirq{vec}`.
//!    - Generic softirq processing (`handle_softirqs`, `__do_softirq`, `do_softirq`,
//!      `run_ksoftirqd`, `invoke_softirq`, `[__]irq_exit_rcu`, `irq_exit`) without a
//!      known action inside it: `Waker::Softirq{vec: UNKNOWN_SOFTIRQ}` (vector 255,
//!      whose name is `"?"`).
//!
//!    Compiler suffixes (`.isra.0`, `.constprop.0`, `.cold`) are ignored. The innermost
//!    mark wins, so a hard IRQ that interrupted a softirq is reported as the IRQ.
//!    Threaded IRQ handlers (`irq_thread`) are ordinary threads and stay
//!    `Waker::Thread`.
//!
//! With neither source the waker is `Waker::Thread{tid}` of the thread current on the
//! CPU (which is the waker in process context).

use causeway_format::{SoftirqVec, StringId};

/// The softirq vector reported when a callchain shows softirq processing but not
/// which vector (its [`SoftirqVec::name`] is `"?"`).
pub const UNKNOWN_SOFTIRQ: SoftirqVec = SoftirqVec::UNKNOWN;

/// Deepest interrupt nesting tracked per CPU; deeper entries (only from damaged input)
/// are dropped.
const MAX_NEST: usize = 16;

/// What a kernel frame says about the context it runs in.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum FrameMark {
    /// Nothing.
    #[default]
    None,
    /// Calls the IRQ action handler: the frame inside it names the handler.
    IrqDispatch,
    /// Hard interrupt entry or system vector; the name is precomputed.
    IrqEntry,
    /// Generic softirq processing (vector unknown).
    Softirq,
    /// A softirq action of a known vector.
    SoftirqAction(SoftirqVec),
    /// `sched_ttwu_pending`: a wake-up queued by another CPU is being completed here
    /// (the `sched_wakeup` event then shows the IPI, not the waker).
    TtwuPending,
}

/// Classify a kernel symbol; for [`FrameMark::IrqEntry`] also return the interrupt
/// name to report.
pub(crate) fn classify_symbol(symbol: &str) -> (FrameMark, Option<String>) {
    let base = symbol.split('.').next().unwrap_or(symbol);
    let mark = match base {
        "__handle_irq_event_percpu"
        | "handle_irq_event_percpu"
        | "handle_irq_event"
        | "handle_edge_irq"
        | "handle_level_irq"
        | "handle_fasteoi_irq"
        | "handle_simple_irq" => FrameMark::IrqDispatch,
        "handle_softirqs" | "__do_softirq" | "do_softirq" | "run_ksoftirqd" | "invoke_softirq"
        | "__irq_exit_rcu" | "irq_exit_rcu" | "irq_exit" => FrameMark::Softirq,
        "blk_done_softirq" => FrameMark::SoftirqAction(SoftirqVec::BLOCK),
        "net_rx_action" => FrameMark::SoftirqAction(SoftirqVec::NET_RX),
        "net_tx_action" => FrameMark::SoftirqAction(SoftirqVec::NET_TX),
        "run_timer_softirq" => FrameMark::SoftirqAction(SoftirqVec::TIMER),
        "hrtimer_run_softirq" => FrameMark::SoftirqAction(SoftirqVec::HRTIMER),
        "rcu_core_si" => FrameMark::SoftirqAction(SoftirqVec::RCU),
        "tasklet_action" => FrameMark::SoftirqAction(SoftirqVec::TASKLET),
        "tasklet_hi_action" => FrameMark::SoftirqAction(SoftirqVec::HI),
        "run_rebalance_domains" | "sched_balance_softirq" => {
            FrameMark::SoftirqAction(SoftirqVec::SCHED)
        }
        "irq_poll_softirq" => FrameMark::SoftirqAction(SoftirqVec::IRQ_POLL),
        "sched_ttwu_pending" => FrameMark::TtwuPending,
        _ => return classify_entry(base),
    };
    (mark, None)
}

/// Interrupt entry points and system vectors.
fn classify_entry(base: &str) -> (FrameMark, Option<String>) {
    let entry = |name: &str| (FrameMark::IrqEntry, Some(name.to_string()));
    match base {
        "common_interrupt"
        | "__common_interrupt"
        | "asm_common_interrupt"
        | "do_IRQ"
        | "gic_handle_irq"
        | "el1_interrupt"
        | "el0_interrupt" => return entry("irq"),
        "exc_nmi" | "asm_exc_nmi" | "default_do_nmi" => return entry("nmi"),
        _ => {}
    }
    let stripped = base
        .strip_prefix("asm_")
        .unwrap_or(base)
        .trim_start_matches('_');
    if let Some(vector) = stripped.strip_prefix("sysvec_")
        && !vector.is_empty()
    {
        return entry(vector);
    }
    if let Some(vector) = stripped.strip_prefix("smp_")
        && vector.ends_with("_interrupt")
    {
        return entry(vector);
    }
    (FrameMark::None, None)
}

/// The interrupt context a callchain shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Inferred {
    /// Hard IRQ (number unknown) with this name.
    Irq(StringId),
    /// Softirq of this vector ([`UNKNOWN_SOFTIRQ`] if not evident).
    Softirq(SoftirqVec),
}

/// Scan kernel frames (innermost first) for the innermost interrupt-context mark.
/// `facts` gives `(mark, symbol, precomputed irq name)` of a frame.
pub(crate) fn infer<T: Copy>(
    frames: &[T],
    facts: impl Fn(T) -> (FrameMark, StringId, StringId),
) -> Option<Inferred> {
    for (i, &f) in frames.iter().enumerate() {
        let (mark, symbol, irq_name) = facts(f);
        match mark {
            FrameMark::None | FrameMark::TtwuPending => {}
            FrameMark::IrqDispatch => {
                let handler = i
                    .checked_sub(1)
                    .and_then(|j| frames.get(j))
                    .map(|&inner| facts(inner))
                    .filter(|(m, s, _)| *m == FrameMark::None && s.0 != 0)
                    .map(|(_, s, _)| s);
                return Some(Inferred::Irq(handler.unwrap_or(symbol)));
            }
            FrameMark::IrqEntry => return Some(Inferred::Irq(irq_name)),
            FrameMark::Softirq => return Some(Inferred::Softirq(UNKNOWN_SOFTIRQ)),
            FrameMark::SoftirqAction(v) => return Some(Inferred::Softirq(v)),
        }
    }
    None
}

/// Interrupt nesting on one CPU.
#[derive(Clone, Debug, Default)]
struct CpuCtx {
    irqs: Vec<(u32, StringId)>,
    softirqs: Vec<SoftirqVec>,
}

/// Per-CPU hard IRQ and softirq nesting from `irq:*` events.
#[derive(Debug, Default)]
pub(crate) struct IrqTracker {
    cpus: Vec<CpuCtx>,
    /// Exits without a matching entry (the entry was before the recording, or lost).
    pub unmatched_exits: u64,
    /// Stale nesting cleared by a context switch or lost events.
    pub resets: u64,
}

impl IrqTracker {
    fn cpu(&mut self, cpu: u32) -> &mut CpuCtx {
        let i = cpu as usize;
        if self.cpus.len() <= i {
            self.cpus.resize_with(i + 1, CpuCtx::default);
        }
        // The resize above makes the index valid; fall back to a scratch slot anyway.
        let last = self.cpus.len() - 1;
        let i = i.min(last);
        &mut self.cpus[i]
    }

    /// `irq_handler_entry`.
    pub fn irq_entry(&mut self, cpu: u32, irq: u32, name: StringId) {
        let c = self.cpu(cpu);
        if c.irqs.len() < MAX_NEST {
            c.irqs.push((irq, name));
        }
    }

    /// `irq_handler_exit`.
    pub fn irq_exit(&mut self, cpu: u32, irq: u32) {
        let c = self.cpu(cpu);
        match c.irqs.iter().rposition(|&(i, _)| i == irq) {
            Some(pos) => {
                let extra = c.irqs.len() - pos - 1;
                c.irqs.truncate(pos);
                self.unmatched_exits += extra as u64;
            }
            None => self.unmatched_exits += 1,
        }
    }

    /// `softirq_entry`.
    pub fn softirq_entry(&mut self, cpu: u32, vec: SoftirqVec) {
        let c = self.cpu(cpu);
        if c.softirqs.len() < MAX_NEST {
            c.softirqs.push(vec);
        }
    }

    /// `softirq_exit`.
    pub fn softirq_exit(&mut self, cpu: u32, vec: SoftirqVec) {
        let c = self.cpu(cpu);
        match c.softirqs.iter().rposition(|&v| v == vec) {
            Some(pos) => {
                let extra = c.softirqs.len() - pos - 1;
                c.softirqs.truncate(pos);
                self.unmatched_exits += extra as u64;
            }
            None => self.unmatched_exits += 1,
        }
    }

    /// Forget the nesting of `cpu` (context switch, lost events).
    pub fn reset(&mut self, cpu: u32) {
        if let Some(c) = self.cpus.get_mut(cpu as usize)
            && (!c.irqs.is_empty() || !c.softirqs.is_empty())
        {
            self.resets += 1;
            c.irqs.clear();
            c.softirqs.clear();
        }
    }

    /// The innermost active hard IRQ handler on `cpu`.
    pub fn irq(&self, cpu: u32) -> Option<(u32, StringId)> {
        self.cpus.get(cpu as usize)?.irqs.last().copied()
    }

    /// The innermost active softirq on `cpu`.
    pub fn softirq(&self, cpu: u32) -> Option<SoftirqVec> {
        self.cpus.get(cpu as usize)?.softirqs.last().copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classification() {
        assert_eq!(
            classify_symbol("__handle_irq_event_percpu").0,
            FrameMark::IrqDispatch
        );
        assert_eq!(
            classify_symbol("blk_done_softirq").0,
            FrameMark::SoftirqAction(SoftirqVec::BLOCK)
        );
        assert_eq!(classify_symbol("handle_softirqs").0, FrameMark::Softirq);
        assert_eq!(
            classify_symbol("__sysvec_apic_timer_interrupt"),
            (
                FrameMark::IrqEntry,
                Some("apic_timer_interrupt".to_string())
            )
        );
        assert_eq!(
            classify_symbol("asm_sysvec_call_function_single"),
            (
                FrameMark::IrqEntry,
                Some("call_function_single".to_string())
            )
        );
        assert_eq!(
            classify_symbol("smp_apic_timer_interrupt"),
            (
                FrameMark::IrqEntry,
                Some("apic_timer_interrupt".to_string())
            )
        );
        assert_eq!(
            classify_symbol("net_rx_action.cold").0,
            FrameMark::SoftirqAction(SoftirqVec::NET_RX)
        );
        assert_eq!(classify_symbol("vring_interrupt").0, FrameMark::None);
        assert_eq!(
            classify_symbol("schedule_timeout_interruptible").0,
            FrameMark::None
        );
        assert_eq!(classify_symbol("sysvec_").0, FrameMark::None);
    }

    #[test]
    fn inference_innermost_mark_wins() {
        // (mark, symbol id, irq name id)
        let t = |m: FrameMark, s: u32, n: u32| (m, StringId(s), StringId(n));
        let wake = t(FrameMark::None, 1, 0);
        let handler = t(FrameMark::None, 2, 0);
        let dispatch = t(FrameMark::IrqDispatch, 3, 0);
        let entry = t(FrameMark::IrqEntry, 4, 40);
        let block = t(FrameMark::SoftirqAction(SoftirqVec::BLOCK), 5, 0);
        let soft = t(FrameMark::Softirq, 6, 0);
        let f = |x: (FrameMark, StringId, StringId)| x;
        assert_eq!(
            infer(&[wake, handler, dispatch, entry, block, soft], f),
            Some(Inferred::Irq(StringId(2)))
        );
        assert_eq!(
            infer(&[wake, block, soft, entry], f),
            Some(Inferred::Softirq(SoftirqVec::BLOCK))
        );
        assert_eq!(
            infer(&[wake, soft, entry], f),
            Some(Inferred::Softirq(UNKNOWN_SOFTIRQ))
        );
        assert_eq!(infer(&[wake, entry], f), Some(Inferred::Irq(StringId(40))));
        assert_eq!(infer(&[dispatch], f), Some(Inferred::Irq(StringId(3))));
        assert_eq!(infer(&[wake, handler], f), None);
        assert_eq!(infer::<(FrameMark, StringId, StringId)>(&[], f), None);
    }

    #[test]
    fn tracker_nesting() {
        let mut t = IrqTracker::default();
        t.softirq_entry(1, SoftirqVec::NET_RX);
        t.irq_entry(1, 36, StringId(7));
        assert_eq!(t.irq(1), Some((36, StringId(7))));
        assert_eq!(t.softirq(1), Some(SoftirqVec::NET_RX));
        t.irq_exit(1, 36);
        assert_eq!(t.irq(1), None);
        t.softirq_exit(1, SoftirqVec::NET_RX);
        assert_eq!(t.softirq(1), None);
        t.irq_exit(1, 5);
        assert_eq!(t.unmatched_exits, 1);
        t.irq_entry(0, 1, StringId(1));
        t.reset(0);
        assert_eq!((t.irq(0), t.resets), (None, 1));
        assert_eq!(t.irq(99), None);
        for _ in 0..100 {
            t.irq_entry(2, 1, StringId(1));
        }
        t.irq_exit(2, 1);
        assert_eq!(t.irq(2), Some((1, StringId(1))));
    }
}
