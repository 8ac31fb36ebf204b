//! Process and machine facts the kernel side of causeway reads from `/proc` and
//! `/sys`: one parser of `/proc/PID/maps` for the recorder, the probes, the data-flag
//! watch and the in-process library (`maps`); a process's names, command line,
//! executable, parent and threads (`process`); block devices, link speeds and IRQ
//! handlers (`system`); a command started so that nothing it runs goes unobserved
//! (`launch`); the ELF files processes map: sections, segments and load bias, symbols
//! by name and by address, build IDs (`elf`); names of JIT-compiled code from perf
//! maps and jitdump files (`jit`); the files a process maps as this process can open
//! them, whatever mount namespace the process runs in (`files`); its control groups,
//! their CPU quota and what owns them (`cgroup`).
//!
//! Reads can fail at any time, because processes exit: readers return an
//! [`std::io::Result`] or an empty answer, and callers treat a missing answer as
//! "unknown".

pub mod cgroup;
pub mod cpus;
pub mod elf;
pub mod files;
pub mod jit;
pub mod launch;
pub mod maps;
pub mod process;
pub mod system;

pub use maps::{Mapping, mapped_files};
