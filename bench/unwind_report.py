#!/usr/bin/env python3
"""Tables for bench/unwind.sh: reads the raw outputs in the directory given and
prints markdown on stdout. See the comments at the top of unwind.sh for what is
measured and how.

`unwind_report.py --pid EXEC_JSONL PROGRAM` prints the pid of the process that
exec'd PROGRAM, from `causeway dump --json --kind exec` lines (used by unwind.sh).
"""

import collections
import json
import os
import re
import sys

# A stack that reaches one of these holds the whole call path of its thread.
ROOTS = {"main", "start_thread", "clone3", "__clone3", "_start", "__libc_start_call_main"}
# Names of the perf configurations of unwind.sh in the tables.
PERF_LABELS = {"perf": "perf dwarf 8K", "perf64k": "perf dwarf 64K"}
# The launched child before exec (the tracer's own code, or the shell of a `deb-`
# pipe, not the workload's).
PRE_EXEC = {"causeway", "perf", "perf-exec", "sh"}


def read(path):
    try:
        with open(path, errors="replace") as f:
            return f.read()
    except OSError:
        return ""


def exec_pid(path, program):
    for line in read(path).splitlines():
        try:
            ev = json.loads(line)
        except ValueError:
            continue
        if ev.get("filename") == program:
            return ev["tid"]
    return 0


def sym_name(text):
    """Function name of a frame as `causeway dump --stacks` or `perf script` prints it."""
    text = text.strip()
    m = re.match(r"^(\S+?)\+0x[0-9a-f]+(\s|$)", text)
    if m:
        return m.group(1)
    return text.split(" ", 1)[0]


class Stack:
    __slots__ = ("comm", "tid", "user", "truncated", "blocking")

    def __init__(self, comm, tid, user, truncated, blocking=True):
        self.comm, self.tid, self.user, self.truncated, self.blocking = comm, tid, user, truncated, blocking


def causeway_stacks(text):
    """Switch-out stacks from `causeway dump --stacks --kind stack` text: the event
    line gives the frame counts (kernel frames are printed first), then one tab-indented
    line per frame, and `... (stack cut short)` after a truncated stack."""
    out = []
    lines = text.splitlines()
    hdr = re.compile(r"^\s*\d+\.\d+ \[\d+\] stack\s+(.*)/(\d+) (\w+) user (\d+) frames, kernel (\d+) frames")
    i = 0
    while i < len(lines):
        m = hdr.match(lines[i])
        i += 1
        if not m:
            continue
        comm, tid, kind, nu, nk = m.group(1), int(m.group(2)), m.group(3), int(m.group(4)), int(m.group(5))
        body = []
        while i < len(lines) and lines[i].startswith("\t"):
            body.append(lines[i][1:])
            i += 1
        # Lines `X (inlined) ...` name functions inlined at the next frame: they are
        # extra lines, not counted in the header's frame counts.
        def take(pos, n):
            got = []
            while pos < len(body) and n > 0:
                got.append(body[pos])
                if not re.match(r"^\S+ \(inlined\)", body[pos]):
                    n -= 1
                pos += 1
            return got, pos
        _, pos = take(0, nk)
        if pos < len(body) and body[pos].startswith("... (stack cut short)"):
            pos += 1
        ub, end = take(pos, nu)
        user = [sym_name(b) for b in ub]
        cut = end < len(body) and body[end].startswith("... (stack cut short)")
        if kind == "SwitchOut":
            out.append(Stack(comm, tid, user, cut))
    return out


def perf_stacks(text, pid):
    """sched_switch samples of process `pid` from `perf script -F
    comm,pid,tid,event,trace,ip,sym,dso`: a header line, then one tab-indented line per
    frame (`addr sym (dso)`), kernel frames first; samples end with a blank line."""
    out = []
    hdr = re.compile(r"^(.*?)\s+(\d+)/(\d+)\s+\S+:\s*(.*)$")
    cur = None
    for line in text.splitlines():
        if line.startswith("\t"):
            if cur is None:
                continue
            m = re.match(r"^\s*[0-9a-f]+ (.*) \((.*)\)$", line)
            if m and not m.group(2).startswith("[kernel"):
                cur.user.append(sym_name(m.group(1)))
            continue
        m = hdr.match(line)
        if not m:
            cur = None
            continue
        comm, p, tid, trace = m.group(1).strip(), int(m.group(2)), int(m.group(3)), m.group(4)
        st = re.search(r"prev_state=(\S+)", trace)
        blocking = st is not None and not st.group(1).startswith("R")
        cur = Stack(comm, tid, [], False, blocking)
        if p == pid:
            out.append(cur)
    return out


def reaches(s, pid):
    """Does the stack reach main or its thread's start? A stack of `clone3` alone is a
    new thread's first frame, except in the main thread (pid == tid), which only calls
    clone3 to create threads: there it is an unwind that stopped."""
    if s.user == ["clone3"] and s.tid == pid:
        return False
    return bool(ROOTS.intersection(s.user))


def completeness(stacks, pid):
    mine = [s for s in stacks if s.comm not in PRE_EXEC]
    n = len(mine)
    full = sum(1 for s in mine if reaches(s, pid))
    empty = sum(1 for s in mine if not s.user)
    cut = sum(1 for s in mine if s.truncated)
    others = [s for s in mine if not reaches(s, pid)]
    outer = collections.Counter((s.user[-1] if s.user else "(no user frame)") for s in others)
    threads = collections.Counter(re.sub(r"-\d+$", "-N", s.comm) for s in others)
    return n, full, empty, cut, outer, threads


def pct(a, b):
    return f"{100 * a / b:.1f}%" if b else "—"


