#!/bin/sh
# The Go runtime's layouts by version, for goroutines in stripped Go binaries.
#
#   scripts/go-layouts.sh [VERSION...]     (default: the latest patch of 1.19 ... 1.26)
#
# For each version: downloads its toolchain through the Go module proxy (GOTOOLCHAIN),
# builds causeway-goruntime's small test program with symbols and DWARF, with
# -ldflags='-s -w' and stripped, checks that causeway reads the same runtime facts
# from the three (probe points, layout, wait reasons, version), and prints the row of
# crates/causeway-goruntime/src/versions.rs that the DWARF gives. A new Go version is
# supported by adding its row; the test `layouts_by_version` then checks it against
# every toolchain left in the module cache.
set -eu

cd "$(dirname "$0")/.."
versions=${*:-1.19.13 1.20.14 1.21.13 1.22.12 1.23.12 1.24.13 1.25.14 1.26.8}
cargo build --release -q -p causeway-goruntime --example go-inspect
inspect=$PWD/target/release/examples/go-inspect
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

status=0
for v in $versions; do
	v=${v#go}
	# Download the toolchain (through the proxy), then run it from its own root with a
	# GOPATH of its own: go1.19 fails ("import of unknown directory") on a GOPATH
	# whose module cache newer toolchains filled.
	GOTOOLCHAIN="go$v" go version >/dev/null
	root="$(go env GOMODCACHE)/golang.org/toolchain@v0.0.1-go$v.linux-amd64"
	[ -x "$root/bin/go" ] || root=$(GOTOOLCHAIN=local go env GOROOT) # the machine's own
	(
		cd crates/causeway-goruntime/tests/tiny
		export GOROOT="$root" GOPATH="$tmp/gopath" GOTOOLCHAIN=local GOFLAGS=-mod=mod
		"$root/bin/go" build -o "$tmp/full-$v" .
		"$root/bin/go" build -ldflags='-s -w' -o "$tmp/sw-$v" .
	)
	cp "$tmp/full-$v" "$tmp/strip-$v"
	strip "$tmp/strip-$v"
	full=$("$inspect" "$tmp/full-$v" | cut -d: -f2-)
	same=yes
	for k in sw strip; do
		if [ "$("$inspect" "$tmp/$k-$v" | cut -d: -f2-)" != "$full" ]; then
			same=no
			status=1
			echo "go$v: the $k build differs:" >&2
			"$inspect" "$tmp/$k-$v" >&2
		fi
	done
	echo "go$v: stripped builds read the same: $same; row:"
	"$inspect" --row "$tmp/full-$v"
done
exit $status
