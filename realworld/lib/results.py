"""Write realworld/RESULTS.md from each case's out/CASE/result.json.

usage: results.py OUTROOT RESULTS.md CASE...

The cases named were just run: their rows are replaced (a case whose run left no
result.json is shown as an error); rows of other cases already in the file are kept, so
running one case updates one row.
"""
import json
import os
import re
import sys

outroot, path, ran = sys.argv[1], sys.argv[2], sys.argv[3:]
BEGIN, END = "<!-- rows: written by realworld/lib/results.py -->", "<!-- end of rows -->"
PBEGIN, PEND = "<!-- predictions: written by realworld/lib/results.py -->", "<!-- end of predictions -->"
# A prediction within this of the measured speedup (predicted / measured - 1) holds.
WITHIN = 0.25


def prediction_row(res):
    """Predicted against measured speedup of the fix, or None for a case without both
    (a stall case, whose fix shortens one wait rather than a rate)."""
    pred, fix = res.get("prediction"), res.get("fix")
    if not pred or not fix or fix["unit"] == "s" or not fix["without_fix"]:
        return None
    measured = fix["with_fix"] / fix["without_fix"]
    psi = res.get("cpu_pressure")
    load = "%.0f %%" % (100 * psi) if psi is not None else "?"
    if pred.get("speedup") is None:
        verdict = ("not predicted, the model cannot know: %s" % pred["reason"]
                   if pred.get("reason") else "no prediction: %s" % pred.get("error", "?"))
        return "| %s |" % " | ".join(cell(c) for c in (
            res["case"], pred.get("change") or "–", "–", "%.2f×" % measured, "–", load,
            verdict))
    ratio = pred["speedup"] / measured
    if abs(ratio - 1) <= WITHIN:
        verdict = "**within 25 %**"
    elif pred.get("reason"):
        verdict = "outside; the model cannot know: %s" % pred["reason"]
    else:
        verdict = "**outside 25 %**"
    return "| %s |" % " | ".join(cell(c) for c in (
        res["case"], pred["change"], "%.2f×" % pred["speedup"], "%.2f×" % measured,
        "%.2f" % ratio, load, verdict))


def cell(text):
    return str(text).replace("|", "\\|").replace("\n", " ")


def figure(x):
    return "%.3g" % x if x < 100 else "{:,.0f}".format(x)


def row(res):
    fix = res.get("fix")
    if fix:
        a, b = fix["without_fix"], fix["with_fix"]
        without = "%s %s" % (figure(a), fix["unit"])
        if fix["unit"] == "s":   # a wait: shorter is better
            change = "%.0f%% shorter" % (100 * (1 - b / a)) if a else "?"
        else:                    # a rate: higher is better
            change = "%.2f×" % (b / a) if a else "?"
        with_ = "%s %s (%s)" % (figure(b), fix["unit"], change)
    else:
        without = with_ = "–"
    verdict = "**pass**" if res["pass"] else ("**error**" if res.get("error") else "**fail**")
    return "| %s |" % " | ".join(cell(c) for c in (
        res["case"], res.get("program", ""), res.get("expected", ""), res.get("finding", ""),
        verdict, without, with_, res.get("date", ""), res.get("cpu", "")))


def detail(res):
    fix = res.get("fix") or {}
    psi = res.get("cpu_pressure")
    lines = ["- **%s** (%s, load average %s%s; causeway %s):" % (
        res["case"], res.get("date", ""), res.get("load_average", "?"),
        ", CPU pressure %.0f %%" % (100 * psi) if psi is not None else "",
        res.get("causeway"))]
    if res.get("why"):
        lines.append("  why it %s: %s." % ("failed" if not res["pass"] else "passed", res["why"]))
    if fix:
        lines.append("  fix: %s; %s %s → %s %s." % (
            fix["note"], fix["metric"], figure(fix["without_fix"]), figure(fix["with_fix"]),
            fix["unit"]))
    return "\n".join(lines)


old_rows, old_details, old_preds = {}, {}, {}
if os.path.exists(path):
    text = open(path).read()
    if PBEGIN in text and PEND in text:
        for line in text.split(PBEGIN, 1)[1].split(PEND, 1)[0].splitlines():
            m = re.match(r"\| ([\w.-]+) \|", line)
            if m and m.group(1) not in ("case",):
                old_preds[m.group(1)] = line
    if BEGIN in text and END in text:
        for line in text.split(BEGIN, 1)[1].split(END, 1)[0].splitlines():
            m = re.match(r"\| ([\w.-]+) \|", line)
            if m and m.group(1) not in ("case",):
                old_rows[m.group(1)] = line
        for block in re.split(r"\n(?=- \*\*)", text.split("## Details", 1)[-1]):
            m = re.match(r"- \*\*([\w.-]+)\*\*", block.strip())
            if m:
                old_details[m.group(1)] = block.strip()

rows, details, preds = dict(old_rows), dict(old_details), dict(old_preds)
for case in ran:
    p = os.path.join(outroot, case, "result.json")
    if os.path.exists(p):
        res = json.load(open(p))
    else:
        res = {"case": case, "pass": False, "error": True,
               "finding": "error: the case left no result (see realworld/out/%s)" % case}
    rows[case] = row(res)
    details[case] = detail(res)
    preds.pop(case, None)
    if prediction_row(res):
        preds[case] = prediction_row(res)

with open(path, "w") as f:
    f.write("""# Real-world results

Written by `make realworld` (`realworld/run.sh`; see README.md). Each row is the latest
run of its case, with the causeway binary named in Details. "without fix" and "with fix"
are the program's own figure under the same load (throughput, or the stalled client's
wait), measured unrecorded.

%s
| case | program | expected answer | causeway's top finding | result | without fix | with fix | date | CPU |
|---|---|---|---|---|---|---|---|---|
%s
%s

## Predicted gains against the measured fix

For each case whose fix removes or shortens waits, `causeway whatif` on the case's
recording removes every wait on the top finding's device or quota (`lib/predict.py`);
"measured" is the fix's speedup above, unrecorded. Within 25 %% (predicted / measured
within 0.75-1.25) holds; a case outside says why the model cannot know, when the fix
changes the work rather than the waits. "CPU pressure" is the share of the case's run
in which some task waited for a CPU (PSI): other load beside the case moves both figures.

%s
| case | change | predicted | measured | predicted / measured | CPU pressure | result |
|---|---|---|---|---|---|---|
%s
%s

## Details

%s
""" % (BEGIN, "\n".join(rows[c] for c in sorted(rows)), END,
       PBEGIN, "\n".join(preds[c] for c in sorted(preds)), PEND,
       "\n".join(details[c] for c in sorted(details))))
