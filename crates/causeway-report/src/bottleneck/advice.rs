//! The one plain sentence each knot and sink gets: what to look at first, and the
//! summary that repeats the most important one.

use super::doc::{EdgeDoc, KindDoc, KnotDoc, SinkDoc, StackDoc, VertexDoc};
use causeway_bottleneck::EdgeKind;
use std::fmt::Write as _;

/// Kernel frames that only say "the thread slept"; the frame after them says why.
fn is_sched_frame(f: &str) -> bool {
    f.contains("schedule") || f.contains("switch_to") || f.contains("finish_task_switch")
}

/// The function name of a frame text (`name+0x1f file.c:3`, `name (inlined) f.h:7`),
/// without a parameter list or a Java return type: `void org.x.Log.flush(long)+0x0`
/// and `ObjectMonitor::wait(long, bool)+0x905` give `org.x.Log.flush` and
/// `ObjectMonitor::wait`. A Go method's receiver (`main.(*server).commit`) is kept: its
/// parentheses do not end the name.
pub(crate) fn symbol(frame: &str) -> &str {
    let name = frame.split("+0x").next().unwrap_or(frame);
    let name = name.split(" (inlined)").next().unwrap_or(name);
    let Some(params) = name.strip_suffix(')').and_then(|_| param_list_start(name)) else {
        return name.split(' ').next().unwrap_or(name);
    };
    let head = &name[..params];
    head.rsplit(' ').next().unwrap_or(head)
}

