"""Helpers shared by the QEMU rig's test scripts and tools/bench_rsp.py."""
import os
import re
import subprocess
import sys

# gdb's Python: stepi from a function's first instruction until it returns,
# counting instructions (a rep iteration that leaves pc unchanged is not a new
# one) and timing the loop. Prints "GDB <instructions> <steps> <seconds>".
GDB_STEP_COUNT = r'''
import gdb, time
ret = int(gdb.parse_and_eval("*(unsigned long *)$rsp"))
sp0 = int(gdb.parse_and_eval("$rsp"))
pc = int(gdb.parse_and_eval("$pc"))
n = steps = 0
t0 = time.perf_counter()
while n < 200000:
    gdb.execute("stepi", to_string=True)
    steps += 1
    npc = int(gdb.parse_and_eval("$pc"))
    if npc != pc:
        n += 1
    pc = npc
    if pc == ret and int(gdb.parse_and_eval("$rsp")) > sp0:
        break
print("GDB %d %d %.6f" % (n, steps, time.perf_counter() - t0))
'''


def qemu_port():
    """The gdbstub port run.sh exec exported, or a skip (exit 77) without it."""
    port = os.environ.get("VTICE_QEMU_PORT")
    if not port:
        print("SKIP: run under tests/qemu/run.sh exec")
        sys.exit(77)
    return port


def fail(message, *outputs):
    print("FAIL:", message)
    for out in outputs:
        print("---- output ----")
        print(out[-5000:])
    sys.exit(1)


def kallsyms(path):
    """name -> address of the first symbol with that name."""
    table = {}
    with open(path, errors="replace") as f:
        for line in f:
            parts = line.split()
            if len(parts) >= 3 and parts[2] not in table:
                table[parts[2]] = int(parts[0], 16)
    return table


def vtice(binary, port, commands, *options, timeout=300, cache=False):
    """Runs commands through `vtice attach --batch -`; fails the test on a non-zero exit.
    Without cache=True the kernel cache is off, so each attach reads the guest as it always did."""
    extra = [] if cache else ["--no-cache"]
    run = subprocess.run([binary, "attach", "127.0.0.1:" + port, "--batch", "-", "--timeout", "60", *extra, *options],
                         input="\n".join(commands) + "\n", capture_output=True, text=True, timeout=timeout)
    if run.returncode != 0:
        fail("vtice attach exited with %d" % run.returncode, run.stdout, run.stderr)
    return run.stdout


def gdb_step_count(port, script_path):
    """gdb single-steps the current function to its return; (instructions, steps, seconds)."""
    with open(script_path, "w") as f:
        f.write(GDB_STEP_COUNT)
    g = subprocess.run(["gdb", "-batch", "-nx", "-ex", "set pagination off",
                        "-ex", "target remote 127.0.0.1:" + port, "-x", script_path, "-ex", "detach"],
                       capture_output=True, text=True, timeout=1800)
    m = re.search(r"GDB (\d+) (\d+) ([0-9.]+)", g.stdout)
    if not m:
        fail("gdb did not finish stepping", g.stdout, g.stderr)
    return int(m.group(1)), int(m.group(2)), float(m.group(3))
