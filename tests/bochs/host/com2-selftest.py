#!/usr/bin/env python3
"""Self-test of the COM2 host side without Bochs: lib/com2-relay.py and
host/com2-check.py against a fake guest that plays Bochs's end of the relay.

The fake guest speaks the protocol of client/com2.c, honestly or with one
fault. com2-check.py must pass the honest guest and fail every faulty one,
so its verdict in the Bochs run means something. The honest guest also
greets before the driver connects: the relay must keep those bytes.

With --client PATH (vtice-test built for the host), the real guest code runs
too, on a pseudo-terminal bridged to the relay in place of Bochs's UART:
"com2" against com2-check.py, and "gdbwire" against gdb-wire.py with real
gdb (skipped when gdb is not installed).

Usage: com2-selftest.py [--client PATH]
"""

import os
import pty
import select
import shutil
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
        relay, (bochs_port, driver_port) = start_relay(run_dir)
        try:
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


def start_relay(run_dir):
    """The relay process and its (bochs_port, driver_port)."""
    relay = subprocess.Popen([sys.executable, RELAY, run_dir])
    ports = os.path.join(run_dir, "com2-ports")
    for _ in range(200):
        if os.path.exists(ports):
            return relay, tuple(map(int, open(ports).read().split()))
        time.sleep(0.05)
    relay.kill()
    raise RuntimeError("the relay did not start")


def bridge(master, sock):
    """Copies between a pty master and the relay's Bochs port, as Bochs's
    UART would, until either side closes."""
    while True:
        ready, _, _ = select.select([master, sock], [], [], 60)
        if not ready:
            return
        for f in ready:
            try:
                data = os.read(master, 4096) if f is master else sock.recv(4096)
            except OSError:
                return
            if not data:
                return
            if f is master:
                sock.sendall(data)
            else:
                os.write(master, data)


def wait_for_line(path, text, seconds):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if text in open(path, errors="replace").read():
            return True
        time.sleep(0.1)
    return False


def run_client_case(client, command, driver, scenario):
    """Runs "vtice-test COMMAND SCENARIO PTY" and DRIVER as run.sh would:
    the driver starts once the guest side is ready. Returns (driver exit,
    guest exit, output)."""
    with tempfile.TemporaryDirectory() as run_dir:
        relay, (bochs_port, driver_port) = start_relay(run_dir)
        master, slave = pty.openpty()
        sock = socket.create_connection(("127.0.0.1", bochs_port))
        threading.Thread(target=lambda: swallow(lambda: bridge(master, sock)), daemon=True).start()
        serial_log = os.path.join(run_dir, "serial.log")
        try:
            with open(serial_log, "w") as out:
                guest = subprocess.Popen([client, command, scenario, os.ttyname(slave)],
                                         stdout=out, stderr=subprocess.STDOUT)
            if command == "com2":
                time.sleep(0.3)  # the greeting must wait in the relay
            elif not wait_for_line(serial_log, "VTICE-HOST %s START" % scenario, 10):
                guest.kill()
            env = dict(os.environ, VTICE_COM2="127.0.0.1:%d" % driver_port,
                       VTICE_SERIAL_LOG=serial_log, VTICE_SCENARIO=scenario)
            result = subprocess.run([sys.executable, driver], env=env, timeout=120, cwd=run_dir,
                                    capture_output=True, text=True)
            guest_rc = guest.wait(timeout=60)
            return result.returncode, guest_rc, result.stdout + result.stderr + open(serial_log).read()
        finally:
            relay.terminate()
            relay.wait()
            sock.close()
            os.close(master)
            os.close(slave)


def client_cases(client):
    cases = [("com2", CHECK, "com2")]
    if shutil.which("gdb"):
        cases.append(("gdbwire", os.path.join(HERE, "gdb-wire.py"), "com2gdb"))
    else:
        print("skip gdbwire: gdb is not installed")
    failures = 0
    for command, driver, scenario in cases:
        driver_rc, guest_rc, output = run_client_case(client, command, driver, scenario)
        ok = driver_rc == 0 and guest_rc == 0 and "VTICE-TEST %s." % scenario in output
        failures += not ok
        print("%s vtice-test %s on a pty: driver %s exited %d, guest %d" % (
            "ok  " if ok else "FAIL", command, os.path.basename(driver), driver_rc, guest_rc))
        if not ok:
            print("    " + output.replace("\n", "\n    "))
    return failures


def swallow(fn):
    try:
        fn()
    except (EOFError, OSError):
        pass


def main():
    failures = 0
    if sys.argv[1:2] == ["--client"]:
        failures += client_cases(sys.argv[2])
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
