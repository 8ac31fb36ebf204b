#!/usr/bin/env python3
"""Tables for bench/overhead.sh: reads the raw outputs in the directory given
and prints markdown on stdout. See the comments at the top of overhead.sh for
what is measured and how."""

import json
import os
import re
import statistics
import sys

D = sys.argv[1]
WL_TITLE = {
    "pingpong": "ping-pong (bench/pingpong.c, 1 pair, both threads on one CPU)",
    "net": "blocking-net (defaults: 4 clients, 1 server thread)",
    "net-fixed": "blocking-net --fixed (4 server threads)",
}
# What each configuration of overhead.sh runs (keep in step with cw_opts there).
CFG_DESC = {
    "base": "workload alone",
    "causeway": "`causeway record` (defaults: `--events default`, all groups but syscall; "
    "user stacks `--unwind dwarf --stack-mode all --stack-depth 32`)",
    "causeway-all": "`--events all` (adds syscall enter/exit)",
    "causeway-sched": "`--events sched`",
    "causeway-app": "`--stack-mode app`",
    "causeway-kall": "`--kernel-stacks all`",
    "causeway-old": "`--events all --kernel-stacks all --stacks-on switch,waker,syscall` (defaults of two builds ago)",
    "causeway-ref": "the defaults, with the reference build (`CAUSEWAY_REF`)",
    "causeway-fp": "`--unwind fp --stack-mode app-all --stack-depth 8` (frame-pointer stacks, the defaults before DWARF)",
    "perf": "`perf record -e sched:sched_switch -e sched:sched_waking -g`",
}


def read(path):
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return ""


def parse_json_summary(text):
    """causeway record --json prints a JSON object after the workload's output."""
    start = text.find("\n{")
    start = start + 1 if start >= 0 else (0 if text.startswith("{") else -1)
    if start < 0:
        return None
    try:
        obj, _ = json.JSONDecoder().raw_decode(text[start:])
        return obj
    except ValueError:
        return None


def parse_run(wl, rnd, cfg, base, nbytes, real):
    out, err = read(base + ".out"), read(base + ".err")
    r = {"wl": wl, "round": rnd, "cfg": cfg, "bytes": int(nbytes), "real": float(real)}
    # `causeway record --json -- CMD` sends the command's stdout to stderr (so that
    # stdout is JSON only); older builds and the other configurations print it on stdout.
    m = re.search(r"^throughput: ([0-9.]+) ops/s", out + "\n" + err, re.M)
    r["thr"] = float(m.group(1)) if m else None
    m = re.search(r"pingpong: ops=(\d+) wall_s=([0-9.]+) cpu_s=([0-9.]+) parent_cpu_s=([0-9.]+)", err)
    if m:
        r["ops"], r["wall"], r["cpu"], r["pcpu"] = int(m.group(1)), *map(float, m.groups()[1:])
    m = re.search(r"blocking-net: .* (\d+) requests", err)
    if m:
        r["ops"] = int(m.group(1))
    if cfg.startswith("causeway"):
        s = parse_json_summary(out)
        if s:
            r["events"], r["lost"] = s.get("events"), s.get("lost")
            # `duration_ns` since every JSON counts time in ns; `seconds` before.
            ns = s.get("duration_ns")
            r["seconds"] = ns / 1e9 if ns is not None else s.get("seconds")
            r["exit"] = s.get("command_exit_code")
        else:
            r["error"] = (err.strip().splitlines() or ["no summary"])[-1]
        info = read(base + ".info")
        if info:
            try:
                r["info"] = json.loads(info)
            except ValueError:
                pass
    if cfg == "perf":
        m = re.search(r"\((\d+) samples\)", err)
        r["events"] = int(m.group(1)) if m else None
        m = re.search(r"lost (\d+) chunks", err)
        r["lost_chunks"] = int(m.group(1)) if m else 0
        stats = read(base + ".stats")
        per_event = stats.split("stats:", 1)[1] if "stats:" in stats else ""
        r["lost"] = sum(int(x) for x in re.findall(r"LOST_SAMPLES events:\s+(\d+)", per_event))
    return r


