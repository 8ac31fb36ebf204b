//! One-line text form of an event, in the spirit of `perf script`.

use super::names::Names;
use causeway_format::{Event, EventKind, Marker, StackId, Tables, Waker};
use std::fmt::Write;

/// Describe a waker context.
pub fn waker_text(names: &Names<'_>, w: &Waker, ev: &Event) -> String {
    match *w {
        Waker::Thread { tid } => names.label(tid, ev.ts),
        Waker::Irq { irq, name } => format!("irq {irq} ({})", names.tables().string(name)),
        Waker::Softirq { vec } => format!("softirq {}", vec.name()),
        Waker::Unknown => "unknown".to_string(),
    }
}

/// The fields of `ev` after its kind name.
pub fn details(names: &Names<'_>, ev: &Event) -> String {
    let t = names.tables();
    let l = |tid| names.label(tid, ev.ts);
    match ev.kind {
        EventKind::SchedSwitch {
            prev_tid,
            prev_state,
            next_tid,
        } => format!(
            "{} [{}] -> {}",
            l(prev_tid),
            prev_state.letter(),
            l(next_tid)
        ),
        EventKind::Wakeup {
            wakee,
            target_cpu,
            waker,
        }
        | EventKind::WakeupNew {
            wakee,
            target_cpu,
            waker,
        } => format!(
            "{} on cpu {} by {}",
            l(wakee),
            target_cpu,
            waker_text(names, &waker, ev)
        ),
        EventKind::Fork {
            parent_tid,
            parent_tgid,
            child_tid,
            child_tgid,
        } => {
            let what = if parent_tgid == child_tgid {
                "thread"
            } else {
                "process"
            };
            format!(
                "{} created {what} {child_tid} (pid {child_tgid})",
                l(parent_tid)
            )
        }
        EventKind::Exec {
            tid,
            comm,
            filename,
        } => format!("{} exec {} as {}", tid, t.string(filename), t.string(comm)),
        EventKind::Exit { tid } => l(tid),
        EventKind::IrqEntry { irq, name } => format!("irq {irq} ({})", t.string(name)),
        EventKind::IrqExit { irq, handled } => {
            format!(
                "irq {irq} {}",
                if handled { "handled" } else { "unhandled" }
            )
        }
        EventKind::SoftirqEntry { vec } | EventKind::SoftirqExit { vec } => vec.name().into(),
        EventKind::BlockIssue {
            tid,
            dev,
            sector,
            bytes,
            op,
        } => format!(
            "{},{} {:?} sector {sector} {bytes} bytes by {}",
            dev.major(),
            dev.minor(),
            op.kind,
            l(tid)
        ),
        EventKind::BlockComplete {
            dev,
            sector,
            bytes,
            op,
            error,
        } => format!(
            "{},{} {:?} sector {sector} {bytes} bytes error {error}",
            dev.major(),
            dev.minor(),
            op.kind
        ),
        EventKind::NetXmit { tid, dev, bytes } | EventKind::NetRecv { tid, dev, bytes } => {
            format!("{} {bytes} bytes ({})", t.string(dev), l(tid))
        }
        EventKind::SyscallEnter { tid, nr, args } => {
            format!(
                "{} nr {nr} args {:#x} {:#x} {:#x}",
                l(tid),
                args[0],
                args[1],
                args[2]
            )
        }
        EventKind::SyscallExit { tid, nr, ret } => format!("{} nr {nr} = {ret}", l(tid)),
        EventKind::Stack {
            tid,
            kind,
            user,
            kernel,
        } => format!(
            "{} {kind:?} user {} frames, kernel {} frames",
            l(tid),
            frame_count(t, user),
            frame_count(t, kernel)
        ),
        EventKind::Marker { tid, marker } => format!("{} {}", l(tid), marker_text(t, &marker)),
        EventKind::Lost { count } => format!("{count} events lost"),
        _ => sized_kind_text(names, ev),
    }
}

/// The fields of the kinds later format versions added, a function per group.
fn sized_kind_text(names: &Names<'_>, ev: &Event) -> String {
    match ev.kind {
        EventKind::SignalGenerate { .. }
        | EventKind::SignalDeliver { .. }
        | EventKind::TimerArm { .. }
        | EventKind::TimerExpire { .. } => signal_timer_text(names, ev),
        EventKind::SockSend { .. } | EventKind::SockReady { .. } => socket_text(names, ev),
        _ => goroutine_text(names, ev),
    }
}

