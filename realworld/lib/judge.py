"""Shared judging of the real-world cases, from causeway's --json output.

Each case's judge.py says what the right answer is (which threads, by process id and
thread name) and calls `judge_knot` (bottleneck) or `judge_chain` (diagnose); the
verdict and a one-line description of causeway's top finding go to OUT/result.json,
which realworld/run.sh collects into RESULTS.md.
"""

import hashlib
import json
import os
import re
import subprocess
import time


def load(path):
    with open(path) as f:
        return json.load(f)


def load_output(out, name):
    """An analysis's --json output, or None when it wrote none that parses (a crash, a
    refused trace): the case then fails and says so, with the analysis's stderr."""
    try:
        return load(os.path.join(out, name))
    except (OSError, ValueError):
        return None


def no_output(out, name):
    err = os.path.join(out, name.replace(".json", ".err"))
    text = open(err).read().strip().splitlines() if os.path.exists(err) else []
    return "no JSON from causeway (%s)" % (text[-1][:200] if text else "no error output")


class Want:
    """One expected member of an answer: a thread of process `pid` whose name matches
    `comm` (a regular expression), or a device whose kind is `device` ("disk")."""

    def __init__(self, role, pid=None, comm=None, device=None):
        self.role, self.pid, self.comm, self.device = role, pid, comm, device

    def thread_matches(self, pid, comm):
        if self.device:
            return False
        if self.pid is not None and int(pid) != int(self.pid):
            return False
        return self.comm is None or re.search(self.comm, comm or "") is not None

    def vertex_matches(self, v):
        kind = v.get("kind", {}).get("type")
        if self.device:
            return kind == self.device
        return any(self.thread_matches(t["pid"], t["comm"]) for t in v.get("threads", []))

    def __str__(self):
        if self.device:
            return "a %s" % self.device
        return "%s (%s%s)" % (self.role, "pid %s" % self.pid if self.pid else "any process",
                              ", thread /%s/" % self.comm if self.comm else "")


# ---- bottleneck ----------------------------------------------------------------------

def top_finding(doc):
    """The answer the report leads with: the first knot, else the first sink."""
    verts = {v["id"]: v for v in doc["vertices"]}
    if doc.get("knots"):
        k = doc["knots"][0]
        members = [verts[i] for i in k["vertices"]]
        return "knot", members, "knot {%s}" % ", ".join(v["label"] for v in members)
    if doc.get("sinks"):
        s = doc["sinks"][0]
        v = verts[s["vertex"]]
        advice = re.split(r" \(\d[\d.]*s of waiting", s.get("advice") or "")[0]
        return "sink", [v], "no knot; sink %s%s" % (v["label"], ": " + advice if advice else "")
    return None, [], "no knot and no sink"


def judge_knot(out, name, must, must_not=()):
    """Pass when the top finding of OUT/NAME (`bottleneck --json`) is a knot holding
    every `must` and no `must_not`. Returns (passed, the finding in words, why not)."""
    doc = load_output(out, name)
    if doc is None:
        return False, no_output(out, name), "the analysis failed"
    kind, members, desc = top_finding(doc)
    missing = [w for w in must if not any(w.vertex_matches(v) for v in members)]
    extra = [w for w in must_not if any(w.vertex_matches(v) for v in members)]
    ok = kind == "knot" and not missing and not extra
    if not ok:
        # Say where the right answer is, when the report has it further down.
        verts = {v["id"]: v for v in doc["vertices"]}
        for k in doc.get("knots", [])[1:]:
            ms = [verts[i] for i in k["vertices"]]
            if all(any(w.vertex_matches(v) for v in ms) for w in must) and \
                    not any(any(w.vertex_matches(v) for v in ms) for w in must_not):
                desc += " (the expected knot is knot %d: {%s})" % (
                    k["rank"], ", ".join(v["label"] for v in ms))
                break
    why = []
    if kind != "knot":
        why.append("the top finding is not a knot")
    why += ["missing %s" % w for w in missing]
    why += ["holds %s" % w for w in extra]
    return ok, desc, "; ".join(why)


