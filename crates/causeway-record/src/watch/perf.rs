//! One thread's hardware watchpoint: two perf breakpoint events on the variable, one
//! firing on writes and one on reads or writes, sharing one sample ring.
//!
//! Why two: x86 debug registers trap on "write" or on "read or write", never on
//! reads alone, and the trap does not say which access it was. A write hits both
//! events in the same debug exception (same thread, same instruction pointer), so a
//! read-or-write sample with a write sample beside it is that write, and one without
//! is a read. Samples rather than a BPF program on the breakpoint: the trap itself
//! (a debug exception, tens of microseconds in a VM) is the cost; writing a 40-byte
//! sample adds little, and a perf ring needs no program or verifier.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::atomic::{AtomicU64, Ordering, fence};

/// `HW_BREAKPOINT_W` and `HW_BREAKPOINT_RW` (linux/hw_breakpoint.h).
const BP_W: u32 = 2;
const BP_RW: u32 = 3;
/// `PERF_EVENT_IOC_SET_OUTPUT` and `PERF_EVENT_IOC_ID` (linux/perf_event.h).
const IOC_SET_OUTPUT: libc::c_ulong = 0x2405;
const IOC_ID: libc::c_ulong = 0x8008_2407;
/// Data pages of each thread's ring (a power of two): 512 KiB, about 13,000 hits,
/// more than a thread trapping flat out makes between two drains (100 ms).
const RING_PAGES: usize = 128;
/// Offsets of `data_head` and `data_tail` in `struct perf_event_mmap_page`.
const HEAD_OFFSET: usize = 1024;
const TAIL_OFFSET: usize = 1032;

/// One watchpoint hit, as sampled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Hit {
    /// Thread that made the access.
    pub tid: u32,
    /// CLOCK_MONOTONIC nanoseconds.
    pub ts: u64,
    /// User instruction pointer after the access.
    pub ip: u64,
    /// CPU it ran on.
    pub cpu: u32,
    /// A write (else a read).
    pub write: bool,
}

/// A mapped perf ring.
struct Ring {
    base: *mut u8,
    len: usize,
}

impl Drop for Ring {
    fn drop(&mut self) {
        // SAFETY: base/len are exactly what mmap returned; nothing else uses them.
        unsafe { libc::munmap(self.base.cast(), self.len) };
    }
}

/// The two breakpoint events of one thread and their ring.
pub struct ThreadWatch {
    ring: Ring,
    /// Sample id of the write event.
    write_id: u64,
    /// Times the kernel throttled the events (too many hits per tick): hits are
    /// missed until it lets them go on.
    pub throttled: u64,
    _write: OwnedFd,
    _rw: OwnedFd,
}

fn page_size() -> usize {
    // SAFETY: sysconf has no preconditions.
    let p = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    usize::try_from(p).unwrap_or(4096)
}

/// Open a breakpoint event of type `bp_type` on `[addr, addr + len)` for thread `tid`.
fn open_bp(tid: u32, addr: u64, len: u8, bp_type: u32) -> io::Result<OwnedFd> {
    let mut attr = libbpf_sys::perf_event_attr {
        type_: libbpf_sys::PERF_TYPE_BREAKPOINT,
        size: size_of::<libbpf_sys::perf_event_attr>() as u32,
        sample_type: (libbpf_sys::PERF_SAMPLE_IDENTIFIER
            | libbpf_sys::PERF_SAMPLE_IP
            | libbpf_sys::PERF_SAMPLE_TID
            | libbpf_sys::PERF_SAMPLE_TIME
            | libbpf_sys::PERF_SAMPLE_CPU) as u64,
        bp_type,
        clockid: libc::CLOCK_MONOTONIC,
        ..Default::default()
    };
    attr.__bindgen_anon_1.sample_period = 1;
    attr.__bindgen_anon_3.bp_addr = addr;
    attr.__bindgen_anon_4.bp_len = u64::from(len);
    attr.set_exclude_kernel(1);
    attr.set_exclude_hv(1);
    // The recorder's clock, so hits merge with the scheduler events.
    attr.set_use_clockid(1);
    // SAFETY: attr is a fully initialised perf_event_attr of the size it declares;
    // pid is a thread id and cpu -1 follows it on every CPU.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_perf_event_open,
            &attr as *const libbpf_sys::perf_event_attr,
            tid as i32,
            -1i32,
            -1i32,
            libbpf_sys::PERF_FLAG_FD_CLOEXEC as libc::c_ulong,
        )
    };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a new descriptor that nothing else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(fd as i32) })
}

