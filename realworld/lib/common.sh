# Shared start of the real-world cases: sourced by each case's setup.sh and run.sh.
#
#   rw_init CASE       sets CASE, RW (realworld/), REPO, CACHE (downloads, git-ignored);
#                      insists on root (what setup.sh needs)
#   rw_start CASE      rw_init, then OUT (this run's files, made empty) and a trap that
#                      stops what rw_bg started
#   rw_causeway        sets CW, a private copy of $CAUSEWAY (default target/release/causeway)
#   rw_bg NAME CMD...  start CMD in the background, its output in $OUT/NAME.log; sets
#                      BG_PID; every process started so is stopped when the script exits
#   rw_stop PID        SIGTERM, then SIGKILL after 10 s; waits for it
#   rw_port_free PORT  exit (status 2) if something still listens on PORT after 15 s
#   rw_wait_port PORT [SECONDS]   until something listens on 127.0.0.1:PORT
#   rw_record NAME ARGS...   start `causeway record ARGS -o $OUT/NAME.cwt` in the background
#                      and return once it records (sets REC_PID)
#   rw_pause SECONDS   wait without starting a process (no `sleep` in a recording)
#   rw_fix METRIC UNIT WITHOUT WITH NOTE   write $OUT/fix.json (the measured fix)
#   rw_predict [REASON]   after $OUT/bottleneck.json: `causeway whatif` removing the
#                      waits on the top finding's device or quota, into $OUT/whatif.json
#                      (the prediction the measured fix is compared with; REASON: why the
#                      model cannot know this fix, when the fix changes the work)
#   rw_apt PACKAGE...  install the Debian packages that are missing

RW=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
REPO=$(dirname "$RW")
CACHE=${RW_CACHE:-$RW/.cache}
OUTROOT=${RW_OUT:-$RW/out}

rw_log() { echo "[$CASE] $*" >&2; }

rw_init() {
    CASE=$1
    if [ "$(id -u)" != 0 ]; then
        echo "$CASE: needs root (eBPF, apt, servers)" >&2
        exit 2
    fi
    mkdir -p "$CACHE"
}

rw_start() {
    rw_init "$1"
    OUT=$OUTROOT/$CASE
    rm -rf "$OUT"
    mkdir -p "$OUT"
    cp /proc/loadavg "$OUT/loadavg"   # other work beside a case changes its figures
    # CPU pressure (time some task waited for a CPU) from here to the judgement: the
    # load beside the case while it measured and recorded.
    rw_psi >"$OUT/psi-start"
    RW_PIDS=()
    trap rw_cleanup EXIT
    trap 'exit 130' INT    # so that the EXIT trap stops the servers
    trap 'exit 143' TERM
}

# "SECONDS_SINCE_BOOT CPU_SOME_TOTAL_US" now, or nothing without PSI.
rw_psi() {
    local total
    total=$(sed -n 's/^some .*total=\([0-9]*\).*/\1/p' /proc/pressure/cpu 2>/dev/null || true)
    [ -n "$total" ] && echo "$(cut -d' ' -f1 /proc/uptime) $total"
    return 0
}

# The binary under test. A private copy: target/ may be rebuilt while a case runs.
rw_causeway() {
    local src=${CAUSEWAY:-$REPO/target/release/causeway}
    [ -x "$src" ] || { echo "$CASE: no causeway binary at $src (set CAUSEWAY)" >&2; exit 2; }
    CW=$OUTROOT/.bin/causeway   # named causeway: its threads read so in system-wide traces
    mkdir -p "$OUTROOT/.bin"
    if ! cmp -s "$src" "$CW"; then
        cp "$src" "$CW.tmp.$$" && mv "$CW.tmp.$$" "$CW"
    fi
}

rw_bg() {
    local name=$1
    shift
    "$@" </dev/null >"$OUT/$name.log" 2>&1 &   # a server reading a socket on stdin would take it for inetd
    BG_PID=$!
    RW_PIDS+=("$BG_PID")
}

rw_stop() {
    local pid=$1 i
    kill -TERM "$pid" 2>/dev/null || return 0
    for i in $(seq 100); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
    done
    kill -KILL "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
}

rw_cleanup() {
    local pid
    for pid in "${RW_PIDS[@]}"; do
        if kill -0 "$pid" 2>/dev/null; then rw_stop "$pid"; fi
    done
}

rw_port_free() {
    local i
    for i in $(seq 150); do   # a server of the previous run may still be exiting
        ss -Hltn "sport = :$1" | grep -q . || return 0
        sleep 0.1
    done
    echo "$CASE: port $1 is taken (a server left from an earlier run?): $(ss -Hltnp "sport = :$1")" >&2
    exit 2
}

rw_wait_port() {
    local port=$1 secs=${2:-60} i
    for i in $(seq $((secs * 10))); do
        ss -Hltn "sport = :$port" | grep -q . && return 0
        sleep 0.1
    done
    echo "$CASE: nothing listens on port $port after ${secs}s" >&2
    return 1
}

rw_record() {
    local name=$1 i
    shift
    rw_bg "record-$name" "$CW" record "$@" -o "$OUT/$name.cwt"
    REC_PID=$BG_PID
    for i in $(seq 300); do
        grep -q 'recording' "$OUT/record-$name.log" 2>/dev/null && return 0
        kill -0 "$REC_PID" 2>/dev/null || break
        sleep 0.1
    done
    echo "$CASE: causeway record did not start; see $OUT/record-$name.log" >&2
    return 1
}

# rw_stall NAME SNAPSHOT CMD...: runs CMD, a request expected to stall, and times it:
# sets STALL (its wall time, seconds) and STALL_PID. SNAPSHOT is `-`, or the seconds
# after its start at which the processes are listed into ps-NAME.txt (the judge finds
# the case's roles there, while they exist). CMD reads STALL_INPUT, when set, on its
# standard input. Only builtins wait here: a harness `sleep` in a recording would be
# one more process for a diagnosis to wander to.
rw_stall() {
    local name=$1 snap=$2 t0 t1
    shift 2
    t0=$(date +%s%N)
    "$@" <<<"${STALL_INPUT:-}" >"$OUT/$name.log" 2>&1 &
    STALL_PID=$!
    if [ "$snap" != - ]; then
        rw_pause "$snap"
        ps -eo pid=,ppid=,comm= >"$OUT/ps-$name.txt"
    fi
    wait "$STALL_PID" || true
    t1=$(date +%s%N)
    STALL=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", (b - a) / 1e9 }')
}

rw_predict() {
    python3 "$RW/lib/predict.py" "$CW" "$OUT" "${1:-}" >"$OUT/predict.log" 2>&1 ||
        rw_log "no prediction (see $OUT/predict.log)"
}

rw_pause() {
    read -rt "$1" <> <(:) || true   # read-write: the pipe never reaches end of file
}

rw_fix() {
    python3 - "$OUT/fix.json" "$@" <<'PY'
import json, sys
path, metric, unit, without, with_, note = sys.argv[1:7]
json.dump({"metric": metric, "unit": unit, "without_fix": float(without),
           "with_fix": float(with_), "note": note}, open(path, "w"), indent=1)
PY
}

rw_apt() {
    local missing=() p
    for p in "$@"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
            missing+=("$p")
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    rw_log "apt-get install ${missing[*]}"
    apt-get update -q >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}" >&2
}
