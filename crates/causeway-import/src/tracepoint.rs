//! Tracepoint text (`-F trace`) of the events causeway maps, to typed values.
//!
//! Each parser follows the tracepoint's `print fmt` (see
//! `/sys/kernel/tracing/events/<group>/<name>/format`) and tolerates the variants of
//! older kernels (no `ioprio` in block events, `success=1` in wake-ups). Thread names in
//! the text are not read: they may contain spaces and perf's own per-thread names (from
//! the line head) are used instead. Events not listed here are [`Parsed::Ignored`].

use causeway_format::syscalls::syscall_nr;
use causeway_format::{BlockOp, DevId, SoftirqVec, TaskState};

/// A mapped tracepoint, borrowing strings from the line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Tp<'a> {
    /// `sched:sched_switch`; `prev_state` is `None` if perf printed an unknown letter.
    Switch {
        prev_tid: u32,
        prev_state: Option<TaskState>,
        next_tid: u32,
    },
    /// `sched:sched_waking`.
    Waking { wakee: u32, target_cpu: u32 },
    /// `sched:sched_wakeup`.
    Wakeup { wakee: u32, target_cpu: u32 },
    /// `sched:sched_wakeup_new`.
    WakeupNew { wakee: u32, target_cpu: u32 },
    /// `sched:sched_process_fork`.
    Fork {
        parent_tid: u32,
        child_tid: u32,
        child_comm: &'a str,
    },
    /// `sched:sched_process_exec`.
    Exec { tid: u32, filename: &'a str },
    /// `sched:sched_process_exit`.
    Exit { tid: u32 },
    /// `irq:irq_handler_entry`.
    IrqEntry { irq: u32, name: &'a str },
    /// `irq:irq_handler_exit`.
    IrqExit { irq: u32, handled: bool },
    /// `irq:softirq_entry`.
    SoftirqEntry { vec: SoftirqVec },
    /// `irq:softirq_exit`.
    SoftirqExit { vec: SoftirqVec },
    /// `block:block_rq_issue`.
    BlockIssue {
        dev: DevId,
        sector: u64,
        bytes: u32,
        op: BlockOp,
    },
    /// `block:block_rq_complete`.
    BlockComplete {
        dev: DevId,
        sector: u64,
        bytes: u32,
        op: BlockOp,
        error: i32,
    },
    /// `net:net_dev_xmit`.
    NetXmit { dev: &'a str, bytes: u32 },
    /// `net:netif_receive_skb`.
    NetRecv { dev: &'a str, bytes: u32 },
    /// `raw_syscalls:sys_enter` or `syscalls:sys_enter_<name>`; `nr` is `None` for a
    /// name missing from the x86-64 table.
    SysEnter { nr: Option<u32>, args: [u64; 3] },
    /// `raw_syscalls:sys_exit` or `syscalls:sys_exit_<name>`.
    SysExit { nr: Option<u32>, ret: i64 },
}

/// Result of parsing one sample's tracepoint text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Parsed<'a> {
    /// A mapped event.
    Mapped(Tp<'a>),
    /// An event causeway does not map (counted by name by the caller).
    Ignored,
    /// A mapped event whose text did not parse.
    Malformed,
}

/// Parse `trace` as the text of `event`. Syscall arguments are read only if `keep_args`.
pub(crate) fn parse<'a>(event: &str, trace: &'a str, keep_args: bool) -> Parsed<'a> {
    let tp = match event {
        "sched:sched_switch" => switch(trace),
        "sched:sched_waking" => {
            wake(trace).map(|(wakee, target_cpu)| Tp::Waking { wakee, target_cpu })
        }
        "sched:sched_wakeup" => {
            wake(trace).map(|(wakee, target_cpu)| Tp::Wakeup { wakee, target_cpu })
        }
        "sched:sched_wakeup_new" => {
            wake(trace).map(|(wakee, target_cpu)| Tp::WakeupNew { wakee, target_cpu })
        }
        "sched:sched_process_fork" => fork(trace),
        "sched:sched_process_exec" => exec(trace),
        "sched:sched_process_exit" => num(trace, "pid=").map(|tid| Tp::Exit { tid }),
        "irq:irq_handler_entry" => irq_entry(trace),
        "irq:irq_handler_exit" => irq_exit(trace),
        "irq:softirq_entry" => softirq_vec(trace).map(|vec| Tp::SoftirqEntry { vec }),
        "irq:softirq_exit" => softirq_vec(trace).map(|vec| Tp::SoftirqExit { vec }),
        "block:block_rq_issue" => block(trace, true),
        "block:block_rq_complete" => block(trace, false),
        "net:net_dev_xmit" => net(trace).map(|(dev, bytes)| Tp::NetXmit { dev, bytes }),
        "net:netif_receive_skb" => net(trace).map(|(dev, bytes)| Tp::NetRecv { dev, bytes }),
        "raw_syscalls:sys_enter" => raw_sys_enter(trace, keep_args),
        "raw_syscalls:sys_exit" => raw_sys_exit(trace),
        _ => match event.strip_prefix("syscalls:") {
            Some(name) => {
                if let Some(call) = name.strip_prefix("sys_enter_") {
                    sys_enter_named(call, trace, keep_args)
                } else if let Some(call) = name.strip_prefix("sys_exit_") {
                    sys_exit_named(call, trace)
                } else {
                    return Parsed::Ignored;
                }
            }
            None => return Parsed::Ignored,
        },
    };
    match tp {
        Some(tp) => Parsed::Mapped(tp),
        None => Parsed::Malformed,
    }
}

/// The value of `key` (which ends in `=`), where `key` starts the text or follows a space.
/// The value ends at the next space. The last occurrence wins, so a thread name that
/// contains ` pid=` does not hide the real field.
fn field<'a>(t: &'a str, key: &str) -> Option<&'a str> {
    let mut found = None;
    for (i, _) in t.match_indices(key) {
        if i == 0 || t.as_bytes().get(i - 1) == Some(&b' ') {
            found = Some(i);
        }
    }
    let rest = t.get(found? + key.len()..)?;
    Some(rest.split(' ').next().unwrap_or(""))
}

