//! Turning ring-buffer records into trace events and table rows.
//!
//! The converter owns the recorder's own id spaces: strings and stacks are numbered
//! here, in first-seen order, and a sink maps them onto a trace writer (directly for a
//! streaming recording, per dump in flight-recorder mode).

use crate::config::StackMode;
use crate::records::{Body, RawStack, Record, StackCopy, WakerCtx, stack_flags};
use crate::stacks::{StackKey, StackSources, StackTable};
pub use crate::strings::Strings;
use crate::unwind::{CodeMapping, DwarfUnwinder, UnwindEnd};
use causeway_format::{
    BlockOp, BlockOpKind, Cpu, DevId, Event, EventKind, Mapping, ProcessInfo, SoftirqVec, StackId,
    StackKind, StringId, TaskState, Tgid, ThreadInfo, Tid, Timestamp, Waker,
};
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// IRQ number used for wake-ups from hard-IRQ context without a device handler
/// (the local timer or an IPI); its name is "timer".
pub const TIMER_IRQ: u32 = u32::MAX;

/// Map a raw `__state` / `exit_state` pair to the report state the tracepoint shows.
pub fn task_state(prev_state: u32, exit_state: u32, preempt: bool) -> TaskState {
    const TASK_IDLE: u32 = 0x402;
    const TASK_RTLOCK_WAIT: u32 = 0x1000;
    if preempt {
        return TaskState::PREEMPTED;
    }
    if prev_state == TASK_IDLE {
        return TaskState::IDLE;
    }
    if prev_state & TASK_RTLOCK_WAIT != 0 {
        return TaskState::UNINTERRUPTIBLE;
    }
    let rep = (prev_state | exit_state) & 0x7f;
    if rep == 0 {
        return TaskState::RUNNABLE;
    }
    TaskState(1 << (31 - rep.leading_zeros()))
}

/// Block operation from a request's `cmd_flags` (Linux 6.x bit numbers).
pub fn block_op(cmd_flags: u32) -> BlockOp {
    let kind = match cmd_flags & 0xff {
        0 => BlockOpKind::Read,
        1 => BlockOpKind::Write,
        2 => BlockOpKind::Flush,
        3 => BlockOpKind::Discard,
        _ => BlockOpKind::Other,
    };
    BlockOp {
        kind,
        sync: cmd_flags & (1 << 11) != 0,
        meta: cmd_flags & (1 << 12) != 0,
        fua: cmd_flags & (1 << 17) != 0,
        preflush: cmd_flags & (1 << 18) != 0,
    }
}

/// State built while converting: ids, table rows, and what user space must refresh.
#[derive(Debug, Default)]
pub struct Converter {
    /// String table (recorder ids).
    pub strings: Strings,
    /// Stack table (recorder ids).
    pub stacks: StackTable,
    /// Thread rows in the order learned.
    pub threads: Vec<ThreadInfo>,
    /// Process rows in the order learned.
    pub processes: Vec<ProcessInfo>,
    /// Mapping rows in the order learned.
    pub mappings: Vec<Mapping>,
    /// Cgroup memberships and quota samples in the order learned (`cgroups`).
    pub cgroups: Vec<causeway_format::CgroupRow>,
    /// Socket flows in the order learned.
    pub flows: crate::socket_events::FlowTable,
    /// Goroutines seen and the probed binaries' wait reason names.
    pub go: crate::go_events::GoEvents,
    /// Processes being recorded (known to user space).
    pub targets: BTreeSet<u32>,
    /// Processes whose mappings must be read again.
    pub maps_pending: BTreeSet<u32>,
    /// Recorder counters written into the trace statistics.
    pub counters: BTreeMap<String, u64>,
    /// Converted events waiting for the sink.
    pub out: Vec<Event>,
    /// Last timestamp seen per CPU (for placing `lost` records).
    pub last_ts: Vec<u64>,
    thread_now: HashMap<u32, (u32, StringId)>,
    process_known: BTreeSet<u32>,
    /// Index in `processes` of each process's latest row.
    latest_row: HashMap<u32, usize>,
    mapping_keys: BTreeSet<(u32, u64, u64, u64)>,
    has_mappings: BTreeSet<u32>,
    irq_names: HashMap<u32, StringId>,
    net_devs: BTreeSet<String>,
    all_targets: bool,
    /// Copied user stacks waiting for their record (same thread and time).
    /// Hashed twice per stack: Fx rather than SipHash (the keys are ids and times).
    copies: rustc_hash::FxHashMap<(u32, u64), StackCopy>,
    /// Copies of the previous batch still waiting: the kernel sends a copy just before
    /// its record, and a drain can end between the two.
    copies_prev: rustc_hash::FxHashMap<(u32, u64), StackCopy>,
    unwinder: DwarfUnwinder,
    /// The files processes map, as the recorder can open them (`ProcessFiles`).
    files: causeway_procfs::files::ProcessFiles,
    /// Unwinds the BPF side recognizes by itself (see [`crate::kmemo`]).
    pub(crate) kmemo: crate::kmemo::KernelMemo,
    /// Offer unwinds to the BPF side's memo.
    kmemo_on: bool,
    /// Processes whose unwinder modules must be brought up to date before unwinding.
    unwind_stale: BTreeSet<u32>,
    /// Processes whose mappings were read again in this batch for an unknown address.
    reread: BTreeSet<u32>,
    /// Scoped mode and frame budget applied to DWARF-unwound stacks.
    user_scope: (StackMode, usize),
    /// Where JIT-compiled code gets its names.
    jit_symbols: crate::stacks::JitSymbols,
    /// JIT tables of processes that exited, read as they exited.
    jit_at_exit: HashMap<u32, crate::jitmap::JitTable>,
    /// Processes whose JIT dump file may have been mapped after their maps were read.
    jit_recheck: crate::jitmap::JitRecheck,
}

