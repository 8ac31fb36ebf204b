"""beanstalkd-binlog: the top finding must be the knot {beanstalkd, disk}.

beanstalkd is one thread: with -f0 it calls fsync on its binlog after each write, inside
its event loop, so every client's next put waits for that fsync. The producers wait on
the server: they belong outside the knot.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
import judge  # noqa: E402

out, server, load = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
ok, finding, why = judge.judge_knot(
    out, "bottleneck.json",
    must=[judge.Want("beanstalkd", pid=server), judge.Want("disk", device="disk")],
    must_not=[judge.Want("load generator", pid=load)])
sys.exit(judge.write_result(
    out, "beanstalkd-binlog", "beanstalkd 1.12 (Debian)",
    "knot {beanstalkd, disk} at fsync of the binlog", finding, ok, why))
