"""Load generator for Mosquitto (it ships no benchmark): a minimal MQTT 3.1.1 client.

usage: load.py preload PORT N          publish N retained 512-byte messages (QoS 1) to
                                       N topics: the broker's stored state
       load.py run PORT THREADS SECONDS   THREADS publishers, one connection each, each
                                       publishing a retained QoS 1 message and waiting for
                                       its PUBACK before the next; prints
                                       "throughput: X msgs/s"
"""
import socket
import struct
import sys
import threading
import time


def varint(n):
    out = bytearray()
    while True:
        b, n = n % 128, n // 128
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


def s16(b):
    return struct.pack("!H", len(b)) + b


def packet(kind, body):
    return bytes([kind]) + varint(len(body)) + body


def readn(s, n):
    buf = b""
    while len(buf) < n:
        chunk = s.recv(n - len(buf))
        if not chunk:
            sys.exit("connection closed by the broker")
        buf += chunk
    return buf


def connect(port, client_id):
    s = socket.create_connection(("127.0.0.1", port))
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    # CONNECT: protocol "MQTT" level 4, clean session, keep-alive 60 s
    s.sendall(packet(0x10, s16(b"MQTT") + b"\x04\x02\x00\x3c" + s16(client_id.encode())))
    if readn(s, 4)[0] != 0x20:
        sys.exit("no CONNACK")
    return s


def publish(s, topic, payload, packet_id):
    # PUBLISH with QoS 1 and the retain flag; the broker answers PUBACK (4 bytes)
    s.sendall(packet(0x33, s16(topic) + struct.pack("!H", packet_id) + payload))
    if readn(s, 4)[0] != 0x40:
        sys.exit("no PUBACK")


payload = b"p" * 512
mode, port = sys.argv[1], int(sys.argv[2])
if mode == "preload":
    s = connect(port, "rw-preload")
    for i in range(int(sys.argv[3])):
        publish(s, b"fleet/%d/state" % i, payload, i % 65535 + 1)
    sys.exit(0)

nthreads, secs = int(sys.argv[3]), float(sys.argv[4])
count = [0] * nthreads
stop = time.monotonic() + secs


def publisher(i):
    s = connect(port, "rw-pub-%d" % i)
    while time.monotonic() < stop:
        publish(s, b"live/%d" % i, payload, count[i] % 65535 + 1)
        count[i] += 1


threads = [threading.Thread(target=publisher, args=(i,)) for i in range(nthreads)]
t0 = time.monotonic()
for t in threads:
    t.start()
for t in threads:
    t.join()
print("throughput: %.1f msgs/s" % (sum(count) / (time.monotonic() - t0)))
