#!/usr/bin/env bash
# ns-run.sh PROGRAM [ARGS...]: run a zoo workload the way a container runtime starts a
# service, without one: in its own mount and PID namespaces, its root a directory that
# holds a copy of the program and of its libraries at /opt/app/bin and /opt/app/lib,
# paths that do not exist on the host (the program is started through the copied
# dynamic loader, so that no path it maps is the host's). Needs root and util-linux's
# unshare. Exits with the program's status.
set -euo pipefail
prog=$(readlink -f "$1")
shift
root=$(mktemp -d /tmp/ns-run.XXXXXX)
trap 'rm -rf "$root"' EXIT
mkdir -p "$root/opt/app/bin" "$root/opt/app/lib" "$root/proc" "$root/tmp" "$root/old"
cp "$prog" "$root/opt/app/bin/"
for lib in $(ldd "$prog" | grep -o '/[^ ]*'); do
    cp "$lib" "$root/opt/app/lib/"
done
loader=$(ldd "$prog" | grep -o '/[^ ]*ld-linux[^ ]*' | head -1)
loader=$(readlink -f "$loader")
name=$(basename "$prog")
quoted=$(printf ' %q' "$@")
unshare --mount --pid --fork bash -c "
    set -e
    mount --make-rprivate /
    mount --bind '$root' '$root'
    mount -t proc proc '$root/proc'
    cd '$root'
    pivot_root . old
    # The host's umount, run by the host's loader (the new root has neither).
    /old$loader --library-path /old/lib/x86_64-linux-gnu:/old/usr/lib/x86_64-linux-gnu \
        /old/usr/bin/umount -l /old
    exec /opt/app/lib/$(basename "$loader") --library-path /opt/app/lib /opt/app/bin/$name$quoted"
