#!/usr/bin/env python3
"""Host driver of the hvstealth Bochs scenario (stealth=1): the stub of a
hypervisor the kernel no longer knows of still answers, and still stops the
machine at a hidden breakpoint.

First, twice (an ordinary load, then the stealth load): break in, read the
VMCALL key (`monitor key`), write a hash of it into the kernel's domain
name for the guest's memory scan (keyscan.c), detach. Then: break in
(0x03); `monitor vtice`; `monitor exits` (CPU 1, taken offline and back
by the guest, took the kernel's INIT and SIPI under vtice); a
breakpoint (Z0) on do_sys_openat2, where the guest's loop opens
/proc/version every second; continue to it; remove it; write the loop's cue
into the kernel's host name; detach. Exit status: the number of failures."""

import re

from rig_host import Rsp, check, figures, monitor, run_driver, stop_thread, stopped_rip, wait_for_guest_line

NODENAME = 65  # init_uts_ns.name.nodename: the second 65-byte field
DOMAINNAME = 5 * 65  # the sixth
MASK64 = (1 << 64) - 1


def mix64(z):
    """splitmix64's finalizer, as keyscan.c computes it."""
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
    return z ^ (z >> 31)


def write_string(rsp, addr, text):
    rsp.packet("M%x,%x:%s" % (addr, len(text) + 1, (text + b"\0").hex()))
    return rsp.reply()


def hand_over_key(when):
    """Break in, read the key, write key-WHEN-HASH-FIRSTBYTE into the
    domain name, detach."""
    if not wait_for_guest_line("VTICE-STEALTH key %s" % when, 1200):
        check("stealth-key-" + when, False, "the guest never asked for the key")
        return
    uts = int(figures()["hv.stealth-uts.addr"], 16)
    rsp = Rsp()
    rsp.send(b"\x03")
    rsp.sock.settimeout(60)
    stop = rsp.reply()
    answer = monitor(rsp, "key")
    m = re.search(r"key: 0x([0-9a-f]+)", answer)
    wrote = detached = None
    if m:
        key = int(m.group(1), 16)
        cue = "key-%s-%x-%02x" % (when, mix64(key), key & 0xFF)
        wrote = write_string(rsp, uts + DOMAINNAME, cue.encode())
    rsp.packet("D")
    detached = rsp.reply()
    rsp.close()
    check("stealth-key-" + when, stop.startswith("T") and m and wrote == "OK" and detached == "OK",
          "break-in %s; monitor key: %s; its hash written %s; D %s" %
          (stop[:24], answer.strip().replace(m.group(1), "<key>") if m else answer.strip(), wrote, detached))


def main():
    hand_over_key("control")
    hand_over_key("stealth")
    if not wait_for_guest_line("VTICE-STEALTH ready", 1200):
        check("stealth-attach", False, "the guest never said it was ready")
        return
    fig = figures()
    openat = int(fig["hv.stealth-openat.addr"], 16)
    uts = int(fig["hv.stealth-uts.addr"], 16)
    rsp = Rsp()
    rsp.send(b"\x03")
    rsp.sock.settimeout(60)
    stop = rsp.reply()
    check("stealth-break-in", stop.startswith("T"), "0x03 stopped the machine: %s" % stop[:24])
    hello = monitor(rsp, "vtice")
    check("stealth-monitor", "vtice hypervisor stub" in hello, "monitor vtice: %s" % hello.strip())
    # The guest took CPU 1 offline and back (stealth_hotplug): the kernel's
    # INIT and SIPI reached vtice, which kept the CPU.
    cpu1 = [l for l in monitor(rsp, "exits").splitlines() if l.startswith("cpu 1:")]
    check("stealth-hotplug-exits", cpu1 and ", init " in cpu1[0] and ", sipi " in cpu1[0],
          "monitor exits: %s" % (cpu1[0][:160] if cpu1 else "no cpu 1 line"))
    rsp.packet("Z0,%x,1" % openat)
    planted = rsp.reply()
    rsp.packet("c")
    rsp.sock.settimeout(120)
    hit = rsp.reply()
    rip = stopped_rip(rsp, stop_thread(hit)) if hit.startswith("T") else None
    check("stealth-breakpoint", planted == "OK" and rip == openat,
          "Z0 at do_sys_openat2 %#x: %s; the machine stopped at %s" %
          (openat, planted, "%#x" % rip if rip else hit[:24]))
    rsp.packet("z0,%x,1" % openat)
    removed = rsp.reply()
    unload = monitor(rsp, "unload")
    check("stealth-unload", "each CPU leaves VMX" in unload, "monitor unload: %s" % unload.strip())
    wrote = write_string(rsp, uts + NODENAME, b"vtice-stealth-done")
    rsp.packet("D")
    detached = rsp.reply()
    rsp.close()
    check("stealth-detach", removed == "OK" and wrote == "OK" and detached == "OK",
          "z0 %s, cue written %s, D %s" % (removed, wrote, detached))
    check("stealth-resumed", wait_for_guest_line("VTICE-TEST hv.stealth-loop PASS", 600),
          "the guest's loop saw the cue and ended")
    rsp = Rsp()
    rsp.send(b"\x03")
    rsp.sock.settimeout(10)
    try:
        answer = rsp.reply()
        rsp.packet("D")  # the stub is still there: let the machine run on
        rsp.reply()
    except (OSError, EOFError):
        answer = "nothing"
    rsp.close()
    check("stealth-gone", answer == "nothing", "after the unload a break-in gets %s" % answer[:24])


if __name__ == "__main__":
    run_driver("stealth_rsp", main, "stealth-line")