def judge_sink(out, name, kind, chain_must):
    """Pass when the top finding of OUT/NAME (`bottleneck --json`) is a sink whose vertex
    is of `kind` (its `kind.type`: "cpu_quota", "disk", "timer", ...) and whose chain
    (the heaviest waits ending in it, first waiter to sink) holds every `chain_must`.
    The chain starts at the clients that wait on the server, so no `must_not` applies to
    it. Returns (passed, the finding in words, why not)."""
    doc = load_output(out, name)
    if doc is None:
        return False, no_output(out, name), "the analysis failed"
    verts = {v["id"]: v for v in doc["vertices"]}
    top, members, desc = top_finding(doc)
    sink = doc["sinks"][0] if top == "sink" else None
    chain = [verts[i] for i in sink["chain"] if i in verts] if sink else []
    if chain:
        desc += " (chain %s)" % " → ".join(
            ["the sink" if v["id"] == sink["vertex"] else v["label"] for v in chain])
    is_kind = bool(members) and members[0].get("kind", {}).get("type") == kind
    missing = [w for w in chain_must if not any(w.vertex_matches(v) for v in chain)]
    ok = top == "sink" and is_kind and not missing
    if not ok:
        # Say where the right answer is, when the report has it further down.
        for s in doc.get("sinks", [])[0 if top != "sink" else 1:]:
            v = verts[s["vertex"]]
            if v.get("kind", {}).get("type") == kind:
                desc += " (the %s sink is sink %d of %d: %s)" % (
                    kind, doc["sinks"].index(s) + 1, len(doc["sinks"]), v["label"])
                break
    why = []
    if top != "sink":
        why.append("the top finding is not a sink (a %s)" % (top or "nothing"))
    elif not is_kind:
        why.append("the top sink is not of kind %s (it is %s)" % (
            kind, members[0].get("kind", {}).get("type")))
    why += ["its chain misses %s" % w for w in missing] if top == "sink" and is_kind else []
    return ok, desc, "; ".join(why)


def finding_stacks(doc):
    """The frames (user and kernel, as the report names them) of the wait stacks on the
    top finding's edges: a knot's edges, or the edges into the top sink."""
    if doc.get("knots"):
        ids = doc["knots"][0]["edges"]
    elif doc.get("sinks"):
        ids = doc["sinks"][0]["edges"]
    else:
        return []
    edges = {e["id"]: e for e in doc["edges"]}
    frames = []
    for i in ids:
        for st in edges.get(i, {}).get("wait_stacks", []):
            frames += st.get("user", []) + st.get("kernel", [])
    return frames


def named_frames(frames, pattern):
    """The frames that name a function matching `pattern` (a regular expression), in
    order, each once: what a verdict's call sites say when symbols were resolved, where
    a bare address would not match."""
    seen = []
    for f in frames:
        if re.search(pattern, f) and f not in seen:
            seen.append(f)
    return seen


# ---- diagnose ------------------------------------------------------------------------

def chain_vertices(doc):
    """Every vertex the diagnosis put on its chain: the findings (problem, culprits, the
    culprits' culprits), the steps of their slices, and any hop list at the top level."""
    out = []

    def walk(x):
        if isinstance(x, dict):
            if "tid" in x and "pid" in x and ("thread" in x or "comm" in x):
                out.append(x)
            for v in x.values():
                walk(v)
        elif isinstance(x, list):
            for v in x:
                walk(v)

    for f in doc.get("findings", []):
        walk(f.get("vertex"))
        walk(f.get("slice"))
        walk(f.get("flag_writer"))
    for key in ("verdict", "chain", "culprit_chain", "hops"):
        walk(doc.get(key))
    return out


def culprit_line(doc, most=6):
    """The findings in order, one name per thread: what the report says the chain is
    (the first `most` of them, and how many more)."""
    names = []
    for f in doc.get("findings", []):
        v = f["vertex"]
        n = "%s (%s)" % (v.get("thread"), v.get("tid"))
        if n not in names:
            names.append(n)
    if not names:
        return "no finding"
    more = " ← … (%d more)" % (len(names) - most) if len(names) > most else ""
    return " ← ".join(names[:most]) + more


def judge_chain(out, name, hops):
    """Pass when the diagnosis in OUT/NAME (`diagnose --json`) visits every hop."""
    doc = load_output(out, name)
    if doc is None:
        return False, no_output(out, name), "the analysis failed"
    seen = chain_vertices(doc)
    missing = [h for h in hops
               if not any(h.thread_matches(v["pid"], v.get("thread") or v.get("comm"))
                          for v in seen)]
    ok = not missing and bool(doc.get("findings"))
    why = "; ".join("missing %s" % h for h in missing)
    return ok, culprit_line(doc), why


def ps_snapshot(out, name):
    """A `ps -eo pid=,ppid=,comm=` snapshot a case took during its run: {pid: (ppid,
    comm)}."""
    rows = {}
    for line in open(os.path.join(out, name)):
        pid, ppid, comm = line.split(None, 2)
        rows[int(pid)] = (int(ppid), comm.strip())
    return rows


