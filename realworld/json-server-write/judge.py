"""json-server-write: the diagnosis of the load's thread must reach json-server's
event loop.

json-server answers each POST only after lowdb has serialized the whole 5 MB database
(JSON.stringify with indentation) on Node's main thread, the event loop, which then runs
nothing else; the load's one thread waits on its sockets for replies that the event loop
sends. The event loop is the thread whose id is the server's process id (Node's libuv
thread pool and V8's workers are named "node" too, so the judge goes by thread id).
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
import judge  # noqa: E402

out, server, load = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
doc = judge.load_output(out, "diagnose.json")
if doc is None:
    ok, finding, why = False, judge.no_output(out, "diagnose.json"), "the analysis failed"
else:
    seen = judge.chain_vertices(doc)
    ok = bool(doc.get("findings")) and any(
        int(v["pid"]) == server and int(v["tid"]) == server for v in seen)
    finding = judge.culprit_line(doc)
    why = "" if ok else "the event loop (pid %d, tid %d) is not on the chain" % (server, server)
sys.exit(judge.write_result(
    out, "json-server-write", "json-server 0.17.4 (npm) on Node.js %s" % os.popen("node --version").read().strip(),
    "load ← json-server's event loop (node main thread, running: JSON.stringify of the database)",
    finding, ok, why))
