"""nats-sync: the top finding must be a knot holding the disk and a goroutine of
nats-server.

With `sync_interval: always` the stream's file store fsyncs after every message it
writes, on the goroutine that stores the stream's messages (the stream's internal loop,
which the client connections' read loops hand the publishes to); each publisher's
acknowledgement, and so its next message, waits for that fsync. causeway analyses a Go
program's goroutines: a vertex's threads are goroutines (a `goroutine` field, and the
goroutine's start function as comm), so the judge asks for a thread of the server's
process that is a goroutine, any start function. nats bench's goroutines wait on the
server: they belong outside the knot.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
import judge  # noqa: E402


class Goroutine(judge.Want):
    """A goroutine of process `pid` (a thread entry with a `goroutine` field)."""

    def vertex_matches(self, v):
        return any(int(t["pid"]) == int(self.pid) and "goroutine" in t
                   for t in v.get("threads", []))

    def __str__(self):
        return "%s (pid %s, a goroutine)" % (self.role, self.pid)


out, server, bench = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
ok, finding, why = judge.judge_knot(
    out, "bottleneck.json",
    must=[Goroutine("nats-server goroutine", pid=server), judge.Want("disk", device="disk")],
    must_not=[judge.Want("load generator", pid=bench)])
sys.exit(judge.write_result(
    out, "nats-sync", "NATS server 2.15.2 (go install), JetStream file store",
    "knot {nats-server goroutine (fsync of the stream's file store), disk}",
    finding, ok, why))
