#!/usr/bin/env python3
"""Self-test of the COM2 host side without Bochs: lib/com2-relay.py and
host/com2-check.py against a fake guest that plays Bochs's end of the relay.

The fake guest speaks the protocol of client/com2.c, honestly or with one
fault. com2-check.py must pass the honest guest and fail every faulty one,
so its verdict in the Bochs run means something. The honest guest also
greets before the driver connects: the relay must keep those bytes.
"""

import os
import socket
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
RELAY = os.path.join(HERE, "..", "lib", "com2-relay.py")
CHECK = os.path.join(HERE, "com2-check.py")


def pattern(count):
    return bytes(((i * 131 + 7) ^ (i >> 8)) & 0xFF for i in range(count))


class FakeGuest:
    """The guest end; fault names the one thing it gets wrong (or None)."""

    def __init__(self, sock, fault):
        self.sock, self.fault, self.buf = sock, fault, bytearray()

    def read_exact(self, n):
        while len(self.buf) < n:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise EOFError
            self.buf += chunk
        data = bytes(self.buf[:n])
        del self.buf[:n]
        return data

    def read_line(self):
        while b"\n" not in self.buf:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise EOFError
            self.buf += chunk
        line, _, rest = bytes(self.buf).partition(b"\n")
        self.buf = bytearray(rest)
        return line

    def flip_if(self, fault, data):
        if self.fault != fault:
            return data
        return bytes([data[0] ^ 0x20]) + data[1:]

    def serve(self):
        self.sock.sendall(self.flip_if("greeting", b"vtice-com2 hello\n"))
        while True:
            line = self.read_line()
            word, _, arg = line.partition(b" ")
            if word == b"bye":
                return
            if word == b"echo":
                self.sock.sendall(self.flip_if("echo", arg) + b"\n")
            elif word == b"ping":
                for i in range(int(arg)):
                    byte = self.read_exact(1)
                    self.sock.sendall(self.flip_if("ping", byte) if i == 3 else byte)
                self.sock.sendall(b"pinged %d 1000000\n" % int(arg))
            elif word == b"send":
                self.sock.sendall(self.flip_if("send", pattern(int(arg))))
                self.sock.sendall(b"sent %d 1000000\n" % int(arg))
            elif word == b"recv":
                got = self.read_exact(int(arg))
                bad = sum(a != b for a, b in zip(got, pattern(int(arg))))
                if self.fault == "recv":
                    bad += 1
                self.sock.sendall(b"recvd %d %d 1000000\n" % (int(arg), bad))


def run_case(fault):
    """Exit status of com2-check.py against a fake guest with this fault."""
    with tempfile.TemporaryDirectory() as run_dir:
        relay = subprocess.Popen([sys.executable, RELAY, run_dir])
        try:
            ports = os.path.join(run_dir, "com2-ports")
            for _ in range(100):
                if os.path.exists(ports):
                    break
                time.sleep(0.05)
            bochs_port, driver_port = map(int, open(ports).read().split())
            guest = FakeGuest(socket.create_connection(("127.0.0.1", bochs_port)), fault)
            thread = threading.Thread(target=lambda: swallow(guest.serve), daemon=True)
            thread.start()
            time.sleep(0.3)  # the greeting waits in the relay for the driver
            env = dict(os.environ, VTICE_COM2="127.0.0.1:%d" % driver_port)
            result = subprocess.run([sys.executable, CHECK], env=env, timeout=60,
                                    capture_output=True, text=True)
            guest.sock.close()
            return result.returncode, result.stdout + result.stderr
        finally:
            relay.terminate()
            relay.wait()


def swallow(fn):
    try:
        fn()
    except (EOFError, OSError):
        pass


def main():
    failures = 0
    for fault, want in [(None, 0), ("greeting", 1), ("echo", 1), ("ping", 1),
                        ("send", 1), ("recv", 1)]:
        got, output = run_case(fault)
        ok = got == want
        failures += not ok
        print("%s fault=%s: com2-check exited %d, expected %d" % ("ok  " if ok else "FAIL", fault, got, want))
        if not ok:
            print("    " + output.replace("\n", "\n    "))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
