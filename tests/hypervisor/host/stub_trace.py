"""The hypervisor's branch tracer on the real stub (scenario hvtrace), run
by stub-trace.sh inside gdb's Python. Two independent clients read it:

- real gdb: `record btrace bts` (Qbtrace:bts, qXfer:btrace:read), each CPU
  recording the task it runs then (`monitor btrace task current`), continue
  from an openat's entry to its fd_install, and `record
  function-call-history` must list getname, do_filp_open and path_openat;
- vtice: `trace syscall openat --comm vtopen` on the guest's openat loop;
  its function graph is compared with the kernel's own ftrace
  function_graph of the same call (openat("/proc/version"), warm), which
  the guest recorded before the module loaded: ftrace's calls outside
  interrupts, in order, must appear in vtice's graph outside its flagged
  interrupt subtrees (longest common subsequence >= 97 %). The scheduler's
  subtrees are left out on both sides: whether a call is preempted depends
  on timing, not on its path.
"""

import os
import re
import struct
import subprocess
import time

import gdb
import stub_gdb as sg
from rig_host import check, figures, find_one, guest_vmlinux
from trace_compare import CALL, ftrace_calls, graph_calls, versus_ftrace


def symbol_elf(system_map, out):
    """An ELF holding only the text symbols of a System.map-style list: a
    NOBITS .text, .symtab, .strtab. gdb names functions by such minimal
    symbols and reads the code from the target."""
    syms = []
    with open(system_map) as f:
        for line in f:
            addr, kind, name = line.split()[:3]
            if kind in "tT":
                syms.append((int(addr, 16), name))
    syms.sort()
    lo, hi = syms[0][0], syms[-1][0] + 0x1000
    strtab, entries = b"\0", [b"\0" * 24]
    for i, (addr, name) in enumerate(syms):
        size = (syms[i + 1][0] if i + 1 < len(syms) else hi) - addr
        entries.append(struct.pack("<IBBHQQ", len(strtab), 0x12, 0, 1, addr, size))  # GLOBAL FUNC
        strtab += name.encode() + b"\0"
    symtab = b"".join(entries)
    shstr = b"\0.text\0.symtab\0.strtab\0.shstrtab\0"
    data_off = 64
    sym_off, str_off = data_off, data_off + len(symtab)
    shs_off = str_off + len(strtab)
    sh_off = (shs_off + len(shstr) + 7) & ~7
    sections = [
        (0, 0, 0, 0, 0, 0, 0, 0, 0, 0),
        (1, 8, 6, lo, 0, hi - lo, 0, 0, 16, 0),                      # .text NOBITS, AX
        (7, 2, 0, 0, sym_off, len(symtab), 3, 1, 8, 24),            # .symtab -> .strtab
        (15, 3, 0, 0, str_off, len(strtab), 0, 0, 1, 0),
        (23, 3, 0, 0, shs_off, len(shstr), 0, 0, 1, 0),
    ]
    header = b"\x7fELF" + bytes([2, 1, 1, 0]) + b"\0" * 8 + struct.pack(
        "<HHIQQQIHHHHHH", 2, 62, 1, 0, 0, sh_off, 0, 64, 0, 0, 64, len(sections), 4)
    with open(out, "wb") as f:
        f.write(header + symtab + strtab + shstr)
        f.write(b"\0" * (sh_off - shs_off - len(shstr)))
        for sh in sections:
            f.write(struct.pack("<IIQQQQIIQQ", *sh))


def load_symbols():
    """The Debian kernel's text symbols (no KASLR in the rig), listed by
    `vtice syms --list` from its kallsyms tables (the rig's vmlinux has no
    .symtab and its System.map is a placeholder): function-call-history
    names functions by them."""
    vtice = find_one("build*/vtice")
    vmlinux = guest_vmlinux()
    if not vtice or not vmlinux:
        raise RuntimeError("no build/vtice or build/kernel/*/vmlinux under VTICE_ROOT")
    listing = subprocess.run([vtice, "syms", vmlinux, "--list"], check=True, capture_output=True,
                             text=True).stdout
    # In the driver's own work directory: two rigs may run side by side.
    system_map, elf = os.path.abspath("hvtrace-symbols.map"), os.path.abspath("hvtrace-symbols.elf")
    with open(system_map, "w") as f:
        f.write(listing)
    symbol_elf(system_map, elf)
    sg.run("file " + elf)


def check_monitor():
    out = sg.run("monitor btrace")
    check("trace-monitor", out.startswith("btrace: MTF (an exit per instruction)"), out.strip())


def check_gdb_btrace():
    """gdb's own branch-trace client, one thread (the CPU that stopped)."""
    sg.run("delete")
    sg.run("set breakpoint pending off")
    sg.run("break __x64_sys_openat")
    sg.run("continue")
    thread = gdb.selected_thread().num
    sg.run("delete")
    # each CPU records the task it runs now: this openat's on this thread
    sg.run("monitor btrace task current")
    sg.run("record btrace bts")
    sg.run("tbreak fd_install thread %d" % thread)
    start = time.time()
    sg.run("continue")
    info = sg.run("info record")
    # gdb prints record-function-call-history-size lines (10) per command
    # unless told otherwise; the call's early functions come first.
    sg.run("set record function-call-history-size unlimited")
    history = sg.run("record function-call-history")
    names = set(CALL.sub(r"\1", line).split()[-1] for line in history.splitlines() if line.strip())
    want = ["getname", "do_filp_open", "path_openat"]
    found = [w for w in want if any(n == w or n.startswith(w + ".") for n in names)]
    print(info, flush=True)
    check("trace-gdb-btrace", found == want,
          "record function-call-history (%d functions, %.0f s to fd_install) lists %s%s" %
          (len(history.splitlines()), time.time() - start, ", ".join(found),
           "" if found == want else "; missing " + ", ".join(w for w in want if w not in found)))
    sg.run("record stop")


def check_vtice_trace():
    cmds = "trace syscall openat --comm vtopen -o %s\ndetach\n" % os.path.abspath("hvtrace-openat.vtrace")
    ran = sg.vtice_batch("trace-vtice", cmds, 900)
    if not ran:
        return
    rc, text, wall = ran
    check("trace-vtice", rc == 0 and "the hypervisor records every branch" in text,
          "vtice trace syscall openat: exit %d after %.0f s wall" % (rc, wall))
    m = re.search(r"trace: \d+ instructions.*", text)
    check("trace-vtice-figures", bool(m), m.group(0) if m else "no summary line")
    check("trace-vs-ftrace", *versus_ftrace(ftrace_calls(), graph_calls(text)))


def main():
    """VTICE_TRACE_PART=gdb (stub-btrace.sh): gdb's record btrace; else vtice's trace."""
    fig = figures()
    if os.environ.get("VTICE_TRACE_PART") == "gdb":
        sg.run_checks([load_symbols, sg.connect, check_monitor, check_gdb_btrace])
        sg.run_checks((lambda: sg.run("detach"),), "trace-detach")
        time.sleep(1)
    else:
        sg.run_checks((check_vtice_trace,), "trace-vtice")
    sg.run_checks((lambda: sg.finish(fig, "trace-finish"),), "trace-finish")
    sg.quit_with_failures("stub_trace")


main()
