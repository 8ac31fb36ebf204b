//! Loading the BPF programs, filling their maps and attaching them.
//!
//! Each handler exists as a BTF tracepoint and as a raw tracepoint. The BTF family is
//! loaded first; if the verifier refuses some of its programs, the object is opened
//! again with the raw entry point for just those (their bodies are the same), named in
//! a one-line warning; if the BTF family cannot load at all (no BTF for a tracepoint,
//! an old kernel), the whole object is opened with the raw family. libbpf's messages
//! (the verifier's log) go through [`crate::liblog`]: silent unless asked for.

use crate::config::{RecordConfig, StackMode, Target};
use crate::error::RecordError;
use crate::skel::types::{stack_place, target_mode};
use crate::skel::{OpenRecorderSkel, RecorderSkel, RecorderSkelBuilder};
use libbpf_rs::skel::{OpenSkel, Skel, SkelBuilder};
use libbpf_rs::{Link, MapCore, MapFlags, MapHandle, MapType};
use std::mem::MaybeUninit;
use std::os::fd::AsFd;

/// Which family of entry points is loaded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Family {
    /// `tp_btf/...`
    Btf,
    /// `raw_tp/...`
    Raw,
}

impl Family {
    fn prefix(self) -> &'static str {
        match self {
            Family::Btf => "btf_",
            Family::Raw => "raw_",
        }
    }
}

/// The perf-event program that takes on-CPU samples (attached per CPU, not by name).
const SAMPLE_PROG: &str = "cpu_sample";

/// The uprobe programs of the Go runtime (attached per Go process, not by name).
const GO_PROGS: [&str; 4] = ["go_execute", "go_park", "go_ready", "go_inject"];

/// Number of code ranges per process in the BPF range table (`MAX_RANGES`).
pub const MAX_RANGES: usize = crate::skel::types::abi_sizes::MAX_RANGES.0 as usize;

/// Slots of the Go layout table (`GO_MAX_BINARIES`).
pub const GO_MAX_BINARIES: u32 = crate::skel::types::abi_sizes::GO_MAX_BINARIES.0;
/// A Go layout field the runtime lacks (`GO_NO_FIELD`).
const GO_NO_FIELD: u32 = crate::skel::types::abi_sizes::GO_NO_FIELD.0;

/// The loaded and attached recorder.
pub struct Probes {
    skel: RecorderSkel<'static>,
    _links: Vec<Link>,
    _sampler: Option<crate::sampling::Sampler>,
    /// Keeps the kernel's run-time statistics of BPF programs on while recording
    /// (`BPF_ENABLE_STATS`; `None` if the kernel refused): the programs' measured cost,
    /// which `whatif` takes out of the recorded threads' runs.
    _run_stats: Option<std::os::fd::OwnedFd>,
    rings: Vec<MapHandle>,
    /// The entry point family in use.
    pub family: Family,
    /// Tracepoints loaded as raw tracepoints because the verifier refused their BTF
    /// program (the rest are of `family`).
    pub raw_fallback: Vec<String>,
}

/// How often a load is retried with more programs moved to the raw family before the
/// whole object is: each retry costs a full verification (~1 s).
const MAX_FALLBACK_ROUNDS: usize = 3;

