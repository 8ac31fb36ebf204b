"""Summarize bench/inproc_python.sh raw lines: VERSION WORK RUN MODE CALLS S NS_PER_CALL.
Per (version, work, mode): min and median ns per call over the runs; the overhead per
call over base as min(mode) - min(base) and median(mode) - median(base) (on a loaded
machine the minima are the least disturbed figures); and, for causeway's modes, that
overhead as a share of VizTracer's (goal: at most 0.5)."""

import statistics
import sys
from collections import defaultdict

MODES = ("base", "causeway-skip", "causeway", "causeway-setprofile", "viztracer")

rows = defaultdict(list)  # (ver, work, mode) -> [ns per call, one per run]
for line in open(sys.argv[1]):
    f = line.split()
    if len(f) != 7 or f[3] not in MODES:
        continue
    rows[(f[0], int(f[1]), f[3])].append(float(f[6]))

print(f"{'python':>6} {'work':>4} {'mode':<19} {'ns/call min':>11} {'median':>8} "
      f"{'over min':>9} {'over med':>9} {'/vz min':>8} {'/vz med':>8}")
for ver, work in sorted({(v, w) for v, w, _ in rows}):
    base = rows.get((ver, work, "base"))
    vz = rows.get((ver, work, "viztracer"))
    if not base:
        continue
    b_min, b_med = min(base), statistics.median(base)
    for mode in MODES:
        ns = rows.get((ver, work, mode))
        if not ns:
            continue
        o_min, o_med = min(ns) - b_min, statistics.median(ns) - b_med
        share = ("", "")
        if mode.startswith("causeway") and vz:
            share = (f"{o_min / (min(vz) - b_min):.2f}x",
                     f"{o_med / (statistics.median(vz) - b_med):.2f}x")
        print(f"{ver:>6} {work:>4} {mode:<19} {min(ns):>11.1f} {statistics.median(ns):>8.1f} "
              f"{o_min:>9.1f} {o_med:>9.1f} {share[0]:>8} {share[1]:>8}")
