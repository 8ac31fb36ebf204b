//! The reading side of the per-CPU spools: each CPU's records, written by the BPF
//! programs into that CPU's element of a memory-mapped array and read here in place.
//!
//! Why not only the BPF ring buffers: putting a record in a ring is a helper call that
//! takes the ring's lock with interrupts off, ~100-140 ns a record on a host with the
//! SRSO mitigation; a spool costs the program a bounded copy and one store. The layout
//! and the rules both sides follow are described at `spools` in `bpf/ring.h`; the
//! offsets come from the object's own constants, so the two cannot drift.

use std::os::fd::{AsRawFd, BorrowedFd};
use std::sync::atomic::{AtomicU64, Ordering};

use crate::error::RecordError;
use crate::skel::types::abi_sizes;

const HEAD: usize = abi_sizes::SPOOL_HEAD.0 as usize;
const TAIL: usize = abi_sizes::SPOOL_TAIL.0 as usize;
const DATA: usize = abi_sizes::SPOOL_DATA.0 as usize;
/// Room past a spool's records for one that starts just before their end.
pub(crate) const SLACK: usize = abi_sizes::SPOOL_SLACK.0 as usize;
/// Bytes of a record header; its length field is the u16 at `LEN_AT`.
const HDR: usize = 24;
const LEN_AT: usize = 10;
const _: () = assert!(HEAD + 8 <= TAIL && TAIL + 8 <= DATA && DATA.is_multiple_of(8));

/// Bytes of one CPU's element of the spools map holding `data` bytes of records: a
/// whole number of pages, so every element starts on a page of the mapping.
pub(crate) fn element_bytes(data: u32) -> u32 {
    let page = 4096u32;
    (DATA as u32 + data + SLACK as u32).div_ceil(page) * page
}

/// Every CPU's spool, mapped into this process. The mapping outlives the map's file
/// descriptor, so the last records can be read after the programs are detached.
pub struct Spools {
    base: *mut u8,
    len: usize,
    element: usize,
    ncpu: usize,
    data: u64,
    /// The fullest a spool was when a drain began, since [`Spools::take_peak_fill`].
    peak_fill: f64,
}

impl Spools {
    /// Map the spools of `ncpu` CPUs, each an element of `element` bytes holding `data`
    /// bytes of records.
    pub(crate) fn map(
        fd: BorrowedFd<'_>,
        ncpu: usize,
        element: u32,
        data: u32,
    ) -> Result<Spools, RecordError> {
        Self::mapped(libc::MAP_SHARED, fd.as_raw_fd(), ncpu, element, data)
            .map_err(|e| RecordError::Load(format!("mapping the spools: {e}")))
    }

    /// A mapping of `ncpu` elements (`flags` and `fd` as mmap takes them).
    fn mapped(
        flags: libc::c_int,
        fd: libc::c_int,
        ncpu: usize,
        element: u32,
        data: u32,
    ) -> std::io::Result<Spools> {
        let len = ncpu * element as usize;
        // SAFETY: a new mapping of `len` bytes: of a BPF array created with
        // BPF_F_MMAPABLE whose elements take that length (the kernel checks the length
        // and the flags), or anonymous memory in the tests.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                flags,
                fd,
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(std::io::Error::last_os_error());
        }
        Ok(Spools {
            base: p.cast(),
            len,
            element: element as usize,
            ncpu,
            data: u64::from(data),
            peak_fill: 0.0,
        })
    }

    /// The offset word at `at` of CPU `cpu`'s element, shared with the BPF programs.
    fn word(&self, cpu: usize, at: usize) -> &AtomicU64 {
        // SAFETY: `at` is HEAD or TAIL, 8-byte aligned inside the element, which lies
        // inside the mapping (cpu < ncpu); the kernel side only ever stores whole words
        // there, so an atomic view is sound.
        unsafe { AtomicU64::from_ptr(self.base.add(cpu * self.element + at).cast()) }
    }

    /// Hand every record written since the last call to `f` (CPU, record bytes), CPU by
    /// CPU in the order written, and let the programs reuse their space. Returns the
    /// number of spools found with a malformed record, whose unread rest is skipped.
    pub fn drain(&mut self, mut f: impl FnMut(u32, &[u8])) -> u64 {
        let mut bad = 0;
        for cpu in 0..self.ncpu {
            // Acquire: the record bytes before the offset that shows them.
            let head = self.word(cpu, HEAD).load(Ordering::Acquire);
            let mut tail = self.word(cpu, TAIL).load(Ordering::Relaxed);
            if head >= self.data || tail >= self.data {
                bad += 1;
                self.word(cpu, TAIL).store(0, Ordering::Release);
                continue;
            }
            let used = if head >= tail {
                head - tail
            } else {
                self.data - tail + head
            };
            self.peak_fill = self.peak_fill.max(used as f64 / self.data as f64);
            let data = cpu * self.element + DATA;
            while tail != head {
                // SAFETY: tail < self.data, and a record starting there lies within
                // data + SLACK bytes of the element (the programs refuse larger ones);
                // the programs do not write these bytes until the tail passes them.
                let rec = unsafe {
                    std::slice::from_raw_parts(
                        self.base.add(data + tail as usize),
                        self.data as usize + SLACK - tail as usize,
                    )
                };
                let len = u16::from_ne_bytes([rec[LEN_AT], rec[LEN_AT + 1]]) as usize;
                if !(HDR..=SLACK).contains(&len) {
                    bad += 1;
                    tail = head;
                    break;
                }
                f(cpu as u32, &rec[..len]);
                tail += len.next_multiple_of(8) as u64;
                if tail >= self.data {
                    tail = 0;
                }
            }
            // Release: the records are read before the programs may overwrite them.
            self.word(cpu, TAIL).store(tail, Ordering::Release);
        }
        bad
    }
}

