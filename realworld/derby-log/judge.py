"""derby-log: the top finding must be a knot holding Derby's connection threads and the
disk, and neither the load client nor the JVM's own threads.

Each insert is a commit: the connection thread that runs it (DRDAConnThread_N, one per
client connection) writes Derby's transaction log and waits for it to reach the disk
before the client's reply; a thread that commits while another syncs waits for that
sync. The load client's 16 threads wait on the server, so they belong outside the knot.
So do the JVM's own threads (the VM Thread, GC and JIT compiler threads, the launcher's
first thread, ...) and causeway's vertex for their pauses (`runtime_pauses`,
"JVM safepoints/GC (PID)"): the JVM is part of the machine, and its pauses are not the
limit here. The server's thread names and ids come from `jcmd PID Thread.print`
(run.sh saved it); comm keeps only 15 characters.
"""
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
import judge  # noqa: E402

# The threads HotSpot and the JDK run beside the program's
JVM_NAMES = re.compile(r"^(VM Thread|VM Periodic Task Thread|GC Thread#|G1 |C[12] CompilerThread|"
                       r"Sweeper thread|Reference Handler|Finalizer|Signal Dispatcher|"
                       r"Service Thread|Monitor Deflation Thread|Notification Thread|"
                       r"Common-Cleaner|Attach Listener)")


class Tids(judge.Want):
    """A thread of process `pid` among `tids`."""

    def __init__(self, role, pid, tids, names):
        super().__init__(role, pid=pid)
        self.tids, self.names = tids, names

    def vertex_matches(self, v):
        return any(int(t["pid"]) == self.pid and int(t.get("tid", -1)) in self.tids
                   for t in v.get("threads", []))

    def __str__(self):
        return "%s (pid %s, %s)" % (self.role, self.pid, self.names)


class Pauses(judge.Want):
    """causeway's vertex for a JVM's safepoints and collections."""

    def vertex_matches(self, v):
        return v.get("kind", {}).get("type") == "runtime_pauses"

    def __str__(self):
        return "the JVM's pauses (a runtime_pauses vertex)"


out, server, client = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
conn, jvm = set(), {server}   # the launcher's first thread is the process id
with open(os.path.join(out, "server-threads.txt")) as f:
    for line in f:
        m = re.match(r'"([^"]+)".* nid=(0x[0-9a-f]+)', line)
        if not m:
            continue
        name, tid = m.group(1), int(m.group(2), 16)
        if name.startswith("DRDAConnThread_"):
            conn.add(tid)
        elif JVM_NAMES.match(name):
            jvm.add(tid)
ok, finding, why = judge.judge_knot(
    out, "bottleneck.json",
    must=[Tids("connection thread", server, conn, "DRDAConnThread_N"),
          judge.Want("disk", device="disk")],
    must_not=[judge.Want("load generator", pid=client),
              Tids("JVM thread", server, jvm, "VM Thread, GC, compiler, launcher, ..."),
              Pauses("JVM pauses")])
if not conn:
    ok, why = False, "no DRDAConnThread in server-threads.txt (jcmd failed?)"
sys.exit(judge.write_result(
    out, "derby-log", "Apache Derby 10.16.1.1 network server (Maven Central)",
    "knot {DRDAConnThread_N (sync of the transaction log at commit), disk}; "
    "no load-client thread, no JVM thread or pause vertex",
    finding, ok, why))
