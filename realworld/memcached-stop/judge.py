"""memcached-stop: the verdict of the client's longest wait (the diagnosis's first lines,
its `chain`) must name each hop, in order.

client (python3) <- a memcached worker thread (stopped: signal) <- the script that sent
SIGSTOP (it waits for its `sleep` to exit) <- `sleep` (its timer).

The script's sleep comes from the `ps` snapshot taken during the freeze (ps-freeze.txt).
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
import judge  # noqa: E402

out, version = sys.argv[1], sys.argv[2]
server, script, client = (int(a) for a in sys.argv[3:6])
rows = judge.ps_snapshot(out, "ps-freeze.txt")
sleep = [p for p, (pp, c) in rows.items() if pp == script and c == "sleep"]
roles = {"client": [client], "memcached": [server], "the freezing script": [script],
         "sleep": sleep}
ok, finding, why = judge.judge_verdict_roles(out, "diagnose.json", roles)
sys.exit(judge.write_result(
    out, "memcached-stop", "memcached %s (Debian) frozen by a script" % version,
    "client ← memcached (stopped: signal) ← the script that sent SIGSTOP (child exit) ← "
    "sleep (timer)",
    finding, ok, why, extra={"roles": roles}))
