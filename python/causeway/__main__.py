"""``python -m causeway [options] script.py [args]``: run a program traced from its
first line, with no change to it (see docs/libcauseway.md, "Python")."""

import argparse
import os
import runpy
import sys

# Option -> the library's environment variable (read once, when it loads).
_ENV = {
    "output": "CAUSEWAY_OUTPUT",
    "trigger": "CAUSEWAY_TRIGGER",
    "buffer": "CAUSEWAY_BUFFER",
    "threads": "CAUSEWAY_THREADS",
    "clock": "CAUSEWAY_CLOCK",
    "max_dumps": "CAUSEWAY_MAX_DUMPS",
    "modules": "CAUSEWAY_PY_MODULES",
    "hook": "CAUSEWAY_PY_HOOK",
}


def _parser():
    p = argparse.ArgumentParser(
        prog="python -m causeway",
        description="Run a Python program with every call of the selected modules "
        "traced into libcauseway's in-memory ring buffers; a trace (.cwt) is written "
        "only when a trigger fires: a stalled event loop (threads that call "
        "causeway.heartbeat()), SIGUSR2, causeway.dump() or, with --trigger exit, the "
        "program's end. Read it with `causeway calls TRACE`. Options left out keep "
        "the CAUSEWAY_* environment variable, or the library's default.",
        epilog="examples: python -m causeway app.py --port 8080; "
        "python -m causeway --modules myapp --trigger stall=100ms,exit -m myapp.server",
    )
    p.add_argument("--output", "-o", metavar="DIR", help="directory of the traces (default .)")
    p.add_argument(
        "--trigger",
        metavar="SPEC",
        help="comma-separated triggers: signal=USR1|USR2|off, stall=DURATION|off, exit, "
        "kernel, none (default signal=USR2,stall=200ms)",
    )
    p.add_argument("--modules", metavar="A,B", help="modules to trace with their submodules (default: all)")
    p.add_argument("--buffer", metavar="SIZE", help="ring buffer per thread, e.g. 8M (default 32M)")
    p.add_argument("--threads", metavar="N", help="buffers kept: N or all (default 16)")
    p.add_argument("--clock", metavar="MODE", help="tsc (default) or coarse[:PERIOD]")
    p.add_argument("--max-dumps", metavar="N", help="traces per process, 0 = no limit (default 16)")
    p.add_argument("--hook", choices=["eval", "setprofile"], help="Python 3.11 only: how calls are caught")
    p.add_argument("-m", dest="module", metavar="MODULE", help="run a library module as a script, like python -m")
    p.add_argument("program", nargs=argparse.REMAINDER, help="script.py and its arguments (or the module's arguments)")
    return p


def main():
    p = _parser()
    opts = p.parse_args()
    if opts.module is None and not opts.program:
        p.error("a script (or -m MODULE) to run is needed")
    for key, var in _ENV.items():
        value = getattr(opts, key)
        if value is not None:
            os.environ[var] = value
    import causeway

    # Loading the library now reads the environment set above.
    causeway.start()
    if opts.module is not None:
        sys.argv = [opts.module] + opts.program
        runpy.run_module(opts.module, run_name="__main__", alter_sys=True)
        return
    script = opts.program[0]
    if not os.path.exists(script):
        p.error(f"no such script: {script}")
    sys.argv = opts.program
    # What `python script.py` does: the script's directory first on the path.
    sys.path[0] = os.path.dirname(os.path.abspath(script))
    runpy.run_path(script, run_name="__main__")


if __name__ == "__main__":
    main()
