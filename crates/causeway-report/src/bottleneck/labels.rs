//! Short human names of vertices: `consumer (1234)`, `worker-* ×4 threads`, `disk 8:0`,
//! and by process title where the program set one: `server: log flusher (6811)`,
//! `server: worker * ×16 processes`.

use super::doc::{EdgeDoc, KindDoc, ThreadDoc, VertexDoc};
use causeway_bottleneck::EdgeKind;
use causeway_bottleneck::{ManagedRuntime, VertexKind, similar_name};

/// A vertex kind with its device or interrupt spelled out (`?` when unknown).
pub(crate) fn kind_doc(k: &VertexKind, disks: &DiskNames) -> KindDoc {
    let or_unknown = |s: Option<String>| s.unwrap_or_else(|| "?".into());
    match k {
        VertexKind::Thread => KindDoc::Thread,
        VertexKind::ShortTermThreads => KindDoc::ShortTermThreads,
        VertexKind::SimilarThreads => KindDoc::SimilarThreads,
        VertexKind::SimilarProcesses => KindDoc::SimilarProcesses,
        VertexKind::Disk { device } => KindDoc::Disk {
            device: or_unknown(device.map(|d| disk_name(d, disks))),
        },
        VertexKind::Nic { interface } => KindDoc::Nic {
            interface: or_unknown(interface.clone()),
        },
        VertexKind::Timer => KindDoc::Timer,
        VertexKind::Interrupt { name } => KindDoc::Interrupt { name: name.clone() },
        VertexKind::Softirq { vec } => KindDoc::Interrupt {
            name: format!("softirq {}", vec.name()),
        },
        VertexKind::OtherProcesses => KindDoc::OtherProcesses,
        VertexKind::CpuQuota {
            cgroup,
            quota_us,
            period_us,
            periods,
            throttled,
            held,
        } => KindDoc::CpuQuota {
            owner: causeway_format::cgroups::owner(cgroup).map(|o| o.short()),
            cgroup: cgroup.clone(),
            quota_us: *quota_us,
            period_us: *period_us,
            periods: *periods,
            throttled: *throttled,
            held_ns: held.0,
        },
        VertexKind::CpuAffinity {
            tgid,
            process,
            cpus,
            online,
            idle_outside,
            held,
        } => KindDoc::CpuAffinity {
            process: process.clone(),
            pid: tgid.0,
            cpus: cpus.clone(),
            online: *online,
            idle_outside_ns: idle_outside.0,
            held_ns: held.0,
        },
        VertexKind::RuntimePauses {
            runtime,
            tgid,
            pauses,
            longest,
            total,
        } => KindDoc::RuntimePauses {
            runtime: match runtime {
                ManagedRuntime::Jvm => "JVM".into(),
            },
            pid: tgid.0,
            pauses: *pauses,
            longest_ns: longest.0,
            total_ns: total.0,
        },
    }
}

/// The label of a vertex of kind `kind` with threads `trefs`.
pub(crate) fn label(kind: &KindDoc, trefs: &[ThreadDoc]) -> String {
    match kind {
        KindDoc::Thread => trefs.first().map_or_else(
            || "?".into(),
            |t| match t.goroutine {
                Some(g) => format!("{} (goroutine {g})", name_or_tid(t)),
                None => {
                    let name = t.title.clone().unwrap_or_else(|| name_or_tid(t));
                    format!("{name} ({})", t.tid)
                }
            },
        ),
        // Goroutines merge by their exact start function.
        KindDoc::SimilarThreads if trefs.first().is_some_and(|t| t.goroutine.is_some()) => {
            let first = trefs.first().map_or_else(|| "?".into(), name_or_tid);
            format!("{first} ×{} goroutines", trefs.len())
        }
        KindDoc::ShortTermThreads | KindDoc::SimilarThreads => {
            let first = trefs.first().map_or_else(|| "?".into(), name_or_tid);
            let base = similar_name(&first);
            let what = if *kind == KindDoc::ShortTermThreads {
                "short-term"
            } else {
                "threads"
            };
            format!("{}* ×{} {what}", base, trefs.len())
        }
        // Processes keep their whole name when it has no digits (`pl-worker ×4
        // processes`): a pre-forked pool usually names every member the same.
        KindDoc::SimilarProcesses => {
            if let Some(pattern) = title_pattern(trefs) {
                return format!("{pattern} ×{} processes", trefs.len());
            }
            let first = trefs.first().map_or_else(|| "?".into(), name_or_tid);
            let base = similar_name(&first);
            let star = if base == first { "" } else { "*" };
            format!("{base}{star} ×{} processes", trefs.len())
        }
        KindDoc::Disk { device } => format!("disk {device}"),
        KindDoc::Nic { interface } => format!("nic {interface}"),
        KindDoc::Timer => "timer".into(),
        KindDoc::Interrupt { name } => format!("irq {name}"),
        KindDoc::OtherProcesses => "other processes".into(),
        KindDoc::RuntimePauses { runtime, pid, .. } => format!("{runtime} safepoints/GC ({pid})"),
        KindDoc::CpuQuota {
            cgroup,
            owner,
            quota_us,
            period_us,
            periods,
            throttled,
            ..
        } => format!(
            "CPU quota of {}: {} / {}, throttled {throttled} of {periods} periods",
            owner.as_deref().unwrap_or(cgroup),
            ms(*quota_us),
            ms(*period_us)
        ),
        KindDoc::CpuAffinity {
            process,
            pid,
            cpus,
            online,
            ..
        } => format!("CPU affinity of {process} ({pid}): CPUs {cpus} of {online}"),
    }
}

