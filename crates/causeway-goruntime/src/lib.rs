//! What causeway needs to know about a Go program to follow its goroutines: where the
//! runtime's scheduler functions start (to put uprobes there) and how the runtime's
//! structures are laid out in this build (to read goroutine ids and links from them).
//!
//! Everything comes from the binary itself where it says: function addresses from the
//! ELF symbol table, field offsets from the DWARF the Go linker writes by default, the
//! names of the wait reasons from the runtime's own `waitReasonStrings` table, and
//! the version from `runtime.buildVersion`; then any Go version that keeps the same
//! scheduler functions works. A binary built with `-ldflags='-s -w'` or stripped keeps
//! what the runtime needs itself: function addresses come from `.gopclntab`
//! ([`Pclntab`]), the version from `.go.buildinfo`, the wait reasons' table is found
//! by its contents, and the field offsets come from a table of the Go versions whose
//! layouts were read from real builds ([`known_versions`]). A version outside that
//! table is reported as unsupported, never guessed at.

mod buildinfo;
mod dwarf;
mod elf;
mod error;
mod layout;
mod pclntab;
mod versions;

use std::path::Path;

pub use error::Error;
pub use layout::{Layout, PollLayout};
pub use pclntab::{Function, Pclntab, PclntabCache};
pub use versions::known_versions;

/// File offsets of the runtime functions the recorder probes (a uprobe is placed at a
/// file offset): each function's frame setup after its stack check, where the
/// arguments are still in their registers (see the recorder's `golang.h`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ProbePoints {
    /// `runtime.execute(gp *g, inheritTime bool)`: the calling thread starts running
    /// goroutine `gp` (first argument register).
    pub execute: u64,
    /// `runtime.gopark(unlockf, lock, reason waitReason, ...)`: the current goroutine
    /// (register R14) parks; `reason` is the third argument.
    pub gopark: u64,
    /// `runtime.ready(gp *g, traceskip int, next bool)`: `gp` is made runnable by the
    /// goroutine the calling thread carries (`g.m.curg`; `ready` runs on the system
    /// stack, so R14 holds the thread's `g0`).
    pub ready: u64,
    /// `runtime.injectglist(glist *gList)`: a list of goroutines made runnable at
    /// once by the scheduler (network poller results, mostly).
    pub injectglist: u64,
}

/// A Go program's runtime, as far as goroutine tracking goes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GoRuntime {
    /// The Go version the program was built with (`go1.26.8`).
    pub version: String,
    /// Where to probe.
    pub probes: ProbePoints,
    /// What to read.
    pub layout: Layout,
    /// Names of the runtime's wait reasons, indexed by the `reason` argument of
    /// `gopark` ("chan receive", "sync.Mutex.Lock", "IO wait", ...).
    pub wait_reasons: Vec<String>,
}

impl GoRuntime {
    /// The number of the "IO wait" reason (a park for network readiness).
    pub fn io_wait_reason(&self) -> Option<u8> {
        let i = self.wait_reasons.iter().position(|r| r == "IO wait")?;
        u8::try_from(i).ok()
    }
}

/// What a file is, for goroutine tracking.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Inspection {
    /// Not a Go program (no Go runtime in it).
    NotGo,
    /// A Go program whose goroutines can be followed.
    Go(GoRuntime),
    /// A Go program that cannot be followed, and why (stripped symbols or DWARF, a
    /// runtime without the expected functions, another architecture).
    Unsupported {
        /// The Go version, when the binary says.
        version: Option<String>,
        /// Why, in a few words.
        reason: String,
    },
}

/// Read the Go runtime facts of the ELF file at `path`. Only the parts needed are
/// read (headers and symbols; the DWARF of Go programs only), so looking at a large
/// program that is not Go costs little.
pub fn inspect(path: &Path) -> Result<Inspection, Error> {
    let f = std::fs::File::open(path).map_err(|e| Error::Read(path.to_path_buf(), e))?;
    let cache = object::ReadCache::new(f);
    inspect_from(&cache)
}

/// [`inspect`] on a file already in memory.
pub fn inspect_bytes(data: &[u8]) -> Result<Inspection, Error> {
    inspect_from(data)
}

fn inspect_from<'d, R: object::ReadRef<'d>>(data: R) -> Result<Inspection, Error> {
    let file = elf::GoElf::parse(data)?;
    if !file.is_go() {
        return Ok(Inspection::NotGo);
    }
    let version = file.build_version();
    let unsupported = |reason: &str| {
        Ok(Inspection::Unsupported {
            version: version.clone(),
            reason: reason.to_string(),
        })
    };
    if !file.is_x86_64() {
        return unsupported("not an x86-64 binary");
    }
    let Some(version) = version.clone() else {
        return unsupported(
            "no Go version in the binary (no runtime.buildVersion, no .go.buildinfo)",
        );
    };
    let probe = |name: &str| file.probe_offset(name);
    let (Some(execute), Some(gopark), Some(ready), Some(injectglist)) = (
        probe("runtime.execute"),
        probe("runtime.gopark"),
        probe("runtime.ready"),
        probe("runtime.injectglist"),
    ) else {
        return unsupported("the runtime lacks execute, gopark, ready or injectglist");
    };
    let known = versions::lookup(&version);
    let layout = match (dwarf::layout(&file)?, &known) {
        (Some(layout), _) => layout,
        (None, Ok(k)) => k.layout,
        (None, Err(why)) => return unsupported(why),
    };
    Ok(Inspection::Go(GoRuntime {
        version,
        probes: ProbePoints {
            execute,
            gopark,
            ready,
            injectglist,
        },
        layout,
        wait_reasons: file.wait_reasons(known.ok().map(|k| k.wait_reasons)),
    }))
}
