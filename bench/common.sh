# Shared start of the bench scripts: sourced, not run.
#
#   bench_start NAME TOOL...   go to the repository root, resolve $CAUSEWAY if set,
#                              insist on root and on each TOOL, make $TMP
#                              (/tmp/causeway-NAME.XXXXXX)

bench_start() {
    local name=$1
    shift
    REPO=$(cd "$(dirname "${BASH_SOURCE[1]}")/.." && pwd)
    [ -n "${CAUSEWAY:-}" ] && CAUSEWAY=$(realpath "$CAUSEWAY")
    cd "$REPO"
    if [ "$(id -u)" != 0 ]; then
        echo "$name.sh: needs root (eBPF and perf tracepoints)" >&2
        exit 1
    fi
    local tool
    for tool in "$@"; do
        command -v "$tool" >/dev/null || { echo "$name.sh: $tool not found" >&2; exit 1; }
    done
    TMP=$(mktemp -d "/tmp/causeway-$name.XXXXXX")
}
