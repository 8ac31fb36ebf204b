//! A recording from start to finished file: targets, the drain loop, flight dumps.

use crate::config::{RecordConfig, Target};
use crate::convert::Converter;
use crate::launch::{KILL_GRACE, Launched, Stopped};
use crate::probes::{Family, Probes};
use crate::records::{Record, parse};
use crate::sink::{Dump, StreamSink, clock_ns, header};
use crate::spool::Spools;
use crate::stacks::Symbols;
use crate::titles::TitleWatch;
use crate::watch::{Watch, WatchError};
use crate::{RecordError, procfs, signals};
use causeway_flight::{Condition, Flight};
use causeway_format::Tid;
use causeway_format::{BPF_RUN_NS, BPF_RUNS};
use libbpf_rs::RingBufferBuilder;
use std::cell::RefCell;
use std::path::PathBuf;
use std::rc::Rc;
use std::time::{Duration, Instant};

/// Trace counter: handler runs the kernel skipped because the same handler was already
/// running on that CPU (see `Probes::handler_misses`).
pub const HANDLER_MISSES: &str = "bpf_handler_misses";

/// The trace counter of timer arms that displaced another timer not yet due from the
/// kernel-side table of armed timers (an upper bound of the expiries missing),
/// cumulative like `HANDLER_MISSES`.
pub const UNTRACKED_TIMERS: &str = "timers_untracked";

/// How often a watch lists the watched process's threads for new ones.
const WATCH_POLL: Duration = Duration::from_millis(10);

/// Least time between two dumps caused by a `--trigger` condition.
pub use causeway_flight::AUTO_DUMP_HOLDOFF;

/// Where events go.
#[derive(Clone, Debug)]
pub enum Output {
    /// One trace file with everything.
    File(PathBuf),
    /// Flight recorder: keep the last `capacity` events, dump on triggers to files
    /// named after `base`.
    Flight {
        /// Events kept.
        capacity: usize,
        /// Base name of dump files.
        base: PathBuf,
        /// Automatic trigger, besides SIGUSR1.
        trigger: Option<Condition>,
    },
}

/// A recording request.
pub struct Request {
    /// What to record.
    pub config: RecordConfig,
    /// Where to write.
    pub output: Output,
    /// Stop after this long (counted from `start_at` when there is one).
    pub duration: Option<Duration>,
    /// Begin at this wall-clock time: the probes are attached just before it, a
    /// launched command is released at it and the duration counts from it, so that
    /// recorders started by any means on several hosts cover the same seconds.
    pub start_at: Option<std::time::SystemTime>,
    /// Launch and follow this command (then `config.target` is ignored).
    pub command: Option<Vec<String>>,
    /// The command line stored in the trace header.
    pub command_line: Vec<String>,
    /// Leave the launched command running when the recording ends before it (the
    /// default ends it: see [`Launched::terminate`]).
    pub keep_command: bool,
    /// Send the launched command's standard output to standard error, so that this
    /// process's standard output holds only its own output (`--json`).
    pub command_stdout_to_stderr: bool,
    /// Watch this variable of the (one) recorded process with hardware watchpoints:
    /// its accesses go into the trace as data-flag events.
    pub watch: Option<crate::watch::WatchSpec>,
}

/// Things worth telling the user while recording.
#[derive(Clone, Debug)]
pub enum Notice {
    /// Probes attached.
    Started {
        /// Tracepoint family in use.
        family: Family,
        /// PIDs recorded from the start.
        pids: Vec<u32>,
    },
    /// The verifier refused the BTF tracepoint programs of these tracepoints: they run
    /// as raw tracepoints (the same records; a little more cost per event).
    RawFallback(Vec<String>),
    /// About once a second.
    Progress {
        /// Events converted so far.
        events: u64,
        /// Records lost so far.
        lost: u64,
    },
    /// The reader fell behind: a spool was this full when it got to it (records are
    /// lost when one fills). Said once, before any loss, so the user can act.
    Backlog {
        /// When, from the start of the recording.
        at: Duration,
        /// The spool's share that held unread records.
        fill: f64,
        /// The reader's CPU time and its time waiting for a CPU so far.
        reader: Option<ReaderTime>,
    },
    /// A flight-recorder dump was written.
    Dumped(Dump),
    /// A file was at an output path: it was renamed to this path (`PATH.old`) when
    /// the new output replaced it.
    KeptPrevious(PathBuf),
    /// The trace is written to this temporary file until the recording ends cleanly
    /// (then renamed onto the output path); a killed recording leaves it behind.
    Writing(PathBuf),
}

