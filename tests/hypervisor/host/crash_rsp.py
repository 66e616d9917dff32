#!/usr/bin/env python3
"""Host driver of the hvcrash and hvtriple Bochs scenarios. hvcrash: an oops in a kernel thread
(tests/hypervisor/guest-modules/vtice_crashme), a CPU spinning with its
local APIC timer masked (vtice_lockme mode=timer), a hard lockup
(vtice_lockme: a CPU spinning with interrupts off), then a panic (echo c >
/proc/sysrq-trigger), under the hypervisor's stub. Each must leave the
machine stopped in the stub. The expected call chains are the ones the
kernel's own unwinder prints for these crashes (__die <-
page_fault_oops <- exc_page_fault <- asm_exc_page_fault; panic <-
sysrq_handle_crash <- __handle_sysrq <- write_sysrq_trigger); the expected
log lines are the ones the kernel prints before it reaches the guarded
function. hvtriple: a triple fault (vtice_crashme mode=triple), which the
stub reports with the event the CPU was delivering. Stock gdb reads each
stop as a peer of vtice attach: its signal, and its PC against the guard's
address in the guest's kallsyms (or, where no guard fired, against the RIP
vtice attach shows). Exit status: the number of failures."""

import os
import re
import subprocess
import sys
import time

from rig_host import FAILURES, Rsp, check, figures, find_one, monitor, wait_for_guest_line


def wait_stop(rsp, seconds):
    rsp.sock.settimeout(seconds)
    try:
        return rsp.reply()
    finally:
        rsp.sock.settimeout(120)


def cue_and_wait(fig, name, cue, guards_left, signal="T0b"):
    """Attach (the first packet stops the machine), write the guest's cue
    into its domain name, continue, and wait for the crash's stop."""
    rsp = Rsp()
    rsp.packet("?")
    first = rsp.reply()
    domain = int(fig["hv.crash-uts.addr"], 16) + 5 * 65  # new_utsname.domainname
    rsp.packet("M%x,%x:%s" % (domain, len(cue) + 1, (cue + b"\0").hex()))
    wrote = rsp.reply()
    check(name + "-attach", first[:1] in ("T", "S") and wrote == "OK",
          "attached before the crash: %s, cue written: %s" % (first[:12], wrote))
    rsp.packet("c")
    start = time.time()
    stop = wait_stop(rsp, 300)
    check(name + "-stop", stop.startswith(signal),
          "the attached debugger got the crash's stop reply %.1f s wall after continue: %s" %
          (time.time() - start, stop))
    hooks = monitor(rsp, "hooks")
    check(name + "-one-shot", "%d crash guards" % guards_left in hooks,
          "the guard that fired disarmed itself: %s" % hooks.strip().replace("\n", "; "))
    rsp.close()


def check_later_attach(name, signal="T0b"):
    """A debugger attaching after the crash finds the machine stopped there."""
    rsp = Rsp()
    rsp.packet("?")
    stop = rsp.reply()
    check(name + "-later-attach", stop.startswith(signal), "a new connection asks '?': %s" % stop)
    rsp.close()


GDB_SIGNALS = {"T0b": "SIGSEGV", "T0e": "SIGALRM"}


def gdb_reads_stop(name, signal, want_pc=None, want_from=""):
    """Real gdb attaches, reads the stop's signal and PC, and disconnects:
    no D, no k, so the machine stays stopped for the next client."""
    out = subprocess.run(["gdb", "-nx", "-batch", "-ex", "set architecture i386:x86-64",
                          "-ex", "target remote %s" % os.environ["VTICE_COM2"],
                          "-ex", "info program", "-ex", "p/x $pc", "-ex", "disconnect"],
                         capture_output=True, text=True, timeout=300)
    text = out.stdout + out.stderr
    want_signal = GDB_SIGNALS[signal[:3]]
    m = re.search(r"^\$1 = (0x[0-9a-f]+)", text, re.M)
    pc = int(m.group(1), 16) if m else None
    ok = "stopped with signal %s" % want_signal in text and pc is not None
    if want_pc is not None:
        ok = ok and pc == want_pc
    check(name + "-gdb", ok, "gdb reads the stop: signal %s, pc %s%s" %
          (want_signal, "%#x" % pc if pc is not None else "?",
           " = %#x, %s" % (want_pc, want_from) if want_pc is not None else ""))
    if not ok:
        print(text, flush=True)
    return pc


