//! One function's latency: load the BPF object, attach the entry and return probes,
//! read the per-CPU slots.
//!
//! A uprobe session (one program at the entry and at the return, kernel 6.13+) is tried
//! first: per call it does no hash map update or delete, where the uprobe/uretprobe
//! pair keeps each entry time in a hash map; the pair is the fallback where sessions
//! are missing. Both count alike (outermost call of a recursion timed, nested ones
//! counted apart).

use crate::error::ProbeError;
use crate::skel::funclat::{FunclatSkel, FunclatSkelBuilder};
use libbpf_rs::skel::{OpenSkel, SkelBuilder};
use libbpf_rs::{Link, MapCore, MapFlags, UprobeOpts};
use std::mem::MaybeUninit;
use std::path::PathBuf;

/// Number of log2 slots (`FUNCLAT_SLOTS` in `funclat.h`): slot `b` holds latencies in
/// `[2^b, 2^(b+1))` ns.
pub const SLOTS: usize = 64;

/// What to probe.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProbeTarget {
    /// The executable or library holding the function.
    pub binary: PathBuf,
    /// The function's symbol.
    pub symbol: String,
    /// Only calls made by this process; `None` for every process using the binary.
    pub tgid: Option<u32>,
}

/// Counts read from the kernel, summed over CPUs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Slots {
    /// Calls per log2 slot.
    pub slots: [u64; SLOTS],
    /// Returns seen without their entry (probe attached mid-call).
    pub no_entry: u64,
    /// Entries not timed because the per-thread table was full.
    pub table_full: u64,
    /// Nested (recursive) entries, folded into the outermost call.
    pub nested: u64,
}

impl Slots {
    /// No call counted: the maps as the probe starts them.
    pub fn zero() -> Slots {
        Slots {
            slots: [0; SLOTS],
            no_entry: 0,
            table_full: 0,
            nested: 0,
        }
    }

    /// Calls counted.
    pub fn calls(&self) -> u64 {
        self.slots.iter().sum()
    }

    /// What was added since an earlier reading (for time-lapse intervals).
    pub fn since(&self, earlier: &Slots) -> Slots {
        let mut slots = [0u64; SLOTS];
        for (i, s) in slots.iter_mut().enumerate() {
            *s = self.slots[i].saturating_sub(earlier.slots[i]);
        }
        Slots {
            slots,
            no_entry: self.no_entry.saturating_sub(earlier.no_entry),
            table_full: self.table_full.saturating_sub(earlier.table_full),
            nested: self.nested.saturating_sub(earlier.nested),
        }
    }
}

/// How a [`FuncProbe`] is attached.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Attachment {
    /// One uprobe session program at the entry and the return.
    Session,
    /// A uprobe and a uretprobe.
    Pair,
}

/// A loaded and attached function probe; dropping it detaches both probes.
pub struct FuncProbe {
    skel: FunclatSkel<'static>,
    _links: Vec<Link>,
    target: ProbeTarget,
    attachment: Attachment,
}

impl std::fmt::Debug for FuncProbe {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FuncProbe")
            .field("target", &self.target)
            .finish()
    }
}

fn check_privileges() -> Result<(), ProbeError> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } == 0 {
        return Ok(());
    }
    Err(ProbeError::Privileges)
}

impl FuncProbe {
    /// Load the program and attach it to the target's entry and returns: as a uprobe
    /// session where the kernel has them, else as a uprobe/uretprobe pair.
    pub fn attach(target: &ProbeTarget) -> Result<FuncProbe, ProbeError> {
        FuncProbe::attach_as(target, Attachment::Session)
            .or_else(|_| FuncProbe::attach_as(target, Attachment::Pair))
    }

