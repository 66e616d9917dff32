#!/usr/bin/env python3
"""The target as vtice finds it, under QEMU: a session killed while QEMU's
gdbstub was in physical-memory mode (Qqemu.PhyMemMode:1, which vtice uses
for page walks) leaves it there, and every later virtual read would return
the wrong bytes. A raw client plays that killed session; vtice attach must
notice, switch QEMU back, say so on stderr, and read linux_banner's bytes
as the guest's /proc/kallsyms locates them ("Linux ve")."""

import os
import re
import socket
import subprocess
import sys

from rig import fail, kallsyms, qemu_port, vtice


class Line:
    """A bare RSP client: QEMU may send a stop reply of its own first (the
    connection stops the guest), so replies are matched by what they say."""

    def __init__(self, port):
        self.sock = socket.create_connection(("127.0.0.1", int(port)), timeout=30)
        self.buf = b""

    def reply(self):
        while True:
            start = self.buf.find(b"$")
            end = self.buf.find(b"#", start) if start >= 0 else -1
            if end >= 0 and len(self.buf) >= end + 3:
                body = self.buf[start + 1:end].decode(errors="replace")
                self.buf = self.buf[end + 3:]
                self.sock.sendall(b"+")
                return body
            chunk = self.sock.recv(4096)
            if not chunk:
                return ""
            self.buf += chunk

    def request(self, body, skip_stops=True):
        data = body.encode()
        self.sock.sendall(b"$" + data + b"#%02x" % (sum(data) & 0xFF))
        while True:
            answer = self.reply()
            if not (skip_stops and answer[:1] in ("T", "S")):
                return answer


def main():
    binary = sys.argv[1]
    port = qemu_port()
    banner_at = kallsyms(os.environ["VTICE_QEMU_KALLSYMS"])["linux_banner"]
    boot_cr8 = gdb_cr8(port)  # before any vtice session: the task priority the kernel set itself
    line = Line(port)
    line.request("qSupported")
    if line.request("Qqemu.PhyMemMode:1") != "OK":
        print("SKIP: this QEMU has no physical-memory mode")
        return 77
    if line.request("qqemu.PhyMemMode") != "1":
        fail("QEMU did not enter physical-memory mode")
    line.sock.close()
    # The raw session is gone without switching back, as a killed one would.
    # gdb's tcp:HOST:PORT form, which vtice takes too.
    run = subprocess.run([binary, "attach", "tcp:127.0.0.1:" + port, "--batch", "-", "--no-cache", "--timeout", "60"],
                         input="x/8xb 0x%x\ndetach\n" % banner_at, capture_output=True, text=True, timeout=300)
    if run.returncode != 0:
        fail("vtice attach exited %d" % run.returncode, run.stdout, run.stderr)
    if "left in physical-memory mode" not in run.stderr:
        fail("vtice attach did not report QEMU's leftover physical-memory mode", run.stderr)
    m = re.search(r"0x%x[^:]*:\s+((?:0x[0-9a-f]{2}\s*){8})" % banner_at, run.stdout)
    got = bytes(int(b, 16) for b in m.group(1).split()) if m else b""
    if got != b"Linux ve":
        fail("linux_banner read as %r, want b'Linux ve'" % got, run.stdout)
    check_ambiguous_name(binary, port)
    check_left_running(binary, port)
    check_task_priority_repaired(binary, port, boot_cr8)
    print("PASS: QEMU's leftover physical-memory mode was switched back; linux_banner reads 'Linux ve'; "
          "break on a name with several copies lists them and NAME#N picks one; the end of input, quit "
          "and SIGTERM detach (the guest runs on), disconnect leaves it stopped; the kernel's own CR8 (%d, as "
          "gdb read it) is left alone, and a CR8 left at 15 is put back to it" % boot_cr8)
    return 0


def check_ambiguous_name(binary, port):
    """type_show is a static function with many copies in the Debian kernel:
    break must say how many (the guest's /proc/kallsyms counts them) and
    NAME#N must land on one of them."""
    copies = set()
    with open(os.environ["VTICE_QEMU_KALLSYMS"]) as f:
        for line in f:
            parts = line.split()
            if len(parts) >= 3 and parts[1] in ("t", "T") and parts[2] == "type_show":
                copies.add(int(parts[0], 16))
    if len(copies) < 2:
        fail("the guest's kallsyms has %d type_show; the test needs a name with copies" % len(copies))
    run = subprocess.run([binary, "attach", "127.0.0.1:" + port, "--batch", "-", "--no-cache"],
                         input="break *0x0000800000000000\n", capture_output=True, text=True, timeout=120)
    if run.returncode == 0 or "not a canonical address (bits 63..47" not in run.stdout:
        fail("a breakpoint at a non-canonical address (4-level guest) was not refused", run.stdout, run.stderr)
    out = vtice(binary, port, ["break type_show", "break type_show#2", "delete", "detach"])
    if "note: 'type_show' names %d symbols" % len(copies) not in out:
        fail("break type_show did not report its %d copies" % len(copies), out)
    placed = [int(a, 16) for a in re.findall(r"^Breakpoint \d+ at (0x[0-9a-f]+)", out, re.M)]
    if len(placed) != 2 or placed[0] == placed[1] or not set(placed) <= copies:
        fail("breakpoints %s are not two different type_show copies" % [hex(a) for a in placed], out)


HZ = 250  # Debian's CONFIG_HZ: jiffies per second of guest time


