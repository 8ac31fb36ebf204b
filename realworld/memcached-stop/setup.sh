#!/usr/bin/env bash
# memcached as Debian ships it, downloaded with `apt-get download` and unpacked into the
# cache with `dpkg-deb -x`, not installed, so that Debian's memcached service (a server
# on port 11211) is neither started nor left behind; its library (libevent) from Debian
# with apt-get. Safe to rerun: what exists is kept.
set -euo pipefail
. "$(dirname "$0")/../lib/common.sh"
rw_init memcached-stop
rw_apt libevent-2.1-7 procps python3

dir=$CACHE/memcached
root=$dir/root
mkdir -p "$dir"
if [ ! -x "$root/usr/bin/memcached" ]; then
    rw_log "apt-get download memcached (Debian), unpacked into $root"
    rm -rf "$dir/debs" "$root"
    mkdir -p "$dir/debs" "$root"
    ( cd "$dir/debs" && { apt-get download memcached >&2 ||
        { apt-get update -q >&2 && apt-get download memcached >&2; }; } )
    for deb in "$dir"/debs/*.deb; do dpkg-deb -x "$deb" "$root"; done
fi
dpkg-deb -f "$dir"/debs/memcached_*.deb Version >"$dir/version"
