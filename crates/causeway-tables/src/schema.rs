//! Every table of the schema, declared once. Times are integer nanoseconds on the
//! trace's clock (`traces.realtime_offset_ns` added gives Unix time); thread rows are
//! keyed by `utid` (the thread's index in the trace: a tid can be reused by a later
//! thread), stack ids by `stack_id` within a trace.

use crate::columns::table;

/// Version of the schema. Raise it when a column changes meaning or goes away; adding
/// a column or a table does not raise it.
pub const SCHEMA_VERSION: i64 = 1;

table! {
    /// One row per trace.
    Traces = "traces", "One row per recording: where and when it was taken, and its counts." {
        path: Str = "The trace file the tables were written from.",
        file_id: Str = "The trace's own random identity (hex); `trace_id` is the same.",
        schema_version: I64 = "Version of this schema the tables follow.",
        realtime_offset_ns: I64 = "Add to any `*_ns` time to get Unix time in ns.",
        start_ns: I64 = "First event, trace clock.",
        end_ns: I64 = "Last event, trace clock.",
        start_unix_ns: I64 = "First event, Unix time in ns (wall clock).",
        duration_ns: I64 = "end_ns - start_ns.",
        cpus: I64 = "CPUs of the machine.",
        kernel: Str = "Kernel release.",
        arch: Str = "Machine architecture.",
        command: Str = "The recorded command line (empty for a system-wide recording).",
        writer: Str = "The program that wrote the trace.",
        events: I64 = "Events in the trace.",
        lost_events: I64 = "Events the recorder lost (ring buffer overflow).",
        bottleneck: Str = "The bottleneck analysis's one-sentence verdict (NULL if not run).",
    }
}

table! {
    /// One row per process.
    Processes = "processes", "One row per process seen in the trace." {
        pid: I64 = "Process id (tgid).",
        ppid: I64 = "Parent process id, if known.",
        comm: Str = "Command name.",
        exe: Str = "Executable path (the last image, if it exec'd).",
        cmdline: Str = "Command line.",
        started_ns: I64 = "When it was created, if in the trace.",
        exited_ns: I64 = "When it exited, if in the trace.",
        threads: I64 = "Threads it had.",
        cgroup: Str = "Its cgroup (CPU controller's path) as last noted while recorded; NULL if not noted.",
        container: Str = "The container, pod or systemd unit its cgroup's path names (`container 3f2a9c1b0d4e`), if any.",
    }
}

table! {
    /// One row per thread.
    Threads = "threads", "One row per thread (a reused tid is a new row with a new utid)." {
        utid: I64 = "The thread's index in the trace: key of `thread_states.utid`.",
        tid: I64 = "Thread id.",
        pid: I64 = "Its process, if known.",
        comm: Str = "Its last name.",
        parent_tid: I64 = "The thread that created it, if in the trace.",
        created_ns: I64 = "When it was created, if in the trace.",
        exited_ns: I64 = "When it exited, if in the trace.",
        running_ns: I64 = "Time on a CPU.",
        runnable_ns: I64 = "Time waiting for a CPU.",
        blocked_ns: I64 = "Time blocked (any sleep state).",
        unknown_ns: I64 = "Time the model cannot account for (lost events).",
        segments: I64 = "Rows it has in `thread_states`.",
    }
}

