"""Always-on Python call tracing into libcauseway's per-thread ring buffers.

Dumps are causeway traces (see docs/libcauseway.md, "Python"). The C half,
``causeway._native``, is loaded at the first use of any name of this package, not
at ``import causeway``: loading it loads libcauseway.so, whose start-up reads the
``CAUSEWAY_*`` environment variables, and ``python -m causeway`` must set them from
its options first (the package is imported before its ``__main__`` runs).
"""

import importlib

_native = None


def _load():
    global _native
    if _native is None:
        _native = importlib.import_module("causeway._native")
    return _native


def __getattr__(name):
    # PEP 562: every public name (start, stop, dump, heartbeat, mode, ...) is the
    # native module's; dunder look-ups (copy, pickle, doctest) must not load it.
    if name.startswith("__"):
        raise AttributeError(name)
    value = getattr(_load(), name)
    # Kept in the package, so the next look-up (a heartbeat per loop turn) is a plain
    # module attribute, not a call of this function.
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | {n for n in dir(_load()) if not n.startswith("_")})
