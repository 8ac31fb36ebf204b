#!/usr/bin/env bash
# HTML report: size and time for headless Chromium to load it, for two causeway
# binaries on the same trace, in alternating rounds.
#
#   TRACE=t.cwt CAUSEWAY=new CAUSEWAY_REF=old bench/report_load.sh
#   ROUNDS [5]   rounds; each loads both pages once
#
# Without TRACE, records workloads/bin/blocking-net for 3 s with CAUSEWAY. The time is
# `chromium --headless --dump-dom file://PAGE` from start to exit (the browser's own
# start-up, about the same for both pages, is included), median over the rounds.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
CW=${CAUSEWAY:-$here/target/release/causeway}
REF=${CAUSEWAY_REF:?set CAUSEWAY_REF to the binary to compare with}
ROUNDS=${ROUNDS:-5}
BROWSER=$(command -v chromium || command -v chromium-browser || true)
[ -n "$BROWSER" ] || { echo "chromium is not installed (scripts/setup.sh installs it)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
trace=${TRACE:-$tmp/t.cwt}
[ -n "${TRACE:-}" ] || "$CW" record -o "$trace" -- "$here/workloads/bin/blocking-net" --seconds 3 >/dev/null 2>&1
"$CW" report "$trace" -o "$tmp/new.html" >/dev/null 2>&1
"$REF" report "$trace" -o "$tmp/ref.html" >/dev/null 2>&1
echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), $(nproc) CPUs; $(date -u '+%Y-%m-%d %H:%M UTC'); $("$BROWSER" --version 2>/dev/null)"
load() {
    local s e
    s=$(date +%s%N)
    "$BROWSER" --headless --no-sandbox --disable-gpu --dump-dom "file://$1" >/dev/null 2>&1
    e=$(date +%s%N)
    python3 -c "print(($e - $s) / 1e9)"
}
new=""; ref=""
for _ in $(seq "$ROUNDS"); do
    ref+="$(load "$tmp/ref.html") "
    new+="$(load "$tmp/new.html") "
done
median() { tr ' ' '\n' | grep . | sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
printf 'reference: %9d bytes, load median %.2f s (%s)\n' "$(stat -c %s "$tmp/ref.html")" "$(echo "$ref" | median)" "$ref"
printf 'this:      %9d bytes, load median %.2f s (%s)\n' "$(stat -c %s "$tmp/new.html")" "$(echo "$new" | median)" "$new"
