//! Two "hosts" on one machine: network namespaces joined by a veth pair, each with its
//! own address and its own recording.
//!
//! - The clients of `group-commit --connect` run in one, its server (`--listen`, whose
//!   single sync thread fdatasyncs every request) in the other. Each trace alone ends
//!   the clients' waits at the network; joined, the clients wait for the server's
//!   threads and the top knot is the server's sync thread and its disk, whatever the
//!   second trace's clock says.
//! - Three tiers of `lock-chain` on two hosts: the client and the backend on one, the
//!   app between them on the other. The client waits for the app's requester, which
//!   waits for the lock that the holder keeps while it waits for the backend's sleep
//!   back on the first host: the diagnosis's chain crosses from one trace to the
//!   other and back.

mod common;

use causeway_format::{Event, Timestamp, TraceReader, TraceWriter};
use common::netns::NetPair;
use common::zoo::{Zoo, analyse_json};
use common::{causeway, workload};
use serde_json::Value;
use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::sync::{Mutex, MutexGuard};

const PORT: u16 = 7700;

/// One test at a time: each runs two recorders and two workloads on this machine.
fn serial() -> MutexGuard<'static, ()> {
    static ONE: Mutex<()> = Mutex::new(());
    ONE.lock().unwrap_or_else(|e| e.into_inner())
}

/// Start `causeway record -o OUT -- ip netns exec NS ARGS...`.
fn start_recording(out: &Path, ns: &str, args: &[&OsStr]) -> Child {
    causeway()
        .arg("record")
        .arg("-o")
        .arg(out)
        .arg("--")
        .args(NetPair::exec(ns))
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start a recording")
}

/// Wait for a recording started by [`start_recording`]; it must succeed.
fn finish_recording(what: &str, rec: Child) {
    let o = rec.wait_with_output().expect("a recording");
    assert!(
        o.status.success(),
        "{what}'s recording: {}",
        String::from_utf8_lossy(&o.stderr)
    );
}

/// Record `server_args` of `program` in namespace `b` into `b.cwt` and, once it
/// listens on `port`, `client_args` in namespace `a` into `a.cwt`.
fn record_pair(
    zoo: &Zoo,
    net: &NetPair,
    program: &Path,
    (server_args, port): (&[String], u16),
    client_args: &[String],
    names: (&str, &str),
) -> (PathBuf, PathBuf) {
    let (client, server) = (
        zoo.dir().join(format!("{}.cwt", names.0)),
        zoo.dir().join(format!("{}.cwt", names.1)),
    );
    let with = |args: &[String]| -> Vec<OsString> {
        std::iter::once(program.as_os_str().to_owned())
            .chain(args.iter().map(OsString::from))
            .collect()
    };
    let (sargs, cargs) = (with(server_args), with(client_args));
    let (srefs, crefs): (Vec<&OsStr>, Vec<&OsStr>) = (
        sargs.iter().map(OsString::as_os_str).collect(),
        cargs.iter().map(OsString::as_os_str).collect(),
    );
    let serving = start_recording(&server, &net.b, &srefs);
    NetPair::wait_listening(&net.b, port);
    let clients = start_recording(&client, &net.a, &crefs);
    finish_recording("the client", clients);
    finish_recording("the server", serving);
    (client, server)
}

/// The two recordings: the clients' host and the server's.
struct TwoHosts {
    zoo: Zoo,
    client: PathBuf,
    server: PathBuf,
}

fn record_two_hosts() -> Option<TwoHosts> {
    let zoo = Zoo::on_disk()?;
    let net = NetPair::new(0);
    let dir = zoo.dir().to_str().unwrap().to_string();
    let server: Vec<String> = [
        "--listen",
        &format!("{}:{PORT}", net.addr_b),
        "--clients",
        "4",
        "--dir",
        &dir,
    ]
    .map(String::from)
    .to_vec();
    let client: Vec<String> = [
        "--connect",
        &format!("{}:{PORT}", net.addr_b),
        "--clients",
        "4",
        "--seconds",
        "2",
    ]
    .map(String::from)
    .to_vec();
    let (client, server) = record_pair(
        &zoo,
        &net,
        &workload("group-commit"),
        (&server, PORT),
        &client,
        ("client", "server"),
    );
    Some(TwoHosts {
        zoo,
        client,
        server,
    })
}

