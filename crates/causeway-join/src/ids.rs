//! One host's ids moved into the joined trace's id spaces, and its events rewritten.
//!
//! Every host numbers its threads, CPUs, strings, stacks and flows from the same small
//! integers, so the joined trace gives each host its own range:
//!
//! - threads and processes: `tid + host × 2^22` (`pid_max` is at most 2^22 on Linux, so
//!   the ranges never overlap; 256 hosts stay below the goroutine view's ids, which
//!   start at 2^30). Thread 0 is every CPU's idle task and stays 0.
//! - CPUs: after the CPUs of the hosts before it.
//! - rows of the string, frame, stack and flow tables: after those of the hosts before.
//! - timers (a kernel address): the host number in the top byte, so two hosts' timers
//!   at the same address stay two timers.
//!
//! Block devices keep their numbers: a device is named by its major and minor numbers,
//! and a request pairs its completion by device and sector, so two hosts' requests mix
//! only if both have one in flight to the same sector of the same-numbered device.

use causeway_format::{
    Cpu, Event, EventKind, FlowId, Marker, StackId, StringId, Tgid, Tid, Timestamp, Waker,
};
use rustc_hash::FxHashMap;

/// Thread ids of one host occupy `[host << TID_BITS, (host + 1) << TID_BITS)`.
pub const TID_BITS: u32 = 22;

/// The most hosts one joined trace holds (ids of more would reach the goroutine view's).
pub const MAX_HOSTS: usize = 256;

/// Where one host's ids go in the joined trace.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HostIds {
    /// The host's number in the join (its trace's position on the command line).
    pub host: u32,
    /// Added to every CPU number.
    pub cpu_base: u32,
    /// Added to every string id.
    pub string_base: u32,
    /// Added to every frame id.
    pub frame_base: u32,
    /// Added to every stack id.
    pub stack_base: u32,
    /// The joined flow id of each of the host's flows, by its own id.
    pub flows: Vec<FlowId>,
    /// Added to every timestamp: the host's clock moved onto the joined clock.
    pub shift_ns: i64,
    /// Thread names with the host's name added, by the host's own string id.
    pub comms: FxHashMap<StringId, StringId>,
}

impl HostIds {
    /// A thread's id in the joined trace.
    pub fn tid(&self, tid: Tid) -> Tid {
        if tid.0 == 0 {
            return tid;
        }
        Tid(tid.0 | (self.host << TID_BITS))
    }

    /// A process's id in the joined trace.
    pub fn tgid(&self, tgid: Tgid) -> Tgid {
        Tgid(self.tid(Tid(tgid.0)).0)
    }

    /// A CPU's number in the joined trace.
    pub fn cpu(&self, cpu: Cpu) -> Cpu {
        Cpu(cpu.0 + self.cpu_base)
    }

    /// A string's id in the joined trace.
    pub fn string(&self, id: StringId) -> StringId {
        StringId(id.0 + self.string_base)
    }

    /// A thread name's id in the joined trace: the name with its host's added.
    pub fn comm(&self, id: StringId) -> StringId {
        self.comms
            .get(&id)
            .copied()
            .unwrap_or_else(|| self.string(id))
    }

    /// A stack's id in the joined trace.
    pub fn stack(&self, id: StackId) -> StackId {
        StackId(id.0 + self.stack_base)
    }

    /// A flow's id in the joined trace (a flow the host's table lacks pairs with
    /// nothing: it gets an id past every table row).
    pub fn flow(&self, id: FlowId) -> FlowId {
        self.flows
            .get(id.0 as usize)
            .copied()
            .unwrap_or(FlowId(u32::MAX))
    }

    /// A time on the joined clock (never below zero: the join picks shifts that keep
    /// every recorded event at or after zero).
    pub fn ts(&self, ts: Timestamp) -> Timestamp {
        Timestamp(ts.0.saturating_add_signed(self.shift_ns))
    }

    fn timer(&self, timer: u64) -> u64 {
        timer ^ (u64::from(self.host) << 56)
    }

    fn waker(&self, w: Waker) -> Waker {
        match w {
            Waker::Thread { tid } => Waker::Thread { tid: self.tid(tid) },
            Waker::Irq { irq, name } => Waker::Irq {
                irq,
                name: self.string(name),
            },
            other => other,
        }
    }

