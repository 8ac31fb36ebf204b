#!/usr/bin/env bash
# Caddy (the web server) and hey (an HTTP load generator) as Debian ships them: the
# packages are downloaded with `apt-get download` and unpacked into the cache with
# `dpkg-deb -x`, not installed, so that Debian's caddy service (a server on port 80) is
# neither started nor left behind; the binaries are the packages' own, stripped, built
# with Go 1.19. Safe to rerun: what exists is kept.
set -euo pipefail
. "$(dirname "$0")/../lib/common.sh"
rw_init caddy-gzip

dir=$CACHE/caddy
root=$dir/root
mkdir -p "$dir"
if [ ! -x "$root/usr/bin/caddy" ] || [ ! -x "$root/usr/bin/hey" ]; then
    rw_log "apt-get download caddy hey (Debian), unpacked into $root"
    rm -rf "$dir/debs" "$root"
    mkdir -p "$dir/debs" "$root"
    ( cd "$dir/debs" && { apt-get download caddy hey >&2 ||
        { apt-get update -q >&2 && apt-get download caddy hey >&2; }; } )
    for deb in "$dir"/debs/*.deb; do dpkg-deb -x "$deb" "$root"; done
fi
# What the binaries are (judge.py puts it in the result): Debian strips them
{
    for b in caddy hey; do
        echo "$b: $(dpkg-deb -f "$dir"/debs/${b}_*.deb Version)"
        file -b "$root/usr/bin/$b" | grep -o 'stripped\|not stripped' | head -1
        readelf -S "$root/usr/bin/$b" | grep -o '\.symtab\|\.debug_info\|\.gopclntab\|\.go\.buildinfo' | tr '\n' ' '
        echo
        if command -v go >/dev/null; then echo "built with $(go version "$root/usr/bin/$b" | sed "s/.*: //")"; fi
    done
} >"$dir/binaries.txt" 2>&1
echo "$root/usr/bin" >"$dir/bin"
