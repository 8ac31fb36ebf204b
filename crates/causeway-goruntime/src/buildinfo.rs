//! The Go version from `.go.buildinfo` (what `go version FILE` prints), which a
//! stripped binary keeps: the runtime reads it for `runtime/debug.ReadBuildInfo`.
//!
//! Since Go 1.18 the section starts with a 32-byte header (`\xff Go buildinf:`, the
//! pointer size, a flags byte whose bit 1 says the strings follow inline), then the
//! version and the module information, each as a varint length and its bytes. The
//! older format (pointers to string headers) is not read.

const MAGIC: &[u8] = b"\xff Go buildinf:";
const HEADER: usize = 32;
const INLINE_STRINGS: u8 = 0x2;

/// The version ("go1.26.8") from the section's bytes; `None` for another format.
pub(crate) fn version(section: &[u8]) -> Option<String> {
    if !section.starts_with(MAGIC) || section.get(15)? & INLINE_STRINGS == 0 {
        return None;
    }
    let (len, used) = uvarint(section.get(HEADER..)?)?;
    let from = HEADER + used;
    let bytes = section.get(from..from.checked_add(usize::try_from(len).ok()?)?)?;
    let v = std::str::from_utf8(bytes).ok()?;
    (!v.is_empty()).then(|| v.to_string())
}

/// An unsigned LEB128 varint and the bytes it took.
fn uvarint(b: &[u8]) -> Option<(u64, usize)> {
    let mut v = 0u64;
    for (i, &byte) in b.iter().enumerate().take(10) {
        v |= u64::from(byte & 0x7f) << (7 * i);
        if byte & 0x80 == 0 {
            return Some((v, i + 1));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn section(flags: u8, version: &str) -> Vec<u8> {
        let mut s = MAGIC.to_vec();
        s.extend([8, flags]);
        s.resize(HEADER, 0);
        s.push(version.len() as u8);
        s.extend(version.as_bytes());
        s.extend([3, b'm', b'o', b'd']);
        s
    }

    #[test]
    fn the_inline_version_is_read() {
        assert_eq!(
            version(&section(2, "go1.22.12")).as_deref(),
            Some("go1.22.12")
        );
    }

    #[test]
    fn other_formats_and_damage_give_none() {
        assert_eq!(version(&section(0, "go1.17")), None, "pointer format");
        assert_eq!(version(b"\xff Go buildinf"), None);
        let mut cut = section(2, "go1.22.12");
        cut.truncate(HEADER + 4);
        assert_eq!(version(&cut), None);
        assert_eq!(version(&section(2, "")), None);
    }

    #[test]
    fn long_lengths_take_several_bytes() {
        assert_eq!(uvarint(&[0x96, 0x01]), Some((150, 2)));
        assert_eq!(uvarint(&[0x80]), None);
    }
}