/// The reader thread's time on CPU and its time runnable, waiting for one: when it
/// waits longer than it runs, the machine is saturated and the buffers must hold the
/// backlog.
pub use causeway_procfs::process::SchedTime as ReaderTime;

/// A spool this full when the reader gets to it is said to be falling behind.
const BACKLOG_WARN: f64 = 0.5;

/// Say that the reader is falling behind if a spool was [`BACKLOG_WARN`] full when
/// drained; true once said.
fn note_backlog(
    spools: &mut Spools,
    start: Instant,
    sched_base: Option<(u64, u64)>,
    notify: &mut dyn FnMut(Notice),
) -> bool {
    let fill = spools.take_peak_fill();
    if fill < BACKLOG_WARN {
        return false;
    }
    notify(Notice::Backlog {
        at: start.elapsed(),
        fill,
        reader: ReaderTime::since(sched_base),
    });
    true
}

/// The outcome of a recording.
#[derive(Clone, Debug)]
pub struct Summary {
    /// The trace (streaming mode).
    pub path: Option<PathBuf>,
    /// Flight-recorder dumps.
    pub dumps: Vec<Dump>,
    /// Events converted.
    pub events: u64,
    /// Records lost per CPU.
    pub lost_per_cpu: Vec<u64>,
    /// Distinct stacks.
    pub stacks: usize,
    /// Tracepoint family used.
    pub family: Family,
    /// Wait status of the launched command.
    pub child_status: Option<i32>,
    /// The recording ended first and the recorder ended the command this way.
    pub stopped_command: Option<Stopped>,
    /// Processes recorded (seen at the start or followed later); 0 means the trace
    /// holds nothing of what was asked for (`--comm` of a program that never ran).
    pub target_processes: usize,
    /// Wall time recorded.
    pub elapsed: Duration,
    /// Recorder counters (also in the trace's statistics): unwinding outcomes by
    /// reason, stacks whose copy went missing, records that did not parse.
    pub counters: std::collections::BTreeMap<String, u64>,
    /// JVMs asked to write their perf map (`jcmd PID Compiler.perfmap`) to name their
    /// JIT-compiled frames.
    pub jvms_asked: Vec<u32>,
    /// The watched variable's address and length, if `--watch` found it mapped.
    pub watched: Option<(u64, u8)>,
    /// Go programs recorded, by process, and whether their goroutines were followed.
    pub go: Vec<(u32, crate::gotrack::GoOutcome)>,
    /// What the walkers of runtimes' frames (the JVM's) could not do, one sentence
    /// each.
    pub runtime_warnings: Vec<String>,
    /// The reader's time on CPU and waiting for one, over the recording.
    pub reader: Option<ReaderTime>,
}

enum Sink {
    Stream(Box<StreamSink>),
    Flight(Box<Flight>),
}

/// Parsed records waiting for conversion, by CPU, and records that did not parse.
/// Shared with the ring callbacks, which run inside `consume` on this thread.
#[derive(Default)]
struct Pending {
    records: Vec<(u32, Record)>,
    /// Records read from the BPF rings in this pass, put after the spools' (see
    /// `drain_all`).
    from_rings: Vec<(u32, Record)>,
    unparsed: u64,
}

