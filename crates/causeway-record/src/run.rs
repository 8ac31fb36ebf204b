//! A recording from start to finished file: targets, the drain loop, flight dumps.

use crate::config::{RecordConfig, Target};
use crate::convert::Converter;
use crate::launch::Launched;
use crate::probes::{Family, Probes};
use crate::records::{Record, parse};
use crate::sink::{Dump, FlightSink, StreamSink, clock_ns, header};
use crate::stacks::Symbols;
use crate::trigger::{Condition, Watcher};
use crate::{RecordError, procfs, signals};
use causeway_format::Tid;
use libbpf_rs::RingBufferBuilder;
use std::cell::RefCell;
use std::path::PathBuf;
use std::rc::Rc;
use std::time::{Duration, Instant};

/// Least time between two dumps caused by a `--trigger` condition.
pub const AUTO_DUMP_HOLDOFF: Duration = Duration::from_secs(1);

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
    /// Stop after this long.
    pub duration: Option<Duration>,
    /// Launch and follow this command (then `config.target` is ignored).
    pub command: Option<Vec<String>>,
    /// The command line stored in the trace header.
    pub command_line: Vec<String>,
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
    /// About once a second.
    Progress {
        /// Events converted so far.
        events: u64,
        /// Records lost so far.
        lost: u64,
    },
    /// A flight-recorder dump was written.
    Dumped(Dump),
    /// A file was at an output path: it was renamed to this path (`PATH.old`) before
    /// the new output was created there.
    KeptPrevious(PathBuf),
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
    /// Wall time recorded.
    pub elapsed: Duration,
    /// Recorder counters (also in the trace's statistics): unwinding outcomes by
    /// reason, stacks whose copy went missing, records that did not parse.
    pub counters: std::collections::BTreeMap<String, u64>,
}

enum Sink {
    Stream(Box<StreamSink>),
    Flight(FlightSink, Option<Watcher>),
}

