#!/usr/bin/env python3
"""Integration test: a recorded openat replayed, checked against QEMU itself
and driven by stock gdb with reverse execution.

Run under tests/qemu/run.sh exec. vtice records one openat of vtice-work
(`trace syscall openat --comm vtice-work --record`) through a logging relay,
so the test holds every answer QEMU gave on the wire. Then:
  1. replay against live: stock gdb on `vtice serve-replay` moves with stepi
     and reverse-stepi to 200 seeded random steps (100 forwards, 100
     backwards) and reads the general registers and, at each, the memory
     vtice read from QEMU while stopped there; every value must equal what
     QEMU's own 'g' and 'm' replies held at that step;
  2. reverse in stock gdb, with the kernel's -dbg vmlinux: reverse-finish out
     of getname lands on the call in do_sys_openat2; a watchpoint on the
     bytes of the struct filename's name, reverse-continue, stops at the write
     in strncpy_from_user; reverse-stepi at step 0 says "No more
     reverse-execution history";
  3. vtice attach on serve-replay: its ORC backtrace reaches do_sys_openat2,
     its reverse-finish lands on the call of getname, its reverse-continue
     stops at the start of the recording;
  4. vtice replay --symbols: bt in strncpy_from_user unwinds with ORC to the
     same return addresses as gdb's DWARF unwinding at that step, and past
     the recording's start;
  5. vtice replay --tui in tmux: F8, Shift-F8 and Shift-F5 move the status
     bar's rip to QEMU's rip at each step; the trace pane's "=>" row follows
     the replay into getname and (Shift-F12) back out to do_sys_openat2.
Exit 77 (skip) when gdb or the -dbg vmlinux is missing.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

from replay_oracle import Mismatch, check_against_live, decode_g, run_gdb, start_server, truth_from_wire
from rig import fail, qemu_port
from rsp_relay import Relay

GDB_REVERSE = r'''
import gdb
def say(*a):
    print("REV " + " ".join(str(x) for x in a))
def fn():
    f = gdb.selected_frame()
    return f.name() or "?"
# getname's own entry (not its 44 inlined copies); one step in, past the
# ftrace nop, so the frame is getname itself.
gdb.execute("break *getname")
gdb.execute("continue", to_string=True)
say("at", fn())
gdb.execute("delete")   # else reverse-finish stops at this breakpoint, one step short of the caller
gdb.execute("stepi", to_string=True)
gdb.execute("reverse-finish", to_string=True)
say("reverse-finish", fn(), gdb.execute("x/i $pc", to_string=True).strip().replace("\n", " "))
gdb.execute("nexti", to_string=True)
say("after-call", fn(), hex(int(gdb.parse_and_eval("$rax")) & (2**64 - 1)))
name = int(gdb.parse_and_eval("((struct filename *)$rax)->name")) & (2**64 - 1)
say("name", hex(name), gdb.parse_and_eval("((struct filename *)$rax)->name").format_string())
gdb.execute("watch -l *(long *)%d" % name)
out = gdb.execute("reverse-continue", to_string=True)
say("watch-stop", fn(), gdb.execute("info symbol $pc", to_string=True).strip(), "|",
    gdb.execute("x/i $pc", to_string=True).strip())
say("position", gdb.execute("monitor position", to_string=True).strip())
gdb.execute("delete")
gdb.execute("monitor goto 0", to_string=True)
gdb.execute("maintenance flush register-cache", to_string=True)
say("begin", gdb.execute("monitor position", to_string=True).strip())
gdb.execute("reverse-stepi")
say("after-begin", gdb.execute("monitor position", to_string=True).strip())
'''


def check_reverse(port, work, vmlinux):
    script = os.path.join(work, "reverse.py")
    with open(script, "w") as f:
        f.write(GDB_REVERSE)
    g = run_gdb(port, script, [vmlinux], timeout=600)
    rev = {}
    for line in g.stdout.splitlines():
        if line.startswith("REV "):
            key, _, rest = line[4:].partition(" ")
            rev[key] = rest
    out = g.stdout + g.stderr
    if not rev.get("at", "").startswith("getname"):
        fail("continue to the breakpoint on getname did not stop there", out)
    rf = rev.get("reverse-finish", "")
    if not rf.startswith("do_sys_openat2") or "call" not in rf or "<getname>" not in rf:
        fail("reverse-finish out of getname did not land on the call in do_sys_openat2: " + rf, out)
    ws = rev.get("watch-stop", "")
    # gdb reports the watchpoint itself (Old value / New value) outside to_string.
    between = g.stdout[g.stdout.find("REV name"):g.stdout.find("REV watch-stop")]
    if "strncpy_from_user" not in ws or "Old value" not in between or ",(%" not in ws.split("|")[-1]:
        fail("reverse-continue to the watchpoint on the filename's bytes did not stop at the write in "
             "strncpy_from_user: " + ws, out)
    # gdb prints the stop itself (not into to_string); it comes after "begin".
    tail = g.stdout[g.stdout.find("REV begin"):]
    begin = rev.get("begin", "")
    if "No more reverse-execution history" not in tail or not begin.startswith("step 0 of ") or \
            rev.get("after-begin") != begin:
        fail("reverse-stepi at step 0 did not report the start of the history", out)
    return rf, ws, rev.get("position", ""), rev.get("name", "")


GDB_FRAMES = r'''
import gdb
def say(*a):
    print("FRAMES " + " ".join(str(x) for x in a))
gdb.execute("monitor goto 0")
gdb.execute("flushregs")
gdb.execute("break *strncpy_from_user")
gdb.execute("continue", to_string=True)
say("position", gdb.execute("monitor position", to_string=True).split()[1])
# DWARF's frames (CFI, not ORC). Not on the stack, so left out: inlined
# frames (they share their caller's pc) and the tail-call frames gdb makes
# up from DWARF call sites (getname jumps to getname_flags.part.0; gdb then
# shows a "caller" at the address after that jmp).
f = gdb.newest_frame()
while f is not None:
    if f.type() not in (gdb.INLINE_FRAME, gdb.TAILCALL_FRAME):
        say("pc", hex(f.pc()))
    try:
        f = f.older()
    except gdb.error:
        break
'''


def check_replay_orc_bt(binary, trace, port, work, vmlinux):
    """vtice replay --symbols: its ORC backtrace in strncpy_from_user lists the
    same return addresses, frame by frame, as stock gdb's DWARF unwinding over
    serve-replay at the same step, and goes on past the recording's start."""
    script = os.path.join(work, "frames.py")
    with open(script, "w") as f:
        f.write(GDB_FRAMES)
    g = run_gdb(port, script, [vmlinux], timeout=600)
    said = [line.split()[1:] for line in g.stdout.splitlines() if line.startswith("FRAMES ")]
    position = [w[1] for w in said if w[0] == "position"]
    gdb_pcs = [int(w[1], 16) for w in said if w[0] == "pc"]
    if not position or len(gdb_pcs) < 4:
        fail("gdb found no strncpy_from_user frames over the replay", g.stdout, g.stderr)
    run = subprocess.run([binary, "replay", trace, "--symbols", vmlinux, "--batch", "-"],
                         input="goto %s\nbt\n" % position[0], capture_output=True, text=True, timeout=300)
    if run.returncode != 0:
        fail("vtice replay --symbols exited with %d" % run.returncode, run.stdout, run.stderr)
    frames = re.findall(r"^#\d+\s+0x([0-9a-f]+) in (\S+)(.*)$", run.stdout, re.M)
    orc_pcs = [int(pc, 16) for pc, _, _ in frames]
    common = min(len(orc_pcs), len(gdb_pcs))
    if common < 4 or orc_pcs[:common] != gdb_pcs[:common]:
        fail("vtice replay's ORC frames differ from gdb's: %s vs %s" %
             ([hex(p) for p in orc_pcs], [hex(p) for p in gdb_pcs]), run.stdout)
    before = [name for _, name, note in frames if "called before the recording" in note]
    if not before:
        fail("vtice replay's ORC bt stops inside the recording", run.stdout)
    return len(orc_pcs), common, before[0]


