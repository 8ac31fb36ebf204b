"""lighttpd-quota: the top finding must be a sink of kind CPU quota whose chain holds
lighttpd's thread.

lighttpd serves every request on its one thread, and with mod_deflate (no cache
directory) compresses the 1.2 MB file for each: the thread is CPU-bound. Its cgroup
allows it 20 ms of CPU per 100 ms, so once a period's quota is spent the thread stays
runnable with CPUs idle until the next period: wrk's connections wait for lighttpd, and
lighttpd waits for its quota, which waits for nobody. The answer is that quota (the
vertex of kind `cpu_quota`, a sink), reached through lighttpd; wrk is at the head of the
chain, as the waiter.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
import judge  # noqa: E402

out, server, load = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
version = sys.argv[4] if len(sys.argv) > 4 else "1.4.69"
ok, finding, why = judge.judge_sink(
    out, "bottleneck.json", "cpu_quota",
    chain_must=[judge.Want("lighttpd", pid=server, comm="^lighttpd$")])
# The cgroup's own counters over the recording: how much it was held back.
stat = {}
for when in ("before", "after"):
    p = os.path.join(out, "cpu.stat-" + when)
    if os.path.exists(p):
        stat[when] = dict(line.split() for line in open(p) if line.strip())
throttled = ""
if len(stat) == 2:
    d = {k: int(stat["after"][k]) - int(stat["before"][k]) for k in stat["after"]}
    throttled = "%d of %d periods throttled, %.2f s held back" % (
        d.get("nr_throttled", 0), d.get("nr_periods", 0), d.get("throttled_time", 0) / 1e9)
sys.exit(judge.write_result(
    out, "lighttpd-quota", "lighttpd %s (Debian) with mod_deflate, cgroup v1 quota 20 ms/100 ms; load: wrk 4.1.0 (Debian)" % version,
    "sink: the cgroup's CPU quota (cpu_quota), its chain through lighttpd's thread (gzip of every response)",
    finding, ok, why, extra={"cgroup_during_recording": throttled}))
