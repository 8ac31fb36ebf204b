"""Summarize bench/inproc_python.sh raw lines: VERSION WORK RUN MODE CALLS S NS_PER_CALL.
Per (version, work, mode): min and median ns per call, the overhead over base (min and
median of the per-run differences) and causeway's overhead as a share of VizTracer's."""

import statistics
import sys
from collections import defaultdict

rows = defaultdict(list)  # (ver, work, mode) -> [(run, ns)]
for line in open(sys.argv[1]):
    f = line.split()
    if len(f) != 7:
        continue
    ver, work, run, mode, _calls, _s, ns = f
    rows[(ver, int(work), mode)].append((int(run), float(ns)))

keys = sorted({(v, w) for v, w, _ in rows})
print(f"{'python':>6} {'work':>4} {'mode':<14} {'ns/call min':>11} {'median':>8} "
      f"{'overhead min':>12} {'median':>8} {'vs viztracer':>12}")
for ver, work in keys:
    base = dict(rows.get((ver, work, "base"), []))
    over = {}
    for mode in ("base", "causeway-skip", "causeway", "causeway-setprofile", "viztracer"):
        r = rows.get((ver, work, mode))
        if not r:
            continue
        ns = [x for _, x in r]
        d = [x - base[k] for k, x in r if k in base]
        over[mode] = (min(d), statistics.median(d)) if d else (float("nan"),) * 2
        share = ""
        if mode.startswith("causeway") and "viztracer" in [m for (v, w, m) in rows if (v, w) == (ver, work)]:
            vz = [x - base[k] for k, x in rows[(ver, work, "viztracer")] if k in base]
            share = f"{statistics.median(d) / statistics.median(vz):.2f}x" if vz else ""
        print(f"{ver:>6} {work:>4} {mode:<19} {min(ns):>11.1f} {statistics.median(ns):>8.1f} "
              f"{over[mode][0]:>12.1f} {over[mode][1]:>8.1f} {share:>12}")
