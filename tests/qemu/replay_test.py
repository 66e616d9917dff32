#!/usr/bin/env python3
"""Integration test: a recorded openat replayed, checked against QEMU itself
and driven by stock gdb with reverse execution.

Run under tests/qemu/run.sh exec. vtice records one openat of vtice-work
(`trace syscall openat --comm vtice-work --record`) through a logging relay,
so the test holds every answer QEMU gave on the wire. Then:
  1. replay against live: stock gdb on `vtice serve-replay` moves with stepi
     and reverse-stepi to 200 seeded random steps (100 forwards, 100
     backwards) and reads the general registers and, at each, the memory
     vtice read from QEMU while stopped there; every value must equal what
     QEMU's own 'g' and 'm' replies held at that step;
  2. reverse in stock gdb, with the kernel's -dbg vmlinux: reverse-finish out
     of getname lands on the call in do_sys_openat2; a watchpoint on the
     bytes of the struct filename's name, reverse-continue, stops at the write
     in strncpy_from_user; reverse-stepi at step 0 says "No more
     reverse-execution history";
  3. vtice attach on serve-replay: its ORC backtrace reaches do_sys_openat2,
     its reverse-finish lands on the call of getname, its reverse-continue
     stops at the start of the recording.
Exit 77 (skip) when gdb or the -dbg vmlinux is missing.
"""
import json
import os
import random
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import time

from rig import fail, qemu_port
from rsp_relay import Relay

GPRS = ["rax", "rbx", "rcx", "rdx", "rsi", "rdi", "rbp", "rsp", "r8", "r9", "r10", "r11", "r12", "r13", "r14",
        "r15", "rip"]

# gdb's Python: visit the positions in order, print registers and memory at each.
GDB_VISIT = r'''
import gdb, json
plan = json.load(open(PLAN))
cur = 0
for pos, reads in plan:
    if pos > cur:
        gdb.execute("stepi %d" % (pos - cur), to_string=True)
    elif pos < cur:
        gdb.execute("reverse-stepi %d" % (cur - pos), to_string=True)
    cur = pos
    where = gdb.execute("monitor position", to_string=True).split()[1]
    regs = {r: int(gdb.parse_and_eval("$" + r)) & (2**64 - 1) for r in REGS}
    mem = []
    for addr, length in reads:
        try:
            mem.append(bytes(gdb.selected_inferior().read_memory(addr, length)).hex())
        except gdb.MemoryError:
            mem.append("ERR")
    print("VISIT " + json.dumps([pos, int(where), regs, mem]))
'''


def is_step(p):
    return p == "s" or p.startswith("vCont;s")


def is_continue(p):
    return p == "c" or p.startswith("vCont;c")


def truth_from_wire(packets):
    """(registers per state, memory reads per state) from QEMU's own replies:
    state k is after the k-th step of the recording, the steps being every
    step request after the last continue."""
    last_c = max(i for i, (side, p) in enumerate(packets) if side == "c" and is_continue(p))
    steps = [i for i, (side, p) in enumerate(packets) if i > last_c and side == "c" and is_step(p)]
    if not steps:
        fail("the relay saw no single-steps after the last continue")

    def reply_to(i):
        for j in range(i + 1, len(packets)):
            if packets[j][0] == "s":
                return j, packets[j][1]
        return None, None

    bounds = [last_c] + steps + [len(packets)]
    regs, mem = [], []
    for k in range(len(steps) + 1):
        lo, hi = bounds[k], bounds[k + 1]
        if k > 0:
            lo, _ = reply_to(lo)      # the stop reply of step k
        g = None
        reads = []
        i = lo + 1
        while i < hi:
            side, p = packets[i]
            if side == "c" and p == "g":
                j, r = reply_to(i)
                # State 0: the last read before the first step (the recorder's);
                # later states: the first read after the step's stop reply.
                if k == 0 or g is None:
                    g = r
                i = j
            elif side == "c" and re.fullmatch(r"m[0-9a-f]+,[0-9a-f]+", p):
                j, r = reply_to(i)
                addr, length = (int(x, 16) for x in p[1:].split(","))
                if r and not r.startswith("E") and len(r) == 2 * length:
                    reads.append((addr, length, r))
                i = j
            i += 1
        regs.append(g)
        mem.append(reads)
    return regs, mem


def decode_g(block):
    raw = bytes.fromhex(block[:17 * 16])
    return dict(zip(GPRS, struct.unpack("<17Q", raw)))


def run_gdb(port, script, extra, timeout=900):
    cmd = ["gdb", "-batch", "-nx", "-ex", "set pagination off", "-ex", "set confirm off"] + extra + \
          ["-ex", "target remote 127.0.0.1:%d" % port, "-x", script]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)


