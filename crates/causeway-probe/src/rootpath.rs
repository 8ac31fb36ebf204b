//! DARC's live measurement (§3) for one step of the descent: F0 timed on every call,
//! the function under study and its callees timed during F0's calls in the peak, one
//! sample per such call read from a ring buffer. A new step is a new `PathProbe`:
//! attaching a fresh, small set of probes is simpler than patching a running one, and
//! the number of probes stays bounded by the callees of one function.

use crate::callees::Site;
use crate::error::ProbeError;
use crate::indirect::{IndirectSite, Operand};
use crate::skel::rootpath::{RootpathSkel, RootpathSkelBuilder};
use causeway_latency::Sample;
use libbpf_rs::skel::{OpenSkel, SkelBuilder};
use libbpf_rs::{Link, MapCore, MapFlags, RingBufferBuilder, UprobeOpts};
use std::mem::MaybeUninit;
use std::time::Duration;

/// Callees measured at once (`ROOTPATH_MAX_CALLEES` in `rootpath.h`).
pub const MAX_CALLEES: usize = 32;

/// Indirect call sites probed at once (`ROOTPATH_MAX_SITES` in `rootpath.h`).
pub const MAX_SITES: usize = 16;

const KIND_F0: u64 = 0;
const KIND_PATH: u64 = 1;
const KIND_CALLEE: u64 = 2;
const KIND_SITE: u64 = 3;

/// `ROOTPATH_SITE_*` and `ROOTPATH_NO_REG` in `rootpath.h`.
const SITE_REG: u8 = 1;
const SITE_MEM: u8 = 2;
const SITE_IPREL: u8 = 3;
const NO_REG: u8 = 255;

/// One step of the descent.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Step {
    /// The process.
    pub tgid: u32,
    /// F0.
    pub f0: Site,
    /// The root-cause path below F0 so far; its last function is under study (F0 when
    /// empty).
    pub path: Vec<Site>,
    /// The callees of the function under study (at most [`MAX_CALLEES`]).
    pub callees: Vec<Site>,
    /// Indirect call sites of the function under study whose targets are counted (at
    /// most [`MAX_SITES`]); read with [`PathProbe::targets`].
    pub sites: Vec<IndirectSite>,
    /// The peak, F0 latencies in `[from, to)` ns; empty to only profile F0.
    pub peak_ns: (u64, u64),
    /// Cost of one probe hit, subtracted from F0's latency per hit inside it
    /// ([`crate::calibrate::hit_cost_ns`]).
    pub hit_cost_ns: u64,
}

/// Calls through a pointer seen at one indirect call site.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SiteTarget {
    /// The site's index in [`Step::sites`].
    pub site: u32,
    /// The target's address in the process.
    pub addr: u64,
    /// Calls made to it there.
    pub calls: u64,
}

/// The probes of one step; dropping it detaches them all.
pub struct PathProbe {
    skel: RootpathSkel<'static>,
    _links: Vec<Link>,
    callees: usize,
}

impl std::fmt::Debug for PathProbe {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PathProbe")
            .field("callees", &self.callees)
            .finish()
    }
}

/// Attach the entry and return probes of one function. They are attached for the
/// target process only (a uprobe's perf event filters by address space, so every
/// thread of the process is covered): callees often live in the C library, and a
/// probe there for every process would trap in all of them.
fn attach_one(
    skel: &RootpathSkel<'static>,
    site: &Site,
    cookie: u64,
    pid: i32,
) -> Result<Vec<Link>, ProbeError> {
    let mut links = Vec::with_capacity(2);
    for retprobe in [false, true] {
        let prog = if retprobe {
            &skel.progs.handle_return
        } else {
            &skel.progs.handle_entry
        };
        let opts = UprobeOpts {
            retprobe,
            cookie,
            func_name: Some(site.symbol.clone()),
            ..UprobeOpts::default()
        };
        let link = prog
            .attach_uprobe_with_opts(pid, &site.binary, 0, opts)
            .map_err(|e| ProbeError::Attach {
                binary: site.binary.clone(),
                symbol: site.symbol.clone(),
                reason: format!("{e}"),
            })?;
        links.push(link);
    }
    Ok(links)
}