/// Vertices that would read the same (`startGoRoutine.func1 ×16 goroutines` for both
/// the reading and the writing goroutines of a server that starts every goroutine
/// through one helper; two groups of `worker-* ×4 threads` that merging kept apart
/// because they wait in different places) get the program's own function where they
/// wait most: `… ×16 goroutines in server.(*client).writeLoop`. The call site of the
/// heaviest wait is what set them apart; a label that stays the same is left as is.
pub(crate) fn tell_apart(vertices: &mut [VertexDoc], edges: &[EdgeDoc]) {
    let mut by_label: std::collections::BTreeMap<String, Vec<usize>> = Default::default();
    for v in vertices.iter().filter(|v| v.kind.is_thread()) {
        by_label.entry(v.label.clone()).or_default().push(v.id);
    }
    for ids in by_label.into_values().filter(|ids| ids.len() > 1) {
        for id in ids {
            if let Some(f) = wait_function(id, edges) {
                vertices[id].label = format!("{} in {f}", vertices[id].label);
            }
        }
    }
}

/// The program's function at the call site of vertex `v`'s heaviest wait, without its
/// package path (`server.(*client).writeLoop`).
fn wait_function(v: usize, edges: &[EdgeDoc]) -> Option<String> {
    let e = edges
        .iter()
        .filter(|e| e.from == v && e.kind == EdgeKind::Wait)
        .max_by(|a, b| a.direct_s.total_cmp(&b.direct_s).then(b.id.cmp(&a.id)))?;
    let top = e.wait_stacks.first()?;
    let frame = top.user.get(top.call_site?)?;
    let name = super::advice::symbol(frame);
    if name.starts_with("0x") {
        return None;
    }
    // A Go symbol's package path (`github.com/x/y/server.`) is before the last `/`.
    let short = match name.find(['(', ' ']) {
        Some(cut) => {
            let (path, rest) = name.split_at(cut);
            format!("{}{rest}", path.rsplit('/').next().unwrap_or(path))
        }
        None => name.rsplit('/').next().unwrap_or(name).to_string(),
    };
    Some(short)
}

/// The titles of merged processes as one pattern: the words they all begin with and
/// the words they all end with, the words that differ in between replaced by one `*`
/// (`server: user db 127.0.0.1(4242) idle` and `… (4243) UPDATE` give `server: user db
/// *`). `None` when a member has no title or the titles share no word at either end:
/// then the thread name says more.
fn title_pattern(trefs: &[ThreadDoc]) -> Option<String> {
    let titles: Vec<Vec<&str>> = trefs
        .iter()
        .map(|t| t.title.as_deref().map(|s| s.split_whitespace().collect()))
        .collect::<Option<_>>()?;
    let first = titles.first()?;
    let shortest = titles.iter().map(Vec::len).min().unwrap_or(0);
    let prefix = (0..shortest)
        .take_while(|&i| titles.iter().all(|t| t[i] == first[i]))
        .count();
    if prefix == shortest && titles.iter().all(|t| t.len() == shortest) {
        return Some(first.join(" "));
    }
    let from_end = |t: &Vec<&str>, i: usize| t[t.len() - 1 - i] == first[first.len() - 1 - i];
    let suffix = (0..shortest - prefix)
        .take_while(|&i| titles.iter().all(|t| from_end(t, i)))
        .count();
    if prefix + suffix == 0 {
        return None;
    }
    let mut words: Vec<&str> = first[..prefix].to_vec();
    words.push("*");
    words.extend_from_slice(&first[first.len() - suffix..]);
    Some(words.join(" "))
}

