#!/usr/bin/env python3
"""Host end of the Bochs rig's COM2 check (guest end: vtice-test com2).

Started by run.sh when the guest prints "VTICE-HOST com2 START"; talks to the
guest's /dev/ttyS1 through the relay at $VTICE_COM2 (host:port). It is the
judge of the round trip: exit 0 only if
  - the guest's first line is the known greeting,
  - a random line sent with "echo" comes back unchanged,
  - every byte of a ping-pong comes back unchanged,
  - the N bytes the guest sends follow the shared pattern, and
  - the guest counted 0 wrong bytes in the N the host sent.
Prints VTICE-FIGURE lines (bytes/s and round trips, in guest time as the
guest measured it and in wall time as seen here); check.sh collects them.
"""

import os
import secrets
import socket
import sys
import time

GREETING = b"vtice-com2 hello"
PINGS = 32
TRANSFER = 4096
TIMEOUT_S = 120  # wall; Bochs at 115200 baud moves ~4 KiB in a few seconds


def pattern(count):
    return bytes(((i * 131 + 7) ^ (i >> 8)) & 0xFF for i in range(count))


class Line:
    def __init__(self, address):
        host, port = address.rsplit(":", 1)
        self.sock = socket.create_connection((host, int(port)), timeout=TIMEOUT_S)
        self.buf = bytearray()

    def send(self, data):
        self.sock.sendall(data)

    def recv_exact(self, count):
        while len(self.buf) < count:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise EOFError("the relay closed the line")
            self.buf += chunk
        data = bytes(self.buf[:count])
        del self.buf[:count]
        return data

    def recv_line(self):
        while b"\n" not in self.buf:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise EOFError("the relay closed the line")
            self.buf += chunk
        line, _, rest = bytes(self.buf).partition(b"\n")
        self.buf = bytearray(rest)
        return line


def figure(key, value):
    print("VTICE-FIGURE com2.host.%s=%s" % (key, value), flush=True)


def expect_reply(line, word, fields):
    """The guest's "WORD n1 n2 ..." reply as integers, or an error."""
    reply = line.recv_line().decode("ascii", "replace").split()
    if len(reply) != fields + 1 or reply[0] != word:
        raise ValueError("expected '%s' with %d numbers, got %r" % (word, fields, reply))
    return [int(x) for x in reply[1:]]


def check_greeting(line):
    got = line.recv_line()
    if got != GREETING:
        raise ValueError("greeting: expected %r, got %r" % (GREETING, got))
    print("greeting ok: %r" % got)


def check_echo(line):
    text = b"payload-" + secrets.token_hex(24).encode()
    start = time.monotonic()
    line.send(b"echo " + text + b"\n")
    got = line.recv_line()
    wall = time.monotonic() - start
    if got != text:
        raise ValueError("echo: sent %r, got %r" % (text, got))
    print("echo ok: %d bytes in %.3f s wall" % (len(text), wall))
    figure("echo_line_wall_ms", "%.1f" % (wall * 1000))


def check_ping(line):
    line.send(b"ping %d\n" % PINGS)
    values = secrets.token_bytes(PINGS)
    start = time.monotonic()
    for i in range(PINGS):
        line.send(values[i:i + 1])
        got = line.recv_exact(1)
        if got != values[i:i + 1]:
            raise ValueError("ping %d: sent %r, got %r" % (i, values[i:i + 1], got))
    wall = time.monotonic() - start
    count, guest_ns = expect_reply(line, "pinged", 2)
    if count != PINGS:
        raise ValueError("ping: the guest counted %d of %d" % (count, PINGS))
    print("ping ok: %d one-byte round trips" % PINGS)
    figure("rtt_guest_us", "%.0f" % (guest_ns / PINGS / 1000))
    figure("rtt_wall_us", "%.0f" % (wall / PINGS * 1e6))


def check_guest_to_host(line):
    want = pattern(TRANSFER)
    start = time.monotonic()
    line.send(b"send %d\n" % TRANSFER)
    first = line.recv_exact(1)
    first_at = time.monotonic()
    got = first + line.recv_exact(TRANSFER - 1)
    wall = time.monotonic() - first_at
    if got != want:
        bad = sum(a != b for a, b in zip(got, want))
        raise ValueError("guest->host: %d of %d bytes differ from the pattern" % (bad, TRANSFER))
    count, guest_ns = expect_reply(line, "sent", 2)
    print("guest->host ok: %d bytes, %.3f s wall after the first byte (%.3f s from the command)"
          % (count, wall, time.monotonic() - start))
    figure("guest_to_host_bytes_per_s_guest", "%.0f" % (TRANSFER / (guest_ns / 1e9)))
    figure("guest_to_host_bytes_per_s_wall", "%.0f" % (TRANSFER / wall))


def check_host_to_guest(line):
    line.send(b"recv %d\n" % TRANSFER)
    start = time.monotonic()
    line.send(pattern(TRANSFER))
    count, bad, guest_ns = expect_reply(line, "recvd", 3)
    wall = time.monotonic() - start
    if count != TRANSFER or bad:
        raise ValueError("host->guest: the guest got %d bytes, %d wrong" % (count, bad))
    print("host->guest ok: %d bytes, %.3f s wall" % (count, wall))
    figure("host_to_guest_bytes_per_s_guest", "%.0f" % (TRANSFER / (guest_ns / 1e9)))
    figure("host_to_guest_bytes_per_s_wall", "%.0f" % (TRANSFER / wall))


def main():
    address = os.environ.get("VTICE_COM2")
    if not address:
        print("com2-check: VTICE_COM2 is not set (run.sh sets it)", file=sys.stderr)
        return 2
    line = Line(address)
    try:
        check_greeting(line)
        check_echo(line)
        check_ping(line)
        check_guest_to_host(line)
        check_host_to_guest(line)
        line.send(b"bye\n")
    except (ValueError, EOFError, OSError) as err:
        print("com2-check: FAIL: %s" % err, file=sys.stderr)
        return 1
    print("com2-check: all round trips ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
