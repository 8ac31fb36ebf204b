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

# bench_causeway: build causeway unless $CAUSEWAY names a binary, then use a private copy
# in $TMP (target/ may be rebuilt while a bench runs): sets $CW and $CW_ID (its hash and
# build time, for the results).
bench_causeway() {
    if [ -z "${CAUSEWAY:-}" ]; then
        echo "== cargo build --release -p causeway-cli" >&2
        cargo build --release -p causeway-cli >&2
        CAUSEWAY=target/release/causeway
    fi
    cp "$CAUSEWAY" "$TMP/causeway"
    CW=$TMP/causeway
    CW_ID="sha256 $(sha256sum "$CW" | cut -c1-12), built $(date -u -r "$CAUSEWAY" '+%Y-%m-%d %H:%M UTC')"
}
