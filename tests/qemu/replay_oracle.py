"""Replay against live: what QEMU or the vtice stub answered on the wire
(rsp_relay.py) set against what stock gdb reads from `vtice serve-replay`
at the same steps. Shared by tests/qemu/replay_test.py and the Bochs
scenario hvrecord (tests/hypervisor/host/stub_record.py)."""
import json
import os
import random
import re
import struct
import subprocess
import time


class Mismatch(Exception):
    """The replay and the live target disagree, or the wire is not as expected."""


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
        raise Mismatch("the relay saw no single-steps after the last continue")

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
                # State 0's reads: the recorder's only (after its register
                # read), not what the debugger read at the stop before.
                if k == 0:
                    reads = []
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
        raise Mismatch("serve-replay did not announce its port: %s %s" % (line, server.stderr.read()))
    return server, int(m.group(1))


def check_against_live(port, work, truth_regs, truth_mem, points=100):
    """gdb moves to `points` seeded random steps forwards (stepi), then as
    many backwards (reverse-stepi); every register and memory read must
    equal the wire's. Returns (points visited, memory reads checked, s)."""
    rng = random.Random(20261202)
    n = len(truth_regs) - 1
    forward = sorted(rng.sample(range(1, n + 1), min(points, n)))
    backward = sorted(rng.sample(range(0, forward[-1]), min(points, forward[-1])), reverse=True)
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
        raise Mismatch("gdb visited %d of %d points: %s %s" % (len(visits), len(plan), g.stdout[-3000:],
                                                               g.stderr[-2000:]))
    mem_checked = 0
    for (pos, where, regs, mem), (_, reads) in zip(visits, plan):
        if where != pos:
            raise Mismatch("gdb's stepping reached step %d, not %d" % (where, pos))
        live = decode_g(truth_regs[pos])
        for r in GPRS:
            if regs[r] != live[r]:
                raise Mismatch("step %d: %s is %#x in the replay, %#x live" % (pos, r, regs[r], live[r]))
        for got, (addr, length, want) in zip(mem, truth_mem[pos][:4]):
            if got != want:
                raise Mismatch("step %d: memory %#x (%d bytes) is %s in the replay, %s live" % (
                    pos, addr, length, got, want))
            mem_checked += 1
    return len(visits), mem_checked, time.time() - t0


