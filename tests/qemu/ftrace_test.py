#!/usr/bin/env python3
"""qemu.ftrace: vtice's function graph of openat against the kernel's own
ftrace function_graph, on the same kernel in the same guest.

Run under tests/qemu/run.sh exec --ftrace: the guest's /init recorded the
workload's openat calls with ftrace (set_graph_function=do_sys_openat2,
interrupts left out) before any debugger attached, then switched ftrace off.

  1. The reference is the call sequence most of ftrace's runs took.
  2. vtice traces the next openat of the same process (block stepping over
     the gdbstub). The longest common subsequence of the two call lists must
     hold at least 97 % of ftrace's calls; the misses are printed.
  3. The calls vtice shows and ftrace does not must be functions ftrace
     cannot see: no __fentry__ site at their start in the image's own
     __mcount_loc table (notrace, asm, no-instrumentation code). Dropping
     those, vtice's sequence must equal one of ftrace's runs exactly.
  4. `vtice report` of the trace file vtice wrote renders the same graph.
"""
import glob
import os
import subprocess
import sys
import tempfile

from ftrace_graph import calls_under, ftrace_visible, lcs_alignment, modal_run
from rig import fail, qemu_port, vtice

FUNCTION = "do_sys_openat2"


def graph_lines(text):
    """The function-graph body: the lines from the column header to the footer."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("# CPU"))
    end = next(i for i, line in enumerate(lines) if line.startswith("# branches:"))
    return lines[start:end + 1]


def main():
    binary = sys.argv[1]
    kernel_dir = sys.argv[2]
    port = qemu_port()
    ftrace_text = open(os.environ["VTICE_QEMU_FTRACE"]).read()
    runs = calls_under(ftrace_text, FUNCTION)
    if len(runs) < 3:
        fail("ftrace recorded %d runs of %s (want at least 3)" % (len(runs), FUNCTION), ftrace_text[-3000:])
    reference, agreeing = modal_run(runs)
    print("ftrace: %d runs of %s; %d took the same %d calls (the reference)"
          % (len(runs), FUNCTION, agreeing, len(reference)))

    work = tempfile.mkdtemp(prefix="vtice-ftrace-")
    trace_file = os.path.join(work, "openat.vtrace")
    live = vtice(binary, port, ["trace syscall openat --comm vtice-work -o " + trace_file])
    traced = calls_under(live, FUNCTION)
    if len(traced) != 1:
        fail("vtice's graph has %d runs of %s, expected 1" % (len(traced), FUNCTION), live)
    ours = [name for _, name in traced[0]]

    kept = set(lcs_alignment(reference, ours))
    misses = [name for i, name in enumerate(reference) if i not in kept]
    score = len(kept) / len(reference)
    print("LCS: %d of ftrace's %d calls in order in vtice's %d (%.1f %%); misses: %s"
          % (len(kept), len(reference), len(ours), 100 * score, ", ".join(misses) or "none"))

    images = sorted(glob.glob(os.path.join(kernel_dir, "*", "vmlinux")))
    if not images:
        print("SKIP: no extracted vmlinux under %s (its __mcount_loc is the oracle)" % kernel_dir)
        return 77
    vmlinux = images[0]
    visible = ftrace_visible(vmlinux, os.environ["VTICE_QEMU_KALLSYMS"])
    unseen = sorted({name for name in ours if name not in visible})
    print("vtice-only calls ftrace cannot see (no __fentry__ in __mcount_loc): %s" % ", ".join(unseen))
    if score < 0.97:
        fail("vtice's graph holds %.1f %% of ftrace's calls (want >= 97 %%); misses: %s"
             % (100 * score, ", ".join(misses)), live)
    comparable = [name for name in ours if name in visible]
    ftrace_sequences = {tuple(name for _, name in run) for run in runs}
    if tuple(comparable) not in ftrace_sequences:
        extra = [name for name in comparable if name not in reference]
        fail("leaving out what ftrace cannot see, vtice's calls match none of ftrace's %d runs; "
             "traceable calls ftrace's reference lacks: %s" % (len(runs), ", ".join(extra) or "none"), live)
    print("leaving out what ftrace cannot see, vtice's %d calls equal an ftrace run call for call"
          % len(comparable))

    report = subprocess.run([binary, "report", trace_file], capture_output=True, text=True, timeout=60)
    if report.returncode != 0:
        fail("vtice report failed", report.stdout, report.stderr)
    if graph_lines(report.stdout) != graph_lines(live):
        fail("vtice report renders the trace file differently from the live trace", live, report.stdout)
    if " cy |" in live or " insn |" not in live:
        fail("durations of an instruction-counted trace are not labelled insn", live)
    print("PASS: vtice's openat graph holds %d/%d of ftrace's calls (%.1f %%); report == live graph"
          % (len(kept), len(reference), 100 * score))
    return 0


if __name__ == "__main__":
    sys.exit(main())
