#!/usr/bin/env python3
"""Host driver of the hvcrash Bochs scenario: the kernel panics under the
hypervisor's stub (echo c > /proc/sysrq-trigger) and must stay stopped in
it. The expected call chain is the one the kernel's own unwinder prints for
a sysrq crash (panic <- sysrq_handle_crash <- __handle_sysrq <-
write_sysrq_trigger); the expected log line is the one __handle_sysrq
prints before it calls the handler. Exit status: the number of failures."""

import os
import re
import subprocess
import sys
import time

from rig_host import FAILURES, Rsp, check, figures, find_one, monitor, wait_for_guest_line

GO = b"vtice-crash-go"


def wait_stop(rsp, seconds):
    rsp.sock.settimeout(seconds)
    try:
        return rsp.reply()
    finally:
        rsp.sock.settimeout(120)


def arm_and_wait(fig):
    """Connect (the first packet stops the machine), tell the guest to crash
    by writing its domain name, continue, and wait for the crash's stop."""
    rsp = Rsp()
    rsp.packet("?")
    first = rsp.reply()
    domain = int(fig["hv.crash-uts.addr"], 16) + 5 * 65  # new_utsname.domainname
    rsp.packet("M%x,%x:%s" % (domain, len(GO) + 1, (GO + b"\0").hex()))
    wrote = rsp.reply()
    check("crash-attach", first[:1] in ("T", "S") and wrote == "OK",
          "attached before the crash: %s, cue written: %s" % (first[:12], wrote))
    rsp.packet("c")
    start = time.time()
    stop = wait_stop(rsp, 300)
    check("crash-stop", stop.startswith("T0b"),
          "the attached debugger got the crash's stop reply %.1f s wall after continue: %s" %
          (time.time() - start, stop))
    hooks = monitor(rsp, "hooks")
    check("crash-one-shot", "1 crash guards" in hooks,
          "the panic guard disarmed itself, the oops guard stays: %s" % hooks.strip().replace("\n", "; "))
    rsp.close()


def check_later_attach():
    """A debugger attaching after the crash finds the machine stopped there."""
    rsp = Rsp()
    rsp.packet("?")
    stop = rsp.reply()
    check("crash-later-attach", stop.startswith("T0b"), "a new connection asks '?': %s" % stop)
    rsp.close()


def check_vtice_console():
    vtice = find_one("build*/vtice")
    vmlinux = find_one("build*/kernel/*/vmlinux")
    if not vtice or not vmlinux:
        check("crash-console", False, "no build/vtice or build/kernel/*/vmlinux under VTICE_ROOT")
        return
    out = subprocess.run([vtice, "attach", os.environ["VTICE_COM2"], "--symbols", vmlinux,
                          "--batch", "-", "--timeout", "120"], input="bt\ndmesg 5\ndetach\n",
                         capture_output=True, text=True, timeout=900)
    text = out.stdout + out.stderr
    print(text, flush=True)
    chain = ["panic", "sysrq_handle_crash", "__handle_sysrq", "write_sysrq_trigger"]
    positions = [re.search(r"\b%s\b" % f, text) for f in chain]
    check("crash-bt", all(positions) and [m.start() for m in positions] == sorted(m.start() for m in positions),
          "bt through ORC: %s" % " <- ".join(chain))
    check("crash-reason", 'kernel panic: "sysrq triggered crash' in text,
          "the console names the panic by the message panic() was called with")
    check("crash-dmesg", "sysrq: Trigger a crash" in text,
          "dmesg from memory shows the kernel's last line before the crash")
    check("crash-detach", out.returncode == 0, "vtice attach exit %d" % out.returncode)


def main():
    if not wait_for_guest_line("VTICE-FIGURE hv.crash-uts.addr=", 60):
        check("crash-attach", False, "the guest never printed init_uts_ns's address")
        return
    arm_and_wait(figures())
    check_later_attach()
    check_vtice_console()
    # Detached: the kernel's own panic runs on and reports itself.
    check("crash-resumed", wait_for_guest_line("Kernel panic - not syncing: sysrq triggered crash", 300),
          "after detach the kernel's panic() ran on past the guard and printed its message")


if __name__ == "__main__":
    main()
    print("crash_rsp: %d failures" % FAILURES[0], flush=True)
    sys.exit(min(FAILURES[0], 100))
