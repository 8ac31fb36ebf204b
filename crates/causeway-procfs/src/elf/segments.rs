//! A file's loadable segments and where its addresses land in a process: file offset
//! to file address and back, the file's base address, and its load bias from a
//! mapping.

use crate::maps::Mapping;

/// The page size the kernel maps files in.
const PAGE: u64 = 4096;

/// One loadable segment (`PT_LOAD`) of an ELF file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Segment {
    /// Offset of its first byte in the file.
    pub file_offset: u64,
    /// Bytes it takes in the file (`p_filesz`).
    pub file_size: u64,
    /// Its address in the file (`p_vaddr`).
    pub vaddr: u64,
    /// Bytes it takes in memory (`p_memsz`, more than `file_size` for `.bss`).
    pub mem_size: u64,
    /// Mapped executable (`PF_X`).
    pub executable: bool,
}

/// The file address of byte `file_off` of the file: through the first segment whose
/// file bytes hold it.
pub fn vaddr_of_offset(segments: &[Segment], file_off: u64) -> Option<u64> {
    segments
        .iter()
        .filter(|s| s.file_size > 0)
        .find(|s| s.file_offset <= file_off && file_off < s.file_offset + s.file_size)
        .map(|s| s.vaddr + (file_off - s.file_offset))
}

/// The file offset of file address `vaddr`: through the first segment whose file
/// bytes hold it (an address in `.bss` has none).
pub fn offset_of_vaddr(segments: &[Segment], vaddr: u64) -> Option<u64> {
    segments
        .iter()
        .find(|s| vaddr >= s.vaddr && vaddr < s.vaddr + s.file_size)
        .map(|s| vaddr - s.vaddr + s.file_offset)
}

/// Whether a loadable segment holds file address `vaddr` in memory (`.bss` too).
pub fn holds_vaddr(segments: &[Segment], vaddr: u64) -> bool {
    segments
        .iter()
        .any(|s| (s.vaddr..s.vaddr + s.mem_size).contains(&vaddr))
}

/// The lowest loadable address, rounded down to a page: what the file's first
/// mapping (offset 0) starts at, before the load bias. 0 without segments.
pub fn base_vaddr(segments: &[Segment]) -> u64 {
    segments.iter().map(|s| s.vaddr).min().unwrap_or(0) & !(PAGE - 1)
}

/// The load bias of `path` in a process with mappings `maps`: where its offset-0
/// mapping starts minus the file's base address ([`base_vaddr`]). `None` while the
/// file is not mapped (before exec). Only meaningful for a position-independent file;
/// others load at their own addresses (bias 0).
pub fn first_mapping_bias(maps: &[Mapping], path: &str, base_vaddr: u64) -> Option<u64> {
    maps.iter()
        .find(|m| m.offset == 0 && m.path == path)
        .map(|m| m.start.wrapping_sub(base_vaddr))
}

/// Where the file's address 0 lands for a mapping of file offset `offset` at `start`.
/// The kernel maps a segment from the page holding its first byte, so the mapping's
/// offset is the segment's offset rounded down to a page. With LLD's layout a segment
/// does not start on a page boundary and that page also holds the end of the previous
/// segment: segments are matched by their rounded-down offset first (executable ones
/// preferred, as only executable mappings are unwound), and by containment only when
/// none matches.
pub fn mapping_bias(segments: &[Segment], start: u64, offset: u64) -> Option<u64> {
    let s = segments
        .iter()
        .filter(|s| s.file_size > 0)
        .filter(|s| s.file_offset & !(PAGE - 1) == offset)
        .max_by_key(|s| s.executable)
        .or_else(|| {
            segments
                .iter()
                .filter(|s| s.file_size > 0)
                .find(|s| s.file_offset <= offset && offset < s.file_offset + s.file_size)
        })?;
    // The file address at the mapping's start: p_vaddr - (p_off - offset).
    let svma = s.vaddr.wrapping_add(offset).wrapping_sub(s.file_offset);
    Some(start.wrapping_sub(svma))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seg(file_offset: u64, file_size: u64, vaddr: u64, executable: bool) -> Segment {
        Segment {
            file_offset,
            file_size,
            vaddr,
            mem_size: file_size,
            executable,
        }
    }

    #[test]
    fn load_bias_of_page_aligned_segments() {
        // GNU ld: R at 0, R+X at 0x1000 (vaddr 0x1000); mapped at 0x5555_0000_1000.
        let f = [seg(0, 0x800, 0, false), seg(0x1000, 0x2000, 0x1000, true)];
        assert_eq!(
            mapping_bias(&f, 0x5555_0000_1000, 0x1000),
            Some(0x5555_0000_0000)
        );
    }

    #[test]
    fn load_bias_of_lld_segments_that_share_a_page() {
        // LLD: R at 0..0x1f40, R+X at file 0x1f40 / vaddr 0x2f40. The executable
        // mapping starts at file offset 0x1000 (rounded down), at address
        // 0x5555_0000_2000 = bias + 0x2000.
        let f = [seg(0, 0x1f40, 0, false), seg(0x1f40, 0x5000, 0x2f40, true)];
        assert_eq!(
            mapping_bias(&f, 0x5555_0000_2000, 0x1000),
            Some(0x5555_0000_0000)
        );
    }

    #[test]
    fn offsets_and_addresses_convert_through_the_segments() {
        let mut data = seg(0x2000, 0x100, 0x4000, false);
        data.mem_size = 0x800; // .bss after the file bytes
        let f = [
            seg(0, 0x1800, 0, false),
            seg(0x1800, 0x800, 0x2800, true),
            data,
        ];
        assert_eq!(vaddr_of_offset(&f, 0x1900), Some(0x2900));
        assert_eq!(vaddr_of_offset(&f, 0x2000), Some(0x4000));
        assert_eq!(vaddr_of_offset(&f, 0x3000), None);
        assert_eq!(offset_of_vaddr(&f, 0x2900), Some(0x1900));
        assert_eq!(offset_of_vaddr(&f, 0x4200), None); // .bss
        assert!(holds_vaddr(&f, 0x4200));
        assert!(!holds_vaddr(&f, 0x4800));
        assert_eq!(base_vaddr(&[seg(0, 1, 0x400123, false)]), 0x400000);
    }

    #[test]
    fn the_bias_comes_from_the_offset_0_mapping_of_the_file() {
        let maps = crate::maps::parse(
            "\
55d0c0a00000-55d0c0a01000 r--p 00000000 fe:01 123 /usr/bin/prog
55d0c0a01000-55d0c0a02000 r-xp 00001000 fe:01 123 /usr/bin/prog
",
        );
        assert_eq!(
            first_mapping_bias(&maps, "/usr/bin/prog", 0),
            Some(0x55d0c0a00000)
        );
        assert_eq!(first_mapping_bias(&maps, "/usr/bin/other", 0), None);
    }
}
