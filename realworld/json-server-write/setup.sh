#!/usr/bin/env bash
# json-server from npm (`npm install json-server@VERSION` into the cache), run by the
# system's Node.js. Safe to rerun: what exists is kept.
set -euo pipefail
. "$(dirname "$0")/../lib/common.sh"
rw_init json-server-write

VERSION=${JSON_SERVER_VERSION:-0.17.4}
dir=$CACHE/json-server/$VERSION
command -v node >/dev/null || rw_apt nodejs
command -v npm >/dev/null || rw_apt npm
if [ ! -f "$dir/node_modules/json-server/lib/cli/bin.js" ]; then
    rw_log "npm install json-server@$VERSION"
    mkdir -p "$dir"
    npm install --no-audit --no-fund --prefix "$dir" "json-server@$VERSION" >&2
fi
echo "$dir/node_modules/json-server/lib/cli/bin.js" >"$CACHE/json-server/bin"