def jiffies(binary, port, last="detach"):
    """The guest's jiffies, read in a session ended by `last`."""
    out = vtice(binary, port, ["x/1xg jiffies", last])
    m = re.search(r"<jiffies(?:_64)?>:\s+(0x[0-9a-f]+)", out)
    if not m:
        fail("no jiffies in the output", out)
    return int(m.group(1), 16)


def check_left_running(binary, port):
    """Every way a session ends lets the guest run on, except disconnect.
    The witness is the guest's own clock: jiffies advance only while it runs."""
    import signal
    import time
    # The end of the batch input, with a breakpoint set: detach.
    run = subprocess.run([binary, "attach", "127.0.0.1:" + port, "--batch", "-", "--no-cache"],
                         input="break do_sys_openat2\nx/1xg jiffies\n", capture_output=True, text=True, timeout=120)
    if run.returncode != 0 or "Detached; breakpoints removed, the target runs on." not in run.stdout:
        fail("the end of the batch input did not detach (exit %d)" % run.returncode, run.stdout, run.stderr)
    before = int(re.search(r"<jiffies(?:_64)?>:\s+(0x[0-9a-f]+)", run.stdout).group(1), 16)
    time.sleep(2)
    after = jiffies(binary, port, "disconnect")
    if after - before < HZ:
        fail("after the end of input the guest ran %d jiffies in 2 s (want >= %d): still stopped?"
             % (after - before, HZ))
    # disconnect leaves it stopped: not one jiffy passes.
    time.sleep(1)
    still = jiffies(binary, port, "quit")
    if still != after:
        fail("after disconnect the guest ran %d jiffies; it should have stayed stopped" % (still - after))
    # quit in the middle of a batch: the rest is not run, and the guest runs on.
    run = subprocess.run([binary, "attach", "127.0.0.1:" + port, "--batch", "-", "--no-cache"],
                         input="quit\nprint 0x5555\n", capture_output=True, text=True, timeout=120)
    if run.returncode != 0 or "0x5555" in run.stdout or "Detached" not in run.stdout:
        fail("quit did not end the batch with a detach", run.stdout, run.stderr)
    time.sleep(1)
    if jiffies(binary, port, "disconnect") - still < HZ // 2:
        fail("after quit the guest did not run")
    # SIGTERM while `continue` waits for a breakpoint that never hits.
    session = subprocess.Popen([binary, "attach", "127.0.0.1:" + port, "--batch", "-", "--no-cache",
                                "--timeout", "120"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    session.stdin.write("break __x64_sys_reboot\ncontinue\n")
    session.stdin.flush()
    time.sleep(2)
    session.send_signal(signal.SIGTERM)
    out, err = session.communicate(timeout=60)
    if session.returncode != 128 + signal.SIGTERM or "Detached" not in out:
        fail("SIGTERM during continue: exit %d, want %d after a detach" % (session.returncode, 128 + signal.SIGTERM),
             out, err)
    first = jiffies(binary, port, "disconnect")
    time.sleep(0.1)
    if jiffies(binary, port, "quit") != first:
        fail("the guest ran while disconnected")
    time.sleep(1)
    if jiffies(binary, port, "quit") - first < HZ // 2:
        fail("after SIGTERM and a quit the guest did not run on")


def gdb_cr8(port):
    """CR8 as real gdb reads it through QEMU's gdbstub."""
    gdb = subprocess.run(["gdb", "-batch", "-nx", "-ex", "target remote 127.0.0.1:" + port, "-ex", "p/x $cr8",
                          "-ex", "detach"], capture_output=True, text=True, timeout=120)
    m = re.search(r"^\$1 = (0x[0-9a-f]+)$", gdb.stdout, re.M)
    if not m:
        fail("gdb did not read $cr8", gdb.stdout, gdb.stderr)
    return int(m.group(1), 16)


def attach_cr8(binary, port, commands):
    run = subprocess.run([binary, "attach", "127.0.0.1:" + port, "--batch", "-", "--no-cache"],
                         input="info registers cr8\n" + commands, capture_output=True, text=True, timeout=120)
    m = re.search(r"^cr8\s+(0x[0-9a-f]+)\b", run.stdout, re.M)
    return run, int(m.group(1), 16) if m else None


def check_task_priority_repaired(binary, port, boot_cr8):
    """Linux sets the task priority once at boot (CR8 1) and never again:
    an attach must leave it as it is. A trace raises CR8 to 15 and restores
    it when done; a session lost in between leaves it (played here with
    set + disconnect). With CR8 at 15 no timer interrupt reaches the guest
    and jiffies stand still; the next attach must put back the kernel's
    own value (gdb's reading before any session), say so, and the guest's
    clock move again."""
    import time
    run, cr8 = attach_cr8(binary, port, "detach\n")
    if cr8 != boot_cr8 or "CR8 was" in run.stderr or gdb_cr8(port) != boot_cr8:
        fail("attach changed the kernel's own CR8 %d (it read %s)" % (boot_cr8, cr8), run.stdout, run.stderr)
    vtice(binary, port, ["set $cr8 = 15", "disconnect"])
    run, cr8 = attach_cr8(binary, port, "x/1xg jiffies\n")
    if "CR8 was 15" not in run.stderr or cr8 != boot_cr8:
        fail("attach did not put a leftover CR8 of 15 back to the kernel's %d" % boot_cr8, run.stdout, run.stderr)
    before = int(re.search(r"<jiffies(?:_64)?>:\s+(0x[0-9a-f]+)", run.stdout).group(1), 16)
    time.sleep(1)
    if jiffies(binary, port, "quit") - before < HZ // 2:
        fail("with CR8 repaired the guest's clock still does not move")


if __name__ == "__main__":
    sys.exit(main())
