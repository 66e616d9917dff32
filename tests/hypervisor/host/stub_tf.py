"""Real gdb against the hypervisor stub stepping with RFLAGS.TF (scenario
hvtfstep): the module is loaded with step_tf=1, so every single step, the
debugger's and the one that completes a watched access, takes the fallback
a CPU without MTF takes. Run by stub-tf.sh inside gdb's Python; addresses
come from the guest's kallsyms, expected bytes from its /proc/kcore (the
figures it printed before loading the module). The checks are stub_gdb's
(the MTF scenario's) plus what only TF could get wrong: TF in RFLAGS or
in a pushf image after a step, through the irqsave path that pushes the
flags it is about to change.
"""

import re

import gdb
import stub_gdb as sg
from rig_host import check, figures


def check_stepper_is_tf():
    out = sg.run("monitor hooks")
    m = re.search(r"step: (\w+), (\d+) TF steps, (\d+) guest events delivered inside one \((\d+)", out)
    check("tf-mode", bool(m) and m.group(1) == "TF", "monitor hooks: %s" % (m.group(0) if m else out.strip()))
    return m


def check_irqsave(fig):
    """_raw_spin_lock_irqsave saves RFLAGS with pushf before its cli."""
    addr = int(fig["hv.tf-irqsave.addr"], 16)
    sg.run("delete")
    sg.run("break *0x%x" % addr)
    sg.run("continue")
    check("tf-irqsave-break", sg.pc() == addr, "stopped at 0x%x (_raw_spin_lock_irqsave 0x%x)" % (sg.pc(), addr))
    sg.run("delete")
    sg.check_steps(16, "tf-steps-irqsave", need_pushf=True)


def check_other_cpu_steps():
    """The CPU that did not take the last stop, wherever the stop caught it
    (idle, or in the kernel): five raw steps on it alone (vCont;s:N, the
    other stays parked) must each come back with a stop reply. Which
    instruction it starts on is printed, not chosen: a HLT here is rare
    (the rig idles with MWAIT), and the HLT case is covered by the unit
    tests (TfStep.Hlt*)."""
    me = packet_thread()
    other = "1" if me == "2" else "2"
    replies, rips = [], []
    for _ in range(5):
        replies.append(sg.packet("vCont;s:" + other))
        sg.packet("Hg" + other)
        rips.append(sg.raw_registers()[0])
    sg.packet("Hg" + me)
    first = gdb.selected_frame().architecture().disassemble(rips[0], count=1)[0]["asm"]
    check("tf-other-cpu-steps", all(r.startswith("T05") for r in replies),
          "thread %s: %s; rips %s (the first stop's instruction: %s)" %
          (other, " ".join(r[:3] for r in replies), " ".join("0x%x" % r for r in rips), first))


def packet_thread():
    return sg.packet("qC")[2:] or "1"


def exit_count(text, name):
    return sum(int(n) for n in re.findall(r", %s (\d+)" % re.escape(name), text))


def check_counts():
    """The stub's own counters: TF steps, and the interrupts a step held
    off (an "interrupt" exit each) and delivered after it (through
    "interrupt-window" exits). The guest's timer fires while the machine
    is stopped between steps, so the held path runs."""
    m = check_stepper_is_tf()
    if m:
        check("tf-counts", int(m.group(2)) >= 1000,
              "%s TF steps; %s guest events delivered inside one, %s with TF in the frame" %
              (m.group(2), m.group(3), m.group(4)))
    exits = sg.run("monitor exits")
    held, windows = exit_count(exits, "interrupt"), exit_count(exits, "interrupt-window")
    check("tf-held-interrupts", held > 0 and windows > 0,
          "%d interrupts held off during steps, %d interrupt-window exits delivering them" % (held, windows))


def main():
    fig = figures()
    steps = [
        sg.connect,
        check_stepper_is_tf,
        lambda: sg.check_breakpoint(fig),
        sg.check_next_over_call,
        lambda: sg.check_steps(1000, "tf-steps"),
        lambda: check_irqsave(fig),
        lambda: sg.check_watch(fig),
        lambda: sg.check_jiffies_watch("tf-rwatch", gdb.WP_READ)(fig),
        check_other_cpu_steps,
        check_counts,
    ]
    sg.run_checks(steps)
    sg.run_checks((lambda: (sg.run("detach"), sg.finish(fig, "tf-finish")),), "tf-detach")
    sg.quit_with_failures("stub_tf")


main()
