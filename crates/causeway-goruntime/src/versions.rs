//! The runtime's field offsets by Go version, for binaries without DWARF.
//!
//! Each row was read from the DWARF of a real build (amd64) of that minor version by
//! this crate's own reader (`cargo run --example go-inspect -- --row FILE`, which
//! `scripts/go-layouts.sh` runs for every version); the test `layouts_by_version`
//! checks each row against the DWARF of every toolchain in the module cache. Patch
//! releases do not change the runtime's structures. A version not in the table is
//! never guessed at.

use crate::layout::{Layout, PollLayout};

/// What a minor version's runtime looks like.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Known {
    /// `N` in `go1.N`.
    minor: u32,
    pub(crate) layout: Layout,
    /// The number of entries of `runtime.waitReasonStrings`.
    pub(crate) wait_reasons: usize,
}

/// A row: `g` is `runtime.g`'s goid, m, startpc, parentGoid (0: absent), schedlink,
/// then `runtime.m.curg` and `runtime.gList.head`; `poll` is `runtime.pollDesc`'s fd,
/// rg, wg and self.
const fn known(minor: u32, g: [u32; 7], poll: [u32; 4], wait_reasons: usize) -> Known {
    Known {
        minor,
        layout: Layout {
            g_goid: g[0],
            g_m: g[1],
            g_startpc: g[2],
            g_parent_goid: if g[3] == 0 { None } else { Some(g[3]) },
            g_schedlink: g[4],
            m_curg: g[5],
            glist_head: g[6],
            poll: Some(PollLayout {
                fd: poll[0],
                rg: poll[1],
                wg: poll[2],
                this: poll[3],
            }),
        },
        wait_reasons,
    }
}

/// Go 1.19 to 1.26 on amd64 (1.19: what Debian 12 builds its Go packages with).
const KNOWN: &[Known] = &[
    known(19, [152, 48, 312, 0, 160, 192, 0], [8, 24, 32, 232], 27),
    known(20, [152, 48, 312, 0, 160, 192, 0], [8, 24, 32, 232], 32),
    known(21, [152, 48, 296, 272, 160, 192, 0], [8, 32, 40, 240], 32),
    known(22, [152, 48, 296, 272, 160, 192, 0], [8, 32, 40, 240], 37),
    known(23, [160, 48, 304, 280, 168, 192, 0], [8, 32, 40, 272], 38),
    known(24, [160, 48, 304, 280, 168, 192, 0], [8, 32, 40, 272], 44),
    known(25, [152, 48, 296, 272, 160, 184, 0], [8, 32, 40, 288], 47),
    known(26, [152, 48, 304, 280, 160, 184, 0], [8, 32, 40, 288], 47),
];

/// The minor version of a release or release candidate (`go1.22.12` → 22,
/// `go1.23rc1` → 23, `go1.24.1 X:nocoverageredesign` → 24); `None` for a development
/// build (`devel go1.27-abcdef`), whose structures may differ from any release.
pub(crate) fn minor(version: &str) -> Option<u32> {
    let rest = version.strip_prefix("go1.")?;
    let end = rest
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(rest.len());
    rest[..end].parse().ok()
}

/// The row of `version`, or why there is none.
pub(crate) fn lookup(version: &str) -> Result<&'static Known, String> {
    let first = KNOWN.first().map_or(0, |k| k.minor);
    let last = KNOWN.last().map_or(0, |k| k.minor);
    let Some(m) = minor(version) else {
        return Err(format!(
            "field offsets of a development build unknown without DWARF (known: Go 1.{first} to 1.{last})"
        ));
    };
    KNOWN.iter().find(|k| k.minor == m).ok_or_else(|| {
        format!("Go 1.{m}: field offsets unknown without DWARF (known: Go 1.{first} to 1.{last})")
    })
}

/// The versions the table covers, as `go1.N`.
pub fn known_versions() -> Vec<String> {
    KNOWN.iter().map(|k| format!("go1.{}", k.minor)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_are_read_to_their_minor() {
        assert_eq!(minor("go1.22.12"), Some(22));
        assert_eq!(minor("go1.23rc1"), Some(23));
        assert_eq!(minor("go1.24.1 X:nocoverageredesign"), Some(24));
        assert_eq!(minor("go1.20"), Some(20));
        assert_eq!(minor("devel go1.27-abcdef"), None);
    }

    #[test]
    fn unknown_versions_are_refused_with_the_reason() {
        assert!(lookup("go1.26.8").is_ok());
        let why = lookup("go1.27.0").unwrap_err();
        assert!(
            why.starts_with("Go 1.27: field offsets unknown without DWARF"),
            "{why}"
        );
        assert!(lookup("go1.18.10").is_err());
        assert!(
            lookup("devel go1.27-abcdef")
                .unwrap_err()
                .contains("development")
        );
    }

    #[test]
    fn the_table_is_in_order_without_gaps() {
        for w in KNOWN.windows(2) {
            assert_eq!(w[0].minor + 1, w[1].minor);
        }
    }
}
