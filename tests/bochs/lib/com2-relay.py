#!/usr/bin/env python3
"""Relay between Bochs's COM2 (socket-client mode) and the host drivers.

Bochs connects to its COM2 socket once, at start-up, and gives up on the port
if nobody listens. Host drivers (a scenario's script, gdb) start later, when
the guest asks for them, and may come and go. This relay listens on two
loopback ports: one for Bochs, one for the drivers (one at a time; a new
driver connection replaces the old one, as gdb reconnecting would expect).
Bytes the guest sends while no driver is connected are kept and delivered to
the next driver, so a guest that writes right after its marker loses nothing.

SIGUSR1 drops what is kept: run.sh sends it when a driver failed, so what the
guest sent for that driver does not reach the next scenario's driver.

Usage: com2-relay.py RUN_DIR
Writes RUN_DIR/com2-ports ("BOCHS_PORT DRIVER_PORT", atomically) once both
ports listen, a transcript RUN_DIR/com2.trace (time, direction, bytes) and
byte counts in RUN_DIR/com2.stats. Exits when Bochs disconnects or on SIGTERM.
"""

import os
import selectors
import signal
import socket
import sys
import time

BACKLOG_LIMIT = 1 << 20  # guest bytes kept for a driver not yet connected


def listener():
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(4)
    return sock


class Relay:
    def __init__(self, run_dir):
        self.run_dir = run_dir
        self.sel = selectors.DefaultSelector()
        self.bochs_listen = listener()
        self.driver_listen = listener()
        self.bochs = None
        self.driver = None
        self.bochs_seen = False
        self.to_driver = bytearray()  # guest bytes waiting for a driver
        self.to_bochs = bytearray()  # driver bytes sent before Bochs connected
        self.counts = {"guest_to_host": 0, "host_to_guest": 0, "backlog_dropped": 0, "drivers": 0}
        self.start = time.monotonic()
        self.trace = open(os.path.join(run_dir, "com2.trace"), "w", buffering=1)
        self.sel.register(self.bochs_listen, selectors.EVENT_READ, self.accept_bochs)
        self.sel.register(self.driver_listen, selectors.EVENT_READ, self.accept_driver)

    def publish_ports(self):
        path = os.path.join(self.run_dir, "com2-ports")
        with open(path + ".tmp", "w") as f:
            f.write("%d %d\n" % (self.bochs_listen.getsockname()[1], self.driver_listen.getsockname()[1]))
        os.rename(path + ".tmp", path)

    def note(self, what, data=b""):
        shown = data[:256].decode("latin-1").encode("unicode_escape").decode("ascii")
        more = "..." if len(data) > 256 else ""
        self.trace.write("%.6f %s %d %s%s\n" % (time.monotonic() - self.start, what, len(data), shown, more))

    def accept_bochs(self, sock):
        conn, _ = sock.accept()
        if self.bochs is not None:
            conn.close()  # only one Bochs per run
            return
        conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.bochs, self.bochs_seen = conn, True
        self.sel.register(conn, selectors.EVENT_READ, self.from_bochs)
        self.note("bochs-connected")
        if self.to_bochs:
            self.bochs.sendall(self.to_bochs)
            self.to_bochs.clear()

    def accept_driver(self, sock):
        conn, _ = sock.accept()
        if self.driver is not None:
            self.drop_driver("replaced by a new connection")
        conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.driver = conn
        self.counts["drivers"] += 1
        self.sel.register(conn, selectors.EVENT_READ, self.from_driver)
        self.note("driver-connected")
        if self.to_driver:
            self.note("backlog-delivered", bytes(self.to_driver))
            self.send_to_driver(bytes(self.to_driver))
            self.to_driver.clear()

    def drop_driver(self, why):
        self.sel.unregister(self.driver)
        self.driver.close()
        self.driver = None
        self.note("driver-closed " + why.replace(" ", "-"))

    def send_to_driver(self, data):
        try:
            self.driver.sendall(data)
        except OSError as err:
            self.drop_driver(str(err))

    def from_bochs(self, sock):
        data = sock.recv(65536)
        # Bochs writes the guest's UART a byte at a time on a socket with
        # Nagle on: each reply's first byte goes out, the rest waits for our
        # ACK, which Linux delays by ~40 ms unless asked (tcp(7) TCP_QUICKACK,
        # not permanent: set after every read).
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_QUICKACK, 1)
        if not data:
            self.note("bochs-closed")
            self.sel.unregister(sock)
            sock.close()
            self.bochs = None
            return
        self.counts["guest_to_host"] += len(data)
        self.note("guest>host", data)
        if self.driver is not None:
            self.send_to_driver(data)
            return
        self.to_driver += data
        excess = len(self.to_driver) - BACKLOG_LIMIT
        if excess > 0:
            del self.to_driver[:excess]
            self.counts["backlog_dropped"] += excess

    def from_driver(self, sock):
        try:
            data = sock.recv(65536)
        except OSError:
            data = b""
        if not data:
            self.drop_driver("by the driver")
            return
        self.counts["host_to_guest"] += len(data)
        self.note("host>guest", data)
        if self.bochs is not None:
            self.bochs.sendall(data)
        else:
            self.to_bochs += data

    def drop_backlog(self, *_):
        if self.to_driver:
            self.note("backlog-dropped", bytes(self.to_driver))
            self.counts["backlog_dropped"] += len(self.to_driver)
            self.to_driver.clear()

    def write_stats(self):
        with open(os.path.join(self.run_dir, "com2.stats"), "w") as f:
            for key, value in self.counts.items():
                f.write("%s=%d\n" % (key, value))

    def run(self):
        self.publish_ports()
        while not (self.bochs_seen and self.bochs is None):
            for key, _ in self.sel.select(timeout=1.0):
                key.data(key.fileobj)
            self.write_stats()


def main():
    if len(sys.argv) != 2:
        sys.stderr.write(__doc__)
        return 2
    relay = Relay(sys.argv[1])
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    signal.signal(signal.SIGUSR1, relay.drop_backlog)
    try:
        relay.run()
    finally:
        relay.write_stats()
    return 0


if __name__ == "__main__":
    sys.exit(main())
