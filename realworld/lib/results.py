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
    lines = ["- **%s** (%s, load average %s; causeway %s):" % (
        res["case"], res.get("date", ""), res.get("load_average", "?"), res.get("causeway"))]
    if res.get("why"):
        lines.append("  why it %s: %s." % ("failed" if not res["pass"] else "passed", res["why"]))
    if fix:
        lines.append("  fix: %s; %s %s → %s %s." % (
            fix["note"], fix["metric"], figure(fix["without_fix"]), figure(fix["with_fix"]),
            fix["unit"]))
    return "\n".join(lines)


old_rows, old_details = {}, {}
if os.path.exists(path):
    text = open(path).read()
    if BEGIN in text and END in text:
        for line in text.split(BEGIN, 1)[1].split(END, 1)[0].splitlines():
            m = re.match(r"\| ([\w.-]+) \|", line)
            if m and m.group(1) not in ("case",):
                old_rows[m.group(1)] = line
        for block in re.split(r"\n(?=- \*\*)", text.split("## Details", 1)[-1]):
            m = re.match(r"- \*\*([\w.-]+)\*\*", block.strip())
            if m:
                old_details[m.group(1)] = block.strip()

rows, details = dict(old_rows), dict(old_details)
for case in ran:
    p = os.path.join(outroot, case, "result.json")
    if os.path.exists(p):
        res = json.load(open(p))
    else:
        res = {"case": case, "pass": False, "error": True,
               "finding": "error: the case left no result (see realworld/out/%s)" % case}
    rows[case] = row(res)
    details[case] = detail(res)

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

## Details

%s
""" % (BEGIN, "\n".join(rows[c] for c in sorted(rows)), END,
       "\n".join(details[c] for c in sorted(details))))