table! {
    /// One row per segment of a thread's timeline.
    ThreadStates = "thread_states", "One row per interval a thread spent in one state; the intervals of a thread tile its life in the trace." {
        utid: I64 = "The thread (`threads.utid`).",
        tid: I64 = "Thread id.",
        seg: I64 = "The segment's index in the thread's timeline.",
        start_ns: I64 = "Start.",
        dur_ns: I64 = "Length (the end is start_ns + dur_ns, the next segment's start).",
        state: Str = "`running`, `runnable`, `blocked` or `unknown`.",
        task_state: Str = "For `blocked`: the kernel's letter (S, D, ...) if its start was seen.",
        cpu: I64 = "For `running`: the CPU; for `runnable`: the run queue's CPU if known.",
        preempted: Bool = "For `runnable`: it was preempted (not woken).",
        syscall: Str = "For `blocked`: the system call in progress, if recorded.",
        wait_user_stack_id: I64 = "For `blocked`: where it blocked, user stack (`stacks.stack_id`).",
        wait_kernel_stack_id: I64 = "For `blocked`: where it blocked, kernel stack.",
        wake_ns: I64 = "For `blocked`: when the wake-up that ended it happened.",
        waker_kind: Str = "For `blocked`: `thread`, `irq`, `softirq` or `unknown`.",
        waker_tid: I64 = "Waking thread, for a thread waker.",
        waker_utid: I64 = "Waking thread's utid, if recorded.",
        waker_seg: I64 = "The waker's segment (in `thread_states` of waker_utid) when it woke this one.",
        waker_user_stack_id: I64 = "The waker's user stack at the wake-up.",
        waker_stack_weight: I64 = "Wake-ups the waker's stack stands for: 1, or for a sampled stack of a short wait the recording's rate (`causeway info`); weigh sums over waker stacks by it.",
        waker_irq: Str = "Interrupt or softirq name, for an interrupt waker.",
        data_flow_id: I64 = "Woken by data on a socket: the flow (`flows.flow_id`).",
        unknown_cause: Str = "For `unknown`: why (lost_events, before_first_event, inconsistent).",
    }
}

table! {
    /// One row per scheduler switch.
    Switches = "switches", "One row per `sched_switch` event." {
        ts: I64 = "When.",
        cpu: I64 = "The CPU.",
        prev_tid: I64 = "Thread leaving the CPU.",
        prev_state: Str = "Its state as it left (R, R+, S, D, ...).",
        next_tid: I64 = "Thread taking the CPU.",
    }
}

table! {
    /// One row per wake-up.
    Wakeups = "wakeups", "One row per wake-up event (`sched_waking`, `sched_wakeup_new`)." {
        ts: I64 = "When.",
        cpu: I64 = "CPU the waker ran on.",
        wakee: I64 = "Thread woken.",
        target_cpu: I64 = "CPU it was queued on.",
        new_thread: Bool = "A new thread's first wake-up.",
        waker_kind: Str = "`thread`, `irq`, `softirq` or `unknown`.",
        waker_tid: I64 = "Waking thread, for a thread waker.",
        waker_irq: Str = "Interrupt handler or softirq name, for an interrupt waker.",
    }
}

table! {
    /// One row per stack event.
    Callstacks = "callstacks", "One row per stack event: an on-CPU sample, or the stacks taken at a switch-out, a wake-up or a system call." {
        ts: I64 = "When.",
        cpu: I64 = "The CPU.",
        tid: I64 = "Thread the stacks belong to.",
        kind: Str = "`sample`, `switch_out`, `waker`, `syscall` or `other`.",
        user_stack_id: I64 = "User stack (`stacks.stack_id`), if taken.",
        kernel_stack_id: I64 = "Kernel stack, if taken.",
    }
}

table! {
    /// One row per system call.
    Syscalls = "syscalls", "One row per system call: an entry and its exit; an entry or exit whose partner was not recorded is a row with the other end NULL." {
        tid: I64 = "Calling thread.",
        nr: I64 = "Number (x86-64).",
        name: Str = "Name.",
        enter_ns: I64 = "Entry.",
        exit_ns: I64 = "Exit.",
        dur_ns: I64 = "exit_ns - enter_ns when both are known.",
        ret: I64 = "Return value (negative errno).",
        user_stack_id: I64 = "Call site: user stack at the entry, if taken.",
    }
}