/// Everything a running recording holds.
struct Session {
    cfg: RecordConfig,
    child: Option<Launched>,
    initial: Vec<u32>,
    probes: Option<Probes>,
    family: Family,
    hdr: causeway_format::Header,
    sink: Sink,
    conv: Converter,
    symbols: Symbols,
    lost_seen: Vec<u64>,
    events: u64,
    dumps: Vec<Dump>,
    titles: TitleWatch,
    cgroups: crate::cgroups::CgroupWatch,
    reclaim: causeway_cgroups::ReclaimWatch,
    entering: Option<crate::cgroups::Entering>,
    watch: Option<Watch>,
    go: crate::gotrack::GoTracker,
}

/// How long before `start_at` the probes are attached (attaching takes a fraction of
/// a second; the events of this lead are kept, so the trace covers at least the window
/// asked for).
const ATTACH_LEAD: Duration = Duration::from_secs(2);

/// Sleep until the wall clock reaches `at`, or until SIGINT/SIGTERM.
fn wait_until(at: std::time::SystemTime) {
    while !signals::stop_requested() {
        let Ok(left) = at.duration_since(std::time::SystemTime::now()) else {
            return;
        };
        std::thread::sleep(left.min(Duration::from_millis(100)));
    }
}

/// Record until the command ends, the duration passes, or SIGINT/SIGTERM.
pub fn record(req: Request, notify: &mut dyn FnMut(Notice)) -> Result<Summary, RecordError> {
    signals::install();
    if let Some(at) = req.start_at {
        wait_until(at.checked_sub(ATTACH_LEAD).unwrap_or(at));
    }
    let mut s = start(&req, notify)?;
    let pending = Rc::new(RefCell::new(Pending::default()));
    let ring = ring_reader(s.probes.as_ref().expect("probes attached"), &pending)?;
    let mut spools = s.probes.as_ref().expect("probes attached").spools(&s.cfg)?;
    let mut start = Instant::now();
    let mut last_progress = Instant::now();
    let raw_fallback = s
        .probes
        .as_ref()
        .map(|p| p.raw_fallback.clone())
        .unwrap_or_default();
    if !raw_fallback.is_empty() {
        notify(Notice::RawFallback(raw_fallback));
    }
    notify(Notice::Started {
        family: s.family,
        pids: s.initial.clone(),
    });
    let mut released = req.start_at.is_none();
    if released {
        release_child(&mut s)?;
    }
    reader_priority(s.cfg.reader_rt_priority);
    let mut stopping = false;
    let sched_base = causeway_procfs::process::own_thread_sched();
    let mut backlog_said = false;
    // A watched process's new threads are found at each pass (`/proc/PID/task`); at the
    // drain interval (100 ms) the first rounds of a program that starts its threads and
    // soon writes the flag went unwatched, so a watch looks ten times as often.
    let interval = match s.watch {
        Some(_) => s.cfg.poll_interval.min(WATCH_POLL),
        None => s.cfg.poll_interval,
    };
    loop {
        let _ = ring.poll(interval);
        drain_all(&ring, &mut spools, &pending);
        if !stopping && !backlog_said {
            backlog_said = note_backlog(&mut spools, start, sched_base, notify);
        }
        let mut batch = s.convert_pending(&mut pending.borrow_mut(), stopping);
        if let Some(w) = s.watch.as_mut() {
            batch.extend(w.poll()?);
        }
        s.events += batch.len() as u64;
        s.deliver(&batch, notify)?;
        if last_progress.elapsed() >= Duration::from_secs(1) {
            last_progress = Instant::now();
            // Asking the kernel costs one system call per program (~80 of them):
            // done per batch it was a fifth of the reader's CPU on a busy target.
            if let Some(p) = s.probes.as_ref() {
                note_kernel_counts(&mut s.conv, p);
            }
            notify(Notice::Progress {
                events: s.events,
                lost: s.lost_seen.iter().sum(),
            });
        }
        if stopping {
            break;
        }
        if !released
            && req
                .start_at
                .is_none_or(|at| std::time::SystemTime::now() >= at)
        {
            release_child(&mut s)?;
            start = Instant::now();
            released = true;
        }
        if s.should_stop(&req, start, released) {
            // Detach first so nothing new arrives, then drain once more; the kernel's
            // count of skipped handler runs is read last, before the programs go.
            if let Some(p) = s.probes.as_ref() {
                note_kernel_counts(&mut s.conv, p);
            }
            s.probes.take();
            stopping = true;
        }
    }
    let elapsed = start.elapsed();
    let reader = ReaderTime::since(sched_base);
    // Nothing watched because the symbol never showed up: an error, not a trace.
    if let Some(e) = s.watch.as_ref().and_then(Watch::unresolved) {
        if let Sink::Stream(st) = &s.sink
            && let Some(t) = st.temp_path()
        {
            let _ = std::fs::remove_file(t);
        }
        return Err(e.into());
    }
    // Stopped by duration or signal while the command still runs: end it (unless asked
    // not to) before writing the rest of the trace, so it does not run on unrecorded
    // while the tables are symbolized.
    let mut child = s.child.take();
    let stopped = match child.as_mut() {
        Some(c) if !req.keep_command => c.terminate(KILL_GRACE),
        _ => None,
    };
    let mut summary = s.finish(elapsed, notify)?;
    summary.reader = reader;
    summary.child_status = child.as_mut().and_then(|c| c.poll_exit());
    summary.stopped_command = stopped;
    Ok(summary)
}