/// Record until the command ends, the duration passes, or SIGINT/SIGTERM.
pub fn record(req: Request, notify: &mut dyn FnMut(Notice)) -> Result<Summary, RecordError> {
    signals::install();
    let mut cfg = req.config.clone();
    let mut child = match &req.command {
        Some(argv) => {
            let l = Launched::fork(argv)?;
            cfg.target = Target::Pids(vec![l.pid]);
            Some(l)
        }
        None => None,
    };
    let initial: Vec<u32> = match &cfg.target {
        Target::Pids(p) => {
            if child.is_none()
                && let Some(&missing) = p.iter().find(|&&p| !procfs::exists(p))
            {
                return Err(RecordError::NoSuchProcess(missing));
            }
            p.clone()
        }
        Target::Comm(name) => procfs::pids_named(name),
        Target::All => Vec::new(),
    };
    let tracked: &[u32] = if matches!(cfg.target, Target::Pids(_)) {
        &initial
    } else {
        &[]
    };
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
    let mut sink = match &req.output {
        Output::File(p) => {
            let s = StreamSink::create(p, &hdr)?;
            if let Some(old) = s.kept_old() {
                notify(Notice::KeptPrevious(old.to_path_buf()));
            }
            Sink::Stream(Box::new(s))
        }
        Output::Flight {
            capacity,
            base,
            trigger,
        } => Sink::Flight(
            FlightSink::new(*capacity, base),
            trigger.clone().map(Watcher::new),
        ),
    };

    let conv = Rc::new(RefCell::new(Converter::new(matches!(
        cfg.target,
        Target::All
    ))));
    {
        let mut c = conv.borrow_mut();
        c.set_user_scope(cfg.stack_mode, cfg.stack_depth as usize);
        for (irq, name) in procfs::irq_names() {
            c.set_irq_name(irq, &name);
        }
        for &pid in &initial {
            c.targets.insert(pid);
            if child.is_none() {
                for tid in procfs::threads(pid) {
                    if let Some(comm) = procfs::comm(pid, tid) {
                        c.note_thread(tid, pid, &comm, 0);
                    }
                }
            }
            // Read now: a launched command still shows causeway's own mappings,
            // which its first waits (before exec) have stacks in.
            refresh_maps(&mut c, &probes, 0, &[pid]);
        }
    }
    // Records are parsed in the ring callbacks and converted per batch in time order:
    // rings are drained one after the other, and a thread's name or a process's birth
    // reported on one CPU must not be overtaken by older news from another.
    let pending: Rc<RefCell<Vec<(u32, Record)>>> = Rc::new(RefCell::new(Vec::new()));
    let mut builder = RingBufferBuilder::new();
    for (cpu, map) in probes.rings().iter().enumerate() {
        let p = pending.clone();
        let c = conv.clone();
        builder
            .add(map, move |data: &[u8]| {
                match parse(data) {
                    Ok(r) => p.borrow_mut().push((cpu as u32, r)),
                    Err(_) => c.borrow_mut().count("unparsed_records", 1),
                }
                0
            })
            .map_err(|e| RecordError::Load(format!("ring reader: {e}")))?;
    }
    let ring = builder
        .build()
        .map_err(|e| RecordError::Load(format!("ring reader: {e}")))?;

    let mut symbols = Symbols::new(cfg.debug_dirs.clone());
    let mut lost_seen = vec![0u64; probes.rings().len()];
    let mut events = 0u64;
    let mut dumps = Vec::new();
    let start = Instant::now();
    let mut last_progress = Instant::now();
    let mut last_auto_dump: Option<Instant> = None;
    notify(Notice::Started {
        family: probes.family,
        pids: initial.clone(),
    });
    if let Some(c) = child.as_mut() {
        c.release();
    }
    // The reader must keep up with busy targets: give this thread (only this one; the
    // command was forked before) a higher priority when allowed. Losses are still
    // counted if it falls behind.
    // SAFETY: setpriority on the calling thread.
    unsafe { libc::setpriority(libc::PRIO_PROCESS, 0, -10) };

    let family = probes.family;
    let mut probes = Some(probes);
    let mut stopping = false;
    loop {
        let _ = ring.poll(cfg.poll_interval);
        let _ = ring.consume();
        let now = clock_ns(libc::CLOCK_MONOTONIC);
        let batch = {
            let mut c = conv.borrow_mut();
            let mut recs = std::mem::take(&mut *pending.borrow_mut());
            recs.sort_by_key(|(_, r)| r.ts);
            for (cpu, r) in recs {
                c.convert(cpu, r);
            }
            c.end_batch();
            if let Some(p) = probes.as_ref() {
                let pending: Vec<u32> = std::mem::take(&mut c.maps_pending).into_iter().collect();
                refresh_maps(&mut c, p, now, &pending);
                for (cpu, &n) in p.lost_per_cpu().iter().enumerate() {
                    if cpu < lost_seen.len() && n > lost_seen[cpu] {
                        c.lost(cpu as u32, n - lost_seen[cpu], now);
                        lost_seen[cpu] = n;
                    }
                }
            }
            std::mem::take(&mut c.out)
        };
        events += batch.len() as u64;
        let c = conv.borrow();
        match &mut sink {
            Sink::Stream(s) => s.events(&c, &batch)?,
            Sink::Flight(f, watcher) => {
                f.events(&batch);
                let asked = signals::take_dump_requests() > 0;
                let mut fired = false;
                if let Some(w) = watcher.as_mut() {
                    let comm = w.comm().map(str::to_owned);
                    let wanted = |t: Tid| target_thread(&c, t, comm.as_deref());
                    fired |= w.feed(&batch, &wanted).is_some();
                    fired |= w.check_open(now).is_some();
                }
                // A condition that holds every few milliseconds would otherwise write
                // a file per batch: automatic dumps come at most once per holdoff.
                if fired && last_auto_dump.is_some_and(|t| t.elapsed() < AUTO_DUMP_HOLDOFF) {
                    fired = false;
                }
                if fired {
                    last_auto_dump = Some(Instant::now());
                }
                if (asked || fired) && !f.is_empty() {
                    let d = f.dump(&c, &mut symbols, &hdr)?;
                    if let Some(old) = &d.kept_old {
                        notify(Notice::KeptPrevious(old.clone()));
                    }
                    notify(Notice::Dumped(d.clone()));
                    dumps.push(d);
                }
            }
        }
        drop(c);
        if last_progress.elapsed() >= Duration::from_secs(1) {
            last_progress = Instant::now();
            notify(Notice::Progress {
                events,
                lost: lost_seen.iter().sum(),
            });
        }
        if stopping {
            break;
        }
        let child_done = child.as_mut().is_some_and(|c| c.poll_exit().is_some());
        let pids_gone = child.is_none()
            && matches!(cfg.target, Target::Pids(_))
            && initial.iter().all(|&p| !procfs::alive(p));
        let timed_out = req.duration.is_some_and(|d| start.elapsed() >= d);
        if child_done || pids_gone || timed_out || signals::stop_requested() {
            // Detach first so nothing new arrives, then drain once more.
            probes.take();
            stopping = true;
        }
    }
    let elapsed = start.elapsed();
    if let Some(c) = child.as_mut()
        && c.poll_exit().is_none()
    {
        // Stopped by duration or signal while the command still runs: leave it be,
        // as perf does; the recording simply ends here.
    }
    let c = conv.borrow();
    let path = match sink {
        Sink::Stream(s) => Some(s.finish(&c, &mut symbols)?),
        Sink::Flight(..) => None,
    };
    Ok(Summary {
        path,
        dumps,
        events,
        lost_per_cpu: lost_seen,
        stacks: c.stacks.len(),
        family,
        child_status: child.as_mut().and_then(|c| c.poll_exit()),
        elapsed,
        counters: c.counters.clone(),
    })
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
        if c.is_target(tgid) && !maps.is_empty() {
            let exe = procfs::exe(tgid);
            let ranges = procfs::code_ranges(&maps, exe.as_deref());
            if p.set_ranges(tgid, &ranges).is_err() {
                c.count("range_table_updates_failed", 1);
            }
        }
    }
}
