//! Following the goroutines of recorded Go programs. Each recorded process's
//! executable is read once per file (by device and inode); a Go program whose runtime
//! can be followed gets the goroutine probes ([`Probes::attach_go`]), bound to it.
//! A process that execs is looked at again with its new program.

use crate::convert::Converter;
use crate::probes::{GO_MAX_BINARIES, Probes};
use causeway_goruntime::{GoRuntime, Inspection};
use libbpf_rs::Link;
use std::collections::{HashMap, HashSet};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// Counter: processes whose goroutines are followed.
pub const FOLLOWED: &str = "go_processes_followed";
/// Counter: Go processes whose goroutines could not be followed.
pub const UNFOLLOWED: &str = "go_processes_unfollowed";

/// What became of one Go process.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GoOutcome {
    /// Its goroutines are followed; the Go version.
    Followed(String),
    /// They are not, and why.
    Unfollowed(String),
}

/// The Go programs seen in a recording (used by the recorder's session).
#[derive(Default)]
pub(crate) struct GoTracker {
    /// Put the probes in (the goroutine group is on); else only say which processes
    /// are Go programs recorded without goroutine events.
    attach: bool,
    /// Executables read, by (device, inode): the slot of a followable runtime.
    binaries: HashMap<(u64, u64), Result<u32, String>>,
    /// Followable runtimes, by slot.
    runtimes: Vec<GoRuntime>,
    /// Processes looked at, with the executable they ran then.
    seen: HashSet<(u32, u64, u64)>,
    links: Vec<Link>,
    /// Go processes and what became of them, in the order seen.
    pub(crate) outcomes: Vec<(u32, GoOutcome)>,
}

impl GoTracker {
    /// A tracker that puts the probes in when `attach` (the goroutine group is on),
    /// else only names the Go programs recorded without goroutine events.
    pub(crate) fn new(attach: bool) -> GoTracker {
        GoTracker {
            attach,
            ..Default::default()
        }
    }

    /// Look at process `pid` (a recorded one whose program may be new).
    pub(crate) fn follow(&mut self, probes: &Probes, conv: &mut Converter, pid: u32) {
        let exe = PathBuf::from(format!("/proc/{pid}/exe"));
        self.follow_exe(probes, conv, pid, &exe);
    }

    /// Look at process `pid` as running program `exe`: also before it execs it (a
    /// launched command is probed before its first instruction; the probes apply to
    /// whatever address space the process has when the code runs).
    pub(crate) fn follow_exe(
        &mut self,
        probes: &Probes,
        conv: &mut Converter,
        pid: u32,
        exe: &Path,
    ) {
        let Ok(meta) = std::fs::metadata(exe) else {
            return; // gone already
        };
        let file = (meta.dev(), meta.ino());
        if !self.seen.insert((pid, file.0, file.1)) {
            return;
        }
        let slot = match self.binaries.get(&file) {
            Some(r) => r.clone(),
            None => {
                let r = self.read_binary(exe, conv);
                self.binaries.insert(file, r.clone());
                r
            }
        };
        let outcome = match slot {
            Ok(u32::MAX) => return, // not Go
            Ok(_) if !self.attach => GoOutcome::Unfollowed(
                "goroutine events are off (--events without goroutine)".to_string(),
            ),
            Ok(slot) => {
                let rt = &self.runtimes[slot as usize];
                match probes.attach_go(pid, exe, slot, rt) {
                    Ok(links) => {
                        self.links.extend(links);
                        GoOutcome::Followed(rt.version.clone())
                    }
                    Err(e) => GoOutcome::Unfollowed(e),
                }
            }
            Err(why) => GoOutcome::Unfollowed(why),
        };
        let counter = match outcome {
            GoOutcome::Followed(_) => FOLLOWED,
            GoOutcome::Unfollowed(_) => UNFOLLOWED,
        };
        conv.count(counter, 1);
        self.outcomes.push((pid, outcome));
    }

    /// Read an executable: `Ok(slot)` for a followable Go runtime, `Ok(u32::MAX)` for
    /// a program that is not Go, `Err(why)` for a Go program that cannot be followed.
    fn read_binary(&mut self, exe: &std::path::Path, conv: &mut Converter) -> Result<u32, String> {
        match causeway_goruntime::inspect(exe) {
            Ok(Inspection::NotGo) | Err(_) => Ok(u32::MAX),
            Ok(Inspection::Unsupported { version, reason }) => Err(match version {
                Some(v) => format!("{v}: {reason}"),
                None => reason,
            }),
            Ok(Inspection::Go(rt)) => {
                let slot = self.runtimes.len() as u32;
                if slot >= GO_MAX_BINARIES {
                    return Err(format!(
                        "more than {GO_MAX_BINARIES} different Go programs in one recording"
                    ));
                }
                conv.go.set_reasons(slot, rt.wait_reasons.clone());
                self.runtimes.push(rt);
                Ok(slot)
            }
        }
    }
}