/// `causeway bottleneck --json TRACES...`.
fn bottleneck(traces: &[&Path]) -> Value {
    let (last, rest) = traces.split_last().unwrap();
    let mut args = vec!["bottleneck", "--json"];
    args.extend(rest.iter().map(|p| p.to_str().unwrap()));
    analyse_json(last, &args)
}

fn vertices(r: &Value) -> &Vec<Value> {
    r["vertices"].as_array().unwrap()
}

/// The vertex holding a thread whose name starts with `prefix`.
fn find(r: &Value, prefix: &str) -> Option<u64> {
    vertices(r).iter().find_map(|v| {
        let has = v["threads"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["comm"].as_str().unwrap().starts_with(prefix));
        has.then(|| v["id"].as_u64().unwrap())
    })
}

fn kind(r: &Value, v: u64) -> String {
    vertices(r)[v as usize]["kind"]["type"]
        .as_str()
        .unwrap()
        .to_string()
}

/// The out-edges of `v`, heaviest first: (to, weight in ns).
fn out_edges(r: &Value, v: u64) -> Vec<(u64, u64)> {
    let mut e: Vec<(u64, u64)> = r["edges"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["from"] == v)
        .map(|e| (e["to"].as_u64().unwrap(), e["weight_ns"].as_u64().unwrap()))
        .collect();
    e.sort_by_key(|&(_, w)| std::cmp::Reverse(w));
    e
}

/// The top knot's vertices, sorted.
fn top_knot(r: &Value) -> Vec<u64> {
    let k = &r["knots"][0]["vertices"];
    let mut v: Vec<u64> = k
        .as_array()
        .unwrap_or_else(|| panic!("no knot: {}", r["summary"]))
        .iter()
        .map(|x| x.as_u64().unwrap())
        .collect();
    v.sort_unstable();
    v
}

/// What the joined answer must say: the top knot holds the server's sync thread and
/// the disk, and nothing of the clients' host (with four clients the sync thread also
/// waits for requests now and then, so the server's network threads may join it); the
/// clients' heaviest wait is for the server's network threads, not a device.
fn check_joined(r: &Value) {
    let sync = find(r, "sync@server").expect("the server's sync thread");
    let disk = vertices(r)
        .iter()
        .find(|v| v["kind"]["type"] == "disk")
        .map(|v| v["id"].as_u64().unwrap())
        .expect("a disk vertex");
    let knot = top_knot(r);
    assert!(
        knot.contains(&sync) && knot.contains(&disk),
        "top knot {knot:?} lacks sync {sync} or disk {disk}; summary {}",
        r["summary"]
    );
    for v in &knot {
        let label = vertices(r)[*v as usize]["label"].as_str().unwrap();
        assert!(
            !label.contains("@client"),
            "the clients' {label} in the top knot"
        );
    }
    let clients = find(r, "client-").expect("the client threads");
    let edges = out_edges(r, clients);
    let (to, w) = *edges.first().expect("the clients wait for something");
    let label = &vertices(r)[to as usize]["label"];
    assert!(
        find(r, "net-").is_some_and(|n| n == to) || label.as_str().unwrap().contains("@server"),
        "the clients' heaviest edge goes to {label}, not the server's threads ({edges:?})"
    );
    for &(other, ow) in &edges {
        if kind(r, other) == "nic" {
            assert!(
                ow * 10 < w,
                "a NIC edge of {ow} ns beside {w} ns to the server"
            );
        }
    }
}