/// Launch the command (if any), find the targets, attach the probes, create the output
/// and a converter that knows the targets' threads and mappings.
fn start(req: &Request, notify: &mut dyn FnMut(Notice)) -> Result<Session, RecordError> {
    // Refuse an output path holding something other than a trace before anything runs.
    if let Output::File(p) = &req.output {
        crate::outfile::check_replaceable(p)?;
    }
    let mut cfg = req.config.clone();
    let mut child = match &req.command {
        Some(argv) => {
            // A watched command stops at its exec, to be watched from there on.
            let mut l = Launched::fork_with(
                argv,
                req.watch.is_some(),
                req.command_stdout_to_stderr,
                !req.keep_command,
            )?;
            if req.keep_command {
                l.keep_running();
            }
            cfg.target = Target::Pids(vec![l.pid]);
            Some(l)
        }
        None => None,
    };
    let initial = initial_targets(&cfg, child.is_some())?;
    let mut watch = match &req.watch {
        Some(spec) => Some(start_watch(spec, child.as_ref(), &initial)?),
        None => None,
    };
    let tracked: &[u32] = if matches!(cfg.target, Target::Pids(_)) {
        &initial
    } else {
        &[]
    };
    // Read the targets' threads and mappings (and parse their unwind tables) before the
    // probes attach: on a busy server the rings fill within tens of milliseconds, and
    // this work done after attaching delayed the first drain enough to lose events.
    let (mut conv, maps) = seed_converter(&cfg, &initial, child.is_some());
    let probes = match Probes::start(&cfg, tracked) {
        Ok(p) => p,
        Err(e) => {
            if let Some(c) = child.as_mut() {
                c.kill();
            }
            return Err(e);
        }
    };
    let scope = if matches!(cfg.target, Target::All) {
        causeway_format::Scope::System
    } else {
        causeway_format::Scope::Processes
    };
    let mut hdr = header(req.command_line.clone(), scope);
    hdr.target_pids = initial.clone();
    if let Target::Comm(name) = &cfg.target {
        hdr.target_comm = Some(name.clone());
    }
    hdr.waker_stack_sampling = cfg.waker_sampling_in_effect();
    let sink = match open_sink(&req.output, &hdr, notify) {
        Ok(s) => s,
        Err(e) => {
            if let Some(c) = child.as_mut() {
                c.kill();
            }
            return Err(e);
        }
    };
    for (pid, m) in &maps {
        install_ranges(&mut conv, &probes, *pid, m);
    }
    // Go programs are looked for even with the goroutine group off, so that the trace
    // says which ones were recorded without their goroutines.
    let mut go = crate::gotrack::GoTracker::new(cfg.events.go);
    match &child {
        Some(c) => go.follow_exe(&probes, &mut conv, c.pid, &c.program),
        None => {
            for &pid in &initial {
                go.follow(&probes, &mut conv, pid);
            }
        }
    }
    let nrings = probes.rings().len();
    Ok(Session {
        symbols: Symbols::new(cfg.debug_dirs.clone()).with_jit(cfg.jit_symbols),
        family: probes.family,
        probes: Some(probes),
        cfg,
        child,
        initial,
        hdr,
        sink,
        conv,
        lost_seen: vec![0; nrings],
        events: 0,
        dumps: Vec::new(),
        titles: TitleWatch::default(),
        cgroups: crate::cgroups::CgroupWatch::default(),
        reclaim: causeway_cgroups::ReclaimWatch::default(),
        entering: req.config.cgroup.clone().map(crate::cgroups::Entering::new),
        watch: watch.take(),
        go,
    })
}

