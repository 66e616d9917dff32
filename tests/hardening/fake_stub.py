#!/usr/bin/env python3
"""A GDB RSP stub that misbehaves on purpose, for the hostile-input suite.

It serves one x86-64 "target" on a unix socket (or a pty) well enough for
`vtice attach` to connect, and then misbehaves in the way its mode names:

  good        answers like a small stub: registers, errors for memory, OK for
              breakpoints, a stop 0.2 s after each continue
  hot         every continue stops at once at the same breakpoint (a hot
              conditional breakpoint on a real kernel)
  deaf        a continue never stops, and the ^C break-in is ignored
  slow-read   a read of memory at 0x1000 is never answered (a stub stuck
              mid-request)
  nul         sends NUL bytes without end from the start
  dollar      sends '$' without end from the start
  stale       never acknowledges; sends a stale stop packet every second
  silent      accepts and never sends a byte
  close       hangs up at once
  hostile-text  answers like good, but its monitor output and stop signal
              text carry terminal control bytes

Usage: fake_stub.py MODE unix:PATH | pty:LINKPATH   (runs until killed)
"""
import os
import pty
import socket
import sys
import threading
import time
import tty

# The registers of vtice's built-in amd64 layout: 17 x 64-bit, 7 x 32-bit.
REGISTERS_HEX = "00" * (17 * 8 + 7 * 4)
HOSTILE = "\x1b[2J\x1b]0;owned\x07\x9b31m\x00"


def checksum(payload: bytes) -> bytes:
    return b"%02x" % (sum(payload) & 0xFF)


def frame(payload: str) -> bytes:
    data = payload.encode("latin-1")
    return b"$" + data + b"#" + checksum(data)


class Conversation:
    """One connection: splits the byte stream into packets, answers them."""

    def __init__(self, mode, send, recv):
        self.mode, self.send, self.recv = mode, send, recv
        self.running = False
        self.buffer = b""

    def serve(self):
        if self.mode == "close":
            return
        if self.mode in ("nul", "dollar"):
            byte = b"\0" if self.mode == "nul" else b"$"
            while True:
                self.send(byte * 4096)
        if self.mode == "stale":
            while True:
                self.send(frame("S05"))
                time.sleep(1)
        while True:
            data = self.recv(65536)
            if not data:
                return
            if self.mode == "silent":
                continue
            self.buffer += data
            self.drain()

    def drain(self):
        while self.buffer:
            head = self.buffer[:1]
            if head in (b"+", b"-"):
                self.buffer = self.buffer[1:]
                continue
            if head == b"\x03":
                self.buffer = self.buffer[1:]
                self.on_break_in()
                continue
            if head != b"$":
                self.buffer = self.buffer[1:]
                continue
            end = self.buffer.find(b"#")
            if end < 0 or len(self.buffer) < end + 3:
                return
            payload = self.buffer[1:end].decode("latin-1")
            self.buffer = self.buffer[end + 3:]
            self.send(b"+")
            reply = self.answer(payload)
            if reply is not None:
                self.send(frame(reply))

    def on_break_in(self):
        if self.mode == "deaf" or not self.running:
            return
        self.running = False
        self.send(frame("T02thread:01;"))

    def stop_later(self):
        def later():
            time.sleep(0.2)
            if self.running:
                self.running = False
                self.send(frame("T05thread:01;"))
        threading.Thread(target=later, daemon=True).start()

    def answer(self, p):
        if p.startswith("qSupported"):
            return "PacketSize=4000;swbreak+;hwbreak+"
        if p == "?":
            return "T05thread:01;"
        if p == "g":
            return REGISTERS_HEX
        if p.startswith("m"):
            return None if self.mode == "slow-read" and p.startswith("m1000,") else "E14"
        if p[:1] in ("Z", "z"):
            return "OK"
        if p.startswith("qfThreadInfo"):
            return "m01"
        if p.startswith("qsThreadInfo"):
            return "l"
        if p.startswith("qRcmd"):
            if self.mode == "hostile-text":
                self.send(frame("O" + HOSTILE.encode("latin-1").hex()))
                return "OK"
            return ""
        if p.startswith("H") or p == "D" or p.startswith("D;"):
            return "OK"
        if p in ("c", "s") or p.startswith("vCont;"):
            self.running = True
            if self.mode == "hot":
                self.running = False
                return "T05thread:01;"
            if self.mode != "deaf":
                self.stop_later()
            return None
        return ""


def serve_socket(mode, path):
    if os.path.exists(path):
        os.unlink(path)
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(path)
    server.listen(4)
    while True:
        conn, _ = server.accept()

        def run(c=conn):
            try:
                Conversation(mode, c.sendall, c.recv).serve()
            except OSError:
                pass
            finally:
                c.close()
        threading.Thread(target=run, daemon=True).start()


def serve_pty(mode, link):
    master, slave = pty.openpty()
    tty.setraw(slave)
    if os.path.lexists(link):
        os.unlink(link)
    os.symlink(os.ttyname(slave), link)

    def send(data):
        os.write(master, data)

    def recv(n):
        # EIO while no one holds the other end open: wait for the next one.
        while True:
            try:
                return os.read(master, n)
            except OSError:
                time.sleep(0.05)
    try:
        Conversation(mode, send, recv).serve()
    except OSError:
        pass


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    mode, where = sys.argv[1], sys.argv[2]
    kind, _, path = where.partition(":")
    if kind == "unix":
        serve_socket(mode, path)
    elif kind == "pty":
        serve_pty(mode, path)
    else:
        sys.exit("unknown address " + where)


if __name__ == "__main__":
    main()
