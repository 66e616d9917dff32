#!/usr/bin/env python3
"""Host driver of the hvrootrecord Bochs scenario: the recording the
hypervisor made of one openat, held against the CPU itself.

While the call ran, the rig's Bochs instrumentation (tests/bochs/oracle)
logged every instruction the guest kernel ran, with its registers, and
every memory access, with the bytes (OUT/oracle.bin). Afterwards the guest
printed what `vtice replay` says at step 0 and at seeded random steps:
the registers (VTICE-ORACLE-POINT) and the memory the step's instruction
read and wrote (VTICE-ORACLE-ACCESS). Here:
- step 0 is found in the log: the instruction at the replay's rip with
  every register equal (the syscall's first instruction, on one CPU);
- each later step K is that CPU's instruction K steps on, less the events
  the CPU delivered in between (a delivery the hypervisor injects is a step
  of its own in the recording: the instruction after it has not run yet),
  or, where the task was switched out or moved, the first later
  instruction of any CPU in the replay's state; its rip, eflags, 16 GPRs,
  fs_base and gs_base must be the replay's;
- every byte the replay says the instruction read or wrote must be one the
  CPU read or wrote, with the same value before and after; every byte the
  CPU wrote must be known to the replay as written (or as a store it did
  not see, or one an XSAVE may have made): anything else would be a guess.
Figures: the points, their bytes, and the reads the recording did not
keep (not an error: the replay shows those as unknown)."""

import os
import re
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rig_host import FAILURES, check, run_driver, wait_for_guest_line  # noqa: E402

RECORD = 168
INSTRUCTION, EXCEPTION, DELIVERY, EXTERNAL, READ, WRITE, UNSTEPPED, VM_EXIT = 1, 2, 3, 4, 5, 6, 7, 8
RF = 1 << 16
LOG_CAP = 4 << 30  # oracle.cc's kMaxBytes
DATA = 64
GPRS = ["rax", "rcx", "rdx", "rbx", "rsp", "rbp", "rsi", "rdi",
        "r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15"]
COMPARED = ["rip", "eflags"] + GPRS + ["fs_base", "gs_base"]
MAX_SHOWN = 5
# A task switched out and in again on one CPU: schedule() twice and another
# task between, thousands of instructions (116,470 in the run of
# 2026-12-07). A state found fewer past the count is a miscounted step.
MIN_SWITCH_GAP = 1000


NAMES = ["rip", "eflags"] + GPRS + ["fs_base", "gs_base"]


class Instruction:
    """One stepped instruction of the log, kept small (a call logs millions):
    where its record is, its boundary's RF, the counts before it, and where
    its accesses are; registers and bytes are read from the log on demand."""
    __slots__ = ("log", "order", "rf", "deliveries_before", "unstepped_before", "accesses", "_reads", "_writes")

    def __init__(self, log, order, rf, deliveries_before, unstepped_before):
        self.log = log
        self.order = order  # its record's offset: the emulation's order across CPUs
        self.rf = rf        # RFLAGS.RF at the boundary before it
        self.deliveries_before = deliveries_before  # on its CPU since the log began
        self.unstepped_before = unstepped_before    # instructions the CPU ran unstepped, likewise
        self.accesses = []  # offsets of its access records
        self._reads = self._writes = None

    @property
    def regs(self):
        regs = dict(zip(NAMES, struct.unpack_from("<20Q", self.log, self.order + 8)))
        regs["eflags"] = (regs["eflags"] & ~RF) | self.rf
        return regs

    @property
    def reads(self):
        """address -> the byte the instruction read."""
        self._bytes()
        return self._reads

    @property
    def writes(self):
        """address -> (before, after) of each byte it wrote."""
        self._bytes()
        return self._writes

    def _bytes(self):
        if self._reads is not None:
            return
        self._reads, self._writes = {}, {}
        for off in self.accesses:
            kind, _, lin, length = struct.unpack_from("<IIQQ", self.log, off)
            before = self.log[off + 24:off + 24 + DATA]
            after = self.log[off + 24 + DATA:off + 24 + 2 * DATA]
            for i in range(min(length, DATA)):
                address = (lin + i) & 0xFFFFFFFFFFFFFFFF
                if kind == READ:
                    self._reads.setdefault(address, before[i])
                else:
                    old = self._writes.get(address)
                    self._writes[address] = (old[0] if old else before[i], after[i])


