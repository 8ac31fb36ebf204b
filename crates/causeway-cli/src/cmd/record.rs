//! `causeway record`: record programs with the eBPF recorder.

use crate::exit;
use crate::flags::RecordArgs;
use anyhow::{Context, Result};
use causeway_record::launch::Stopped;
use causeway_record::run::ReaderTime;
use causeway_record::sink::Dump;
use causeway_record::{Notice, Output, RecordConfig, Request, Summary, Target};
use serde::Serialize;
use std::io::IsTerminal;

/// One line on DWARF unwinding: how many stacks came out whole and why the others did
/// not (counter names `unwind_<outcome>` from the recorder).
fn unwind_line(counters: &std::collections::BTreeMap<String, u64>) -> Option<String> {
    let outcomes: Vec<(&str, u64)> = counters
        .iter()
        .filter_map(|(k, &v)| Some((k.strip_prefix("unwind_")?, v)))
        .collect();
    let total: u64 = outcomes.iter().map(|o| o.1).sum();
    if total == 0 {
        return None;
    }
    let complete = counters.get("unwind_complete").copied().unwrap_or(0);
    let others: Vec<String> = outcomes
        .iter()
        .filter(|o| o.0 != "complete")
        .map(|(k, v)| format!("{v} {}", k.replace('_', " ")))
        .collect();
    let copied = counters
        .get("user_stack_bytes_copied")
        .copied()
        .unwrap_or(0);
    let copies = counters
        .get("user_stack_copies")
        .copied()
        .unwrap_or(0)
        .max(1);
    let skipped = counters
        .get("user_stack_skipped_ring_full")
        .copied()
        .unwrap_or(0);
    Some(format!(
        "user stacks: {total} unwound (DWARF, {} bytes copied per stack), {complete} ({:.1}%) reach the thread's start{}{}",
        copied / copies,
        complete as f64 * 100.0 / total as f64,
        if others.is_empty() {
            String::new()
        } else {
            format!("; others: {}", others.join(", "))
        },
        if skipped == 0 {
            String::new()
        } else {
            format!(
                "; {skipped} not copied while the ring buffers were over 3/4 full (events kept)"
            )
        }
    ))
}

#[derive(Serialize)]
struct JsonSummary<'a> {
    output: Option<String>,
    dumps: Vec<JsonDump>,
    events: u64,
    lost: u64,
    lost_per_cpu: &'a [u64],
    stacks: usize,
    tracepoints: &'static str,
    /// How long the recording ran, ns.
    duration_ns: u64,
    command_exit_code: Option<i32>,
    /// `SIGTERM` or `SIGKILL` when the recording ended first and ended the command.
    command_stopped: Option<&'static str>,
    /// Processes recorded; 0 when nothing of what was asked for ran.
    target_processes: usize,
    /// Recorder counters: unwinding outcomes (`unwind_*`), stack copies and bytes,
    /// watchpoint hits (`watch_*`).
    counters: &'a std::collections::BTreeMap<String, u64>,
    /// The watched variable (`--watch`), once found in the process.
    watched: Option<JsonWatched>,
    /// Go programs recorded: whether their goroutines were followed.
    go_processes: Vec<JsonGo>,
}

/// A Go program of the recording.
#[derive(Serialize)]
struct JsonGo {
    pid: u32,
    goroutines_followed: bool,
    /// The Go version (followed) or why not (not followed).
    detail: String,
}

#[derive(Serialize)]
struct JsonWatched {
    addr: u64,
    len: u8,
}

#[derive(Serialize)]
struct JsonDump {
    path: String,
    events: u64,
    first_ts_ns: u64,
    last_ts_ns: u64,
    /// Processes running libcauseway asked to dump their calls at the same moment.
    inproc_asked: Vec<u32>,
}

fn dump_json(d: &Dump) -> JsonDump {
    JsonDump {
        path: d.path.display().to_string(),
        events: d.events,
        first_ts_ns: d.first_ts,
        last_ts_ns: d.last_ts,
        inproc_asked: d.inproc_asked.clone(),
    }
}