def vtice_attach(commands):
    vtice = find_one("build*/vtice")
    vmlinux = find_one("build*/kernel/*/vmlinux")
    if not vtice or not vmlinux:
        check("console", False, "no build/vtice or build/kernel/*/vmlinux under VTICE_ROOT")
        return "", 1
    out = subprocess.run([vtice, "attach", os.environ["VTICE_COM2"], "--symbols", vmlinux,
                          "--batch", "-", "--timeout", "120"], input=commands,
                         capture_output=True, text=True, timeout=900)
    print(out.stdout + out.stderr, flush=True)
    return out.stdout + out.stderr, out.returncode


def in_order(text, names):
    found = [re.search(r"\b%s\b" % re.escape(n), text) for n in names]
    return all(found) and [m.start() for m in found] == sorted(m.start() for m in found)


def irqs_off(text):
    m = re.search(r"^eflags\s+(0x[0-9a-f]+)", text, re.M)
    return m is not None and not int(m.group(1), 16) & 0x200


# Each crash: the cue that makes the guest commit it, the guards left after
# its own fired, the call chain the kernel's unwinder prints for it, what
# the console must say, the log line printed before the guarded function,
# and the guest's line that shows the kernel went on after detach.
CRASHES = [
    dict(name="oops", cue=b"vtice-oops-go", guards_left=1, guard="__die",
         chain=["__die", "page_fault_oops", "exc_page_fault", "asm_exc_page_fault"],
         reason=r'kernel oops: "Oops" at 0xffffffffc0[0-9a-f]+',
         logged="BUG: kernel NULL pointer dereference",
         resumed="---[ end trace"),
    # The stuck CPU runs module code, which the vmlinux's ORC does not
    # cover: what it must show is the CPU, its interrupt flag, and the module.
    # With interrupts on, the stub's poll stops the timer case's loop
    # anywhere in it: in the module or in the clock it reads.
    dict(name="timer", cue=b"vtice-timer-go", guards_left=1, signal="T0e",
         commands="info registers rip eflags\ndmesg 5\ndetach\n",
         chain=[], shows=[("rip in the module's loop or the clock it reads",
                           lambda t: re.search(r"^rip\s+0xffffffff(c0[0-9a-f]+|[0-9a-f]+\s+<(read_tsc|ktime_get)[+>])",
                                               t, re.M)),
                          ("eflags.IF set", lambda t: not irqs_off(t) and re.search(r"^eflags", t, re.M))],
         reason=r"Hard lockup \(SIGALRM\): the CPU's timer could not interrupt it for too long at 0xffffffff[0-9a-f]+",
         why=r"CPU 1: its timer could not interrupt it for 10 s: interrupts on, its local APIC timer masked",
         logged="vtice_lockme: the local APIC timer masked on CPU 1",
         resumed="VTICE-TIMER the timer ticks again"),
    dict(name="lockup", cue=b"vtice-lockup-go", guards_left=1, signal="T0e",
         commands="info registers rip eflags\ndmesg 5\ndetach\n",
         chain=[], shows=[("rip in module space", lambda t: re.search(r"^rip\s+0xffffffffc0[0-9a-f]+", t, re.M)),
                          ("eflags.IF clear", irqs_off)],
         reason=r"Hard lockup \(SIGALRM\): the CPU's timer could not interrupt it for too long at 0xffffffffc0[0-9a-f]+",
         why=r"CPU 1: its timer could not interrupt it for 10 s: interrupts off",
         logged="vtice_lockme: spinning with interrupts off on CPU 1",
         resumed="VTICE-LOCKUP the other CPU runs on"),
    dict(name="panic", cue=b"vtice-crash-go", guards_left=0, guard="panic",
         chain=["panic", "sysrq_handle_crash", "__handle_sysrq", "write_sysrq_trigger"],
         reason=r'kernel panic: "sysrq triggered crash"',
         logged="sysrq: Trigger a crash",
         resumed="Kernel panic - not syncing: sysrq triggered crash"),
]


