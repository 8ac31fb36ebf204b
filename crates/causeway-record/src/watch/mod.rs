//! Data flags: hardware watchpoints on one variable of one process (Argus §4.2's
//! data-flag edges; `causeway watch`, `causeway record --watch`).
//!
//! Every thread of the process gets a pair of perf breakpoint events on the variable
//! ([`perf`]); threads that appear later are found by listing `/proc/PID/task` at
//! every pass of the reader (every 10 ms while watching), so a new thread is watched
//! from then on. Hits become [`Marker::DataFlag`] events on the trace clock.
//!
//! Not every read is kept. A thread polling a flag reads it tens of thousands of times
//! a second, and only the first read after a write can see that write: the event
//! graph's data-flag edge goes from a write to the first read of each other thread
//! after it. So each thread's first read after each write is kept (and its first read
//! ever), the rest are counted (`watch_reads_repeated`). Writes are all kept.

mod perf;
mod resolve;

pub use perf::Hit;
pub use resolve::{FileVariable, find_symbol, functions_referring, load_bias};

use crate::procfs;
use causeway_format::{Cpu, DataFlagAccess, Event, EventKind, Marker, Tid, Timestamp};
use perf::ThreadWatch;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// What to watch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WatchTarget {
    /// A symbol of the program's executable (static or dynamic symbol table).
    Symbol(String),
    /// An address in the process (already loaded, no bias applied).
    Addr(u64),
}

/// A watch request: the variable and how many bytes of it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WatchSpec {
    /// The variable.
    pub target: WatchTarget,
    /// Bytes watched (1, 2, 4 or 8); `None`: the symbol's size (8 for an address).
    pub len: Option<u8>,
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
        "no symbol `{0}` in the executable's symbol tables (a static variable of a stripped binary has none: give --addr)"
    )]
    NoSymbol(String),
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
            "; instead, uprobes on the functions whose code refers to `{name}` show who \
             touches it and when: {}",
            functions.join(", ")
        ));
    }
    s
}

/// Valid watchpoint lengths.
const LENGTHS: [u8; 4] = [1, 2, 4, 8];

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

/// Where the variable is in the file, if found by name.
enum Place {
    File { exe: PathBuf, var: FileVariable },
    Loaded { addr: u64, len: u8 },
}

/// A running watch of one process.
pub struct Watch {
    pid: u32,
    place: Place,
    /// Loaded address and length, once known.
    armed: Option<(u64, u8)>,
    threads: BTreeMap<u32, ThreadWatch>,
    /// Threads whose events could not be opened (gone, or refused): not retried.
    failed: BTreeSet<u32>,
    /// Threads that read since the last write.
    read_since_write: BTreeSet<u32>,
    counters: BTreeMap<&'static str, u64>,
}

impl Watch {
    /// Prepare to watch `spec` in the process that runs (or will run) `exe`; nothing is
    /// attached until [`Watch::poll`] finds the executable mapped.
    pub fn new(pid: u32, exe: &Path, spec: &WatchSpec) -> Result<Watch, WatchError> {
        let place = match &spec.target {
            WatchTarget::Symbol(name) => {
                let data = std::fs::read(exe).map_err(|e| WatchError::Exe(exe.into(), e))?;
                let var = find_symbol(&data, name, spec.len)?;
                check_shape(var.vaddr, var.len)?;
                // /proc/PID/exe and /proc/PID/maps name the file by its real path.
                let exe = exe.canonicalize().unwrap_or_else(|_| exe.to_path_buf());
                Place::File { exe, var }
            }
            WatchTarget::Addr(a) => {
                let len = spec.len.unwrap_or(8);
                check_shape(*a, len)?;
                Place::Loaded { addr: *a, len }
            }
        };
        Ok(Watch {
            pid,
            place,
            armed: None,
            threads: BTreeMap::new(),
            failed: BTreeSet::new(),
            read_since_write: BTreeSet::new(),
            counters: BTreeMap::new(),
        })
    }

    /// The watched address and length, once the executable is mapped.
    pub fn armed(&self) -> Option<(u64, u8)> {
        self.armed
    }

    /// Counters for the trace's statistics.
    pub fn counters(&self) -> &BTreeMap<&'static str, u64> {
        &self.counters
    }

    /// Threads watched now.
    pub fn threads(&self) -> usize {
        self.threads.len()
    }

    /// The loaded address, if the executable is mapped (a launched command maps it
    /// only once it has exec'd).
    fn locate(&self) -> Option<(u64, u8)> {
        match &self.place {
            Place::Loaded { addr, len } => Some((*addr, *len)),
            Place::File { exe, var } => {
                let mapped = procfs::exe(self.pid).is_some_and(|p| Path::new(&p) == exe);
                if !mapped {
                    return None;
                }
                let bias = load_bias(self.pid, exe, var)?;
                Some((var.vaddr.wrapping_add(bias), var.len))
            }
        }
    }

    /// Attach to threads not yet watched, take every hit since the last call, and
    /// return them as data-flag events in time order. Fails only if no thread could be
    /// watched at all (the kernel refused breakpoints).
    pub fn poll(&mut self) -> Result<Vec<Event>, WatchError> {
        if self.armed.is_none() {
            self.armed = self.locate();
        }
        let Some((addr, len)) = self.armed else {
            return Ok(Vec::new());
        };
        self.attach_new(addr, len)?;
        let mut hits = Vec::new();
        let mut lost = 0;
        let mut throttled = 0;
        for t in self.threads.values_mut() {
            lost += t.drain(&mut hits);
            throttled += std::mem::take(&mut t.throttled);
        }
        self.bump("watch_throttled", throttled);
        self.bump("watch_hits_lost", lost);
        // Threads that are gone have nothing more to give.
        let live: BTreeSet<u32> = procfs::threads(self.pid).into_iter().collect();
        self.threads.retain(|tid, _| live.contains(tid));
        hits.sort_by_key(|h| h.ts);
        Ok(self.keep(addr, &hits))
    }

    fn bump(&mut self, name: &'static str, n: u64) {
        if n > 0 {
            *self.counters.entry(name).or_default() += n;
        }
    }

    fn attach_new(&mut self, addr: u64, len: u8) -> Result<(), WatchError> {
        let mut refused = None;
        for tid in procfs::threads(self.pid) {
            if self.threads.contains_key(&tid) || self.failed.contains(&tid) {
                continue;
            }
            match ThreadWatch::open(tid, addr, len) {
                Ok(t) => {
                    self.threads.insert(tid, t);
                    self.bump("watch_threads", 1);
                }
                Err(e) => {
                    self.failed.insert(tid);
                    // A thread that exited between the listing and the open is no news.
                    if e.raw_os_error() != Some(libc::ESRCH) {
                        self.bump("watch_threads_refused", 1);
                        refused = Some(e);
                    }
                }
            }
        }
        match refused {
            Some(e) if self.threads.is_empty() => Err(self.unavailable(&e)),
            _ => Ok(()),
        }
    }

    fn unavailable(&self, e: &std::io::Error) -> WatchError {
        let (symbol, functions) = match &self.place {
            Place::File { exe, var } => (
                var.symbol.clone(),
                std::fs::read(exe)
                    .map(|d| functions_referring(&d, var.vaddr, var.len))
                    .unwrap_or_default(),
            ),
            Place::Loaded { .. } => (None, Vec::new()),
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
        for h in hits {
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
        self.bump("watch_hits", hits.len() as u64);
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
        assert!(s.contains("refers to `done`"), "{s}");
        assert!(s.ends_with("helper_main, spin_until_done"), "{s}");
    }
}
