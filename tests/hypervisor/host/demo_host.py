"""Host side of the demo Bochs scenario (the hypervisor half of `make demo`,
tools/demo.sh). Two parts, each printed for the person watching and checked:
  1. the guest's own `vtice trace syscall openat` graph (VTICE-DEMO lines)
     against the kernel's ftrace function_graph of the same call (demo.ftrace),
     recorded before the module loaded: ftrace's calls in order in vtice's;
  2. `vtice attach` over COM2 with the Debian vmlinux's symbols: a hidden
     breakpoint on do_sys_openat2 hit by the guest's loop, bt, the bytes the
     debugger reads there (the original ones: the breakpoint is hidden from
     reads too), a second hit while the guest's /proc/kcore reader runs, then
     "vtdemo" written into the kernel's hostname to end the guest's loop.
Exit status: the number of failed checks."""

import os
import subprocess
import sys

from rig_host import FAILURES, check, figures, find_one, guest_vmlinux, wait_for_guest_line
from trace_compare import ftrace_calls, graph_calls, versus_ftrace

PREFIX = "VTICE-DEMO "


def guest_graph():
    with open(os.environ["VTICE_SERIAL_LOG"], errors="replace") as log:
        return "".join(l[len(PREFIX):] for l in log if l.startswith(PREFIX))


def trace_part():
    if not check("demo-trace-output", wait_for_guest_line("VTICE-DEMO-END", 1200),
                 "the guest printed its trace"):
        return
    theirs = ftrace_calls("demo.ftrace")
    if not check("demo-ftrace", bool(theirs), "the guest printed ftrace's function_graph"):
        return
    check("demo-trace-vs-ftrace", *versus_ftrace(theirs, graph_calls(guest_graph())))


def u64_literal(text):
    """The little-endian u64 whose bytes are text, NUL-padded to 8."""
    return "0x%016x" % int.from_bytes(text.encode().ljust(8, b"\0"), "little")


def attach_part():
    fig = figures()
    vtice, vmlinux = find_one("build*/vtice"), guest_vmlinux()
    uts, original = fig.get("hv.stub-uts.addr"), fig.get("hv.stub-text.bytes")
    if not check("demo-attach-inputs", vtice and vmlinux and uts and original,
                 "build/vtice, the guest's vmlinux and the guest's figures"):
        return
    nodename = int(uts, 16) + 65  # init_uts_ns.name.nodename
    cmds = "\n".join([
        "break do_sys_openat2",
        "continue",
        "info task",
        "bt",
        "x/16xb do_sys_openat2",
        "continue",
        "delete",
        "set *(u64*)0x%x = %s" % (nodename, u64_literal("vtdemo")),
        "detach",
    ]) + "\n"
    print("$ vtice attach %s --symbols %s --echo --batch -" % (os.environ["VTICE_COM2"], vmlinux), flush=True)
    run = subprocess.run([vtice, "attach", os.environ["VTICE_COM2"], "--symbols", vmlinux, "--echo",
                          "--batch", "-", "--timeout", "120"], input=cmds, capture_output=True, text=True,
                         timeout=900)
    print(run.stdout, end="", flush=True)
    sys.stderr.write(run.stderr)
    text = run.stdout
    chain = ["do_sys_openat2", "__x64_sys_openat", "do_syscall_64", "entry_SYSCALL_64"]
    at = text.find("(vtice) bt")
    positions = [text.find(f, at) for f in chain]
    check("demo-bt", at >= 0 and all(p >= 0 for p in positions) and positions == sorted(positions),
          "bt: %s" % " <- ".join(chain))
    dump = text[text.find("(vtice) x/16xb"):]
    seen = "".join(word[2:] for word in dump.split() if word.startswith("0x") and len(word) == 4)[:32]
    check("demo-bytes", seen == original,
          "the debugger reads %s at do_sys_openat2, the guest's /proc/kcore read %s before the load" %
          (seen or "?", original))
    check("demo-attach", run.returncode == 0, "vtice attach exit %d" % run.returncode)


def main():
    trace_part()
    attach_part()
    return FAILURES[0]


sys.exit(main())