    fn marker(&self, m: Marker) -> Marker {
        match m {
            Marker::MethodEnter { method } => Marker::MethodEnter {
                method: self.string(method),
            },
            Marker::MethodExit { method } => Marker::MethodExit {
                method: self.string(method),
            },
            Marker::SpanBegin { name, id } => Marker::SpanBegin {
                name: self.string(name),
                id,
            },
            Marker::SpanEnd { name, id } => Marker::SpanEnd {
                name: self.string(name),
                id,
            },
            other => other,
        }
    }

    /// The event as the joined trace holds it.
    pub fn event(&self, ev: &Event) -> Event {
        Event {
            ts: self.ts(ev.ts),
            cpu: self.cpu(ev.cpu),
            kind: self.kind(ev.kind),
        }
    }

    fn kind(&self, k: EventKind) -> EventKind {
        use EventKind as K;
        match k {
            K::SchedSwitch {
                prev_tid,
                prev_state,
                next_tid,
            } => K::SchedSwitch {
                prev_tid: self.tid(prev_tid),
                prev_state,
                next_tid: self.tid(next_tid),
            },
            K::Wakeup {
                wakee,
                target_cpu,
                waker,
            } => K::Wakeup {
                wakee: self.tid(wakee),
                target_cpu: self.cpu(target_cpu),
                waker: self.waker(waker),
            },
            K::WakeupNew {
                wakee,
                target_cpu,
                waker,
            } => K::WakeupNew {
                wakee: self.tid(wakee),
                target_cpu: self.cpu(target_cpu),
                waker: self.waker(waker),
            },
            K::Fork {
                parent_tid,
                parent_tgid,
                child_tid,
                child_tgid,
            } => K::Fork {
                parent_tid: self.tid(parent_tid),
                parent_tgid: self.tgid(parent_tgid),
                child_tid: self.tid(child_tid),
                child_tgid: self.tgid(child_tgid),
            },
            K::Exec {
                tid,
                comm,
                filename,
            } => K::Exec {
                tid: self.tid(tid),
                comm: self.comm(comm),
                filename: self.string(filename),
            },
            K::Exit { tid } => K::Exit { tid: self.tid(tid) },
            K::IrqEntry { irq, name } => K::IrqEntry {
                irq,
                name: self.string(name),
            },
            K::BlockIssue {
                tid,
                dev,
                sector,
                bytes,
                op,
            } => K::BlockIssue {
                tid: self.tid(tid),
                dev,
                sector,
                bytes,
                op,
            },
            K::NetXmit { tid, dev, bytes } => K::NetXmit {
                tid: self.tid(tid),
                dev: self.string(dev),
                bytes,
            },
            K::NetRecv { tid, dev, bytes } => K::NetRecv {
                tid: self.tid(tid),
                dev: self.string(dev),
                bytes,
            },
            K::SyscallEnter { tid, nr, args } => K::SyscallEnter {
                tid: self.tid(tid),
                nr,
                args,
            },
            K::SyscallExit { tid, nr, ret } => K::SyscallExit {
                tid: self.tid(tid),
                nr,
                ret,
            },
            K::Stack {
                tid,
                kind,
                user,
                kernel,
            } => K::Stack {
                tid: self.tid(tid),
                kind,
                user: user.map(|s| self.stack(s)),
                kernel: kernel.map(|s| self.stack(s)),
            },
            K::Marker { tid, marker } => K::Marker {
                tid: self.tid(tid),
                marker: self.marker(marker),
            },
            other => self.kind_rest(other),
        }
    }

