"""mosquitto-autosave: the top finding must be the knot {mosquitto, disk}.

Mosquitto is one thread: after every change it writes its whole store to a new file and
fsyncs it in its event loop, so every publisher's next message waits for the save. The
publishers wait on the broker: they belong outside the knot.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
import judge  # noqa: E402

out, broker, load = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
ok, finding, why = judge.judge_knot(
    out, "bottleneck.json",
    must=[judge.Want("mosquitto", pid=broker), judge.Want("disk", device="disk")],
    must_not=[judge.Want("load generator", pid=load)])
sys.exit(judge.write_result(
    out, "mosquitto-autosave", "Mosquitto 2.0.11 (Debian)",
    "knot {mosquitto, disk} at fsync of the store", finding, ok, why))
