//! Convert `perf script` output of `sched:sched_switch` and `sched:sched_waking` into a
//! causeway trace, to compare its size with perf's `perf.data` (see `bench/RESULTS.md`).
//!
//! ```text
//! perf record -e sched:sched_switch -e sched:sched_waking -a -o sched.perf.data -- \
//!     perf bench sched pipe -l 200000
//! perf script -i sched.perf.data --ns -F comm,tid,cpu,time,event,trace > sched.txt
//! cargo run --release -p causeway-format --example perf_sched -- sched.txt sched.cwt
//! ```
//!
//! This is a small stand-in for the real importer (`causeway-import`): it understands
//! only these two tracepoints, in perf's default text form.

use causeway_format::{
    ClockSource, Cpu, Event, EventKind, Header, HostInfo, StringId, TaskState, Tgid, ThreadInfo,
    Tid, Timestamp, TraceWriter, Waker,
};
use std::collections::HashMap;
use std::io::{BufRead, BufReader};

/// `key=value` from a tracepoint's text.
fn field<'a>(trace: &'a str, key: &str) -> Option<&'a str> {
    trace
        .split_whitespace()
        .find_map(|kv| kv.strip_prefix(key).and_then(|r| r.strip_prefix('=')))
}

/// One parsed line: comm, tid, cpu, time in ns, event name, the rest.
fn parse_line(line: &str) -> Option<(&str, u32, u32, u64, &str, &str)> {
    // "<comm> <tid> [<cpu>] <sec>.<nsec>: sched:<event>: <fields>"; comm may have spaces.
    let open = line.find(" [")?;
    let close = open + line[open..].find("] ")?;
    let (head, rest) = (&line[..open], &line[close + 2..]);
    let (comm, tid) = head.trim_start().rsplit_once(' ')?;
    let cpu: u32 = line[open + 2..close].trim().parse().ok()?;
    let (time, rest) = rest.split_once(": ")?;
    let (sec, frac) = time.trim().split_once('.')?;
    let ns = sec.parse::<u64>().ok()? * 1_000_000_000
        + frac.parse::<u64>().ok()? * 10u64.pow(9 - frac.len() as u32);
    let (event, trace) = rest.split_once(": ").unwrap_or((rest, ""));
    let event = event.trim_end_matches(':');
    Some((comm.trim(), tid.trim().parse().ok()?, cpu, ns, event, trace))
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let (Some(input), Some(output)) = (args.get(1), args.get(2)) else {
        return Err("usage: perf_sched <perf-script.txt> <out.cwt>".into());
    };
    let header = Header {
        clock: ClockSource::Perf,
        clock_to_realtime_ns: 0,
        clock_to_monotonic_ns: 0,
        host: HostInfo::default(),
        cpu_count: std::thread::available_parallelism().map_or(1, |n| n.get() as u32),
        command_line: args.clone(),
        writer: "causeway-format perf_sched example".into(),
        scope: causeway_format::Scope::System,
        target_pids: Vec::new(),
        target_comm: None,
        file_id: 0,
        salvaged: None,
        waker_stack_sampling: None,
    };
    let mut w = TraceWriter::new(std::fs::File::create(output)?, &header)?;
    let mut known: HashMap<u32, StringId> = HashMap::new();
    let (mut switches, mut wakeups, mut skipped) = (0u64, 0u64, 0u64);
    let mut name = |w: &mut TraceWriter<std::fs::File>, tid: u32, comm: &str| {
        if let std::collections::hash_map::Entry::Vacant(slot) = known.entry(tid) {
            let comm = *slot.insert(w.intern(comm));
            w.add_thread(ThreadInfo {
                tid: Tid(tid),
                tgid: Tgid(0),
                since: Timestamp(0),
                comm,
            });
        }
    };
    for line in BufReader::new(std::fs::File::open(input)?).lines() {
        let line = line?;
        let Some((comm, tid, cpu, ns, event, trace)) = parse_line(&line) else {
            skipped += 1;
            continue;
        };
        let kind = match event {
            "sched:sched_switch" => {
                let (Some(prev), Some(state), Some(next), Some(next_comm)) = (
                    field(trace, "prev_pid"),
                    field(trace, "prev_state"),
                    field(trace, "next_pid"),
                    field(trace, "next_comm"),
                ) else {
                    skipped += 1;
                    continue;
                };
                let next: u32 = next.parse()?;
                name(&mut w, next, next_comm);
                switches += 1;
                EventKind::SchedSwitch {
                    prev_tid: Tid(prev.parse()?),
                    prev_state: TaskState::from_letter(state).unwrap_or(TaskState::RUNNABLE),
                    next_tid: Tid(next),
                }
            }
            "sched:sched_waking" => {
                let (Some(pid), Some(target), Some(wcomm)) = (
                    field(trace, "pid"),
                    field(trace, "target_cpu"),
                    field(trace, "comm"),
                ) else {
                    skipped += 1;
                    continue;
                };
                let wakee: u32 = pid.parse()?;
                name(&mut w, wakee, wcomm);
                wakeups += 1;
                EventKind::Wakeup {
                    wakee: Tid(wakee),
                    target_cpu: Cpu(target.parse()?),
                    waker: Waker::Thread { tid: Tid(tid) },
                }
            }
            _ => {
                skipped += 1;
                continue;
            }
        };
        name(&mut w, tid, comm);
        w.push(&Event {
            ts: Timestamp(ns),
            cpu: Cpu(cpu),
            kind,
        })?;
    }
    let events = w.stats().events;
    w.finish()?;
    let size = std::fs::metadata(output)?.len();
    println!(
        "{events} events ({switches} sched_switch, {wakeups} sched_waking, {skipped} lines \
         skipped): {size} bytes, {:.2} bytes/event",
        size as f64 / events.max(1) as f64
    );
    Ok(())
}