    /// Signals, timers, sockets and goroutines (format 1.3 on).
    fn kind_rest(&self, k: EventKind) -> EventKind {
        use EventKind as K;
        match k {
            K::SignalGenerate {
                sender,
                target,
                target_tgid,
                sig,
                group,
                result,
            } => K::SignalGenerate {
                sender: self.tid(sender),
                target: self.tid(target),
                target_tgid: self.tgid(target_tgid),
                sig,
                group,
                result,
            },
            K::SignalDeliver { tid, sig } => K::SignalDeliver {
                tid: self.tid(tid),
                sig,
            },
            K::TimerArm {
                tid,
                timer,
                expires,
            } => K::TimerArm {
                tid: self.tid(tid),
                timer: self.timer(timer),
                expires: expires.map(|t| self.ts(t)),
            },
            K::TimerExpire { timer } => K::TimerExpire {
                timer: self.timer(timer),
            },
            K::SockSend {
                tid,
                flow,
                bytes,
                seq,
            } => K::SockSend {
                tid: self.tid(tid),
                flow: self.flow(flow),
                bytes,
                seq,
            },
            K::SockReady {
                wakee,
                host,
                flow,
                seq,
            } => K::SockReady {
                wakee: self.tid(wakee),
                host: self.tid(host),
                flow: self.flow(flow),
                seq,
            },
            K::GoRun {
                tid,
                goid,
                parent,
                start,
            } => K::GoRun {
                tid: self.tid(tid),
                goid,
                parent,
                start: start.map(|s| self.stack(s)),
            },
            K::GoPark { tid, goid, reason } => K::GoPark {
                tid: self.tid(tid),
                goid,
                reason: self.string(reason),
            },
            K::GoNetWait {
                tid,
                goid,
                flow,
                seq,
            } => K::GoNetWait {
                tid: self.tid(tid),
                goid,
                flow: self.flow(flow),
                seq,
            },
            K::GoReady { tid, goid, by } => K::GoReady {
                tid: self.tid(tid),
                goid,
                by,
            },
            // No ids: interrupts' vectors, block completions, loss counts.
            other => other,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use causeway_format::TaskState;

    fn second() -> HostIds {
        HostIds {
            host: 1,
            cpu_base: 2,
            string_base: 10,
            frame_base: 20,
            stack_base: 30,
            flows: vec![FlowId(5)],
            shift_ns: -100,
            comms: FxHashMap::default(),
        }
    }

    #[test]
    fn threads_cpus_and_times_move_but_the_idle_task_stays() {
        let h = second();
        let ev = Event {
            ts: Timestamp(1_000),
            cpu: Cpu(1),
            kind: EventKind::SchedSwitch {
                prev_tid: Tid(42),
                prev_state: TaskState::RUNNABLE,
                next_tid: Tid(0),
            },
        };
        let out = h.event(&ev);
        assert_eq!(out.ts, Timestamp(900));
        assert_eq!(out.cpu, Cpu(3));
        assert_eq!(
            out.kind,
            EventKind::SchedSwitch {
                prev_tid: Tid(42 + (1 << 22)),
                prev_state: TaskState::RUNNABLE,
                next_tid: Tid(0),
            }
        );
    }

    #[test]
    fn flows_stacks_and_timers_are_renumbered() {
        let h = second();
        let send = h.kind(EventKind::SockSend {
            tid: Tid(7),
            flow: FlowId(0),
            bytes: 3,
            seq: Some(9),
        });
        assert!(matches!(
            send,
            EventKind::SockSend {
                flow: FlowId(5),
                ..
            }
        ));
        let unknown = h.kind(EventKind::SockSend {
            tid: Tid(7),
            flow: FlowId(3),
            bytes: 3,
            seq: None,
        });
        assert!(matches!(
            unknown,
            EventKind::SockSend {
                flow: FlowId(u32::MAX),
                ..
            }
        ));
        let st = h.kind(EventKind::Stack {
            tid: Tid(7),
            kind: causeway_format::StackKind::SwitchOut,
            user: Some(StackId(1)),
            kernel: None,
        });
        assert!(matches!(
            st,
            EventKind::Stack {
                user: Some(StackId(31)),
                ..
            }
        ));
        let arm = h.kind(EventKind::TimerArm {
            tid: Tid(7),
            timer: 0xffff_8880_0000_1000,
            expires: Some(Timestamp(5_000)),
        });
        let EventKind::TimerArm { timer, expires, .. } = arm else {
            panic!("{arm:?}");
        };
        assert_ne!(timer, 0xffff_8880_0000_1000);
        assert_eq!(expires, Some(Timestamp(4_900)));
        let exp = h.kind(EventKind::TimerExpire {
            timer: 0xffff_8880_0000_1000,
        });
        assert_eq!(exp, EventKind::TimerExpire { timer });
    }

    #[test]
    fn the_first_host_keeps_its_ids() {
        let h = HostIds::default();
        assert_eq!(h.tid(Tid(1234)), Tid(1234));
        assert_eq!(h.cpu(Cpu(1)), Cpu(1));
        assert_eq!(h.ts(Timestamp(77)), Timestamp(77));
    }
}
