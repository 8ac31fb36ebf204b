//! `causeway diagnose` (Argus, issue 14) on real recordings of the workload zoo: each
//! workload is recorded for about a second with system calls (real eBPF), and the
//! diagnosis must name the known culprit: the circular wait broken by a timeout in
//! `circular-timeout` (with the heuristic and with a replayed answers file), and the
//! long computation sliced back to the sender's datagram in `long-cpu`, and the yield
//! loop of `spin-flag` asking for a data flag, then (after `causeway watch` traced the
//! flag with hardware watchpoints) naming the helper that wrote it late; the costly item
//! of `batch-loop`'s event loop linked by its data edge to the request it read (per-item
//! splits), and a TCP receive of `blocking-net` linked to the server's send (by the
//! recorded socket data).
//!
//! Needs root and the built zoo; skipped without root unless `CAUSEWAY_REQUIRE_ROOT=1`
//! (then it fails, as in CI).

mod common;

use common::zoo::{Recording, Zoo, answer, json};
use common::{causeway, workload};
use serde_json::Value;
use std::path::Path;
use std::sync::Mutex;

/// One recording at a time: each runs a workload flat out on the 2 CPUs of the test
/// machine, and several at once turn its waits into waits for a CPU, which changes the
/// very stalls under study.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// Record `bin --seconds S ARGS` with system calls.
fn record_zoo(zoo: &Zoo, bin: &str, seconds: &str, args: &[&str]) -> Recording {
    record_zoo_with(zoo, bin, seconds, "default", args)
}

/// The same, recording the system calls `syscalls` (`causeway record --syscalls`).
fn record_zoo_with(
    zoo: &Zoo,
    bin: &str,
    seconds: &str,
    syscalls: &str,
    args: &[&str],
) -> Recording {
    zoo.record(bin)
        // Enough on-CPU samples to name a 50 ms computation's function.
        .flags(["--sample", "499", "--events", "default,syscall"])
        .flags(["--syscalls", syscalls])
        .seconds(seconds)
        .args(args)
        .one_at_a_time(&ONE_AT_A_TIME)
        .run()
}

/// `causeway diagnose FLAGS TRACE`: stdout, and the exit code.
fn diagnose_raw(trace: &Path, flags: &[&str]) -> (String, i32) {
    let o = answer(trace, &[&["diagnose"], flags].concat());
    (
        String::from_utf8(o.stdout).unwrap(),
        o.status.code().unwrap_or(-1),
    )
}

/// `causeway diagnose --json FLAGS TRACE`, parsed.
fn diagnose(trace: &Path, flags: &[&str]) -> Value {
    json(&answer(trace, &[&["diagnose", "--json"], flags].concat()))
}

/// `--at` value (ns from the trace start) in the middle of the longest complete wait
/// of the thread named `comm` in one of the system calls `nrs`.
fn longest_wait_at(trace: &Path, comm: &str, nrs: &[u32]) -> String {
    try_longest_wait_at(trace, comm, nrs, 0).unwrap_or_else(|e| panic!("{e}"))
}

/// The same, leaving out the thread's first `skip` such waits, or what the thread's
/// segments were when it had no such wait.
fn try_longest_wait_at(
    trace: &Path,
    comm: &str,
    nrs: &[u32],
    skip: usize,
) -> Result<String, String> {
    let (m, _, _) = common::model(trace);
    let origin = m.span().unwrap().start;
    let t = m.threads().find(|t| t.comm == comm).expect("thread");
    let s = t
        .segments
        .iter()
        .filter(|s| s.start_known && s.end_known)
        .filter(|s| match s.state {
            causeway_model::SegmentState::Blocked {
                syscall: Some(nr), ..
            } => nrs.contains(&nr),
            _ => false,
        })
        .skip(skip)
        .max_by_key(|s| s.duration());
    let Some(s) = s else {
        let mut kinds = std::collections::BTreeMap::new();
        for s in &t.segments {
            let k = match s.state {
                causeway_model::SegmentState::Blocked { syscall, .. } => {
                    format!("blocked in {syscall:?}")
                }
                ref other => format!("{other:?}").chars().take(24).collect(),
            };
            let k = format!("{k} (start {}, end {})", s.start_known, s.end_known);
            *kinds.entry(k).or_insert(0u32) += 1;
        }
        return Err(format!(
            "{comm} has no complete wait in {nrs:?} in {}; its segments: {kinds:?}",
            trace.display()
        ));
    };
    let mid = s.start.0 + s.duration().0 / 2;
    Ok(format!("{}ns", mid - origin.0))
}

