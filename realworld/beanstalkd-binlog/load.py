"""Load generator for beanstalkd (it ships none): THREADS producers, one connection
each, each `put`ting a 128-byte job and waiting for INSERTED before the next, for SECONDS.

usage: load.py PORT THREADS SECONDS     prints "throughput: X puts/s"
"""
import socket
import sys
import threading
import time

port, nthreads, secs = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
body = b"j" * 128
req = b"put 0 0 60 %d\r\n%s\r\n" % (len(body), body)
count = [0] * nthreads
stop = time.monotonic() + secs


def producer(i):
    s = socket.create_connection(("127.0.0.1", port))
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    replies = s.makefile("rb")
    while time.monotonic() < stop:
        s.sendall(req)
        line = replies.readline()
        if not line.startswith(b"INSERTED"):
            sys.exit("unexpected reply %r" % line)
        count[i] += 1


threads = [threading.Thread(target=producer, args=(i,)) for i in range(nthreads)]
t0 = time.monotonic()
for t in threads:
    t.start()
for t in threads:
    t.join()
print("throughput: %.1f puts/s" % (sum(count) / (time.monotonic() - t0)))