/// Let the launched command exec. A watched one stops at its exec (it was forked
/// so): the watch attaches there, before the program's first instruction, and the
/// command runs on.
fn release_child(s: &mut Session) -> Result<(), RecordError> {
    let Some(c) = s.child.as_mut() else {
        return Ok(());
    };
    c.release();
    if let Some(w) = s.watch.as_mut()
        && c.wait_exec_stop()
    {
        let attached = w.attach_at_exec();
        c.detach();
        attached?;
    }
    Ok(())
}

/// The watch of the one recorded process. A process given with -p is attached to
/// now, so a refused breakpoint stops the recording before it starts; a launched
/// command is attached once it has exec'd (at the first drains).
fn start_watch(
    spec: &crate::watch::WatchSpec,
    child: Option<&Launched>,
    initial: &[u32],
) -> Result<Watch, RecordError> {
    let (pid, exe) = match (child, initial) {
        (Some(c), _) => (c.pid, c.program.clone()),
        (None, [pid]) => {
            let exe = procfs::exe(*pid).ok_or(RecordError::NoSuchProcess(*pid))?;
            (*pid, PathBuf::from(exe))
        }
        _ => return Err(WatchError::OneProcess.into()),
    };
    let mut w = Watch::new(pid, &exe, spec, child.is_none())?;
    if child.is_none() {
        // Hits before the recording starts are dropped: only the attach matters here.
        w.poll()?;
        if w.armed().is_none() {
            return Err(WatchError::NotMapped(pid).into());
        }
    }
    Ok(w)
}

/// The processes recorded from the start.
fn initial_targets(cfg: &RecordConfig, launched: bool) -> Result<Vec<u32>, RecordError> {
    Ok(match &cfg.target {
        Target::Pids(p) => {
            if !launched && let Some(&missing) = p.iter().find(|&&p| !procfs::exists(p)) {
                return Err(RecordError::NoSuchProcess(missing));
            }
            p.clone()
        }
        Target::Comm(name) => procfs::pids_named(name),
        Target::All => Vec::new(),
    })
}

fn open_sink(
    output: &Output,
    hdr: &causeway_format::Header,
    notify: &mut dyn FnMut(Notice),
) -> Result<Sink, RecordError> {
    Ok(match output {
        Output::File(p) => {
            let s = StreamSink::create(p, hdr)?;
            if let Some(temp) = s.temp_path() {
                notify(Notice::Writing(temp.to_path_buf()));
            }
            Sink::Stream(Box::new(s))
        }
        Output::Flight {
            capacity,
            base,
            trigger,
        } => Sink::Flight(Box::new(Flight::new(*capacity, base, trigger.clone()))),
    })
}