/// `--at` value in the middle of the longest stretch of the thread `comm` between
/// two waits (running or queued for a CPU).
fn longest_run_at(trace: &Path, comm: &str) -> String {
    let (m, _, _) = common::model(trace);
    let origin = m.span().unwrap().start;
    let t = m.threads().find(|t| t.comm == comm).expect("thread");
    let mut best = (0u64, 0u64);
    let mut start = None;
    for s in &t.segments {
        if s.state.is_running() || s.state.is_runnable() {
            let a = *start.get_or_insert(s.start.0);
            if s.end.0 - a > best.1 - best.0 {
                best = (a, s.end.0);
            }
        } else {
            start = None;
        }
    }
    format!("{}ns", (best.0 + best.1) / 2 - origin.0)
}

fn threads_of(circle: &Value) -> Vec<String> {
    let mut t: Vec<String> = circle["vertices"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["thread"].as_str().unwrap().to_string())
        .collect();
    t.sort();
    t.dedup();
    t
}

/// The circle between client and server, broken by the client's poll timing out.
fn assert_circle(d: &Value) {
    let circles = d["circles"].as_array().unwrap();
    let c = circles
        .iter()
        .find(|c| threads_of(c) == ["ct-client", "ct-server"])
        .unwrap_or_else(|| panic!("no ct-client/ct-server circle: {d:#}"));
    assert_eq!(c["broken_by"], "a timeout", "{c:#}");
    let at = c["broken_at"].as_u64().unwrap();
    let v = c["vertices"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["id"].as_u64() == Some(at))
        .expect("the breaking vertex is in the circle");
    assert_eq!(v["thread"], "ct-client");
    assert_eq!(v["wait_call"], "poll");
    assert!(v["woken_by"].as_str().unwrap().contains("timer"));
    // The server's side of the circle is the read of the go token.
    let server = c["vertices"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["thread"] == "ct-server")
        .unwrap();
    let frames: Vec<&str> = server["frames"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f.as_str().unwrap())
        .collect();
    assert!(frames.contains(&"wait_for_go_token"), "{frames:?}");
}

#[test]
fn circular_timeout_reports_the_circle_and_the_timeout_that_breaks_it() {
    let Some(zoo) = Zoo::start() else { return };
    let trace = record_zoo(&zoo, "circular-timeout", "1", &[]);

    // --auto from the client's longest wait (on a busy machine its longest stall may
    // be a wait for a CPU instead, so the wait is picked by time).
    let at = longest_wait_at(&trace, "ct-client", &[7, 271]); // poll, ppoll
    let at = at.as_str();
    let d = diagnose(&trace, &["--auto", "--thread", "ct-client", "--at", at]);
    assert_eq!(d["problem"]["thread"], "ct-client");
    assert_eq!(d["problem"]["wait_call"], "poll");
    assert_eq!(d["findings"][0]["case"], "LongWait");
    assert_circle(&d);
    let decisions = d["decisions"].as_array().unwrap();
    assert!(!decisions.is_empty());
    assert!(decisions.iter().all(|x| x["by"] == "heuristic"));
    assert_eq!(d["queries"].as_u64().unwrap() as usize, decisions.len());

    // The default problem is the longest stall of the recorded processes; --stall
    // wait looks only at waits.
    let d = diagnose(&trace, &["--auto", "--stall", "wait"]);
    let t = d["problem"]["thread"].as_str().unwrap();
    assert!(t == "ct-client" || t == "ct-server", "{t}");
    assert_eq!(d["problem"]["kind"], "wait");

    // Replayed answers: `1` goes on into the culprit as the heuristic would...
    let answers = zoo.dir().join("answers");
    std::fs::write(&answers, "# go on into the server\n1\n").unwrap();
    let a = answers.to_str().unwrap();
    let d = diagnose(
        &trace,
        &["--answers", a, "--thread", "ct-client", "--at", at],
    );
    assert_circle(&d);
    assert_eq!(d["decisions"][0]["by"], "answers file");
    assert_eq!(d["decisions"][0]["answer"], "1");

    // ...and `stop` ends the diagnosis at the client: no culprit, no circle.
    // (one `stop` per culprit: answers that run out fall back to the heuristic)
    std::fs::write(&answers, "stop\n".repeat(8)).unwrap();
    let d = diagnose(
        &trace,
        &["--answers", a, "--thread", "ct-client", "--at", at],
    );
    assert_eq!(d["findings"].as_array().unwrap().len(), 1);
    assert!(d["circles"].as_array().unwrap().is_empty());
    assert_eq!(d["decisions"][0]["answer"], "stop");

    // Text and DOT say the same.
    let (text, code) = diagnose_raw(&trace, &["--auto", "--thread", "ct-client", "--at", at]);
    assert_eq!(code, 0);
    assert!(text.contains("circular wait: ct-client"), "{text}");
    assert!(text.contains("broken by a timeout"), "{text}");
    let flags = ["--auto", "--dot", "--thread", "ct-client", "--at", at];
    let (dot, _) = diagnose_raw(&trace, &flags);
    // (after `// warning:` lines if events were lost)
    assert!(dot.contains("digraph diagnosis {"), "{dot}");
    assert!(dot.contains("waits for"), "{dot}");
}

