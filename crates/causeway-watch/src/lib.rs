//! Data flags: the accesses of one variable of one process (Argus §4.2's data-flag
//! edges; `causeway watch`, `causeway record --watch`), by hardware watchpoints or,
//! where those cannot be had or on request, by uprobes on the instructions that
//! access it.
//!
//! Three ways, tried in this order unless one is asked for ([`Via`]):
//! - **Inherited watchpoints** ([`perf::CpuRings`]): each thread present when the
//!   watch starts gets a pair of breakpoint events per CPU with `inherit` set, so
//!   the threads it creates carry them from their first instruction. A launched
//!   command is stopped at its exec (ptrace) and given them then, before it runs a
//!   single instruction of its own.
//! - **Per-thread watchpoints** ([`perf::ThreadWatch`]), where the kernel refuses
//!   the inherited ones: new threads are found by listing `/proc/PID/task` at every
//!   pass of the reader (every 10 ms), so a thread that lives less than that may go
//!   unseen.
//! - **Uprobes** ([`uprobe`]), where the kernel refuses breakpoints altogether (or
//!   with `--via uprobe`): one on each instruction that loads or stores the
//!   variable, as found by decoding the code ([`decode`]).
//!
//! Not every read is kept, whichever way they were caught. A thread polling a flag
//! reads it tens of thousands of times a second, and only the first read after a
//! write can see that write: the event graph's data-flag edge goes from a write to
//! the first read of each other thread after it. So each thread's first read after
//! each write is kept (and its first read ever), the rest are counted
//! (`watch_reads_repeated`). Writes are all kept.

pub mod decode;
mod perf;
mod resolve;
mod sites;
mod uprobe;

pub use perf::Hit;
pub use resolve::{
    FileVariable, file_variable_at, find_in_mapped, find_symbol, functions_referring, load_bias,
    mapped_files, names_file,
};
pub use sites::{Site, SiteScan, accessing_instructions, instruction_starts};

use causeway_format::{Cpu, DataFlagAccess, Event, EventKind, Marker, Tid, Timestamp};
use causeway_procfs::process as procfs;
use perf::{CpuRings, DrainLoss, ThreadWatch};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use uprobe::UprobeWatch;

/// What to watch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WatchTarget {
    /// A symbol of the program's executable or of a shared object it maps; `LIB:NAME`
    /// looks only in the files `LIB` names (see [`names_file`]).
    Symbol(String),
    /// An address in the process (already loaded, no bias applied).
    Addr(u64),
}

/// How the accesses are caught.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Via {
    /// Inherited watchpoints, else per-thread ones, else uprobes.
    #[default]
    Auto,
    /// Watchpoints only: inherited, else per-thread.
    Breakpoint,
    /// Per-thread watchpoints, new threads found by listing (the fallback layout).
    ThreadBreakpoint,
    /// Uprobes on the instructions that access the variable.
    Uprobe,
}

/// A watch request: the variable, how many bytes of it, and how.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WatchSpec {
    /// The variable.
    pub target: WatchTarget,
    /// Bytes watched (1, 2, 4 or 8); `None`: the symbol's size (8 for an address).
    pub len: Option<u8>,
    /// How.
    pub via: Via,
}

