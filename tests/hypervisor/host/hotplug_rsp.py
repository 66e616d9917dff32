#!/usr/bin/env python3
"""Host driver of the hvhotplug Bochs scenario's last part: a debugger stays
attached to the hypervisor's stub, the machine running, while the guest
takes CPU 1 offline and online 20 times. Then a break-in (0x03) must stop
both CPUs, each with a canonical RIP in its registers, and detach must let the
guest go on. The cues go through the kernel's domain name, written with M
(the same handshake as crash_rsp.py). Exit status: the number of failures."""

from rig_host import Rsp, check, figures, run_driver, stopped_rip, wait_for_guest_line, write_domainname

CYCLES = 20


def main():
    if not wait_for_guest_line("VTICE-FIGURE hv.hotplug-uts.addr=", 120):
        check("hotplug-attach", False, "the guest never printed init_uts_ns's address")
        return
    fig = figures()
    rsp = Rsp()
    rsp.packet("?")
    first = rsp.reply()
    wrote = write_domainname(rsp, int(fig["hv.hotplug-uts.addr"], 16), b"vtice-hotplug-go")
    check("hotplug-attach", first[:1] in ("T", "S") and wrote == "OK",
          "attached to the running machine: %s, cue written: %s" % (first[:12], wrote))
    rsp.packet("c")
    done = wait_for_guest_line("VTICE-HOTPLUG %d cycles done" % CYCLES, 600)
    check("hotplug-cycles", done,
          "the guest took CPU 1 offline and online %d times with the debugger attached" % CYCLES)
    rsp.send(b"\x03")
    rsp.sock.settimeout(60)
    stop = rsp.reply()
    check("hotplug-break-in", stop.startswith("T"), "0x03 after the cycles stopped the machine: %s" % stop)
    rsp.packet("qfThreadInfo")
    threads = rsp.reply()
    check("hotplug-threads", threads == "m1,2", "both CPUs are threads again: %s" % threads)
    rips = [stopped_rip(rsp, t) for t in (1, 2)]
    # A CPU may stop in user mode: the guest's shell polls its hostname
    # then. What matters is that both CPUs' registers read back after the
    # cycles: a non-zero canonical RIP (kernel half or user half).
    check("hotplug-registers", all(r and (r < 0x0000800000000000 or r >= 0xffff800000000000) for r in rips),
          "each CPU stopped with a canonical RIP: %s" % ", ".join("%#x" % r if r else "?" for r in rips))
    write_domainname(rsp, int(fig["hv.hotplug-uts.addr"], 16), b"vtice-hotplug-end")
    rsp.packet("D")
    detached = rsp.reply()
    rsp.close()
    check("hotplug-detach", detached == "OK", "D answered %s" % detached)
    check("hotplug-resumed", wait_for_guest_line("VTICE-HOTPLUG detached, the guest runs on", 300),
          "after detach the guest went on")


if __name__ == "__main__":
    run_driver("hotplug_rsp", main, "hotplug-line")
