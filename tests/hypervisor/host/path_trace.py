"""The syscall-path tracer in local mode (scenarios hvpath and, with the
argument "tf", hvpathtf): the guest ran `vtice trace syscall openat --comm
vtopen` on itself and printed its output as VTICE-PATH (VTICE-PATHTF)
lines, then VTICE-PATH-END (VTICE-PATHTF-END). Its function graph must contain
the kernel's own ftrace function_graph of the same warm
openat("/proc/version"), recorded by the guest before the module loaded:
ftrace's calls outside interrupts, in order, in vtice's graph outside its
flagged interrupt subtrees, longest common subsequence >= 97 %; the
scheduler's subtrees are left out on both sides (timing, not the path).
With "tf" the trace was taken with TF steps under a timer-interrupt load:
the armed line must name TF steps, and the call must have met interrupts,
flagged as their own subtrees (left out of the comparison). Either way the
trace must be lossless: no record may be lost in the rings (hvpathtf runs
at the module's default ring size, hvpath at ring_records=65536)."""

import os
import re
import sys

from rig_host import FAILURES, check, wait_for_guest_line
from trace_compare import ftrace_calls, graph_calls, versus_ftrace

TF = len(sys.argv) > 1 and sys.argv[1] == "tf"
TAG = "VTICE-PATHTF" if TF else "VTICE-PATH"
PREFIX = TAG + " "
MIN_INTERRUPTS = 1	# trace_event_gap's default lets one in per 16384 steps: 1-5 over this call


def guest_output():
    with open(os.environ["VTICE_SERIAL_LOG"], errors="replace") as log:
        return "".join(l[len(PREFIX):] for l in log if l.startswith(PREFIX))


def check_tf(text, summary):
    armed = re.search(r"armed on .*", text)
    check("pathtf-armed", bool(armed) and "TF steps" in armed.group(0),
          armed.group(0) if armed else "no 'armed on' line")
    irqs = re.search(r"(\d+) interrupts or exceptions", summary.group(0) if summary else "")
    count = int(irqs.group(1)) if irqs else -1
    check("pathtf-interrupts", count >= MIN_INTERRUPTS,
          "%d interrupts or exceptions in the call, each its own flagged subtree (at least %d wanted)" %
          (count, MIN_INTERRUPTS))
    flagged = text.count("==========>")
    check("pathtf-subtrees", flagged >= min(count, MIN_INTERRUPTS),
          "%d interrupt subtrees in the graph" % flagged)


def untraced_cycles(name):
    """The guest's figure NAME.tsc_per_call (openat-cost, before the module loaded)."""
    with open(os.environ["VTICE_SERIAL_LOG"], errors="replace") as log:
        for line in log:
            m = re.match(r"VTICE-FIGURE %s\.tsc_per_call=(\d+)" % re.escape(name), line)
            if m:
                return int(m.group(1))
    return None


def check_slowdown(text):
    """The traced call's cycles against the same call untraced: the tracer's slowdown."""
    traced = re.search(r"call 1: (\d+) TSC cycles from entry to return, traced", text)
    untraced = untraced_cycles("hv.pathtf-openat" if TF else "hv.path-openat")
    ok = bool(traced) and bool(untraced)
    ratio = int(traced.group(1)) / untraced if ok else 0
    if ok:
        print("VTICE-FIGURE %s.slowdown=%.0f" % ("hv.pathtf" if TF else "hv.path", ratio), flush=True)
    check("path-slowdown", ok, "traced %s TSC cycles, untraced %s: %.0fx slower (Bochs, stepped)" %
          (traced.group(1) if traced else "?", untraced or "?", ratio))


def main():
    if not check("path-output", wait_for_guest_line(TAG + "-END", 1800), "the guest printed its trace"):
        return 1
    text = guest_output()
    summary = re.search(r"trace: call 1: .*", text)
    check("path-summary", bool(summary), summary.group(0) if summary else "no summary line")
    lost = re.search(r"(\d+) records lost", summary.group(0) if summary else "")
    check("path-lossless", bool(lost) and lost.group(1) == "0",
          "%s records lost (a full ring spills, then waits for the reader)" %
          (lost.group(1) if lost else "?"))
    if TF:
        check_tf(text, summary)
    check_slowdown(text)
    oracles = ftrace_calls("hv.pathtf-ftrace" if TF else "hv.path-ftrace")
    check("path-vs-ftrace", *versus_ftrace(oracles, graph_calls(text)))
    return 0 if oracles else 1


sys.exit(1 if main() or FAILURES[0] else 0)
