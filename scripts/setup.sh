#!/usr/bin/env bash
# Install what causeway needs to build, record and test on Debian/Ubuntu.
# Idempotent: installs only missing packages and mounts tracefs only if absent.
set -euo pipefail

# Packages: a C toolchain for the workload zoo and zstd-sys; perf for `causeway import`
# and for the peer measurements in bench/; clang, libelf, zlib, pkg-config and bpftool
# for the eBPF recorder; graphviz for SVG wait-for graphs.
PKGS=(build-essential pkg-config linux-perf clang libelf-dev zlib1g-dev graphviz)

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

if ! command -v cargo >/dev/null 2>&1; then
    echo "setup: cargo not found; install a Rust toolchain (rustup or Debian's cargo)" >&2
    exit 1
fi

# Kernel tracing needs tracefs; mount it where the kernel expects it if it is absent.
if [ "$(id -u)" -eq 0 ] && [ -d /sys/kernel/tracing ] && [ ! -e /sys/kernel/tracing/events ]; then
    mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null || \
        echo "setup: warning: could not mount tracefs at /sys/kernel/tracing" >&2
fi
exit 0
