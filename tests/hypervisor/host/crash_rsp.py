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
function. Before the panic the host starts the hypervisor's branch trace
at sysrq_handle_crash and reads it after the crash stop. hvtriple: a
triple fault (vtice_crashme mode=triple), which the stub reports with the
event the CPU was delivering. After the panic, `vtice dump` starts a vmcore
of the panicked kernel through the stub over COM2 (the direct-map path):
its progress must show a rate and the time left, and Ctrl-C must stop it
and remove the partial file, the stub still answering after. Stock gdb reads each
stop as a peer of vtice attach: its signal, and its PC against the guard's
address in the guest's kallsyms (or, where no guard fired, against the RIP
vtice attach shows). Exit status: the number of failures."""

import os
import re
import subprocess
import time
from signal import SIGINT

from rig_host import (Rsp, check, figures, find_one, guest_vmlinux, monitor, run_driver, stop_thread,
                      wait_for_guest_line, write_domainname)


def wait_stop(rsp, seconds):
    rsp.sock.settimeout(seconds)
    try:
        return rsp.reply()
    finally:
        rsp.sock.settimeout(120)


def cue_and_wait(fig, crash, signal):
    """Attach (the first packet stops the machine), write the guest's cue
    into its domain name, continue, and wait for the crash's stop."""
    name = crash["name"]
    rsp = Rsp()
    rsp.packet("?")
    first = rsp.reply()
    wrote = write_domainname(rsp, int(fig["hv.crash-uts.addr"], 16), crash["cue"])
    check(name + "-attach", first[:1] in ("T", "S") and wrote == "OK",
          "attached before the crash: %s, cue written: %s" % (first[:12], wrote))
    traced_cpu = trace_from(rsp, fig, name, crash["trace"][0]) if "trace" in crash else None
    rsp.packet("c")
    start = time.time()
    stop = wait_stop(rsp, 300)
    check(name + "-stop", stop.startswith(signal),
          "the attached debugger got the crash's stop reply %.1f s wall after continue: %s" %
          (time.time() - start, stop))
    hooks = monitor(rsp, "hooks")
    check(name + "-one-shot", "%d crash guards" % crash["guards_left"] in hooks,
          "the guard that fired disarmed itself: %s" % hooks.strip().replace("\n", "; "))
    if traced_cpu is not None:
        check_trace_before_crash(rsp, fig, name, traced_cpu, crash["trace"])
    rsp.close()


def trace_from(rsp, fig, name, function):
    """Stop at FUNCTION (a breakpoint, from the guest's kallsyms) and start
    the hypervisor's branch trace of the task running it, as gdb's `record
    btrace bts` does. Returns the traced thread (CPU + 1), or None."""
    addr = int(fig.get("hv.crash-sym." + function, "0"), 16)
    rsp.packet("Z0,%x,1" % addr)
    replies = [rsp.reply()]
    rsp.packet("c")
    stop = wait_stop(rsp, 300)
    thread = stop_thread(stop)
    rsp.packet("z0,%x,1" % addr)
    replies.append(rsp.reply())
    if thread is not None:
        rsp.packet("Hg%x" % thread)
        replies.append(rsp.reply())
        monitor(rsp, "btrace task current")
        rsp.packet("Qbtrace:bts")
        replies.append(rsp.reply())
    ok = addr != 0 and stop.startswith("T05") and replies == ["OK"] * 4
    check(name + "-trace-start", ok,
          "stopped at %s (%#x): %s; Z0, z0, Hg, Qbtrace:bts for that CPU's task: %s" %
          (function, addr, stop[:24], ", ".join(replies)))
    return thread if ok else None


def read_xfer(rsp, what):
    """A qXfer object whole, in chunks (GDB manual, qXfer): None on an error."""
    data, offset = "", 0
    while True:
        rsp.packet("qXfer:%s:%x,%x" % (what, offset, 0x3f0))
        reply = rsp.reply()
        if reply[:1] not in ("m", "l"):
            return None
        data += reply[1:]
        offset += len(reply) - 1
        if reply[0] == "l":
            return data