/// A converter that knows the interrupt names, the targets, the threads of processes
/// attached to (`-p`), and their mappings.
fn seed_converter(
    cfg: &RecordConfig,
    initial: &[u32],
    launched: bool,
) -> (Converter, Vec<(u32, Vec<procfs::ExecMapping>)>) {
    let mut c = Converter::new(crate::convert::ConvertOptions::of(cfg));
    for (irq, name) in procfs::irq_names() {
        c.set_irq_name(irq, &name);
    }
    let mut maps = Vec::new();
    for &pid in initial {
        c.targets.insert(pid);
        if !launched {
            for tid in procfs::threads(pid) {
                if let Some(comm) = procfs::comm(pid, tid) {
                    c.note_thread(tid, pid, &comm, 0);
                }
            }
        }
        // Read now: a launched command still shows causeway's own mappings, which its
        // first waits (before exec) have stacks in.
        maps.push((pid, c.refresh_mappings(pid, 0)));
    }
    (c, maps)
}

/// A reader of every CPU's ring that parses records into `pending`.
fn ring_reader(
    probes: &Probes,
    pending: &Rc<RefCell<Pending>>,
) -> Result<libbpf_rs::RingBuffer<'static>, RecordError> {
    let mut builder = RingBufferBuilder::new();
    for (cpu, map) in probes.rings().iter().enumerate() {
        let p = pending.clone();
        builder
            .add(map, move |data: &[u8]| {
                let mut p = p.borrow_mut();
                if wakes_reader_only(data) {
                    return 0;
                }
                match parse(data) {
                    Ok(r) => p.from_rings.push((cpu as u32, r)),
                    Err(_) => p.unparsed += 1,
                }
                0
            })
            .map_err(|e| RecordError::Load(format!("ring reader: {e}")))?;
    }
    builder
        .build()
        .map_err(|e| RecordError::Load(format!("ring reader: {e}")))
}

/// A bare header the programs send to wake the reader for the spools.
fn wakes_reader_only(data: &[u8]) -> bool {
    const WAKE: u16 = crate::skel::types::rec_type::REC_WAKE_READER.0 as u16;
    data.len() >= 10 && u16::from_ne_bytes([data[8], data[9]]) == WAKE
}

/// Read everything the kernel side holds: the spools, then the BPF rings. A program
/// whose spool refused a record sends the rest of its records to its ring, so a stack
/// copy taken before its record is read first; the records are sorted by time (a
/// stable sort) before they are converted.
fn drain_all(ring: &libbpf_rs::RingBuffer<'_>, spools: &mut Spools, pending: &RefCell<Pending>) {
    let mut guard = pending.borrow_mut();
    let p = &mut *guard;
    let bad = spools.drain(|cpu, data| match parse(data) {
        Ok(r) => p.records.push((cpu, r)),
        Err(_) => p.unparsed += 1,
    });
    p.unparsed += bad;
    drop(guard);
    let _ = ring.consume();
    let mut p = pending.borrow_mut();
    let mut rest = std::mem::take(&mut p.from_rings);
    p.records.append(&mut rest);
}