/// How records become events, fixed for a recording: resolved once from its
/// configuration ([`ConvertOptions::of`]).
#[derive(Clone, Copy, Debug)]
pub struct ConvertOptions {
    /// Every process is a target (a system-wide recording).
    pub all_targets: bool,
    /// Scoped mode and frame budget for stacks unwound in user space.
    pub user_scope: (StackMode, usize),
    /// Reuse earlier unwinds (see [`DwarfUnwinder`]), or unwind every stack afresh.
    pub unwind_memo: bool,
    /// Where JIT-compiled code gets its names.
    pub jit_symbols: crate::stacks::JitSymbols,
}

impl Default for ConvertOptions {
    fn default() -> ConvertOptions {
        ConvertOptions {
            all_targets: false,
            user_scope: (StackMode::AppAll, 8),
            unwind_memo: true,
            jit_symbols: crate::stacks::JitSymbols::Auto,
        }
    }
}

impl ConvertOptions {
    /// The options of a recording with this configuration.
    pub fn of(cfg: &crate::config::RecordConfig) -> ConvertOptions {
        ConvertOptions {
            all_targets: matches!(cfg.target, crate::config::Target::All),
            user_scope: (cfg.stack_mode, cfg.stack_depth as usize),
            unwind_memo: cfg.unwind_memo,
            jit_symbols: cfg.jit_symbols,
        }
    }
}

impl Converter {
    /// A converter with these options.
    pub fn new(opts: ConvertOptions) -> Converter {
        let mut c = Converter {
            all_targets: opts.all_targets,
            user_scope: opts.user_scope,
            jit_symbols: opts.jit_symbols,
            kmemo_on: opts.unwind_memo,
            ..Default::default()
        };
        c.stacks.glue = crate::stacks::KernelGlue::load();
        c.unwinder.set_memo(opts.unwind_memo);
        // Java frames: compiled code has no frame pointers and no unwind tables, so the
        // JVM's own description of its frames is read from each JVM recorded.
        c.unwinder
            .add_runtime(Box::new(causeway_jvm::HotSpot::default()));
        c
    }

    /// End of a batch of records: a copied stack whose record came neither in its batch
    /// nor in the next (lost) is counted and dropped.
    pub fn end_batch(&mut self) {
        self.reread.clear();
        let hits = self.unwinder.memo_hits();
        if hits > 0 {
            self.counters
                .insert("user_stack_unwinds_memoized".to_owned(), hits);
        }
        for (name, v) in self.unwinder.runtime_counters() {
            if v > 0 {
                self.counters.insert(name.to_owned(), v);
            }
        }
        let n = self.copies_prev.len() as u64;
        if n > 0 {
            self.count("user_stack_copies_unmatched", n);
        }
        self.copies_prev = std::mem::take(&mut self.copies);
    }

