"""Python calls into a native extension with keyed trace points (cwext.c), imported
after tracing started: argv[1] is the directory holding the built extension. outer()
calls cwext.work(10) 50 times. Prints one JSON object: {"trace": path, "total": sum}.
Run with the causeway module on PYTHONPATH."""

import json
import sys

import causeway

causeway.start()
sys.path.insert(0, sys.argv[1])
import cwext  # noqa: E402  (loaded while tracing runs, on purpose)

causeway.rescan()


def outer(n):
    return cwext.work(n)


total = sum(outer(10) for _ in range(50))
print(json.dumps({"trace": causeway.dump("native"), "total": total}))
