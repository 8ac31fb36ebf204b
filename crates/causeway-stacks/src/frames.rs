//! Stack ids to frame names, root first, as flame graphs want them.

use causeway_format::{FrameSpace, StackId, Tables};
use causeway_model::{StackRef, Thread};
use rustc_hash::FxHashMap;

/// Suffix FlameGraph and inferno use to colour a frame as kernel code.
pub const KERNEL_SUFFIX: &str = "_[k]";

/// Turns stacks into frame names, root first, remembering stacks already named.
#[derive(Debug)]
pub struct FrameNamer<'t> {
    tables: &'t Tables,
    cache: FxHashMap<StackId, Vec<String>>,
}

impl<'t> FrameNamer<'t> {
    /// A namer over a trace's tables.
    pub fn new(tables: &'t Tables) -> FrameNamer<'t> {
        FrameNamer {
            tables,
            cache: FxHashMap::default(),
        }
    }

    /// Frames of one stack, root first: functions inlined at a frame come after (above)
    /// the function they were inlined into. Kernel frames end in [`KERNEL_SUFFIX`].
    pub fn stack(&mut self, id: StackId) -> &[String] {
        let tables = self.tables;
        self.cache
            .entry(id)
            .or_insert_with(|| name_stack(tables, id))
    }

    /// User frames then kernel frames, root first (the kernel runs on top of the
    /// user code that called it).
    pub fn both(&mut self, s: &StackRef) -> Vec<String> {
        let mut out = Vec::new();
        if let Some(u) = s.user {
            out.extend_from_slice(self.stack(u));
        }
        if let Some(k) = s.kernel {
            out.extend_from_slice(self.stack(k));
        }
        out
    }
}

fn name_stack(tables: &Tables, id: StackId) -> Vec<String> {
    let Some(stack) = tables.stack(id) else {
        return vec![causeway_format::tables::MISSING.to_string()];
    };
    let mut out = Vec::new();
    for &fid in stack.frames.iter().rev() {
        let Some(f) = tables.frame(fid) else {
            out.push(causeway_format::tables::MISSING.to_string());
            continue;
        };
        let kernel = matches!(f.space, FrameSpace::Kernel);
        let sym = tables.string(f.symbol);
        let mut name = if sym.is_empty() {
            tables.frame_text(fid)
        } else {
            sym.to_string()
        };
        if kernel {
            name.push_str(KERNEL_SUFFIX);
        }
        out.push(name);
        for inl in f.inlined.iter().rev() {
            out.push(tables.string(inl.symbol).to_string());
        }
    }
    out
}

/// A thread's name for the root of its stacks: its `comm`, or `[tid N]` when unknown (never a name ending in a number, which flame graph tools would read as a second count).
pub fn thread_label(t: &Thread) -> String {
    if t.comm.is_empty() {
        format!("[tid {}]", t.tid.0)
    } else {
        t.comm.clone()
    }
}