impl Session {
    /// Convert the records read so far, in time order (rings are drained one after the
    /// other, and a thread's name or a process's birth reported on one CPU must not be
    /// overtaken by older news from another); then bring mappings, losses and titles
    /// up to date. `last`: the recording is ending.
    fn convert_pending(
        &mut self,
        pending: &mut Pending,
        last: bool,
    ) -> Vec<causeway_format::Event> {
        let now = clock_ns(libc::CLOCK_MONOTONIC);
        let c = &mut self.conv;
        if pending.unparsed > 0 {
            c.count("unparsed_records", std::mem::take(&mut pending.unparsed));
        }
        let mut recs = std::mem::take(&mut pending.records);
        recs.sort_by_key(|(_, r)| r.ts);
        for (cpu, r) in recs {
            c.convert(cpu, r);
        }
        c.end_batch();
        if let (Some(p), Some(e)) = (self.probes.as_ref(), self.entering.as_mut()) {
            e.poll(c, p, now);
        }
        if let Some(p) = self.probes.as_ref() {
            let maps: Vec<u32> = std::mem::take(&mut c.maps_pending).into_iter().collect();
            refresh_maps(c, p, now, &maps);
            p.apply_memo(c.kmemo.take_ops());
            for &tgid in &maps {
                if c.is_target(tgid) {
                    self.go.follow(p, c, tgid);
                }
            }
            for (cpu, &n) in p.lost_per_cpu().iter().enumerate() {
                if cpu < self.lost_seen.len() && n > self.lost_seen[cpu] {
                    c.lost(cpu as u32, n - self.lost_seen[cpu], now);
                    self.lost_seen[cpu] = n;
                }
            }
        }
        self.titles.tick(c, now, last);
        crate::cgroups::tick(&mut self.cgroups, c, now, last);
        if let Some(p) = self.probes.as_ref() {
            self.reclaim.tick(c, || p.reclaim_times(), now, last);
        }
        std::mem::take(&mut c.out)
    }

    /// Hand a batch to the output: the trace file, or the flight recorder's window
    /// (dumping it when asked or when the trigger condition fires).
    fn deliver(
        &mut self,
        batch: &[causeway_format::Event],
        notify: &mut dyn FnMut(Notice),
    ) -> Result<(), RecordError> {
        let c = &self.conv;
        let f = match &mut self.sink {
            Sink::Stream(s) => return s.events(c, batch),
            Sink::Flight(f) => f,
        };
        f.push(batch);
        let asked = signals::take_dump_requests() > 0;
        let comm = f.comm().map(str::to_owned);
        let wanted = |t: Tid| target_thread(c, t, comm.as_deref());
        let now = clock_ns(libc::CLOCK_MONOTONIC);
        let Some(due) = f.due(batch, asked, now, &wanted) else {
            return Ok(());
        };
        // Signalled before the window is written (symbolizing takes a while), so the
        // in-process buffers are taken at the moment the condition fired.
        let inproc_asked = if due.fired {
            crate::inproc::ask_dumps(c.title_candidates())
        } else {
            Vec::new()
        };
        let path = f.next_path();
        let mut d = crate::sink::write_dump(
            path,
            f.window(),
            (c, &mut self.symbols),
            &self.hdr,
            due.mark,
        )?;
        d.inproc_asked = inproc_asked;
        if let Some(old) = &d.kept_old {
            notify(Notice::KeptPrevious(old.clone()));
        }
        notify(Notice::Dumped(d.clone()));
        self.dumps.push(d);
        Ok(())
    }

    /// The command ended, the processes given with -p are gone, the duration passed,
    /// or the user asked to stop.
    fn should_stop(&mut self, req: &Request, start: Instant, started: bool) -> bool {
        let child_done = self.child.as_mut().is_some_and(|c| c.poll_exit().is_some());
        let pids_gone = self.child.is_none()
            && matches!(self.cfg.target, Target::Pids(_))
            && self.initial.iter().all(|&p| !procfs::alive(p));
        let timed_out = started && req.duration.is_some_and(|d| start.elapsed() >= d);
        child_done || pids_gone || timed_out || signals::stop_requested()
    }

