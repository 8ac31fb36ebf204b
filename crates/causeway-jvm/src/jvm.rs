//! One JVM being read: its memory, its layout, its code heaps and the blobs read.

use crate::codecache::{self, Blob, Heap};
use crate::error::JvmError;
use crate::layout::Layout;
use crate::mem::{Memory, ProcMem};
use crate::vmstructs;
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// How long a blob read from the code cache is trusted: compiled code is freed and
/// its memory reused (the sweeper, deoptimization), so blobs are read again after it.
const BLOB_TTL: Duration = Duration::from_secs(2);

/// One JVM being read.
pub(crate) struct Jvm {
    pub(crate) mem: Box<dyn Memory + Send>,
    pub(crate) layout: Layout,
    pub(crate) heaps: Vec<Heap>,
    /// Blobs read, by the start of their code.
    pub(crate) blobs: BTreeMap<u64, Blob>,
    pub(crate) blobs_since: Instant,
}

impl Jvm {
    pub(crate) fn open(pid: u32) -> Result<Jvm, JvmError> {
        let sym = crate::libjvm::libjvm_symbols(pid)?;
        let mem = ProcMem::open(pid).map_err(|_| JvmError::Unreadable("/proc/PID/mem"))?;
        Jvm::with_memory(Box::new(mem), &sym)
    }

    fn with_memory(
        mem: Box<dyn Memory + Send>,
        sym: &dyn Fn(&str) -> Option<u64>,
    ) -> Result<Jvm, JvmError> {
        let v = vmstructs::VmStructs::read(mem.as_ref(), sym)?;
        let layout = Layout::of(&v)?;
        Ok(Jvm {
            heaps: codecache::heaps(mem.as_ref(), &layout),
            mem,
            layout,
            blobs: BTreeMap::new(),
            blobs_since: Instant::now(),
        })
    }

    /// The blob holding `pc`, from the cache or the code cache.
    pub(crate) fn blob_at(&mut self, pc: u64) -> Option<&Blob> {
        if self.blobs_since.elapsed() > BLOB_TTL {
            self.blobs.clear();
            self.blobs_since = Instant::now();
        }
        let cached = self
            .blobs
            .range(..=pc)
            .next_back()
            .is_some_and(|(_, b)| pc < b.code_end);
        if !cached {
            let (mem, l) = (self.mem.as_ref(), &self.layout);
            // A heap grows as the JVM commits more of it: read the list again.
            if !self.heaps.iter().any(|h| (h.low..h.high).contains(&pc)) {
                self.heaps = codecache::heaps(mem, l);
            }
            let heap = self.heaps.iter().find(|h| (h.low..h.high).contains(&pc))?;
            let start = codecache::blob_start(mem, l, heap, pc)?;
            let b = codecache::blob(mem, l, start, pc)?;
            self.blobs.insert(b.code_begin, b);
        }
        self.blobs.range(..=pc).next_back().map(|(_, b)| b)
    }
}
