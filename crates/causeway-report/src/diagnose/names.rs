//! A vertex in words: thread, process title, times, block type, system calls, stacks
//! and samples. Shared by the report and the prompt that asks the user.

use crate::format::{millis, secs};
use crate::site::SiteNames;
use causeway_diagnose::{BlockType, EventGraph, VertexId, VertexKind, WaitKind, WokenBy};
use causeway_format::syscalls::syscall_label;
use causeway_format::{StackId, Tables, Tgid, Timestamp};
use causeway_model::{OwnCode, Trace};
use causeway_stacks::FrameNamer;
use serde::Serialize;

/// Frames shown per stack.
const FRAMES: usize = 6;

/// System calls shown per vertex.
const CALLS: usize = 8;

/// Where a vertex was in the program's own code, named: its innermost own frames and
/// the library code they called.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SiteDoc {
    /// The program's innermost own functions, innermost first (at most three).
    pub own: Vec<String>,
    /// The library (or runtime) function the innermost one called, if any.
    pub entry: Option<String>,
    /// The innermost function of the stack when it is not the program's.
    pub leaf: Option<String>,
    /// The own frames are JIT-compiled code (named from a perf map or jitdump).
    pub jit: bool,
    /// For a run: its on-CPU samples at this site.
    pub samples: u32,
}

impl SiteDoc {
    /// `slowHandler ← (anonymous) (pbkdf2Sync → kdf_pbkdf2_derive)`: the own frames,
    /// each called by the next, then the library call and the leaf.
    pub fn text(&self) -> String {
        crate::site::text(&self.own, self.entry.as_deref(), self.leaf.as_deref())
    }
}

/// Name a program site.
fn site_doc(t: &Tables, site: &causeway_diagnose::ProgramSite) -> Option<SiteDoc> {
    let frames = &t.stack(site.stack)?.frames;
    let n = SiteNames::of(t, frames, &site.own);
    Some(SiteDoc {
        own: n.own,
        entry: n.entry,
        leaf: n.leaf,
        jit: site.own.jit,
        samples: site.samples,
    })
}

/// One vertex, named.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct VertexDoc {
    /// Vertex id in the event graph.
    pub id: u32,
    /// Thread id.
    pub tid: u32,
    /// Thread name.
    pub thread: String,
    /// The runtime's goroutine id when the "thread" is a goroutine of a Go program (the
    /// goroutine view): its `tid` is then the view's, not the kernel's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub goroutine: Option<u64>,
    /// Process id, if known.
    pub pid: Option<u32>,
    /// Process title (command line), if the trace has it.
    pub title: Option<String>,
    /// Start, ns from the start of the trace.
    pub start_ns: u64,
    /// End, ns from the start of the trace.
    pub end_ns: u64,
    /// Length, ns.
    pub duration_ns: u64,
    /// `exec` or `wait`.
    pub kind: &'static str,
    /// What it was doing.
    pub block: &'static str,
    /// For a wait: what ended it.
    pub woken_by: Option<String>,
    /// For a wait: a device's completion ended it (the chain ends at the device).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub device_ended: bool,
    /// For a wait: the system call it blocked in.
    pub wait_call: Option<String>,
    /// For a wait: what it waited on (`socket`, `pipe`, `lock`, `futex`, `child exit`,
    /// `signal`, `sleep`, `timer`, `disk`, `page fault`, `swap-in`, `reclaim`, `poll`,
    /// `wait`).
    pub waits_on: Option<&'static str>,
    /// System calls, repeats collapsed (`write x3`).
    pub syscalls: Vec<String>,
    /// Top frames where it blocked (innermost first).
    pub frames: Vec<String>,
    /// On-CPU samples in it.
    pub samples: u32,
    /// The most sampled user stack's top frames (innermost first): where it spent
    /// its CPU time.
    pub hot: Vec<String>,
    /// Where it was in the program's own code: for a wait, where it blocked; for a
    /// run, where most of its samples fell. `None` when its stacks hold no frame of
    /// the program's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub site: Option<SiteDoc>,
    /// For a runnable stretch: the part of it a cgroup's spent CPU quota held it back.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub throttled: Option<ThrottleDoc>,
    /// The container or pod its process runs in (`container 3f2a9c1b0d4e`), if its
    /// cgroup's path names one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub container: Option<String>,
    /// For a wait on memory or the disk: the memory limit its process's cgroup ran
    /// into during the recording (`causeway_model::memory_limits`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub memory_limit: Option<MemoryLimitDoc>,
    /// For a run whose samples name no function of the program (too few of them):
    /// where its thread was in its own code when the run began and when it ended.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub run_bounds: Option<RunBoundsDoc>,
}