/// The interactive prompt, driven through a pipe with `--prompt`: it shows each
/// question with its candidates on standard error, takes a typed `stop`, rejects a
/// bad answer and asks again, and records the answers as the user's.
#[test]
fn the_prompt_asks_on_stderr_and_takes_typed_answers() {
    use std::io::Write;
    let Some(zoo) = Zoo::start() else { return };
    let trace = record_zoo(&zoo, "circular-timeout", "1", &[]);
    let at = longest_wait_at(&trace, "ct-client", &[7, 271]); // poll, ppoll
    let mut child = common::causeway()
        .args([
            "diagnose",
            "--prompt",
            "--json",
            "--thread",
            "ct-client",
            "--at",
            &at,
        ])
        .arg(&trace)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // A bad answer, then `s` for every question (stdin then ends: the heuristic).
    let typed = format!("maybe\n{}", "s\n".repeat(8));
    child
        .stdin
        .take()
        .unwrap()
        .write_all(typed.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("panicked"), "{err}");
    let d: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stdout)));
    let decisions = d["decisions"].as_array().unwrap();
    assert!(!decisions.is_empty(), "the circle needs a question: {d:#}");
    assert_eq!(decisions[0]["by"], "user");
    assert_eq!(decisions[0]["answer"], "stop");
    // The question was shown, with its suggestion, and the bad answer refused.
    assert!(err.contains("choice ["), "{err}");
    assert!(err.contains("answer a number from 1 to"), "{err}");
}