def load_log(path):
    """Per CPU: its instructions in order, each with the accesses up to the
    CPU's next instruction (an event delivered after it included)."""
    cpus = {}
    deliveries = {}
    unstepped = {}
    exit_rflags = {}  # per CPU: RFLAGS at its VM exit since its last instruction
    with open(path, "rb") as f:
        log = f.read()
    usable = len(log) - len(log) % RECORD
    for off in range(0, usable, RECORD):
        kind, cpu = struct.unpack_from("<II", log, off)
        stream = cpus.setdefault(cpu, [])
        if kind == INSTRUCTION:
            # RF at the instruction boundary. Bochs clears RF when it fetches
            # the instruction, before the hook (the SDM's "cleared at the
            # start of the instruction after the check for code breakpoint",
            # Vol. 3A 18.3.1.1); the boundary's value is what the VM exit
            # before it held (an MTF exit saves RF as it was: Vol. 3C
            # 28.3.3), 1 after an interrupted REP iteration.
            rf = exit_rflags.pop(cpu) if cpu in exit_rflags else struct.unpack_from("<Q", log, off + 16)[0]
            stream.append(Instruction(log, off, rf & RF, deliveries.get(cpu, 0), unstepped.get(cpu, 0)))
        elif kind == DELIVERY:
            deliveries[cpu] = deliveries.get(cpu, 0) + 1
        elif kind == VM_EXIT:
            exit_rflags[cpu] = struct.unpack_from("<Q", log, off + 24)[0]
        elif kind == UNSTEPPED:
            unstepped[cpu] = unstepped.get(cpu, 0) + struct.unpack_from("<Q", log, off + 8)[0]
        elif kind in (READ, WRITE) and stream:
            stream[-1].accesses.append(off)
    return cpus, usable // RECORD


def guest_points(path):
    """The replay's points as the guest printed them: {step: registers},
    {step: [(kind, address, length, before, after)]}, the END line."""
    points, accesses, end, errors = {}, {}, None, []
    with open(path, errors="replace") as log:
        for line in log:
            line = line.strip()
            if line.startswith("VTICE-ORACLE-POINT "):
                words = line.split()
                step = int(words[1])
                points[step] = {w.split("=")[0]: int(w.split("=")[1], 16) for w in words[2:] if "=" in w}
            elif line.startswith("VTICE-ORACLE-ACCESS "):
                m = re.match(r"VTICE-ORACLE-ACCESS (\d+) (\w+) +0x([0-9a-f]+) +(\d+)  (.*)", line)
                if m:
                    # unseen, maybe: no bytes, only the text saying so
                    bytes_text = "" if m.group(2) in ("unseen", "maybe") else m.group(5)
                    before, _, after = bytes_text.partition(" -> ")
                    accesses.setdefault(int(m.group(1)), []).append(
                        (m.group(2), int(m.group(3), 16), int(m.group(4)), before, after))
            elif line.startswith("VTICE-ORACLE-END"):
                end = line
            elif line.startswith("VTICE-ORACLE-ERROR"):
                errors.append(line)
    return points, accesses, end, errors


def recorded_moves(end):
    """The moves to another CPU the recorded call's summary counted, as the
    guest's END line passes them on (other traces in the log have their own)."""
    m = re.search(r"moves=(\d+)", end or "")
    return int(m.group(1)) if m else 0


def hex_bytes(text):
    """'0a1b??' -> [0x0a, 0x1b, None]."""
    return [None if text[i:i + 2] == "??" else int(text[i:i + 2], 16) for i in range(0, len(text), 2)]


def same_state(insn, regs):
    if struct.unpack_from("<Q", insn.log, insn.order + 8)[0] != regs.get("rip"):
        return False  # (the quick test: most instructions differ in rip)
    return all(insn.regs[name] == regs.get(name) for name in COMPARED)


def find_start(cpus, regs):
    return [(cpu, i) for cpu, stream in cpus.items() for i, insn in enumerate(stream) if same_state(insn, regs)]


def by_count(stream, prev_index, steps_on, regs):
    """The instruction steps_on steps after prev_index on the same CPU: that
    many instructions on, less one for each event the CPU delivered in
    between (an injected delivery is a step of its own: the instruction
    after it has not run yet; every delivery in the runs of 2026-12-07 was
    exactly one step). None if that one's state is not regs."""
    for back in range(0, steps_on + 1):
        i = prev_index + steps_on - back
        if i >= len(stream):
            continue
        if i <= prev_index:
            return None
        delivered = stream[i].deliveries_before - stream[prev_index].deliveries_before
        if delivered == back:
            return i if same_state(stream[i], regs) else None
    return None


def resumed(cpus, prev_order, regs):
    """The task was switched out, and then in again on this CPU or another
    (the recording follows the task, not the CPU: docs/tracing.md): the
    first instruction of any CPU later in the log than the last point, in
    the replay's state. (cpu, index) or None."""
    best = None
    for cpu, stream in cpus.items():
        for i, insn in enumerate(stream):
            if insn.order > prev_order and same_state(insn, regs):
                if best is None or insn.order < cpus[best[0]][best[1]].order:
                    best = (cpu, i)
                break
    return best