/// Where a run with too few samples began and ended in the program's own code: the
/// user stacks of the thread's waits just before and just after it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RunBoundsDoc {
    /// Where the wait before the run blocked: where the run resumed.
    pub resumed_in: Option<SiteDoc>,
    /// Where the wait after the run blocked: where the run ended.
    pub blocked_next_in: Option<SiteDoc>,
}

impl RunBoundsDoc {
    /// `resumed in f ← g, next blocked in h`, for a verdict line.
    pub fn text(&self) -> String {
        let part =
            |what: &str, s: &Option<SiteDoc>| s.as_ref().map(|s| format!("{what} {}", s.text()));
        [
            part("resumed in", &self.resumed_in),
            part("next blocked in", &self.blocked_next_in),
        ]
        .into_iter()
        .flatten()
        .collect::<Vec<_>>()
        .join(", ")
    }
}

/// A cgroup's memory limit that its processes reached during the recording.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct MemoryLimitDoc {
    /// The cgroup's path (memory controller).
    pub cgroup: String,
    /// The cgroup as reports name it: its container, pod or unit, else its path.
    pub label: String,
    /// The limit, bytes.
    pub limit: u64,
    /// Times its usage hit the limit during the recording.
    pub hits: u64,
    /// Major page faults of its processes during the recording.
    pub major_faults: u64,
}

impl MemoryLimitDoc {
    /// `the memory limit of /cw-memcg (64 MiB, reached 215518 times)`.
    pub fn text(&self) -> String {
        format!(
            "the memory limit of {} ({:.0} MiB, reached {} times)",
            self.label,
            self.limit as f64 / f64::from(1u32 << 20),
            self.hits
        )
    }
}

/// Runnable time a cgroup's CPU quota held back (`causeway_model::quota`).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ThrottleDoc {
    /// The cgroup's path.
    pub cgroup: String,
    /// The cgroup as reports name it: its container, pod or unit, else its path.
    pub label: String,
    /// CPU time allowed per period, µs.
    pub quota_us: u64,
    /// The period, µs.
    pub period_us: u64,
    /// Held back within this stretch, ns.
    pub held_ns: u64,
    /// Set when what held it back is the process's CPU affinity or cpuset, not a
    /// quota: the CPUs it may run on, as the kernel lists them, and how many are
    /// online.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub affinity: Option<(String, u32)>,
}

impl ThrottleDoc {
    /// `the CPU quota of /cw-quota (20 ms / 100 ms)`, or `its CPU affinity (CPUs 0 of
    /// 2)`.
    pub fn text(&self) -> String {
        if let Some((cpus, online)) = &self.affinity {
            return format!("its CPU affinity (CPUs {cpus} of {online})");
        }
        format!(
            "the CPU quota of {} ({:.0} ms / {:.0} ms)",
            self.label,
            self.quota_us as f64 / 1e3,
            self.period_us as f64 / 1e3
        )
    }

    /// Why it waited rather than ran.
    pub fn why(&self) -> &'static str {
        if self.affinity.is_some() {
            "CPUs it may not run on were idle"
        } else {
            "its cgroup had spent the quota while CPUs were idle"
        }
    }
}

/// Names vertices of one graph.
pub struct Namer<'a> {
    trace: &'a Trace,
    graph: &'a EventGraph,
    frames: FrameNamer<'a>,
    code: OwnCode<'a>,
    origin: Timestamp,
    quota: causeway_model::quota::Throttling,
    /// Containers and pods by process, from the trace's cgroup memberships.
    containers: std::collections::BTreeMap<u32, String>,
    /// Cgroups whose memory limit their processes ran into.
    memory: Vec<causeway_model::MemoryGroup>,
}

