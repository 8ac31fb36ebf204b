"""beanstalkd-ns: the top finding must be the knot {beanstalkd, disk}, as in
beanstalkd-binlog, with its call sites named.

The server runs in its own mount and PID namespaces from a root where its binary and
libraries sit at paths the host lacks (/opt/app/bin, /opt/app/lib), so causeway must
read them through the process (its /proc/PID/root, map_files), not at the paths the
maps name. The answer is the host case's: beanstalkd's one thread fsyncs the binlog
after each write, so the knot is {beanstalkd, disk} and the producers are outside it.
And the knot's wait stacks must name the call: a frame naming the sync (`fsync`,
`fdatasync`) or one of beanstalkd's binlog functions (`walwrite`, `walsync`,
`filewrite`, ...), where a bare address would say nothing. Debian's beanstalkd is
stripped (no .symtab), so its own functions may have no names; libc's do (.dynsym).
"""
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
import judge  # noqa: E402

out, server, load = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
ok, finding, why = judge.judge_knot(
    out, "bottleneck.json",
    must=[judge.Want("beanstalkd", pid=server), judge.Want("disk", device="disk")],
    must_not=[judge.Want("load generator", pid=load)])
CALL = r"\b(f(data)?sync|walwrite|walsync|walmaint|walresv\w*|filewrite|filewrjob\w*)\b"
doc = judge.load_output(out, "bottleneck.json")
frames = judge.finding_stacks(doc) if doc else []
named = judge.named_frames(frames, CALL)
# The server's own frames (its binary, /opt/app/bin/beanstalkd) as the report gives them
own = judge.named_frames(frames, r"beanstalkd|/opt/app/bin")
extra = {"call_sites": named[:8], "server_frames": own[:8], "frames": len(frames)}
if named:
    finding += " at %s" % ", ".join(named[:3])
else:
    ok = False
    why = "; ".join(x for x in (why, "the top finding's wait stacks name no sync call (%d frames%s)" % (
        len(frames), ": " + ", ".join(frames[:4]) if frames else "")) if x)
if ok:
    # What a reader of the verdict sees beyond the pass: which frames have names, and
    # the thread's label (its comm: the copied loader it was started through).
    label = ""
    if doc and doc.get("knots"):
        verts = {v["id"]: v for v in doc["vertices"]}
        label = next((verts[i]["label"] for i in doc["knots"][0]["vertices"]
                      if judge.Want("", pid=server).vertex_matches(verts[i])), "")
    bare = [f for f in own if re.match(r"0x[0-9a-f]+ ", f)]
    why = "the call named through libc (%s)%s; the server thread labelled %s" % (
        named[0], "; beanstalkd's own %d frame(s) bare addresses (%s, ...), Debian strips it"
        % (len(bare), bare[0]) if bare else "", label or "?")
ns = os.path.join(out, "ns.txt")
if os.path.exists(ns):
    extra["namespaces"] = open(ns).read().splitlines()[:6]
sys.exit(judge.write_result(
    out, "beanstalkd-ns", "beanstalkd 1.12 (Debian), own mount+PID namespace and root (/opt/app)",
    "knot {beanstalkd, disk} at fsync of the binlog, the call named", finding, ok, why,
    extra=extra))
