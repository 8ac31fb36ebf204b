//! Where converted events go: straight into a trace file, or into the flight
//! recorder's window of recent events, dumped to a file on a trigger.

use crate::convert::Converter;
use crate::stacks::Symbols;
use causeway_format::{
    ClockSource, Event, EventKind, Header, HostInfo, Scope, StackId, TraceWriter,
};
use std::collections::HashMap;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, mpsc};
use std::time::{Duration, Instant};

/// The header of a recording made now.
pub fn header(command_line: Vec<String>, scope: Scope) -> Header {
    let mono = clock_ns(libc::CLOCK_MONOTONIC);
    let real = clock_ns(libc::CLOCK_REALTIME);
    // SAFETY: uname fills the struct it is given.
    let mut u: libc::utsname = unsafe { std::mem::zeroed() };
    let host = if unsafe { libc::uname(&mut u) } == 0 {
        let s = |f: &[libc::c_char]| {
            let b: Vec<u8> = f
                .iter()
                .take_while(|&&c| c != 0)
                .map(|&c| c as u8)
                .collect();
            String::from_utf8_lossy(&b).into_owned()
        };
        HostInfo {
            hostname: s(&u.nodename),
            kernel_release: s(&u.release),
            arch: s(&u.machine),
            block_devices: crate::procfs::block_devices(),
            addresses: crate::procfs::host_addresses(),
        }
    } else {
        HostInfo::default()
    };
    Header {
        clock: ClockSource::Monotonic,
        clock_to_realtime_ns: real as i64 - mono as i64,
        clock_to_monotonic_ns: 0,
        host,
        cpu_count: crate::config::num_cpus(),
        command_line,
        writer: concat!("causeway-record ", env!("CARGO_PKG_VERSION")).to_string(),
        scope,
        target_pids: Vec::new(),
        target_comm: None,
        file_id: causeway_format::Header::random_file_id(),
        salvaged: None,
        waker_stack_sampling: None,
    }
}

