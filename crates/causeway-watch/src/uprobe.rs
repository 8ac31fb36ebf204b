//! Data-flag accesses by uprobes: a probe on every instruction of the file's code
//! that loads or stores the variable (found by [`super::accessing_instructions`]),
//! each carrying its kind in the attach cookie, all running one small BPF program
//! (`bpf/dataflag.bpf.c`) that sends the hits through one ring.
//!
//! The probes are bound to the process: the kernel installs them in the address
//! space of that process only (every thread, present and future, from its first
//! instruction), so other processes using the same file run untouched. What this
//! path cannot see: accesses through a pointer (the variable's address taken by a
//! `lea`, counted), and instructions the decoder does not classify (counted).

use super::perf::Hit;
use super::sites::Site;
use libbpf_rs::skel::{OpenSkel, SkelBuilder};
use libbpf_rs::{Link, MapCore, MapFlags, RingBuffer, RingBufferBuilder, UprobeOpts};
use std::cell::RefCell;
use std::mem::MaybeUninit;
use std::path::Path;
use std::rc::Rc;
use std::time::Duration;

mod skel {
    #![allow(missing_docs, clippy::all, unused_imports)]
    include!(concat!(env!("OUT_DIR"), "/dataflag.skel.rs"));
}

use skel::{DataflagSkel, DataflagSkelBuilder};

/// `DATAFLAG_WRITE` of `dataflag.h`: the cookie bit of an instruction that writes.
const COOKIE_WRITE: u64 = 0x10;
/// Size of `struct dataflag_hit` (asserted on the C side, in `dataflag.h`).
const HIT_BYTES: usize = 32;

/// Uprobes on the instructions that access the variable, and their ring.
pub struct UprobeWatch {
    skel: DataflagSkel<'static>,
    _links: Vec<Link>,
    ring: RingBuffer<'static>,
    hits: Rc<RefCell<Vec<Hit>>>,
}

fn load_error(what: &str, e: impl std::fmt::Display) -> String {
    format!("{what}: {e}")
}

impl UprobeWatch {
    /// Load the program and put a probe on each site of `file` (mapped by process
    /// `pid`); the error says what failed.
    pub fn attach(pid: u32, file: &Path, sites: &[Site]) -> Result<UprobeWatch, String> {
        // The skeleton borrows its open-object storage for its whole life; a watch
        // lasts one recording, so the few bytes are leaked on purpose.
        let storage: &'static mut MaybeUninit<libbpf_rs::OpenObject> =
            Box::leak(Box::new(MaybeUninit::uninit()));
        let mut open = DataflagSkelBuilder::default()
            .open(storage)
            .map_err(|e| load_error("opening the data-flag BPF object", e))?;
        let rodata = open
            .maps
            .rodata_data
            .as_deref_mut()
            .ok_or_else(|| load_error("the data-flag BPF object", "no read-only data"))?;
        rodata.targ_tgid = pid;
        let skel = open
            .load()
            .map_err(|e| load_error("loading the data-flag BPF program", e))?;
        let mut links = Vec::with_capacity(sites.len());
        for s in sites {
            let opts = UprobeOpts {
                cookie: u64::from(s.len) | if s.access.writes() { COOKIE_WRITE } else { 0 },
                ..UprobeOpts::default()
            };
            let link = skel
                .progs
                .handle_access
                .attach_uprobe_with_opts(pid as i32, file, s.file_offset as usize, opts)
                .map_err(|e| {
                    load_error(
                        &format!(
                            "attaching a uprobe at {:#x} of {}",
                            s.file_offset,
                            file.display()
                        ),
                        e,
                    )
                })?;
            links.push(link);
        }
        let hits = Rc::new(RefCell::new(Vec::new()));
        let sink = hits.clone();
        let mut builder = RingBufferBuilder::new();
        builder
            .add(&skel.maps.hits, move |data: &[u8]| {
                if let Some(h) = parse_hit(data) {
                    sink.borrow_mut().push(h);
                }
                0
            })
            .map_err(|e| load_error("reading the data-flag ring", e))?;
        let ring = builder
            .build()
            .map_err(|e| load_error("reading the data-flag ring", e))?;
        Ok(UprobeWatch {
            skel,
            _links: links,
            ring,
            hits,
        })
    }

    /// Take every hit since the last call; returns the hits the ring dropped so far.
    pub fn drain(&mut self, out: &mut Vec<Hit>) -> u64 {
        let _ = self.ring.poll(Duration::ZERO);
        out.append(&mut self.hits.borrow_mut());
        self.skel
            .maps
            .lost
            .lookup_percpu(&0u32.to_ne_bytes(), MapFlags::ANY)
            .ok()
            .flatten()
            .unwrap_or_default()
            .iter()
            .filter_map(|b| b.get(..8)?.try_into().ok().map(u64::from_ne_bytes))
            .sum()
    }
}

/// A `struct dataflag_hit` from the ring.
fn parse_hit(b: &[u8]) -> Option<Hit> {
    if b.len() < HIT_BYTES {
        return None;
    }
    let u64_at = |o: usize| b.get(o..o + 8)?.try_into().ok().map(u64::from_ne_bytes);
    let u32_at = |o: usize| b.get(o..o + 4)?.try_into().ok().map(u32::from_ne_bytes);
    Some(Hit {
        ts: u64_at(0)?,
        ip: u64_at(8)?,
        tid: u32_at(16)?,
        cpu: u32_at(20)?,
        write: u32_at(24)? != 0,
        tgid: u32_at(28)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hit_layout_matches_the_bpf_side() {
        let mut b = Vec::new();
        b.extend_from_slice(&7u64.to_ne_bytes());
        b.extend_from_slice(&0x4010u64.to_ne_bytes());
        b.extend_from_slice(&42u32.to_ne_bytes());
        b.extend_from_slice(&1u32.to_ne_bytes());
        b.extend_from_slice(&1u32.to_ne_bytes());
        b.extend_from_slice(&0u32.to_ne_bytes());
        let h = parse_hit(&b).unwrap();
        assert_eq!(
            (h.ts, h.ip, h.tid, h.cpu, h.write),
            (7, 0x4010, 42, 1, true)
        );
        assert_eq!(parse_hit(&b[..20]), None);
    }
}
