#!/usr/bin/env python3
"""Integration test: `trace syscall openat` against the real QEMU gdbstub.

Run under tests/qemu/run.sh exec. Checks:
  1. vtice's block-stepping trace of one openat of vtice-work renders a
     function graph that contains getname, do_filp_open and path_openat, and
     so does `vtice report` on the trace file it wrote (the btf-trace reader);
  2. its instruction count matches, within 3 %, a plain single-step count of
     the same path made by real gdb: vtice stops at the next openat of
     vtice-work and quits without detaching (QEMU keeps the VM paused), then
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

GDB_COUNT = r'''
import gdb
ret = int(gdb.parse_and_eval("*(unsigned long *)$rsp"))
sp0 = int(gdb.parse_and_eval("$rsp"))
pc = int(gdb.parse_and_eval("$pc"))
n = 0
while n < 200000:
    gdb.execute("stepi", to_string=True)
    npc = int(gdb.parse_and_eval("$pc"))
    if npc != pc:
        n += 1
    pc = npc
    if pc == ret and int(gdb.parse_and_eval("$rsp")) > sp0:
        break
print("GDB-INSTRUCTIONS %d" % n)
'''


def fail(message, *outputs):
    print("FAIL:", message)
    for out in outputs:
        print("---- output ----")
        print(out[-6000:])
    sys.exit(1)


def vtice_batch(vtice, port, commands, timeout=240):
    run = subprocess.run([vtice, "attach", "127.0.0.1:" + port, "--batch", "-", "--timeout", "60"],
                         input="\n".join(commands) + "\n", capture_output=True, text=True, timeout=timeout)
    if run.returncode != 0:
        fail("vtice attach exited with %d" % run.returncode, run.stdout, run.stderr)
    return run.stdout


def graph_functions(text):
    return set(re.findall(r"\|\s+([A-Za-z_][A-Za-z0-9_.]*)\(\)", text))


def main():
    vtice = sys.argv[1]
    port = os.environ.get("VTICE_QEMU_PORT")
    if not port:
        print("SKIP: run under tests/qemu/run.sh exec")
        return 77
    if not shutil.which("gdb"):
        print("SKIP: gdb (the peer) is not installed")
        return 77
    work = tempfile.mkdtemp(prefix="vtice-trace-")
    trace_file = os.path.join(work, "openat.vtrace")

    out = vtice_batch(vtice, port, ["trace syscall openat --comm vtice-work -o " + trace_file,
                                    "break __x64_sys_openat", "continue", "info task", "delete"])
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

    report = subprocess.run([vtice, "report", trace_file], capture_output=True, text=True, timeout=60)
    if report.returncode != 0:
        fail("vtice report failed", report.stdout, report.stderr)
    for want in ("getname", "do_filp_open", "path_openat"):
        if want not in graph_functions(report.stdout):
            fail("vtice report of the trace file lacks %s()" % want, report.stdout)

    script = os.path.join(work, "count.py")
    with open(script, "w") as f:
        f.write(GDB_COUNT)
    gdb = subprocess.run(["gdb", "-batch", "-nx", "-ex", "set pagination off",
                          "-ex", "target remote 127.0.0.1:" + port, "-x", script, "-ex", "detach"],
                         capture_output=True, text=True, timeout=900)
    g = re.search(r"GDB-INSTRUCTIONS (\d+)", gdb.stdout)
    if not g:
        fail("gdb did not count", gdb.stdout, gdb.stderr)
    step_insns = int(g.group(1))
    ratio = block_insns / step_insns
    if abs(ratio - 1) > 0.03:
        fail("vtice block trace counted %d instructions, gdb single-stepping %d (%.1f %%)"
             % (block_insns, step_insns, 100 * (ratio - 1)), out)
    print("PASS: openat traced: %d instructions in %d calls (gdb single-step: %d, %+.2f %%); graph has "
          "getname, do_filp_open, path_openat" % (block_insns, calls, step_insns, 100 * (ratio - 1)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