def check_replay_tui(binary, trace, vmlinux, truth_regs, work, gdb_caller):
    """vtice replay --tui in a real terminal (tmux): F8 three times, Shift-F8,
    Shift-F5; the status bar's rip after each must be QEMU's rip at that
    step (the wire's), back to step 0 at the end. Returns what it checked."""
    if not shutil.which("tmux"):
        return "skipped (no tmux)"
    sock = "vtice-replay-%d" % os.getpid()
    tmux = ["tmux", "-L", sock]
    exit_file = os.path.join(work, "tui-exit")
    subprocess.run(tmux + ["-f", "/dev/null", "new-session", "-d", "-s", "r", "-x", "200", "-y", "40", "-e",
                           "TERM=tmux-256color", "%s replay %s --tui --symbols %s; echo $? > %s; sleep 30" %
                           (binary, trace, vmlinux, exit_file)], check=True)

    def status_rip(after, seconds=30):
        deadline = time.time() + seconds
        while time.time() < deadline:
            screen = subprocess.run(tmux + ["capture-pane", "-p", "-t", "r"], capture_output=True,
                                    text=True).stdout
            m = re.search(r"\[stopped: [^\]]*?(0x[0-9a-f]+)", screen)
            if m and int(m.group(1), 16) != after:
                return int(m.group(1), 16), screen
            time.sleep(0.1)
        return after, screen

    try:
        rip, screen = status_rip(-1)
        if "Shift: back" not in screen:
            fail("vtice replay --tui's status bar does not name the Shift keys", screen)
        # On a loaded machine QEMU answers a step now and then without running
        # anything (Session::raw_step's note); the recorder keeps such a step,
        # whose 'g' reply equals the one before it, and the TUI's F8 goes on
        # over it as attach's stepi does. The states a key can land on:
        moved = [k for k in range(len(truth_regs)) if k == 0 or truth_regs[k] != truth_regs[k - 1]]
        want = [(moved[i], decode_g(truth_regs[moved[i]])["rip"]) for i in (0, 1, 2, 3, 2, 0)]
        keys = [None, "F8", "F8", "F8", "S-F8", "S-F5"]
        for (k, live), key in zip(want, keys):
            if key:
                subprocess.run(tmux + ["send-keys", "-t", "r", key], check=True)
                rip, screen = status_rip(rip)
            if rip != live:
                fail("vtice replay --tui after %s shows rip %#x, QEMU had %#x at step %d" % (key, rip, live, k),
                     screen)
        follows = check_tui_trace_pane(tmux, status_rip, rip, gdb_caller)
        subprocess.run(tmux + ["send-keys", "-t", "r", "-l", "quit"], check=True)
        subprocess.run(tmux + ["send-keys", "-t", "r", "Enter"], check=True)
        for _ in range(100):
            if os.path.exists(exit_file):
                break
            time.sleep(0.1)
        with open(exit_file) as f:
            code = f.read().strip()
        if code != "0":
            fail("vtice replay --tui exited with %s" % code)
    finally:
        subprocess.run(tmux + ["kill-server"], capture_output=True)
    return "steps 0-1-2-3-2-0 equal QEMU's rip; " + follows