#[test]
fn joined_the_clients_wait_for_the_other_hosts_server_and_its_disk() {
    let _one = serial();
    let Some(h) = record_two_hosts() else { return };
    // Alone, the clients' trace ends their waits at the network.
    let alone = bottleneck(&[&h.client]);
    let clients = find(&alone, "client-").expect("client threads");
    let (to, _) = out_edges(&alone, clients)[0];
    assert_ne!(
        kind(&alone, to),
        "thread",
        "alone, a client waits for a thread?"
    );
    let joined = bottleneck(&[&h.client, &h.server]);
    check_joined(&joined);
    let hosts = &joined["caveats"]["hosts"];
    assert_eq!(hosts[1]["name"], "server", "{hosts}");
    assert!(hosts[1]["flows_joined"].as_u64().unwrap() >= 4, "{hosts}");
    assert_eq!(hosts[0]["flows_alone"], 0, "{hosts}");
    assert!(hosts[0]["crossings"].as_u64().unwrap() > 100, "{hosts}");

    // One host's clock running 37 ms ahead, or 120 ms behind: measured within 200 µs,
    // and the same answer.
    // Both namespaces share this machine's clock: the true offset is the shift.
    for shift in [37_000_000i64, -120_000_000] {
        let moved = h.zoo.dir().join(format!("server-{shift}.cwt"));
        shift_trace(&h.server, &moved, shift);
        // The file's name is the host's name (both namespaces share one host name).
        let named = h
            .zoo
            .dir()
            .join(format!("s{}", shift.unsigned_abs()))
            .join("server.cwt");
        std::fs::create_dir_all(named.parent().unwrap()).unwrap();
        std::fs::rename(&moved, &named).unwrap();
        let r = bottleneck(&[&h.client, &named]);
        let got = r["caveats"]["hosts"][1]["clock"]["offset_ns"]
            .as_i64()
            .unwrap();
        assert!(
            (got - shift).abs() <= 200_000,
            "shifted by {shift} ns, estimated {got} ns"
        );
        check_joined(&r);
        assert_eq!(r["knots"][0]["vertices"], joined["knots"][0]["vertices"]);
    }
}

/// Three tiers on two hosts: host a runs lock-chain's client and its backend, host b
/// the app between them (`--listen` for the client, `--backend` to host a). Each
/// host's processes are recorded into its own trace.
fn record_three_tiers(zoo: &Zoo, net: &NetPair) -> (PathBuf, PathBuf) {
    let w = workload("lock-chain");
    let w = w.to_str().unwrap();
    let (back, front) = (
        format!("{}:{}", net.addr_a, PORT + 2),
        format!("{}:{}", net.addr_b, PORT + 1),
    );
    let ready = zoo.dir().join("app-listens");
    // Host a: the backend, then (once the app on b listens) the client.
    let script = format!(
        "{w} --serve-backend {back} --seconds 6 > /dev/null & \
         while [ ! -e {r} ]; do sleep 0.05; done; \
         {w} --connect {front} --seconds 2 > /dev/null; wait",
        r = ready.display()
    );
    let (a, b) = (zoo.dir().join("a.cwt"), zoo.dir().join("b.cwt"));
    let rec = |out: &Path, ns: &str, args: &[&str]| {
        let args: Vec<&OsStr> = args.iter().map(OsStr::new).collect();
        start_recording(out, ns, &args)
    };
    let host_a = rec(&a, &net.a, &["sh", "-c", &script]);
    NetPair::wait_listening(&net.a, PORT + 2);
    let host_b = rec(
        &b,
        &net.b,
        &[w, "--listen", &front, "--backend", &back, "--seconds", "3"],
    );
    NetPair::wait_listening(&net.b, PORT + 1);
    std::fs::write(&ready, b"").unwrap();
    finish_recording("host b", host_b);
    finish_recording("host a", host_a);
    (a, b)
}