def report(d):
    runs = [line.split("\t") for line in read(os.path.join(d, "runs.tsv")).splitlines() if line]
    print("## User stack unwinding: raw results\n")
    print("```")
    print(read(os.path.join(d, "header.txt")).rstrip())
    print("```\n")

    print("### Completeness of switch-out stacks (the workload's threads)\n")
    print("Reaches = some user frame is one of " + ", ".join(f"`{r}`" for r in sorted(ROOTS)) + ". "
          "causeway records stacks on blocking switch-outs only; perf samples every switch-out, "
          "so its rows are given for all samples and for blocking ones (`prev_state` not R).\n")
    print("| workload | variant | config | load | switch-out stacks | **reach main / thread start** | "
          "no user frame | marked cut short | outermost frame of the others (top 3) | threads of the others |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    sizes = []
    summary = {}
    for wl, var, cfg, base, nbytes, load in runs:
        nbytes = int(nbytes)
        if cfg.startswith("perf"):
            # The workload's pid: that of the samples named after the program.
            comm = os.path.basename(read(base + ".prog").strip() or wl)[:15]
            text = read(base + ".stacks")
            pids = collections.Counter(
                int(m.group(1)) for m in re.finditer(r"^" + re.escape(comm) + r"\s+(\d+)/\d+ ", text, re.M)
            )
            pid = pids.most_common(1)[0][0] if pids else 0
            all_st = perf_stacks(text, pid)
            label = PERF_LABELS.get(cfg, cfg)
            groups = [(f"{label}, all switch-outs", all_st),
                      (f"{label}, blocking only", [s for s in all_st if s.blocking])]
            samples = sum(1 for s in all_st)
            m = re.search(r"\((\d+) samples\)", read(base + ".err"))
            written = int(m.group(1)) if m else None
            sizes.append((wl, var, cfg, load, nbytes, None, written, samples))
        else:
            groups = [(cfg, causeway_stacks(read(base + ".stacks")))]
            pid = exec_pid(base + ".exec", read(base + ".prog").strip())
            try:
                info = json.loads(read(base + ".info"))
            except ValueError:
                info = {}
            sizes.append((wl, var, cfg, load, nbytes, info, None, None))
        for name, sts in groups:
            n, full, empty, cut, outer, threads = completeness(sts, pid)
            if not name.endswith("all switch-outs"):
                summary.setdefault((wl, var), {})[cfg] = (n, full)
            top = ", ".join(f"`{k}` {v}" for k, v in outer.most_common(3)) or "—"
            thr = ", ".join(f"{k} {v}" for k, v in threads.most_common(3)) or "—"
            print(f"| {wl} | {var} | {name} | {load} | {n:,} | **{pct(full, n)}** ({full:,}) | {pct(empty, n)} "
                  f"| {pct(cut, n)} | {top} | {thr} |")
    print()

    cfgs = list(dict.fromkeys(r[2] for r in runs))
    print("### Summary: blocking switch-out stacks that reach main / thread start\n")
    print("| workload | variant | " + " | ".join(PERF_LABELS.get(c, c) + (" (blocking)" if c.startswith("perf") else "")
                                              for c in cfgs) + " |")
    print("|---|---|" + "---|" * len(cfgs))
    for (wl, var), by_cfg in summary.items():
        cells = []
        for c in cfgs:
            n, full = by_cfg.get(c, (0, 0))
            cells.append(f"{pct(full, n)} of {n:,}" + (" ✓" if n and full >= 0.95 * n else ""))
        print(f"| {wl} | {var} | " + " | ".join(cells) + " |")
    print("\n(✓: at least 95%.)\n")

    print("### Copies, ring and trace sizes\n")
    print("causeway: counters from `causeway info` (the whole recording); ring bytes/stack = "
          "bytes/stack + the 64-byte REC_USTACK header (a copy goes to its CPU's spool, "
          "whole 8-byte words, no per-record header) "
          "(the copy is dropped once unwound). perf: samples written per `perf record`.\n")
    print("| workload | variant | config | stack copies | **bytes copied/stack** | ring bytes/stack | "
          "unwind outcomes | events | stack events | trace / perf.data bytes | bytes/event (perf: /sample) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for wl, var, cfg, load, nbytes, info, written, samples in sizes:
        if info is None:
            print(f"| {wl} | {var} | {cfg} | — | — | — | — | {written if written is not None else samples:,} "
                  f"| {samples:,} (this pid) | {nbytes:,} | {nbytes / written if written else 0:,.0f} |")
            continue
        c = info.get("counters", {})
        copies, copied = c.get("user_stack_copies", 0), c.get("user_stack_bytes_copied", 0)
        outcomes = ", ".join(f"{k.replace('unwind_', '')} {v:,}" for k, v in sorted(c.items()) if k.startswith("unwind_")) or "—"
        ev = info.get("events", 0)
        stacks = info.get("events_by_kind", {}).get("stack", 0)
        bps = copied / copies if copies else None
        print(f"| {wl} | {var} | {cfg} | {copies:,} | **{bps:,.0f}** | {bps + 64:,.0f} | {outcomes} | {ev:,} | {stacks:,} "
              f"| {nbytes:,} | {nbytes / ev if ev else 0:.2f} |"
              if bps is not None else
              f"| {wl} | {var} | {cfg} | 0 | — | — | {outcomes} | {ev:,} | {stacks:,} | {nbytes:,} | {nbytes / ev if ev else 0:.2f} |")
    print()


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--pid":
        print(exec_pid(sys.argv[2], sys.argv[3]))
    else:
        report(sys.argv[1])
