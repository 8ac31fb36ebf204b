#!/usr/bin/env bash
# Overhead per traced Python call: the causeway module against VizTracer, in the same
# run, on every interpreter the module is built for (Debian's python3 = 3.11, the
# setprofile path; pyenv's 3.12 / 3.13, the sys.monitoring path).
#
#   bash bench/inproc_python.sh          5 runs, 400,000 iterations (4.4 M calls) per run
#   bash bench/inproc_python.sh quick    1 run, 1/10 of the calls
#   RUNS=7 bash bench/inproc_python.sh
#
# Needs `make build` (libcauseway.so and the module). VizTracer is installed from PyPI
# into a venv per interpreter under target/bench-python/ (only here, never system-wide).
# Modes, interleaved in each run so they share the machine's load: base (no tracer),
# causeway-skip (module started, this code not selected), causeway, viztracer, and on
# 3.11 causeway-setprofile (the module's setprofile path instead of its eval hook).
# Overhead per call = (mode - base) per run; min and median over runs are reported.
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:-full}
runs=${RUNS:-5}
iters=400000
[ "$mode" = quick ] && { runs=1; iters=40000; }
rel=target/release
[ -f $rel/libcauseway.so ] || { echo "inproc_python.sh: run make build first" >&2; exit 1; }
bash scripts/build-python.sh >&2
out=${OUT:-$(mktemp -d /tmp/causeway-bench-inproc-python.XXXXXX)}
mkdir -p "$out"
raw=$out/raw.txt
: >"$raw"
echo "# $(date -u '+%Y-%m-%d %H:%M UTC'); $(lscpu | sed -n 's/^Model name: *//p'); $(nproc) CPUs"
echo "# load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
vers=()
for d in $rel/python/3.*; do
    ver=${d##*/}
    py=""
    for cand in /usr/bin/python3 "${PYENV_ROOT:-$HOME/.pyenv}"/versions/$ver.*/bin/python3; do
        [ -x "$cand" ] || continue
        v=$("$cand" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
        [ "$v" = "$ver" ] && { py=$cand; break; }
    done
    [ -n "$py" ] || continue
    venv=target/bench-python/venv-$ver
    if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c 'import viztracer' 2>/dev/null; then
        "$py" -m venv "$venv"
        "$venv/bin/pip" install -q viztracer
    fi
    vz=$("$venv/bin/python" -c 'import viztracer; print(viztracer.__version__)')
    echo "# python $ver: $("$venv/bin/python" -c 'import sys; print(sys.version.split()[0])') ($py), viztracer $vz"
    vers+=("$ver")
done
for run in $(seq 1 "$runs"); do
    for ver in "${vers[@]}"; do
        for work in 0 10; do
            modes="base causeway-skip causeway viztracer"
            [ "$ver" = 3.11 ] && modes="$modes causeway-setprofile"
            for m in $modes; do
                line=$(CAUSEWAY_TRIGGER=none PYTHONPATH=$rel/python/$ver \
                    target/bench-python/venv-$ver/bin/python bench/inproc_python/calls.py \
                    "$m" "$iters" "$work")
                echo "$ver $work $run $line" | tee -a "$raw"
            done
        done
    done
done
echo "# load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# raw lines: $raw"
python3 bench/inproc_python/summary.py "$raw"