/// The fields of a goroutine event.
fn goroutine_text(names: &Names<'_>, ev: &Event) -> String {
    let l = |tid| names.label(tid, ev.ts);
    let t = names.tables();
    match ev.kind {
        EventKind::GoRun {
            tid,
            goid,
            parent,
            start,
        } => {
            let func = start
                .and_then(|s| t.stack(s))
                .and_then(|s| s.frames.first())
                .and_then(|&f| t.frame(f))
                .map(|f| format!(" {}", t.string(f.symbol)))
                .unwrap_or_default();
            let created = if start.is_some() && parent != 0 {
                format!(" (created by goroutine {parent})")
            } else {
                String::new()
            };
            format!("{} runs goroutine {goid}{func}{created}", l(tid))
        }
        EventKind::GoPark { tid, goid, reason } => {
            format!("goroutine {goid} on {} parks: {}", l(tid), t.string(reason))
        }
        EventKind::GoNetWait {
            goid, flow, seq, ..
        } => {
            let on = t
                .flow(flow)
                .map_or_else(|| format!("flow {}", flow.0), |f| f.label());
            let next = seq.map_or(String::new(), |q| format!(", next byte {q}"));
            format!("goroutine {goid} waits for data on {on}{next}")
        }
        EventKind::GoReady { tid, goid, by } => {
            let who = if by == 0 {
                "the scheduler".to_string()
            } else {
                format!("goroutine {by}")
            };
            format!("goroutine {goid} readied by {who} on {}", l(tid))
        }
        _ => String::new(),
    }
}

/// The fields of a socket event.
fn socket_text(names: &Names<'_>, ev: &Event) -> String {
    let l = |tid| names.label(tid, ev.ts);
    let flow = |id: causeway_format::FlowId| {
        names
            .tables()
            .flow(id)
            .map_or_else(|| "<missing flow>".to_string(), |f| f.label())
    };
    let seq = |s: Option<u32>| s.map(|q| format!(" seq {q}")).unwrap_or_default();
    match ev.kind {
        EventKind::SockSend {
            tid,
            flow: f,
            bytes,
            seq: q,
        } => format!("{} sent {bytes} bytes on {}{}", l(tid), flow(f), seq(q)),
        EventKind::SockReady {
            wakee,
            host,
            flow: f,
            seq: q,
        } => {
            let on = if host.0 == 0 {
                "an idle CPU".to_string()
            } else {
                l(host)
            };
            format!(
                "data for {} on {}{} (arrived on {on})",
                l(wakee),
                flow(f),
                seq(q)
            )
        }
        _ => String::new(),
    }
}

/// The fields of a signal or timer event.
fn signal_timer_text(names: &Names<'_>, ev: &Event) -> String {
    let l = |tid| names.label(tid, ev.ts);
    match ev.kind {
        EventKind::SignalGenerate {
            sender,
            target,
            sig,
            group,
            result,
            ..
        } => {
            let from = if sender.0 == 0 {
                "kernel".to_string()
            } else {
                l(sender)
            };
            let scope = if group { "process of " } else { "" };
            format!(
                "{} from {from} to {scope}{} ({})",
                sig.name(),
                l(target),
                result.name()
            )
        }
        EventKind::SignalDeliver { tid, sig } => format!("{} took {}", l(tid), sig.name()),
        EventKind::TimerArm {
            tid,
            timer,
            expires,
        } => match expires {
            Some(e) => format!(
                "{} timer {timer:016x} expires in {} us",
                l(tid),
                e.0.saturating_sub(ev.ts.0) / 1_000
            ),
            None => format!("{} timer {timer:016x} (another clock)", l(tid)),
        },
        EventKind::TimerExpire { timer } => format!("timer {timer:016x}"),
        _ => String::new(),
    }
}

/// How many frames stack `id` has (0 when there is none or it is missing).
fn frame_count(t: &Tables, id: Option<StackId>) -> usize {
    id.and_then(|s| t.stack(s)).map_or(0, |s| s.frames.len())
}

/// What a marker says, after the thread that wrote it.
fn marker_text(t: &Tables, marker: &Marker) -> String {
    match *marker {
        Marker::SpinBegin { id } => format!("spin begin {id}"),
        Marker::SpinEnd { id } => format!("spin end {id}"),
        Marker::FalseWakeup => "false wake-up".into(),
        Marker::FlagRead { addr } => format!("flag read {addr:#x}"),
        Marker::FlagWrite { addr } => format!("flag write {addr:#x}"),
        Marker::DataFlag { addr, access, ip } => {
            format!("data flag {access} {addr:#x} at ip {ip:#x}")
        }
        Marker::MethodEnter { method } => format!("enter {}", t.string(method)),
        Marker::MethodExit { method } => format!("exit {}", t.string(method)),
        Marker::SpanBegin { name, id } => format!("span {} #{id} begin", t.string(name)),
        Marker::SpanEnd { name, id } => format!("span {} #{id} end", t.string(name)),
    }
}

/// Frames of a stack, one per line, indented.
pub fn stack_lines(names: &Names<'_>, id: StackId, out: &mut String) {
    let t = names.tables();
    match t.stack(id) {
        None => {
            let _ = writeln!(out, "\t<missing stack {id}>");
        }
        Some(s) => {
            for f in &s.frames {
                // frame_texts names the module itself when the symbol is unknown, and
                // puts functions inlined at the address first.
                let module = t
                    .frame(*f)
                    .filter(|fr| !t.string(fr.symbol).is_empty())
                    .map(|fr| t.string(fr.module))
                    .unwrap_or_default();
                for text in t.frame_texts(*f) {
                    if module.is_empty() {
                        let _ = writeln!(out, "\t{text}");
                    } else {
                        let _ = writeln!(out, "\t{text} ({module})");
                    }
                }
            }
            if s.truncated {
                let _ = writeln!(out, "\t... (stack cut short)");
            }
        }
    }
}
