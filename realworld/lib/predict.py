"""Predict a case's fix from its recording: `causeway whatif` removing every wait on the
non-thread vertex of the bottleneck's top finding (the disk of a {server, disk} knot,
a CPU quota sink), the change the cases' fixes make (no sync per write, no quota).

usage: predict.py CAUSEWAY OUT [REASON]

Writes OUT/whatif.json: the change, the predicted speedup (1 + gain), the waits changed,
and REASON when given (why the model cannot know this fix: it changes the work, not only
the waits).
"""
import json
import os
import subprocess
import sys

# The vertices whose waits a fix of this kind removes: a device, a cgroup's quota.
LIMITS = ("disk", "cpu_quota", "memory_limit")

cw, out = sys.argv[1], sys.argv[2]
reason = sys.argv[3] if len(sys.argv) > 3 and sys.argv[3] else None
b = json.load(open(os.path.join(out, "bottleneck.json")))
vertices = b["vertices"]
findings = b.get("knots", []) + b.get("sinks", [])
target = None
for f in findings:
    ids = f["vertices"] if "vertices" in f else [f["vertex"]]
    others = [vertices[i] for i in ids if vertices[i]["kind"]["type"] in LIMITS]
    if others:
        target = others[0]["label"]
        break
res = {"change": None, "speedup": None, "reason": reason}
if target is None:
    res["error"] = "the top findings hold no device or quota vertex"
else:
    args = [cw, "whatif", "--json", "--waits-on", target, os.path.join(out, "trace.cwt")]
    p = subprocess.run(args, capture_output=True, text=True)
    res["change"] = "--waits-on '%s'" % target
    if p.returncode == 0:
        w = json.loads(p.stdout)
        res.update(speedup=1 + w["gain"], waits_changed=w["waits_changed"],
                   cpu_bound=w["cpu_bound"])
    else:
        res["error"] = p.stderr.strip()
json.dump(res, open(os.path.join(out, "whatif.json"), "w"), indent=1)
print(json.dumps(res))
