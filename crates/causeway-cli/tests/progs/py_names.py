"""Functions with awkward names, each called once, then a dump: the dump must name every
one exactly as causeway.name_of does. Prints one JSON object: {"trace": path,
"names": [...]}. With the argument `select`, only the json package is traced. Run with the module on
PYTHONPATH."""

import json
import sys
import threading

import causeway


class Outer:
    class Inner:
        def method(self):
            return 1

    @staticmethod
    def static():
        return 2


def nested():
    def inner_fn():
        return 3

    return inner_fn


def café_ünïcode_名前():
    return 4


def gen():
    yield 5


exec("def " + "very_long_name_" * 40 + "(): return 6")
LONG = globals()["very_long_name_" * 40]
SHORT_LAMBDA = lambda: 7  # noqa: E731


def in_thread():
    return 8


def main():
    # A thread started after start(): traced too (on 3.11's setprofile path through
    # threading.setprofile), and its buffer outlives it until the dump.
    t = threading.Thread(target=in_thread)
    t.start()
    t.join()
    inner = nested()
    funcs = [Outer.Inner().method, Outer.static, nested, inner, café_ünïcode_名前, LONG, SHORT_LAMBDA]
    for f in funcs:
        f()
    list(gen())
    json.dumps({"warm": [1, 2]})
    names = [causeway.name_of(f) for f in funcs + [gen, main, in_thread]]
    path = causeway.dump("names")
    print(json.dumps({"trace": path, "names": names, "mode": causeway.mode}))


# "select": trace only the json package; this file's functions must then be absent.
causeway.start(modules=["json"] if sys.argv[1:] == ["select"] else None)
main()
