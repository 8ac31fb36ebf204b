//! Process titles: the command line a process shows (`ps -o args`), kept current.
//!
//! Servers rename their processes while they run: a pre-forked backend writes
//! `server: user db 127.0.0.1 idle` over its argv, a worker calls `prctl(PR_SET_NAME)`.
//! The process table gets a new row whenever the title read from
//! `/proc/PID/cmdline` differs from the last one recorded, so reports can say what each
//! process was. Titles are read when a thread of the process renames itself (the kernel
//! reports that), every [`REFRESH`] for the recorded processes (an argv rewrite is
//! invisible to the kernel's tracepoints), and once more when the recording ends.

use crate::convert::Converter;
use causeway_format::{ProcessInfo, StringId, Tgid, Timestamp};
use std::time::{Duration, Instant};

/// How often recorded processes' titles are read again.
pub const REFRESH: Duration = Duration::from_secs(1);

/// Most processes read per refresh: bounds the cost of a refresh on a system-wide
/// recording of a busy machine (a read costs about 10 µs).
const MAX_PER_REFRESH: usize = 512;

/// When the titles were last read.
#[derive(Debug)]
pub struct TitleWatch {
    last: Instant,
}

impl Default for TitleWatch {
    fn default() -> Self {
        TitleWatch {
            last: Instant::now(),
        }
    }
}

impl TitleWatch {
    /// Read the recorded processes' titles again if [`REFRESH`] has passed (or
    /// `force`), adding a row at `ts` for each that changed.
    pub fn tick(&mut self, c: &mut Converter, ts: u64, force: bool) {
        if !force && self.last.elapsed() < REFRESH {
            return;
        }
        self.last = Instant::now();
        let tgids: Vec<u32> = c.title_candidates().take(MAX_PER_REFRESH).collect();
        for tgid in tgids {
            c.note_title(tgid, ts);
        }
    }
}

impl Converter {
    /// Read a process's title now; if it changed, add a process row from `ts` with it
    /// (the same executable and parent as the row before).
    pub fn note_title(&mut self, tgid: u32, ts: u64) {
        let Some(title) = crate::procfs::cmdline(tgid) else {
            return; // gone: its last title stays
        };
        if title.is_empty() {
            return; // a zombie or kernel thread shows no command line
        }
        let last = self.latest_process(tgid).cloned();
        if last
            .as_ref()
            .is_some_and(|p| self.strings.get(p.cmdline) == title)
        {
            return;
        }
        let cmdline = self.strings.intern(&title);
        let (parent, exe) = last.map_or((None, StringId(0)), |p| (p.parent, p.exe));
        self.push_process(ProcessInfo {
            tgid: Tgid(tgid),
            parent,
            since: Timestamp(ts),
            exe,
            cmdline,
        });
    }
}
