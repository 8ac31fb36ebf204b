"""artemis-journal: the top finding must be the knot {journal sync thread, disk}.

The NIO journal's TimedBuffer thread ("activemq-buffer-timeout", comm "activemq-buffer")
batches the appends and calls fdatasync; every persistent send waits for it. The client
JVM's threads wait on the broker: they belong outside the knot.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
import judge  # noqa: E402

out, broker, client = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
ok, finding, why = judge.judge_knot(
    out, "bottleneck.json",
    must=[judge.Want("journal sync thread", pid=broker, comm=r"^activemq-buffer"),
          judge.Want("disk", device="disk")],
    must_not=[judge.Want("load generator", pid=client)])
sys.exit(judge.write_result(
    out, "artemis-journal", "Apache ActiveMQ Artemis 2.40.0 (Maven Central)",
    "knot {activemq-buffer (journal sync thread), disk} at fdatasync",
    finding, ok, why))