/// Load the object: the BTF family, with refused programs moved to their raw entry
/// point one round at a time, else the raw family whole. Returns the skeleton, its base
/// family and the tracepoints that fell back.
fn load(
    cfg: &RecordConfig,
    rings: &[MapHandle],
) -> Result<(RecorderSkel<'static>, Family, Vec<String>), RecordError> {
    let whole_raw = Families {
        base: Family::Raw,
        raw: &[],
    };
    if cfg.force_raw_tracepoints {
        return Ok((
            open_and_load(cfg, &whole_raw, rings)?,
            Family::Raw,
            Vec::new(),
        ));
    }
    let mut raw: Vec<String> = Vec::new();
    let mut btf_err = None;
    for _ in 0..=MAX_FALLBACK_ROUNDS {
        crate::liblog::clear();
        let families = Families {
            base: Family::Btf,
            raw: &raw,
        };
        match open_and_load(cfg, &families, rings) {
            Ok(s) => return Ok((s, Family::Btf, raw)),
            Err(e) => btf_err = Some(e),
        }
        let refused = crate::liblog::refused_programs(&crate::liblog::lines());
        let new: Vec<String> = refused
            .iter()
            .filter_map(|p| p.strip_prefix(Family::Btf.prefix()))
            .filter(|tp| !raw.iter().any(|r| r == tp))
            .map(str::to_string)
            .collect();
        if new.is_empty() {
            break;
        }
        raw.extend(new);
    }
    let btf_log = crate::liblog::tail(6);
    crate::liblog::clear();
    open_and_load(cfg, &whole_raw, rings)
        .map(|s| (s, Family::Raw, Vec::new()))
        .map_err(|raw_err| {
            let mut log = btf_log;
            log.extend(crate::liblog::tail(6));
            RecordError::Load(format!(
                "BTF tracepoints: {}; raw tracepoints: {raw_err}{}",
                btf_err.map(|e| e.to_string()).unwrap_or_default(),
                log_hint(&log)
            ))
        })
}

/// The end of libbpf's log for an error message, or where to find it.
fn log_hint(log: &[String]) -> String {
    if crate::liblog::verbose() || log.is_empty() {
        return String::new();
    }
    format!(
        "\nlast lines of libbpf's log (all of it with -v):\n  {}",
        log.join("\n  ")
    )
}

/// Tracepoints whose handler is needed for a configuration (without family prefix).
fn wanted(cfg: &RecordConfig) -> Vec<&'static str> {
    // The scheduler, process and interrupt handlers keep the Trace Map and the waker
    // context current even when their own records are switched off.
    let mut v = vec![
        "sched_switch",
        "sched_waking",
        "sched_wakeup_new",
        "sched_process_fork",
        "sched_process_exec",
        "sched_process_exit",
        "sched_process_free",
        "task_rename",
        "hrtimer_expire_entry",
        "hrtimer_expire_exit",
        "irq_handler_entry",
        "irq_handler_exit",
        "softirq_entry",
        "softirq_exit",
    ];
    if cfg.events.block {
        v.extend(["block_rq_issue", "block_rq_complete"]);
    }
    if cfg.events.net {
        v.extend(["net_dev_xmit", "netif_receive_skb"]);
    }
    // sys_enter also reports executable mmaps, which keep the range table current.
    if cfg.events.syscall || cfg.stack_mode == StackMode::Libs {
        v.push("sys_enter");
    }
    if cfg.events.syscall {
        v.push("sys_exit");
    }
    if cfg.events.signal {
        v.extend(["signal_generate", "signal_deliver"]);
    }
    if cfg.events.timer {
        v.push("hrtimer_start");
    }
    if cfg.events.sock
        && causeway_procfs::system::has_tracepoints(
            &["sock/sk_data_ready", "sock/sock_send_length"],
            (6, 5),
        )
    {
        v.extend(["sock_send_length", "sk_data_ready"]);
    }
    // Page reclaim, timed per thread in the kernel (bpf/reclaim.h); cheap, as reclaim
    // is rare next to the scheduler's events.
    let vmscan = [
        "vmscan/mm_vmscan_direct_reclaim_begin",
        "vmscan/mm_vmscan_direct_reclaim_end",
        "vmscan/mm_vmscan_memcg_reclaim_begin",
        "vmscan/mm_vmscan_memcg_reclaim_end",
    ];
    if causeway_procfs::system::has_tracepoints(&vmscan, (4, 0)) {
        v.extend(vmscan.map(|t| t.trim_start_matches("vmscan/")));
    }
    v
}

/// Which entry point each handler is loaded as: `base`, except the tracepoints in `raw`
/// (programs of the BTF family the verifier refused), which load as raw tracepoints.
struct Families<'a> {
    base: Family,
    raw: &'a [String],
}

