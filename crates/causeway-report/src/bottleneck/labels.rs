//! Short human names of vertices: `consumer (1234)`, `worker-* ×4 threads`, `disk 8:0`,
//! and by process title where the program set one: `server: log flusher (6811)`,
//! `server: worker * ×16 processes`.

use super::doc::{KindDoc, ThreadDoc};
use causeway_bottleneck::{VertexKind, similar_name};

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
    }
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
}
