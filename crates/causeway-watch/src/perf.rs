//! Hardware watchpoints as perf breakpoint events: pairs of events on the variable,
//! one firing on writes and one on reads or writes, written into perf rings.
//!
//! Why pairs: x86 debug registers trap on "write" or on "read or write", never on
//! reads alone, and the trap does not say which access it was. A write hits both
//! events in the same debug exception (same thread, same instruction pointer), so a
//! read-or-write sample with a write sample beside it is that write, and one without
//! is a read. Samples rather than a BPF program on the breakpoint: the trap itself
//! (a debug exception, tens of microseconds in a VM) is the cost; writing a 40-byte
//! sample adds little, and a perf ring needs no program or verifier.
//!
//! Two layouts. [`CpuRings`] (the default, as `perf record -- CMD` does it): each
//! task gets a pair per CPU with `inherit` set, so every thread it creates from then
//! on carries the pair from its first instruction, and all events of one CPU write
//! into one ring (the kernel refuses to map an inherited event that follows its task
//! over all CPUs, since then several CPUs would write one ring at once; an event
//! bound to one CPU has one writer). [`ThreadWatch`] (the fallback): one pair per
//! thread, following it on every CPU, no inheritance, one ring per thread; new
//! threads must be found by listing the process's threads.

use std::collections::BTreeMap;
use std::collections::HashSet;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::atomic::{AtomicU64, Ordering, fence};

/// `HW_BREAKPOINT_W` and `HW_BREAKPOINT_RW` (linux/hw_breakpoint.h).
const BP_W: u32 = 2;
const BP_RW: u32 = 3;
/// `PERF_EVENT_IOC_SET_OUTPUT` and `PERF_EVENT_IOC_ID` (linux/perf_event.h).
const IOC_SET_OUTPUT: libc::c_ulong = 0x2405;
const IOC_ID: libc::c_ulong = 0x8008_2407;
/// Data pages of each ring (a power of two): 512 KiB, about 13,000 hits, more than
/// a thread (or a CPU) trapping flat out makes between two drains.
const RING_PAGES: usize = 128;
/// Offsets of `data_head` and `data_tail` in `struct perf_event_mmap_page`.
const HEAD_OFFSET: usize = 1024;
const TAIL_OFFSET: usize = 1032;

/// One watchpoint hit, as sampled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Hit {
    /// Process of the thread (inherited watchpoints follow forks into children).
    pub tgid: u32,
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

/// What one drain of the rings gave besides hits.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DrainLoss {
    /// Samples the kernel dropped because a ring was full.
    pub lost: u64,
    /// Times the kernel throttled the events (too many hits per tick): hits are
    /// missed until it lets them go on.
    pub throttled: u64,
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

fn page_size() -> usize {
    // SAFETY: sysconf has no preconditions.
    let p = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    usize::try_from(p).unwrap_or(4096)
}

/// Open a breakpoint event of type `bp_type` on `[addr, addr + len)` for task `tid`
/// on `cpu` (-1: wherever it runs), inherited by the threads it creates if `inherit`.
fn open_bp(
    tid: u32,
    cpu: i32,
    addr: u64,
    len: u8,
    bp_type: u32,
    inherit: bool,
) -> io::Result<OwnedFd> {
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
    attr.set_inherit(u64::from(inherit));
    // The recorder's clock, so hits merge with the scheduler events.
    attr.set_use_clockid(1);
    // SAFETY: attr is a fully initialised perf_event_attr of the size it declares;
    // pid is a thread id, cpu a CPU number or -1.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_perf_event_open,
            &attr as *const libbpf_sys::perf_event_attr,
            tid as i32,
            cpu,
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

/// Map the ring of event `fd`.
fn map_ring(fd: &OwnedFd) -> io::Result<Ring> {
    let len_bytes = (RING_PAGES + 1) * page_size();
    // SAFETY: mapping a perf event descriptor read-write, shared, at offset 0, with
    // 1 + 2^n pages, as perf_event_open(2) describes; the result is checked.
    let base = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len_bytes,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_SHARED,
            fd.as_raw_fd(),
            0,
        )
    };
    if base == libc::MAP_FAILED {
        return Err(io::Error::last_os_error());
    }
    Ok(Ring {
        base: base.cast(),
        len: len_bytes,
    })
}

