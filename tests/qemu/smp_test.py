#!/usr/bin/env python3
"""Integration test with two vCPUs (run.sh --smp 2): `info threads` lists one
RSP thread per vCPU (qfThreadInfo), `thread 2` switches registers to vCPU 1,
and a breakpoint + trace from do_sys_openat2 works while the other vCPU runs
during each continue (its stops are skipped by the task-stack check).
"""
import re
import sys

from rig import fail, qemu_port, vtice


def main():
    binary = sys.argv[1]
    port = qemu_port()
    out = vtice(binary, port, ["info threads", "thread 2", "info registers rip", "thread 1",
                               "break do_sys_openat2", "continue", "delete", "trace"])
    listed = re.findall(r"^[* ] (\d+)\s+vCPU (\d+)", out, re.M)
    if [t for t, _ in listed[:2]] != ["1", "2"]:
        fail("info threads should list threads 1 and 2 (one per vCPU)", out)
    if "[Switching to thread 2 (vCPU 1)]" not in out:
        fail("thread 2 did not switch", out)
    for want in ("getname", "do_filp_open", "path_openat"):
        if not re.search(r"\|\s+%s\(\)" % want, out):
            fail("trace from do_sys_openat2 on a 2-vCPU guest lacks %s()" % want, out)
    m = re.search(r"trace: (\d+) instructions .* (\d+) interruptions skipped", out)
    if not m:
        fail("no trace summary", out)
    print("PASS: 2 vCPUs listed, thread switch, trace of %s instructions (%s interruptions skipped)"
          % (m.group(1), m.group(2)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