table! {
    /// One row per block request.
    BlockIo = "block_io", "One row per block request: its issue and completion (paired by device and sector)." {
        dev: Str = "Device, major:minor.",
        sector: I64 = "First sector.",
        bytes: I64 = "Size.",
        op: Str = "read, write, flush, discard or other.",
        sync: Bool = "Synchronous request.",
        issue_ns: I64 = "Issued.",
        complete_ns: I64 = "Completed.",
        dur_ns: I64 = "complete_ns - issue_ns.",
        tid: I64 = "Thread current at the issue (may be a kworker).",
        error: I64 = "0 or a negative errno.",
    }
}

table! {
    /// One row per packet event.
    Packets = "packets", "One row per packet handed to or received from a network device." {
        ts: I64 = "When.",
        cpu: I64 = "The CPU.",
        dir: Str = "`xmit` or `recv`.",
        tid: I64 = "Thread current at the time.",
        dev: Str = "Interface.",
        bytes: I64 = "Length.",
    }
}

table! {
    /// One row per interrupt handler run.
    Interrupts = "interrupts", "One row per hard or soft interrupt run: entry and exit paired per CPU." {
        cpu: I64 = "The CPU.",
        kind: Str = "`irq` or `softirq`.",
        irq: I64 = "Interrupt number or softirq vector.",
        name: Str = "Handler or softirq name.",
        start_ns: I64 = "Entry (NULL: entered before the trace began).",
        end_ns: I64 = "Exit (NULL: not recorded).",
    }
}

table! {
    /// One row per socket event.
    Sockets = "sockets", "One row per socket event: data sent by a recorded thread, or data arriving that woke a waiter." {
        ts: I64 = "When.",
        cpu: I64 = "The CPU.",
        kind: Str = "`send` or `ready`.",
        tid: I64 = "Sender (`send`) or the thread woken (`ready`).",
        host_tid: I64 = "For `ready`: the thread current when the data arrived.",
        flow_id: I64 = "The socket (`flows.flow_id`), from this thread's side.",
        bytes: I64 = "For `send`: bytes sent.",
        seq: I64 = "TCP sequence number (end of the data sent, or next expected).",
    }
}

table! {
    /// One row per socket flow.
    Flows = "flows", "One row per socket identity the recorder saw." {
        flow_id: I64 = "Id within the trace.",
        proto: Str = "tcp, udp, unix stream, ...",
        local: Str = "This side's address and port.",
        remote: Str = "The other side's address and port.",
        label: Str = "Both ends in one line.",
    }
}

table! {
    /// One row per signal or timer event.
    Signals = "signals", "One row per signal sent (`generate`) or taken (`deliver`)." {
        ts: I64 = "When.",
        cpu: I64 = "The CPU.",
        kind: Str = "`generate` or `deliver`.",
        sender: I64 = "For `generate`: the sending thread (0: the kernel).",
        tid: I64 = "Target (`generate`) or receiving (`deliver`) thread.",
        sig: I64 = "Signal number.",
        group: Bool = "For `generate`: process-wide.",
    }
}

table! {
    /// One row per timer event.
    Timers = "timers", "One row per high-resolution timer armed or expired." {
        ts: I64 = "When.",
        cpu: I64 = "The CPU.",
        kind: Str = "`arm` or `expire`.",
        tid: I64 = "For `arm`: the arming thread.",
        timer: I64 = "The timer's identity (a keyed hash, stable while it lives).",
        expires_ns: I64 = "For `arm`: when it will expire, if on the trace clock.",
    }
}

table! {
    /// One row per goroutine event.
    Goroutines = "goroutines", "One row per goroutine event of a Go program: run, park, net_wait, ready." {
        ts: I64 = "When.",
        cpu: I64 = "The CPU.",
        kind: Str = "`run`, `park`, `net_wait` or `ready`.",
        tid: I64 = "The thread carrying it (or readying it).",
        goid: I64 = "The goroutine.",
        other_goid: I64 = "`run`: its parent; `ready`: the goroutine that readied it.",
        reason: Str = "`park`: why, in the runtime's words.",
        flow_id: I64 = "`net_wait`: the socket.",
    }
}

