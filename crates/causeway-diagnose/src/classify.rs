//! Telling what a wait vertex waited on ([`WaitKind`]) from the model's socket data,
//! the system call it blocked in and the frames where it blocked (evidence listed in
//! `waitkind`).

use crate::WaitKind;
use crate::graph::{Vertex, WokenBy};
use causeway_format::{StackId, Tables};
use causeway_model::{Model, SegmentId};

/// Functions (innermost first wins) and what blocking in them means. Matched on the
/// function name with leading underscores and `GI_`/`libc_` prefixes stripped.
const FRAME_KINDS: &[(&str, WaitKind)] = &[
    ("pthread_mutex_lock", WaitKind::Lock),
    ("pthread_mutex_timedlock", WaitKind::Lock),
    ("pthread_mutex_clocklock", WaitKind::Lock),
    ("pthread_mutex_lock_full", WaitKind::Lock),
    ("pthread_mutex_cond_lock", WaitKind::Lock),
    ("lll_lock_wait", WaitKind::Lock),
    ("lll_lock_wait_private", WaitKind::Lock),
    ("pthread_rwlock_rdlock", WaitKind::Lock),
    ("pthread_rwlock_wrlock", WaitKind::Lock),
    ("flock", WaitKind::Lock),
    ("lockf", WaitKind::Lock),
    ("lockf64", WaitKind::Lock),
    ("pthread_cond_wait", WaitKind::Futex),
    ("pthread_cond_timedwait", WaitKind::Futex),
    ("pthread_cond_clockwait", WaitKind::Futex),
    ("sem_wait", WaitKind::Futex),
    ("sem_timedwait", WaitKind::Futex),
    ("sem_clockwait", WaitKind::Futex),
    ("pthread_join", WaitKind::Futex),
    ("pthread_clockjoin_ex", WaitKind::Futex),
    ("pthread_barrier_wait", WaitKind::Futex),
    ("waitpid", WaitKind::ChildExit),
    ("wait4", WaitKind::ChildExit),
    ("waitid", WaitKind::ChildExit),
    ("wait", WaitKind::ChildExit),
    ("nanosleep", WaitKind::Sleep),
    ("clock_nanosleep", WaitKind::Sleep),
    ("usleep", WaitKind::Sleep),
    ("sleep", WaitKind::Sleep),
    ("sigwait", WaitKind::Signal),
    ("sigwaitinfo", WaitKind::Signal),
    ("sigtimedwait", WaitKind::Signal),
    ("sigsuspend", WaitKind::Signal),
    ("pause", WaitKind::Signal),
    ("recv", WaitKind::Socket),
    ("recvfrom", WaitKind::Socket),
    ("recvmsg", WaitKind::Socket),
    ("recvmmsg", WaitKind::Socket),
    ("accept", WaitKind::Socket),
    ("accept4", WaitKind::Socket),
    ("connect", WaitKind::Socket),
    ("send", WaitKind::Socket),
    ("sendto", WaitKind::Socket),
    ("sendmsg", WaitKind::Socket),
    ("poll", WaitKind::Poll),
    ("ppoll", WaitKind::Poll),
    ("epoll_wait", WaitKind::Poll),
    ("epoll_pwait", WaitKind::Poll),
    ("epoll_pwait2", WaitKind::Poll),
    ("select", WaitKind::Poll),
    ("pselect", WaitKind::Poll),
    ("pselect6", WaitKind::Poll),
    ("read", WaitKind::Pipe),
    ("readv", WaitKind::Pipe),
    ("write", WaitKind::Pipe),
    ("writev", WaitKind::Pipe),
    // Kernel frames (recorded for uninterruptible waits, or with --kernel-stacks all).
    ("pipe_read", WaitKind::Pipe),
    ("pipe_write", WaitKind::Pipe),
    ("unix_stream_read_generic", WaitKind::Socket),
    ("tcp_recvmsg", WaitKind::Socket),
    ("inet_csk_accept", WaitKind::Socket),
    ("io_schedule", WaitKind::Disk),
    ("io_schedule_timeout", WaitKind::Disk),
    ("futex_wait", WaitKind::Futex),
    ("do_wait", WaitKind::ChildExit),
    ("hrtimer_nanosleep", WaitKind::Sleep),
];