def align(cpus, cpu, start, points):
    """Step -> (cpu, index) for each point in step order, and how each was
    found: "count" (the instructions from the last point on its CPU add up
    to the steps), "switch" (later on the same CPU: the task was switched
    out in between) or "move" (on another CPU: the task moved)."""
    where, how = {0: (cpu, start)}, {0: "count"}
    prev_step, prev_cpu, prev_index = 0, cpu, start
    for step in sorted(points):
        if step == 0:
            continue
        i = by_count(cpus[prev_cpu], prev_index, step - prev_step, points[step])
        if i is not None:
            where[step], how[step] = (prev_cpu, i), "count"
        else:
            found = resumed(cpus, cpus[prev_cpu][prev_index].order, points[step])
            if found is not None and found[0] == prev_cpu and \
                    found[1] - prev_index - (step - prev_step) < MIN_SWITCH_GAP:
                found = None  # later than the count, but too soon for a switch: a miscounted step
            if found is None:
                where[step], how[step] = None, "none"
                continue
            where[step], how[step] = found, "move" if found[0] != prev_cpu else "switch"
        prev_step, (prev_cpu, prev_index) = step, where[step]
    return where, how


def unfound(cpus, where, points):
    """Points no instruction matches, each with the register differences at
    the instruction the count gives on the last point's CPU."""
    bad = []
    prev_step, prev = 0, where[0]
    for step in sorted(points):
        if where.get(step) is not None:
            prev_step, prev = step, where[step]
            continue
        stream = cpus[prev[0]]
        i = min(prev[1] + step - prev_step, len(stream) - 1)
        diff = ["%s %#x (CPU %#x)" % (name, points[step].get(name, -1), stream[i].regs[name])
                for name in COMPARED if points[step].get(name) != stream[i].regs[name]]
        bad.append("step %d: no instruction in its state; %d on from step %d on CPU %d: %s" % (
            step, step - prev_step, prev_step, prev[0], ", ".join(diff)))
    return bad


def delivery_steps(where, how, points):
    """Steps that were not instructions (an injected delivery's own step),
    between points counted on one CPU."""
    total, prev = 0, None
    for step in sorted(points):
        if where.get(step) is None:
            continue
        if prev is not None and how[step] == "count":
            total += (step - prev[0]) - (where[step][1] - prev[1])
        prev = (step, where[step][1])
    return total


def unstepped_within(cpus, where, how):
    """Instructions the CPUs ran unstepped between points counted on one CPU."""
    lost, prev = 0, None
    for step in sorted(where):
        if where[step] is None:
            continue
        cpu, i = where[step]
        if prev is not None and how[step] == "count":
            lost += cpus[cpu][i].unstepped_before - cpus[cpu][prev[1]].unstepped_before
        prev = where[step]
    return lost


def compare_memory(cpus, where, accesses, points):
    """Wrong bytes, bytes the CPU wrote that the replay does not know, and
    counts: bytes checked, reads the recording did not keep."""
    wrong, missed_writes = [], []
    checked = unkept_reads = 0
    for step in sorted(points):
        if where.get(step) is None:
            continue
        insn = cpus[where[step][0]][where[step][1]]
        known_written = set()
        known_read = set()
        for kind, address, length, before, after in accesses.get(step, []):
            old = hex_bytes(before) if before else [None] * length
            new = hex_bytes(after) if after else []
            for k in range(length):
                a = address + k
                cpu_old = insn.writes[a][0] if a in insn.writes else insn.reads.get(a)
                if kind in ("read", "both"):
                    known_read.add(a)
                    checked += 1
                    if cpu_old is None or old[k] != cpu_old:
                        wrong.append("step %d: %s byte %#x is %s in the replay, %s on the CPU" % (
                            step, kind, a, fmt(old[k]), fmt(cpu_old)))
                if kind in ("write", "both"):
                    known_written.add(a)
                    checked += 1
                    if a not in insn.writes:
                        wrong.append("step %d: the replay writes byte %#x, the CPU did not" % (step, a))
                    elif (old[k] is not None and old[k] != insn.writes[a][0]) or new[k] != insn.writes[a][1]:
                        wrong.append("step %d: byte %#x goes %s -> %s in the replay, %s -> %s on the CPU" % (
                            step, a, fmt(old[k]), fmt(new[k]), fmt(insn.writes[a][0]), fmt(insn.writes[a][1])))
                if kind == "maybe":  # an XSAVE's area: the CPU may have written these
                    known_written.add(a)
                if kind == "unseen":
                    known_written.add(a)
                    if a not in insn.writes:
                        wrong.append("step %d: the replay says an unseen store hit %#x, the CPU did not write it" %
                                     (step, a))
                if kind == "seen" and cpu_old is not None:
                    known_read.add(a)
                    checked += 1
                    if old[k] != cpu_old:
                        wrong.append("step %d: seen byte %#x is %s in the replay, %s on the CPU" % (
                            step, a, fmt(old[k]), fmt(cpu_old)))
        for a in sorted(set(insn.writes) - known_written):
            missed_writes.append("step %d (rip %#x): the CPU wrote %#x (%s -> %s), the replay does not know it" % (
                step, insn.regs["rip"], a, fmt(insn.writes[a][0]), fmt(insn.writes[a][1])))
        unkept_reads += len(set(insn.reads) - known_read - known_written)
    return wrong, missed_writes, checked, unkept_reads