/// The line telling where the file an output replaced was kept (the recorder renames
/// it to `PATH.old` rather than overwrite it).
fn kept_line(old: &std::path::Path) -> String {
    format!("causeway: kept the previous trace as {}", old.display())
}

/// The line telling where the trace is written until the recording ends.
fn writing_line(temp: &std::path::Path) -> String {
    format!(
        "causeway: writing {} until the recording ends (if it is killed, `causeway check {}` salvages it)",
        temp.display(),
        temp.display()
    )
}

/// Record `cmd` (launched and followed) into `out` with the default settings; used by
/// `causeway demo` and `causeway bottleneck -- CMD`. With `json` the command's standard
/// output goes to stderr: the caller's stdout is for its JSON.
pub fn record_command(cmd: &[String], out: &std::path::Path, json: bool) -> Result<Summary> {
    record_command_config(cmd, out, RecordConfig::new(Target::Pids(Vec::new())), json)
}

/// [`record_command`] with the syscall group on (the default, blocking syscalls): what
/// `causeway latency -- CMD` profiles.
pub fn record_command_with_syscalls(
    cmd: &[String],
    out: &std::path::Path,
    json: bool,
) -> Result<Summary> {
    let mut config = RecordConfig::new(Target::Pids(Vec::new()));
    config.events.syscall = true;
    record_command_config(cmd, out, config, json)
}

fn record_command_config(
    cmd: &[String],
    out: &std::path::Path,
    config: RecordConfig,
    json: bool,
) -> Result<Summary> {
    let req = Request {
        config,
        output: Output::File(out.to_path_buf()),
        duration: None,
        start_at: None,
        command: Some(cmd.to_vec()),
        command_line: std::env::args().collect(),
        keep_command: false,
        command_stdout_to_stderr: json,
        watch: None,
    };
    let mut notify = |n: Notice| {
        if let Notice::KeptPrevious(old) = n {
            eprintln!("{}", kept_line(&old));
        }
    };
    let s = causeway_record::record(req, &mut notify)
        .with_context(|| format!("recording `{}`", cmd.join(" ")))?;
    let lost: u64 = s.lost_per_cpu.iter().sum();
    eprintln!(
        "causeway: recorded {} events ({} lost) in {:.1} s into {}",
        s.events,
        lost,
        s.elapsed.as_secs_f64(),
        out.display()
    );
    Ok(s)
}

/// What to change when the reader falls behind, with why when the machine was the
/// limit: a reader that waits for a CPU longer than it runs cannot catch up by
/// working faster, only bigger buffers hold the backlog (it is read after the end).
fn behind_advice(reader: Option<ReaderTime>) -> String {
    match reader {
        Some(r) if r.waited > r.ran => format!(
            "The reader waited {:.1} s for a CPU and ran {:.1} s: the CPUs were saturated; a larger --buffer-size (e.g. 64M) holds the backlog, or record fewer --events.",
            r.waited.as_secs_f64(),
            r.ran.as_secs_f64()
        ),
        _ => "Try a larger --buffer-size or fewer --events.".to_string(),
    }
}

/// Warnings about a finished recording, said on stderr even with `--json`: nothing a
/// user recorded may be lost or empty without a word.
fn warnings(s: &Summary, target: &Target) -> Vec<String> {
    let mut w = Vec::new();
    let lost: u64 = s.lost_per_cpu.iter().sum();
    if lost > 0 {
        w.push(format!(
            "{lost} records lost (ring buffers full); they are counted in the trace and reports say where. {}",
            behind_advice(s.reader)
        ));
    }
    if let Some(&n) = s.counters.get(causeway_record::run::HANDLER_MISSES) {
        w.push(format!(
            "the kernel skipped {n} runs of causeway's probes (the same probe was already running on that CPU, e.g. a wake-up from an interrupt inside a wake-up); the events they would have recorded are missing, counted in the trace as `{}`",
            causeway_record::run::HANDLER_MISSES
        ));
    }
    if let Some(&n) = s.counters.get(causeway_record::run::UNTRACKED_TIMERS) {
        w.push(format!(
            "{n} timer arms took the place of another timer not yet expired in the kernel-side table of armed timers; unless those timers were cancelled, their expiries are missing (counted in the trace as `{}`)",
            causeway_record::run::UNTRACKED_TIMERS
        ));
    }
    if s.target_processes == 0 {
        let what = match target {
            Target::Comm(c) => format!("no process named `{c}` ran during the recording"),
            _ => "no process to record was seen".to_string(),
        };
        w.push(format!(
            "{what}: the trace holds no thread of a recorded process, so analyses of it have nothing to say"
        ));
    }
    w
}