/// x86-64 system calls and what blocking in them means (the descriptor's object kind,
/// when recorded, refines read and write).
fn syscall_kind(nr: u32) -> Option<WaitKind> {
    Some(match nr {
        0 | 1 | 17 | 18 | 19 | 20 => WaitKind::Pipe,
        7 | 23 | 232 | 270 | 271 | 281 | 441 => WaitKind::Poll,
        35 | 230 => WaitKind::Sleep,
        43 | 288 | 42 | 44 | 45 | 46 | 47 | 299 | 307 => WaitKind::Socket,
        61 | 247 => WaitKind::ChildExit,
        73 => WaitKind::Lock,
        202 => WaitKind::Futex,
        34 | 130 | 128 => WaitKind::Signal,
        74 | 75 | 162 | 277 => WaitKind::Disk,
        _ => return None,
    })
}

fn base_name(f: &str) -> &str {
    let f = f.split(['.', '@', '(']).next().unwrap_or(f);
    let f = f.trim_start_matches('_');
    let f = f
        .strip_prefix("GI_")
        .map_or(f, |g| g.trim_start_matches('_'));
    let f = f.strip_prefix("libc_").unwrap_or(f);
    let f = f.strip_suffix("64").unwrap_or(f);
    f.strip_suffix("_common").unwrap_or(f)
}

/// The first known blocking entry point among a stack's frames, innermost first. A
/// futex hand-off (a condition variable's or libc's inline `futex_wait`) gives way to
/// a more telling frame further out (`pthread_mutex_lock` around it is a lock).
fn frames_kind(tables: &Tables, stack: Option<StackId>) -> Option<WaitKind> {
    let s = stack.and_then(|id| tables.stack(id))?;
    let mut weak = None;
    for &f in &s.frames {
        // Inlined calls first: they are inside the frame's function.
        for name in tables.frame_functions(f) {
            let b = base_name(&name);
            match FRAME_KINDS.iter().find(|(n, _)| *n == b) {
                Some(&(_, WaitKind::Futex)) => weak = weak.or(Some(WaitKind::Futex)),
                Some(&(_, k)) => return Some(k),
                None => {}
            }
        }
    }
    weak
}

/// Reclaim, a swap-in or a page fault, when the kernel stack passes through one
/// (anywhere in it; reclaim first, as it runs inside faults and allocations).
fn memory_kind(tables: &Tables, stack: Option<StackId>) -> Option<WaitKind> {
    let s = stack.and_then(|id| tables.stack(id))?;
    let names: Vec<String> = s
        .frames
        .iter()
        .flat_map(|&f| tables.frame_functions(f))
        .collect();
    let has = |set: &[&str]| names.iter().any(|n| set.contains(&n.as_str()));
    [
        (causeway_model::RECLAIM_FRAMES, WaitKind::Reclaim),
        (causeway_model::SWAP_IN_FRAMES, WaitKind::SwapIn),
        (causeway_model::PAGE_FAULT_FRAMES, WaitKind::PageFault),
    ]
    .into_iter()
    .find(|(set, _)| has(set))
    .map(|(_, k)| k)
}