impl Spools {
    /// The largest share of a spool that held unread records when a drain began, since
    /// the last call: how close the reader came to losing records.
    pub fn take_peak_fill(&mut self) -> f64 {
        std::mem::take(&mut self.peak_fill)
    }
}

impl Drop for Spools {
    fn drop(&mut self) {
        // SAFETY: the mapping made in `map`, unmapped once.
        unsafe { libc::munmap(self.base.cast(), self.len) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    impl Spools {
        /// Spools in anonymous memory, for the reader's tests.
        fn anonymous(ncpu: usize, data: u32) -> Spools {
            let flags = libc::MAP_PRIVATE | libc::MAP_ANONYMOUS;
            Spools::mapped(flags, -1, ncpu, element_bytes(data), data).unwrap()
        }

        /// What a BPF program does (ring.h, spool_put): false when there is no room.
        fn put(&mut self, cpu: usize, rec: &[u8]) -> bool {
            let head = self.word(cpu, HEAD).load(Ordering::Relaxed);
            let tail = self.word(cpu, TAIL).load(Ordering::Acquire);
            let len = rec.len().next_multiple_of(8) as u64;
            let full = if head < tail {
                head + len >= tail
            } else {
                head + len >= self.data && tail == 0
            };
            if full {
                return false;
            }
            let at = cpu * self.element + DATA + head as usize;
            // SAFETY: head < data and rec.len() <= SLACK keep the copy in the element.
            unsafe { std::ptr::copy_nonoverlapping(rec.as_ptr(), self.base.add(at), rec.len()) };
            let next = if head + len >= self.data {
                0
            } else {
                head + len
            };
            self.word(cpu, HEAD).store(next, Ordering::Release);
            true
        }
    }

    fn record(n: u32, len: usize) -> Vec<u8> {
        let mut r = vec![0u8; len];
        r[..4].copy_from_slice(&n.to_ne_bytes());
        r[LEN_AT..LEN_AT + 2].copy_from_slice(&(len as u16).to_ne_bytes());
        r
    }

    #[test]
    fn a_drain_reports_how_full_the_spools_were() {
        let mut s = Spools::anonymous(2, 4096);
        assert!(s.put(1, &record(1, 1024)) && s.put(1, &record(2, 1024)));
        s.drain(|_, _| {});
        assert_eq!(s.take_peak_fill(), 0.5);
        assert_eq!(s.take_peak_fill(), 0.0, "taken");
        s.drain(|_, _| {});
        assert_eq!(s.take_peak_fill(), 0.0, "drained");
    }

    #[test]
    fn records_come_out_in_order_across_the_wrap_and_a_full_spool_refuses() {
        let mut s = Spools::anonymous(2, 4096);
        let mut got = Vec::new();
        let mut next = 0u32;
        // Sizes that do not divide the spool, so records run past its end.
        for round in 0..50 {
            let mut put = 0;
            while s.put(
                round % 2,
                &record(next + put, 24 + (put as usize * 13) % 300),
            ) {
                put += 1;
            }
            assert!(put > 5, "round {round}: only {put} records fit");
            next += put;
            assert_eq!(s.drain(|cpu, r| got.push((cpu, r.to_vec()))), 0);
        }
        let ids: Vec<u32> = got
            .iter()
            .map(|(_, r)| u32::from_ne_bytes(r[..4].try_into().unwrap()))
            .collect();
        assert_eq!(ids, (0..next).collect::<Vec<_>>());
        assert!(got.iter().all(|(cpu, r)| *cpu < 2 && r.len() >= HDR));
        let bytes: usize = got.iter().map(|(_, r)| r.len()).sum();
        assert!(bytes > 20 * 4096, "the spools wrapped several times");
    }

    #[test]
    fn a_malformed_record_is_counted_and_its_spool_skipped() {
        let mut s = Spools::anonymous(1, 4096);
        assert!(s.put(0, &record(1, 32)));
        let mut bad = record(2, 32);
        bad[LEN_AT..LEN_AT + 2].copy_from_slice(&3u16.to_ne_bytes());
        assert!(s.put(0, &bad));
        let mut n = 0;
        assert_eq!(s.drain(|_, _| n += 1), 1);
        assert_eq!(n, 1);
        assert!(s.put(0, &record(3, 40)));
        assert_eq!(s.drain(|_, _| n += 1), 0);
        assert_eq!(n, 2);
    }

    #[test]
    fn an_element_holds_its_records_and_a_largest_one_past_their_end() {
        let e = element_bytes(1 << 20);
        assert_eq!(e % 4096, 0);
        assert!(e as usize >= DATA + (1 << 20) + SLACK);
    }
}
