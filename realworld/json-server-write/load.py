"""The load for json-server-write: CLIENTS keep-alive HTTP connections, each POSTing a
small JSON record to /posts and waiting for the reply (201 Created) before the next, as
a front end's users adding items do. One thread drives every connection (a selector),
so a diagnosis of this process's thread asks what its requests wait for. Prints the
posts per second over the seconds after a warm-up.

    python3 load.py PORT CLIENTS WARMUP_S MEASURE_S

"warmed up" is printed when the count starts.
"""
import json
import selectors
import socket
import sys
import time

port, clients, warmup, measure = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4])
sel = selectors.DefaultSelector()


def request(n):
    body = json.dumps({"title": "post %d" % n, "author": "load", "body": "x" * 100}).encode()
    return (b"POST /posts HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            b"Content-Length: %d\r\n\r\n" % len(body)) + body


class Conn:
    def __init__(self, i):
        self.sock = socket.create_connection(("127.0.0.1", port))
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buf, self.n, self.id = b"", 0, i
        sel.register(self.sock, selectors.EVENT_READ, self)
        self.send()

    def send(self):
        self.n += 1
        self.sock.sendall(request(self.id * 1000000 + self.n))

    def readable(self):
        data = self.sock.recv(65536)
        if not data:
            sys.exit("connection %d closed by the server" % self.id)
        self.buf += data
        done = 0
        while True:
            head, sep, rest = self.buf.partition(b"\r\n\r\n")
            if not sep:
                break
            length = 0
            for line in head.split(b"\r\n")[1:]:
                k, _, v = line.partition(b":")
                if k.strip().lower() == b"content-length":
                    length = int(v)
            if len(rest) < length:
                break
            if not head.startswith(b"HTTP/1.1 201"):
                sys.exit("unexpected reply: %r" % head[:80])
            self.buf = rest[length:]
            done += 1
        if done:
            self.send()
        return done


conns = [Conn(i) for i in range(clients)]
count = 0
t_start = time.monotonic()
t0 = t_start + warmup
a = None
while True:
    now = time.monotonic()
    if a is None and now >= t0:
        a, t0 = count, now
        print("warmed up: %d posts in %.1f s" % (count, now - t_start), flush=True)
    if a is not None and now >= t0 + measure:
        break
    for key, _ in sel.select(timeout=0.5):
        count += key.data.readable()
t1 = time.monotonic()
print("throughput: %.1f posts/s (%d clients, %.1f s)" % ((count - a) / (t1 - t0), clients, t1 - t0))