/// Why a variable cannot be watched.
#[derive(Debug, thiserror::Error)]
pub enum WatchError {
    /// The executable could not be read.
    #[error("cannot read the executable {0}: {1}")]
    Exe(PathBuf, std::io::Error),
    /// It is not an ELF file the parser understands.
    #[error("cannot parse the executable: {0}")]
    Elf(String),
    /// No such symbol.
    #[error(
        "no symbol `{0}` in the symbol tables of the executable or of the shared objects it maps (a static variable of a stripped binary has none: give --addr)"
    )]
    NoSymbol(String),
    /// Several mapped files define the symbol.
    #[error("symbol `{name}` is defined in several mapped files ({}): say which with LIB:{name}", .files.join(", "))]
    Ambiguous {
        /// The symbol.
        name: String,
        /// The files that define it.
        files: Vec<String>,
    },
    /// The symbol is not 1, 2, 4 or 8 bytes long.
    #[error("symbol `{0}` is {1} bytes long; a watchpoint covers 1, 2, 4 or 8 bytes: give --len")]
    SymbolSize(String, u64),
    /// A bad length or alignment.
    #[error("cannot watch {len} bytes at {addr:#x}: {why}")]
    Shape {
        /// Address.
        addr: u64,
        /// Length asked for.
        len: u8,
        /// What is wrong.
        why: &'static str,
    },
    /// Watching needs exactly one process.
    #[error("watching a variable needs one process: -p PID or -- CMD")]
    OneProcess,
    /// The executable never got mapped (the command did not exec in time).
    #[error("process {0} did not map its executable; nothing was watched")]
    NotMapped(u32),
    /// The kernel refused the breakpoint.
    #[error("{}", unavailable_text(.reason, .symbol, .functions))]
    Unavailable {
        /// What the kernel said.
        reason: String,
        /// The variable's name, if known.
        symbol: Option<String>,
        /// Functions whose code refers to the variable.
        functions: Vec<String>,
    },
    /// Uprobes: the address is in no mapped file.
    #[error("{0:#x} is in no file the process maps: uprobes need the code that accesses it")]
    NoFile(u64),
    /// Uprobes: no instruction of the file's code accesses the variable directly.
    #[error(
        "no instruction of {file} loads or stores the variable directly ({unclassified} unclassified, {address_taken} take its address): uprobes cannot see its accesses"
    )]
    NoSites {
        /// The file searched.
        file: String,
        /// References in forms not classified.
        unclassified: u64,
        /// `lea`s of its address.
        address_taken: u64,
    },
    /// Uprobes: loading or attaching failed.
    #[error("uprobes: {0}")]
    Uprobe(String),
}

fn unavailable_text(reason: &str, symbol: &Option<String>, functions: &[String]) -> String {
    let name = symbol.as_deref().unwrap_or("the variable");
    let mut s = format!(
        "hardware watchpoints are unavailable here ({reason}): perf breakpoint events need \
         CONFIG_HAVE_HW_BREAKPOINT, a free debug register, and a hypervisor that passes them on"
    );
    if functions.is_empty() {
        s.push_str(&format!(
            "; no function of the executable refers to `{name}` directly"
        ));
    } else {
        s.push_str(&format!(
            "; `--via uprobe` probes the instructions that access `{name}`, in: {}",
            functions.join(", ")
        ));
    }
    s
}

/// Valid watchpoint lengths.
const LENGTHS: [u8; 4] = [1, 2, 4, 8];

/// How long a launched command may run without mapping a file that defines the
/// symbol (it was not in the executable) before the watch gives up.
const PENDING_LIMIT: Duration = Duration::from_secs(2);

/// Rounds of listing a `-p` process's threads after attaching inherited events, for
/// threads created meanwhile by threads not yet attached.
const SETTLE_ROUNDS: usize = 5;

fn check_shape(addr: u64, len: u8) -> Result<(), WatchError> {
    if !LENGTHS.contains(&len) {
        return Err(WatchError::Shape {
            addr,
            len,
            why: "the length must be 1, 2, 4 or 8",
        });
    }
    if !addr.is_multiple_of(u64::from(len)) {
        return Err(WatchError::Shape {
            addr,
            len,
            why: "x86 watchpoints need an address aligned to their length",
        });
    }
    Ok(())
}

/// Where the variable is.
enum Place {
    /// In a file (the executable or a shared object), found by name.
    File { file: PathBuf, var: FileVariable },
    /// An address given as such.
    Loaded { addr: u64, len: u8 },
    /// A symbol not in the executable of a command that has not mapped its shared
    /// objects yet.
    Pending {
        exe: PathBuf,
        lib: Option<String>,
        name: String,
        len: Option<u8>,
        since: Instant,
    },
}

/// What catches the accesses, once started.
enum Engine {
    Inherited(CpuRings),
    PerThread {
        threads: BTreeMap<u32, ThreadWatch>,
        /// Threads whose events could not be opened (gone, or refused): not retried.
        failed: BTreeSet<u32>,
    },
    Uprobes(Box<UprobeWatch>),
}