fn name_or_tid(t: &ThreadDoc) -> String {
    if t.comm.is_empty() {
        format!("tid {}", t.tid)
    } else {
        t.comm.clone()
    }
}

/// Name of a block device (`major:minor`).
/// Names of disks by device number.
pub(crate) type DiskNames = std::collections::BTreeMap<causeway_format::DevId, String>;

/// A disk as `vda (254:0)`, or `254:0` when the trace does not name it.
pub(crate) fn disk_name(dev: causeway_format::DevId, disks: &DiskNames) -> String {
    let num = format!("{}:{}", dev.0 >> 20, dev.0 & 0xf_ffff);
    match disks.get(&dev) {
        Some(name) => format!("{name} ({num})"),
        None => num,
    }
}

#[cfg(test)]
mod disk_tests {
    use super::{DiskNames, disk_name};
    use causeway_format::DevId;

    #[test]
    fn disks_are_named_by_the_host_name_where_known() {
        let vda = DevId(254 << 20);
        let names = DiskNames::from([(vda, "vda".to_string())]);
        assert_eq!(disk_name(vda, &names), "vda (254:0)");
        assert_eq!(disk_name(DevId(8 << 20 | 16), &names), "8:16");
    }
}

#[cfg(test)]
mod label_tests {
    use super::label;
    use crate::bottleneck::doc::{KindDoc, ThreadDoc};

    fn threads(names: &[&str]) -> Vec<ThreadDoc> {
        names
            .iter()
            .enumerate()
            .map(|(i, n)| ThreadDoc {
                tid: 100 + i as u32,
                pid: 100 + i as u32,
                comm: n.to_string(),
                title: None,
                goroutine: None,
                cgroup: None,
            })
            .collect()
    }

    fn titled(titles: &[Option<&str>]) -> Vec<ThreadDoc> {
        let mut ts = threads(&vec!["server"; titles.len()]);
        for (t, title) in ts.iter_mut().zip(titles) {
            t.title = title.map(str::to_string);
        }
        ts
    }

    #[test]
    fn titles_name_processes_where_the_program_set_them() {
        let one = titled(&[Some("server: log flusher")]);
        assert_eq!(label(&KindDoc::Thread, &one), "server: log flusher (100)");
        assert_eq!(label(&KindDoc::Thread, &titled(&[None])), "server (100)");
        let k = KindDoc::SimilarProcesses;
        assert_eq!(
            label(&k, &titled(&[Some("server: worker"); 16])),
            "server: worker ×16 processes"
        );
        // The words that differ become one `*`; common words at both ends stay.
        let pool = titled(&[
            Some("server: user db 127.0.0.1(4242) idle"),
            Some("server: user db 127.0.0.1(4243) UPDATE"),
            Some("server: user db [local] idle"),
        ]);
        assert_eq!(label(&k, &pool), "server: user db * ×3 processes");
        let ends = titled(&[Some("pool 1 worker"), Some("pool 22 worker")]);
        assert_eq!(label(&k, &ends), "pool * worker ×2 processes");
        let longer = titled(&[Some("w: a"), Some("w: a b")]);
        assert_eq!(label(&k, &longer), "w: a * ×2 processes");
        // No word in common, or a member without a title: the thread name.
        let apart = titled(&[Some("alpha one"), Some("beta two")]);
        assert_eq!(label(&k, &apart), "server ×2 processes");
        let some = titled(&[Some("server: worker"), None]);
        assert_eq!(label(&k, &some), "server ×2 processes");
    }

    #[test]
    fn merged_processes_keep_a_name_without_digits_whole() {
        let k = KindDoc::SimilarProcesses;
        assert_eq!(
            label(&k, &threads(&["pl-worker"; 4])),
            "pl-worker ×4 processes"
        );
        assert_eq!(label(&k, &threads(&["w1", "w2"])), "w* ×2 processes");
        assert_eq!(
            label(
                &KindDoc::SimilarThreads,
                &threads(&["worker-1", "worker-2"])
            ),
            "worker-* ×2 threads"
        );
    }

