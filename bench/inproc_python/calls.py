"""Call-heavy microbenchmark for Python tracers: Hubble's Listing 1 shape (a recursive
call of depth 10, `work` additions per call), timed in-process around the calls only.

    python3 calls.py MODE ITERATIONS WORK
MODE: base (no tracer), causeway (every call traced), causeway-skip (the causeway
module started with a selection that excludes this file: the DISABLE path on 3.12+),
causeway-setprofile (3.11: the module's
setprofile path instead of its frame evaluation hook), viztracer (VizTracer started,
nothing saved). Prints: MODE CALLS SECONDS NS_PER_CALL.
"""

import os
import sys
import time


def rec(depth, work):
    x = 0
    for _ in range(work):
        x += 1
    if depth == 0:
        return x
    return rec(depth - 1, work) + x


def run(iterations, work):
    for _ in range(iterations):
        rec(10, work)


def main():
    mode, iterations, work = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    run(1000, work)  # warm up the interpreter's caches before any tracer
    stop = None
    if mode in ("causeway", "causeway-skip", "causeway-setprofile"):
        if mode == "causeway-setprofile":
            os.environ["CAUSEWAY_PY_HOOK"] = "setprofile"
        import causeway

        causeway.start(modules=["no_such_module"] if mode == "causeway-skip" else None)
        stop = causeway.stop
    elif mode == "viztracer":
        from viztracer import VizTracer

        tracer = VizTracer(verbose=0)
        tracer.start()
        stop = tracer.stop
    elif mode != "base":
        sys.exit(f"unknown mode {mode}")
    t0 = time.perf_counter()
    run(iterations, work)
    t1 = time.perf_counter()
    if stop:
        stop()
    calls = iterations * 11
    print(f"{mode} {calls} {t1 - t0:.6f} {(t1 - t0) * 1e9 / calls:.2f}")


main()