table! {
    /// One row per marker.
    Markers = "markers", "One row per marker (spans, methods, flags, spins) emitted by the program or an in-process recorder." {
        ts: I64 = "When.",
        cpu: I64 = "The CPU.",
        tid: I64 = "Thread.",
        kind: Str = "span_begin, span_end, method_enter, method_exit, flag_read, flag_write, data_flag, spin_begin, spin_end, false_wakeup.",
        name: Str = "Span or method name.",
        id: I64 = "Span or spin id.",
        addr: I64 = "Flag address.",
    }
}

table! {
    /// One row per process lifecycle event.
    Lifecycle = "lifecycle", "One row per fork, exec or exit." {
        ts: I64 = "When.",
        cpu: I64 = "The CPU.",
        kind: Str = "`fork`, `exec` or `exit`.",
        tid: I64 = "The thread (child for fork).",
        pid: I64 = "Its process (fork: the child's).",
        parent_tid: I64 = "fork: the creating thread.",
        comm: Str = "exec: the new name.",
        filename: Str = "exec: the file executed.",
    }
}

table! {
    /// One row per loss record.
    Losses = "losses", "One row per `lost` record: events lost on a CPU." {
        ts: I64 = "When the loss was noticed.",
        cpu: I64 = "The CPU.",
        count: I64 = "Events lost.",
    }
}

table! {
    /// One row per interned stack.
    Stacks = "stacks", "One row per distinct stack of the trace." {
        stack_id: I64 = "Id within the trace.",
        depth: I64 = "Frames.",
        truncated: Bool = "The stack was cut short.",
        leaf: Str = "Innermost function.",
        folded: Str = "Functions outermost first, joined by `;` (flame-graph folding).",
    }
}

table! {
    /// One row per frame of a stack.
    StackFrames = "stack_frames", "One row per frame of each stack, innermost at depth 0." {
        stack_id: I64 = "The stack.",
        depth: I64 = "0 for the innermost frame.",
        frame_id: I64 = "The frame (`frames.frame_id`).",
    }
}

table! {
    /// One row per interned frame.
    Frames = "frames", "One row per distinct frame." {
        frame_id: I64 = "Id within the trace.",
        space: Str = "`user` or `kernel`.",
        addr: I64 = "Address.",
        function: Str = "Function name (with inlined callers folded in as `a > b`).",
        module: Str = "File it was mapped from.",
        file: Str = "Source file, if known.",
        line: I64 = "Source line, if known.",
    }
}

table! {
    /// Wait-for graph vertices.
    BottleneckVertices = "bottleneck_vertices", "One row per vertex of the wait-for graph (wPerf), as `causeway bottleneck --json` reports it." {
        vertex: I64 = "Vertex id.",
        label: Str = "Its label.",
        kind: Str = "thread, similar_threads, disk, nic, timer, interrupt, ...",
        tids: I64s = "Its threads.",
        running_ns: I64 = "Time on CPU.",
        runnable_ns: I64 = "Time runnable.",
        waiting_ns: I64 = "Time waiting.",
    }
}

table! {
    /// Wait-for graph edges.
    BottleneckEdges = "bottleneck_edges", "One row per edge of the wait-for graph: `from` waited for `to`." {
        edge: I64 = "Edge id.",
        from_vertex: I64 = "Waiting vertex.",
        to_vertex: I64 = "Vertex waited for.",
        kind: Str = "wait, cascade, ...",
        weight_ns: I64 = "Waiting carried after the cascade.",
        direct_waits: I64 = "Waits seen directly.",
        direct_ns: I64 = "Their time.",
        knot: I64 = "Rank of the knot it is in, if any.",
        wait_stack: Str = "The heaviest wait stack, root first (user frames from the outermost, then kernel frames), `;`-joined.",
        waker_stack: Str = "The heaviest waker stack, root first, `;`-joined.",
        wait_site: Str = "Where its direct waits blocked in the program's own code, the heaviest such place: the program's innermost functions (JIT-compiled code named from the JVM or perf maps when the stack has any, else the executable's), innermost first, ` ← `-joined, then in parentheses the library call they made and the innermost function (`slowHandler ← (anonymous) (pbkdf2Sync → kdf_pbkdf2_derive)`); NULL when no direct wait's stack reached the program's code.",
    }
}