/// A running watch of one process.
pub struct Watch {
    pid: u32,
    place: Place,
    via: Via,
    /// Loaded address and length, once known.
    armed: Option<(u64, u8)>,
    engine: Option<Engine>,
    /// The process is stopped at its exec: it has one thread and creates none.
    at_exec: bool,
    /// Threads that read since the last write.
    read_since_write: BTreeSet<u32>,
    /// Threads seen accessing the variable.
    seen: BTreeSet<u32>,
    counters: BTreeMap<&'static str, u64>,
}

/// The symbol `spec` names, split into an optional library and the name.
fn split_symbol(s: &str) -> (Option<&str>, &str) {
    match s.split_once(':') {
        Some((lib, name)) if !lib.is_empty() && !name.is_empty() => (Some(lib), name),
        _ => (None, s),
    }
}

impl Watch {
    /// Prepare to watch `spec` in process `pid`, which runs `exe` (`running`: it does
    /// already; else it is a launched command that has not exec'd yet). Nothing is
    /// attached until [`Watch::poll`] finds the variable mapped.
    pub fn new(pid: u32, exe: &Path, spec: &WatchSpec, running: bool) -> Result<Watch, WatchError> {
        let place = match &spec.target {
            WatchTarget::Symbol(sym) => {
                // /proc/PID/exe and /proc/PID/maps name the file by its real path.
                let exe = exe.canonicalize().unwrap_or_else(|_| exe.to_path_buf());
                let (lib, name) = split_symbol(sym);
                let in_exe = match lib {
                    Some(_) => Err(WatchError::NoSymbol(name.to_string())),
                    None => {
                        let data =
                            std::fs::read(&exe).map_err(|e| WatchError::Exe(exe.clone(), e))?;
                        find_symbol(&data, name, spec.len)
                    }
                };
                match in_exe {
                    Ok(var) => Place::File { file: exe, var },
                    Err(WatchError::NoSymbol(_)) if running => {
                        let (file, var) = find_in_mapped(pid, Some(&exe), lib, name, spec.len)?;
                        Place::File { file, var }
                    }
                    Err(WatchError::NoSymbol(_)) => Place::Pending {
                        exe,
                        lib: lib.map(str::to_string),
                        name: name.to_string(),
                        len: spec.len,
                        since: Instant::now(),
                    },
                    Err(e) => return Err(e),
                }
            }
            WatchTarget::Addr(a) => Place::Loaded {
                addr: *a,
                len: spec.len.unwrap_or(8),
            },
        };
        if let Place::File { var, .. } = &place {
            check_shape(var.vaddr, var.len)?;
        }
        if let Place::Loaded { addr, len } = &place {
            check_shape(*addr, *len)?;
        }
        Ok(Watch {
            pid,
            place,
            via: spec.via,
            armed: None,
            engine: None,
            at_exec: false,
            read_since_write: BTreeSet::new(),
            seen: BTreeSet::new(),
            counters: BTreeMap::new(),
        })
    }

    /// The watched address and length, once the variable is mapped.
    pub fn armed(&self) -> Option<(u64, u8)> {
        self.armed
    }