fn num(t: &str, key: &str) -> Option<u32> {
    field(t, key)?.parse().ok()
}

/// `prev_comm=a prev_pid=1 prev_prio=120 prev_state=R+ ==> next_comm=b next_pid=2 ...`
fn switch(t: &str) -> Option<Tp<'_>> {
    let (prev, next) = t.split_once(" ==> ")?;
    let state = field(prev, "prev_state=")?;
    Some(Tp::Switch {
        prev_tid: num(prev, "prev_pid=")?,
        prev_state: parse_state(state),
        next_tid: num(next, "next_pid=")?,
    })
}

/// Perf's state letters: `R`, `R+`, `S`, `D`, `D|K`, `I`, `X`, `Z`, `T`, `t`, `P`, ...
/// Combined forms use their first known letter.
fn parse_state(s: &str) -> Option<TaskState> {
    TaskState::from_letter(s).or_else(|| s.split('|').find_map(TaskState::from_letter))
}

/// `comm=a pid=5 prio=120 [success=1] target_cpu=001`
fn wake(t: &str) -> Option<(u32, u32)> {
    Some((num(t, "pid=")?, num(t, "target_cpu=")?))
}

/// `comm=bash pid=1969 child_comm=bash child_pid=5796`
fn fork(t: &str) -> Option<Tp<'_>> {
    let (parent, child) = t.split_once(" child_comm=")?;
    let child_pid_at = child.rfind(" child_pid=")?;
    Some(Tp::Fork {
        parent_tid: num(parent, "pid=")?,
        child_tid: child.get(child_pid_at + 11..)?.trim().parse().ok()?,
        child_comm: child.get(..child_pid_at)?,
    })
}

/// `filename=/usr/bin/mkdir pid=5796 old_pid=5796`
fn exec(t: &str) -> Option<Tp<'_>> {
    let rest = t.strip_prefix("filename=")?;
    let pid_at = rest.rfind(" pid=")?;
    Some(Tp::Exec {
        filename: rest.get(..pid_at)?,
        tid: num(rest.get(pid_at..)?, "pid=")?,
    })
}

/// `irq=36 name=virtio1-req.0`
fn irq_entry(t: &str) -> Option<Tp<'_>> {
    let name_at = t.find(" name=")?;
    Some(Tp::IrqEntry {
        irq: num(t.get(..name_at)?, "irq=")?,
        name: t.get(name_at + 6..)?.trim(),
    })
}