#[test]
fn the_culprit_chain_goes_from_the_client_to_the_other_hosts_lock_and_back() {
    let _one = serial();
    let Some(zoo) = Zoo::start() else { return };
    let net = NetPair::new(1);
    let (a, b) = record_three_tiers(&zoo, &net);
    let d = analyse_json(
        &b,
        &[
            "diagnose",
            "--auto",
            "--json",
            "--thread",
            "client@a",
            a.to_str().unwrap(),
        ],
    );
    let findings = d["findings"].as_array().unwrap();
    let first = &findings[0];
    assert_eq!(first["vertex"]["thread"], "client@a", "{d:#}");
    // Each link: a LongWait of `thread` that is the culprit of `of`.
    let culprit = |of: &Value, thread: &str| -> Value {
        findings
            .iter()
            .find(|f| {
                f["culprit_of"] == of["vertex"]["id"]
                    && f["vertex"]["thread"] == thread
                    && f["case"] == "LongWait"
            })
            .cloned()
            .unwrap_or_else(|| panic!("{thread} is no culprit of {}: {d:#}", of["vertex"]))
    };
    // Where each waited, by its stack: the lock, the backend's reply, the sleep.
    let waits_in = |f: &Value, function: &str| {
        let frames = f["vertex"]["frames"].as_array().unwrap();
        assert!(
            frames.iter().any(|x| x == function),
            "{} waits outside {function}: {frames:?}",
            f["vertex"]["thread"]
        );
    };
    let requester = culprit(first, "requester@b");
    waits_in(&requester, "update_table");
    let holder = culprit(&requester, "holder@b");
    waits_in(&holder, "fetch_from_backend");
    let backend = culprit(&holder, "lk-backend@a");
    waits_in(&backend, "slow_lookup");
    assert_eq!(
        backend["note"],
        "slept until its own timer: the end of the chain"
    );
    // The same link in SQL, over both hosts' tables side by side: the client's waits
    // for replies were ended by data the requester of host b sent.
    let tables = zoo.dir().join("tables");
    for (host, trace) in [("a", &a), ("b", &b)] {
        let o = causeway()
            .args(["tables", "--host", host, "-o"])
            .arg(&tables)
            .arg(trace)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }
    let o = causeway()
        .args([
            "sql",
            "--json",
            "SELECT w.peer_host, t.comm AS sender, count(*) AS n FROM remote_waits w
             JOIN threads t ON t.host = w.peer_host AND t.tid = w.sender_tid
             WHERE w.host = 'a' GROUP BY w.peer_host, t.comm ORDER BY n DESC",
        ])
        .arg(&tables)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let rows: Value = serde_json::from_slice(&o.stdout).unwrap();
    let top = &rows[0];
    assert_eq!(top["peer_host"], "b", "{rows}");
    assert_eq!(top["sender"], "requester", "{rows}");
    assert!(top["n"].as_u64().unwrap() > 20, "{rows}");
}

/// A copy of the trace with every event `shift_ns` later (a clock running ahead).
fn shift_trace(from: &Path, to: &Path, shift_ns: i64) {
    let mut rd = TraceReader::open(from).unwrap();
    let t = rd.tables().clone();
    let out = std::fs::File::create(to).unwrap();
    let mut w = TraceWriter::new(std::io::BufWriter::new(out), rd.header()).unwrap();
    for s in &t.strings {
        w.intern(s);
    }
    for f in &t.frames {
        w.intern_frame(f.clone());
    }
    for s in &t.stacks {
        w.intern_stack(s.clone());
    }
    for f in &t.flows {
        w.intern_flow(*f);
    }
    let at = |ts: Timestamp| Timestamp(ts.0.saturating_add_signed(shift_ns));
    for th in &t.threads {
        w.add_thread(causeway_format::ThreadInfo {
            since: if th.since.0 == 0 {
                th.since
            } else {
                at(th.since)
            },
            ..th.clone()
        });
    }
    for p in &t.processes {
        w.add_process(causeway_format::ProcessInfo {
            since: if p.since.0 == 0 { p.since } else { at(p.since) },
            ..p.clone()
        });
    }
    for m in &t.mappings {
        w.add_mapping(m.clone());
    }
    for (k, v) in &rd.stats().counters.clone() {
        w.add_counter(k, *v);
    }
    for ev in rd.events() {
        let ev: Event = ev.unwrap();
        let kind = match ev.kind {
            causeway_format::EventKind::TimerArm {
                tid,
                timer,
                expires,
            } => causeway_format::EventKind::TimerArm {
                tid,
                timer,
                expires: expires.map(at),
            },
            k => k,
        };
        w.push(&Event {
            ts: at(ev.ts),
            kind,
            ..ev
        })
        .unwrap();
    }
    w.finish().unwrap();
}
