//! A call site by the name a user types: `fdatasync` is glibc's `__GI_fdatasync`, its
//! versioned `fdatasync@GLIBC_2.2.5`, or a compiler's clone `fdatasync.isra.0`; the
//! symbolizer names the frame by whichever alias the binary's symbol table gave the
//! address, so an exact comparison refused the name users know.

use causeway_format::Tables;
use causeway_model::{Model, SegmentState};
use std::collections::HashMap;

/// Names listed when a typed name matches no call site.
const NEAREST: usize = 5;

/// A symbol without what aliases add: a version (`@GLIBC_2.2.5`, `@@…`), a
/// compiler's clone suffix (`.isra.0`, `.constprop.1`, `.part.0`, `.cold`,
/// `.lto_priv.0`), a parameter list (`f(int)`), and glibc's internal prefixes
/// (`__GI_`, `__libc_`, leading underscores).
pub(crate) fn base_name(symbol: &str) -> &str {
    let mut s = symbol;
    if let Some(i) = s.find('@') {
        s = &s[..i];
    }
    if let Some(i) = s.find('(').filter(|&i| i > 0) {
        s = &s[..i];
    }
    // A clone suffix starts at the first dot after the name (C and C++ names have no
    // dots; Java's and JavaScript's are not glibc-style and keep theirs).
    if let Some(i) = s.find('.').filter(|&i| i > 0)
        && [
            ".isra",
            ".constprop",
            ".part",
            ".cold",
            ".lto_priv",
            ".localalias",
        ]
        .iter()
        .any(|c| s[i..].starts_with(c))
    {
        s = &s[..i];
    }
    loop {
        let t = s
            .strip_prefix("__GI_")
            .or_else(|| s.strip_prefix("__libc_"))
            .or_else(|| s.strip_prefix('_'))
            .unwrap_or(s);
        if t == s || t.is_empty() {
            return s;
        }
        s = t;
    }
}

/// True when a frame's `symbol` is the function a user `typed`: the same text, the
/// same name once aliases are taken off both, or the end of its qualified name (a JIT
/// frame `int sun.nio.ch.FileDispatcherImpl.force0(java.io.FileDescriptor, boolean)` is
/// `force0` or `FileDispatcherImpl.force0`; `ns::Log::flush` is `Log::flush`), as
/// users name a method.
pub(crate) fn same_function(symbol: &str, typed: &str) -> bool {
    if symbol == typed || (!symbol.is_empty() && base_name(symbol) == base_name(typed)) {
        return true;
    }
    let typed = base_name(typed);
    let name = qualified_name(symbol);
    if typed.is_empty() || name == typed {
        return name == typed;
    }
    name.len() > typed.len()
        && name.ends_with(typed)
        && [".", "::", "/"]
            .iter()
            .any(|sep| name[..name.len() - typed.len()].ends_with(sep))
}

/// A symbol's qualified name: without its parameter list and a JIT frame's return type
/// (`void kafka.log.UnifiedLog.flush(boolean)` is `kafka.log.UnifiedLog.flush`).
fn qualified_name(symbol: &str) -> &str {
    let s = params_start(symbol).map_or(symbol, |i| &symbol[..i]);
    s.rsplit_once(' ').map_or(s, |(_, name)| name)
}

/// Where a symbol's final parameter list opens (the `(` matching its last `)`), if it
/// ends in one: Go's `main.(*stream).loop` has none.
fn params_start(symbol: &str) -> Option<usize> {
    if !symbol.ends_with(')') {
        return None;
    }
    let mut depth = 0usize;
    for (i, c) in symbol.char_indices().rev() {
        match c {
            ')' => depth += 1,
            '(' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return (i > 0).then_some(i);
                }
            }
            _ => {}
        }
    }
    None
}

/// The functions waits blocked under that are most like `typed`: those containing it
/// (or contained in it) first, then by edit distance; ties by how many waits.
pub(crate) fn nearest(model: &Model, tables: &Tables, typed: &str) -> Vec<String> {
    let mut waits: HashMap<&str, u64> = HashMap::new();
    for t in model.threads() {
        for s in &t.segments {
            let SegmentState::Blocked {
                switch_out_stack: Some(st),
                ..
            } = s.state
            else {
                continue;
            };
            let Some(stack) = st.user.and_then(|u| tables.stack(u)) else {
                continue;
            };
            for f in &stack.frames {
                if let Some(fr) = tables.frame(*f) {
                    let name = tables.string(fr.symbol);
                    if !name.is_empty() {
                        *waits.entry(name).or_default() += 1;
                    }
                }
            }
        }
    }
    let want = base_name(typed).to_lowercase();
    let mut ranked: Vec<(bool, usize, u64, &str)> = waits
        .into_iter()
        .map(|(name, n)| {
            let base = base_name(name).to_lowercase();
            let related = base.contains(&want) || want.contains(&base);
            (!related, distance(&base, &want), u64::MAX - n, name)
        })
        .collect();
    ranked.sort();
    ranked
        .into_iter()
        .take(NEAREST)
        .map(|(_, _, _, n)| n.to_string())
        .collect()
}

/// Levenshtein distance over characters.
fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = (prev + usize::from(ca != cb)).min(row[j] + 1).min(cur + 1);
            prev = cur;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_names_users_type_match_the_aliases_symbolizers_give() {
        for sym in [
            "__GI_fdatasync",
            "fdatasync@GLIBC_2.2.5",
            "__libc_fdatasync",
            "__fdatasync",
            "fdatasync.isra.0",
            "fdatasync",
        ] {
            assert!(same_function(sym, "fdatasync"), "{sym}");
        }
        assert!(same_function("__GI___clock_nanosleep", "clock_nanosleep"));
        assert!(same_function("ns::f(int)", "ns::f"));
        assert!(!same_function("__GI_fsync", "fdatasync"));
        assert!(!same_function("fdatasync_all", "fdatasync"));
        assert!(!same_function("", "_"));
        // Methods by their short or class-qualified names.
        let force = "int sun.nio.ch.FileDispatcherImpl.force0(java.io.FileDescriptor, boolean)";
        for typed in [
            "force0",
            "FileDispatcherImpl.force0",
            "sun.nio.ch.FileDispatcherImpl.force0",
        ] {
            assert!(same_function(force, typed), "{typed}");
        }
        assert!(!same_function(force, "rce0"));
        assert!(!same_function(force, "boolean)"));
        assert!(same_function("ns::Log::flush()", "Log::flush"));
        assert!(same_function("main.(*stream).internalLoop", "internalLoop"));
    }

    #[test]
    fn distance_counts_edits() {
        assert_eq!(distance("fsync", "fdatasync"), 4);
        assert_eq!(distance("", "ab"), 2);
        assert_eq!(distance("abc", "abc"), 0);
    }
}