/// What became of the launched command, for the text summary.
fn command_line_end(s: &Summary) -> Option<String> {
    let stopped = s.stopped_command.map(|how| match how {
        Stopped::Term => "the recording ended first: the command was ended with SIGTERM",
        Stopped::Kill => {
            "the recording ended first: the command ignored SIGTERM and was ended with SIGKILL"
        }
    });
    match (
        stopped,
        s.child_status.map(causeway_record::launch::exit_code),
    ) {
        (Some(l), _) => Some(l.to_string()),
        (None, Some(c)) if c != 0 => Some(format!("the recorded command exited with status {c}")),
        _ => None,
    }
}

fn json_summary(s: &Summary) -> Result<String> {
    let j = JsonSummary {
        output: s.path.as_ref().map(|p| p.display().to_string()),
        dumps: s.dumps.iter().map(dump_json).collect(),
        events: s.events,
        lost: s.lost_per_cpu.iter().sum(),
        lost_per_cpu: &s.lost_per_cpu,
        stacks: s.stacks,
        tracepoints: match s.family {
            causeway_record::Family::Btf => "btf",
            causeway_record::Family::Raw => "raw",
        },
        duration_ns: u64::try_from(s.elapsed.as_nanos()).unwrap_or(u64::MAX),
        command_exit_code: s.child_status.map(causeway_record::launch::exit_code),
        command_stopped: s.stopped_command.map(|h| match h {
            Stopped::Term => "SIGTERM",
            Stopped::Kill => "SIGKILL",
        }),
        target_processes: s.target_processes,
        counters: &s.counters,
        watched: s.watched.map(|(addr, len)| JsonWatched { addr, len }),
        go_processes: s
            .go
            .iter()
            .map(|(pid, o)| {
                use causeway_record::gotrack::GoOutcome;
                let (goroutines_followed, detail) = match o {
                    GoOutcome::Followed(v) => (true, v.clone()),
                    GoOutcome::Unfollowed(w) => (false, w.clone()),
                };
                JsonGo {
                    pid: *pid,
                    goroutines_followed,
                    detail,
                }
            })
            .collect(),
    };
    Ok(serde_json::to_string_pretty(&j)?)
}

fn print_text_summary(s: &Summary) {
    let size = s
        .path
        .as_ref()
        .and_then(|p| std::fs::metadata(p).ok())
        .map(|m| m.len());
    eprintln!(
        "causeway: recorded {} events and {} distinct stacks in {:.1} s",
        s.events,
        s.stacks,
        s.elapsed.as_secs_f64()
    );
    if let (Some(p), Some(size)) = (&s.path, size) {
        eprintln!(
            "causeway: wrote {} ({:.1} MiB); next: causeway info {}",
            p.display(),
            size as f64 / (1 << 20) as f64,
            p.display()
        );
    }
    if s.path.is_none() && s.dumps.is_empty() {
        eprintln!("causeway: the flight recorder was never triggered; nothing written");
    }
    if let Some(line) = unwind_line(&s.counters) {
        eprintln!("causeway: {line}");
    }
    if let Some(line) = jit_line(s) {
        eprintln!("causeway: {line}");
    }
    if let Some(line) = jvm_line(s) {
        eprintln!("causeway: {line}");
    }
    for w in &s.runtime_warnings {
        eprintln!("causeway: warning: {w}");
    }
    for line in go_lines(s) {
        eprintln!("causeway: {line}");
    }
    if let Some(line) = command_line_end(s) {
        eprintln!("causeway: {line}");
    }
    if let Some(line) = watch_line(s) {
        eprintln!("causeway: {line}");
    }
}

