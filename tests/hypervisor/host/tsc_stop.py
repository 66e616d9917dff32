#!/usr/bin/env python3
"""Host driver of the hvtsc Bochs scenario (tsc_offset=1, hypervisor/core/
tsc_hide.h). Twice, once per load of the module (without, then with TSC
offsetting), while a guest program reads RDTSC back to back: break in
(0x03), keep the machine stopped STOP_S seconds, write the program's cue
into the kernel's domain name, detach. The guest judges the RDTSC steps it
saw; here each stop must be a real stop and each detach a resume.
Exit status: the number of failures."""

import time

from rig_host import Rsp, check, figures, run_driver, wait_for_guest_line, write_domainname

STOP_S = 3


def stop_once(round_name):
    if not wait_for_guest_line("VTICE-TSC %s ready" % round_name, 300):
        check("tsc-%s-stop" % round_name, False, "the guest never said it was ready")
        return
    uts = int(figures()["hv.tsc-uts.addr"], 16)
    time.sleep(1)  # the reader is in its loop
    rsp = Rsp()
    rsp.send(b"\x03")
    rsp.sock.settimeout(60)
    stop = rsp.reply()
    rsp.sock.settimeout(120)
    held = time.monotonic()
    time.sleep(STOP_S)
    wrote = write_domainname(rsp, uts, b"vtice-tsc-%s-done" % round_name.encode())
    held = time.monotonic() - held
    rsp.packet("D")
    detached = rsp.reply()
    rsp.close()
    check("tsc-%s-stop" % round_name, stop.startswith("T") and wrote == "OK" and detached == "OK",
          "stopped (%s), held %.1f s, cue written (%s), detached (%s)" % (stop[:12], held, wrote, detached))


def main():
    for round_name in ("off", "on"):
        stop_once(round_name)


if __name__ == "__main__":
    run_driver("tsc_stop", main, "tsc-line")