impl ThreadWatch {
    /// Watch `[addr, addr + len)` in thread `tid`.
    pub fn open(tid: u32, addr: u64, len: u8) -> io::Result<ThreadWatch> {
        let rw = open_bp(tid, addr, len, BP_RW)?;
        let write = open_bp(tid, addr, len, BP_W)?;
        let len_bytes = (RING_PAGES + 1) * page_size();
        // SAFETY: mapping a perf event descriptor read-write, shared, at offset 0, with
        // 1 + 2^n pages, as perf_event_open(2) describes; the result is checked.
        let base = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len_bytes,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                rw.as_raw_fd(),
                0,
            )
        };
        if base == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        let ring = Ring {
            base: base.cast(),
            len: len_bytes,
        };
        // SAFETY: both are perf event descriptors of the same task, as SET_OUTPUT asks.
        if unsafe { libc::ioctl(write.as_raw_fd(), IOC_SET_OUTPUT, rw.as_raw_fd()) } < 0 {
            return Err(io::Error::last_os_error());
        }
        let mut write_id = 0u64;
        // SAFETY: PERF_EVENT_IOC_ID writes one u64 through the pointer.
        if unsafe { libc::ioctl(write.as_raw_fd(), IOC_ID, &mut write_id as *mut u64) } < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(ThreadWatch {
            ring,
            write_id,
            throttled: 0,
            _write: write,
            _rw: rw,
        })
    }

    /// Take every sample in the ring: hits (writes paired, see the module doc) and the
    /// number of samples the kernel lost because the ring was full.
    pub fn drain(&mut self, out: &mut Vec<Hit>) -> u64 {
        let page = page_size();
        let data_len = (self.ring.len - page) as u64;
        // SAFETY: the control page is mapped; head/tail are u64 fields the kernel and
        // this reader share, accessed atomically as perf_event_open(2) prescribes.
        let (head_p, tail_p) = unsafe {
            (
                &*(self.ring.base.add(HEAD_OFFSET) as *const AtomicU64),
                &*(self.ring.base.add(TAIL_OFFSET) as *const AtomicU64),
            )
        };
        let head = head_p.load(Ordering::Acquire);
        let mut tail = tail_p.load(Ordering::Relaxed);
        let mut raw = Vec::new();
        let mut lost = 0u64;
        while tail + 8 <= head {
            let hdr = self.read(page, data_len, tail, 8);
            let kind = u32::from_le_bytes(hdr[0..4].try_into().unwrap_or([0; 4]));
            let size = u16::from_le_bytes(hdr[6..8].try_into().unwrap_or([0; 2])) as u64;
            if size < 8 || tail + size > head {
                break;
            }
            let body = self.read(page, data_len, tail + 8, (size - 8) as usize);
            let u64_at = |o: usize| {
                body.get(o..o + 8)
                    .and_then(|b| b.try_into().ok())
                    .map_or(0, u64::from_le_bytes)
            };
            if kind == libbpf_sys::PERF_RECORD_SAMPLE && body.len() >= 40 {
                // identifier, ip, pid/tid, time, cpu/res
                let id = u64_at(0);
                raw.push((
                    id == self.write_id,
                    Hit {
                        tid: (u64_at(16) >> 32) as u32,
                        ts: u64_at(24),
                        ip: u64_at(8),
                        cpu: u64_at(32) as u32,
                        write: id == self.write_id,
                    },
                ));
            } else if kind == libbpf_sys::PERF_RECORD_LOST {
                lost += u64_at(8);
            } else if kind == libbpf_sys::PERF_RECORD_THROTTLE {
                self.throttled += 1;
            }
            tail += size;
        }
        fence(Ordering::Release);
        tail_p.store(tail, Ordering::Release);
        pair_writes(&raw, out);
        lost
    }

    /// `n` bytes of the data area at ring position `pos` (wrapping).
    fn read(&self, page: usize, data_len: u64, pos: u64, n: usize) -> Vec<u8> {
        let mut v = Vec::with_capacity(n);
        for k in 0..n as u64 {
            let off = page + ((pos + k) % data_len) as usize;
            // SAFETY: off is inside the mapped data area (page .. page + data_len).
            v.push(unsafe { std::ptr::read_volatile(self.ring.base.add(off)) });
        }
        v
    }
}

/// Two samples of one access (the same thread and instruction, within this many ns).
const SAME_TRAP_NS: u64 = 100_000;

/// Hits from raw samples: a write sample stands for its access; a read-or-write
/// sample next to a write sample of the same access is dropped, others are reads.
fn pair_writes(raw: &[(bool, Hit)], out: &mut Vec<Hit>) {
    let same =
        |a: &Hit, b: &Hit| a.tid == b.tid && a.ip == b.ip && a.ts.abs_diff(b.ts) < SAME_TRAP_NS;
    for (i, (is_write, h)) in raw.iter().enumerate() {
        if *is_write {
            out.push(*h);
            continue;
        }
        let near = |j: Option<usize>| {
            j.and_then(|j| raw.get(j))
                .is_some_and(|(w, o)| *w && same(o, h))
        };
        if !near(i.checked_sub(1)) && !near(i.checked_add(1)) {
            out.push(*h);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hit(tid: u32, ts: u64, ip: u64, write: bool) -> (bool, Hit) {
        (
            write,
            Hit {
                tid,
                ts,
                ip,
                cpu: 0,
                write,
            },
        )
    }

    #[test]
    fn a_write_fires_both_events_and_counts_once() {
        let raw = [
            hit(1, 100, 0x10, false), // read
            hit(2, 200, 0x20, false), // the write's read-or-write sample...
            hit(2, 201, 0x20, true),  // ...and its write sample
            hit(1, 300, 0x10, false), // read
            hit(2, 400, 0x20, true),  // write sample first this time
            hit(2, 400, 0x20, false),
        ];
        let mut out = Vec::new();
        pair_writes(&raw, &mut out);
        let got: Vec<(u64, bool)> = out.iter().map(|h| (h.ts, h.write)).collect();
        assert_eq!(
            got,
            vec![(100, false), (201, true), (300, false), (400, true)]
        );
    }

    #[test]
    fn a_read_next_to_another_threads_write_stays_a_read() {
        let raw = [hit(1, 100, 0x10, false), hit(2, 101, 0x20, true)];
        let mut out = Vec::new();
        pair_writes(&raw, &mut out);
        assert_eq!(out.len(), 2);
        assert!(!out[0].write);
    }
}