/// How the BPF side reads a site's target: (how, base, index, scale, disp).
fn site_code(op: &Operand) -> (u8, u8, u8, u8, i64) {
    match *op {
        Operand::Reg(r) => (SITE_REG, r.0, NO_REG, 0, 0),
        Operand::Mem { base, index, disp } => (
            SITE_MEM,
            base.map_or(NO_REG, |r| r.0),
            index.map_or(NO_REG, |(r, _)| r.0),
            index.map_or(0, |(_, s)| s),
            disp,
        ),
        Operand::IpRel { rel } => (SITE_IPREL, NO_REG, NO_REG, 0, rel),
    }
}

/// Attach the probe of one indirect call site: an entry probe on the call instruction,
/// `site.offset` bytes into `function`.
fn attach_site(
    skel: &RootpathSkel<'static>,
    function: &Site,
    site: &IndirectSite,
    index: u64,
    pid: i32,
) -> Result<Link, ProbeError> {
    let opts = UprobeOpts {
        retprobe: false,
        cookie: KIND_SITE << 32 | index,
        func_name: Some(function.symbol.clone()),
        ..UprobeOpts::default()
    };
    skel.progs
        .handle_entry
        .attach_uprobe_with_opts(pid, &function.binary, site.offset as usize, opts)
        .map_err(|e| ProbeError::Attach {
            binary: function.binary.clone(),
            symbol: format!("{}+{:#x}", function.symbol, site.offset),
            reason: format!("{e}"),
        })
}