def start_server(binary, trace):
    server = subprocess.Popen([binary, "serve-replay", trace], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True)
    line = server.stdout.readline()
    m = re.search(r"on 127\.0\.0\.1:(\d+)", line)
    if not m:
        server.kill()
        fail("serve-replay did not announce its port", line, server.stderr.read())
    return server, int(m.group(1))


def check_against_live(binary, port, work, truth_regs, truth_mem):
    rng = random.Random(20261202)
    n = len(truth_regs) - 1
    forward = sorted(rng.sample(range(1, n + 1), 100))
    backward = sorted(rng.sample(range(0, forward[-1]), 100), reverse=True)
    plan = [[k, [[a, l] for a, l, _ in truth_mem[k][:4]]] for k in forward + backward]
    plan_path = os.path.join(work, "plan.json")
    with open(plan_path, "w") as f:
        json.dump(plan, f)
    script = os.path.join(work, "visit.py")
    with open(script, "w") as f:
        f.write("PLAN = %r\nREGS = %r\n" % (plan_path, GPRS) + GDB_VISIT)
    t0 = time.time()
    g = run_gdb(port, script, [])
    visits = [json.loads(line[6:]) for line in g.stdout.splitlines() if line.startswith("VISIT ")]
    if len(visits) != len(plan):
        fail("gdb visited %d of %d points" % (len(visits), len(plan)), g.stdout, g.stderr)
    mem_checked = 0
    for (pos, where, regs, mem), (_, reads) in zip(visits, plan):
        if where != pos:
            fail("gdb's stepping reached step %d, not %d" % (where, pos), g.stdout)
        live = decode_g(truth_regs[pos])
        for r in GPRS:
            if regs[r] != live[r]:
                fail("step %d: %s is %#x in the replay, %#x on QEMU" % (pos, r, regs[r], live[r]))
        for got, (addr, length, want) in zip(mem, truth_mem[pos][:4]):
            if got != want:
                fail("step %d: memory %#x (%d bytes) is %s in the replay, %s on QEMU" % (pos, addr, length, got,
                                                                                        want))
            mem_checked += 1
    return len(visits), mem_checked, time.time() - t0


GDB_REVERSE = r'''
import gdb
def say(*a):
    print("REV " + " ".join(str(x) for x in a))
def fn():
    f = gdb.selected_frame()
    return f.name() or "?"
# getname's own entry (not its 44 inlined copies); one step in, past the
# ftrace nop, so the frame is getname itself.
gdb.execute("break *getname")
gdb.execute("continue", to_string=True)
say("at", fn())
gdb.execute("delete")   # else reverse-finish stops at this breakpoint, one step short of the caller
gdb.execute("stepi", to_string=True)
gdb.execute("reverse-finish", to_string=True)
say("reverse-finish", fn(), gdb.execute("x/i $pc", to_string=True).strip().replace("\n", " "))
gdb.execute("nexti", to_string=True)
say("after-call", fn(), hex(int(gdb.parse_and_eval("$rax")) & (2**64 - 1)))
name = int(gdb.parse_and_eval("((struct filename *)$rax)->name")) & (2**64 - 1)
say("name", hex(name), gdb.parse_and_eval("((struct filename *)$rax)->name").format_string())
gdb.execute("watch -l *(long *)%d" % name)
out = gdb.execute("reverse-continue", to_string=True)
say("watch-stop", fn(), gdb.execute("info symbol $pc", to_string=True).strip(), "|",
    gdb.execute("x/i $pc", to_string=True).strip())
say("position", gdb.execute("monitor position", to_string=True).strip())
gdb.execute("delete")
gdb.execute("monitor goto 0", to_string=True)
gdb.execute("maintenance flush register-cache", to_string=True)
say("begin", gdb.execute("monitor position", to_string=True).strip())
gdb.execute("reverse-stepi")
say("after-begin", gdb.execute("monitor position", to_string=True).strip())
'''


