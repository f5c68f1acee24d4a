#!/usr/bin/python3
# Slow HTTP clients for tests/attack/metrics-slowloris.sh: holds N connections to 127.0.0.1:PORT for
# SECONDS, each sending the start of a request and then one header byte every 2 s, never finishing it.
# A connection the server closes is opened again. Prints one summary line at the end.
#   slow-http.py PORT N SECONDS
import errno
import resource
import selectors
import socket
import sys
import time

port, n, seconds = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
resource.setrlimit(resource.RLIMIT_NOFILE, (n + 64, n + 64))
sel = selectors.DefaultSelector()
conns = {}  # socket -> [connected, next byte time]
opened = closed_by_server = 0


def open_one():
    global opened
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setblocking(False)
    try:
        s.connect(("127.0.0.1", port))
    except BlockingIOError:
        pass
    except OSError:
        s.close()
        return
    conns[s] = [False, 0.0]
    sel.register(s, selectors.EVENT_WRITE)
    opened += 1


def drop(s):
    global closed_by_server
    closed_by_server += 1
    sel.unregister(s)
    del conns[s]
    s.close()


for _ in range(n):
    open_one()
end = time.monotonic() + seconds
while time.monotonic() < end:
    for key, _ in sel.select(timeout=0.2):
        s = key.fileobj
        st = conns.get(s)
        if st is None:
            continue
        if not st[0]:
            if s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR):
                drop(s)
                continue
            st[0] = True
            try:
                s.send(b"GET /metrics HTTP/1.1\r\nHost: x\r\n")
            except OSError:
                drop(s)
                continue
            st[1] = time.monotonic() + 2
            sel.modify(s, selectors.EVENT_READ)
        else:  # readable: the server answered or closed
            try:
                if not s.recv(4096):
                    drop(s)
            except OSError:
                drop(s)
    now = time.monotonic()
    for s, st in list(conns.items()):
        if st[0] and now >= st[1]:
            st[1] = now + 2
            try:
                s.send(b"X")
            except OSError:
                drop(s)
    while len(conns) < n:
        open_one()
established = sum(1 for st in conns.values() if st[0])
print(f"slow clients: {n} held open, {established} connected at the end, {opened} connections opened, "
      f"{closed_by_server} closed by the server")
