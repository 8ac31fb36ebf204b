"""One row of bench/diagnose.sh's table: a zoo diagnosis (causeway diagnose --auto
--json) checked against the workload's expected diagnosis (workloads/README.md)."""

import json
import sys


def steps(d):
    return sum(len((f.get("slice") or {}).get("steps", [])) for f in d["findings"])


def found(w, d):
    fs = d["findings"]
    threads = lambda f: f["vertex"]["thread"]
    if w == "circular-timeout":
        return any(
            {v["thread"] for v in c["vertices"]} == {"ct-client", "ct-server"}
            and c["broken_by"] == "a timeout"
            for c in d["circles"]
        )
    if w == "long-cpu":
        f = fs[0]
        sl = (f.get("slice") or {}).get("steps", [])
        return "long_computation" in f["vertex"]["hot"] and any(
            s["vertex"]["thread"] == "sender" and s["edge"] == "wake-up" for s in sl
        )
    if w == "stopped-peer":
        return any(
            f["case"] == "Stopped"
            and any(s["vertex"]["thread"] == "sp-stopper" for s in (f.get("slice") or {}).get("steps", []))
            for f in fs
        )
    if w == "lock-chain":
        return any(threads(f) == "lk-backend" and f.get("note", "") and "sleep" in (f["vertex"]["wait_call"] or "") for f in fs)
    if w == "spin-flag":
        # No data flag is traced: the right answer is to ask for one.
        return d.get("needs_data_flag") is not None
    if w == "spin-flag+watch":
        # The flag traced by watchpoints: the late writer (a helper) is named and is
        # the loop's culprit.
        f = fs[0]
        writer = (f.get("flag_writer") or {}).get("thread", "")
        return writer.startswith("helper-") and any(
            f2["culprit_of"] == f["vertex"]["id"] and threads(f2) == writer for f2 in fs
        )
    if w == "batch-loop":
        # The loop's costly item, sliced over the data edge of the request it read to
        # bl-heavy's write.
        f = fs[0]
        sl = (f.get("slice") or {}).get("steps", [])
        return "heavy_request" in f["vertex"]["hot"] and any(
            s["vertex"]["thread"] == "bl-heavy" and s["edge"] == "data written to the same object"
            for s in sl
        )
    return False


def main():
    w, thread, path = sys.argv[1:4]
    try:
        d = json.load(open(path))
    except (OSError, ValueError):
        print(f"| {w} | {thread} | (no diagnosis) | | | no |")
        return
    f = d["findings"][0]
    ok = "yes" if found(w, d) else "no"
    print(f"| {w} | {thread} | {f['case']} | {d['queries']} | {steps(d)} | {ok} |")


main()