def check_reverse(port, work, vmlinux):
    script = os.path.join(work, "reverse.py")
    with open(script, "w") as f:
        f.write(GDB_REVERSE)
    g = run_gdb(port, script, [vmlinux], timeout=600)
    rev = {}
    for line in g.stdout.splitlines():
        if line.startswith("REV "):
            key, _, rest = line[4:].partition(" ")
            rev[key] = rest
    out = g.stdout + g.stderr
    if not rev.get("at", "").startswith("getname"):
        fail("continue to the breakpoint on getname did not stop there", out)
    rf = rev.get("reverse-finish", "")
    if not rf.startswith("do_sys_openat2") or "call" not in rf or "<getname>" not in rf:
        fail("reverse-finish out of getname did not land on the call in do_sys_openat2: " + rf, out)
    ws = rev.get("watch-stop", "")
    # gdb reports the watchpoint itself (Old value / New value) outside to_string.
    between = g.stdout[g.stdout.find("REV name"):g.stdout.find("REV watch-stop")]
    if "strncpy_from_user" not in ws or "Old value" not in between or ",(%" not in ws.split("|")[-1]:
        fail("reverse-continue to the watchpoint on the filename's bytes did not stop at the write in "
             "strncpy_from_user: " + ws, out)
    # gdb prints the stop itself (not into to_string); it comes after "begin".
    tail = g.stdout[g.stdout.find("REV begin"):]
    if "No more reverse-execution history" not in tail or rev.get("after-begin") != "step 0 of " + \
            rev.get("begin", "").split()[-1]:
        fail("reverse-stepi at step 0 did not report the start of the history", out)
    return rf, ws, rev.get("position", ""), rev.get("name", "")


def check_attach_reverse(binary, port, vmlinux):
    """vtice attach itself on serve-replay: its reverse commands and ORC backtrace."""
    cmds = ["break *getname", "continue", "delete", "stepi 2", "bt 3", "reverse-finish", "reverse-continue",
            "disconnect"]
    run = subprocess.run([binary, "attach", "127.0.0.1:%d" % port, "--batch", "-", "--symbols", vmlinux,
                          "--no-cache"], input="\n".join(cmds) + "\n", capture_output=True, text=True, timeout=300)
    out = run.stdout
    if run.returncode != 0:
        fail("vtice attach on serve-replay exited with %d" % run.returncode, out, run.stderr)
    if not re.search(r"#1\s+0x[0-9a-f]+ in do_sys_openat2\+", out):
        fail("attach's ORC backtrace over the replay does not reach do_sys_openat2", out)
    back = out[out.find("Run back to the call"):]
    if not re.search(r"=> 0x[0-9a-f]+ <do_sys_openat2\+0x[0-9a-f]+>:\s+call getname", back):
        fail("attach's reverse-finish did not land on the call of getname", out)
    if "No more reverse-execution history (the recording's begin)" not in out:
        fail("attach's reverse-continue did not stop at the start of the recording", out)


def main():
    binary = sys.argv[1]
    port = qemu_port()
    if not shutil.which("gdb"):
        print("SKIP: gdb (the client and peer) is not installed")
        return 77
    vmlinux = os.path.join(os.path.dirname(os.environ["VTICE_QEMU_VMLINUX"]), "vmlinux-dbg")
    if not os.path.isfile(vmlinux):
        print("SKIP: no %s (make kernel-debug fetches it: tools/kernel.sh --debug)" % vmlinux)
        return 77
    work = tempfile.mkdtemp(prefix="vtice-replay-")
    trace = os.path.join(work, "openat.vtrace")

    relay = Relay(port)
    run = subprocess.run([binary, "attach", "127.0.0.1:%d" % relay.port, "--batch", "-", "--timeout", "300",
                          "--no-cache"],
                         input="trace syscall openat --comm vtice-work --record -o %s --quiet\ndisconnect\n" % trace,
                         capture_output=True, text=True, timeout=600)
    if run.returncode != 0:
        fail("vtice attach --record exited with %d" % run.returncode, run.stdout, run.stderr)
    rec = re.search(r"record: (\d+) steps, (\d+) bytes of registers and memory \(([0-9.]+) bytes per step\)",
                    run.stdout)
    if not rec:
        fail("no record summary", run.stdout)
    time.sleep(0.5)
    truth_regs, truth_mem = truth_from_wire(relay.packets())
    steps = int(rec.group(1))
    if len(truth_regs) - 1 != steps:
        fail("the recording has %d steps, the relay saw %d single-steps" % (steps, len(truth_regs) - 1))
    if any(g is None for g in truth_regs):
        fail("a step without a register read on the wire")

    server, sport = start_server(binary, trace)
    try:
        visited, mem_checked, seconds = check_against_live(binary, sport, work, truth_regs, truth_mem)
        rf, ws, position, name = check_reverse(sport, work, vmlinux)
        check_attach_reverse(binary, sport, vmlinux)
    finally:
        server.kill()
        server.wait()
    print("PASS: openat recorded in %d steps, %s bytes per step; %d points replayed through stock gdb "
          "(stepi/reverse-stepi) equal QEMU's own registers, %d memory reads equal QEMU's, %.1f s; "
          "reverse-finish -> %s; watch on the name %s -> %s (%s); vtice attach's own reverse-finish, "
          "reverse-continue and ORC bt over the replay" % (
              steps, rec.group(3), visited, mem_checked, seconds, rf, name, ws.split("|")[0].strip(), position))
    return 0


if __name__ == "__main__":
    sys.exit(main())
