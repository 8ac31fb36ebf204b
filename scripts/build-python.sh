#!/usr/bin/env bash
# Build the `causeway` Python package (python/causeway/*.py and its C half
# python/native.c, an extension over libcauseway) for every Python 3.11+ interpreter
# found, after scripts/build-libcauseway.sh:
#   target/release/python/3.X/causeway/{__init__,__main__}.py, _native.cpython-3X-....so
# Use it with PYTHONPATH=target/release/python/3.X (`python -m causeway script.py`).
# The extension links libcauseway.so (runpath $ORIGIN/../../..), so under `causeway run
# --inproc` (LD_PRELOAD) both are one copy of the library.
# Interpreters: the arguments, else python3 on PATH, /usr/bin/python3 and pyenv's 3.11+
# versions. One without its C headers (Debian: python3-dev) is skipped with a message.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${CAUSEWAY_TARGET:-target/release}
if [ ! -f "$out/libcauseway.so" ]; then
    echo "build-python: $out/libcauseway.so missing; run scripts/build-libcauseway.sh" >&2
    exit 1
fi
if [ $# -gt 0 ]; then
    pys=("$@")
else
    pys=(/usr/bin/python3)
    command -v python3 >/dev/null && pys+=("$(command -v python3)")
    for d in "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.*; do
        [ -x "$d/bin/python3" ] && pys+=("$d/bin/python3")
    done
fi
declare -A done_ver=()
built=0
for py in "${pys[@]}"; do
    [ -x "$py" ] || continue
    # Real interpreter behind a shim, its version, headers and extension suffix.
    read -r ver inc suffix < <("$py" -c 'import sys, sysconfig
print("%d.%d" % sys.version_info[:2], sysconfig.get_paths()["include"], sysconfig.get_config_var("EXT_SUFFIX"))' 2>/dev/null) || continue
    [ -n "${done_ver[$ver]:-}" ] && continue
    case $ver in 3.1[1-9]) ;; *) continue ;; esac
    done_ver[$ver]=1
    if [ ! -f "$inc/Python.h" ]; then
        echo "build-python: skipping $py ($ver): no $inc/Python.h (install python3-dev)" >&2
        continue
    fi
    dir="$out/python/$ver/causeway"
    mkdir -p "$dir"
    # The module of the first layout (one extension named causeway) would shadow nothing
    # (a package wins) but confuses: remove it.
    rm -f "$out/python/$ver/causeway$suffix"
    ${CC:-cc} -O2 -g -fPIC -shared -Wall -Wextra -Werror -fvisibility=hidden \
        -I"$inc" -Icrates/causeway-inproc/c python/native.c \
        -o "$dir/_native$suffix.tmp$$" -L"$out" -lcauseway -Wl,-rpath,'$ORIGIN/../../..'
    mv "$dir/_native$suffix.tmp$$" "$dir/_native$suffix"
    cp python/causeway/__init__.py python/causeway/__main__.py "$dir/"
    echo "build-python: $dir ($py)"
    built=$((built + 1))
done
if [ "$built" -eq 0 ]; then
    echo "build-python: no Python 3.11+ interpreter with headers found" >&2
    exit 1
fi
