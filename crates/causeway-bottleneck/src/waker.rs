//! Who ended a wait: a timeline entity (thread or virtual thread) or a pseudo thread
//! standing for a device, the timers or an unidentified interrupt (wPerf §3.3).
//!
//! Rules, in order (the first that applies wins):
//! 1. A waker kernel stack that runs a timer callback that wakes sleepers
//!    (`hrtimer_wakeup`, `process_timeout`, ...) means the wait ended by timeout: timer.
//! 2. A hard IRQ named like a timer, or the TIMER / HRTIMER softirq: timer.
//! 3. A hard IRQ or the BLOCK softirq with a block completion just before on the same
//!    CPU: that disk. A NET_RX / NET_TX softirq (or IRQ) with a packet received just
//!    before on the same CPU: that NIC.
//! 4. A thread whose waker kernel stack is in I/O completion (block or network receive
//!    processing, run by a kworker, ksoftirqd or inline after a loopback send): the
//!    device the trace shows completing just before (softirq/kworker hand-off).
//!    4b. Without the waker's stack: a kernel I/O thread (`kworker`, `ksoftirqd`,
//!    `jbd2`, ...) ending a wait in state `D`: the disk it last issued a request to,
//!    else the one that completed a request just before.
//! 5. The BLOCK softirq with no completion seen: the only disk if there is one, else an
//!    unidentified disk; likewise NET softirqs and an unidentified NIC.
//! 6. Any other IRQ or softirq: a pseudo thread named after it.
//! 7. A thread: that thread (or the virtual thread it was merged into); a thread of a
//!    process the recording did not follow: the "other processes" pseudo thread.
//! 8. Unknown wakers, the idle task and threads not in the model: no waker (the wait is
//!    counted as unattributed, never guessed).

use causeway_format::{DevId, SoftirqVec, StackId, StringId, Tables, Tgid, Waker};
use causeway_model::facts::DeviceHint;

/// A pseudo thread (wPerf's I/O threads, plus timers and other interrupts).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) enum Pseudo {
    /// A block device.
    Disk(DevId),
    /// A block device the trace does not identify.
    DiskUnknown,
    /// A network device (interface name).
    Nic(StringId),
    /// A network device the trace does not identify.
    NicUnknown,
    /// Timer expiry (sleeps and timeouts).
    Timer,
    /// A hard interrupt handler (by name) with no device behind it found.
    Irq(StringId),
    /// A softirq vector with no device behind it found.
    Softirq(SoftirqVec),
    /// A managed runtime's own threads in one process (a JVM's VM Thread, collector
    /// and compiler threads): its pauses, as its program's threads wait for them
    /// (`jvm`).
    Runtime(Tgid),
    /// The CPU quota of a cgroup (index into the trace's
    /// [`causeway_model::quota::Throttling::groups`]): runnable time its threads spent
    /// held back while the quota was spent.
    Quota(u32),
    /// Threads of processes that were not recorded (a per-process trace holds only the
    /// part of their timelines that touches the recorded processes, so their own waits
    /// cannot be followed).
    Outside,
}

/// The vertex a wait points to, before vertex numbers are assigned.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) enum WakerKey {
    /// A timeline entity (index into the entity list).
    Entity(u32),
    /// A pseudo thread.
    Pseudo(Pseudo),
    /// Nobody known.
    None,
}

/// Kernel functions that wake a sleeper because its timer expired.
const TIMER_WAKE_FNS: &[&str] = &[
    "hrtimer_wakeup",
    "process_timeout",
    "it_real_fn",
    "posix_timer_fn",
    "timerfd_tmrproc",
    "alarm_handle_timer",
];

/// Kernel functions of block I/O completion.
const BLOCK_DONE_FNS: &[&str] = &[
    "blk_mq_end_request",
    "blk_update_request",
    "bio_endio",
    "blk_done_softirq",
    "blk_complete_reqs",
    "end_bio_bh_io_sync",
    "end_buffer_write_sync",
    "end_buffer_read_sync",
    "folio_end_writeback",
    "end_page_writeback",
    "iomap_dio_bio_end_io",
    "dio_bio_end_io",
    "virtblk_done",
    "nvme_complete_rq",
    "scsi_end_request",
];

/// Kernel functions of network receive processing.
const NET_RX_FNS: &[&str] = &[
    "net_rx_action",
    "__napi_poll",
    "process_backlog",
    "netif_receive_skb",
    "__netif_receive_skb",
    "tcp_v4_rcv",
    "tcp_v6_rcv",
    "udp_rcv",
    "tcp_data_ready",
];

/// Device context a waker stack shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum StackContext {
    /// A timer callback waking a sleeper.
    Timer,
    /// Block I/O completion.
    BlockDone,
    /// Network receive processing.
    NetRx,
    /// Nothing recognized.
    Other,
}

/// Strip compiler suffixes (`.isra.0`, `.cold`) from a kernel symbol.
fn base_symbol(sym: &str) -> &str {
    sym.split('.').next().unwrap_or(sym)
}