def verdict_line(doc):
    """The verdict as a user reads it: each hop's thread, what it waited on, and how it
    was found."""
    hops = []
    for h in doc.get("chain", []):
        v = h.get("vertex", {})
        how = " [%s]" % h["found_as"] if h.get("found_as") else ""
        hops.append("%s (%s) %s%s" % (v.get("thread"), v.get("tid"), h.get("kind"), how))
    return " ← ".join(hops) if hops else "no verdict"


def judge_verdict(out, name, hops):
    """Pass when the verdict of the diagnosis in OUT/NAME (`diagnose --json`, its `chain`:
    what the report's first lines say) names every hop, in order (other hops may come
    between); the evidence below it does not count."""
    doc = load_output(out, name)
    if doc is None:
        return False, no_output(out, name), "the analysis failed"
    chain = [h.get("vertex", {}) for h in doc.get("chain", [])]
    at, missing = 0, []
    for want in hops:
        k = next((i for i in range(at, len(chain))
                  if chain[i].get("pid") is not None
                  and want.thread_matches(chain[i]["pid"], chain[i].get("thread"))), None)
        if k is None:
            missing.append(want)
        else:
            at = k + 1
    why = "; ".join("the verdict does not name %s (in order)" % h for h in missing)
    return not missing and bool(chain), verdict_line(doc), why


def judge_verdict_roles(out, name, roles):
    """judge_verdict for hops given as roles, each a list of the process ids a case found
    for it in its `ps` snapshots: a role with none or several fails the case by name.
    Returns (ok, finding, why)."""
    bad = [r for r, pids in roles.items() if len(pids) != 1]
    hops = [Want(r, pid=pids[0]) for r, pids in roles.items() if len(pids) == 1]
    ok, finding, why = judge_verdict(out, name, hops)
    if bad:
        ok, why = False, "could not identify %s from the ps snapshots" % ", ".join(bad)
    return ok, finding, why


# ---- result --------------------------------------------------------------------------

def machine():
    for line in subprocess.run(["lscpu"], capture_output=True, text=True).stdout.splitlines():
        if line.startswith("Model name:"):
            return line.split(":", 1)[1].strip()
    return "unknown"


def binary_id(out):
    """The binary the case ran (run.sh's private copy) and where it came from."""
    path = os.path.join(os.path.dirname(os.path.abspath(out)), ".bin", "causeway")
    if not os.path.exists(path):
        return None
    with open(path, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()[:12]
    # The file name and hash, never the directory: results are committed, and a path
    # names the machine they ran on.
    name = os.path.basename(os.environ.get("CAUSEWAY", "target/release/causeway"))
    return "%s (sha256 %s)" % (name, digest)


def load_average(out):
    """The machine's load when the case started (rw_start saved it): other work running
    beside a case changes its figures."""
    path = os.path.join(out, "loadavg")
    text = open(path).read() if os.path.exists(path) else open("/proc/loadavg").read()
    return " ".join(text.split()[:3])


def cpu_pressure(out):
    """The share of time some task waited for a CPU since the case started (PSI "cpu
    some"), or None without PSI: a figure measured beside other load moves with it."""
    try:
        since, total = (float(x) for x in open(os.path.join(out, "psi-start")).read().split())
        now = float(open("/proc/uptime").read().split()[0])
        line = next(l for l in open("/proc/pressure/cpu") if l.startswith("some "))
        total_now = float(line.split("total=")[1])
    except (OSError, ValueError, StopIteration, IndexError):
        return None
    return (total_now - total) / 1e6 / (now - since) if now > since else None


def write_result(out, case, program, expected, finding, ok, why, extra=None):
    fix_path = os.path.join(out, "fix.json")
    res = {
        "case": case,
        "program": program,
        "expected": expected,
        "finding": finding,
        "pass": bool(ok),
        "why": why,
        "fix": load(fix_path) if os.path.exists(fix_path) else None,
        "prediction": load(os.path.join(out, "whatif.json"))
        if os.path.exists(os.path.join(out, "whatif.json")) else None,
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "cpu": "%s, %d CPUs" % (machine(), os.cpu_count()),
        "load_average": load_average(out),
        "cpu_pressure": cpu_pressure(out),
        "causeway": binary_id(out),
    }
    if extra:
        res.update(extra)
    with open(os.path.join(out, "result.json"), "w") as f:
        json.dump(res, f, indent=1)
    print("%s: %s" % (case, "PASS" if ok else "FAIL"))
    print("  expected: %s" % expected)
    print("  causeway: %s" % finding)
    if why:
        print("  why:      %s" % why)
    return 0 if ok else 1