    /// Add to a named counter.
    pub fn count(&mut self, name: &str, n: u64) {
        // Counted per stack on the hot path: allocate the key only the first time.
        match self.counters.get_mut(name) {
            Some(v) => *v += n,
            None => {
                self.counters.insert(name.to_owned(), n);
            }
        }
    }

    /// Count how the kernel bounded a stack copy: a lookup of the stack's mapping
    /// (the costly path), no mapping found, or a kept range gone stale.
    fn count_copy_flags(&mut self, flags: u32) {
        use crate::records::copy_flags;
        if flags & copy_flags::RANGE_LOOKUP != 0 {
            self.count("user_stack_range_lookups", 1);
        }
        if flags & copy_flags::NO_VMA != 0 {
            self.count("user_stack_range_not_found", 1);
        }
        if flags & copy_flags::RANGE_STALE != 0 {
            self.count("user_stack_range_stale", 1);
        }
    }

    /// Is this process a target?
    pub fn is_target(&self, tgid: u32) -> bool {
        self.all_targets || self.targets.contains(&tgid)
    }

    /// How many processes were recorded: the targets, or every process seen in a
    /// system-wide recording.
    pub fn recorded_processes(&self) -> usize {
        if self.all_targets {
            self.latest_row.len()
        } else {
            self.targets.len()
        }
    }

    /// A thread's process and current name, if known.
    pub fn thread(&self, tid: u32) -> Option<(u32, &str)> {
        self.thread_now
            .get(&tid)
            .map(|&(tgid, c)| (tgid, self.strings.get(c)))
    }

    /// Learn an IRQ handler's name.
    pub fn set_irq_name(&mut self, irq: u32, name: &str) {
        let id = self.strings.intern(name);
        self.irq_names.insert(irq, id);
    }

    /// Record a thread's identity; a new row only when it changed.
    pub fn note_thread(&mut self, tid: u32, tgid: u32, comm: &str, ts: u64) {
        if tid == 0 {
            return;
        }
        let cid = self.strings.intern(comm);
        let (since, renamed) = match self.thread_now.get(&tid) {
            Some(&(g, c)) if g == tgid && c == cid => return,
            Some(&(g, _)) => (ts, g == tgid),
            None => (0, false),
        };
        self.thread_now.insert(tid, (tgid, cid));
        self.threads.push(ThreadInfo {
            tid: Tid(tid),
            tgid: Tgid(tgid),
            since: Timestamp(since),
            comm: cid,
        });
        if !self.process_known.contains(&tgid) {
            self.note_process_from_proc(tgid, 0);
        } else if renamed && self.is_target(tgid) {
            // A program that renames a thread often retitles its process too.
            self.note_title(tgid, ts);
        }
    }

    /// Add a process row read from /proc (or from what is known if it is gone).
    pub fn note_process_from_proc(&mut self, tgid: u32, since: u64) {
        self.process_known.insert(tgid);
        let exe = crate::procfs::exe(tgid).unwrap_or_default();
        let cmdline = crate::procfs::cmdline(tgid).unwrap_or_default();
        let parent = crate::procfs::ppid(tgid).map(Tgid);
        let exe = self.strings.intern(&exe);
        let cmdline = self.strings.intern(&cmdline);
        self.push_process(ProcessInfo {
            tgid: Tgid(tgid),
            parent,
            since: Timestamp(since),
            exe,
            cmdline,
        });
    }