impl Families<'_> {
    fn of(&self, tracepoint: &str) -> Family {
        if self.raw.iter().any(|r| r == tracepoint) {
            Family::Raw
        } else {
            self.base
        }
    }
}

fn configure(open: &mut OpenRecorderSkel<'static>, cfg: &RecordConfig, families: &Families) {
    let rodata = open
        .maps
        .rodata_data
        .as_deref_mut()
        .expect("the BPF object has read-only data");
    rodata.self_tgid = std::process::id();
    rodata.mode = match cfg.target {
        Target::Pids(_) => target_mode::MODE_FOLLOW.0,
        Target::Comm(_) => target_mode::MODE_COMM.0,
        Target::All => target_mode::MODE_ALL.0,
    };
    if let Target::Comm(name) = &cfg.target {
        for (i, b) in name.bytes().take(15).enumerate() {
            rodata.target_comm[i] = b as i8;
        }
    }
    rodata.events = cfg.events.bits();
    rodata.stack_mode = crate::config::stack_mode_code(cfg.stack_mode);
    rodata.stack_depth = cfg.stack_depth.clamp(1, crate::config::MAX_STACK_DEPTH_FP);
    rodata.stack_on = [
        (cfg.stack_on_switch, stack_place::STACK_ON_SWITCH),
        (cfg.stack_on_waker, stack_place::STACK_ON_WAKER),
        (cfg.stack_on_syscall, stack_place::STACK_ON_SYSCALL),
    ]
    .iter()
    .filter(|(on, _)| *on)
    .map(|(_, bit)| bit.0)
    .sum();
    rodata.kernel_stacks = cfg.kernel_stacks.code();
    rodata.unwind = cfg.unwind.code();
    rodata.unwind_memo = u32::from(cfg.unwind_memo);
    if let Some(w) = cfg.waker_sampling_in_effect() {
        rodata.waker_sample_min_ns = w.min_wait_ns;
        rodata.waker_sample_one_in = w.one_in;
    }
    rodata.ring_bytes = u64::from(bpf_ring_bytes(cfg));
    rodata.spool_bytes = u64::from(ring_bytes(cfg));
    rodata.stack_window = cfg
        .stack_window
        .clamp(512, crate::config::MAX_STACK_WINDOW)
        .next_power_of_two();
    rodata.obj_key = random_key();
    let want = wanted(cfg);
    for mut p in open.open_object_mut().progs_mut() {
        let name = p.name().to_string_lossy().into_owned();
        let load = if name == SAMPLE_PROG {
            cfg.sample_hz > 0
        } else if GO_PROGS.contains(&name.as_str()) {
            cfg.events.go
        } else {
            [Family::Btf, Family::Raw].into_iter().any(|f| {
                name.strip_prefix(f.prefix())
                    .is_some_and(|tp| want.contains(&tp) && families.of(tp) == f)
            })
        };
        p.set_autoload(load);
        let refuse = name
            .strip_prefix(Family::Btf.prefix())
            .is_some_and(|tp| cfg.refuse_btf.iter().any(|r| r == tp));
        if load && refuse {
            // As a socket filter the body calls helpers that type may not use: the
            // verifier refuses this one program, as it would a real incompatibility.
            p.set_prog_type(libbpf_rs::ProgramType::SocketFilter);
        }
    }
}

/// Slots of `blocked_since`, one per possible thread id: the kernel's `pid_max`, at
/// most 4M (its limit; 16 MiB of u32), 32768 when it cannot be read.
fn blocked_since_slots() -> u32 {
    std::fs::read_to_string("/proc/sys/kernel/pid_max")
        .ok()
        .and_then(|s| s.trim().parse::<u32>().ok())
        .unwrap_or(32768)
        .clamp(1024, 1 << 22)
}

/// A per-recording key for hashing kernel object addresses (they never reach the trace).
fn random_key() -> u64 {
    let mut k = [0u8; 8];
    // SAFETY: getrandom writes at most k.len() bytes into k.
    let n = unsafe { libc::getrandom(k.as_mut_ptr().cast(), k.len(), 0) };
    if n == 8 {
        u64::from_ne_bytes(k)
    } else {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(0x5eed)
            ^ std::process::id() as u64
    }
}