def check_tui_trace_pane(tmux, status_rip, rip, gdb_caller):
    """The trace pane of vtice replay --tui follows the replay: after a run
    to the breakpoint on getname its "=>" row is getname's call, and after
    Shift-F12 (back to the call) the caller's, the function stock gdb's
    reverse-finish landed in (step 2)."""
    def command(line):
        subprocess.run(tmux + ["send-keys", "-t", "r", "-l", line], check=True)
        subprocess.run(tmux + ["send-keys", "-t", "r", "Enter"], check=True)
        time.sleep(1)

    def followed(screen):
        m = re.search(r"=>\s+\d+ insn \|\s+(\S+)\(\)", screen)
        return m.group(1) if m else None

    command("break *getname")
    subprocess.run(tmux + ["send-keys", "-t", "r", "F5"], check=True)
    rip, screen = status_rip(rip)
    if followed(screen) != "getname":
        fail("vtice replay --tui's trace pane is not on getname at its breakpoint: %s" % followed(screen), screen)
    command("delete")
    subprocess.run(tmux + ["send-keys", "-t", "r", "S-F12"], check=True)
    rip, screen = status_rip(rip)
    if followed(screen) != gdb_caller:
        fail("vtice replay --tui's trace pane after Shift-F12 out of getname is on %s, gdb's reverse-finish "
             "landed in %s" % (followed(screen), gdb_caller), screen)
    return "the trace pane on getname, then (Shift-F12) on %s as gdb's reverse-finish" % gdb_caller


