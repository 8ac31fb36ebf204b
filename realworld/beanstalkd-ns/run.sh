#!/usr/bin/env bash
# beanstalkd-binlog's server and load, with the server started the way a container
# runtime starts one: in its own mount and PID namespaces, its root a directory holding a
# copy of Debian's beanstalkd and of its libraries at /opt/app/bin and /opt/app/lib,
# paths that do not exist on the host, started through the copied dynamic loader (as
# workloads/ns-run.sh does), so that no file it maps has a host path; its /dev a tmpfs
# with null, zero, random and urandom bound in (beanstalkd reads /dev/urandom). Its binlog is
# /data/NAME in that root (on the disk, under realworld/out). With -f0 beanstalkd
# fsyncs the binlog after every write inside its event loop. Load: 8 producers
# (beanstalkd-binlog/load.py) on the host, over loopback (no network namespace). Record
# server and load with `causeway record -p` (the server's host PID), run
# `causeway bottleneck --json`, judge; then measure the fix (beanstalkd's default, fsync
# at most every 50 ms), namespaced the same way, with the same load.
set -euo pipefail
. "$(dirname "$0")/../lib/common.sh"
rw_start beanstalkd-ns
rw_causeway
here=$(cd "$(dirname "$0")" && pwd)

PORT=11410
THREADS=8
MEASURE=4
RECORD=${RECORD_SECONDS:-3}
ROOT=$OUT/root

# The root: the program and what ldd says it loads, copied; nothing else of the host.
prog=$(readlink -f "$(command -v beanstalkd)")
if [ -e /opt/app ]; then
    echo "$CASE: /opt/app exists on the host; the case needs a path the host lacks" >&2
    exit 2
fi
mkdir -p "$ROOT/opt/app/bin" "$ROOT/opt/app/lib" "$ROOT/proc" "$ROOT/tmp" "$ROOT/old" "$ROOT/data" "$ROOT/dev"
cp "$prog" "$ROOT/opt/app/bin/beanstalkd"
for lib in $(ldd "$prog" | grep -o '/[^ ]*'); do
    cp "$(readlink -f "$lib")" "$ROOT/opt/app/lib/$(basename "$lib")"
done
loader=$(basename "$(ldd "$prog" | grep -o '/[^ ]*ld-linux[^ ]*' | head -1)")
hostloader=$(readlink -f "$(ldd "$prog" | grep -o '/[^ ]*ld-linux[^ ]*' | head -1)")

# server NAME FLAGS...: a fresh binlog directory each time; sets SERVER (the server's
# host PID: unshare's child, PID 1 of its namespace) and UNSHARE
server() {
    local name=$1 i
    shift
    rw_port_free $PORT
    mkdir -p "$ROOT/data/$name"
    rw_bg "$name" unshare --mount --pid --fork --kill-child bash -c "
        set -e
        mount --make-rprivate /
        mount --bind '$ROOT' '$ROOT'
        mount -t proc proc '$ROOT/proc'
        # /dev as runtimes make it: a tmpfs with the host's harmless device nodes bound
        mount -t tmpfs -o mode=755,nosuid dev '$ROOT/dev'
        for d in null zero random urandom; do
            touch '$ROOT/dev/'\$d
            mount --bind /dev/\$d '$ROOT/dev/'\$d
        done
        cd '$ROOT'
        pivot_root . old
        # the host's umount, run by the host's loader (the new root has neither)
        /old$hostloader --library-path /old/lib/x86_64-linux-gnu:/old/usr/lib/x86_64-linux-gnu \
            /old/usr/bin/umount -l /old
        exec /opt/app/lib/$loader --library-path /opt/app/lib /opt/app/bin/beanstalkd \
            -l 127.0.0.1 -p $PORT -b /data/$name $*"
    UNSHARE=$BG_PID
    rw_wait_port $PORT 10
    SERVER=
    for i in $(seq 50); do
        SERVER=$(cat "/proc/$UNSHARE/task/$UNSHARE/children" 2>/dev/null | awk '{ print $1 }')
        [ -n "$SERVER" ] && break
        sleep 0.1
    done
    [ -n "$SERVER" ] || { echo "$CASE: no server under unshare ($UNSHARE)" >&2; exit 1; }
    RW_PIDS=("$SERVER" "${RW_PIDS[@]}")   # stopped first on exit, then unshare
    # What makes it a container's process, for the record
    {
        echo "server $name: host pid $SERVER, unshare $UNSHARE"
        echo "pid namespace: $(readlink "/proc/$SERVER/ns/pid") (host: $(readlink /proc/self/ns/pid))"
        echo "mount namespace: $(readlink "/proc/$SERVER/ns/mnt") (host: $(readlink /proc/self/ns/mnt))"
        echo "NSpid: $(awk '/^NSpid/ { $1 = ""; print }' "/proc/$SERVER/status")"
        echo "exe: $(readlink "/proc/$SERVER/exe"); cmdline: $(tr '\0' ' ' <"/proc/$SERVER/cmdline")"
        echo "on the host: $(ls -d /opt/app 2>&1)"
        grep -E 'beanstalkd|/opt/app/lib/libc' "/proc/$SERVER/maps" | awk '{ print $6 }' | sort -u
    } >>"$OUT/ns.txt"
    [ "$(readlink "/proc/$SERVER/ns/pid")" != "$(readlink /proc/self/ns/pid)" ] &&
        [ "$(readlink "/proc/$SERVER/ns/mnt")" != "$(readlink /proc/self/ns/mnt)" ] ||
        { echo "$CASE: the server is not in its own namespaces (see $OUT/ns.txt)" >&2; exit 1; }
}
stop_server() {
    rw_stop "$SERVER"    # PID 1 of its namespace: SIGTERM if it handles it, else SIGKILL
    rw_stop "$UNSHARE"
}
throughput() { awk '/^throughput:/ { print $2 }' "$OUT/$1.log"; }
load=$RW/beanstalkd-binlog/load.py

rw_log "beanstalkd -f0 (fsync after every write), namespaced"
server f0 -f0
rw_bg before python3 "$load" $PORT $THREADS $MEASURE
wait "$BG_PID"
before=$(throughput before)
rw_bg recorded python3 "$load" $PORT $THREADS $((RECORD + 2))
LOAD=$BG_PID
sleep 1
echo "$SERVER $LOAD" >"$OUT/pids"
"$CW" record -p "$SERVER,$LOAD" -d "$RECORD" -o "$OUT/trace.cwt" >"$OUT/record.log" 2>&1
wait "$LOAD"
stop_server
rw_log "throughput with -f0: $before puts/s"

rw_log "beanstalkd as by default (fsync at most every 50 ms), namespaced"
server f50
rw_bg after python3 "$load" $PORT $THREADS $MEASURE
wait "$BG_PID"
after=$(throughput after)
stop_server
rm -rf "$ROOT"/data/*
rw_log "throughput with the default: $after puts/s"
rw_fix throughput puts/s "$before" "$after" "-f0 (fsync every write) vs the default -f50, both namespaced"

set +e
"$CW" bottleneck --json "$OUT/trace.cwt" >"$OUT/bottleneck.json" 2>"$OUT/bottleneck.err"
rw_predict
"$CW" bottleneck "$OUT/trace.cwt" >"$OUT/bottleneck.txt" 2>&1
"$CW" info "$OUT/trace.cwt" >"$OUT/info.txt" 2>&1
python3 "$here/judge.py" "$OUT" $(cat "$OUT/pids")