runs = []
for line in read(os.path.join(D, "runs.tsv")).splitlines():
    runs.append(parse_run(*line.split("\t")))


def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def fmt(x, spec=",.0f", none="—"):
    return none if x is None else format(x, spec)


print("## Recorder overhead: raw results\n")
print("```")
print(read(os.path.join(D, "header.txt")).rstrip())
print("```\n")

used = {r["cfg"] for r in runs}
print("Configurations: " + "; ".join(f"**{c}** {d}" for c, d in CFG_DESC.items() if c in used) + ".\n")

verdicts = []
for wl in [w for w in WL_TITLE if any(r["wl"] == w for r in runs)]:
    rs = [r for r in runs if r["wl"] == wl]
    cfgs = []
    for r in rs:
        if r["cfg"] not in cfgs:
            cfgs.append(r["cfg"])
    by = {c: [r for r in rs if r["cfg"] == c] for c in cfgs}
    thr = {c: med([r["thr"] for r in by[c]]) for c in cfgs}
    b = thr.get("base")
    ovh = {c: (100 * (b - thr[c]) / b if b and thr[c] else None) for c in cfgs}
    print(f"### {WL_TITLE[wl]}\n")
    print("| configuration | median ops/s | min–max ops/s | overhead vs base | ÷ perf's overhead "
          "| events/run (median) | events/op | lost (sum of rounds) | trace (median) | bytes/event |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for c in cfgs:
        xs = [r["thr"] for r in by[c] if r["thr"] is not None]
        ev = med([r.get("events") for r in by[c]])
        epo = med([r["events"] / r["ops"] for r in by[c] if r.get("events") and r.get("ops")])
        lost = sum((r.get("lost") or 0) for r in by[c]) if c != "base" else None
        chunks = sum(r.get("lost_chunks", 0) for r in by[c])
        nb = med([r["bytes"] for r in by[c]]) if c != "base" else None
        bpe = med([r["bytes"] / r["events"] for r in by[c] if r.get("events")])
        ratio = (ovh[c] / ovh["perf"]) if c.startswith("causeway") and ovh.get("perf") and ovh[c] is not None else None
        lost_s = "—" if lost is None else f"{lost:,}" + (f" ({chunks} chunks)" if chunks else "")
        print(f"| {c} | {fmt(thr[c])} | {fmt(min(xs) if xs else None)}–{fmt(max(xs) if xs else None)} "
              f"| {fmt(ovh[c], '+.1f')}% | {fmt(ratio, '.2f')} | {fmt(ev)} | {fmt(epo, '.1f')} "
              f"| {lost_s} | {fmt(nb / 1e6 if nb else None, '.1f')} MB | {fmt(bpe, '.1f')} |")
    errs = [r for r in rs if r.get("error") or (r["thr"] is None)]
    for r in errs:
        print(f"\n**run failed**: {r['cfg']} round {r['round']}: {r.get('error', 'no throughput line')}")
    print()
    for c in ("causeway", "causeway-ref", "causeway-all", "causeway-fp"):
        if ovh.get(c) is not None and ovh.get("perf"):
            verdicts.append((wl, c, ovh[c], ovh["perf"]))

    # Per-event cost, from the ping-pong (see overhead.sh).
    if wl == "pingpong" and "base" in by:
        base_cpu = med([(r["cpu"] + r["pcpu"]) / r["ops"] for r in by["base"] if r.get("ops")])
        base_wall = med([r["wall"] / r["ops"] for r in by["base"] if r.get("ops")])
        print("Per-event cost (ping-pong; CPU = workload getrusage + tracer process CPU in the "
              "same window; medians over the rounds):\n")
        perf_add = None
        if by.get("perf"):
            pc = med([(r["cpu"] + r["pcpu"]) / r["ops"] for r in by["perf"] if r.get("ops")])
            perf_add = pc - base_cpu if pc is not None and base_cpu is not None else None
        print("| configuration | events/op | wall µs/op | CPU µs/op (workload + tracer) | tracer user-space CPU µs/op "
              "| added CPU µs/op | ÷ perf's added CPU | **CPU ns/event** | wall ns/event |")
        print("|---|---|---|---|---|---|---|---|---|")
        for c in cfgs:
            ok = [r for r in by[c] if r.get("ops")]
            wall = med([r["wall"] / r["ops"] for r in ok])
            cpu = med([(r["cpu"] + r["pcpu"]) / r["ops"] for r in ok])
            pcpu = med([r["pcpu"] / r["ops"] for r in ok])
            epo = med([r["events"] / r["ops"] for r in ok if r.get("events")])
            cpu_ev = med([((r["cpu"] + r["pcpu"]) / r["ops"] - base_cpu) / (r["events"] / r["ops"]) * 1e9
                          for r in ok if r.get("events")]) if c != "base" else None
            wall_ev = med([(r["wall"] / r["ops"] - base_wall) / (r["events"] / r["ops"]) * 1e9
                           for r in ok if r.get("events")]) if c != "base" else None
            add = cpu - base_cpu if c != "base" and cpu is not None and base_cpu is not None else None
            rel = add / perf_add if add is not None and perf_add and c != "perf" else None
            print(f"| {c} | {fmt(epo, '.1f')} | {fmt(wall * 1e6 if wall else None, '.2f')} "
                  f"| {fmt(cpu * 1e6 if cpu else None, '.2f')} | {fmt(pcpu * 1e6 if pcpu is not None else None, '.2f')} "
                  f"| {fmt(add * 1e6 if add is not None else None, '.2f')} | {fmt(rel, '.2f')} "
                  f"| {fmt(cpu_ev, ',.0f')} | {fmt(wall_ev, ',.0f')} |")
        print()

    # Recorder counters (user stacks copied and unwound) of the default and
    # frame-pointer configurations, summed over the rounds.
    for c in ("causeway", "causeway-ref", "causeway-fp"):
        tot = {}
        for r in by.get(c, []):
            for k, v in r.get("info", {}).get("counters", {}).items():
                tot[k] = tot.get(k, 0) + v
        if tot:
            copies = tot.get("user_stack_copies", 0)
            per = f"; {tot.get('user_stack_bytes_copied', 0) / copies:,.0f} bytes copied per stack" if copies else ""
            print(f"Recorder counters of `{c}` (sum over {len(by[c])} runs): "
                  + ", ".join(f"{k} {v:,}" for k, v in sorted(tot.items())) + per + "\n")

    # Events by kind in the last default causeway run.
    infos = [r for r in by.get("causeway", []) if r.get("info")]
    if infos:
        info = infos[-1]["info"]
        kinds = info.get("events_by_kind", {})
        tot = sum(kinds.values()) or 1
        top = sorted(kinds.items(), key=lambda kv: -kv[1])
        print(f"Events by kind in the last `causeway` run ({info.get('events', 0):,} events, "
              f"{info.get('lost_events', 0)} lost per the trace): "
              + ", ".join(f"{k} {v:,} ({100 * v / tot:.0f}%)" for k, v in top[:8]) + "\n")

# ---- eBPF statistics --------------------------------------------------------------
bpf_runs = sorted(
    (os.path.join(D, "runs", f[: -len(".mode")]) for f in os.listdir(os.path.join(D, "runs")) if f.startswith("bpfstats.") and f.endswith(".mode")),
    key=lambda b: int(b.rsplit(".", 1)[1]),
)
if bpf_runs:
    MAIN = ["sched_switch", "sched_waking", "sys_enter", "sys_exit"]
    print("### In-kernel eBPF time (kernel.bpf_stats_enabled, one ping-pong run per setting)\n")
    print("`bpftool prog show` snapshot at the end of the ping-pong window; ns/event = all of "
          "causeway's eBPF time / events recorded in the run.\n")
    print("| build | `causeway record` options | ops/s | events/op | lost | IRQ work interrupts/op | eBPF µs/op | eBPF ns/event | "
          + " | ".join(f"ns/run {n}" for n in MAIN) + " |")
    print("|---|---|---|---|---|---|---|---|" + "---|" * len(MAIN))
    for base in bpf_runs:
        mode = read(base + ".mode").strip()
        which = read(base + ".bin").strip() or "new"
        iwi = read(base + ".iwi").strip()
        bs = parse_run("pingpong", "0", "causeway", base, 0, 0)
        after = read(base + ".after.json")
        if not after or not bs.get("ops"):
            print(f"| {which} | {mode} | failed: {bs.get('error', 'no statistics')} |")
            continue
        old = {p["id"] for p in json.loads(read(base + ".before.json") or "[]")}
        progs = [p for p in json.loads(after) if p["id"] not in old and p.get("run_cnt")]
        tot = sum(p["run_time_ns"] for p in progs)
        per = {p["name"].split("_", 1)[1]: p["run_time_ns"] / p["run_cnt"] for p in progs}
        ev = bs.get("events")
        iwi_op = int(iwi) / bs["ops"] if iwi.lstrip("-").isdigit() else None
        print(f"| {which} | `{mode}` | {fmt(bs.get('thr'))} | {fmt(ev / bs['ops'] if ev else None, '.1f')} | {fmt(bs.get('lost'))} "
              f"| {fmt(iwi_op, '.2f')} | {tot / bs['ops'] / 1e3:.2f} | {fmt(tot / ev if ev else None)} | "
              + " | ".join(fmt(per.get(n)) for n in MAIN) + " |")
    print()

# ---- events/s scan ------------------------------------------------------------------
scan = [r for r in runs if r["wl"].startswith("scan-")]
if scan:
    print("### Events/s sustained (ping-pong with N pairs under `causeway record`)\n")
    print("| mode | pairs | ops/s | events recorded | lost | recording s (summary) | events/s recorded (per ping-pong s) | "
          "events/s offered (recorded + lost) | tracer CPU s |")
    print("|---|---|---|---|---|---|---|---|---|")
    best = {}
    for r in scan:
        mode = r["wl"][5:]
        ev, lost, secs = r.get("events"), r.get("lost"), r.get("seconds")
        # Rate over the ping-pong's own window (the recording also spans
        # start-up and shutdown, where almost nothing happens).
        win = r.get("wall")
        rate = ev / win if ev is not None and win else None
        offered = (ev + (lost or 0)) / win if ev is not None and win else None
        print(f"| {mode} | {r['round']} | {fmt(r['thr'])} | {fmt(ev)} | {fmt(lost)} | {fmt(secs, '.2f')} "
              f"| {fmt(rate)} | {fmt(offered)} | {fmt(r.get('pcpu'), '.2f')} |")
        if lost == 0 and rate:
            best[mode] = max(best.get(mode, 0), rate)
        if r.get("error"):
            print(f"| {mode} | {r['round']} | failed: {r['error']} |")
    print()
    print("Highest rate with lost == 0: "
          + "; ".join(f"{m} {v:,.0f} events/s" for m, v in best.items())
          + " (all = `--events all`; light = `--events sched --stack-mode none --kernel-stacks none`).\n")

# ---- goals ----------------------------------------------------------------------------
if verdicts:
    print("### Against the goals\n")
    for wl, c, oc, op in verdicts:
        half = ("met" if oc <= op / 2 else "NOT met") if op > 0 else "n/a (perf showed no overhead)"
        line = f"- {WL_TITLE[wl]}: {c} {oc:+.1f}%, perf {op:+.1f}% → ≤ ½ of perf's overhead: **{half}**"
        if wl.startswith("net"):
            line += f"; < 3%: **{'met' if oc < 3 else 'NOT met'}**"
        print(line)
    print()
