"""Write json-server-write's database: DIR/db.json with ROWS posts (about 200 bytes
each pretty-printed), and DIR/db.js, the same data as a JavaScript module, which
json-server keeps in memory without writing it back (the fix)."""
import json
import os
import sys

d, rows = sys.argv[1], int(sys.argv[2])
os.makedirs(d, exist_ok=True)
posts = [{"id": i, "title": "post %d" % i, "author": "user%d" % (i % 97),
          "body": "lorem ipsum dolor sit amet " * 3, "tags": ["a", "b"]}
         for i in range(1, rows + 1)]
comments = [{"id": i, "postId": i, "body": "comment %d" % i} for i in range(1, rows // 4 + 1)]
with open(os.path.join(d, "db.json"), "w") as f:
    json.dump({"posts": posts, "comments": comments, "profile": {"name": "realworld"}}, f, indent=2)
with open(os.path.join(d, "db.js"), "w") as f:
    f.write("module.exports = () => require('./db.json');\n")
