//! Raw tracepoint records of perf.data to the typed events the converter maps, by
//! field name through their format ([`crate::tracefmt`]): the same [`Tp`] values the
//! text path reads from `perf script`'s printing of the same fields.

use crate::tracefmt::RawRecord;
use crate::tracepoint::{Parsed, Tp};
use causeway_format::syscalls::syscall_nr;
use causeway_format::{BlockOp, DevId, SoftirqVec, TaskState};

/// The kernel's `dev_t` inside the kernel: major in the bits above 20.
fn dev(v: u64) -> DevId {
    DevId::from_parts((v >> 20) as u32, (v & 0xf_ffff) as u32)
}

fn pid(r: &RawRecord<'_>, name: &str) -> Option<u32> {
    r.int(name).and_then(|v| u32::try_from(v).ok())
}

fn block<'a>(r: &RawRecord<'a>, issue: bool) -> Option<Tp<'a>> {
    let dev = dev(r.uint("dev")?);
    let sector = r.uint("sector")?;
    let nr_sector = r.uint("nr_sector")? as u32;
    let bytes = r
        .uint("bytes")
        .map(|b| b as u32)
        .unwrap_or_else(|| nr_sector.saturating_mul(512));
    let op = BlockOp::from_rwbs(r.string("rwbs")?);
    Some(if issue {
        Tp::BlockIssue {
            dev,
            sector,
            bytes,
            op,
        }
    } else {
        Tp::BlockComplete {
            dev,
            sector,
            bytes,
            op,
            error: r.int("error").unwrap_or(0) as i32,
        }
    })
}

/// Up to three argument fields of a `syscalls:sys_enter_<name>` record: the fields
/// after `__syscall_nr`, in order.
fn named_args(r: &RawRecord<'_>) -> [u64; 3] {
    let mut args = [0u64; 3];
    let names: Vec<&str> = r
        .format
        .fields
        .iter()
        .map(|f| f.name.as_str())
        .skip_while(|n| *n != "__syscall_nr")
        .skip(1)
        .take(3)
        .collect();
    for (a, n) in args.iter_mut().zip(names) {
        *a = r.uint(n).unwrap_or(0);
    }
    args
}

fn syscall<'a>(event: &str, r: &RawRecord<'a>, keep_args: bool) -> Option<Parsed<'a>> {
    let name = event.strip_prefix("syscalls:")?;
    let (enter, call) = match name.strip_prefix("sys_enter_") {
        Some(c) => (true, c),
        None => (false, name.strip_prefix("sys_exit_")?),
    };
    let nr = r
        .int("__syscall_nr")
        .and_then(|n| u32::try_from(n).ok())
        .or_else(|| syscall_nr(call));
    let tp = if enter {
        Tp::SysEnter {
            nr,
            args: if keep_args { named_args(r) } else { [0; 3] },
        }
    } else {
        Tp::SysExit {
            nr,
            ret: r.int("ret")?,
        }
    };
    Some(Parsed::Mapped(tp))
}

/// Decode a record of `event` (`system:name`).
pub(crate) fn decode<'a>(event: &str, r: &RawRecord<'a>, keep_args: bool) -> Parsed<'a> {
    let wake = |r: &RawRecord<'a>| Some((pid(r, "pid")?, r.int("target_cpu")? as u32));
    let tp = match event {
        "sched:sched_switch" => (|| {
            Some(Tp::Switch {
                prev_tid: pid(r, "prev_pid")?,
                // The tracepoint stores the reported state's bit, as TaskState does.
                prev_state: u16::try_from(r.uint("prev_state")?).ok().map(TaskState),
                next_tid: pid(r, "next_pid")?,
            })
        })(),
        "sched:sched_waking" => wake(r).map(|(wakee, target_cpu)| Tp::Waking { wakee, target_cpu }),
        "sched:sched_wakeup" => wake(r).map(|(wakee, target_cpu)| Tp::Wakeup { wakee, target_cpu }),
        "sched:sched_wakeup_new" => {
            wake(r).map(|(wakee, target_cpu)| Tp::WakeupNew { wakee, target_cpu })
        }
        "sched:sched_process_fork" => (|| {
            Some(Tp::Fork {
                parent_tid: pid(r, "parent_pid")?,
                child_tid: pid(r, "child_pid")?,
                child_comm: r.string("child_comm").unwrap_or(""),
            })
        })(),
        "sched:sched_process_exec" => (|| {
            Some(Tp::Exec {
                tid: pid(r, "pid")?,
                filename: r.string("filename").unwrap_or(""),
            })
        })(),
        "sched:sched_process_exit" => pid(r, "pid").map(|tid| Tp::Exit { tid }),
        "irq:irq_handler_entry" => (|| {
            Some(Tp::IrqEntry {
                irq: r.int("irq")? as u32,
                name: r.string("name").unwrap_or(""),
            })
        })(),
        "irq:irq_handler_exit" => (|| {
            Some(Tp::IrqExit {
                irq: r.int("irq")? as u32,
                handled: r.int("ret")? != 0,
            })
        })(),
        "irq:softirq_entry" | "irq:softirq_exit" => r.uint("vec").map(|v| {
            let vec = SoftirqVec(v as u8);
            if event.ends_with("entry") {
                Tp::SoftirqEntry { vec }
            } else {
                Tp::SoftirqExit { vec }
            }
        }),
        "block:block_rq_issue" => block(r, true),
        "block:block_rq_complete" => block(r, false),
        "net:net_dev_xmit" | "net:netif_receive_skb" => (|| {
            let dev = r.string("name")?;
            let bytes = r.uint("len")? as u32;
            Some(if event == "net:net_dev_xmit" {
                Tp::NetXmit { dev, bytes }
            } else {
                Tp::NetRecv { dev, bytes }
            })
        })(),
        "raw_syscalls:sys_enter" => (|| {
            let nr = u32::try_from(r.int("id")?).ok();
            let args = if keep_args {
                [0, 1, 2].map(|i| r.array_u64("args", i).unwrap_or(0))
            } else {
                [0; 3]
            };
            Some(Tp::SysEnter { nr, args })
        })(),
        "raw_syscalls:sys_exit" => (|| {
            Some(Tp::SysExit {
                nr: u32::try_from(r.int("id")?).ok(),
                ret: r.int("ret")?,
            })
        })(),
        _ => {
            return syscall(event, r, keep_args).unwrap_or(Parsed::Ignored);
        }
    };
    match tp {
        Some(tp) => Parsed::Mapped(tp),
        None => Parsed::Malformed,
    }
}