    #[test]
    fn a_container_or_pod_is_named_when_all_threads_run_in_it() {
        let id = "3f2a9c1b0d4e5f60718293a4b5c6d7e8f90123456789abcdef0123456789abcd";
        let mut ts = threads(&["redis-server", "redis-server"]);
        for t in &mut ts {
            t.cgroup = Some(format!("/system.slice/docker-{id}.scope"));
        }
        let l = super::with_container("redis-server ×2 threads".into(), &ts);
        assert_eq!(l, "redis-server ×2 threads [container 3f2a9c1b0d4e]");
        // A unit is not named in labels; nor a container some threads are not in.
        ts[1].cgroup = Some("/system.slice/redis.service".into());
        assert_eq!(super::with_container("r".into(), &ts), "r");
        ts[0].cgroup = Some("/system.slice/redis.service".into());
        assert_eq!(super::with_container("r".into(), &ts), "r");
    }
}

#[cfg(test)]
mod apart_tests {
    use super::*;
    use crate::bottleneck::doc::StackDoc;

    fn goroutines(id: usize, start: &str) -> VertexDoc {
        let threads = vec![ThreadDoc {
            tid: 1 << 30,
            pid: 7,
            comm: start.into(),
            title: None,
            goroutine: Some(5),
            cgroup: None,
        }];
        VertexDoc {
            id,
            label: format!("{start} ×16 goroutines"),
            kind: KindDoc::SimilarThreads,
            threads,
            running_s: 0.0,
            runnable_s: 0.0,
            waiting_s: 1.0,
            cpu_fraction: 0.0,
            on_cpu: None,
        }
    }

    fn wait(id: usize, from: usize, frames: &[&str], call_site: usize) -> EdgeDoc {
        EdgeDoc {
            id,
            from,
            to: 9,
            kind: EdgeKind::Wait,
            weight_s: 1.0,
            share: 0.1,
            share_of_waits: 0.1,
            direct_waits: 3,
            direct_s: 1.0,
            wait_stacks: vec![StackDoc {
                weight_s: 1.0,
                user: frames.iter().map(|f| f.to_string()).collect(),
                call_site: Some(call_site),
                kernel: Vec::new(),
            }],
            waker_stacks: Vec::new(),
        }
    }

    /// Two groups started through one helper read the same until the function where
    /// each waits is added; a label no other vertex has is left alone.
    #[test]
    fn same_labels_get_the_function_where_they_wait() {
        let start = "example.com/x/server.(*Server).startGoRoutine.func1";
        let mut vs = vec![
            goroutines(0, start),
            goroutines(1, start),
            goroutines(2, "example.com/x/server.(*Server).acceptLoop"),
        ];
        let es = vec![
            wait(
                0,
                0,
                &[
                    "sync.(*Cond).Wait+0x73 cond.go:71",
                    "example.com/x/server.(*client).writeLoop+0x170 client.go:1428",
                ],
                1,
            ),
            wait(
                1,
                1,
                &["example.com/x/server.(*client).readLoop+0x2e client.go:1300"],
                0,
            ),
            wait(2, 2, &["net.(*TCPListener).Accept+0x2e"], 0),
        ];
        tell_apart(&mut vs, &es);
        assert_eq!(
            vs[0].label,
            format!("{start} ×16 goroutines in server.(*client).writeLoop")
        );
        assert_eq!(
            vs[1].label,
            format!("{start} ×16 goroutines in server.(*client).readLoop")
        );
        assert_eq!(
            vs[2].label,
            "example.com/x/server.(*Server).acceptLoop ×16 goroutines"
        );
    }
}

/// `label` with the container or pod its threads run in (`redis-server (1142)
/// [container 3f2a9c1b0d4e]`), when they all run in the same one. Systemd units are
/// left to the JSON and `info`: on a systemd host every process is in some unit, and
/// naming it in every label crowds the reports.
pub(crate) fn with_container(label: String, threads: &[ThreadDoc]) -> String {
    use causeway_format::cgroups::{Owner, owner};
    let named = |t: &ThreadDoc| {
        t.cgroup
            .as_deref()
            .and_then(owner)
            .filter(|o| matches!(o, Owner::Container(_) | Owner::Pod(_)))
    };
    let Some(first) = threads.first().and_then(named) else {
        return label;
    };
    if threads.iter().all(|t| named(t).as_ref() == Some(&first)) {
        format!("{label} [{}]", first.short())
    } else {
        label
    }
}

/// Microseconds as milliseconds, without a fraction when whole (`20 ms`, `2.5 ms`).
fn ms(us: u64) -> String {
    if us.is_multiple_of(1000) {
        format!("{} ms", us / 1000)
    } else {
        format!("{:.1} ms", us as f64 / 1000.0)
    }
}