# hvtriple: the CPU that triple-faults runs module code (no ORC); once the
# debugger lets it go it leaves VMX and the machine resets, so nothing
# resumes.
TRIPLE = [
    dict(name="triple", cue=b"vtice-triple-go", guards_left=2,
         commands="info registers rip eflags\ndmesg 5\ndetach\n",
         chain=[], shows=[("rip in module space", lambda t: re.search(r"^rip\s+0xffffffffc0[0-9a-f]+", t, re.M))],
         reason=r"Kernel crash \(SIGSEGV\) at 0xffffffffc0[0-9a-f]+",
         why=r"CPU 1 triple-faulted at 0xffffffffc0[0-9a-f]+ \(a VM exit",
         logged="vtice_crashme: an empty IDT and int3 on CPU 1: a triple fault",
         resumed=None),
]


def check_crash(fig, crash):
    name = crash["name"]
    signal = crash.get("signal", "T0b")
    cue_and_wait(fig, name, crash["cue"], crash["guards_left"], signal)
    check_later_attach(name, signal)
    guard = crash.get("guard")
    guard_addr = figures().get("hv.crash-sym.%s" % guard) if guard else None
    if guard and not guard_addr:
        check(name + "-gdb", False, "the guest printed no address for %s" % guard)
    gdb_pc = gdb_reads_stop(name, signal, int(guard_addr, 16) if guard_addr else None,
                            "%s in the guest's kallsyms" % guard)
    text, rc = vtice_attach(crash.get("commands", "bt\nmonitor why\ndmesg 5\ndetach\n"))
    rip = re.search(r"^rip\s+(0x[0-9a-f]+)", text, re.M)
    if not guard and rip:
        check(name + "-gdb-rip", gdb_pc == int(rip.group(1), 16),
              "gdb's pc %s is the rip vtice attach shows, %s" %
              ("%#x" % gdb_pc if gdb_pc is not None else "?", rip.group(1)))
    m = re.search(r"stop reply ready (\d+) us of guest time", text)
    check(name + "-latency", m is not None,
          "the stub's stop reply was ready %s us of guest time after the crashing CPU trapped "
          "(all CPUs parked)" % (m.group(1) if m else "?"))
    if m:
        print("FIGURE crash.%s.stop_reply_us=%s" % (name, m.group(1)), flush=True)
    if crash["chain"]:
        check(name + "-bt", in_order(text, crash["chain"]), "bt through ORC: %s" % " <- ".join(crash["chain"]))
    for what, holds in crash.get("shows", []):
        check(name + "-shows", bool(holds(text)), "the stopped CPU: %s" % what)
    check(name + "-reason", re.search(crash["reason"], text) is not None,
          "the console says why it stopped: /%s/" % crash["reason"])
    if "why" in crash:
        check(name + "-why", re.search(crash["why"], text) is not None,
              "and what the stub saw on that CPU (monitor why): /%s/" % crash["why"])
    check(name + "-dmesg", crash["logged"] in text,
          "dmesg from memory has the line the kernel printed before the guard: %s" % crash["logged"])
    check(name + "-detach", rc == 0, "vtice attach exit %d" % rc)
    if crash["resumed"]:
        check(name + "-resumed", wait_for_guest_line(crash["resumed"], 300),
              "after detach the kernel went on: %s" % crash["resumed"])


def main():
    if not wait_for_guest_line("VTICE-FIGURE hv.crash-uts.addr=", 60):
        check("attach", False, "the guest never printed init_uts_ns's address")
        return
    fig = figures()
    for crash in TRIPLE if os.environ.get("VTICE_SCENARIO") == "hvtriple" else CRASHES:
        check_crash(fig, crash)
    # Nothing the guest does after this is judged: the rig may stop Bochs.
    open(os.path.join(os.environ["VTICE_RUN_DIR"], "host", "end-run"), "w").close()


if __name__ == "__main__":
    main()
    print("crash_rsp: %d failures" % FAILURES[0], flush=True)
    sys.exit(min(FAILURES[0], 100))
