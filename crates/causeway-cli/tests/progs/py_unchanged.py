# A program that knows nothing of causeway: `python -m causeway` traces it unchanged.
# It prints what a script run by `python script.py` sees, so the test can check the
# launcher keeps it: its arguments, its __name__ and its directory first on sys.path.
import json
import os
import sys


def leaf(n):
    return n + 1


def mid(n):
    return leaf(n) * 2


def main():
    total = 0
    for i in range(50):
        total += mid(i)
    print(json.dumps({
        "argv": sys.argv,
        "name": __name__,
        "path0": sys.path[0],
        "here": os.path.dirname(os.path.abspath(__file__)),
        "total": total,
    }))
    # The exit status must come back through the launcher.
    sys.exit(int(sys.argv[1]))


main()