impl<'a> Namer<'a> {
    /// A namer for a trace's graph.
    pub fn new(trace: &'a Trace, graph: &'a EventGraph) -> Namer<'a> {
        Namer {
            trace,
            graph,
            frames: FrameNamer::new(trace.tables()),
            code: OwnCode::new(trace.tables()),
            origin: trace.model().span().map_or(Timestamp(0), |s| s.start),
            quota: causeway_model::quota::Throttling::of(trace.model(), trace.tables()),
            containers: containers(trace.tables()),
            memory: causeway_model::memory_limits(trace.tables()),
        }
    }

    /// The memory limit behind a wait on memory or the disk of process `tgid`: the
    /// first (most refaults) limited cgroup it was in whose limit was reached.
    fn memory_limit(&self, tgid: Option<Tgid>, kind: Option<WaitKind>) -> Option<MemoryLimitDoc> {
        let memory_or_disk = matches!(
            kind,
            Some(WaitKind::PageFault | WaitKind::SwapIn | WaitKind::Reclaim | WaitKind::Disk)
        );
        let tgid = tgid.filter(|_| memory_or_disk)?;
        let g = self
            .memory
            .iter()
            .find(|g| g.hits > 0 && g.members.contains(&tgid))?;
        Some(MemoryLimitDoc {
            cgroup: g.path.clone(),
            label: causeway_format::cgroups::label(&g.path),
            limit: g.limit,
            hits: g.hits,
            major_faults: g.major_faults,
        })
    }

    /// Nanoseconds from the start of the trace.
    pub fn since_start(&self, ts: Timestamp) -> u64 {
        ts.saturating_since(self.origin).0
    }

    /// A user stack as a place in the program's own code (`main (__GI_kill)`), or its
    /// innermost frames when none of them is the program's.
    pub fn place(&mut self, id: StackId) -> Option<String> {
        let t = self.trace.tables();
        let frames = &t.stack(id)?.frames;
        let own = self.code.own_frames(frames);
        let text = SiteNames::of(t, frames, &own).text();
        if own.is_empty() || text.is_empty() {
            let top = self.top(Some(id));
            return (!top.is_empty()).then(|| top.join(" < "));
        }
        Some(text)
    }

    fn top(&mut self, id: Option<StackId>) -> Vec<String> {
        let Some(id) = id else { return Vec::new() };
        self.frames
            .stack(id)
            .iter()
            .rev()
            .take(FRAMES)
            .cloned()
            .collect()
    }

    /// The vertex in words.
    pub fn vertex(&mut self, id: VertexId) -> Option<VertexDoc> {
        let g = self.graph;
        let v = g.vertex(id)?;
        let model = self.trace.model();
        let t = model.thread_by_index(v.thread);
        let title = v
            .tgid
            .and_then(|p| self.trace.facts().title(p))
            .map(str::to_string);
        let syscalls = v
            .calls
            .iter()
            .take(CALLS)
            .map(|c| {
                let mut s = syscall_label(c.nr).into_owned();
                if c.repeats > 1 {
                    s.push_str(&format!(" x{}", c.repeats));
                }
                if let Some(r) = c.ret.filter(|r| *r < 0) {
                    s.push_str(&format!(" = {r}"));
                }
                s
            })
            .collect();
        let frames = self.top(v.stack.and_then(|s| s.user));
        // The most sampled stack with user frames (kernel-only samples name no
        // function of the program).
        let hot_stack = v.samples.iter().find_map(|(s, _)| *s);
        let site = causeway_diagnose::program_site(&self.code, v)
            .and_then(|s| site_doc(self.trace.tables(), &s));
        let run_bounds = (v.kind == VertexKind::Exec && site.is_none())
            .then(|| self.run_bounds(id, v.thread))
            .flatten();
        Some(VertexDoc {
            id: id.0,
            tid: v.tid.0,
            thread: t.map_or_else(String::new, |t| t.comm.clone()),
            goroutine: model.goroutine(v.tid).map(|g| g.goid),
            pid: v.tgid.map(|p| p.0),
            title,
            start_ns: self.since_start(v.span.start),
            end_ns: self.since_start(v.span.end),
            duration_ns: v.duration().0,
            kind: match v.kind {
                VertexKind::Exec => "exec",
                VertexKind::Wait => "wait",
            },
            block: block_word(v.block),
            woken_by: v.woken_by.map(|w| woken_word(self.trace, w)),
            device_ended: v.woken_by.is_some_and(WokenBy::is_device),
            wait_call: v.wait_call.map(|n| syscall_label(n).into_owned()),
            waits_on: v.waits_on.map(|k| k.name()),
            syscalls,
            frames,
            samples: v.samples.iter().map(|(_, n)| n).sum(),
            hot: self.top(hot_stack),
            site,
            container: v.tgid.and_then(|g| self.containers.get(&g.0)).cloned(),
            throttled: (v.block == BlockType::Runnable)
                .then(|| self.throttled(v.thread, v.span))
                .flatten(),
            memory_limit: self.memory_limit(v.tgid, v.waits_on),
            run_bounds,
        })
    }

    /// The program sites of the waits of `thread` just before and after run `id`.
    fn run_bounds(&self, id: VertexId, thread: u32) -> Option<RunBoundsDoc> {
        let list = self.graph.thread_vertices(thread);
        let pos = list.partition_point(|&y| y < id);
        let wait_site = |y: &VertexId| {
            let w = self
                .graph
                .vertex(*y)
                .filter(|w| w.kind == VertexKind::Wait)?;
            causeway_diagnose::program_site(&self.code, w)
                .and_then(|s| site_doc(self.trace.tables(), &s))
        };
        let before = list.get(..pos)?.iter().rev().take(3).find_map(wait_site);
        let after = list.get(pos + 1..)?.iter().take(3).find_map(wait_site);
        (before.is_some() || after.is_some()).then_some(RunBoundsDoc {
            resumed_in: before,
            blocked_next_in: after,
        })
    }

    /// The runnable time of model thread `thread` within `span` that a CPU quota held
    /// back: each throttled runnable segment's held time, in proportion to the part of
    /// the segment inside the span.
    fn throttled(&self, thread: u32, span: causeway_model::TimeSpan) -> Option<ThrottleDoc> {
        if self.quota.is_empty() {
            return None;
        }
        let t = self.trace.model().thread_by_index(thread)?;
        let (mut held, mut group) = (0f64, None);
        for (i, s) in (0u32..).zip(&t.segments) {
            if s.end <= span.start || s.start >= span.end {
                continue;
            }
            let Some((ns, g)) = self.quota.held(thread, i) else {
                continue;
            };
            let inside = s
                .end
                .min(span.end)
                .saturating_since(s.start.max(span.start));
            held += ns as f64 * inside.0 as f64 / s.duration().0.max(1) as f64;
            group = Some(g);
        }
        let g = self.quota.groups.get(group? as usize)?;
        Some(ThrottleDoc {
            cgroup: g.path.clone(),
            label: causeway_format::cgroups::label(&g.path),
            quota_us: g.quota_us,
            period_us: g.period_us,
            held_ns: held.round() as u64,
            affinity: g.affinity.as_ref().map(|a| (a.cpus.clone(), a.online)),
        })
        .filter(|d| d.held_ns > 0)
    }
}