/// What the wait vertex `v` (segment `seg` of the model) waited on.
pub(crate) fn classify(
    v: &Vertex,
    seg: Option<SegmentId>,
    model: &Model,
    tables: &Tables,
) -> WaitKind {
    if seg.is_some_and(|s| model.data_wake(s).is_some()) {
        return WaitKind::Socket;
    }
    if v.block == crate::graph::BlockType::Stopped {
        return WaitKind::Signal;
    }
    if let Some(k) = v.stack.and_then(|s| memory_kind(tables, s.kernel)) {
        return k;
    }
    let by_stack = v.stack.and_then(|s| {
        let kernel = frames_kind(tables, s.kernel);
        kernel
            .filter(|k| *k != WaitKind::Futex)
            .or_else(|| frames_kind(tables, s.user))
            .or(kernel)
    });
    let by_call = v.wait_call.and_then(syscall_kind);
    let mut kind = by_stack.or(by_call).unwrap_or(WaitKind::Other);
    // A read or poll woken by no recorded sender's socket data, or ended by a timer.
    match (kind, v.woken_by) {
        (WaitKind::Poll | WaitKind::Other, Some(WokenBy::Timer)) => kind = WaitKind::Timer,
        (WaitKind::Sleep, Some(WokenBy::Thread { .. })) => kind = WaitKind::Signal,
        (WaitKind::Other, Some(WokenBy::Interrupt { softirq: false, .. })) => kind = WaitKind::Disk,
        _ => {}
    }
    kind
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn libc_names_are_reduced_to_their_entry_point() {
        assert_eq!(base_name("__GI___libc_read"), "read");
        assert_eq!(base_name("__libc_recv"), "recv");
        assert_eq!(
            base_name("__pthread_mutex_lock_full"),
            "pthread_mutex_lock_full"
        );
        assert_eq!(base_name("___pthread_cond_wait"), "pthread_cond_wait");
        assert_eq!(base_name("__GI___clock_nanosleep"), "clock_nanosleep");
        assert_eq!(
            base_name("__futex_abstimed_wait_common64"),
            "futex_abstimed_wait"
        );
        assert_eq!(base_name("__GI___lll_lock_wait"), "lll_lock_wait");
        assert_eq!(base_name("__waitpid"), "waitpid");
        assert_eq!(base_name("__ppoll"), "ppoll");
        assert_eq!(base_name("epoll_wait"), "epoll_wait");
    }

    /// Tables with one kernel stack per list of function names (innermost first).
    fn kernel_stacks(stacks: &[&[&str]]) -> Tables {
        use causeway_format::{Frame, FrameId, FrameSpace, Stack, StringId};
        let mut t = Tables::default();
        let intern = |t: &mut Tables, x: &str| {
            t.strings.push(x.to_string());
            StringId(u32::try_from(t.strings.len() - 1).unwrap())
        };
        let module = intern(&mut t, "vmlinux");
        for names in stacks {
            let mut frames = Vec::new();
            for n in names.iter() {
                let sym = intern(&mut t, n);
                t.frames
                    .push(Frame::new(FrameSpace::Kernel, 0x1000, module, sym, 0));
                frames.push(FrameId(u32::try_from(t.frames.len() - 1).unwrap()));
            }
            t.stacks.push(Stack {
                frames,
                truncated: false,
            });
        }
        t
    }

    #[test]
    fn memory_in_the_kernel_stack_names_the_wait_whatever_the_innermost_frame() {
        let t = kernel_stacks(&[
            // A file page read in by a fault: the disk wait is the fault's.
            &[
                "schedule",
                "io_schedule",
                "folio_wait_bit_common",
                "filemap_fault",
                "__do_fault",
                "handle_mm_fault",
                "exc_page_fault",
            ],
            // Reclaim inside a fault: the reclaim's.
            &[
                "schedule",
                "io_schedule",
                "shrink_lruvec",
                "shrink_node",
                "try_to_free_mem_cgroup_pages",
                "handle_mm_fault",
                "exc_page_fault",
            ],
            &[
                "schedule",
                "io_schedule",
                "swap_read_folio",
                "do_swap_page",
                "handle_mm_fault",
            ],
            // A read(2) of the page cache: the disk, not memory.
            &[
                "schedule",
                "io_schedule",
                "folio_wait_bit_common",
                "filemap_read",
                "vfs_read",
            ],
        ]);
        let k = |i: u32| memory_kind(&t, Some(StackId(i)));
        assert_eq!(k(0), Some(WaitKind::PageFault));
        assert_eq!(k(1), Some(WaitKind::Reclaim));
        assert_eq!(k(2), Some(WaitKind::SwapIn));
        assert_eq!(k(3), None);
        assert_eq!(frames_kind(&t, Some(StackId(3))), Some(WaitKind::Disk));
    }

    #[test]
    fn calls_map_to_kinds() {
        assert_eq!(syscall_kind(61), Some(WaitKind::ChildExit));
        assert_eq!(syscall_kind(230), Some(WaitKind::Sleep));
        assert_eq!(syscall_kind(45), Some(WaitKind::Socket));
        assert_eq!(syscall_kind(9999), None);
    }
}
