//! Reading another process's memory: the JVM's structures are in its heap and its
//! metaspace, not in any file.

use std::fs::File;
use std::os::unix::fs::FileExt;

/// Memory of one process, read by address. A trait so that the walk can be tested on
/// memory laid out by hand.
pub trait Memory {
    /// Fill `buf` from `addr`; false if any byte could not be read.
    fn read(&self, addr: u64, buf: &mut [u8]) -> bool;

    /// The 8-byte little-endian word at `addr`.
    fn u64(&self, addr: u64) -> Option<u64> {
        let mut b = [0u8; 8];
        self.read(addr, &mut b).then(|| u64::from_le_bytes(b))
    }

    /// The 4-byte word at `addr`.
    fn u32(&self, addr: u64) -> Option<u32> {
        let mut b = [0u8; 4];
        self.read(addr, &mut b).then(|| u32::from_le_bytes(b))
    }

    /// The 2-byte word at `addr`.
    fn u16(&self, addr: u64) -> Option<u16> {
        let mut b = [0u8; 2];
        self.read(addr, &mut b).then(|| u16::from_le_bytes(b))
    }

    /// The byte at `addr`.
    fn u8(&self, addr: u64) -> Option<u8> {
        let mut b = [0u8; 1];
        self.read(addr, &mut b).then_some(b[0])
    }

    /// A NUL-terminated string at `addr`, at most `max` bytes (lossy UTF-8).
    fn cstr(&self, addr: u64, max: usize) -> Option<String> {
        // Read in small pieces: the string may end just before unreadable memory.
        let mut out = Vec::new();
        let mut chunk = [0u8; 64];
        while out.len() < max {
            let at = addr + out.len() as u64;
            // Never cross a page in one read, so a string at a page's end still reads.
            let room = (4096 - (at % 4096)) as usize;
            let n = chunk.len().min(room);
            if !self.read(at, &mut chunk[..n]) {
                // Memory that ends inside the chunk (only made-up memory does: real
                // mappings are whole pages): one byte at a time.
                if !self.read(at, &mut chunk[..1]) {
                    return None;
                }
                if chunk[0] == 0 {
                    return Some(String::from_utf8_lossy(&out).into_owned());
                }
                out.push(chunk[0]);
                continue;
            }
            match chunk[..n].iter().position(|&b| b == 0) {
                Some(end) => {
                    out.extend_from_slice(&chunk[..end]);
                    return Some(String::from_utf8_lossy(&out).into_owned());
                }
                None => out.extend_from_slice(&chunk[..n]),
            }
        }
        None
    }
}

/// A live process's memory through `/proc/PID/mem` (as root, or as its tracer).
#[derive(Debug)]
pub struct ProcMem {
    file: File,
}

impl ProcMem {
    /// Open process `pid`'s memory.
    pub fn open(pid: u32) -> std::io::Result<ProcMem> {
        Ok(ProcMem {
            file: File::open(format!("/proc/{pid}/mem"))?,
        })
    }
}

impl Memory for ProcMem {
    fn read(&self, addr: u64, buf: &mut [u8]) -> bool {
        // Addresses above i64::MAX are kernel addresses: the file offset would be
        // negative.
        addr <= i64::MAX as u64 && self.file.read_exact_at(buf, addr).is_ok()
    }
}

#[cfg(test)]
pub(crate) mod fake {
    use super::Memory;
    use std::collections::BTreeMap;

    /// Memory laid out by hand: byte ranges at addresses.
    #[derive(Default)]
    pub(crate) struct FakeMem {
        pub(crate) blocks: BTreeMap<u64, Vec<u8>>,
    }

    impl FakeMem {
        pub(crate) fn put(&mut self, addr: u64, bytes: &[u8]) {
            self.blocks.insert(addr, bytes.to_vec());
        }
        pub(crate) fn put_u64(&mut self, addr: u64, v: u64) {
            self.put(addr, &v.to_le_bytes());
        }
        pub(crate) fn put_u32(&mut self, addr: u64, v: u32) {
            self.put(addr, &v.to_le_bytes());
        }
        pub(crate) fn put_u16(&mut self, addr: u64, v: u16) {
            self.put(addr, &v.to_le_bytes());
        }
        pub(crate) fn put_str(&mut self, addr: u64, s: &str) {
            let mut b = s.as_bytes().to_vec();
            b.push(0);
            self.put(addr, &b);
        }
    }

    impl Memory for FakeMem {
        fn read(&self, addr: u64, buf: &mut [u8]) -> bool {
            // Byte by byte from whichever block holds each byte.
            for (i, out) in buf.iter_mut().enumerate() {
                let a = addr + i as u64;
                let Some((start, b)) = self.blocks.range(..=a).next_back() else {
                    return false;
                };
                match b.get((a - start) as usize) {
                    Some(v) => *out = *v,
                    None => return false,
                }
            }
            true
        }
    }
}