/// A block type in words.
pub fn block_word(b: BlockType) -> &'static str {
    match b {
        BlockType::Running => "running",
        BlockType::Runnable => "runnable (waiting for a CPU)",
        BlockType::Yielding => "yielding (sched_yield loop)",
        BlockType::Wait => "blocked",
        BlockType::Stopped => "stopped",
        BlockType::Unknown => "unknown",
    }
}

fn woken_word(trace: &Trace, w: WokenBy) -> String {
    match w {
        WokenBy::Thread { tid } => {
            let name = trace
                .model()
                .thread(tid)
                .map_or_else(String::new, |t| t.comm.clone());
            let g = trace
                .model()
                .goroutine(tid)
                .map(|g| (g.goid, Some(g.tgid.0)));
            format!("woken by {}", who(&name, tid.0, g))
        }
        WokenBy::Timer => "timer expired (timeout or sleep)".to_string(),
        WokenBy::Interrupt { number, softirq } => {
            if !softirq {
                format!("woken by interrupt {number} (a device)")
            } else if let Some(name) = softirq_name(number) {
                format!("woken by the {name} softirq ({number})")
            } else {
                format!("woken by softirq {number}")
            }
        }
        WokenBy::Unknown => "woken by an unknown context".to_string(),
    }
}

/// What a softirq vector serves, as the kernel's `softirq_entry` names it.
fn softirq_name(vec: u32) -> Option<&'static str> {
    const NAMES: [&str; 10] = [
        "high-priority tasklet",
        "timer",
        "network transmit",
        "network receive",
        "block-completion",
        "block-poll",
        "tasklet",
        "scheduler",
        "hrtimer",
        "RCU",
    ];
    NAMES.get(vec as usize).copied()
}

