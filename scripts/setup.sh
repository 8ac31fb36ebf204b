#!/usr/bin/env bash
# Install what causeway needs to build, record and test on Debian/Ubuntu.
# Idempotent: installs only missing packages and mounts tracefs only if absent.
set -euo pipefail

# Packages: a C toolchain for the workload zoo and zstd-sys; perf for `causeway import`
# and for the peer measurements in bench/; clang, libelf, zlib, pkg-config and bpftool
# for the eBPF recorder; graphviz for SVG wait-for graphs; gzip (a Debian binary not built
# by us) and the C library's debug information (libc6-dbg, from the main archive) for the
# unwinding tests; python3 for scripts/check-structure.py; uftrace, the peer of libcauseway's
# benchmark (bench/inproc); chromium for the HTML report's end-to-end test.
PKGS=(build-essential pkg-config linux-perf clang libelf-dev zlib1g-dev bpftool graphviz gzip iproute2 libc6-dbg python3 python3-dev python3-venv chromium uftrace)
# The peers of bench/funclat.sh (bpftrace's hist(), BCC's funclatency, which compiles
# against kernel headers), only when asked: CI does not run that benchmark.
if [ "${CAUSEWAY_BENCH:-0}" = 1 ]; then
    PKGS+=(bpftrace bpfcc-tools linux-headers-amd64)
fi

missing=()
for p in "${PKGS[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
    if [ "$(id -u)" -ne 0 ]; then
        echo "setup: missing packages: ${missing[*]}; run as root or install them with apt-get" >&2
        exit 1
    fi
    echo "setup: installing ${missing[*]}" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# The workspace uses edition 2024 and let-chains: Rust 1.88 or newer, with rustfmt and
# clippy for `make lint`. Debian's own cargo is too old; use rustup's toolchain.
if ! command -v cargo >/dev/null 2>&1; then
    echo "setup: cargo not found; install Rust 1.88+ with rustup (https://rustup.rs)" >&2
    exit 1
fi
rust_minor=$(rustc --version | sed -E 's/^rustc 1\.([0-9]+).*/\1/')
if [ "${rust_minor:-0}" -lt 88 ] 2>/dev/null; then
    echo "setup: $(rustc --version) is too old; causeway needs Rust 1.88 or newer" >&2
    exit 1
fi
for tool in rustfmt clippy-driver; do
    command -v "$tool" >/dev/null 2>&1 || echo "setup: warning: $tool missing (rustup component add ${tool%-driver})" >&2
done

# Go builds the Go workloads of the zoo (workloads/go, standard library only). A
# machine's own Go is used when it has one; otherwise Debian's golang-go (1.19 on
# Debian 12 is new enough for them).
if ! command -v go >/dev/null 2>&1; then
    if [ "$(id -u)" -ne 0 ]; then
        echo "setup: go not found; install Go 1.19+ (apt-get install golang-go)" >&2
        exit 1
    fi
    echo "setup: installing golang-go" >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends golang-go >/dev/null ||
        { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends golang-go >/dev/null; }
fi

# Node.js runs the zoo's JavaScript workload (workloads/node) and the JIT tests: a
# machine's own node when it has one; otherwise Debian's nodejs (18 on Debian 12 writes
# the perf maps they read).
if ! command -v node >/dev/null 2>&1; then
    if [ "$(id -u)" -ne 0 ]; then
        echo "setup: node not found; install Node.js 18+ (apt-get install nodejs)" >&2
        exit 1
    fi
    echo "setup: installing nodejs" >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends nodejs >/dev/null ||
        { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends nodejs >/dev/null; }
fi

# DuckDB (from PyPI, in a virtual environment of its own) reads the Parquet tables in
# the interoperability test of `causeway tables`: another engine must count what
# causeway's own SQL counts.
venv="$(dirname "$0")/../target/interop-venv"
if [ ! -x "$venv/bin/python3" ] || ! "$venv/bin/python3" -c "import duckdb" 2>/dev/null; then
    echo "setup: installing duckdb into target/interop-venv" >&2
    python3 -m venv "$venv" && "$venv/bin/pip" install -q "duckdb==2.0.1" >&2 ||
        echo "setup: warning: could not install duckdb from PyPI; the tables interop test will fail" >&2
fi

# Debian's perf is a wrapper that needs the perf build matching the running kernel.
if ! perf --version >/dev/null 2>&1; then
    echo "setup: warning: perf does not run on this kernel; \`causeway import\` tests and the demo need it" >&2
fi

# Kernel tracing needs tracefs; mount it where the kernel expects it if it is absent.
if [ "$(id -u)" -eq 0 ] && [ -d /sys/kernel/tracing ] && [ ! -e /sys/kernel/tracing/events ]; then
    mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null || true
fi
if [ "$(id -u)" -eq 0 ] && [ ! -e /sys/kernel/tracing/events/sched ]; then
    echo "setup: warning: tracefs is not available at /sys/kernel/tracing; kernel recording will fail" >&2
fi
exit 0
