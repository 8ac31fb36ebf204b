#!/usr/bin/env bash
# NATS server and the NATS command-line tool (its `nats bench`), built from the Go module
# proxy with `go install` into the cache. A normal build: it keeps the symbols and the
# DWARF that causeway reads to follow goroutines. Safe to rerun: what exists is kept.
set -euo pipefail
. "$(dirname "$0")/../lib/common.sh"
rw_init nats-sync

SERVER_VERSION=${NATS_SERVER_VERSION:-v2.15.2}
CLI_VERSION=${NATSCLI_VERSION:-v0.5.0}
bin=$CACHE/nats/bin-$SERVER_VERSION-$CLI_VERSION
GO=${GO:-$(command -v go || echo /usr/local/go/bin/go)}
[ -x "$GO" ] || { echo "nats-sync: needs the Go toolchain (go on PATH or GO=...)" >&2; exit 2; }
mkdir -p "$bin"
# GOTOOLCHAIN=local: build with the Go that is here, never download another one
if [ ! -x "$bin/nats-server" ]; then
    rw_log "go install nats-server $SERVER_VERSION"
    GOTOOLCHAIN=local GOBIN="$bin" GOFLAGS= "$GO" install \
        "github.com/nats-io/nats-server/v2@$SERVER_VERSION" >&2
fi
if [ ! -x "$bin/nats" ]; then
    rw_log "go install natscli $CLI_VERSION"
    GOTOOLCHAIN=local GOBIN="$bin" GOFLAGS= "$GO" install \
        "github.com/nats-io/natscli/nats@$CLI_VERSION" >&2
fi
echo "$bin" >"$CACHE/nats/bin"