/// Where the parameter list that ends `name` (at its last byte, `)`) opens.
fn param_list_start(name: &str) -> Option<usize> {
    let mut depth = 0i32;
    for (i, c) in name.char_indices().rev() {
        match c {
            ')' => depth += 1,
            '(' => {
                depth -= 1;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
    }
    None
}

/// ` at fsync ← write_loop` from the heaviest wait stack, or nothing.
pub(crate) fn place(stacks: &[StackDoc]) -> String {
    let Some(top) = stacks.first() else {
        return String::new();
    };
    let mut names: Vec<&str> = Vec::new();
    for f in &top.user {
        let s = symbol(f);
        // A frame of a stripped binary has no name to show (an empty symbol).
        if !s.is_empty() && !s.starts_with("0x") && !names.contains(&s) {
            names.push(s);
        }
        if names.len() == 2 {
            break;
        }
    }
    // Below library frames (a lock wait inside the C library), the program's own call
    // site is what the user can change: name it too.
    if let Some(c) = top.call_site.filter(|&c| c >= names.len()) {
        let s = symbol(&top.user[c]);
        if !s.is_empty() && !s.starts_with("0x") && !names.contains(&s) {
            if c > names.len() {
                names.push("…");
            }
            names.push(s);
        }
    }
    if names.is_empty()
        && let Some(k) = top
            .kernel
            .iter()
            .map(|f| symbol(f))
            .find(|f| !is_sched_frame(f))
    {
        names.push(k);
    }
    if names.is_empty() {
        String::new()
    } else {
        format!(" at {}", names.join(" ← "))
    }
}

/// An edge's weight as an SRE reads it: seconds of waiting, a nested wait counted once
/// per thread it holds up (so the figure may exceed the recording's length; a share
/// "of the recording" over 100% read as nonsense).
fn weight_text(e: &EdgeDoc) -> String {
    format!(
        "{:.3}s of waiting, summed over the threads it holds up",
        e.weight_s
    )
}

/// The sentence for a knot whose fields other than `advice` are filled in.
pub(crate) fn knot(k: &KnotDoc, vertices: &[VertexDoc], edges: &[EdgeDoc]) -> String {
    let running: f64 = k.vertices.iter().map(|&v| vertices[v].running_s).sum();
    let cpu_note = if k.needs_cpu_s > 0.1 * running.max(1e-9) && k.needs_cpu_s > 0.0 {
        format!(
            " Its threads were also runnable without a CPU for {:.3}s: more cores or a higher priority may help.",
            k.needs_cpu_s
        )
    } else {
        String::new()
    };
    let key = k
        .edges
        .iter()
        .map(|&e| &edges[e])
        .find(|e| e.kind == EdgeKind::Wait && vertices[e.from].kind.is_thread());
    let Some(e) = key else {
        let names: Vec<&str> = k
            .vertices
            .iter()
            .map(|&v| vertices[v].label.as_str())
            .collect();
        return format!(
            "{} form a knot with no thread wait inside: look at what they do on CPU.{cpu_note}",
            names.join(", ")
        );
    };
    let (src, dst) = (&vertices[e.from], &vertices[e.to]);
    let at = place(&e.wait_stacks);
    let w = weight_text(e);
    let main = if e.from == e.to {
        format!(
            "The threads of {} wait for each other ({w}){at}: look at the lock they contend on, or at uneven work where they meet (a barrier, a join).",
            src.label
        )
    } else if dst.kind.is_io() {
        format!(
            "{} waits for {} ({w}){at}: make this I/O asynchronous, batch it, or take it off {}'s path; {} waiting for {}'s requests is the device idling, not the problem.",
            src.label, dst.label, src.label, dst.label, src.label
        )
    } else if dst.kind == KindDoc::Timer {
        format!(
            "{} waits for timers ({w}){at}: look at its sleeps and timeouts.",
            src.label
        )
    } else {
        format!(
            "{} waits for {} ({w}){at}: look at why {} takes that long to release it, or whether {} must wait at all.",
            src.label, dst.label, dst.label, src.label
        )
    };
    format!("{main}{}{cpu_note}", loop_note(k, vertices))
}

/// ` It is the saturated stage of a closed loop: …` for a knot that stood out of one.
fn loop_note(k: &KnotDoc, vertices: &[VertexDoc]) -> String {
    let Some(c) = &k.closed_loop else {
        return String::new();
    };
    let stage: Vec<&str> = k
        .vertices
        .iter()
        .filter(|&&v| vertices[v].kind.is_thread())
        .map(|&v| vertices[v].label.as_str())
        .collect();
    format!(
        " {} is the saturated stage of a closed loop with {} other vertices: busy {:.0}% of its time against at most {:.0}% for the others, which wait for it.",
        stage.join(", "),
        c.vertices.len(),
        c.busy * 100.0,
        c.others_busy * 100.0
    )
}

/// The sentence for a sink whose fields other than `advice` are filled in. It names the
/// heaviest waiter with its wait stack and, when the chain is longer, who waits for
/// that waiter in turn.
pub(crate) fn sink(s: &SinkDoc, vertices: &[VertexDoc], edges: &[EdgeDoc]) -> String {
    let v = &vertices[s.vertex];
    let incoming_s = s.incoming_s;
    let top = s
        .edges
        .iter()
        .map(|&e| &edges[e])
        .filter(|e| vertices[e.from].kind.is_thread())
        .max_by(|a, b| a.weight_s.total_cmp(&b.weight_s).then(b.id.cmp(&a.id)));
    let chain = if s.chain.len() >= 3 {
        let names: Vec<&str> = s
            .chain
            .iter()
            .map(|&x| vertices[x].label.as_str())
            .collect();
        format!(" Chain of waits: {}.", names.join(" → "))
    } else {
        String::new()
    };
    let Some(e) = top else {
        return format!("{}{chain}", plain_sink(v, incoming_s));
    };
    let src = &vertices[e.from].label;
    let at = place(&e.wait_stacks);
    let w = weight_text(e);
    let waited_for = s.chain.len() >= 3;
    let main = match &v.kind {
        KindDoc::Timer if waited_for => format!(
            "{src} waits for timers ({w}){at} while others wait for it: a sleep on the path others wait for serialises their work; overlap those sleeps (more threads, asynchronous calls) or shorten them."
        ),
        KindDoc::Timer => format!(
            "{src} waits for timers ({w}){at}: look at why it sleeps rather than waits for work."
        ),
        KindDoc::RuntimePauses { .. } => format!(
            "{src} waits for {} ({w}){at}: {}",
            v.label,
            runtime_pauses(&v.kind)
        ),
        KindDoc::CpuQuota { .. } | KindDoc::CpuAffinity { .. } => format!(
            "{src} waits for the {} ({w}): {}",
            v.label,
            quota_advice(&v.kind)
        ),
        k if k.is_io() => format!(
            "{src} waits for {} ({w}){at}, which waits for nobody: the device itself may be saturated; batch or cut the I/O.",
            v.label
        ),
        k if k.is_thread() => format!(
            "{src} waits for {} ({w}){at}, which waits for nobody: {}.",
            v.label,
            cpu_work(v)
        ),
        _ => plain_sink(v, incoming_s),
    };
    format!("{main}{chain}")
}

/// What a runtime's pauses are and what to do when they are the limit.
pub(crate) fn runtime_pauses(k: &KindDoc) -> String {
    let KindDoc::RuntimePauses {
        runtime,
        pauses,
        longest_ns,
        total_ns,
        ..
    } = k
    else {
        return String::new();
    };
    format!(
        "the {runtime}'s pauses are the limit: {pauses} pauses (safepoints, collections), longest {:.1} ms, {:.3}s in all; allocate less or size the heap and collector for this load (see its GC log: -Xlog:gc*).",
        *longest_ns as f64 / 1e6,
        *total_ns as f64 / 1e9
    )
}

/// What a spent CPU quota, or an affinity that keeps threads off idle CPUs, means and
/// what to do about it.
pub(crate) fn quota_advice(k: &KindDoc) -> String {
    if let KindDoc::CpuAffinity {
        cpus,
        idle_outside_ns,
        held_ns,
        ..
    } = k
    {
        return format!(
            "runnable {:.3}s in all while CPUs it may not run on sat idle ({:.3}s of their idle time), not waiting for a busy machine; let it run on more CPUs (its affinity: taskset -p, sched_setaffinity; its cpuset: cpuset.cpus, a container's --cpuset-cpus, a pod's CPU manager policy) or cut the CPU work done on CPUs {cpus}.",
            *held_ns as f64 / 1e9,
            *idle_outside_ns as f64 / 1e9
        );
    }
    let KindDoc::CpuQuota {
        cgroup, held_ns, ..
    } = k
    else {
        return String::new();
    };
    format!(
        "runnable {:.3}s in all while the cgroup {cgroup} had spent its CPU quota, not waiting for a busy CPU; raise the quota (cpu.max, or cpu.cfs_quota_us on cgroup v1; a container's --cpus, a pod's CPU limit, a unit's CPUQuota=) or cut the CPU work done under it.",
        *held_ns as f64 / 1e9
    )
}

/// Most of what a finding's processes read from the disk were pages their memory limit
/// had evicted from this share on: the limit, not the I/O pattern, is the cause.
const LIMIT_IS_THE_CAUSE: f64 = 0.5;

/// Name in `advice` the memory limit that the processes of `members` (vertex ids)
/// ran into, if any. Where most of what they read from the disk were pages the limit
/// had evicted ([`LIMIT_IS_THE_CAUSE`]), the limit leads the advice: raising it, not
/// batching the I/O, removes those reads. Otherwise it is named after the advice as
/// a possible cause.
pub(crate) fn note_memory_limit(
    advice: &mut String,
    members: &[usize],
    vertices: &[VertexDoc],
    limits: &[super::doc::MemoryLimitDoc],
) {
    let pids: Vec<u32> = members
        .iter()
        .flat_map(|&v| vertices[v].threads.iter().map(|t| t.pid))
        .collect();
    let Some(m) = limits
        .iter()
        .find(|m| m.pids.iter().any(|p| pids.contains(p)))
    else {
        return;
    };
    let mib = |b: u64| b as f64 / (1u64 << 20) as f64;
    let group = format!(
        "cgroup {}{}",
        m.cgroup,
        m.owner
            .as_ref()
            .map(|o| format!(" [{o}]"))
            .unwrap_or_default()
    );
    let raise = "raise the limit (memory.max, memory.limit_in_bytes on cgroup v1, a container's --memory, a pod's memory limit) or shrink the working set";
    let reclaim = match m.reclaim_share {
        Some(r) if m.reclaims > 0 => format!(
            ", and they spent {:.3}s in {} page reclaims ({:.0} % of their running time)",
            m.reclaim_ns as f64 / 1e9,
            m.reclaims,
            r * 100.0
        ),
        Some(r) => format!(
            ", and page reclaim took {:.0} % of their on-CPU samples",
            r * 100.0
        ),
        None => String::new(),
    };
    // The kernel's own measure beside ours, when the recording has PSI samples.
    let reclaim = match &m.memory_pressure {
        Some(p) if p.some >= 0.01 => format!(
            "{reclaim}; the kernel counted tasks stalled on memory {:.0} % of the time ({} PSI; all of them at once {:.0} %)",
            p.some * 100.0,
            if p.of == "system" {
                "the system's"
            } else {
                "the cgroup's"
            },
            p.full * 100.0
        ),
        _ => reclaim,
    };
    if let Some(share) = m.refault_share.filter(|&s| s >= LIMIT_IS_THE_CAUSE) {
        *advice = format!(
            "The memory limit of {group} ({:.0} MiB, reached {} times) is the cause: {:.0} % of what its processes read from the disk were pages the limit had evicted ({} read again){reclaim}; {raise}, since batching or asynchronous I/O would not remove these reads. {advice}",
            mib(m.limit_bytes),
            m.hits,
            share * 100.0,
            m.refaults,
        );
        return;
    }
    let _ = write!(
        advice,
        " Its processes are in {group} with a memory limit of {:.0} MiB, reached {} times during the recording ({} evicted file pages read again, {} major faults{reclaim}): waits on the disk here may be re-reads of what the limit evicted; {raise}.",
        mib(m.limit_bytes),
        m.hits,
        m.refaults,
        m.major_faults
    );
}

/// A running sink's own work: the program's code its samples ran, as the diagnosis's
/// verdict names a running hop, so the answer ends at a function rather than at
/// "profile it". A second site is named when the first holds under half the samples.
fn cpu_work(v: &VertexDoc) -> String {
    let limit = "its own CPU work is the limit";
    let Some(p) = v.on_cpu.as_ref().filter(|p| !p.sites.is_empty()) else {
        return format!("{limit}; profile it on CPU");
    };
    let first = &p.sites[0];
    let mut named = vec![format!("{:.0}% in {}", first.share * 100.0, first.text)];
    if first.share < 0.5
        && let Some(second) = p.sites.get(1)
    {
        named.push(format!("{:.0}% in {}", second.share * 100.0, second.text));
    }
    let few = if p.samples < FEW_SAMPLES {
        " (too few samples to be sure)"
    } else {
        ""
    };
    format!(
        "{limit}, {} of its {} CPU sample{}{few}",
        named.join(", "),
        p.samples,
        if p.samples == 1 { "" } else { "s" }
    )
}

/// Below this many samples a running sink's sites are named with a warning.
const FEW_SAMPLES: u64 = 10;

/// The sentence for a sink when no thread's wait on it can be named.
fn plain_sink(v: &VertexDoc, incoming_s: f64) -> String {
    match &v.kind {
        KindDoc::Timer => format!(
            "Threads wait {incoming_s:.3}s for timers (sleeps, timeouts): look at why they sleep rather than wait for work."
        ),
        k if k.is_io() => format!(
            "Threads wait {incoming_s:.3}s for {} and it waits for nobody: the device itself may be saturated.",
            v.label
        ),
        KindDoc::RuntimePauses { .. } => format!(
            "Threads wait {incoming_s:.3}s for {}: {}",
            v.label,
            runtime_pauses(&v.kind)
        ),
        KindDoc::CpuQuota { .. } | KindDoc::CpuAffinity { .. } => format!(
            "Threads wait {incoming_s:.3}s for the {}: {}",
            v.label,
            quota_advice(&v.kind)
        ),
        KindDoc::OtherProcesses => format!(
            "Threads wait {incoming_s:.3}s for processes that were not recorded: record those too (`causeway record -p` or `-a`) to see what they wait for."
        ),
        k if k.is_thread() => format!(
            "Threads wait {incoming_s:.3}s for {}, which waits for nobody: {}.",
            v.label,
            cpu_work(v)
        ),
        _ => format!(
            "Threads wait {incoming_s:.3}s for {}, which the trace does not tie to a device or thread.",
            v.label
        ),
    }
}

/// The sentence for a timer sink only background threads wait on.
pub(crate) fn background_sink(s: &SinkDoc, vertices: &[VertexDoc], edges: &[EdgeDoc]) -> String {
    let waiters: Vec<String> = s
        .edges
        .iter()
        .map(|&e| &edges[e])
        .map(|e| format!("{}{}", vertices[e.from].label, place(&e.wait_stacks)))
        .collect();
    format!(
        "{} sleep on timers and no worker waits for them (they are in no knot, nobody waits on them or only for brief stops, they are mostly idle): background threads; optimizing them is optional.",
        waiters.join(", ")
    )
}

/// The sentence for a background knot.
pub(crate) fn background_knot(k: &KnotDoc, vertices: &[VertexDoc]) -> String {
    let names: Vec<&str> = k
        .vertices
        .iter()
        .map(|&v| vertices[v].label.as_str())
        .collect();
    format!(
        "{} wait for each other but use under one CPU together and touch no device: background threads; optimizing them is optional.",
        names.join(", ")
    )
}

/// What to look at first: the first knot's advice, else the first sink's.
pub(crate) fn summary(knots: &[KnotDoc], sinks: &[SinkDoc], background: bool) -> String {
    knots
        .first()
        .map(|k| k.advice.clone())
        .or_else(|| sinks.first().map(|s| s.advice.clone()))
        .unwrap_or_else(|| {
            if background {
                "No knot or sink among the workers: only background threads sleeping on timers were found (see Background)."
                    .into()
            } else {
                "No knot or sink found: no thread waits on anything the trace can attribute."
                    .into()
            }
        })
}

#[cfg(test)]
mod tests {
    use super::symbol;

    #[test]
    fn a_frames_function_name_is_its_name_without_parameters_or_return_type() {
        assert_eq!(symbol("fdatasync+0x1f fsync.c:28"), "fdatasync");
        assert_eq!(
            symbol("__futex_abstimed_wait_common64 (inlined) futex-internal.c:57"),
            "__futex_abstimed_wait_common64"
        );
        assert_eq!(
            symbol("void org.apache.derby.impl.store.raw.log.LogToFile.flush(long, long)+0x0"),
            "org.apache.derby.impl.store.raw.log.LogToFile.flush"
        );
        assert_eq!(
            symbol("ObjectMonitor::wait(long, bool, JavaThread*)+0x905"),
            "ObjectMonitor::wait"
        );
        assert_eq!(
            symbol("main.(*server).commit+0x40"),
            "main.(*server).commit"
        );
        assert_eq!(symbol("0x7f00deadbeef"), "0x7f00deadbeef");
    }

    /// A stripped program's frames are left out of the place, never shown as an
    /// empty name (`at __GI_fsync ← :` on a stripped beanstalkd).
    #[test]
    fn a_place_names_only_frames_with_names() {
        let stack = super::StackDoc {
            weight_s: 1.0,
            user: vec![
                "__GI_fsync+0x11 fsync.c:27".into(),
                " (beanstalkd)".into(),
                "0x563a16bd18d8 (beanstalkd)".into(),
            ],
            call_site: Some(1),
            kernel: Vec::new(),
        };
        assert_eq!(super::place(&[stack]), " at __GI_fsync");
    }
}