/// `irq=36 ret=handled` / `ret=unhandled`
fn irq_exit(t: &str) -> Option<Tp<'_>> {
    Some(Tp::IrqExit {
        irq: num(t, "irq=")?,
        handled: field(t, "ret=")? == "handled",
    })
}

/// `vec=4 [action=BLOCK]`
fn softirq_vec(t: &str) -> Option<SoftirqVec> {
    let v: u8 = field(t, "vec=")?.parse().ok()?;
    Some(SoftirqVec(v))
}

/// Issue: `254,0 WSM 4096 () 107741200 + 8 [0x2,0,4] [comm]`;
/// complete: `254,0 WS () 0 + 0 [0x2,0,4] [error]`. The command in parentheses may
/// contain spaces; the ioprio token exists since Linux 6.4.
fn block(t: &str, issue: bool) -> Option<Tp<'_>> {
    let open = t.find('(')?;
    let close = open + t.get(open..)?.find(')')?;
    let mut pre = t.get(..open)?.split_whitespace();
    let (major, minor) = pre.next()?.split_once(',')?;
    let dev = DevId::from_parts(major.parse().ok()?, minor.parse().ok()?);
    let op = BlockOp::from_rwbs(pre.next()?);
    let explicit_bytes: Option<u32> = match pre.next() {
        Some(b) => Some(b.parse().ok()?),
        None => None,
    };
    let mut post = t.get(close + 1..)?.split_whitespace();
    let sector: u64 = post.next()?.parse().ok()?;
    if post.next()? != "+" {
        return None;
    }
    let nr_sector: u32 = post.next()?.parse().ok()?;
    let bytes = explicit_bytes.unwrap_or_else(|| nr_sector.saturating_mul(512));
    if issue {
        return Some(Tp::BlockIssue {
            dev,
            sector,
            bytes,
            op,
        });
    }
    let last = post.last()?;
    let error: i32 = last.strip_prefix('[')?.strip_suffix(']')?.parse().ok()?;
    Some(Tp::BlockComplete {
        dev,
        sector,
        bytes,
        op,
        error,
    })
}

/// `dev=eth0 skbaddr=0x... len=54 [rc=0]`
fn net(t: &str) -> Option<(&str, u32)> {
    Some((field(t, "dev=")?, num(t, "len=")?))
}

/// `NR 12 (0, 7ffda89df52c, 0, 37f, 0, 0)`
fn raw_sys_enter(t: &str, keep_args: bool) -> Option<Tp<'_>> {
    let rest = t.strip_prefix("NR ")?;
    let (nr, args) = rest.split_once(' ').unwrap_or((rest, ""));
    let nr = nr.parse::<i64>().ok()? as u32;
    let mut out = [0u64; 3];
    if keep_args {
        let inner = args.trim().trim_start_matches('(').trim_end_matches(')');
        for (slot, a) in out.iter_mut().zip(inner.split(", ")) {
            *slot = u64::from_str_radix(a.trim(), 16).unwrap_or(0);
        }
    }
    Some(Tp::SysEnter {
        nr: Some(nr),
        args: out,
    })
}

/// `NR 9 = 140626959888384`
fn raw_sys_exit(t: &str) -> Option<Tp<'_>> {
    let rest = t.strip_prefix("NR ")?;
    let (nr, ret) = rest.split_once(" = ")?;
    Some(Tp::SysExit {
        nr: Some(nr.parse::<i64>().ok()? as u32),
        ret: ret.trim().parse().ok()?,
    })
}

/// `fd: 0x00000001, buf: 0x7ffd..., count: 0x00000040`
fn sys_enter_named<'a>(call: &str, t: &'a str, keep_args: bool) -> Option<Tp<'a>> {
    let mut out = [0u64; 3];
    if keep_args {
        for (slot, a) in out.iter_mut().zip(t.split(", ")) {
            let v = a.rsplit(": ").next().unwrap_or("");
            *slot = crate::script_parse::parse_hex(v).unwrap_or(0);
        }
    }
    Some(Tp::SysEnter {
        nr: syscall_nr(call),
        args: out,
    })
}

