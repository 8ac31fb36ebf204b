"""firebird-lock: the verdict of the victim's stall (the diagnosis's first lines, its
`chain`) must name each hop, in order.

victim isql-fb <- its server process (socket) <- the holder's server process (row lock)
<- the holder's isql-fb (socket) <- the script's subshell that feeds it (pipe)
<- `sleep` (its timer; the subshell waits for it to exit).

The processes are found in two `ps` snapshots taken during the run: ps-holder.txt (after
the idle session connected) and ps-victim.txt (after the victim connected).
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
import judge  # noqa: E402

out, listener, holder, victim = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])


def children(rows, parent):
    return [p for p, (pp, _) in rows.items() if pp == parent]


def descendants(rows, parent):
    found, todo = [], [parent]
    while todo:
        kids = children(rows, todo.pop())
        found += kids
        todo += kids
    return found


ps_h, ps_v = judge.ps_snapshot(out, "ps-holder.txt"), judge.ps_snapshot(out, "ps-victim.txt")
servers_h = set(children(ps_h, listener))
servers_v = set(children(ps_v, listener)) - servers_h
tree = descendants(ps_h, holder)
roles = {
    "victim's server process": sorted(servers_v),
    "holder's server process": sorted(servers_h),
    "holder's isql-fb": [p for p in tree if ps_h[p][1] == "isql-fb"],
    "script subshell writing the pipe": [p for p in tree if ps_h[p][1] in ("sh", "dash", "bash")],
    "sleep": [p for p in tree if ps_h[p][1] == "sleep"],
}
ok, finding, why = judge.judge_verdict_roles(out, "diagnose.json", roles)
sys.exit(judge.write_result(
    out, "firebird-lock", "Firebird 3.0.11 Classic (Debian firebird3.0-server)",
    "victim isql-fb ← its server process (socket) ← holder's server process (row lock) ← "
    "holder's isql-fb (socket) ← script (pipe) ← sleep (timer)",
    finding, ok, why, extra={"roles": roles}))
