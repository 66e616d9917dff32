"""Time travel on the hypervisor's stub (scenario hvrecord), run by
stub-record.sh inside gdb's Python. vtice attaches over COM2 through a
logging relay (tests/qemu/rsp_relay.py), stops at build_open_flags in the
guest's openat loop and records it to its return with `trace --record`;
the relay keeps every answer the stub gave. Stock gdb on `vtice
serve-replay` then visits every step forwards (stepi) and back
(reverse-stepi): its registers and the memory vtice read at each step must
equal the stub's own 'g' and 'm' replies at that step
(tests/qemu/replay_oracle.py, the same oracle as qemu.replay)."""

import os
import re
import subprocess
import tempfile
import time

import stub_gdb as sg
from replay_oracle import Mismatch, check_against_live, start_server, truth_from_wire
from rig_host import check, figures, find_one, guest_vmlinux
from rsp_relay import Relay


def record_and_replay():
    vtice, vmlinux = find_one("build*/vtice"), guest_vmlinux()
    if not check("record-inputs", bool(vtice and vmlinux), "build/vtice and the guest's vmlinux"):
        return
    relay = Relay(int(os.environ["VTICE_COM2"].rsplit(":", 1)[1]))
    work = tempfile.mkdtemp(prefix="hvrecord-")
    trace = os.path.join(work, "build_open_flags.vtrace")
    cmds = "break build_open_flags\ncontinue\ndelete\ntrace --record -o %s --quiet\ndetach\n" % trace
    start = time.time()
    out = subprocess.run([vtice, "attach", "127.0.0.1:%d" % relay.port, "--symbols", vmlinux, "--batch", "-",
                          "--timeout", "900"], input=cmds, capture_output=True, text=True, timeout=1800)
    text = out.stdout + out.stderr
    print(text, flush=True)
    rec = re.search(r"record: (\d+) steps.*", text)
    if not check("record", out.returncode == 0 and rec is not None,
                 "vtice trace --record of build_open_flags over COM2: exit %d after %.0f s wall: %s" % (
                     out.returncode, time.time() - start, rec.group(0) if rec else "no record line")):
        return
    time.sleep(1)
    steps = int(rec.group(1))
    try:
        truth_regs, truth_mem = truth_from_wire(relay.packets())
        check("record-steps", len(truth_regs) - 1 == steps,
              "%d steps recorded, %d single-steps on the wire" % (steps, len(truth_regs) - 1))
        server, port = start_server(vtice, trace)
        try:
            visited, mem_checked, seconds = check_against_live(port, work, truth_regs, truth_mem, points=steps)
        finally:
            server.kill()
            server.wait()
        check("replay-vs-stub", True, "%d visits by stock gdb (every step forwards, then back) equal the "
              "stub's own registers; %d memory reads equal its m replies; %.1f s" % (visited, mem_checked, seconds))
    except Mismatch as e:
        check("replay-vs-stub", False, str(e))


def main():
    fig = figures()
    sg.run_checks((record_and_replay,), "record")
    sg.run_checks((lambda: sg.finish(fig, "record-finish"),), "record-finish")
    sg.quit_with_failures("stub_record")


main()