    /// Finish the trace file (streaming mode) and sum up.
    fn finish(
        mut self,
        elapsed: Duration,
        notify: &mut dyn FnMut(Notice),
    ) -> Result<Summary, RecordError> {
        if let Some(w) = &self.watch {
            for (k, v) in w.counters() {
                self.conv.count(k, *v);
            }
        }
        let watched = self.watch.as_ref().and_then(Watch::armed);
        let path = match self.sink {
            Sink::Stream(s) => {
                let (path, kept) = s.finish(&self.conv, &mut self.symbols)?;
                if let Some(old) = kept {
                    notify(Notice::KeptPrevious(old));
                }
                Some(path)
            }
            Sink::Flight(..) => None,
        };
        Ok(Summary {
            path,
            dumps: self.dumps,
            events: self.events,
            lost_per_cpu: self.lost_seen,
            stacks: self.conv.stacks.len(),
            family: self.family,
            child_status: self.child.as_mut().and_then(|c| c.poll_exit()),
            stopped_command: None,
            target_processes: self.conv.recorded_processes(),
            elapsed,
            counters: self
                .conv
                .counters
                .iter()
                .map(|(k, v)| (k.clone(), *v))
                .chain(
                    self.symbols
                        .counters()
                        .into_iter()
                        .map(|(k, v)| (k.into(), v)),
                )
                .collect(),
            jvms_asked: self.symbols.jvms_asked.clone(),
            go: self.go.outcomes.clone(),
            runtime_warnings: self.conv.runtime_warnings(),
            reader: None,
            watched,
        })
    }
}

/// Keep the kernel-side counts of missing events (skipped handler runs, untracked
/// timers) in the trace's counters (absolute: cumulative since the programs loaded).
fn note_kernel_counts(c: &mut Converter, p: &Probes) {
    let misses = p.handler_misses();
    if misses > 0 {
        c.counters.insert(HANDLER_MISSES.to_owned(), misses);
    }
    let untracked = p.untracked_timers();
    if untracked > 0 {
        c.counters.insert(UNTRACKED_TIMERS.to_owned(), untracked);
    }
    for (name, ns, runs) in p.run_costs() {
        c.counters.insert(format!("{BPF_RUN_NS}{name}"), ns);
        c.counters.insert(format!("{BPF_RUNS}{name}"), runs);
    }
}

/// Is this thread a target (and named `comm`, if given)?
fn target_thread(c: &Converter, t: Tid, comm: Option<&str>) -> bool {
    match c.thread(t.0) {
        Some((tgid, name)) => c.is_target(tgid) && comm.is_none_or(|n| n == name),
        None => false,
    }
}

/// Read the mappings of processes that exec'd, mapped code or were newly seen, and
/// update their code ranges in the kernel.
fn refresh_maps(c: &mut Converter, p: &Probes, now: u64, tgids: &[u32]) {
    for &tgid in tgids {
        let maps = c.refresh_mappings(tgid, now);
        install_ranges(c, p, tgid, &maps);
    }
}

/// Give the kernel a target's code ranges (for the scoped frame-pointer walk).
fn install_ranges(c: &mut Converter, p: &Probes, tgid: u32, maps: &[procfs::ExecMapping]) {
    if c.is_target(tgid) && !maps.is_empty() {
        let exe = procfs::exe(tgid);
        let ranges = procfs::code_ranges(maps, exe.as_deref());
        if p.set_ranges(tgid, &ranges).is_err() {
            c.count("range_table_updates_failed", 1);
        }
    }
}

/// The reader must keep up with busy targets: give this thread (only this one; the
/// command was forked before) a real-time priority, else the highest normal one, when
/// allowed. With 32 runnable processes on 2 CPUs, nice -10 left it about a fifth of a
/// core, less than a million events per second need; nice -20 still left it waiting
/// most of the time on a host busy in softirqs (`DEFAULT_READER_RT_PRIORITY`). It
/// sleeps whenever it has caught up, so the priority costs others nothing then.
/// Losses are still counted if it falls behind.
fn reader_priority(rt: u8) {
    if rt > 0 {
        let param = libc::sched_param {
            sched_priority: i32::from(rt.min(99)),
        };
        // Reset on fork: threads and programs it starts later (jcmd, for one) are
        // normal ones.
        let policy = libc::SCHED_FIFO | libc::SCHED_RESET_ON_FORK;
        // SAFETY: sets the calling thread's policy from a valid sched_param.
        if unsafe { libc::sched_setscheduler(0, policy, &param) } == 0 {
            return;
        }
    }
    // SAFETY: setpriority on the calling thread.
    unsafe { libc::setpriority(libc::PRIO_PROCESS, 0, -20) };
}