/// One line on JIT-compiled code: how many of its addresses got names (from perf maps
/// and jitdump files), which JVMs were asked for theirs, and how to name the rest.
fn jit_line(s: &Summary) -> Option<String> {
    let get = |k: &str| s.counters.get(k).copied().unwrap_or(0);
    let (named, unnamed) = (get("jit_addresses_named"), get("jit_addresses_unnamed"));
    if named + unnamed == 0 {
        return None;
    }
    let asked = if s.jvms_asked.is_empty() {
        String::new()
    } else {
        let pids: Vec<String> = s.jvms_asked.iter().map(u32::to_string).collect();
        format!(
            "; asked JVM {} for its perf map (jcmd PID Compiler.perfmap)",
            pids.join(",")
        )
    };
    let hint = if unnamed > 0 {
        "; name the rest with the runtime's perf map (java -XX:+DumpPerfMapAtExit, node --perf-basic-prof, python3.12 -X perf)"
    } else {
        ""
    };
    Some(format!(
        "JIT code: {named} of {} addresses named (from the JVM's own structures, perf maps and jitdump files){asked}{hint}",
        named + unnamed
    ))
}

/// One line on Java frames walked from the JVMs' own frame layout (compiled and
/// interpreted methods, the VM's stubs) and how many could not be stepped out of.
fn jvm_line(s: &Summary) -> Option<String> {
    let get = |k: &str| s.counters.get(k).copied().unwrap_or(0);
    let (c, i, st) = (
        get("jvm_frames_compiled"),
        get("jvm_frames_interpreted"),
        get("jvm_frames_stub"),
    );
    if c + i + st == 0 {
        return None;
    }
    Some(format!(
        "Java frames walked from the JVM's code cache: {c} compiled, {i} interpreted, {st} VM stubs; {} could not be stepped out of",
        get("jvm_frames_stuck")
    ))
}

/// Lines on the Go programs recorded: whose goroutines were followed, and a warning
/// for each one whose were not (its threads' waits then mix the goroutines they carry).
fn go_lines(s: &Summary) -> Vec<String> {
    use causeway_record::gotrack::GoOutcome;
    let mut out = Vec::new();
    let followed: Vec<String> =
        s.go.iter()
            .filter_map(|(pid, o)| match o {
                GoOutcome::Followed(v) => Some(format!("{pid} ({v})")),
                GoOutcome::Unfollowed(_) => None,
            })
            .collect();
    if !followed.is_empty() {
        out.push(format!(
            "goroutines followed in Go process{} {}",
            if followed.len() == 1 { "" } else { "es" },
            followed.join(", ")
        ));
    }
    for (pid, o) in &s.go {
        if let GoOutcome::Unfollowed(why) = o {
            out.push(format!(
                "warning: Go process {pid} recorded without goroutine events ({why}): its threads' waits mix the goroutines they carry, and the runtime's own threads may look like bottlenecks"
            ));
        }
    }
    out
}

/// One line on the watched variable: where, how, and what was kept of its accesses.
fn watch_line(s: &Summary) -> Option<String> {
    let (addr, len) = s.watched?;
    let n = |k: &str| s.counters.get(k).copied().unwrap_or(0);
    let how = if n("watch_uprobes") > 0 {
        format!("by uprobes on {} instructions", n("watch_uprobes"))
    } else if n("watch_inherited") > 0 {
        format!(
            "by watchpoints inherited from {} threads",
            n("watch_threads")
        )
    } else {
        format!("by watchpoints on {} threads", n("watch_threads"))
    };
    Some(format!(
        "watched {len} bytes at {addr:#x} {how}: {} accesses by {} threads, {} repeated reads not kept, {} lost",
        n("watch_hits"),
        n("watch_threads_seen"),
        n("watch_reads_repeated"),
        n("watch_hits_lost")
    ))
}

