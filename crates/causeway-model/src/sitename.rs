//! A place in the program's own code in words: its innermost own functions, each
//! called by the next, then the library call they made and the leaf where the time
//! went, `slowHandler ← (anonymous) (pbkdf2Sync → kdf_pbkdf2_derive)`. Which frames
//! are the program's is [`crate::owncode`]'s rule; the diagnosis, the bottleneck's
//! on-CPU profiles and the tables' wait sites word it here, the same way.

use crate::owncode::{JIT_MODULE, OwnFrames, jit_name};
use causeway_format::{FrameId, Tables};

/// The program's own functions named per site.
pub const OWN_FRAMES: usize = 3;

/// A site's functions, named.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SiteNames {
    /// The program's innermost own functions, innermost first (at most
    /// [`OWN_FRAMES`]).
    pub own: Vec<String>,
    /// The library (or runtime) function the innermost one called.
    pub entry: Option<String>,
    /// The stack's innermost function when it is not the program's.
    pub leaf: Option<String>,
}

impl SiteNames {
    /// Name the own frames of a stack's `frames` (innermost first).
    pub fn of(t: &Tables, frames: &[FrameId], own: &OwnFrames) -> SiteNames {
        let name = |i: usize| frames.get(i).map(|&f| function_name(t, f));
        SiteNames {
            own: own.own.clone().take(OWN_FRAMES).filter_map(name).collect(),
            entry: own.entry.and_then(name),
            leaf: own.leaf.and_then(name),
        }
    }

    /// The site in one line (see the module).
    pub fn text(&self) -> String {
        text(&self.own, self.entry.as_deref(), self.leaf.as_deref())
    }
}

/// `own[0] ← own[1] ← … (entry → leaf)`; the parentheses hold one name when entry
/// and leaf are the same function or one is missing.
pub fn text(own: &[String], entry: Option<&str>, leaf: Option<&str>) -> String {
    let mut s = own.join(" ← ");
    match (entry, leaf) {
        (Some(a), Some(b)) if a != b => s.push_str(&format!(" ({a} → {b})")),
        (Some(a), _) | (None, Some(a)) => s.push_str(&format!(" ({a})")),
        (None, None) => {}
    }
    s
}

/// A function's name as an answer shows it: a JIT-compiled function's bare name
/// (`(anonymous)` if it has none), a native function's without its parameter list.
pub fn function_name(t: &Tables, f: FrameId) -> String {
    let Some(frame) = t.frame(f) else {
        return "?".to_string();
    };
    let sym = t.string(frame.symbol);
    if sym.is_empty() {
        return t.frame_text(f);
    }
    if t.string(frame.module) == JIT_MODULE {
        let n = jit_name(sym);
        return if n.function.is_empty() {
            "(anonymous)".to_string()
        } else {
            n.function.to_string()
        };
    }
    // C++: `ns::f(int, char**)` -> `ns::f`; thunks (`{virtual override thunk(...)}`)
    // and operators keep their text.
    match sym.find('(') {
        Some(i) if i > 0 && !sym.starts_with('{') && !sym[..i].contains("operator") => {
            sym[..i].to_string()
        }
        _ => sym.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_site_reads_callee_first_with_its_library_call_in_parentheses() {
        let own = vec!["slowHandler".to_string(), "(anonymous)".to_string()];
        assert_eq!(
            text(&own, Some("pbkdf2Sync"), Some("kdf_pbkdf2_derive")),
            "slowHandler ← (anonymous) (pbkdf2Sync → kdf_pbkdf2_derive)"
        );
        assert_eq!(
            text(&own[..1], Some("poll"), Some("poll")),
            "slowHandler (poll)"
        );
        assert_eq!(text(&own[..1], None, None), "slowHandler");
    }
}
