"""kafka-flush: the top finding must be a knot holding a request handler and the disk.

With flush.messages=1 the request handler thread that appends a produce request to the
partition's log ("data-plane-kafka-request-handler-N") flushes it before the reply:
fsync of the segment and msync of its offset and time indexes. The producer's reply,
and so its next request, waits for that. The handlers' comm is cut to "data-plane-kafk",
like the network threads', so they are told apart by thread id, from the broker's
`jcmd Thread.print` (run.sh saved it). The client JVM's threads wait on the broker:
they belong outside the knot.
"""
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
import judge  # noqa: E402


class Handlers(judge.Want):
    """A thread of the broker whose full Java name is a request handler's."""

    def __init__(self, pid, tids):
        super().__init__("request handler", pid=pid, comm=None)
        self.tids = tids

    def vertex_matches(self, v):
        return any(int(t["pid"]) == self.pid and int(t.get("tid", -1)) in self.tids
                   for t in v.get("threads", []))

    def __str__(self):
        return "request handler (pid %s, thread data-plane-kafka-request-handler-N, tids %s)" % (
            self.pid, ",".join(str(t) for t in sorted(self.tids)))


out, broker, client = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
tids = set()
with open(os.path.join(out, "broker-threads.txt")) as f:
    for line in f:
        m = re.match(r'"data-plane-kafka-request-handler-\d+".* nid=(0x[0-9a-f]+)', line)
        if m:
            tids.add(int(m.group(1), 16))
ok, finding, why = judge.judge_knot(
    out, "bottleneck.json",
    must=[Handlers(broker, tids), judge.Want("disk", device="disk")],
    must_not=[judge.Want("load generator", pid=client)])
if not tids:
    ok, why = False, "no request handler in broker-threads.txt (jcmd failed?)"
sys.exit(judge.write_result(
    out, "kafka-flush", "Apache Kafka 3.9.0 (Maven Central), KRaft",
    "knot {data-plane-kafka-request-handler (fsync of the log), disk}",
    finding, ok, why))