table! {
    /// Knots.
    Knots = "knots", "One row per knot (and background knot): the strongly connected parts of the wait-for graph that limit throughput." {
        rank: I64 = "1 for the most important (background knots: NULL).",
        background: Bool = "A knot of background threads, reported apart.",
        shape: Str = "single, cycle, ...",
        vertices: I64s = "Its vertices.",
        edges: I64s = "Its edges.",
        weight_ns: I64 = "Waiting inside it.",
        needs_cpu_ns: I64 = "Its threads' runnable time.",
        has_io: Bool = "It holds a disk or a NIC.",
        advice: Str = "What to look at.",
    }
}

table! {
    /// Sinks.
    Sinks = "sinks", "One row per sink: a vertex others wait for that waits for nobody." {
        vertex: I64 = "The sink.",
        background: Bool = "Only background threads wait on it.",
        incoming_ns: I64 = "Waiting that ends at it.",
        chain: I64s = "The heaviest chain of waits leading to it.",
        advice: Str = "What to look at.",
    }
}

table! {
    /// The culprit chain of the diagnosis.
    Diagnosis = "diagnosis", "One row per hop of the culprit chain of the trace's longest stall (Argus, `causeway diagnose --auto` with its defaults): the stalled thread's interval first, then its culprit, the culprit's culprit..." {
        step: I64 = "0 for the stall, 1 for its culprit, 2 for the culprit's culprit.",
        vertex: I64 = "The interval's id in the diagnosis graph (as in `diagnose --json`).",
        tid: I64 = "Its thread.",
        thread: Str = "The thread's name.",
        pid: I64 = "Its process.",
        goroutine: I64 = "The goroutine, when goroutines stand in for threads.",
        start_ns: I64 = "Start.",
        dur_ns: I64 = "Length.",
        kind: Str = "run or wait.",
        block: Str = "The block type: running, runnable, blocked, stopped...",
        link: Str = "What it waited on for the next hop (the last hop: what it waited on itself): socket, pipe, lock, futex, disk, CPU, sleep...",
        finding: Str = "Algorithm 1's case when the diagnosis reports the interval: LongWait, LongRunning, LongRunnable, RepeatedYield, Stopped.",
        wait_call: Str = "The system call it waited in.",
        woken_by: Str = "Who woke it, in words.",
        stack: Str = "The user stack where it blocked, outermost frame first, `;`-joined.",
    }
}

table! {
    /// Latency histogram bins.
    LatencyBins = "latency_bins", "One row per non-empty bin of each latency profile (OSprof): system calls by name, blocked and runnable waits, spans and methods." {
        profile: Str = "What it measures (a syscall's name, `blocked waits`, a span's name).",
        kind: Str = "syscall, blocked, runnable, method or span.",
        from_ns: I64 = "Bin's lower bound.",
        to_ns: I64 = "Bin's upper bound (exclusive).",
        count: I64 = "Operations in the bin.",
        peak: I64 = "Peak the bin belongs to (1 = shortest), if any.",
    }
}

table! {
    /// Latency peaks.
    LatencyPeaks = "latency_peaks", "One row per peak of each latency profile." {
        profile: Str = "What it measures.",
        kind: Str = "syscall, blocked, runnable, method or span.",
        peak: I64 = "1 for the shortest latencies.",
        from_ns: I64 = "Range start.",
        to_ns: I64 = "Range end.",
        mode_from_ns: I64 = "The fullest bin's lower bound.",
        ops: I64 = "Operations in the peak.",
    }
}