/// Nanoseconds of a clock.
pub fn clock_ns(clock: libc::clockid_t) -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes the timespec it is given.
    unsafe { libc::clock_gettime(clock, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Table rows already handed to a writer.
#[derive(Default)]
struct Sent {
    strings: usize,
    threads: usize,
    processes: usize,
    mappings: usize,
    flows: usize,
    cgroups: usize,
}

impl Sent {
    /// Hand new rows to `w`. Strings keep their recorder ids because every string goes
    /// to the writer in id order before any event that uses it.
    fn sync<W: std::io::Write>(&mut self, conv: &Converter, w: &mut TraceWriter<W>) {
        for s in &conv.strings.all()[self.strings..] {
            w.intern(s);
        }
        self.strings = conv.strings.all().len();
        for t in &conv.threads[self.threads..] {
            w.add_thread(t.clone());
        }
        self.threads = conv.threads.len();
        for p in &conv.processes[self.processes..] {
            w.add_process(p.clone());
        }
        self.processes = conv.processes.len();
        for m in &conv.mappings[self.mappings..] {
            w.add_mapping(m.clone());
        }
        self.mappings = conv.mappings.len();
        for f in &conv.flows.all()[self.flows..] {
            w.intern_flow(*f);
        }
        self.flows = conv.flows.all().len();
        for r in &conv.cgroups[self.cgroups..] {
            w.add_cgroup(r.clone());
        }
        self.cgroups = conv.cgroups.len();
    }
}

/// How often a streamed trace is made durable: every chunk and table row pushed
/// before a checkpoint survives a SIGKILL, so a killed recording loses at most this
/// much (plus what was still in the kernel's ring buffers).
pub const CHECKPOINT_INTERVAL: Duration = Duration::from_secs(1);

/// Bytes written after which a checkpoint comes early (bounds what a kill loses on a
/// busy recording, and the dirty pages one `fdatasync` has to write).
pub const CHECKPOINT_BYTES: u64 = 16 << 20;

/// `fdatasync`s a file on its own thread when asked, so the recorder's thread never
/// waits for the disk: a checkpoint writes its blocks (into the page cache) and asks
/// for a sync; a request made while one is pending joins it.
struct Syncer {
    tx: Option<mpsc::SyncSender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
    stats: Arc<SyncStats>,
}

/// What the sync thread did, in the trace's recorder counters.
#[derive(Default)]
struct SyncStats {
    syncs: AtomicU64,
    ns: AtomicU64,
    max_ns: AtomicU64,
    failed: AtomicU64,
}

impl Syncer {
    fn start(file: File) -> Syncer {
        let (tx, rx) = mpsc::sync_channel::<()>(1);
        let stats = Arc::new(SyncStats::default());
        let st = Arc::clone(&stats);
        let thread = std::thread::Builder::new()
            .name("causeway-sync".into())
            .spawn(move || {
                for () in rx {
                    let t = Instant::now();
                    if file.sync_data().is_err() {
                        // The final sync before the rename reports the error.
                        st.failed.fetch_add(1, Ordering::Relaxed);
                    }
                    let ns = u64::try_from(t.elapsed().as_nanos()).unwrap_or(u64::MAX);
                    st.syncs.fetch_add(1, Ordering::Relaxed);
                    st.ns.fetch_add(ns, Ordering::Relaxed);
                    st.max_ns.fetch_max(ns, Ordering::Relaxed);
                }
            })
            .ok();
        Syncer {
            tx: thread.as_ref().map(|_| tx),
            thread,
            stats,
        }
    }

    fn request(&self) {
        if let Some(tx) = &self.tx {
            let _ = tx.try_send(());
        }
    }

    /// Stop the thread (after its pending sync) and return its counters.
    fn stop(mut self) -> [(&'static str, u64); 4] {
        drop(self.tx.take());
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        let s = &self.stats;
        [
            ("checkpoint_syncs", s.syncs.load(Ordering::Relaxed)),
            ("checkpoint_sync_ns", s.ns.load(Ordering::Relaxed)),
            ("checkpoint_sync_max_ns", s.max_ns.load(Ordering::Relaxed)),
            ("checkpoint_sync_failed", s.failed.load(Ordering::Relaxed)),
        ]
    }
}

/// Streams every event into one trace file, written to a temporary file beside the
/// output and made durable at every checkpoint (see [`crate::outfile`]).
pub struct StreamSink {
    writer: TraceWriter<File>,
    sent: Sent,
    pending: crate::outfile::Pending,
    last_checkpoint: Instant,
    bytes_at_checkpoint: u64,
    checkpoints: u64,
    syncer: Option<Syncer>,
}

impl StreamSink {
    /// Start writing `path` (through its temporary file); the header is durable when
    /// this returns.
    pub fn create(path: &Path, header: &Header) -> Result<StreamSink, crate::RecordError> {
        let (file, pending) = crate::outfile::create(path)?;
        let io_err = |e| crate::RecordError::Io(format!("writing {}", path.display()), e);
        // In place (a device or FIFO) there is nothing to make durable.
        let syncer = match pending.temp() {
            Some(_) => Some(Syncer::start(file.try_clone().map_err(io_err)?)),
            None => None,
        };
        let mut writer = TraceWriter::new(file, header)?;
        let f = writer.checkpoint()?;
        if syncer.is_some() {
            f.sync_data().map_err(io_err)?;
        }
        Ok(StreamSink {
            writer,
            sent: Sent::default(),
            pending,
            last_checkpoint: Instant::now(),
            bytes_at_checkpoint: 0,
            checkpoints: 0,
            syncer,
        })
    }

    /// The temporary file the trace is written to until it is finished (`None` when
    /// writing in place to a device or FIFO).
    pub fn temp_path(&self) -> Option<&Path> {
        self.pending.temp()
    }

    /// Write every buffered event and table row, and have the file `fdatasync`ed.
    fn checkpoint(&mut self) -> Result<(), crate::RecordError> {
        self.writer.checkpoint()?;
        if let Some(s) = &self.syncer {
            s.request();
        }
        self.checkpoints += 1;
        self.last_checkpoint = Instant::now();
        self.bytes_at_checkpoint = self.writer.position();
        Ok(())
    }

    /// Write converted events; a checkpoint when one is due.
    pub fn events(&mut self, conv: &Converter, evs: &[Event]) -> Result<(), crate::RecordError> {
        self.sent.sync(conv, &mut self.writer);
        for e in evs {
            self.writer.push(e)?;
        }
        if self.last_checkpoint.elapsed() >= CHECKPOINT_INTERVAL
            || self.writer.position() - self.bytes_at_checkpoint >= CHECKPOINT_BYTES
        {
            self.checkpoint()?;
        }
        Ok(())
    }

    /// Symbolize, write the stacks and statistics, close the file and rename it onto
    /// its path. Returns the path and where the file that was there is kept.
    pub fn finish(
        mut self,
        conv: &Converter,
        symbols: &mut Symbols,
    ) -> Result<(PathBuf, Option<PathBuf>), crate::RecordError> {
        self.sent.sync(conv, &mut self.writer);
        let ids: Vec<StackId> = (0..conv.stacks.len() as u32).map(StackId).collect();
        let map = symbols.write_stacks(conv.stack_sources(), &ids, &mut self.writer);
        // Stacks reach the writer only here, in id order, so ids cannot differ; count
        // it if they ever do rather than write a silently wrong trace.
        let wrong = map.iter().filter(|(a, b)| a != b).count() as u64;
        if wrong > 0 {
            self.writer.add_counter("stack_ids_remapped_wrongly", wrong);
        }
        for (k, v) in &conv.counters {
            self.writer.add_counter(k, *v);
        }
        for (k, v) in symbols.counters() {
            self.writer.add_counter(k, v);
        }
        // What crash safety cost: the checkpoints and their fdatasync time.
        self.writer.add_counter("checkpoints", self.checkpoints);
        if let Some(s) = self.syncer.take() {
            for (k, v) in s.stop() {
                self.writer.add_counter(k, v);
            }
        }
        let file = self.writer.finish()?;
        let path = self.pending.path().to_path_buf();
        let kept = self.pending.commit(file)?;
        Ok((path, kept))
    }
}

/// What a flight-recorder dump wrote.
#[derive(Clone, Debug)]
pub struct Dump {
    /// The file.
    pub path: PathBuf,
    /// Events in it.
    pub events: u64,
    /// First and last event time (trace clock).
    pub first_ts: u64,
    /// Last event time.
    pub last_ts: u64,
    /// Where the file that was at `path` before (an earlier run's dump) is kept.
    pub kept_old: Option<PathBuf>,
    /// Recorded processes running libcauseway that were asked to dump their calls for
    /// the same moment (condition dumps only; see [`crate::inproc`]).
    pub inproc_asked: Vec<u32>,
}

/// Write a flight recorder's window to `path`, with what triggered it (the window is
/// kept: recording goes on).
pub fn write_dump(
    path: PathBuf,
    window: &causeway_flight::Window,
    (conv, symbols): (&Converter, &mut Symbols),
    header: &Header,
    trigger: Option<causeway_format::TriggerMark>,
) -> Result<Dump, crate::RecordError> {
    let (file, pending) = crate::outfile::create(&path)?;
    let mut header = header.clone();
    header.file_id = Header::random_file_id();
    let mut w = TraceWriter::new(file, &header)?;
    let mut sent = Sent::default();
    sent.sync(conv, &mut w);
    // Only the stacks the window uses, symbolized into this file's own ids.
    let mut ids: Vec<StackId> = window
        .iter()
        .filter_map(|e| match e.kind {
            EventKind::Stack { user, kernel, .. } => Some([user, kernel]),
            _ => None,
        })
        .flatten()
        .flatten()
        .collect();
    ids.sort_unstable();
    ids.dedup();
    let stacks = symbols.write_stacks(conv.stack_sources(), &ids, &mut w);
    let mut first = u64::MAX;
    let mut last = 0;
    for e in window.iter() {
        let ev = remap(e, &stacks);
        first = first.min(e.ts.0);
        last = last.max(e.ts.0);
        w.push(&ev)?;
    }
    for (k, v) in &conv.counters {
        w.add_counter(k, *v);
    }
    w.add_counter("flight_rotated_out", window.rotated_out());
    if let Some(t) = trigger {
        w.set_trigger(t);
    }
    let file = w.finish()?;
    let kept_old = pending.commit(file)?;
    Ok(Dump {
        path,
        events: window.len() as u64,
        first_ts: if first == u64::MAX { 0 } else { first },
        last_ts: last,
        kept_old,
        inproc_asked: Vec::new(),
    })
}

/// Rewrite stack ids for a dump (string ids are the same in every file, see `Sent`).
fn remap(e: &Event, stacks: &HashMap<StackId, StackId>) -> Event {
    let mut e = *e;
    if let EventKind::Stack { user, kernel, .. } = &mut e.kind {
        *user = user.and_then(|s| stacks.get(&s).copied());
        *kernel = kernel.and_then(|s| stacks.get(&s).copied());
    }
    e
}