#[test]
fn long_cpu_slices_the_long_run_back_to_the_senders_datagram() {
    let Some(zoo) = Zoo::start() else { return };
    let trace = record_zoo(&zoo, "long-cpu", "1", &[]);
    // The loop's longest run (its longest stall may be a wait on a busy machine).
    let at = longest_run_at(&trace, "event-loop");
    let d = diagnose(&trace, &["--auto", "--thread", "event-loop", "--at", &at]);
    let f = &d["findings"][0];
    assert_eq!(f["vertex"]["thread"], "event-loop");
    let case = f["case"].as_str().unwrap();
    assert!(
        case == "LongRunning" || case == "LongRunnable",
        "{case}: {f:#}"
    );
    // The samples name the computation.
    let hot: Vec<&str> = f["vertex"]["hot"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_str().unwrap())
        .collect();
    assert!(hot.contains(&"long_computation"), "{hot:?}");
    // So does the verdict line of the busy hop: what a user reads.
    let (text, _) = diagnose_raw(&trace, &["--auto", "--thread", "event-loop", "--at", &at]);
    let first = text.lines().nth(1).unwrap_or_default();
    assert!(
        first.contains("event-loop") && first.contains("long_computation"),
        "{text}"
    );
    // The slice goes back to the sender that sent the datagram: over a strong wake-up
    // edge through the loop's blocked receive, or, when the loop was still busy as the
    // datagram arrived (a loaded machine) and read it without blocking, over the data
    // edge of the socket. Either way the sender's sendto is on it.
    let steps = f["slice"]["steps"].as_array().unwrap();
    let sender = steps
        .iter()
        .find(|s| s["vertex"]["thread"] == "sender")
        .unwrap_or_else(|| panic!("no sender on the slice: {f:#}"));
    let calls: Vec<&str> = sender["vertex"]["syscalls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_str().unwrap())
        .collect();
    assert!(calls.iter().any(|c| c.starts_with("sendto")), "{calls:?}");
    if sender["edge"] == "data written to the same object" {
        return;
    }
    assert_eq!(sender["edge"], "wake-up", "{f:#}");
    assert_eq!(sender["strength"], "strong", "{f:#}");
    let recv = steps
        .iter()
        .find(|s| s["vertex"]["thread"] == "event-loop" && s["vertex"]["kind"] == "wait")
        .expect("the loop's receive is on the slice");
    assert!(
        recv["vertex"]["wait_call"]
            .as_str()
            .unwrap()
            .starts_with("recv"),
        "{recv:#}"
    );
}

#[test]
fn diagnose_rejects_an_unknown_thread_and_a_bad_answers_file() {
    let Some(zoo) = Zoo::start() else { return };
    let trace = record_zoo(&zoo, "circular-timeout", "0.3", &[]);
    let o = causeway()
        .args([
            "diagnose",
            "--auto",
            "--thread",
            "no-such-thread",
            trace.as_str(),
        ])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("no thread `no-such-thread`"));
    let answers = zoo.dir().join("answers");
    std::fs::write(&answers, "maybe\n").unwrap();
    let o = causeway()
        .args([
            "diagnose",
            "--answers",
            answers.to_str().unwrap(),
            trace.as_str(),
        ])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("answers line 1"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
}

/// The findings' `(thread, case)`, in order.
fn chain(d: &Value) -> Vec<(String, String)> {
    d["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["vertex"]["thread"].as_str().unwrap().to_string(),
                f["case"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[test]
fn stopped_peer_names_the_stopped_server_and_the_stopper() {
    let Some(zoo) = Zoo::start() else { return };
    let trace = record_zoo(&zoo, "stopped-peer", "1.5", &["--stop-ms", "500"]);
    // The client's longest read of a reply (its longest stall may be a wait for a CPU
    // on a busy machine).
    let at = longest_wait_at(&trace, "client-0", &[0]); // read
    let d = diagnose(&trace, &["--auto", "--thread", "client-0", "--at", &at]);
    let c = chain(&d);
    assert_eq!(c[0], ("client-0".into(), "LongWait".into()), "{c:?}");
    assert!(d["findings"][0]["vertex"]["duration_ns"].as_f64().unwrap() / 1e6 > 400.0);
    // The server's stop is a culprit (on a loaded machine its wait for a CPU just
    // before may be one too).
    let k = c
        .iter()
        .position(|x| *x == ("server-0".into(), "Stopped".into()))
        .unwrap_or_else(|| panic!("no stopped server: {c:?}"));
    let stopped = &d["findings"][k];
    assert!(
        stopped["vertex"]["woken_by"]
            .as_str()
            .unwrap()
            .contains("sp-stopper")
    );
    // The stop is named from the recorded SIGSTOP, not inferred from the SIGCONT.
    let note = stopped["note"].as_str().unwrap_or_default();
    assert!(
        note.starts_with("stopped by SIGSTOP from ") && note.contains("sp-stopper"),
        "{note}"
    );
    // With the sender's stack at the send: stopped-peer's main calls kill(2).
    assert!(
        note.contains(", sent in main (") && note.contains("kill)"),
        "{note}"
    );
    let steps = stopped["slice"]["steps"].as_array().unwrap();
    assert_eq!(steps[1]["vertex"]["thread"], "sp-stopper");
    assert_eq!(steps[1]["edge"], "signal");
    assert_eq!(steps[1]["strength"], "strong");
    assert_eq!(steps[1]["decided"], "graph");
    // The slice reaches the stopper's run before its sleep: where it stopped the server.
    let last = steps.last().unwrap();
    assert_eq!(last["vertex"]["thread"], "sp-stopper");
    assert_eq!(
        stopped["slice"]["end"],
        "the thread's own timer (the work began there)"
    );
    // The verdict goes on from the stop to what its sender did meanwhile: it slept.
    let hops = verdict_hops(&d);
    let at_stop = hops
        .iter()
        .position(|h| h.0 == "server-0" && h.1 == "signal")
        .unwrap_or_else(|| panic!("{hops:?}"));
    assert_eq!(
        hops.get(at_stop + 1),
        Some(&("sp-stopper".into(), "sleep".into(), "stopped it".into())),
        "{hops:?}"
    );
}

/// The verdict's hops: thread, what it waited on, how it was found.
fn verdict_hops(d: &Value) -> Vec<(String, String, String)> {
    d["chain"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| {
            (
                h["vertex"]["thread"].as_str().unwrap_or("").to_string(),
                h["kind"].as_str().unwrap_or("").to_string(),
                h["found_as"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect()
}

#[test]
fn a_server_stopped_by_a_script_names_the_script_and_its_sleep() {
    let Some(zoo) = Zoo::start() else { return };
    // An operator's script freezes the server for half a second, as `kill -STOP`,
    // `sleep`, `kill -CONT` do; the workload itself never stops it (--fixed).
    let script = format!(
        "{} --seconds 1.5 --fixed > /dev/null & sleep 0.4; \
         pid=$(pgrep -x sp-server | head -1); kill -STOP \"$pid\"; sleep 0.5; \
         kill -CONT \"$pid\"; wait",
        common::workload("stopped-peer").display()
    );
    let trace = zoo
        .record_program("bash")
        .out("stop-script.cwt")
        .args(["-c", &script])
        .one_at_a_time(&ONE_AT_A_TIME)
        .run();
    // The client's longest wait: for its reply while the server was stopped.
    let d = diagnose(
        &trace,
        &["--auto", "--thread", "client-0", "--stall", "wait"],
    );
    let hops = verdict_hops(&d);
    let at_stop = hops
        .iter()
        .position(|h| h.0 == "server-0" && h.1 == "signal")
        .unwrap_or_else(|| panic!("no stopped server in the verdict: {hops:?}"));
    // The script sent the stop and waited for its `sleep` to exit; the sleep slept.
    let rest: Vec<(&str, &str, &str)> = hops[at_stop + 1..]
        .iter()
        .map(|h| (h.0.as_str(), h.1.as_str(), h.2.as_str()))
        .collect();
    assert_eq!(
        rest,
        [
            ("bash", "child exit", "stopped it"),
            ("sleep", "sleep", "woke it")
        ],
        "{hops:?}"
    );
}

#[test]
fn lock_chain_reports_the_whole_chain_to_the_sleep() {
    let Some(zoo) = Zoo::start() else { return };
    let trace = record_zoo(&zoo, "lock-chain", "1", &[]);
    // The requester's longest wait on the mutex (its longest stall may be a wait for a
    // CPU on a busy machine).
    let at = longest_wait_at(&trace, "requester", &[202]); // futex
    let d = diagnose(&trace, &["--auto", "--thread", "requester", "--at", &at]);
    let findings = d["findings"].as_array().unwrap();
    let first = &findings[0];
    assert_eq!(first["vertex"]["thread"], "requester");
    assert_eq!(first["case"], "LongWait");
    assert_eq!(first["vertex"]["wait_call"], "futex");
    assert!(d["circles"].as_array().unwrap().is_empty(), "{d:#}");
    // Each link: a finding of `thread` that is the culprit of `of`.
    let culprit = |of: &Value, thread: &str| -> Vec<Value> {
        findings
            .iter()
            .filter(|f| f["culprit_of"] == of["vertex"]["id"] && f["vertex"]["thread"] == thread)
            .cloned()
            .collect()
    };
    let holder = culprit(first, "holder");
    let reading = holder
        .iter()
        .find(|f| f["case"] == "LongWait" && f["vertex"]["wait_call"] == "read")
        .unwrap_or_else(|| panic!("the holder's wait for the reply is not a culprit: {d:#}"));
    let backend = culprit(reading, "lk-backend");
    let sleep = backend
        .iter()
        .find(|f| f["case"] == "LongWait")
        .unwrap_or_else(|| panic!("the backend's sleep is not the holder's culprit: {d:#}"));
    let call = sleep["vertex"]["wait_call"].as_str().unwrap();
    assert!(call.contains("nanosleep"), "{call}");
    assert_eq!(
        sleep["note"],
        "slept until its own timer: the end of the chain"
    );
    let frames: Vec<&str> = sleep["vertex"]["frames"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f.as_str().unwrap())
        .collect();
    assert!(frames.contains(&"slow_lookup"), "{frames:?}");
}

#[test]
fn spin_flag_reports_repeated_yield_and_asks_for_a_data_flag() {
    let Some(zoo) = Zoo::start() else { return };
    let trace = record_zoo_with(&zoo, "spin-flag", "1", "default,sched_yield", &[]);
    // The waiter's longest run between two waits: its yield loop.
    let at = longest_run_at(&trace, "waiter");
    let d = diagnose(&trace, &["--auto", "--thread", "waiter", "--at", &at]);
    let f = &d["findings"][0];
    assert_eq!(f["vertex"]["thread"], "waiter");
    assert_eq!(f["case"], "RepeatedYield", "{d:#}");
    assert!(
        f["vertex"]["syscalls"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c.as_str().unwrap().starts_with("sched_yield x"))
    );
    // No flag is traced: the diagnosis stops and asks for one.
    assert_eq!(d["needs_data_flag"]["id"], f["vertex"]["id"]);
    assert_eq!(d["findings"].as_array().unwrap().len(), 1);
    let (text, _) = diagnose_raw(&trace, &["--auto", "--thread", "waiter", "--at", &at]);
    assert!(text.contains("has no data flag it waits for"), "{text}");
    assert!(text.contains("causeway watch --symbol"), "{text}");

    // Watch the flag (`done`) with hardware watchpoints, then with uprobes on the
    // instructions that load and store it, and diagnose again: the loop's data-flag
    // edge names the helper whose write ended it, and that helper, busy computing
    // the whole time, is the culprit.
    for via in ["auto", "uprobe"] {
        spin_flag_names_the_late_writer(zoo.dir(), via);
    }
}

/// Record spin-flag under `causeway watch --via VIA` into `watched`, its summary into
/// `json`; returns the summary.
fn watch_spin_flag(watched: &Path, json: &Path, exe: &Path, via: &str) -> Value {
    let mut summary = Value::Null;
    // On some VMs the watched program is now and then killed by SIGTRAP (a debug trap
    // no watchpoint claimed; docs/causeway-watch.md; up to half of the runs there):
    // record again, up to six times, so that the test fails for the platform's trap in
    // under 2 % of runs and never for a diagnosis that is wrong.
    for _ in 0..6 {
        let o = {
            let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
            causeway()
                .args([
                    "watch", "--via", via, "--sample", "499", "--symbol", "done", "-o",
                ])
                .arg(watched)
                .arg(format!("--json={}", json.display()))
                .arg("--")
                .arg(exe)
                .args(["--seconds", "1"])
                .output()
                .expect("run causeway watch")
        };
        assert!(
            o.status.success(),
            "causeway watch failed: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        summary =
            serde_json::from_slice(&std::fs::read(json).unwrap()).expect("watch --json summary");
        if summary["command_exit_code"] != 128 + 5 {
            break;
        }
    }
    summary
}

/// What the watch's summary must hold.
fn check_watch_summary(summary: &Value, via: &str) {
    assert_eq!(summary["command_exit_code"], 0, "{summary:#}");
    assert_eq!(summary["watched"]["len"], 8, "{summary:#}");
    let counters = &summary["counters"];
    // The waiter and two helpers access it.
    assert!(
        counters["watch_threads_seen"].as_u64().unwrap() >= 3,
        "{summary:#}"
    );
    if via == "uprobe" {
        assert!(
            counters["watch_uprobes"].as_u64().unwrap() >= 2,
            "{summary:#}"
        );
    }
    assert!(counters["watch_hits"].as_u64().unwrap() > 0, "{summary:#}");
}

/// `causeway watch --via VIA --symbol done -- spin-flag`, then diagnose the waiter's
/// yield loop: the late writer is named, compared first, and is the culprit.
fn spin_flag_names_the_late_writer(dir: &std::path::Path, via: &str) {
    let watched = dir.join(format!("spin-flag-{via}.cwt"));
    // (the summary goes to a file: the workload shares stdout)
    let json = dir.join(format!("watch-{via}.json"));
    let exe = workload("spin-flag");
    // Now and then (about one CI run in thirty) the loop chosen has no flag write
    // into it (the watch did not see the write that ended it; cause not found):
    // record again, up to three times; a diagnosis that never links the writer
    // still fails.
    let (mut summary, mut d, mut at) = (Value::Null, Value::Null, String::new());
    for _ in 0..3 {
        summary = watch_spin_flag(&watched, &json, &exe, via);
        at = longest_run_at(&watched, "waiter");
        d = diagnose(&watched, &["--auto", "--thread", "waiter", "--at", &at]);
        if d["needs_data_flag"].is_null() {
            break;
        }
    }
    check_watch_summary(&summary, via);
    let f = &d["findings"][0];
    assert_eq!(f["case"], "RepeatedYield", "{d:#}");
    assert!(d["needs_data_flag"].is_null(), "{d:#}");
    let writer = f["flag_writer"]["thread"]
        .as_str()
        .unwrap_or_else(|| panic!("{via}: {d:#}"));
    assert!(writer.starts_with("helper-"), "{writer}");
    // The writer's thread is compared first, on the strength of the flag...
    assert_eq!(f["compared"][0]["vertex"]["thread"], writer, "{f:#}");
    assert_eq!(f["compared"][0]["from_normal_path"], true, "{f:#}");
    // ...and its run is the culprit of the loop.
    let culprit = d["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["culprit_of"] == f["vertex"]["id"] && c["vertex"]["thread"] == writer)
        .unwrap_or_else(|| panic!("the late writer is no culprit: {d:#}"));
    let case = culprit["case"].as_str().unwrap();
    assert!(case == "LongRunning" || case == "LongRunnable", "{case}");
    let (text, _) = diagnose_raw(&watched, &["--auto", "--thread", "waiter", "--at", &at]);
    assert!(
        text.contains(&format!("last written by {writer}")),
        "{text}"
    );
}

/// `--at` values just before each reply to one of `bl-heavy`'s costly requests, in time
/// order: 2 ms before the end of each wait of `bl-heavy` in `read`, at least 10 ms long,
/// after which it went to sleep (the reply's wait; reading its request wakes it too when
/// it already waits, which is not the reply). The loop computes right before it replies.
fn before_heavy_replies(trace: &Path) -> Vec<String> {
    let (m, _, _) = common::model(trace);
    let origin = m.span().unwrap().start;
    let t = m.threads().find(|t| t.comm == "bl-heavy").expect("thread");
    let blocked_in = |s: &causeway_model::Segment| match s.state {
        causeway_model::SegmentState::Blocked { syscall, .. } => syscall,
        _ => None,
    };
    let mut out = Vec::new();
    for (i, s) in t.segments.iter().enumerate() {
        if !(s.start_known && s.end_known && s.duration().0 >= 10_000_000)
            || blocked_in(s) != Some(0)
        {
            continue;
        }
        let next = t
            .segments
            .get(i + 1..)
            .unwrap_or(&[])
            .iter()
            .find_map(blocked_in);
        if next == Some(230) {
            out.push(format!("{}ns", s.end.0 - 2_000_000 - origin.0));
        }
    }
    out
}

/// True if the slice of the diagnosis's first finding goes from the problem straight
/// to `thread` over a strong data edge the graph chose (no question).
fn first_step_is_data_from(d: &Value, thread: &str) -> bool {
    let step = &d["findings"][0]["slice"]["steps"][1];
    step["vertex"]["thread"] == thread
        && step["edge"] == "data written to the same object"
        && step["strength"] == "strong"
        && step["decided"] == "graph"
}

/// An event loop that serves every ready client per `epoll_wait` pass (issue 14's
/// per-item splits and data edges): each costly request of `bl-heavy` makes the loop
/// run ~20 ms in the middle of a pass. The loop read that request without blocking
/// (epoll said it was there), so no wake-up links it: the data edge on the socket's
/// identity does, and the pass cut per item makes it the long run's only strong
/// edge. Without the split the long run starts where the pass's peers last changed
/// and the slice has to guess.
#[test]
fn batch_loop_slices_the_long_item_to_the_request_it_read() {
    let Some(zoo) = Zoo::start() else { return };
    let trace = record_zoo(&zoo, "batch-loop", "1", &[]);
    let ats = before_heavy_replies(&trace);
    assert!(ats.len() >= 5, "{} costly requests: {ats:?}", ats.len());
    // On a loaded machine some moments miss the computation (the loop was preempted
    // while it replied) or find it cut (a wake-up of a kernel thread in the middle of
    // it changes the loop's peers): the items checked are the long runs in
    // heavy_request that begin with the read of a request.
    let (mut items, mut without_split_found) = (0, 0);
    for at in &ats {
        let d = diagnose(&trace, &["--auto", "--thread", "bl-loop", "--at", at]);
        let f = &d["findings"][0];
        assert_eq!(f["vertex"]["thread"], "bl-loop");
        assert!(d["graph"]["data_edges"].as_u64().unwrap() > 0);
        assert!(d["graph"]["batch_splits"].as_u64().unwrap() > 0);
        let case = f["case"].as_str().unwrap();
        let hot: Vec<&str> = f["vertex"]["hot"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_str().unwrap())
            .collect();
        let calls = f["vertex"]["syscalls"].as_array().unwrap();
        if !((case == "LongRunning" || case == "LongRunnable")
            && hot.contains(&"heavy_request")
            && calls.first().is_some_and(|c| c == "read"))
        {
            continue;
        }
        items += 1;
        // The item's only strong edge is the data of the request it read.
        assert!(
            first_step_is_data_from(&d, "bl-heavy"),
            "at {at} the long item is not linked to bl-heavy's request: {f:#}"
        );

        let d = diagnose(
            &trace,
            &[
                "--auto",
                "--no-batch-split",
                "--thread",
                "bl-loop",
                "--at",
                at,
            ],
        );
        assert_eq!(d["graph"]["batch_splits"], 0);
        if first_step_is_data_from(&d, "bl-heavy") {
            without_split_found += 1;
        }
    }
    assert!(
        items >= 3,
        "only {items} long items in heavy_request among {ats:?}"
    );
    // Without the split, passes where the loop turned from another client's read to
    // bl-heavy's leave the long run without its input's strong edge: the slice asks,
    // and at least one of them does not go straight to bl-heavy.
    assert!(
        without_split_found < items,
        "{without_split_found} of {items}"
    );
}

/// A TCP receive over loopback is woken from the network softirq, not by the thread
/// that sent the data, so the graph has no wake-up edge into it (§3.1 leaves interrupt
/// wake-ups out). The data edge on the connection's identity links the client's wait
/// to the server's send: the client's earlier receive is a normal case to compare
/// with, and its wake-up path leads to the server.
#[test]
fn blocking_net_links_a_tcp_receive_to_the_servers_send() {
    let Some(zoo) = Zoo::start() else { return };
    // The clients spend their time in recv; one CI run (a busy machine) recorded no
    // complete one of client-0's, which this test needs as its starting point, not as
    // its outcome: then it says what it saw and records again, once.
    // The first receive is left out: it waits for the server to start (on a busy
    // machine the longest), and nothing before it is a normal case to compare with.
    let nrs = [45, 47, 0]; // recvfrom, recvmsg, read
    let mut trace = record_zoo(&zoo, "blocking-net", "1", &[]);
    let at = match try_longest_wait_at(&trace, "client-0", &nrs, 1) {
        Ok(at) => at,
        Err(e) => {
            eprintln!("recording again: {e}");
            std::fs::remove_file(&trace).unwrap();
            trace = record_zoo(&zoo, "blocking-net", "1", &[]);
            try_longest_wait_at(&trace, "client-0", &nrs, 1).unwrap_or_else(|e| panic!("{e}"))
        }
    };
    let d = diagnose(&trace, &["--auto", "--thread", "client-0", "--at", &at]);
    let f = &d["findings"][0];
    assert_eq!(f["vertex"]["thread"], "client-0");
    // The network softirq ran the wake-up; the recorded socket data names the server
    // thread that wrote the reply as its waker, and the wait as a socket's.
    assert!(
        f["vertex"]["woken_by"]
            .as_str()
            .unwrap()
            .contains("server-0"),
        "{f:#}"
    );
    assert_eq!(f["vertex"]["waits_on"], "socket", "{f:#}");
    assert!(d["graph"]["socket_wakeups"].as_u64().unwrap() > 0);
    // The server, known from the data edge to have ended the wait, is compared first:
    // its own stalls during the wait are the culprits (a busy machine leaves it waiting
    // for a CPU); with none, the client's earlier receive is the normal case whose
    // wake-up path leads to it.
    assert!(
        f["compared"]
            .as_array()
            .unwrap()
            .first()
            .is_some_and(|c| c["vertex"]["thread"] == "server-0" && c["from_normal_path"] == true),
        "{f:#}"
    );
    if f["rule"] == "woke it" {
        return;
    }
    assert!(
        !f["similar"].is_null(),
        "neither a stalled waker nor a normal case to compare with: {f:#}"
    );
    let steps = f["slice"]["steps"].as_array().unwrap();
    assert_eq!(steps[1]["vertex"]["thread"], "server-0", "{f:#}");
    assert_eq!(steps[1]["edge"], "wake-up");
    assert_eq!(steps[1]["strength"], "strong");
    assert_eq!(steps[1]["decided"], "graph");
}