    /// The stacks and what symbolizing them needs.
    pub fn stack_sources(&self) -> StackSources<'_> {
        StackSources {
            stacks: &self.stacks,
            mappings: &self.mappings,
            strings: &self.strings,
            jit_at_exit: &self.jit_at_exit,
            frame_names: &self.unwinder,
            files: Some(&self.files),
        }
    }

    /// A process that ran JIT-compiled code exits: read its JIT tables now, before a
    /// later process with its id writes over its perf map. Only processes that mapped
    /// anonymous executable memory or a jitdump file are looked at.
    fn note_jit_at_exit(&mut self, tgid: u32) {
        if self.jit_symbols == crate::stacks::JitSymbols::Off {
            return;
        }
        let mapped = self.stack_sources().mapped_paths(tgid);
        let jit = mapped
            .iter()
            .any(|p| p.is_empty() || p.starts_with('[') || crate::jitmap::is_jitdump(p));
        if jit {
            let t = crate::jitmap::read_tables(tgid, &mapped);
            self.jit_at_exit.insert(tgid, t);
        }
    }

    /// What the walkers of runtimes' frames could not do, one sentence each.
    pub fn runtime_warnings(&self) -> Vec<String> {
        self.unwinder.runtime_warnings()
    }

    /// Add a process row and remember it as the process's latest.
    pub(crate) fn push_process(&mut self, row: ProcessInfo) {
        self.latest_row.insert(row.tgid.0, self.processes.len());
        self.processes.push(row);
    }

    /// A process's latest row, if any.
    pub(crate) fn latest_process(&self, tgid: u32) -> Option<&ProcessInfo> {
        self.latest_row.get(&tgid).map(|&i| &self.processes[i])
    }

    /// Processes whose titles are worth reading again: the recorded ones (every known
    /// process in a system-wide recording).
    pub(crate) fn title_candidates(&self) -> impl Iterator<Item = u32> + '_ {
        let all = self.all_targets;
        self.latest_row
            .keys()
            .copied()
            .filter(move |&g| all || self.targets.contains(&g))
    }

    /// Read a process's executable mappings; returns them for the range table.
    pub fn refresh_mappings(&mut self, tgid: u32, ts: u64) -> Vec<crate::procfs::ExecMapping> {
        let maps = crate::procfs::exec_mappings(tgid);
        let exe = crate::procfs::exe(tgid);
        let changed = self.unwinder.set_mappings(
            tgid,
            maps.iter()
                .map(|m| CodeMapping {
                    start: m.start,
                    end: m.end,
                    offset: m.offset,
                    path: self.files.learn(tgid, m).unwrap_or_else(|| m.path.clone()),
                    program: exe.as_deref() == Some(m.path.as_str()),
                })
                .collect(),
        );
        if changed {
            self.kmemo.forget(tgid);
        }
        self.unwind_stale.remove(&tgid);
        self.jit_recheck.note_maps(tgid, &maps);
        let first = self.has_mappings.insert(tgid);
        for m in &maps {
            if !self.mapping_keys.insert((tgid, m.start, m.end, m.offset)) {
                continue;
            }
            let path = self.strings.intern(&m.path);
            let build_id = if m.path.starts_with('/') {
                crate::stacks::build_id(&m.path)
            } else {
                Vec::new()
            };
            self.mappings.push(Mapping {
                tgid: Tgid(tgid),
                since: Timestamp(if first { 0 } else { ts }),
                start: m.start,
                end: m.end,
                file_offset: m.offset,
                path,
                build_id,
            });
        }
        maps
    }

    fn push(&mut self, ts: u64, cpu: u32, kind: EventKind) {
        self.out.push(Event {
            ts: Timestamp(ts),
            cpu: Cpu(cpu),
            kind,
        });
    }

    fn push_stack(&mut self, ts: u64, cpu: u32, tid: u32, tgid: u32, mut st: RawStack) {
        let kind = StackKind::from_u8(st.kind);
        if st.flags & stack_flags::USER_SKIPPED != 0 {
            self.count("user_stack_skipped_ring_full", 1);
        }
        if st.flags & stack_flags::USER_FAILED != 0 {
            self.count("user_stack_unavailable", 1);
        }
        if st.flags & stack_flags::SCANNED != 0 {
            self.count("user_frames_found_by_scan", 1);
        }
        let user = match st.memo {
            Some(word) => self.memo_stack(word),
            None => self.user_stack(ts, tid, tgid, &mut st),
        };
        let kernel = (!st.kernel.is_empty()).then(|| {
            self.stacks.intern(StackKey {
                tgid: 0,
                frames: st.kernel,
                truncated: st.flags & stack_flags::KERNEL_TRUNCATED != 0,
                leaf: false,
            })
        });
        if user.is_none() && kernel.is_none() {
            return;
        }
        self.push(
            ts,
            cpu,
            EventKind::Stack {
                tid: Tid(tid),
                kind,
                user,
                kernel,
            },
        );
    }

    /// The user stack of a record whose stack the BPF side recognized: its memo id (low
    /// half of `word`) names an earlier unwind.
    fn memo_stack(&mut self, word: u64) -> Option<StackId> {
        self.count_copy_flags((word >> 32) as u32);
        self.count("user_stacks_recognized_in_kernel", 1);
        match self.kmemo.result(word as u32) {
            Some((user, end)) => {
                self.count(end.counter(), 1);
                user
            }
            None => {
                self.count(UnwindEnd::NoCopy.counter(), 1);
                None
            }
        }
    }

    /// The user stack of a record: frames walked by the BPF side, or the copy sent
    /// ahead of it unwound here (and offered to the BPF side's memo).
    fn user_stack(&mut self, ts: u64, tid: u32, tgid: u32, st: &mut RawStack) -> Option<StackId> {
        let mut user_truncated = st.flags
            & (stack_flags::USER_TRUNCATED | stack_flags::USER_FAILED | stack_flags::USER_SKIPPED)
            != 0;
        let mut offer = None;
        // Frames walked in the kernel (frame pointers) keep their symbolization as
        // return addresses; an unwind here says where it started.
        let mut leaf = false;
        if st.flags & stack_flags::COPIED != 0 {
            let copy = self
                .copies
                .remove(&(tid, ts))
                .or_else(|| self.copies_prev.remove(&(tid, ts)));
            let end = match copy {
                Some(copy) if !copy.data.is_empty() => {
                    if self.unwind_stale.contains(&tgid) || !self.unwinder.knows(tgid) {
                        self.refresh_mappings(tgid, ts);
                    }
                    let (mode, depth) = self.user_scope;
                    let mut u = self.unwinder.unwind(tgid, &copy, mode, depth);
                    // Executable mmaps are not traced by default (that needs every
                    // syscall entry), so a library loaded after the mappings were read
                    // shows up here as an address outside them: read them again, once
                    // per process and batch, and unwind with the new modules.
                    if u.unmapped && self.reread.insert(tgid) {
                        self.refresh_mappings(tgid, ts);
                        u = self.unwinder.unwind(tgid, &copy, mode, depth);
                    }
                    leaf = u.frames.first() == Some(&copy.ip);
                    st.user = u.frames;
                    if !u.unmapped
                        && !u.provisional
                        && self.kmemo_on
                        && self.kmemo.wants(tgid, &copy)
                    {
                        offer = Some((copy, u.end));
                    }
                    u.end
                }
                _ => UnwindEnd::NoCopy,
            };
            self.count(end.counter(), 1);
            user_truncated = end != UnwindEnd::Complete;
        }
        if self.jit_recheck.wants_reread(tgid, &st.user) {
            self.refresh_mappings(tgid, ts);
        }
        let user = self.intern_user(tgid, std::mem::take(&mut st.user), user_truncated, leaf);
        // Basis after the recheck: had it changed the modules, the unwinder's memo (and
        // so this offer) is gone.
        if let Some((copy, end)) = offer
            && let Some(basis) =
                self.unwinder
                    .basis(tgid, &copy, self.user_scope.0, self.user_scope.1)
        {
            self.kmemo.install(tgid, &copy, basis, (user, end));
        }
        user
    }

    /// Number a user stack; `leaf`: its first frame is the unwind's start, not a
    /// return address.
    fn intern_user(
        &mut self,
        tgid: u32,
        frames: Vec<u64>,
        truncated: bool,
        leaf: bool,
    ) -> Option<StackId> {
        if frames.is_empty() {
            return None;
        }
        if !self.has_mappings.contains(&tgid) {
            self.maps_pending.insert(tgid);
        }
        Some(self.stacks.intern(StackKey {
            tgid,
            frames,
            truncated,
            leaf,
        }))
    }

    fn waker(&mut self, ctx: WakerCtx, tid: u32) -> Waker {
        match ctx {
            WakerCtx::Thread => Waker::Thread { tid: Tid(tid) },
            WakerCtx::Irq(irq) => {
                let name = match self.irq_names.get(&irq) {
                    Some(&n) => n,
                    None => self.strings.intern(&format!("irq{irq}")),
                };
                Waker::Irq { irq, name }
            }
            WakerCtx::Softirq(v) => Waker::Softirq {
                vec: SoftirqVec(v.min(255) as u8),
            },
            WakerCtx::Timer => Waker::Irq {
                irq: TIMER_IRQ,
                name: self.strings.intern("timer"),
            },
            WakerCtx::Unknown => Waker::Unknown,
        }
    }

    /// Convert one record read on `cpu`.
    pub fn convert(&mut self, cpu: u32, r: Record) {
        let c = cpu as usize;
        if c >= self.last_ts.len() {
            self.last_ts.resize(c + 1, 0);
        }
        self.last_ts[c] = self.last_ts[c].max(r.ts);
        let (ts, tid, tgid) = (r.ts, r.tid, r.tgid);
        match r.body {
            b @ (Body::Switch { .. }
            | Body::Wake { .. }
            | Body::Fork { .. }
            | Body::Exec { .. }
            | Body::Exit
            | Body::Task { .. }) => self.sched_record(ts, cpu, tid, tgid, b),
            b @ (Body::Irq { .. }
            | Body::Softirq { .. }
            | Body::Block { .. }
            | Body::Net { .. }) => self.device_record(ts, cpu, tid, b),
            b => self.other_record(ts, cpu, tid, tgid, b),
        }
        if let Some(st) = r.stack {
            self.push_stack(ts, cpu, tid, tgid, st);
        }
    }

    /// Scheduler and process records: switches, wake-ups, fork, exec, exit, names.
    fn sched_record(&mut self, ts: u64, cpu: u32, tid: u32, tgid: u32, body: Body) {
        match body {
            Body::Switch {
                next_tid,
                prev_state,
                prev_exit_state,
                preempt,
                ..
            } => {
                self.push(
                    ts,
                    cpu,
                    EventKind::SchedSwitch {
                        prev_tid: Tid(tid),
                        prev_state: task_state(prev_state, prev_exit_state, preempt),
                        next_tid: Tid(next_tid),
                    },
                );
            }
            Body::Wake {
                new,
                wakee_tid,
                target_cpu,
                waker,
                ..
            } => {
                let waker = self.waker(waker, tid);
                let kind = EventKind::wakeup(new, Tid(wakee_tid), Cpu(target_cpu), waker);
                self.push(ts, cpu, kind);
            }
            Body::Fork {
                child_tid,
                child_tgid,
            } => {
                if child_tgid != tgid {
                    if self.is_target(tgid) {
                        self.targets.insert(child_tgid);
                    }
                    self.process_known.insert(child_tgid);
                    let parent = self.latest_process(tgid);
                    let (exe, cmdline) =
                        parent.map_or((StringId(0), StringId(0)), |p| (p.exe, p.cmdline));
                    self.push_process(ProcessInfo {
                        tgid: Tgid(child_tgid),
                        parent: Some(Tgid(tgid)),
                        since: Timestamp(ts),
                        exe,
                        cmdline,
                    });
                }
                self.push(
                    ts,
                    cpu,
                    EventKind::Fork {
                        parent_tid: Tid(tid),
                        parent_tgid: Tgid(tgid),
                        child_tid: Tid(child_tid),
                        child_tgid: Tgid(child_tgid),
                    },
                );
            }
            Body::Exec { comm, filename } => {
                let comm_id = self.strings.intern(&comm);
                let file_id = self.strings.intern(&filename);
                let cmdline = crate::procfs::cmdline(tgid).unwrap_or_else(|| filename.clone());
                let cmdline = self.strings.intern(&cmdline);
                let parent = self.latest_process(tgid).and_then(|p| p.parent);
                self.process_known.insert(tgid);
                self.push_process(ProcessInfo {
                    tgid: Tgid(tgid),
                    parent,
                    since: Timestamp(ts),
                    exe: file_id,
                    cmdline,
                });
                self.note_thread(tid, tgid, &comm, ts);
                self.push(
                    ts,
                    cpu,
                    EventKind::Exec {
                        tid: Tid(tid),
                        comm: comm_id,
                        filename: file_id,
                    },
                );
            }
            Body::Exit => {
                if tid == tgid {
                    self.unwinder.forget(tgid);
                    self.kmemo.forget(tgid);
                    self.note_jit_at_exit(tgid);
                }
                self.push(ts, cpu, EventKind::Exit { tid: Tid(tid) })
            }
            Body::Task { comm } => self.note_thread(tid, tgid, &comm, ts),
            _ => {}
        }
    }

    /// Interrupt, block and network records.
    fn device_record(&mut self, ts: u64, cpu: u32, tid: u32, body: Body) {
        match body {
            Body::Irq {
                entry,
                irq,
                ret,
                name,
            } => {
                if entry {
                    let name = if name.is_empty() {
                        format!("irq{irq}")
                    } else {
                        name
                    };
                    let id = self.strings.intern(&name);
                    self.irq_names.insert(irq, id);
                    self.push(ts, cpu, EventKind::IrqEntry { irq, name: id });
                } else {
                    self.push(
                        ts,
                        cpu,
                        EventKind::IrqExit {
                            irq,
                            handled: ret != 0,
                        },
                    );
                }
            }
            Body::Softirq { entry, vec } => {
                let vec = SoftirqVec(vec.min(255) as u8);
                let kind = if entry {
                    EventKind::SoftirqEntry { vec }
                } else {
                    EventKind::SoftirqExit { vec }
                };
                self.push(ts, cpu, kind);
            }
            Body::Block {
                issue,
                dev,
                sector,
                bytes,
                cmd_flags,
                error,
            } => {
                let (dev, op) = (DevId(dev), block_op(cmd_flags));
                let kind = if issue {
                    EventKind::BlockIssue {
                        tid: Tid(tid),
                        dev,
                        sector,
                        bytes,
                        op,
                    }
                } else {
                    EventKind::BlockComplete {
                        dev,
                        sector,
                        bytes,
                        op,
                        error,
                    }
                };
                self.push(ts, cpu, kind);
            }
            Body::Net { xmit, dev, bytes } => {
                if self.net_devs.insert(dev.clone()) {
                    // The NIC pseudo thread's capacity; absent for virtual devices.
                    if let Some(mbps) = crate::procfs::link_mbps(&dev) {
                        self.count(&format!("net.{dev}.link_mbps"), mbps);
                    }
                }
                let dev = self.strings.intern(&dev);
                let tid = Tid(tid);
                let kind = if xmit {
                    EventKind::NetXmit { tid, dev, bytes }
                } else {
                    EventKind::NetRecv { tid, dev, bytes }
                };
                self.push(ts, cpu, kind);
            }
            _ => {}
        }
    }

    /// Syscalls, mapping changes, stack copies and samples.
    fn other_record(&mut self, ts: u64, cpu: u32, tid: u32, tgid: u32, body: Body) {
        match body {
            Body::SysEnter {
                nr,
                arg0,
                obj,
                obj_kind,
            } => self.push(
                ts,
                cpu,
                EventKind::SyscallEnter {
                    tid: Tid(tid),
                    nr,
                    args: [arg0, obj, obj_kind as u64],
                },
            ),
            Body::SysExit { nr, ret } => self.push(
                ts,
                cpu,
                EventKind::SyscallExit {
                    tid: Tid(tid),
                    nr,
                    ret,
                },
            ),
            Body::MapsChanged { reason } => {
                if reason == 3 {
                    self.targets.insert(tgid);
                }
                self.maps_pending.insert(tgid);
                self.unwind_stale.insert(tgid);
            }
            Body::UserStack(copy) => {
                self.count("user_stack_copies", 1);
                self.count("user_stack_bytes_copied", copy.data.len() as u64);
                self.count_copy_flags(copy.flags);
                self.copies.insert((tid, ts), copy);
            }
            // The stack trailer below is the whole event.
            Body::Sample => self.count("cpu_samples", 1),
            b @ (Body::SockSend { .. } | Body::SockReady { .. }) => {
                if let Some(kind) = crate::socket_events::socket_event(&mut self.flows, tid, &b) {
                    self.push(ts, cpu, kind);
                }
            }
            b @ (Body::GoRun { .. }
            | Body::GoPark { .. }
            | Body::GoNetWait { .. }
            | Body::GoReady { .. }) => {
                let tables = crate::go_events::Tables {
                    strings: &mut self.strings,
                    stacks: &mut self.stacks,
                    flows: &mut self.flows,
                };
                if let Some(kind) = self.go.event(tables, tid, tgid, &b) {
                    self.push(ts, cpu, kind);
                }
            }
            b @ (Body::Signal { .. } | Body::Timer { .. }) => {
                if let Some(kind) = crate::signal_events::signal_timer_event(tid, b) {
                    self.push(ts, cpu, kind);
                }
            }
            _ => {}
        }
    }

    /// A `lost` event for `count` records lost on `cpu`, placed at its last timestamp.
    pub fn lost(&mut self, cpu: u32, count: u64, now: u64) {
        let ts = self
            .last_ts
            .get(cpu as usize)
            .copied()
            .filter(|&t| t > 0)
            .unwrap_or(now);
        self.push(ts, cpu, EventKind::Lost { count });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn states_match_the_tracepoint_report() {
        assert_eq!(task_state(0, 0, true), TaskState::PREEMPTED);
        assert_eq!(task_state(0, 0, false), TaskState::RUNNABLE);
        assert_eq!(task_state(1, 0, false), TaskState::INTERRUPTIBLE);
        assert_eq!(task_state(2, 0, false), TaskState::UNINTERRUPTIBLE);
        assert_eq!(task_state(0x402, 0, false), TaskState::IDLE);
        assert_eq!(task_state(0x80, 0x10, false), TaskState::DEAD);
        assert_eq!(task_state(0x80, 0x20, false), TaskState::ZOMBIE);
        // TASK_WAKEKILL | TASK_UNINTERRUPTIBLE (a killable sleep) reports D.
        assert_eq!(task_state(0x102, 0, false), TaskState::UNINTERRUPTIBLE);
    }

    #[test]
    fn block_flags_decode() {
        let op = block_op(1 | 1 << 11 | 1 << 17);
        assert_eq!(op.kind, BlockOpKind::Write);
        assert!(op.sync && op.fua && !op.preflush);
        assert_eq!(block_op(2 | 1 << 18).kind, BlockOpKind::Flush);
    }

    #[test]
    fn threads_get_rows_only_when_they_change() {
        let mut c = Converter::new(ConvertOptions {
            all_targets: true,
            ..Default::default()
        });
        c.note_thread(10, 10, "a", 5);
        c.note_thread(10, 10, "a", 6);
        c.note_thread(10, 10, "b", 7);
        assert_eq!(c.threads.len(), 2);
        assert_eq!(c.threads[0].since, Timestamp(0));
        assert_eq!(c.threads[1].since, Timestamp(7));
        assert_eq!(c.strings.get(c.threads[1].comm), "b");
    }

    #[test]
    fn a_copy_waits_one_batch_for_its_record() {
        let mut c = Converter::new(ConvertOptions {
            all_targets: true,
            ..Default::default()
        });
        let rec = |ts: u64, body: Body, stack: Option<RawStack>| Record {
            ts,
            tid: 7,
            tgid: 7,
            body,
            stack,
        };
        let copy = || {
            Body::UserStack(StackCopy {
                data: vec![0; 64],
                ..StackCopy::default()
            })
        };
        let copied = RawStack {
            flags: stack_flags::COPIED,
            ..RawStack::default()
        };
        // The drain ended between a copy and its record.
        c.convert(0, rec(1, copy(), None));
        c.end_batch();
        c.convert(0, rec(1, Body::Task { comm: "t".into() }, Some(copied)));
        c.end_batch();
        assert_eq!(c.counters.get("unwind_failed_no_copy"), None);
        assert_eq!(c.counters.get("user_stack_copies_unmatched"), None);
        // A copy whose record never comes is dropped after the next batch.
        c.convert(0, rec(2, copy(), None));
        c.end_batch();
        assert_eq!(c.counters.get("user_stack_copies_unmatched"), None);
        c.end_batch();
        assert_eq!(c.counters.get("user_stack_copies_unmatched"), Some(&1));
    }

    #[test]
    fn how_a_stack_copy_was_bounded_is_counted() {
        use crate::records::copy_flags;
        let mut c = Converter::new(ConvertOptions {
            all_targets: true,
            ..Default::default()
        });
        let mut copy = |ts: u64, flags: u32| {
            let body = Body::UserStack(StackCopy {
                flags,
                data: vec![0; 64],
                ..StackCopy::default()
            });
            c.convert(
                0,
                Record {
                    ts,
                    tid: 7,
                    tgid: 7,
                    body,
                    stack: None,
                },
            );
        };
        copy(1, copy_flags::RANGE_LOOKUP);
        copy(2, 0);
        copy(3, 0);
        copy(4, copy_flags::RANGE_STALE | copy_flags::RANGE_LOOKUP);
        copy(5, copy_flags::RANGE_LOOKUP | copy_flags::NO_VMA);
        let n = |k: &str| c.counters.get(k).copied();
        assert_eq!(n("user_stack_copies"), Some(5));
        assert_eq!(n("user_stack_bytes_copied"), Some(320));
        assert_eq!(n("user_stack_range_lookups"), Some(3));
        assert_eq!(n("user_stack_range_stale"), Some(1));
        assert_eq!(n("user_stack_range_not_found"), Some(1));
    }
}
