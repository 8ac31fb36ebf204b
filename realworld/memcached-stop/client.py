"""A memcached client as an application holds one: one connection, `set` then `get` of a
key in a loop for SECONDS, each waiting for its reply. Prints the requests done and the
longest request in seconds."""
import socket
import sys
import time

port, seconds = int(sys.argv[1]), float(sys.argv[2])
s = socket.create_connection(("127.0.0.1", port))
s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)


def call(req, end):
    s.sendall(req)
    buf = b""
    while not buf.endswith(end):
        chunk = s.recv(4096)
        if not chunk:
            sys.exit("memcached-stop: the server closed the connection")
        buf += chunk


done, longest = 0, 0.0
stop = time.monotonic() + seconds
while time.monotonic() < stop:
    t0 = time.monotonic()
    call(b"set k 0 0 5\r\nhello\r\n", b"STORED\r\n")
    call(b"get k\r\n", b"END\r\n")
    longest = max(longest, time.monotonic() - t0)
    done += 1
print("%d %.3f" % (done, longest))
