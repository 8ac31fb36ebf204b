"""flock-cron: the verdict of the waiting job's stall (the diagnosis's first lines, its
`chain`) must name each hop, in order.

waiting flock <- the nightly job's flock, which holds the lock (lock; its exit releases
it) <- the job's shell (flock waits for it to exit) <- `sleep` (the shell waits for it;
its timer).

The processes come from the `ps` snapshot taken while the waiter waited (ps-waiter.txt).
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
import judge  # noqa: E402

out, job, waiter = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rows = judge.ps_snapshot(out, "ps-waiter.txt")


def children(parent, comm):
    return [p for p, (pp, c) in rows.items() if pp == parent and c == comm]


holder = children(job, "flock")
shell = children(holder[0], "sh") if len(holder) == 1 else []
sleep = children(shell[0], "sleep") if len(shell) == 1 else []
roles = {"waiting flock": [waiter], "holder flock": holder, "job's shell": shell,
         "sleep": sleep}
ok, finding, why = judge.judge_verdict_roles(out, "diagnose.json", roles)
sys.exit(judge.write_result(
    out, "flock-cron", "util-linux flock(1) (Debian), dash",
    "waiting flock ← holder flock (lock) ← job's shell (child exit) ← sleep (timer)",
    finding, ok, why, extra={"roles": roles}))