def fmt(byte):
    return "??" if byte is None else "%02x" % byte


def shown(lines):
    return "; ".join(lines[:MAX_SHOWN]) + (" (and %d more)" % (len(lines) - MAX_SHOWN) if len(lines) > MAX_SHOWN else "")


def main():
    if not check("oracle-points", wait_for_guest_line("VTICE-ORACLE-END", 3600),
                 "the guest printed the replay's points"):
        return
    points, accesses, end, errors = guest_points(os.environ["VTICE_SERIAL_LOG"])
    lacking = ["step %d lacks %s" % (step, ", ".join(n for n in COMPARED if n not in regs))
               for step, regs in sorted(points.items()) if any(n not in regs for n in COMPARED)]
    check("oracle-replay", not errors and not lacking and 0 in points and len(points) > 1,
          "%d points from the replay (%s)%s" % (len(points), end, ("; " + shown(errors + lacking))
                                                  if errors or lacking else ""))
    path = os.path.join(os.environ["VTICE_RUN_DIR"], "oracle.bin")
    if not check("oracle-log", os.path.exists(path) and os.path.getsize(path) >= RECORD,
                 "Bochs's log %s (a Bochs built by tests/bochs/lib/bochs3.sh writes it)" % path):
        return
    cpus, records = load_log(path)
    if os.path.getsize(path) >= LOG_CAP:
        print("oracle: the log reached Bochs's cap (%d bytes): what the CPU did after it is missing" % LOG_CAP,
              flush=True)
    print("oracle: %d records; instructions per CPU: %s" % (
        records, ", ".join("%d: %d" % (c, len(s)) for c, s in sorted(cpus.items()))), flush=True)
    if 0 not in points:
        return
    hits = find_start(cpus, points[0])
    if not check("oracle-start", len(hits) == 1,
                 "step 0 (rip %#x) is %d instruction(s) in the CPU's log, each register equal" % (
                     points[0].get("rip", 0), len(hits))):
        return
    cpu, start = hits[0]
    where, how = align(cpus, cpu, start, points)
    bad = unfound(cpus, where, points)
    counted = sum(1 for h in how.values() if h == "count")
    switched = sum(1 for h in how.values() if h == "switch")
    moved = sum(1 for h in how.values() if h == "move")
    check("oracle-registers", not bad, "%d of %d points are an instruction the CPU ran, rip, eflags, 16 GPRs, "
          "fs_base and gs_base equal: %d at the step count from the last point, %d after the task was switched "
          "out and in, %d on another CPU after it moved%s" % (
              len(points) - len(bad), len(points), counted, switched, moved, ("; " + shown(bad)) if bad else ""))
    print("oracle: %d of the steps between points counted on one CPU were deliveries, not instructions" %
          delivery_steps(where, how, points), flush=True)
    moves = recorded_moves(end)
    check("oracle-moves", moved <= moves, "%d points found on another CPU, %d moves in the trace's summary" % (
        moved, moves))
    lost = unstepped_within(cpus, where, how)
    check("oracle-stepped", lost == 0, "%d instructions ran unstepped between points counted on one CPU "
          "(the recorder sees only steps)" % lost)
    wrong, missed, checked, unkept = compare_memory(cpus, where, accesses, points)
    check("oracle-memory", not wrong, "%d bytes the replay gives at the points, as the CPU read and wrote them%s" % (
        checked, ("; " + shown(wrong)) if wrong else ""))
    check("oracle-writes", not missed, "every byte the CPU wrote at the points is known to the replay%s" % (
        ("; " + shown(missed)) if missed else ""))
    print("VTICE-FIGURE hv.rootrecord.oracle_points=%d" % len(points))
    print("VTICE-FIGURE hv.rootrecord.oracle_bytes=%d" % checked)
    print("VTICE-FIGURE hv.rootrecord.oracle_unkept_reads=%d" % unkept, flush=True)


def main_then_tidy():
    main()
    path = os.path.join(os.environ["VTICE_RUN_DIR"], "oracle.bin")
    if FAILURES[0] == 0 and os.path.exists(path):
        os.remove(path)  # hundreds of MB; kept when a check failed, to look into
        print("oracle: all checks passed; %s removed" % path, flush=True)


if __name__ == "__main__":
    run_driver("root_oracle", main_then_tidy)