def check_trace_before_crash(rsp, fig, name, thread, path):
    """The trace the stub recorded up to the crash, read after it as gdb
    reads it (qXfer:btrace:read:all: BTS blocks, newest first). Its blocks
    must start at each function of PATH in turn (addresses from the guest's
    kallsyms), the newest at the guarded function where the crash stopped."""
    rsp.packet("Hg%x" % thread)
    rsp.reply()
    xml = read_xfer(rsp, "btrace:read:all") or ""
    begins = [int(b, 16) for b in re.findall(r'<block begin="(0x[0-9a-f]+)"', xml)][::-1]
    addrs = [int(fig.get("hv.crash-sym." + f, "0"), 16) for f in path]
    firsts = [begins.index(a) if a in begins else -1 for a in addrs]
    ok = bool(begins) and -1 not in firsts and firsts == sorted(firsts) and \
        begins[0] == addrs[0] and begins[-1] == addrs[-1]
    counters = monitor(rsp, "btrace")
    m = re.search(r"\d+ records \(\d+ interrupts/exceptions\)", counters)
    check(name + "-trace", ok,
          "read through the stub after the crash: %d blocks (%s) from %s to %s, passing %s in order" %
          (len(begins), m.group(0) if m else "?", path[0], path[-1], " -> ".join(path)))
    with open(os.path.join(os.environ["VTICE_RUN_DIR"], "host", name + "-btrace.xml"), "w") as f:
        f.write(xml)


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
    vmlinux = guest_vmlinux()
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
    # The panic's last steps are traced from sysrq_handle_crash on: it calls
    # __rcu_read_unlock, then panic.
    dict(name="panic", cue=b"vtice-crash-go", guards_left=0, guard="panic",
         trace=["sysrq_handle_crash", "__rcu_read_unlock", "panic"],
         commands="bt\nmonitor why\nmonitor lbr\ndmesg 5\ndetach\n",
         shows=[("monitor lbr says plainly that Bochs has no LBR",
                 lambda t: "lbr: this CPU has no LBR (DEBUGCTL.LBR does not stick" in t)],
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
    cue_and_wait(fig, crash, signal)
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


DUMP_PROGRESS = re.compile(r"vmcore: ([0-9.]+) MiB of ([0-9.]+) MiB, ([0-9.]+) (MiB|KiB)/s, (\d+) s left")


def check_dump_over_serial():
    """vtice dump through the stub on a 115,200-baud line: RAM through the
    kernel's direct map, progress with an estimate, then Ctrl-C."""
    vtice, vmlinux = find_one("build*/vtice"), guest_vmlinux()
    out_path = os.path.join(os.environ["VTICE_RUN_DIR"], "host", "panic.vmcore")
    log_path = out_path + ".log"
    with open(log_path, "w") as log:
        dump = subprocess.Popen([vtice, "dump", os.environ["VTICE_COM2"], "-o", out_path, "--symbols", vmlinux,
                                 "--no-orc", "--no-cache"], stdout=log, stderr=subprocess.STDOUT)
        deadline, progress = time.time() + 300, []
        while time.time() < deadline and dump.poll() is None and len(progress) < 3:
            time.sleep(2)
            with open(log_path, errors="replace") as f:
                progress = DUMP_PROGRESS.findall(f.read())
        dump.send_signal(SIGINT)
        try:
            rc = dump.wait(120)
        except subprocess.TimeoutExpired:
            dump.kill()
            rc = dump.wait()
    with open(log_path, errors="replace") as f:
        text = f.read()
    print(text[-3000:], flush=True)
    ram = re.search(r"Dumping ([0-9.]+) MiB of RAM in (\d+) ranges and (\d+) CPUs, through the direct map", text)
    check("dump-start", ram is not None,
          "vtice dump read the panicked kernel's RAM map, VMCOREINFO and CPUs through the stub: %s" %
          (ram.group(0) if ram else "no 'Dumping' line"))
    if progress:
        done, total, rate, unit, left = progress[-1]
        print("FIGURE crash.dump.kib_per_s=%.1f" % (float(rate) * (1024 if unit == "MiB" else 1)), flush=True)
        print("FIGURE crash.dump.estimate_s=%s" % left, flush=True)
    check("dump-progress", len(progress) >= 2 and float(progress[-1][0]) > 0 and int(progress[-1][4]) > 0,
          "progress over the line with a rate and the time left: %s" %
          (" | ".join("%s of %s MiB, %s %s/s, %s s left" % p for p in progress[-2:]) or "none"))
    check("dump-interrupt", rc == 1 and "removed, nothing written" in text and
          not os.path.exists(out_path) and not os.path.exists(out_path + ".part"),
          "Ctrl-C stopped it (exit %d), the partial file removed" % rc)
    rsp = Rsp()
    rsp.packet("?")
    stop = rsp.reply()
    check("dump-stub-answers", stop[:1] in ("T", "S"), "after the dump a new connection asks '?': %s" % stop)
    rsp.close()


def main():
    if not wait_for_guest_line("VTICE-FIGURE hv.crash-uts.addr=", 60):
        check("attach", False, "the guest never printed init_uts_ns's address")
        return
    fig = figures()
    triple = os.environ.get("VTICE_SCENARIO") == "hvtriple"
    for crash in TRIPLE if triple else CRASHES:
        check_crash(fig, crash)
    if not triple:
        check_dump_over_serial()
    # Nothing the guest does after this is judged: the rig may stop Bochs.
    open(os.path.join(os.environ["VTICE_RUN_DIR"], "host", "end-run"), "w").close()


if __name__ == "__main__":
    run_driver("crash_rsp", main)
