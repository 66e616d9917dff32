#!/usr/bin/env python3
"""Integration test: `trace syscall openat` against the real QEMU gdbstub.

Run under tests/qemu/run.sh exec. Checks:
  1. vtice's block-stepping trace of one openat of vtice-work renders a
     function graph that contains getname, do_filp_open and path_openat, and
     so does `vtice report` on the trace file it wrote (the btf-trace reader);
  2. its instruction count matches, within 3 %, a plain single-step count of
     the same path made by real gdb: vtice stops at the next openat of
     vtice-work and ends with `disconnect` (the VM stays paused there), then
     gdb's Python stepi-s from __x64_sys_openat until it returns, counting
     instructions (a rep iteration that leaves pc unchanged is not a new one).
Exit 77 (skip) when gdb is missing.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

from rig import fail, qemu_port, gdb_step_count, vtice



def graph_functions(text):
    return set(re.findall(r"\|\s+([A-Za-z_][A-Za-z0-9_.]*)\(\)", text))


def main():
    binary = sys.argv[1]
    port = qemu_port()
    if not shutil.which("gdb"):
        print("SKIP: gdb (the peer) is not installed")
        return 77
    work = tempfile.mkdtemp(prefix="vtice-trace-")
    trace_file = os.path.join(work, "openat.vtrace")

    out = vtice(binary, port, ["trace syscall openat --comm vtice-work -o " + trace_file,
                                    "break __x64_sys_openat", "continue", "info task", "delete",
                                    "disconnect"])
    funcs = graph_functions(out)
    for want in ("getname", "do_filp_open", "path_openat"):
        if want not in funcs:
            fail("function graph lacks %s()" % want, out)
    m = re.search(r"trace: (\d+) instructions \((\d+) decoded into (\d+) calls\)", out)
    if not m:
        fail("no trace summary", out)
    block_insns, calls = int(m.group(1)), int(m.group(3))
    if 'comm "vtice-work"' not in out:
        fail("the next openat stop is not in vtice-work", out)

    report = subprocess.run([binary, "report", trace_file], capture_output=True, text=True, timeout=60)
    if report.returncode != 0:
        fail("vtice report failed", report.stdout, report.stderr)
    for want in ("getname", "do_filp_open", "path_openat"):
        if want not in graph_functions(report.stdout):
            fail("vtice report of the trace file lacks %s()" % want, report.stdout)

    step_insns, _, _ = gdb_step_count(port, os.path.join(work, "count.py"))
    ratio = block_insns / step_insns
    if abs(ratio - 1) > 0.03:
        fail("vtice block trace counted %d instructions, gdb single-stepping %d (%.1f %%)"
             % (block_insns, step_insns, 100 * (ratio - 1)), out)
    print("PASS: openat traced: %d instructions in %d calls (gdb single-step: %d, %+.2f %%); graph has "
          "getname, do_filp_open, path_openat" % (block_insns, calls, step_insns, 100 * (ratio - 1)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
