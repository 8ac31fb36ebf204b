//! How many user frames of a trace have names, and why the others do not: code in a
//! file without symbols, or code in anonymous memory (JIT-compiled code whose runtime
//! wrote no perf map or jitdump file).

use causeway_format::{FrameSpace, Tables};
use serde::Serialize;

/// The module name the recorder gives frames named from a JIT table.
const JIT_MODULE: &str = "[jit]";

/// Counts over the trace's distinct user frames.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct FrameNames {
    /// Distinct user frames.
    pub user: u64,
    /// Named from a JIT table (perf map or jitdump).
    pub jit_named: u64,
    /// Unnamed, in a file (stripped, or no symbol covers the address).
    pub unnamed_in_files: u64,
    /// Unnamed, in anonymous memory (JIT code without a perf map, or unknown).
    pub unnamed_anonymous: u64,
}

impl FrameNames {
    /// Count the frames of these tables.
    pub fn count(t: &Tables) -> FrameNames {
        let mut n = FrameNames::default();
        for f in &t.frames {
            if !matches!(f.space, FrameSpace::User { .. }) {
                continue;
            }
            n.user += 1;
            let module = t.string(f.module);
            if module == JIT_MODULE {
                n.jit_named += 1;
            }
            if t.string(f.symbol).is_empty() {
                if module.starts_with('/') {
                    n.unnamed_in_files += 1;
                } else {
                    n.unnamed_anonymous += 1;
                }
            }
        }
        n
    }

    /// Frames without a name.
    pub fn unnamed(&self) -> u64 {
        self.unnamed_in_files + self.unnamed_anonymous
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use causeway_format::{Frame, StringId, Tgid};

    #[test]
    fn frames_are_counted_by_why_they_lack_a_name() {
        let mut t = Tables {
            strings: ["", "/usr/bin/p", "[jit]", "main", "LFoo;::bar"]
                .map(String::from)
                .to_vec(),
            ..Tables::default()
        };
        let user = FrameSpace::User { tgid: Tgid(1) };
        let f = |space, module: u32, symbol: u32| {
            Frame::new(space, 0x1000, StringId(module), StringId(symbol), 0)
        };
        t.frames = vec![
            f(user, 1, 3),               // named in a file
            f(user, 1, 0),               // stripped
            f(user, 2, 4),               // JIT, named
            f(user, 0, 0),               // anonymous, unnamed
            f(FrameSpace::Kernel, 0, 0), // kernel: not counted
        ];
        let n = FrameNames::count(&t);
        assert_eq!(
            n,
            FrameNames {
                user: 4,
                jit_named: 1,
                unnamed_in_files: 1,
                unnamed_anonymous: 1
            }
        );
        assert_eq!(n.unnamed(), 2);
    }
}