/// Send the samples of `event` into the ring of `owner`.
fn set_output(event: &OwnedFd, owner: &OwnedFd) -> io::Result<()> {
    // SAFETY: both are perf event descriptors of one CPU (or of one task), as
    // SET_OUTPUT asks.
    if unsafe { libc::ioctl(event.as_raw_fd(), IOC_SET_OUTPUT, owner.as_raw_fd()) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// The sample id of `event`.
fn event_id(event: &OwnedFd) -> io::Result<u64> {
    let mut id = 0u64;
    // SAFETY: PERF_EVENT_IOC_ID writes one u64 through the pointer.
    if unsafe { libc::ioctl(event.as_raw_fd(), IOC_ID, &mut id as *mut u64) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(id)
}

impl Ring {
    /// Take every record in the ring: samples as `(is_write, hit)` in ring order
    /// (`write_ids`: sample ids of the write events), plus losses.
    fn drain(&self, write_ids: &HashSet<u64>, raw: &mut Vec<(bool, Hit)>, loss: &mut DrainLoss) {
        let page = page_size();
        let data_len = (self.len - page) as u64;
        // SAFETY: the control page is mapped; head/tail are u64 fields the kernel and
        // this reader share, accessed atomically as perf_event_open(2) prescribes.
        let (head_p, tail_p) = unsafe {
            (
                &*(self.base.add(HEAD_OFFSET) as *const AtomicU64),
                &*(self.base.add(TAIL_OFFSET) as *const AtomicU64),
            )
        };
        let head = head_p.load(Ordering::Acquire);
        let mut tail = tail_p.load(Ordering::Relaxed);
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
                let write = write_ids.contains(&u64_at(0));
                raw.push((
                    write,
                    Hit {
                        tgid: u64_at(16) as u32,
                        tid: (u64_at(16) >> 32) as u32,
                        ts: u64_at(24),
                        ip: u64_at(8),
                        cpu: u64_at(32) as u32,
                        write,
                    },
                ));
            } else if kind == libbpf_sys::PERF_RECORD_LOST {
                loss.lost += u64_at(8);
            } else if kind == libbpf_sys::PERF_RECORD_THROTTLE {
                loss.throttled += 1;
            }
            tail += size;
        }
        fence(Ordering::Release);
        tail_p.store(tail, Ordering::Release);
    }

    /// `n` bytes of the data area at ring position `pos` (wrapping).
    fn read(&self, page: usize, data_len: u64, pos: u64, n: usize) -> Vec<u8> {
        let mut v = Vec::with_capacity(n);
        for k in 0..n as u64 {
            let off = page + ((pos + k) % data_len) as usize;
            // SAFETY: off is inside the mapped data area (page .. page + data_len).
            v.push(unsafe { std::ptr::read_volatile(self.base.add(off)) });
        }
        v
    }
}

/// Online CPU numbers (`/sys/devices/system/cpu/online`, such as `0-3,6`); CPU 0 if
/// unreadable.
pub fn online_cpus() -> Vec<u32> {
    let text = std::fs::read_to_string("/sys/devices/system/cpu/online").unwrap_or_default();
    let mut v = Vec::new();
    for part in text.trim().split(',').filter(|p| !p.is_empty()) {
        let (a, b) = part.split_once('-').unwrap_or((part, part));
        if let (Ok(a), Ok(b)) = (a.parse::<u32>(), b.parse::<u32>()) {
            v.extend(a..=b);
        }
    }
    if v.is_empty() {
        v.push(0);
    }
    v
}

/// Inherited breakpoint pairs, one ring per CPU (see the module doc).
#[derive(Default)]
pub struct CpuRings {
    /// Per CPU: the event whose ring the others write into, and the ring.
    rings: BTreeMap<i32, (OwnedFd, Ring)>,
    /// Every other event (kept open: closing one ends it).
    events: Vec<OwnedFd>,
    write_ids: HashSet<u64>,
}

impl CpuRings {
    /// Give task `tid` a pair on each of `cpus`, inherited by the threads it creates
    /// from now on. Fails if the kernel refuses any of them (nothing of this task is
    /// left attached then).
    pub fn attach(&mut self, tid: u32, cpus: &[u32], addr: u64, len: u8) -> io::Result<()> {
        let mut opened = Vec::new();
        for &cpu in cpus {
            let cpu = cpu as i32;
            let rw = open_bp(tid, cpu, addr, len, BP_RW, true)?;
            let w = open_bp(tid, cpu, addr, len, BP_W, true)?;
            opened.push((cpu, rw, w));
        }
        for (cpu, rw, w) in opened {
            let wid = event_id(&w)?;
            match self.rings.get(&cpu) {
                Some((owner, _)) => {
                    set_output(&rw, owner)?;
                    set_output(&w, owner)?;
                    self.events.push(rw);
                }
                None => {
                    let ring = map_ring(&rw)?;
                    set_output(&w, &rw)?;
                    self.rings.insert(cpu, (rw, ring));
                }
            }
            self.write_ids.insert(wid);
            self.events.push(w);
        }
        Ok(())
    }

    /// Take every hit since the last call (in time order per CPU).
    pub fn drain(&mut self, out: &mut Vec<Hit>) -> DrainLoss {
        let mut loss = DrainLoss::default();
        for (_, ring) in self.rings.values() {
            let mut raw = Vec::new();
            ring.drain(&self.write_ids, &mut raw, &mut loss);
            group_traps(&raw, out);
        }
        loss
    }
}

/// The two breakpoint events of one thread and their ring (the fallback layout).
pub struct ThreadWatch {
    ring: Ring,
    write_ids: HashSet<u64>,
    _write: OwnedFd,
    _rw: OwnedFd,
}

impl ThreadWatch {
    /// Watch `[addr, addr + len)` in thread `tid`, on every CPU, not inherited.
    pub fn open(tid: u32, addr: u64, len: u8) -> io::Result<ThreadWatch> {
        let rw = open_bp(tid, -1, addr, len, BP_RW, false)?;
        let write = open_bp(tid, -1, addr, len, BP_W, false)?;
        let ring = map_ring(&rw)?;
        set_output(&write, &rw)?;
        let write_ids = HashSet::from([event_id(&write)?]);
        Ok(ThreadWatch {
            ring,
            write_ids,
            _write: write,
            _rw: rw,
        })
    }

    /// Take every hit since the last call.
    pub fn drain(&mut self, out: &mut Vec<Hit>) -> DrainLoss {
        let mut loss = DrainLoss::default();
        let mut raw = Vec::new();
        self.ring.drain(&self.write_ids, &mut raw, &mut loss);
        group_traps(&raw, out);
        loss
    }
}

/// Samples of one trap: the same thread and instruction, written back to back by
/// the one debug exception handler (well under this apart); two traps of one
/// thread are a whole exception apart (tens of microseconds in a VM).
const SAME_TRAP_NS: u64 = 5_000;

/// Accesses from raw samples in ring order: consecutive samples of one trap (the
/// write and read-or-write events of a write; or a pair given to a thread twice, by
/// inheritance and directly, see `Watch`) are one access, a write if any of them is.
fn group_traps(raw: &[(bool, Hit)], out: &mut Vec<Hit>) {
    let mut cur: Option<Hit> = None;
    for (is_write, h) in raw {
        match cur.as_mut() {
            Some(c) if c.tid == h.tid && c.ip == h.ip && c.ts.abs_diff(h.ts) < SAME_TRAP_NS => {
                if *is_write {
                    c.write = true;
                    c.ts = h.ts;
                }
            }
            _ => {
                if let Some(c) = cur.take() {
                    out.push(c);
                }
                cur = Some(Hit {
                    write: *is_write,
                    ..*h
                });
            }
        }
    }
    out.extend(cur);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hit(tid: u32, ts: u64, ip: u64, write: bool) -> (bool, Hit) {
        (
            write,
            Hit {
                tgid: 1,
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
        group_traps(&raw, &mut out);
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
        group_traps(&raw, &mut out);
        assert_eq!(out.len(), 2);
        assert!(!out[0].write);
    }

    #[test]
    fn a_thread_watched_twice_counts_each_access_once() {
        // Inherited and direct pairs of one thread: four samples in one trap.
        let raw = [
            hit(3, 1000, 0x30, false),
            hit(3, 1001, 0x30, false),
            hit(3, 1002, 0x30, true),
            hit(3, 1003, 0x30, true),
            // the next trap of the same instruction, a trap later: a new access
            hit(3, 30_000, 0x30, false),
            hit(3, 30_001, 0x30, false),
        ];
        let mut out = Vec::new();
        group_traps(&raw, &mut out);
        let got: Vec<(u64, bool)> = out.iter().map(|h| (h.ts, h.write)).collect();
        assert_eq!(got, vec![(1003, true), (30_000, false)]);
    }
}
