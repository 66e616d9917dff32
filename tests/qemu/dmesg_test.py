#!/usr/bin/env python3
"""Integration test: `dmesg` reads the kernel's log from guest memory.

The oracle is the kernel's own reader: before the test attaches, the guest's
/init writes a line of its own to /dev/kmsg (with a tab and a control byte)
and prints `dmesg` (busybox, through syslog(2)) on its serial console. Every
one of those lines must appear, in the same order, in what vtice reads from
the stopped kernel's printk ring buffer (offsets from the kernel's BTF, read
from guest memory too); `dmesg N` prints exactly the last N lines.
"""
import os
import re
import sys

from rig import fail, qemu_port
from rig import vtice as rig_vtice


def guest_dmesg(serial_log):
    with open(serial_log, "rb") as f:
        text = f.read().decode("utf-8", errors="replace")
    m = re.search(r"VTICE-DMESG-BEGIN\r?\n(.*?)VTICE-DMESG-END", text, re.S)
    if not m:
        return None
    # vtice shows control bytes as \xNN (documented); so write the oracle's.
    escape = lambda line: re.sub(r"[\x00-\x08\x0a-\x1f\x7f]", lambda c: "\\x%02x" % ord(c.group()), line)
    return [escape(l.rstrip("\r")) for l in m.group(1).split("\n") if re.match(r"\[\s*\d+\.\d{6}\] ", l)]


def in_order(want, got):
    """How many of want appear in got in order (greedy: want is a sublist)."""
    i = 0
    for line in got:
        if i < len(want) and line == want[i]:
            i += 1
    return i


def main():
    binary = sys.argv[1]
    port = qemu_port()
    want = guest_dmesg(os.path.join(os.environ["VTICE_QEMU_DIR"], "serial.log"))
    if not want:
        fail("the guest printed no dmesg between VTICE-DMESG-BEGIN and END")
    syms = os.environ["VTICE_QEMU_KALLSYMS"]
    out = rig_vtice(binary, port, ["dmesg", "detach"], "--symbols", syms)
    lines = [l for l in out.split("\n") if re.match(r"\[\s*\d+\.\d{6}\] ", l)]
    matched = in_order(want, lines)
    if matched != len(want):
        fail("%d of the guest's %d dmesg lines appear in order; first missing: %r"
             % (matched, len(want), want[matched]), out)
    ours = [l for l in want if "vtice-rig: a line from /init" in l]
    if not ours or "\t" not in ours[0] or "\\x01" not in ours[0]:
        fail("the /init line with a tab and a control byte: %r" % ours, out)
    last = rig_vtice(binary, port, ["dmesg 5", "detach"], "--symbols", syms)
    tail = [l for l in last.split("\n") if re.match(r"\[\s*\d+\.\d{6}\] ", l)]
    full = rig_vtice(binary, port, ["dmesg", "detach"], "--symbols", syms)
    full_lines = [l for l in full.split("\n") if re.match(r"\[\s*\d+\.\d{6}\] ", l)]
    if len(tail) != 5 or tail != full_lines[-5:]:
        fail("dmesg 5 is not the last 5 lines of dmesg", last, full)
    print("PASS: all %d lines of the guest's own dmesg appear in order among the %d vtice read from "
          "memory; dmesg 5 = its last 5 lines" % (len(want), len(lines)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
