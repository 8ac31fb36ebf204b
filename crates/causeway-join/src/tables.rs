//! The joined trace's tables: every host's rows, renumbered, one after the other.

use crate::ids::HostIds;
use causeway_format::{
    Endpoint, Flow, FlowId, Frame, FrameId, FrameSpace, InlinedFrame, Mapping, ProcessInfo,
    SockFamily, Stack, StringId, Tables, ThreadInfo,
};
use rustc_hash::FxHashMap;

/// One host's part of the join, as the table merge needs it.
#[derive(Clone, Copy, Debug)]
pub struct HostPart<'a> {
    /// The host's name, added to its threads' names (`worker@name`).
    pub name: &'a str,
    /// Its trace's tables.
    pub tables: &'a Tables,
    /// Its CPU count.
    pub cpus: u32,
    /// Its clock shift onto the joined clock.
    pub shift_ns: i64,
    /// Thread names that its `exec` events set, which need the host's name too.
    pub exec_comms: &'a [StringId],
}

/// The joined tables, and where each host's ids went. Thread names carry their host
/// (`comm@host`): a joined report names threads of several machines, and the kernel's
/// own workers keep the name prefix the analyses recognize them by.
pub fn join(parts: &[HostPart<'_>]) -> (Tables, Vec<HostIds>) {
    let mut out = Tables::default();
    let mut ids = Vec::with_capacity(parts.len());
    let mut cpu_base = 0u32;
    for (i, p) in parts.iter().enumerate() {
        let h = HostIds {
            host: i as u32,
            cpu_base,
            string_base: out.strings.len() as u32,
            frame_base: out.frames.len() as u32,
            stack_base: out.stacks.len() as u32,
            flows: Vec::new(),
            shift_ns: p.shift_ns,
            comms: FxHashMap::default(),
        };
        cpu_base += p.cpus.max(1);
        out.strings.extend(p.tables.strings.iter().cloned());
        let h = append_host(&mut out, p, h);
        ids.push(h);
    }
    (out, ids)
}

fn append_host(out: &mut Tables, p: &HostPart<'_>, mut h: HostIds) -> HostIds {
    let t = p.tables;
    // The host-qualified names, appended after every string of the host.
    let named = t
        .threads
        .iter()
        .map(|r| r.comm)
        .chain(p.exec_comms.iter().copied());
    for comm in named {
        if let std::collections::hash_map::Entry::Vacant(e) = h.comms.entry(comm) {
            e.insert(StringId(out.strings.len() as u32));
            out.strings.push(format!("{}@{}", t.string(comm), p.name));
        }
    }
    out.threads.extend(t.threads.iter().map(|r| ThreadInfo {
        tid: h.tid(r.tid),
        tgid: h.tgid(r.tgid),
        since: h.ts(r.since),
        comm: h.comm(r.comm),
    }));
    out.processes
        .extend(t.processes.iter().map(|r| ProcessInfo {
            tgid: h.tgid(r.tgid),
            parent: r.parent.map(|p| h.tgid(p)),
            since: h.ts(r.since),
            exe: h.string(r.exe),
            cmdline: h.string(r.cmdline),
        }));
    out.mappings.extend(t.mappings.iter().map(|m| Mapping {
        tgid: h.tgid(m.tgid),
        since: h.ts(m.since),
        path: h.string(m.path),
        ..m.clone()
    }));
    out.frames.extend(t.frames.iter().map(|f| frame(&h, f)));
    out.stacks.extend(t.stacks.iter().map(|s| {
        Stack {
            frames: s
                .frames
                .iter()
                .map(|f| FrameId(f.0 + h.frame_base))
                .collect(),
            truncated: s.truncated,
        }
    }));
    h.flows = t
        .flows
        .iter()
        .map(|f| {
            let id = FlowId(out.flows.len() as u32);
            out.flows.push(scoped_flow(f, h.host));
            id
        })
        .collect();
    h
}

fn frame(h: &HostIds, f: &Frame) -> Frame {
    Frame {
        space: match f.space {
            FrameSpace::Kernel => FrameSpace::Kernel,
            FrameSpace::User { tgid } => FrameSpace::User { tgid: h.tgid(tgid) },
        },
        addr: f.addr,
        module: h.string(f.module),
        symbol: h.string(f.symbol),
        sym_offset: f.sym_offset,
        file: h.string(f.file),
        line: f.line,
        inlined: f
            .inlined
            .iter()
            .map(|i| InlinedFrame {
                symbol: h.string(i.symbol),
                file: h.string(i.file),
                line: i.line,
            })
            .collect(),
    }
}

/// A Unix socket's ends are kernel objects of one host: the host's number goes into
/// the object identity's unused last byte so that two hosts' objects never pair.
/// IP flows stay as they are: their addresses are what ties a send on one host to the
/// receive on another. (Two hosts' loopback flows pair only if their four-tuples are
/// equal at the same time; TCP then also needs equal sequence numbers.)
fn scoped_flow(f: &Flow, host: u32) -> Flow {
    if f.family != SockFamily::UNIX {
        return *f;
    }
    let tag = |mut e: Endpoint| {
        e.addr[15] = e.addr[15].wrapping_add(host as u8);
        e
    };
    Flow {
        local: tag(f.local),
        remote: tag(f.remote),
        ..*f
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use causeway_format::{SockProto, Tgid, Tid, Timestamp};

    fn tables(comm: &str) -> Tables {
        Tables {
            strings: vec![String::new(), comm.to_string(), "/bin/x".to_string()],
            threads: vec![ThreadInfo {
                tid: Tid(10),
                tgid: Tgid(10),
                since: Timestamp(0),
                comm: StringId(1),
            }],
            processes: vec![ProcessInfo {
                tgid: Tgid(10),
                parent: Some(Tgid(1)),
                since: Timestamp(0),
                exe: StringId(2),
                cmdline: StringId(2),
            }],
            flows: vec![
                Flow {
                    family: SockFamily::INET,
                    proto: SockProto::TCP,
                    local: Endpoint::v4([10, 0, 0, 1], 80),
                    remote: Endpoint::v4([10, 0, 0, 2], 4000),
                },
                Flow {
                    family: SockFamily::UNIX,
                    proto: SockProto(1),
                    local: Endpoint::object(7),
                    remote: Endpoint::object(8),
                },
            ],
            ..Tables::default()
        }
    }

    #[test]
    fn names_carry_their_host_and_ids_do_not_collide() {
        let (a, b) = (tables("server"), tables("client"));
        let part = |name, t| HostPart {
            name,
            tables: t,
            cpus: 2,
            shift_ns: 0,
            exec_comms: &[],
        };
        let (j, ids) = join(&[part("a", &a), part("b", &b)]);
        assert_eq!(j.threads.len(), 2);
        assert_ne!(j.threads[0].tid, j.threads[1].tid);
        assert_eq!(j.string(j.threads[0].comm), "server@a");
        assert_eq!(j.string(j.threads[1].comm), "client@b");
        assert_eq!(j.string(j.processes[1].exe), "/bin/x");
        assert_eq!(ids[1].cpu_base, 2);
        // The TCP flow is the same value on both hosts (only addresses tie hosts
        // together); the Unix one is not.
        assert_eq!(
            j.flows[ids[0].flows[0].0 as usize],
            j.flows[ids[1].flows[0].0 as usize]
        );
        assert_ne!(
            j.flows[ids[0].flows[1].0 as usize],
            j.flows[ids[1].flows[1].0 as usize]
        );
    }
}