fn open_and_load(
    cfg: &RecordConfig,
    families: &Families,
    rings: &[MapHandle],
) -> Result<RecorderSkel<'static>, RecordError> {
    // The skeleton borrows its open-object storage for its whole life; one recorder
    // lives as long as the process needs it, so the few bytes are leaked on purpose.
    let storage: &'static mut MaybeUninit<libbpf_rs::OpenObject> =
        Box::leak(Box::new(MaybeUninit::uninit()));
    let builder = RecorderSkelBuilder::default();
    let mut open = builder
        .open(storage)
        .map_err(|e| RecordError::Load(format!("opening the BPF object: {e}")))?;
    configure(&mut open, cfg, families);
    let ncpu = rings.len() as u32;
    open.maps
        .spools
        .set_max_entries(ncpu)
        .and_then(|()| {
            open.maps
                .spools
                .set_value_size(crate::spool::element_bytes(ring_bytes(cfg)))
        })
        .map_err(|e| RecordError::Load(format!("sizing the spools: {e}")))?;
    open.maps
        .blocked_since
        .set_max_entries(blocked_since_slots())
        .map_err(|e| RecordError::Load(format!("sizing the table of waits: {e}")))?;
    open.maps
        .rings
        .set_max_entries(ncpu)
        .map_err(|e| RecordError::Load(format!("sizing the ring table: {e}")))?;
    open.maps
        .rings
        .set_inner_map_fd(rings[0].as_fd())
        .map_err(|e| RecordError::Load(format!("ring template: {e}")))?;
    open.load().map_err(|e| RecordError::Load(format!("{e}")))
}

