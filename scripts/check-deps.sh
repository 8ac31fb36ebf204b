#!/usr/bin/env bash
# The format, model, import, analysis and report crates must build without root and without
# libbpf: only recorder crates may touch the kernel. Fails if a forbidden dependency
# appears in their normal dependency tree.
set -euo pipefail
status=0
for crate in causeway-format causeway-model causeway-import causeway-bottleneck causeway-stacks causeway-compare causeway-latency causeway-calls causeway-diagnose causeway-report; do
    tree=$(cargo tree -p "$crate" -e normal --prefix none)
    if echo "$tree" | grep -Eq '^(libbpf|libbpf-rs|libbpf-sys|aya|causeway-record)\b'; then
        echo "check-deps: $crate depends on a kernel-facing crate:" >&2
        echo "$tree" | grep -E '^(libbpf|aya|causeway-record)' >&2
        status=1
    fi
done
[ $status -eq 0 ] && echo "check-deps: format, model, import, bottleneck, stacks, compare, latency, calls, diagnose and report crates are free of libbpf"
exit $status