impl PathProbe {
    /// Load and attach the probes of one step.
    pub fn attach(step: &Step) -> Result<PathProbe, ProbeError> {
        if step.callees.len() > MAX_CALLEES || step.sites.len() > MAX_SITES {
            return Err(ProbeError::Load(format!(
                "{} callees and {} indirect call sites: at most {MAX_CALLEES} and {MAX_SITES} are probed at once",
                step.callees.len(),
                step.sites.len()
            )));
        }
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } != 0 {
            return Err(ProbeError::Privileges);
        }
        // Leaked on purpose: the skeleton borrows it for its life (one step).
        let storage: &'static mut MaybeUninit<libbpf_rs::OpenObject> =
            Box::leak(Box::new(MaybeUninit::uninit()));
        let mut open = RootpathSkelBuilder::default()
            .open(storage)
            .map_err(|e| ProbeError::Load(format!("opening the BPF object: {e}")))?;
        let ro = open
            .maps
            .rodata_data
            .as_deref_mut()
            .ok_or_else(|| ProbeError::Load("the BPF object has no read-only data".into()))?;
        ro.targ_tgid = step.tgid;
        ro.level = step.path.len() as u32;
        ro.peak_lo = step.peak_ns.0;
        ro.peak_hi = step.peak_ns.1;
        ro.hit_cost_ns = step.hit_cost_ns;
        for (slot, site) in ro.sites.iter_mut().zip(&step.sites) {
            let (how, base, index, scale, disp) = site_code(&site.operand);
            slot.how = how;
            slot.base = base;
            slot.index = index;
            slot.scale = scale;
            slot.disp = disp;
        }
        let skel = open.load().map_err(|e| ProbeError::Load(format!("{e}")))?;
        let pid = step.tgid as i32;
        let mut links = attach_one(&skel, &step.f0, KIND_F0 << 32, pid)?;
        for (j, site) in step.path.iter().enumerate() {
            links.extend(attach_one(
                &skel,
                site,
                KIND_PATH << 32 | (j as u64 + 1),
                pid,
            )?);
        }
        for (i, site) in step.callees.iter().enumerate() {
            links.extend(attach_one(&skel, site, KIND_CALLEE << 32 | i as u64, pid)?);
        }
        let studied = step.path.last().unwrap_or(&step.f0);
        for (i, site) in step.sites.iter().enumerate() {
            links.push(attach_site(&skel, studied, site, i as u64, pid)?);
        }
        // Preemption and IRQs matter only while measuring a level: the profile of F0
        // alone does not pay for a program on every context switch.
        if step.peak_ns.1 > 0 {
            for (name, prog) in [
                ("sched_switch", &skel.progs.on_switch),
                ("irq_handler_entry", &skel.progs.on_irq_entry),
                ("irq_handler_exit", &skel.progs.on_irq_exit),
                ("local_timer_entry", &skel.progs.on_timer_entry),
                ("local_timer_exit", &skel.progs.on_timer_exit),
            ] {
                links.push(prog.attach().map_err(|e| ProbeError::Attach {
                    binary: "the kernel".into(),
                    symbol: name.into(),
                    reason: format!("{e}"),
                })?);
            }
        }
        Ok(PathProbe {
            skel,
            _links: links,
            callees: step.callees.len(),
        })
    }

    /// F0's log2 slots so far.
    pub fn f0_slots(&self) -> Result<[u64; 64], ProbeError> {
        let mut slots = [0u64; 64];
        for (i, s) in slots.iter_mut().enumerate() {
            let v = self
                .skel
                .maps
                .f0_hist
                .lookup_percpu(&(i as u32).to_ne_bytes(), MapFlags::ANY)
                .map_err(|e| ProbeError::Read {
                    map: "f0_hist",
                    reason: format!("{e}"),
                })?
                .unwrap_or_default();
            *s = v
                .iter()
                .filter_map(|b| b.get(..8).and_then(|x| x.try_into().ok()))
                .map(u64::from_ne_bytes)
                .sum();
        }
        Ok(slots)
    }

    /// The targets seen so far at the indirect call sites, and how many calls had a
    /// target that could not be kept (table full, or the pointer unreadable).
    pub fn targets(&self) -> Result<(Vec<SiteTarget>, u64), ProbeError> {
        let map = &self.skel.maps.targets;
        let mut out = Vec::new();
        for key in map.keys() {
            let word = |at: usize| -> Option<u64> {
                key.get(at..at + 8)
                    .and_then(|b| b.try_into().ok())
                    .map(u64::from_ne_bytes)
            };
            let Some(value) = map
                .lookup(&key, MapFlags::ANY)
                .map_err(|e| ProbeError::Read {
                    map: "targets",
                    reason: format!("{e}"),
                })?
            else {
                continue;
            };
            // `struct rootpath_target`: the u32 site, padding, the u64 address.
            let site = key.get(..4).and_then(|b| b.try_into().ok());
            let (Some(site), Some(addr)) = (site.map(u32::from_ne_bytes), word(8)) else {
                continue;
            };
            let calls = value
                .get(..8)
                .and_then(|b| b.try_into().ok())
                .map_or(0, u64::from_ne_bytes);
            out.push(SiteTarget { site, addr, calls });
        }
        out.sort_by_key(|t| (t.site, std::cmp::Reverse(t.calls), t.addr));
        let lost = self
            .skel
            .maps
            .site_lost
            .lookup_percpu(&0u32.to_ne_bytes(), MapFlags::ANY)
            .map_err(|e| ProbeError::Read {
                map: "site_lost",
                reason: format!("{e}"),
            })?
            .unwrap_or_default()
            .iter()
            .filter_map(|b| b.get(..8).and_then(|x| x.try_into().ok()))
            .map(u64::from_ne_bytes)
            .sum();
        Ok((out, lost))
    }

    /// Hand every sample that arrives within `timeout` to `each`, with F0's latency
    /// in that call.
    pub fn poll(
        &self,
        timeout: Duration,
        mut each: impl FnMut(u64, Sample),
    ) -> Result<(), ProbeError> {
        let n = self.callees;
        let mut got: Vec<(u64, Sample)> = Vec::new();
        let mut b = RingBufferBuilder::new();
        b.add(&self.skel.maps.samples, |bytes: &[u8]| {
            if let Some(s) = decode(bytes, n) {
                got.push(s);
            }
            0
        })
        .map_err(|e| ProbeError::Read {
            map: "samples",
            reason: format!("{e}"),
        })?;
        let ring = b.build().map_err(|e| ProbeError::Read {
            map: "samples",
            reason: format!("{e}"),
        })?;
        match ring.poll(timeout) {
            // A signal (SIGUSR1 asking for the status, Ctrl-C) ends the wait early: not
            // an error; what has arrived is taken below and the caller looks at the
            // signals.
            Err(e) if e.kind() != libbpf_rs::ErrorKind::Interrupted => {
                return Err(ProbeError::Read {
                    map: "samples",
                    reason: format!("{e}"),
                });
            }
            _ => {}
        }
        // The kernel wakes a reader only when the ring goes from empty to not empty; a
        // sample that arrived while no reader was built left no wake-up to wait for,
        // so whatever is there is taken, woken or not.
        ring.consume().map_err(|e| ProbeError::Read {
            map: "samples",
            reason: format!("{e}"),
        })?;
        drop(ring);
        for (f0_ns, s) in got {
            each(f0_ns, s);
        }
        Ok(())
    }
}