/// Classify a kernel stack by the innermost recognized frame.
pub(crate) fn stack_context(tables: &Tables, kernel: Option<StackId>) -> StackContext {
    let Some(stack) = kernel.and_then(|k| tables.stack(k)) else {
        return StackContext::Other;
    };
    for f in &stack.frames {
        let Some(frame) = tables.frame(*f) else {
            continue;
        };
        let sym = base_symbol(tables.string(frame.symbol));
        if TIMER_WAKE_FNS.contains(&sym) {
            return StackContext::Timer;
        }
        if BLOCK_DONE_FNS.contains(&sym) {
            return StackContext::BlockDone;
        }
        if NET_RX_FNS.contains(&sym) {
            return StackContext::NetRx;
        }
    }
    StackContext::Other
}

/// True if a hard IRQ name is a timer's.
fn is_timer_irq(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    n.contains("timer") || n == "local_timer"
}

/// True if a hard IRQ name looks like a network device's.
fn is_net_irq(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    n.contains("input") || n.contains("output") || n.contains("eth") || n.contains("-rx")
}

/// Facts about the trace the classification needs beyond one wake-up.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct DeviceSet {
    /// The only block device, if exactly one appears.
    pub(crate) sole_disk: Option<DevId>,
    /// The only network device, if exactly one appears.
    pub(crate) sole_nic: Option<StringId>,
}

/// What is known of one wait besides its waker.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct WaitContext {
    /// The waker's kernel stack at the wake-up, when it was taken.
    pub(crate) waker_kernel_stack: Option<StackId>,
    /// Devices that completed work just before (`causeway_model::facts`).
    pub(crate) hint: Option<DeviceHint>,
    /// The waiter slept in state `D` (uninterruptible: the kernel's I/O waits).
    pub(crate) uninterruptible: bool,
}

/// Classify a non-thread waker, or a thread waker whose stack shows device work.
/// Returns `None` when the waker is an ordinary thread to be resolved by tid.
pub(crate) fn classify(
    tables: &Tables,
    waker: Waker,
    wait: WaitContext,
    devices: DeviceSet,
) -> Option<WakerKey> {
    let WaitContext {
        waker_kernel_stack,
        hint,
        uninterruptible,
    } = wait;
    let ctx = stack_context(tables, waker_kernel_stack);
    if ctx == StackContext::Timer {
        return Some(WakerKey::Pseudo(Pseudo::Timer));
    }
    let hint = hint.unwrap_or_default();
    let disk_here = hint.disk_here.map(Pseudo::Disk);
    let nic_here = hint.nic_here.map(Pseudo::Nic);
    let disk_fallback = devices.sole_disk.map_or(Pseudo::DiskUnknown, Pseudo::Disk);
    let nic_fallback = devices.sole_nic.map_or(Pseudo::NicUnknown, Pseudo::Nic);
    let key = match waker {
        Waker::Thread { .. } => match ctx {
            StackContext::BlockDone => hint.disk_any.map(Pseudo::Disk).unwrap_or(disk_fallback),
            StackContext::NetRx => nic_here.unwrap_or(nic_fallback),
            // Rule 4b: an I/O wait (state D) a kernel I/O thread ended, its waker
            // stack not taken (short waits' stacks are sampled): the disk that thread
            // last wrote to, else the one that completed a request just before. The
            // journal's commit ending an fsync is the case; left to rule 7 these
            // waits went to "other processes", off the disk edge that the same
            // fsync's other waits are on.
            _ if uninterruptible && let Some(d) = hint.disk_issued.or(hint.disk_any) => {
                Pseudo::Disk(d)
            }
            _ => return None,
        },
        Waker::Irq { name, .. } => {
            let text = tables.string(name);
            if is_timer_irq(text) {
                Pseudo::Timer
            } else if let Some(d) =
                disk_here.or_else(|| (ctx == StackContext::BlockDone).then_some(disk_fallback))
            {
                d
            } else if let Some(n) = nic_here.or_else(|| {
                (ctx == StackContext::NetRx || is_net_irq(text)).then_some(nic_fallback)
            }) {
                n
            } else {
                Pseudo::Irq(name)
            }
        }
        Waker::Softirq { vec } => match vec {
            SoftirqVec::TIMER | SoftirqVec::HRTIMER => Pseudo::Timer,
            SoftirqVec::BLOCK | SoftirqVec::IRQ_POLL => disk_here.unwrap_or(disk_fallback),
            SoftirqVec::NET_RX | SoftirqVec::NET_TX => nic_here.unwrap_or(nic_fallback),
            _ => match ctx {
                StackContext::BlockDone => disk_here.unwrap_or(disk_fallback),
                StackContext::NetRx => nic_here.unwrap_or(nic_fallback),
                _ => disk_here
                    .filter(|_| vec == SoftirqVec::UNKNOWN)
                    .or_else(|| nic_here.filter(|_| vec == SoftirqVec::UNKNOWN))
                    .unwrap_or(Pseudo::Softirq(vec)),
            },
        },
        Waker::Unknown => return Some(WakerKey::None),
    };
    Some(WakerKey::Pseudo(key))
}