/// A thread as the reports name it: `name (tid)`, or `name (goroutine N of PID)` for a
/// goroutine of the goroutine view, whose tid is the view's own (goroutine ids are
/// per process: every Go program has a goroutine 1).
pub fn who(name: &str, tid: u32, goroutine: Option<(u64, Option<u32>)>) -> String {
    match goroutine {
        Some((g, Some(p))) => format!("{name} (goroutine {g} of {p})"),
        Some((g, None)) => format!("{name} (goroutine {g})"),
        None => format!("{name} ({tid})"),
    }
}

impl VertexDoc {
    /// Its thread as the reports name it (see [`who`]), with its container or pod.
    pub fn who(&self) -> String {
        let w = who(
            &self.thread,
            self.tid,
            self.goroutine.map(|g| (g, self.pid)),
        );
        match &self.container {
            Some(c) => format!("{w} [{c}]"),
            None => w,
        }
    }
}

/// The container or pod each process's cgroup names (units are left out, as in the
/// bottleneck's labels: every process on a systemd host is in one).
fn containers(tables: &causeway_format::Tables) -> std::collections::BTreeMap<u32, String> {
    use causeway_format::cgroups::{Owner, owner};
    tables
        .process_cgroups()
        .into_iter()
        .filter_map(|(g, p)| match owner(p)? {
            o @ (Owner::Container(_) | Owner::Pod(_)) => Some((g.0, o.short())),
            Owner::Unit(_) => None,
        })
        .collect()
}

/// One line naming a vertex: `ct-client (4242) [ct-client --seconds 1] 0.120-0.140 s
/// (20.0 ms) blocked in poll`.
pub fn line(d: &VertexDoc) -> String {
    let title = d
        .title
        .as_deref()
        .filter(|t| !t.is_empty())
        .map(|t| format!(" [{}]", shorten(t, 48)))
        .unwrap_or_default();
    let what = match (&d.wait_call, d.kind) {
        (Some(c), "wait") => format!("{} in {c}", d.block),
        _ => d.block.to_string(),
    };
    format!(
        "{}{title} {:.6}-{:.6} s ({:.3} ms) {what}",
        d.who(),
        secs(d.start_ns),
        secs(d.end_ns),
        millis(d.duration_ns)
    )
}

fn shorten(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(n).collect();
        t.push('…');
        t
    }
}

#[cfg(test)]
mod tests {
    use super::VertexDoc;

    #[test]
    fn a_thread_in_a_container_is_named_with_it() {
        let mut v = VertexDoc {
            id: 1,
            tid: 7,
            thread: "redis-server".into(),
            goroutine: None,
            pid: Some(7),
            title: None,
            start_ns: 0,
            end_ns: 1,
            duration_ns: 1,
            kind: "wait",
            block: "blocked",
            woken_by: None,
            device_ended: false,
            wait_call: None,
            waits_on: None,
            syscalls: Vec::new(),
            frames: Vec::new(),
            samples: 0,
            hot: Vec::new(),
            site: None,
            throttled: None,
            container: None,
            memory_limit: None,
            run_bounds: None,
        };
        assert_eq!(v.who(), "redis-server (7)");
        v.container = Some("container 3f2a9c1b0d4e".into());
        assert_eq!(v.who(), "redis-server (7) [container 3f2a9c1b0d4e]");
    }
}