/// `ROOTPATH_COMM` in `rootpath.h`.
const COMM: usize = 16;

/// A NUL-padded kernel name.
fn name_at(bytes: &[u8], at: usize) -> Option<String> {
    let b = bytes.get(at..at + COMM)?;
    let end = b.iter().position(|&c| c == 0).unwrap_or(COMM);
    Some(String::from_utf8_lossy(&b[..end]).into_owned())
}

/// Read one `struct rootpath_sample` (native byte order): F0's latency and the sample.
fn decode(bytes: &[u8], callees: usize) -> Option<(u64, Sample)> {
    let word = |i: usize| -> Option<u64> {
        bytes
            .get(i * 8..i * 8 + 8)
            .and_then(|b| b.try_into().ok())
            .map(u64::from_ne_bytes)
    };
    // After the callee array: two u64 times, two u32 ids, two names.
    let tail = 2 + MAX_CALLEES;
    let half = |at: usize| -> Option<u32> {
        bytes
            .get(at..at + 4)
            .and_then(|b| b.try_into().ok())
            .map(u32::from_ne_bytes)
    };
    let (tid, irq) = (half((tail + 2) * 8)?, half((tail + 2) * 8 + 4)?);
    let (preempted_ns, irq_ns) = (word(tail)?, word(tail + 1)?);
    let names = (tail + 3) * 8;
    let f0_ns = word(0)?;
    let sample = Sample {
        function_ns: word(1)?,
        callees_ns: (0..callees.min(MAX_CALLEES))
            .map(|i| word(2 + i))
            .collect::<Option<Vec<u64>>>()?,
        preempted_ns,
        irq_ns,
        preemptor: (preempted_ns > 0).then_some((tid, name_at(bytes, names)?)),
        irq: (irq_ns > 0).then_some((irq, name_at(bytes, names + COMM)?)),
    };
    Some((f0_ns, sample))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_the_sample_layout() {
        let mut bytes = Vec::new();
        for w in [500u64, 400, 7, 0, 300] {
            bytes.extend_from_slice(&w.to_ne_bytes());
        }
        bytes.resize((2 + MAX_CALLEES) * 8, 0);
        for w in [9_000u64, 0] {
            bytes.extend_from_slice(&w.to_ne_bytes());
        }
        bytes.extend_from_slice(&4242u32.to_ne_bytes());
        bytes.extend_from_slice(&11u32.to_ne_bytes());
        let mut comm = *b"hog\0\0\0\0\0\0\0\0\0\0\0\0\0";
        bytes.extend_from_slice(&comm);
        comm = *b"virtio0-input.0\0";
        bytes.extend_from_slice(&comm);
        let (f0_ns, s) = decode(&bytes, 3).unwrap();
        assert_eq!(f0_ns, 500);
        assert_eq!(s.function_ns, 400);
        assert_eq!(s.callees_ns, vec![7, 0, 300]);
        assert_eq!(s.preempted_ns, 9_000);
        assert_eq!(s.preemptor, Some((4242, "hog".to_string())));
        // No IRQ time: no IRQ named, whatever the bytes say.
        assert_eq!((s.irq_ns, s.irq.clone()), (0, None));
        let end = bytes.len();
        bytes[(2 + MAX_CALLEES + 1) * 8] = 5;
        let (_, s) = decode(&bytes, 3).unwrap();
        assert_eq!(s.irq, Some((11, "virtio0-input.0".to_string())));
        assert!(decode(&bytes[..end - 1], 3).is_none());
        assert!(decode(&bytes[..16], 3).is_none());
        // The BPF side's bound on callees is the same number.
        let header = include_str!("bpf/rootpath.h");
        let line = header
            .lines()
            .find(|l| l.starts_with("#define ROOTPATH_MAX_CALLEES"))
            .unwrap();
        assert_eq!(
            line.split_whitespace().nth(2),
            Some(MAX_CALLEES.to_string().as_str())
        );
    }
}
