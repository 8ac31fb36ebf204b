"""caddy-gzip: the top finding must hold Caddy's threads, and no thread of hey.

With `encode gzip` Caddy compresses the 1.2 MB file for every request on the request's
goroutine (compress/flate), so Caddy's threads are busy or waiting for a CPU, and hey's
connections wait for their replies. The answer is Caddy's own work: a knot of Caddy's
threads (the Go runtime's threads hand goroutines to each other through futexes and
the network poller), or a sink that is a Caddy thread. hey's threads wait on the
server: they belong outside it.

Both binaries are Debian's, stripped, built with Go 1.19 (binaries.txt): whether
causeway follows their goroutines depends on the Go versions it reads; record.log and
info.txt say whether it did, and the result carries that line.
"""
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
import judge  # noqa: E402

out, server, hey = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
must = [judge.Want("caddy", pid=server)]
must_not = [judge.Want("load generator (hey)", pid=hey)]
doc = judge.load_output(out, "bottleneck.json")
if doc is None:
    ok, finding, why = False, judge.no_output(out, "bottleneck.json"), "the analysis failed"
else:
    kind, members, finding = judge.top_finding(doc)
    missing = [w for w in must if not any(w.vertex_matches(v) for v in members)]
    extra = [w for w in must_not if any(w.vertex_matches(v) for v in members)]
    ok = kind in ("knot", "sink") and not missing and not extra
    why = "; ".join(["missing %s" % w for w in missing] + ["holds %s" % w for w in extra] +
                    ([] if kind in ("knot", "sink") else ["no knot and no sink"]))
    if kind == "sink" and ok:
        why = "a sink (Caddy's own work), not a knot"
# Did the recorder follow the Go programs' goroutines?
goroutines = ""
for name in ("record.log", "info.txt"):
    p = os.path.join(out, name)
    if os.path.exists(p):
        for line in open(p):
            if re.search(r"(?i)goroutine|\bGo\b", line):
                goroutines = line.strip()[:300]
                break
    if goroutines:
        break
if not ok and "without goroutine events" in goroutines:
    m = re.search(r"\((go[\d.]+: [^)]*\([^)]*\))\)", goroutines)
    why += "; the recorder followed no goroutine (%s)" % (m.group(1) if m else goroutines)
binaries = open(os.path.join(out, "binaries.txt")).read() if os.path.exists(
    os.path.join(out, "binaries.txt")) else ""
sys.exit(judge.write_result(
    out, "caddy-gzip", "Caddy 2.6.2 (Debian caddy 2.6.2-5, stripped, Go 1.19.8); load: hey 0.1.4 (Debian)",
    "Caddy's threads (compress/flate of every response), CPU; no hey thread",
    finding, ok, why, extra={"goroutines": goroutines, "binaries": binaries}))