/// `0x40` (the return value as an unsigned hex number).
fn sys_exit_named<'a>(call: &str, t: &'a str) -> Option<Tp<'a>> {
    let v = crate::script_parse::parse_hex(t)?;
    Some(Tp::SysExit {
        nr: syscall_nr(call),
        ret: v as i64,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use causeway_format::BlockOpKind;

    fn mapped(event: &str, trace: &'static str) -> Tp<'static> {
        match parse(event, trace, true) {
            Parsed::Mapped(tp) => tp,
            other => panic!("{event} {trace}: {other:?}"),
        }
    }

    #[test]
    fn sched_switch_states() {
        let t = "prev_comm=kworker/u8:1 prev_pid=32 prev_prio=120 prev_state=R+ ==> next_comm=consumer next_pid=5798 next_prio=120";
        assert_eq!(
            mapped("sched:sched_switch", t),
            Tp::Switch {
                prev_tid: 32,
                prev_state: Some(TaskState::PREEMPTED),
                next_tid: 5798
            }
        );
        let t = "prev_comm=a b prev_pid=7 prev_prio=120 prev_state=D|K ==> next_comm=x ==> y next_pid=0 next_prio=120";
        assert_eq!(
            mapped("sched:sched_switch", t),
            Tp::Switch {
                prev_tid: 7,
                prev_state: Some(TaskState::UNINTERRUPTIBLE),
                next_tid: 0
            }
        );
        let t = "prev_comm=a prev_pid=7 prev_prio=120 prev_state=N ==> next_comm=b next_pid=1 next_prio=120";
        assert!(matches!(
            mapped("sched:sched_switch", t),
            Tp::Switch {
                prev_state: None,
                ..
            }
        ));
        assert_eq!(
            parse("sched:sched_switch", "prev_pid=1", false),
            Parsed::Malformed
        );
    }

    #[test]
    fn wakeups_fork_exec_exit() {
        assert_eq!(
            mapped(
                "sched:sched_waking",
                "comm=my pid=3 prio=120 target_cpu=001"
            ),
            Tp::Waking {
                wakee: 3,
                target_cpu: 1
            }
        );
        assert_eq!(
            mapped(
                "sched:sched_wakeup",
                "comm=x pid=4 prio=120 success=1 target_cpu=000"
            ),
            Tp::Wakeup {
                wakee: 4,
                target_cpu: 0
            }
        );
        assert_eq!(
            mapped(
                "sched:sched_process_fork",
                "comm=bash pid=1969 child_comm=my child child_pid=5796"
            ),
            Tp::Fork {
                parent_tid: 1969,
                child_tid: 5796,
                child_comm: "my child"
            }
        );
        assert_eq!(
            mapped(
                "sched:sched_process_exec",
                "filename=/a b/c pid=5 old_pid=5"
            ),
            Tp::Exec {
                tid: 5,
                filename: "/a b/c"
            }
        );
        assert_eq!(
            mapped(
                "sched:sched_process_exit",
                "comm=bash pid=5802 prio=120 group_dead=true"
            ),
            Tp::Exit { tid: 5802 }
        );
    }

    #[test]
    fn irqs() {
        assert_eq!(
            mapped("irq:irq_handler_entry", "irq=36 name=virtio1-req.0"),
            Tp::IrqEntry {
                irq: 36,
                name: "virtio1-req.0"
            }
        );
        assert_eq!(
            mapped("irq:irq_handler_exit", "irq=36 ret=handled"),
            Tp::IrqExit {
                irq: 36,
                handled: true
            }
        );
        assert_eq!(
            mapped("irq:softirq_entry", "vec=4 [action=BLOCK]"),
            Tp::SoftirqEntry {
                vec: SoftirqVec::BLOCK
            }
        );
        assert_eq!(
            parse("irq:softirq_raise", "vec=4 [action=BLOCK]", false),
            Parsed::Ignored
        );
        assert_eq!(
            parse("irq:softirq_exit", "vec=400", false),
            Parsed::Malformed
        );
    }

    #[test]
    fn block_requests() {
        let Tp::BlockIssue {
            dev,
            sector,
            bytes,
            op,
        } = mapped(
            "block:block_rq_issue",
            "254,0 WSM 4096 () 107741200 + 8 0x2,0,4 [consumer]",
        )
        else {
            panic!()
        };
        assert_eq!(dev, DevId::from_parts(254, 0));
        assert_eq!((sector, bytes), (107741200, 4096));
        assert_eq!(op.kind, BlockOpKind::Write);
        assert!(op.sync && op.meta);
        // Older kernels: no ioprio; flush with u64::MAX sector.
        assert_eq!(
            mapped(
                "block:block_rq_complete",
                "254,0 FF () 18446744073709551615 + 0 [0]"
            ),
            Tp::BlockComplete {
                dev: DevId::from_parts(254, 0),
                sector: u64::MAX,
                bytes: 0,
                op: BlockOp::from_rwbs("FF"),
                error: 0
            }
        );
        assert_eq!(
            mapped(
                "block:block_rq_complete",
                "8,16 R (12 34) 100 + 16 0x2,0,4 [-5]"
            ),
            Tp::BlockComplete {
                dev: DevId::from_parts(8, 16),
                sector: 100,
                bytes: 8192,
                op: BlockOp::from_rwbs("R"),
                error: -5
            }
        );
    }

    #[test]
    fn net_and_syscalls() {
        assert_eq!(
            mapped(
                "net:net_dev_xmit",
                "dev=eth0 skbaddr=0000000012345678 len=54 rc=0"
            ),
            Tp::NetXmit {
                dev: "eth0",
                bytes: 54
            }
        );
        assert_eq!(
            mapped("net:netif_receive_skb", "dev=lo skbaddr=00000000 len=84"),
            Tp::NetRecv {
                dev: "lo",
                bytes: 84
            }
        );
        assert_eq!(
            mapped(
                "raw_syscalls:sys_enter",
                "NR 257 (ffffff9c, 7fe6, 80000, 0, 0, 5651)"
            ),
            Tp::SysEnter {
                nr: Some(257),
                args: [0xffffff9c, 0x7fe6, 0x80000]
            }
        );
        assert_eq!(
            parse("raw_syscalls:sys_enter", "NR 1 (3, 4, 5, 6, 7, 8)", false),
            Parsed::Mapped(Tp::SysEnter {
                nr: Some(1),
                args: [0; 3]
            })
        );
        assert_eq!(
            mapped("raw_syscalls:sys_exit", "NR 21 = -2"),
            Tp::SysExit {
                nr: Some(21),
                ret: -2
            }
        );
        assert_eq!(
            mapped("syscalls:sys_enter_fsync", "fd: 0x00000001"),
            Tp::SysEnter {
                nr: Some(74),
                args: [1, 0, 0]
            }
        );
        assert_eq!(
            mapped("syscalls:sys_exit_read", "0xfffffffffffffff5"),
            Tp::SysExit {
                nr: Some(0),
                ret: -11
            }
        );
        assert_eq!(
            mapped("syscalls:sys_exit_frobnicate", "0x0"),
            Tp::SysExit { nr: None, ret: 0 }
        );
    }

    #[test]
    fn no_panic_on_truncated_text() {
        let events = [
            "sched:sched_switch",
            "sched:sched_waking",
            "sched:sched_process_fork",
            "sched:sched_process_exec",
            "irq:irq_handler_entry",
            "irq:irq_handler_exit",
            "irq:softirq_entry",
            "block:block_rq_issue",
            "block:block_rq_complete",
            "net:net_dev_xmit",
            "raw_syscalls:sys_enter",
            "raw_syscalls:sys_exit",
            "syscalls:sys_enter_read",
            "syscalls:sys_exit_read",
        ];
        let texts = [
            "254,0 WSM 4096 () 107741200 + 8 0x2,0,4 [consumer]",
            "prev_comm=kworker/u8:1 prev_pid=32 prev_prio=120 prev_state=R+ ==> next_comm=c next_pid=5",
            "comm=bash pid=1969 child_comm=bash child_pid=5796",
            "filename=/usr/bin/mkdir pid=5796 old_pid=5796",
            "NR 257 (ffffff9c, 7fe6, 80000, 0, 0, 5651)",
        ];
        for e in events {
            for t in texts {
                for cut in 0..=t.len() {
                    let _ = parse(e, t.get(..cut).unwrap_or(""), true);
                }
            }
        }
    }
}