impl Probes {
    /// Load, fill the maps for `cfg` and the initial `tgids`, and attach.
    pub fn start(cfg: &RecordConfig, tgids: &[u32]) -> Result<Probes, RecordError> {
        check_privileges()?;
        if !std::path::Path::new("/sys/kernel/btf/vmlinux").exists() {
            return Err(RecordError::Tracing(
                "this kernel exposes no BTF (/sys/kernel/btf/vmlinux): causeway record needs a kernel built with CONFIG_DEBUG_INFO_BTF".into(),
            ));
        }
        let ncpu = crate::config::num_cpus();
        let size = bpf_ring_bytes(cfg);
        let rings = (0..ncpu)
            .map(|c| {
                let opts = libbpf_sys::bpf_map_create_opts {
                    sz: size_of::<libbpf_sys::bpf_map_create_opts>() as _,
                    ..Default::default()
                };
                MapHandle::create(
                    MapType::RingBuf,
                    Some(format!("cw_ring{c}")),
                    0,
                    0,
                    size,
                    &opts,
                )
                .map_err(|e| RecordError::Load(format!("creating ring buffer for CPU {c}: {e}")))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let (skel, family, raw_fallback) = load(cfg, &rings)?;
        for (c, r) in rings.iter().enumerate() {
            let fd = r.as_fd();
            let raw = std::os::fd::AsRawFd::as_raw_fd(&fd);
            skel.maps
                .rings
                .update(&(c as u32).to_ne_bytes(), &raw.to_ne_bytes(), MapFlags::ANY)
                .map_err(|e| RecordError::Load(format!("installing ring {c}: {e}")))?;
        }
        for s in &cfg.syscalls {
            let v = 1u8 | (s.fd_arg as u8) << 1;
            skel.maps
                .syscalls
                .update(&s.nr.to_ne_bytes(), &[v], MapFlags::ANY)
                .map_err(|e| RecordError::Load(format!("syscall table: {e}")))?;
        }
        let mut probes = Probes {
            skel,
            _links: Vec::new(),
            _sampler: None,
            _run_stats: enable_run_stats(),
            rings,
            family,
            raw_fallback,
        };
        for &t in tgids {
            probes.track(t)?;
        }
        let mut links = Vec::new();
        let mut sampler = None;
        for p in probes.skel.object().progs_mut() {
            if !p.autoload() {
                continue;
            }
            let name = p.name().to_string_lossy().into_owned();
            if name == SAMPLE_PROG {
                sampler = Some(crate::sampling::Sampler::start(&p, cfg.sample_hz)?);
                continue;
            }
            if GO_PROGS.contains(&name.as_str()) {
                continue;
            }
            let link = p.attach().map_err(|e| {
                let tp = name.get(4..).unwrap_or(&name);
                RecordError::Attach(tp.to_string(), e.to_string())
            })?;
            links.push(link);
        }
        probes._links = links;
        probes._sampler = sampler;
        Ok(probes)
    }

    /// Record this process (and what it creates) from now on.
    pub fn track(&self, tgid: u32) -> Result<(), RecordError> {
        self.skel
            .maps
            .tracked
            .update(&tgid.to_ne_bytes(), &[1u8], MapFlags::ANY)
            .map_err(|e| RecordError::Load(format!("adding process {tgid}: {e}")))
    }

    /// Apply the unwind memo's changes (see [`crate::kmemo`]) to its map. An entry the
    /// map has no room for is left out: that stack is then copied as before.
    pub fn apply_memo(&self, ops: Vec<crate::kmemo::MemoOp>) {
        use crate::kmemo::{MemoOp, map_key, map_val};
        use crate::skel::types::{memo_key, memo_val};
        let map = &self.skel.maps.ustack_memo;
        for op in ops {
            match op {
                MemoOp::Put(k, e) => {
                    let _ = map.update(
                        plain_bytes::<memo_key>(&map_key(k)),
                        plain_bytes::<memo_val>(&map_val(&e)),
                        MapFlags::ANY,
                    );
                }
                MemoOp::Delete(k) => {
                    let _ = map.delete(plain_bytes::<memo_key>(&map_key(k)));
                }
            }
        }
    }

    /// Replace a process's code ranges (index 0 must be the main binary).
    pub fn set_ranges(&self, tgid: u32, ranges: &[(u64, u64)]) -> Result<(), RecordError> {
        let n = ranges.len().min(MAX_RANGES);
        let mut v = vec![0u8; 8 + 16 * MAX_RANGES];
        v[..4].copy_from_slice(&(n as u32).to_ne_bytes());
        for (i, (s, e)) in ranges.iter().take(n).enumerate() {
            v[8 + i * 8..16 + i * 8].copy_from_slice(&s.to_ne_bytes());
            let eo = 8 + MAX_RANGES * 8 + i * 8;
            v[eo..eo + 8].copy_from_slice(&e.to_ne_bytes());
        }
        self.skel
            .maps
            .ranges
            .update(&tgid.to_ne_bytes(), &v, MapFlags::ANY)
            .map_err(|e| RecordError::Load(format!("code ranges of {tgid}: {e}")))
    }

    /// Put the goroutine probes into process `pid`, whose executable `exe` has the Go
    /// runtime `rt`, with its layout in `slot` (below `GO_MAX_BINARIES`). The probes
    /// are bound to the process (the kernel filters by address space), so other
    /// programs running the same file are not slowed.
    pub fn attach_go(
        &self,
        pid: u32,
        exe: &std::path::Path,
        slot: u32,
        rt: &causeway_goruntime::GoRuntime,
    ) -> Result<Vec<Link>, String> {
        let l = rt.layout;
        let layout = crate::skel::types::go_layout {
            g_goid: l.g_goid,
            g_m: l.g_m,
            g_startpc: l.g_startpc,
            g_parent_goid: l.g_parent_goid.unwrap_or(GO_NO_FIELD),
            g_schedlink: l.g_schedlink,
            m_curg: l.m_curg,
            glist_head: l.glist_head,
            pd_fd: l.poll.map_or(GO_NO_FIELD, |p| p.fd),
            pd_rg: l.poll.map_or(GO_NO_FIELD, |p| p.rg),
            pd_wg: l.poll.map_or(GO_NO_FIELD, |p| p.wg),
            pd_self: l.poll.map_or(GO_NO_FIELD, |p| p.this),
            io_wait: rt.io_wait_reason().map_or(GO_NO_FIELD, u32::from),
        };
        let bytes = plain_bytes(&layout);
        self.skel
            .maps
            .go_layouts
            .update(&slot.to_ne_bytes(), bytes, MapFlags::ANY)
            .map_err(|e| format!("goroutine layout table: {e}"))?;
        let p = &self.skel.progs;
        let at = [
            (&p.go_execute, rt.probes.execute, "runtime.execute"),
            (&p.go_park, rt.probes.gopark, "runtime.gopark"),
            (&p.go_ready, rt.probes.ready, "runtime.ready"),
            (&p.go_inject, rt.probes.injectglist, "runtime.injectglist"),
        ];
        at.into_iter()
            .map(|(prog, offset, func)| {
                let opts = libbpf_rs::UprobeOpts {
                    cookie: u64::from(slot),
                    ..Default::default()
                };
                prog.attach_uprobe_with_opts(pid as i32, exe, offset as usize, opts)
                    .map_err(|e| format!("uprobe on {func}: {e}"))
            })
            .collect()
    }

    /// The per-CPU ring buffer maps, index = CPU.
    pub fn rings(&self) -> &[MapHandle] {
        &self.rings
    }

    /// Every CPU's spool, mapped for reading; the mapping stays valid after the probes
    /// are gone.
    pub fn spools(&self, cfg: &RecordConfig) -> Result<crate::spool::Spools, RecordError> {
        let data = ring_bytes(cfg);
        crate::spool::Spools::map(
            self.skel.maps.spools.as_fd(),
            self.rings.len(),
            crate::spool::element_bytes(data),
            data,
        )
    }

    /// Records lost so far per CPU (failed ring reservations counted in BPF).
    pub fn lost_per_cpu(&self) -> Vec<u64> {
        percpu_counter(&self.skel.maps.lost)
    }

    /// Each recorded thread's page reclaim so far (`bpf/reclaim.h`): tid, tgid, time
    /// in ended reclaims (ns) and their number.
    pub fn reclaim_times(&self) -> Vec<causeway_cgroups::ReclaimTime> {
        let map = &self.skel.maps.reclaim_times;
        let entry = |k: Vec<u8>| Some((map.lookup(&k, MapFlags::ANY).ok()??, k));
        map.keys()
            .filter_map(|k| {
                entry(k).and_then(|(v, k)| causeway_cgroups::ReclaimTime::parse(&k, &v))
            })
            .collect()
    }

    /// Timer arms that displaced another timer not yet due from the kernel-side table:
    /// unless the displaced timer was cancelled, its expiry is missing from the trace.
    pub fn untracked_timers(&self) -> u64 {
        percpu_counter(&self.skel.maps.untracked_timers)
            .iter()
            .sum()
    }
}

/// Counter 0 of a per-CPU counter map, one value per CPU (empty if unreadable).
fn percpu_counter(map: &impl MapCore) -> Vec<u64> {
    match map.lookup_percpu(&0u32.to_ne_bytes(), MapFlags::ANY) {
        Ok(Some(v)) => v
            .iter()
            .map(|b| {
                b.get(..8)
                    .map_or(0, |s| u64::from_ne_bytes(s.try_into().unwrap_or([0; 8])))
            })
            .collect(),
        _ => Vec::new(),
    }
}

impl Probes {
    /// Runs of the loaded handlers that the kernel skipped because the same handler
    /// was already running on that CPU (`recursion_misses`, e.g. a wake-up from an
    /// interrupt that arrived inside the wake-up handler). Each skip may be an event
    /// missing from the trace, so it is counted rather than lost silently.
    pub fn handler_misses(&self) -> u64 {
        self.skel
            .object()
            .progs()
            .filter(|p| p.autoload())
            .map(|p| prog_info(p.as_fd()).map_or(0, |i| i.recursion_misses))
            .sum()
    }

    /// Per loaded program that ran: its name, total run time (ns) and runs, as the
    /// kernel measured them since it loaded (statistics on: the cost of two clock
    /// reads per run, a few percent of a program's ~1-4 µs).
    pub fn run_costs(&self) -> Vec<(String, u64, u64)> {
        self.skel
            .object()
            .progs()
            .filter(|p| p.autoload())
            .filter_map(|p| {
                let i = prog_info(p.as_fd())?;
                (i.run_cnt > 0).then(|| {
                    (
                        p.name().to_string_lossy().into_owned(),
                        i.run_time_ns,
                        i.run_cnt,
                    )
                })
            })
            .collect()
    }
}

/// Turn the kernel's BPF run-time statistics on for as long as the descriptor lives.
fn enable_run_stats() -> Option<std::os::fd::OwnedFd> {
    // SAFETY: a plain system call wrapper; a non-negative result is a new descriptor
    // that nothing else owns.
    let fd = unsafe { libbpf_sys::bpf_enable_stats(libbpf_sys::BPF_STATS_RUN_TIME) };
    (fd >= 0).then(|| unsafe { std::os::fd::FromRawFd::from_raw_fd(fd) })
}

/// Bytes of records each CPU's spool holds, the buffer the user asked for (a power of
/// two: the programs wrap offsets with a mask).
fn ring_bytes(cfg: &RecordConfig) -> u32 {
    cfg.buffer_per_cpu.max(4096).next_power_of_two()
}

/// Bytes of each CPU's BPF ring buffer (a power of two, as the kernel requires): it
/// takes what the spool does not (records of nested programs, records that must wake
/// the reader, the overflow of a full spool). Half the spool's size: when the reader
/// falls behind, the two together hold half as much again as the one ring did before
/// the spools (2 of 31 runs of bench/lossless.sh lost events with a quarter).
fn bpf_ring_bytes(cfg: &RecordConfig) -> u32 {
    (ring_bytes(cfg) / 2).max(64 << 10)
}

/// A map key or value of the BPF object (a C struct whose fields leave no padding) as
/// bytes.
fn plain_bytes<T>(v: &T) -> &[u8] {
    // SAFETY: only called with structs generated from the BPF object (go_layout,
    // memo_key, memo_val): plain C structs of integers with explicit padding fields, so
    // every byte of the value is initialized.
    unsafe { std::slice::from_raw_parts((v as *const T).cast::<u8>(), size_of::<T>()) }
}

/// The kernel's information on one loaded program (skipped runs, run time), if it
/// gives it.
fn prog_info(fd: std::os::fd::BorrowedFd<'_>) -> Option<libbpf_sys::bpf_prog_info> {
    let mut info = libbpf_sys::bpf_prog_info::default();
    let mut len = size_of::<libbpf_sys::bpf_prog_info>() as u32;
    let raw = std::os::fd::AsRawFd::as_raw_fd(&fd);
    // SAFETY: `info` is a properly sized, writable bpf_prog_info and `len` says so;
    // the kernel fills at most `len` bytes. Pointer fields stay 0: no arrays asked.
    let rc = unsafe { libbpf_sys::bpf_prog_get_info_by_fd(raw, &mut info, &mut len) };
    (rc == 0).then_some(info)
}

/// Fail early with the capability that is missing rather than a bare EPERM.
fn check_privileges() -> Result<(), RecordError> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } == 0 {
        return Ok(());
    }
    let caps = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let eff = caps
        .lines()
        .find_map(|l| l.strip_prefix("CapEff:"))
        .and_then(|h| u64::from_str_radix(h.trim(), 16).ok())
        .unwrap_or(0);
    const CAP_SYS_ADMIN: u64 = 21;
    const CAP_PERFMON: u64 = 38;
    const CAP_BPF: u64 = 39;
    let has = |c: u64| eff & (1 << c) != 0;
    if has(CAP_SYS_ADMIN) || (has(CAP_BPF) && has(CAP_PERFMON)) {
        return Ok(());
    }
    Err(RecordError::Privileges)
}
