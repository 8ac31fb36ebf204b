#!/usr/bin/env bash
# lighttpd (web server) and its mod_deflate as Debian ships them, downloaded with
# `apt-get download` and unpacked into the cache with `dpkg-deb -x`, not installed, so
# that Debian's lighttpd service (a server on port 80) is neither started nor left
# behind; their libraries, and wrk (an HTTP load generator), from Debian with apt-get.
# Safe to rerun: what exists is kept.
set -euo pipefail
. "$(dirname "$0")/../lib/common.sh"
rw_init lighttpd-quota
rw_apt wrk libc6 libcrypt1 libnettle8 libpcre2-8-0 libxxhash0 libbrotli1 libdeflate0 \
    libzstd1 zlib1g

dir=$CACHE/lighttpd
root=$dir/root
mkdir -p "$dir"
if [ ! -x "$root/usr/sbin/lighttpd" ] || [ ! -f "$root/usr/lib/lighttpd/mod_deflate.so" ]; then
    rw_log "apt-get download lighttpd lighttpd-mod-deflate (Debian), unpacked into $root"
    rm -rf "$dir/debs" "$root"
    mkdir -p "$dir/debs" "$root"
    ( cd "$dir/debs" && { apt-get download lighttpd lighttpd-mod-deflate >&2 ||
        { apt-get update -q >&2 && apt-get download lighttpd lighttpd-mod-deflate >&2; }; } )
    for deb in "$dir"/debs/*.deb; do dpkg-deb -x "$deb" "$root"; done
fi
dpkg-deb -f "$dir"/debs/lighttpd_*.deb Version >"$dir/version"
