"""The syscall-path tracer in local mode (scenario hvpath): the guest ran
`vtice trace syscall openat --comm vtopen` on itself and printed its output
as VTICE-PATH lines, then VTICE-PATH-END. Its function graph must contain
the kernel's own ftrace function_graph of the same warm
openat("/proc/version"), recorded by the guest before the module loaded:
ftrace's calls outside interrupts, in order, in vtice's graph outside its
flagged interrupt subtrees, longest common subsequence >= 97 %; the
scheduler's subtrees are left out on both sides (timing, not the path)."""

import os
import re
import sys

from rig_host import FAILURES, check, wait_for_guest_line
from trace_compare import compare, ftrace_calls, graph_calls

PREFIX = "VTICE-PATH "


def guest_output():
    with open(os.environ["VTICE_SERIAL_LOG"], errors="replace") as log:
        return "".join(l[len(PREFIX):] for l in log if l.startswith(PREFIX))


def main():
    if not check("path-output", wait_for_guest_line("VTICE-PATH-END", 1800), "the guest printed its trace"):
        return 1
    text = guest_output()
    summary = re.search(r"trace: call 1: .*", text)
    check("path-summary", bool(summary), summary.group(0) if summary else "no summary line")
    ours, theirs = graph_calls(text), ftrace_calls("hv.path-ftrace")
    if not theirs:
        check("path-vs-ftrace", False, "the guest printed no function_graph (hv.path-ftrace)")
        return 1
    matched, score, missing = compare(theirs, ours)
    check("path-vs-ftrace", score >= 0.97,
          "%d of ftrace's %d calls appear in order in vtice's %d (%.1f %%); not seen: %s" %
          (sum(matched), len(theirs), len(ours), 100 * score, ", ".join(missing[:30]) or "none"))
    return 0


sys.exit(1 if main() or FAILURES[0] else 0)
