//! What a wait waited on: a socket, a pipe, a lock, a child's exit, a timer, the disk
//! (the type; `classify` tells it from the trace).
//!
//! A diagnosis names each hop of its culprit chain by it ("victim ← worker (socket) ←
//! holder (lock) ← …"). The evidence, strongest first:
//!
//! 1. the model's data wake-up: the wait was ended by socket data a recorded thread
//!    sent (recorded by default, see `causeway_model::sockets`): a socket;
//! 2. the system call it blocked in and the kernel object behind its descriptor, when
//!    the recording has system calls (`--events default,syscall`);
//! 3. the frames of the stack where it blocked, innermost first: the first frame whose
//!    function is a known blocking entry point decides (`pthread_mutex_lock` a lock,
//!    `waitpid` a child's exit, `nanosleep` a sleep, `recv` a socket, `read` woken by a
//!    thread that sent no socket data a pipe, …); kernel frames where they were
//!    recorded (`pipe_read`, `io_schedule`);
//! 4. what ended it: a timer, a block device.
//!
//! Memory comes before all but the first: a kernel stack that passes through page
//! reclaim, a swap-in or a user page fault makes the wait reclaim, a swap-in or a page
//! fault (in that order: reclaim inside a fault is the reclaim's), whatever the
//! innermost frame (`io_schedule` under a fault is the fault's disk read, and what the
//! user can change is the memory, not the disk).
//!
//! The names are libc's and the kernel's: a runtime that makes its own system calls (Go)
//! shows none of them, and its waits are classified by evidence 1, 2 and 4 only.

use serde::Serialize;

/// What a wait waited on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum WaitKind {
    /// Data on a socket (TCP, UDP, Unix) from another thread.
    Socket,
    /// Data in a pipe, a FIFO or an eventfd from another thread.
    Pipe,
    /// A lock another thread held (a mutex, a read-write lock, a file lock).
    Lock,
    /// A hand-off through a futex that is no lock: a condition variable, a
    /// semaphore, a parked thread (a queue between threads).
    Futex,
    /// A child process's exit (`waitpid`).
    ChildExit,
    /// Stopped by a signal, or waiting for one.
    Signal,
    /// The thread's own sleep.
    Sleep,
    /// A timer: a timeout that expired.
    Timer,
    /// The disk: a block request.
    Disk,
    /// A page fault: a file page read in, or a page another fault was reading.
    PageFault,
    /// A page read back from swap.
    SwapIn,
    /// Page reclaim: the kernel freeing memory for an allocation or for a cgroup at
    /// its memory limit.
    Reclaim,
    /// A CPU: the thread was running or queued for one.
    Cpu,
    /// A readiness wait (`poll`, `epoll_wait`, `select`) whose source the trace does
    /// not tell.
    Poll,
    /// None of the above could be told.
    Other,
}

impl WaitKind {
    /// Short name, as reports print it.
    pub fn name(self) -> &'static str {
        match self {
            WaitKind::Socket => "socket",
            WaitKind::Pipe => "pipe",
            WaitKind::Lock => "lock",
            WaitKind::Futex => "futex",
            WaitKind::ChildExit => "child exit",
            WaitKind::Signal => "signal",
            WaitKind::Sleep => "sleep",
            WaitKind::Timer => "timer",
            WaitKind::Disk => "disk",
            WaitKind::PageFault => "page fault",
            WaitKind::SwapIn => "swap-in",
            WaitKind::Reclaim => "reclaim",
            WaitKind::Cpu => "CPU",
            WaitKind::Poll => "poll",
            WaitKind::Other => "wait",
        }
    }
}