    /// Counters for the trace's statistics.
    pub fn counters(&self) -> &BTreeMap<&'static str, u64> {
        &self.counters
    }

    /// Start watching while the launched process is stopped at its exec: one
    /// thread, none created yet, not one instruction of the program run. Inherited
    /// watchpoints (or uprobes) attached now see every access of every thread. If
    /// the variable is not mapped yet (a shared object's), later polls attach.
    pub fn attach_at_exec(&mut self) -> Result<(), WatchError> {
        self.at_exec = true;
        let r = self.poll().map(drop);
        self.at_exec = false;
        r
    }

    /// Why nothing could be watched, if the variable's symbol was never found: the
    /// command ended (or the recording did) before mapping a file that defines it.
    pub fn unresolved(&self) -> Option<WatchError> {
        match &self.place {
            Place::Pending { name, .. } => Some(WatchError::NoSymbol(name.clone())),
            _ => None,
        }
    }

    /// The loaded address, if the variable is mapped (a launched command maps its
    /// executable only once it has exec'd, and shared objects after that).
    fn locate(&mut self) -> Result<Option<(u64, u8)>, WatchError> {
        if let Place::Pending {
            exe,
            lib,
            name,
            len,
            since,
        } = &self.place
        {
            let (exe, lib, name, len, since) =
                (exe.clone(), lib.clone(), name.clone(), *len, *since);
            if procfs::exe(self.pid).is_none_or(|p| Path::new(&p) != exe) {
                return Ok(None);
            }
            match find_in_mapped(self.pid, Some(&exe), lib.as_deref(), &name, len) {
                Ok((file, var)) => {
                    check_shape(var.vaddr, var.len)?;
                    self.place = Place::File { file, var };
                }
                Err(WatchError::NoSymbol(n))
                    if since.elapsed() > PENDING_LIMIT || mapped_files(self.pid).is_empty() =>
                {
                    return Err(WatchError::NoSymbol(n));
                }
                Err(WatchError::NoSymbol(_)) => return Ok(None),
                Err(e) => return Err(e),
            }
        }
        Ok(match &self.place {
            Place::Loaded { addr, len } => Some((*addr, *len)),
            Place::File { file, var } => {
                let mapped = mapped_files(self.pid).iter().any(|f| f == file);
                if !mapped {
                    return Ok(None);
                }
                load_bias(self.pid, file, var).map(|bias| (var.vaddr.wrapping_add(bias), var.len))
            }
            Place::Pending { .. } => None,
        })
    }

    /// Start catching accesses (see [`Via`] for the order), take every hit since
    /// the last call, and return them as data-flag events in time order. Fails only
    /// if nothing could be attached at all.
    pub fn poll(&mut self) -> Result<Vec<Event>, WatchError> {
        if self.armed.is_none() {
            self.armed = self.locate()?;
        }
        let Some((addr, len)) = self.armed else {
            return Ok(Vec::new());
        };
        if self.engine.is_none() {
            let e = self.start(addr, len)?;
            self.engine = Some(e);
        }
        let mut hits = Vec::new();
        let mut loss = DrainLoss::default();
        let mut attach_new = false;
        match self.engine.as_mut() {
            Some(Engine::Inherited(rings)) => loss = rings.drain(&mut hits),
            Some(Engine::PerThread { threads, .. }) => {
                attach_new = true;
                for t in threads.values_mut() {
                    let l = t.drain(&mut hits);
                    loss.lost += l.lost;
                    loss.throttled += l.throttled;
                }
                // Threads that are gone have nothing more to give.
                let live: BTreeSet<u32> = procfs::threads(self.pid).into_iter().collect();
                threads.retain(|tid, _| live.contains(tid));
            }
            Some(Engine::Uprobes(u)) => {
                // The BPF side counts drops since the start.
                let dropped = u.drain(&mut hits);
                let before = self.counters.get("watch_hits_lost").copied().unwrap_or(0);
                loss.lost = dropped.saturating_sub(before);
            }
            None => {}
        }
        if attach_new {
            self.attach_threads(addr, len)?;
        }
        self.bump("watch_throttled", loss.throttled);
        self.bump("watch_hits_lost", loss.lost);
        hits.sort_by_key(|h| h.ts);
        Ok(self.keep(addr, &hits))
    }

    fn bump(&mut self, name: &'static str, n: u64) {
        if n > 0 {
            *self.counters.entry(name).or_default() += n;
        }
    }

    /// Start the engine `via` asks for, falling back as [`Via`] says.
    fn start(&mut self, addr: u64, len: u8) -> Result<Engine, WatchError> {
        if self.via == Via::Uprobe {
            return self.start_uprobes(addr, len);
        }
        if self.via != Via::ThreadBreakpoint {
            match self.start_inherited(addr, len) {
                Ok(e) => return Ok(e),
                // Refused: the per-thread layout below says whether breakpoints work
                // at all.
                Err(e) => self.bump_refusal(&e),
            }
        }
        self.engine = Some(Engine::PerThread {
            threads: BTreeMap::new(),
            failed: BTreeSet::new(),
        });
        match self.attach_threads(addr, len) {
            Ok(()) => Ok(self.engine.take().expect("just set")),
            Err(e) if self.via == Via::Auto => {
                self.engine = None;
                self.start_uprobes(addr, len).map_err(|_| e)
            }
            Err(e) => {
                self.engine = None;
                Err(e)
            }
        }
    }

    fn bump_refusal(&mut self, e: &std::io::Error) {
        let name = match e.raw_os_error() {
            Some(libc::EMFILE | libc::ENFILE) => "watch_inherit_refused_fds",
            _ => "watch_inherit_refused",
        };
        self.bump(name, 1);
    }

    /// Inherited pairs on every CPU for the process's threads (one at its exec).
    fn start_inherited(&mut self, addr: u64, len: u8) -> Result<Engine, std::io::Error> {
        let cpus = perf::online_cpus();
        let mut rings = CpuRings::default();
        let mut attached = BTreeSet::new();
        let first = if self.at_exec {
            vec![self.pid]
        } else {
            procfs::threads(self.pid)
        };
        let mut refused = None;
        let mut refusals = 0;
        for tid in first {
            match rings.attach(tid, &cpus, addr, len) {
                Ok(()) => {
                    attached.insert(tid);
                }
                Err(e) if e.raw_os_error() == Some(libc::ESRCH) => {}
                Err(e) => {
                    refusals += 1;
                    refused = Some(e);
                }
            }
        }
        if attached.is_empty() {
            return Err(refused.unwrap_or_else(|| std::io::Error::from_raw_os_error(libc::ESRCH)));
        }
        // Some threads refused (their debug registers taken): not watched.
        self.bump("watch_threads_refused", refusals);
        // Threads created after the listing by threads not attached yet inherited
        // nothing: list again until no new thread shows up. One created by an
        // attached thread in that window gets a second pair; its samples fall in the
        // same trap and count once (`perf::group_traps`).
        for _ in 0..SETTLE_ROUNDS {
            if self.at_exec {
                break;
            }
            let new: Vec<u32> = procfs::threads(self.pid)
                .into_iter()
                .filter(|t| !attached.contains(t))
                .collect();
            if new.is_empty() {
                break;
            }
            for tid in new {
                if rings.attach(tid, &cpus, addr, len).is_ok() {
                    attached.insert(tid);
                }
            }
        }
        self.bump("watch_threads", attached.len() as u64);
        self.bump("watch_inherited", 1);
        Ok(Engine::Inherited(rings))
    }

    /// Per-thread pairs for threads not watched yet (the fallback layout).
    fn attach_threads(&mut self, addr: u64, len: u8) -> Result<(), WatchError> {
        let Some(Engine::PerThread { threads, failed }) = self.engine.as_mut() else {
            return Ok(());
        };
        let mut refused = None;
        let (mut opened, mut refusals) = (0, 0);
        for tid in procfs::threads(self.pid) {
            if threads.contains_key(&tid) || failed.contains(&tid) {
                continue;
            }
            match ThreadWatch::open(tid, addr, len) {
                Ok(t) => {
                    threads.insert(tid, t);
                    opened += 1;
                }
                Err(e) => {
                    failed.insert(tid);
                    // A thread that exited between the listing and the open is no news.
                    if e.raw_os_error() != Some(libc::ESRCH) {
                        refusals += 1;
                        refused = Some(e);
                    }
                }
            }
        }
        let none = threads.is_empty();
        self.bump("watch_threads", opened);
        self.bump("watch_threads_refused", refusals);
        match refused {
            Some(e) if none => Err(self.unavailable(&e)),
            _ => Ok(()),
        }
    }

    /// Uprobes on the instructions of the variable's file that access it.
    fn start_uprobes(&mut self, addr: u64, len: u8) -> Result<Engine, WatchError> {
        let (file, var) = match &self.place {
            Place::File { file, var } => (file.clone(), var.clone()),
            _ => file_variable_at(self.pid, addr, len).ok_or(WatchError::NoFile(addr))?,
        };
        let data = std::fs::read(&file).map_err(|e| WatchError::Exe(file.clone(), e))?;
        let scan = accessing_instructions(&data, var.vaddr, var.len);
        self.bump("watch_sites_unclassified", scan.unclassified);
        self.bump("watch_sites_address_taken", scan.address_taken);
        if scan.sites.is_empty() {
            return Err(WatchError::NoSites {
                file: file.display().to_string(),
                unclassified: scan.unclassified,
                address_taken: scan.address_taken,
            });
        }
        let u = UprobeWatch::attach(self.pid, &file, &scan.sites).map_err(WatchError::Uprobe)?;
        self.bump("watch_uprobes", scan.sites.len() as u64);
        Ok(Engine::Uprobes(Box::new(u)))
    }

    fn unavailable(&self, e: &std::io::Error) -> WatchError {
        let (symbol, functions) = match &self.place {
            Place::File { file, var } => (
                var.symbol.clone(),
                std::fs::read(file)
                    .map(|d| functions_referring(&d, var.vaddr, var.len))
                    .unwrap_or_default(),
            ),
            _ => (None, Vec::new()),
        };
        let reason = match e.raw_os_error() {
            Some(libc::ENOSPC) => "no free debug register".to_string(),
            Some(libc::ENOENT | libc::EOPNOTSUPP | libc::EINVAL) => {
                format!("the kernel has no breakpoint events: {e}")
            }
            Some(libc::EACCES | libc::EPERM) => {
                format!("not allowed ({e}): needs root or CAP_PERFMON")
            }
            _ => e.to_string(),
        };
        WatchError::Unavailable {
            reason,
            symbol,
            functions,
        }
    }

    /// Data-flag events of the hits worth keeping (see the module doc).
    fn keep(&mut self, addr: u64, hits: &[Hit]) -> Vec<Event> {
        let mut out = Vec::new();
        let mut repeated = 0u64;
        let mut foreign = 0;
        for h in hits {
            // A child process inherits the watchpoints at its fork: its accesses are
            // to its own copy of the variable.
            if h.tgid != self.pid {
                foreign += 1;
                continue;
            }
            if self.seen.insert(h.tid) {
                self.bump("watch_threads_seen", 1);
            }
            if h.write {
                self.read_since_write.clear();
            } else if !self.read_since_write.insert(h.tid) {
                repeated += 1;
                continue;
            }
            out.push(Event {
                ts: Timestamp(h.ts),
                cpu: Cpu(h.cpu),
                kind: EventKind::Marker {
                    tid: Tid(h.tid),
                    marker: Marker::DataFlag {
                        addr,
                        access: if h.write {
                            DataFlagAccess::Write
                        } else {
                            DataFlagAccess::Read
                        },
                        ip: h.ip,
                    },
                },
            });
        }
        self.bump("watch_reads_repeated", repeated);
        self.bump("watch_hits_other_process", foreign);
        self.bump("watch_hits", hits.len() as u64 - foreign);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes_are_checked() {
        assert!(check_shape(0x1000, 8).is_ok());
        assert!(check_shape(0x1001, 1).is_ok());
        assert!(matches!(
            check_shape(0x1004, 8),
            Err(WatchError::Shape { .. })
        ));
        assert!(matches!(
            check_shape(0x1000, 3),
            Err(WatchError::Shape { .. })
        ));
    }

    #[test]
    fn unavailable_names_the_functions_to_probe() {
        let e = WatchError::Unavailable {
            reason: "no free debug register".into(),
            symbol: Some("done".into()),
            functions: vec!["helper_main".into(), "spin_until_done".into()],
        };
        let s = e.to_string();
        assert!(
            s.contains("unavailable here (no free debug register)"),
            "{s}"
        );
        assert!(
            s.contains("`--via uprobe` probes the instructions that access `done`"),
            "{s}"
        );
        assert!(s.ends_with("helper_main, spin_until_done"), "{s}");
    }
}
