"""Comparing a function graph of vtice's with the kernel's own ftrace
function_graph of the same call (the hvtrace and hvpath Bochs scenarios):
the calls each shows, in order, and which of ftrace's appear in vtice's
as a subsequence (longest common subsequence)."""

import os
import re

CALL = re.compile(r"([A-Za-z_][\w.]*)\(\)")


def graph_lines(lines):
    """(depth, text) of each function-graph line, ftrace's layout
    ("  1) + 12.88 us   |    name() {"): depth from the indent after '|'."""
    for line in lines:
        if not re.match(r"\s*\d+\)", line) or "|" not in line:
            continue
        text = line.split("|", 1)[1]
        yield len(text) - len(text.lstrip()), text.strip()


# Whether a call is preempted, and what the scheduler then runs, depends on
# timing, not on the syscall's path: both graphs are compared without it.
SCHEDULER = {"__cond_resched", "schedule", "__schedule", "preempt_schedule", "preempt_schedule_common",
             "preempt_schedule_irq", "preempt_schedule_notrace"}
OPENS = re.compile(r"\(\)\s*\{")


def without_subtrees(entries, roots):
    """(depth, text) entries minus every subtree rooted at a call in roots."""
    skip = None
    for depth, text in entries:
        if skip is not None:
            if depth == skip and text.startswith("}"):
                skip = None
            continue
        name = CALL.findall(text)[:1]
        if name and name[0] in roots:
            if OPENS.search(text):
                skip = depth
            continue
        yield depth, text


def ftrace_calls(name="hv.trace-ftrace"):
    """Each openat("/proc/version") in the guest's function_graph (the
    client's ftrace-openat records several): the calls of each, in order,
    from its do_sys_openat2 to that call's end, without its interrupts:
    this kernel's ftrace shows an interrupt inline, from irq_enter_rcu()
    to the end of irq_exit_rcu() at the same depth."""
    with open(os.environ["VTICE_SERIAL_LOG"], errors="replace") as log:
        prefix = "VTICE-FTRACE %s " % name
        lines = [l[len(prefix):] for l in log if l.startswith(prefix)]
    oracles, calls, irq_depth, in_exit, root = [], [], None, False, None
    for depth, text in without_subtrees(graph_lines(lines), SCHEDULER):
        name = CALL.findall(text)[:1]
        if root is None:
            if name != ["do_sys_openat2"]:
                continue
            root, calls = depth, []
        elif depth == root and text.startswith("}"):
            oracles.append(calls)
            root = None
            continue
        if irq_depth is None and name == ["irq_enter_rcu"]:
            irq_depth = depth
        if irq_depth is None:
            calls += name
        elif depth == irq_depth and name == ["irq_exit_rcu"]:
            in_exit = text.endswith("{")
            irq_depth = None if not in_exit else irq_depth
        elif in_exit and depth == irq_depth and text.startswith("}"):
            irq_depth, in_exit = None, False
    return oracles


def graph_calls(text):
    """The calls of vtice's function graph (ftrace's layout), without the
    interrupt and exception subtrees it marks with ==========> ... <==========."""
    calls, nested = [], 0
    for _, line in without_subtrees(graph_lines(text.splitlines()), SCHEDULER):
        if "==========>" in line:
            nested += 1
        elif "<==========" in line:
            nested -= 1
        elif not nested:
            calls += CALL.findall(line)[:1]
    return calls


def lcs_matches(a, b):
    """Which entries of a appear, in order, in b (longest common subsequence)."""
    prev = [0] * (len(b) + 1)
    table = [prev]
    for x in a:
        row = [0] * (len(b) + 1)
        for j, y in enumerate(b):
            row[j + 1] = prev[j] + 1 if x == y else max(prev[j + 1], row[j])
        table.append(row)
        prev = row
    matched, i, j = [False] * len(a), len(a), len(b)
    while i and j:
        if a[i - 1] == b[j - 1]:
            matched[i - 1] = True
            i, j = i - 1, j - 1
        elif table[i - 1][j] >= table[i][j - 1]:
            i -= 1
        else:
            j -= 1
    return matched


def compare(theirs, ours):
    """(matched, score, missing): which of ftrace's calls vtice's graph shows in order."""
    matched = lcs_matches(theirs, ours)
    score = sum(matched) / len(theirs) if theirs else 0.0
    return matched, score, [c for c, ok in zip(theirs, matched) if not ok]


# The share of ftrace's calls vtice's graph must show, in order.
MATCH_WANTED = 0.97


def versus_ftrace(oracles, ours):
    """(ok, message): vtice's graph against the ftrace call it matches best,
    since two calls of the same syscall can take different slow paths (a
    slab refill in one, ___slab_alloc, and not in the next)."""
    if not oracles:
        return False, "the guest printed no function_graph of openat"
    scored = [(compare(theirs, ours), theirs) for theirs in oracles]
    (matched, score, missing), theirs = max(scored, key=lambda s: s[0][1])
    return score >= MATCH_WANTED, (
        "%d of ftrace's %d calls appear in order in vtice's %d (%.1f %%, the closest of the kernel's "
        "%d openat calls); not seen: %s" % (sum(matched), len(theirs), len(ours), 100 * score,
                                           len(oracles), ", ".join(missing[:30]) or "none"))