/// The warning for tracepoints whose BTF program the verifier refused.
fn fallback_line(tracepoints: &[String]) -> String {
    format!(
        "causeway: warning: the kernel's verifier refused the BTF tracepoint program of {}; {} (the same records; `-v` shows the verifier's log)",
        tracepoints.join(", "),
        if tracepoints.len() == 1 {
            "it runs as a raw tracepoint"
        } else {
            "they run as raw tracepoints"
        },
    )
}

/// Run `causeway record`.
pub fn run(a: &RecordArgs) -> Result<u8> {
    run_request(a, a.resolve(std::env::args().collect())?)
}

/// Run a recording resolved from `a` (and perhaps changed, by `causeway watch`).
pub fn run_request(a: &RecordArgs, req: Request) -> Result<u8> {
    let target = req.config.target.clone();
    let watching = req.watch.is_some();
    let tty = std::io::stderr().is_terminal();
    // JSON on stdout replaces the text; JSON into a file comes with it.
    let quiet_json = a.json.as_deref() == Some(std::path::Path::new("-"));
    let mut notify = |n: Notice| match n {
        Notice::Started { pids, .. } if !quiet_json => {
            if pids.is_empty() {
                eprintln!("causeway: recording; Ctrl-C to stop");
            } else {
                let list: Vec<String> = pids.iter().map(u32::to_string).collect();
                eprintln!("causeway: recording PID {}; Ctrl-C to stop", list.join(","));
            }
        }
        Notice::Backlog { at, fill, reader } => {
            eprintln!(
                "{}causeway: warning: the reader is falling behind: a buffer was {:.0}% full at {:.1} s, and records are lost when one fills. {}",
                if tty { "\n" } else { "" },
                fill * 100.0,
                at.as_secs_f64(),
                behind_advice(reader)
            );
        }
        Notice::Progress { events, lost } if tty && !quiet_json => {
            eprint!("\rcauseway: {events} events, {lost} lost   ");
        }
        Notice::Dumped(d) if !quiet_json => {
            eprintln!(
                "{}causeway: flight recorder dumped {} events ({:.3} s) to {}",
                if tty { "\r" } else { "" },
                d.events,
                d.last_ts.saturating_sub(d.first_ts) as f64 / 1e9,
                d.path.display()
            );
            for pid in &d.inproc_asked {
                eprintln!("causeway: asked in-process tracer {pid} to dump its calls too");
            }
        }
        // Said even with --json: a warning.
        Notice::RawFallback(tps) => eprintln!("{}", fallback_line(&tps)),
        // Said even with --json: the user's file was moved.
        Notice::KeptPrevious(old) => {
            eprintln!("{}{}", if tty { "\r" } else { "" }, kept_line(&old));
        }
        // Said even with --json: where the data is if the recorder gets killed.
        Notice::Writing(temp) => eprintln!("{}", writing_line(&temp)),
        _ => {}
    };
    let s: Summary = causeway_record::record(req, &mut notify).context("recording")?;
    if tty && !quiet_json {
        eprint!("\r");
    }
    match &a.json {
        Some(_) if quiet_json => println!("{}", json_summary(&s)?),
        Some(p) => {
            print_text_summary(&s);
            std::fs::write(p, json_summary(&s)? + "\n")
                .with_context(|| format!("writing the summary to {}", p.display()))?;
        }
        None => print_text_summary(&s),
    }
    for w in warnings(&s, &target) {
        eprintln!("causeway: warning: {w}");
    }
    if watching && s.watched.is_none() {
        eprintln!(
            "causeway: warning: the watched variable was never found mapped (the command did not exec its program in time): the trace has no data-flag events"
        );
    }
    // A debug trap no breakpoint claimed kills the program with SIGTRAP: seen in VMs
    // (see docs/causeway-watch.md), so say what killed it.
    let sigtrap = s
        .child_status
        .is_some_and(|st| libc::WIFSIGNALED(st) && libc::WTERMSIG(st) == libc::SIGTRAP);
    if watching && sigtrap {
        eprintln!(
            "causeway: warning: the watched command was killed by SIGTRAP: the kernel took a debug trap that no watchpoint claimed (seen in some VMs); the trace ends there"
        );
    }
    Ok(exit::OK)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unwind_summary_names_every_outcome() {
        let mut c = std::collections::BTreeMap::new();
        assert_eq!(unwind_line(&c), None);
        c.insert("unwind_complete".to_string(), 90);
        c.insert("unwind_cut_window_end".to_string(), 10);
        c.insert("user_stack_copies".to_string(), 100);
        c.insert("user_stack_bytes_copied".to_string(), 409_600);
        let l = unwind_line(&c).unwrap();
        assert!(l.contains("100 unwound"), "{l}");
        assert!(l.contains("4096 bytes copied"), "{l}");
        assert!(l.contains("90 (90.0%)"), "{l}");
        assert!(l.contains("10 cut window end"), "{l}");
    }

    /// A summary of a recording that kept one process and lost nothing.
    fn clean_summary() -> Summary {
        Summary {
            path: None,
            dumps: Vec::new(),
            events: 10,
            lost_per_cpu: vec![0, 0],
            stacks: 0,
            family: causeway_record::Family::Btf,
            child_status: Some(0),
            stopped_command: None,
            target_processes: 1,
            elapsed: std::time::Duration::from_secs(1),
            counters: Default::default(),
            jvms_asked: Vec::new(),
            go: Vec::new(),
            runtime_warnings: Vec::new(),
            reader: None,
            watched: None,
        }
    }

    #[test]
    fn a_reader_that_waited_for_the_cpu_more_than_it_ran_is_told_to_buffer_more() {
        let r = |ran: u64, waited: u64| ReaderTime {
            ran: std::time::Duration::from_millis(ran),
            waited: std::time::Duration::from_millis(waited),
        };
        let saturated = behind_advice(Some(r(1200, 6300)));
        assert!(
            saturated.contains("waited 6.3 s for a CPU and ran 1.2 s")
                && saturated.contains("--buffer-size (e.g. 64M)"),
            "{saturated}"
        );
        assert!(!behind_advice(Some(r(6300, 1200))).contains("saturated"));
        assert!(behind_advice(None).contains("--buffer-size"));
    }

    #[test]
    fn the_jit_line_says_what_was_named_and_how_to_name_the_rest() {
        let mut s = clean_summary();
        assert_eq!(jit_line(&s), None);
        s.counters.insert("jit_addresses_named".into(), 3);
        let l = jit_line(&s).unwrap();
        assert!(l.contains("3 of 3 addresses named"), "{l}");
        assert!(!l.contains("name the rest"), "{l}");
        s.counters.insert("jit_addresses_unnamed".into(), 1);
        s.jvms_asked = vec![42];
        let l = jit_line(&s).unwrap();
        assert!(l.contains("3 of 4"), "{l}");
        assert!(l.contains("asked JVM 42"), "{l}");
        assert!(l.contains("-XX:+DumpPerfMapAtExit"), "{l}");
    }

    #[test]
    fn skipped_probe_runs_and_lost_records_are_said() {
        let target = Target::Pids(vec![1]);
        assert!(warnings(&clean_summary(), &target).is_empty());
        let mut s = clean_summary();
        s.counters
            .insert(causeway_record::run::HANDLER_MISSES.to_string(), 7);
        s.lost_per_cpu = vec![0, 3];
        let w = warnings(&s, &target);
        assert_eq!(w.len(), 2, "{w:?}");
        assert!(w.iter().any(|l| l.starts_with("3 records lost")), "{w:?}");
        assert!(w.iter().any(|l| l.contains("skipped 7 runs")), "{w:?}");
    }
}