    /// Load and attach one way.
    pub fn attach_as(target: &ProbeTarget, how: Attachment) -> Result<FuncProbe, ProbeError> {
        check_privileges()?;
        // The skeleton borrows its open-object storage for its whole life; a probe
        // lives for one command run, so the few bytes are leaked on purpose.
        let storage: &'static mut MaybeUninit<libbpf_rs::OpenObject> =
            Box::leak(Box::new(MaybeUninit::uninit()));
        let mut open = FunclatSkelBuilder::default()
            .open(storage)
            .map_err(|e| ProbeError::Load(format!("opening the BPF object: {e}")))?;
        let rodata = open
            .maps
            .rodata_data
            .as_deref_mut()
            .ok_or_else(|| ProbeError::Load("the BPF object has no read-only data".into()))?;
        rodata.targ_tgid = target.tgid.unwrap_or(0);
        let session = how == Attachment::Session;
        open.progs.handle_func_session.set_autoload(session);
        open.progs.handle_func_entry.set_autoload(!session);
        open.progs.handle_func_return.set_autoload(!session);
        let skel = open.load().map_err(|e| ProbeError::Load(format!("{e}")))?;
        let err = |e: libbpf_rs::Error| ProbeError::Attach {
            binary: target.binary.clone(),
            symbol: target.symbol.clone(),
            reason: format!("{e}"),
        };
        // pid -1: every process mapping the binary, filtered by tgid in BPF, so
        // threads the process creates later are covered too.
        let links = if session {
            vec![
                skel.progs
                    .handle_func_session
                    .attach_uprobe_multi(-1, &target.binary, &target.symbol, false, true)
                    .map_err(err)?,
            ]
        } else {
            let mut links = Vec::with_capacity(2);
            for retprobe in [false, true] {
                let prog = if retprobe {
                    &skel.progs.handle_func_return
                } else {
                    &skel.progs.handle_func_entry
                };
                let opts = UprobeOpts {
                    retprobe,
                    func_name: Some(target.symbol.clone()),
                    ..UprobeOpts::default()
                };
                links.push(
                    prog.attach_uprobe_with_opts(-1, &target.binary, 0, opts)
                        .map_err(err)?,
                );
            }
            links
        };
        Ok(FuncProbe {
            skel,
            _links: links,
            target: target.clone(),
            attachment: how,
        })
    }

    /// How it is attached.
    pub fn attachment(&self) -> Attachment {
        self.attachment
    }

    /// What this probe is attached to.
    pub fn target(&self) -> &ProbeTarget {
        &self.target
    }

    /// The counts so far.
    pub fn read(&self) -> Result<Slots, ProbeError> {
        let mut slots = [0u64; SLOTS];
        for (i, s) in slots.iter_mut().enumerate() {
            *s = sum_percpu(&self.skel.maps.hist, i as u32, "hist")?;
        }
        let c = |i: u32| sum_percpu(&self.skel.maps.counters, i, "counters");
        Ok(Slots {
            slots,
            no_entry: c(0)?,
            table_full: c(1)?,
            nested: c(2)?,
        })
    }
}

/// Sum of one per-CPU u64 entry over the CPUs.
fn sum_percpu(map: &impl MapCore, key: u32, name: &'static str) -> Result<u64, ProbeError> {
    let values = map
        .lookup_percpu(&key.to_ne_bytes(), MapFlags::ANY)
        .map_err(|e| ProbeError::Read {
            map: name,
            reason: format!("{e}"),
        })?
        .unwrap_or_default();
    Ok(values
        .iter()
        .map(|b| {
            b.get(..8)
                .and_then(|s| s.try_into().ok())
                .map_or(0, u64::from_ne_bytes)
        })
        .sum())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn since_subtracts_an_earlier_reading() {
        let mut a = Slots {
            slots: [0; SLOTS],
            no_entry: 1,
            table_full: 0,
            nested: 2,
        };
        a.slots[10] = 5;
        let mut b = a.clone();
        b.slots[10] = 8;
        b.slots[20] = 1;
        b.nested = 3;
        let d = b.since(&a);
        assert_eq!(d.slots[10], 3);
        assert_eq!(d.slots[20], 1);
        assert_eq!(d.calls(), 4);
        assert_eq!(d.nested, 1);
        assert_eq!(d.no_entry, 0);
    }
}