def check_attach_reverse(binary, port, vmlinux):
    """vtice attach itself on serve-replay: its reverse commands and ORC backtrace."""
    cmds = ["break *getname", "continue", "delete", "stepi 2", "bt 3", "reverse-finish", "nexti", "reverse-nexti",
            "reverse-continue", "disconnect"]
    run = subprocess.run([binary, "attach", "127.0.0.1:%d" % port, "--batch", "-", "--symbols", vmlinux,
                          "--no-cache"], input="\n".join(cmds) + "\n", capture_output=True, text=True, timeout=300)
    out = run.stdout
    if run.returncode != 0:
        fail("vtice attach on serve-replay exited with %d" % run.returncode, out, run.stderr)
    if not re.search(r"#1\s+0x[0-9a-f]+ in do_sys_openat2\+", out):
        fail("attach's ORC backtrace over the replay does not reach do_sys_openat2", out)
    back = out[out.find("Run back to the call"):]
    if not re.search(r"=> 0x[0-9a-f]+ <do_sys_openat2\+0x[0-9a-f]+>:\s+call getname", back):
        fail("attach's reverse-finish did not land on the call of getname", out)
    # nexti over the call, then reverse-nexti back onto it in one move
    # (getname ends in a jump to getname_flags.part.0: a tail call to undo too).
    over = re.search(r"call getname\n=> (0x[0-9a-f]+) <do_sys_openat2\+0x[0-9a-f]+>:[^\n]*\n"
                     r"=> (0x[0-9a-f]+) <do_sys_openat2\+0x[0-9a-f]+>:\s+call getname", back)
    if not over:
        fail("attach's nexti then reverse-nexti did not go over getname and back onto its call", out)
    if "No more reverse-execution history (the recording's begin)" not in out:
        fail("attach's reverse-continue did not stop at the start of the recording", out)


def main():
    binary = sys.argv[1]
    port = qemu_port()
    if not shutil.which("gdb"):
        print("SKIP: gdb (the client and peer) is not installed")
        return 77
    vmlinux = os.path.join(os.path.dirname(os.environ["VTICE_QEMU_VMLINUX"]), "vmlinux-dbg")
    if not os.path.isfile(vmlinux):
        print("SKIP: no %s (make kernel-debug fetches it: tools/kernel.sh --debug)" % vmlinux)
        return 77
    work = tempfile.mkdtemp(prefix="vtice-replay-")
    trace = os.path.join(work, "openat.vtrace")

    relay = Relay(port)
    run = subprocess.run([binary, "attach", "127.0.0.1:%d" % relay.port, "--batch", "-", "--timeout", "300",
                          "--no-cache"],
                         input="trace syscall openat --comm vtice-work --record -o %s --quiet\ndisconnect\n" % trace,
                         capture_output=True, text=True, timeout=600)
    if run.returncode != 0:
        fail("vtice attach --record exited with %d" % run.returncode, run.stdout, run.stderr)
    rec = re.search(r"record: (\d+) steps, (\d+) bytes of registers and memory \(([0-9.]+) bytes per step\)",
                    run.stdout)
    if not rec:
        fail("no record summary", run.stdout)
    time.sleep(0.5)
    try:
        truth_regs, truth_mem = truth_from_wire(relay.packets())
    except Mismatch as e:
        fail(str(e))
    steps = int(rec.group(1))
    if len(truth_regs) - 1 != steps:
        fail("the recording has %d steps, the relay saw %d single-steps" % (steps, len(truth_regs) - 1))
    if any(g is None for g in truth_regs):
        fail("a step without a register read on the wire")

    try:
        server, sport = start_server(binary, trace)
    except Mismatch as e:
        fail(str(e))
    try:
        try:
            visited, mem_checked, seconds = check_against_live(sport, work, truth_regs, truth_mem)
        except Mismatch as e:
            fail(str(e))
        rf, ws, position, name = check_reverse(sport, work, vmlinux)
        check_attach_reverse(binary, sport, vmlinux)
        orc_frames, same_as_gdb, first_before = check_replay_orc_bt(binary, trace, sport, work, vmlinux)
        tui = check_replay_tui(binary, trace, vmlinux, truth_regs, work, rf.split()[0])
    finally:
        server.kill()
        server.wait()
    print("PASS: openat recorded in %d steps, %s bytes per step; %d points replayed through stock gdb "
          "(stepi/reverse-stepi) equal QEMU's own registers, %d memory reads equal QEMU's, %.1f s; "
          "reverse-finish -> %s; watch on the name %s -> %s (%s); vtice attach's own reverse-finish, "
          "reverse-continue and ORC bt over the replay; vtice replay --symbols: %d ORC frames in "
          "strncpy_from_user, the %d gdb also unwinds at the same return addresses, from %s on before the "
          "recording; vtice replay --tui (F8 x3, Shift-F8, Shift-F5): %s" % (
              steps, rec.group(3), visited, mem_checked, seconds, rf, name, ws.split("|")[0].strip(), position,
              orc_frames, same_as_gdb, first_before, tui))
    return 0


if __name__ == "__main__":
    sys.exit(main())
