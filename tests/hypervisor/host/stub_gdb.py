"""Real gdb against vtice's hypervisor stub in the Bochs guest (scenario hvstub).

Run by stub-gdb.sh as `gdb -batch -x stub_gdb.py` when the guest prints
"VTICE-HOST hvstub START". Environment (tests/bochs/lib/host.sh):
VTICE_COM2 (host:port of the stub's line), VTICE_SERIAL_LOG (the guest
console, where the guest printed its own view of memory before loading the
module). gdb has no symbols: every address comes from the guest's kallsyms,
every expected byte from the guest's /proc/kcore. Each check prints
"CHECK name PASS|FAIL details" and the exit status is the number of failures.
"""

import os
import re
import socket
import time

import gdb
from rig_host import (FAILURES, GUEST_QUIET_S, Rsp, check, figures, find_one, guest_vmlinux, monitor,
                      serial_size, stop_thread, wait_for_guest_line, where_the_machine_stands)

def run(cmd):
    return gdb.execute(cmd, to_string=True)


def pc():
    return int(gdb.parse_and_eval("$pc")) & (2**64 - 1)


def read(addr, n):
    return bytes(gdb.selected_inferior().read_memory(addr, n))


def is_branch(asm):
    """Instructions after which the next RIP may be other than the next one."""
    mnem = asm.split()[0] if asm.split() else ""
    while mnem in ("rep", "repz", "repnz", "repe", "repne", "lock", "notrack", "bnd", "cs", "ds"):
        asm = asm.split(None, 1)[1] if len(asm.split()) > 1 else ""
        mnem = asm.split()[0] if asm.split() else ""
    return mnem.startswith(("j", "call", "ret", "iret", "sysret", "loop", "syscall",
                            "int", "ud", "hlt"))


def connect():
    run("set pagination off")
    run("set confirm off")
    run("set architecture i386:x86-64")
    run("set remotetimeout 60")
    start = time.time()
    run("target remote %s" % os.environ["VTICE_COM2"])
    check("connect", True, "target remote in %.1f s wall" % (time.time() - start))


def check_registers():
    """The first stop lands wherever a CPU was, kernel or user (the guest's
    watcher runs in user space): rip must be canonical and cs the kernel's
    (0x10) or user's (0x33) code segment to match its half."""
    out = run("info registers rip rsp cs cr3")
    rip = pc()
    cs = int(gdb.parse_and_eval("$cs")) & 0xFFFF
    kernel = rip >= 0xFFFF800000000000
    check("registers", (kernel and cs == 0x10) or (rip < 0x800000000000 and cs == 0x33),
          "rip 0x%x, cs 0x%x (%s half)" % (rip, cs, "kernel" if kernel else "user"))
    print(out, flush=True)


def check_memory(fig):
    addr = int(fig["hv.stub-text.addr"], 16)
    want = bytes.fromhex(fig["hv.stub-text.bytes"])
    got = read(addr, len(want))
    check("memory", got == want,
          "x/16xb do_sys_openat2: %s, the guest's /proc/kcore said %s" % (got.hex(), want.hex()))
    try:
        read(0xFFFFFFFFFFFF0000, 8)
        check("memory-unmapped", False, "read of an unmapped address succeeded")
    except gdb.MemoryError:
        check("memory-unmapped", True, "unmapped address refused")


def check_threads():
    threads = gdb.selected_inferior().threads()
    check("threads", len(threads) == 2, "%d threads (one per CPU)" % len(threads))
    print(run("info threads"), flush=True)


def check_frozen(fig):
    jiffies = int(fig["hv.stub-jiffies.addr"], 16)
    before = read(jiffies, 8)
    time.sleep(2)
    after = read(jiffies, 8)
    check("frozen", before == after, "jiffies %s then %s 2 s later" % (before.hex(), after.hex()))


def check_breakpoint(fig):
    addr = int(fig["hv.stub-text.addr"], 16)
    run("break *0x%x" % addr)
    start = time.time()
    run("continue")
    hit = pc()
    check("breakpoint", hit == addr,
          "stopped at 0x%x (do_sys_openat2 0x%x) %.1f s wall after continue" %
          (hit, addr, time.time() - start))
    run("delete")


def check_next_over_call():
    """From the breakpoint in do_sys_openat2, stepi to the first call, then
    nexti over it: gdb steps into the call, plants a breakpoint at the
    return address and continues, so the whole callee runs on the stub's Z0
    and continue. It must come back right after the call, same stack."""
    arch = gdb.selected_frame().architecture()
    for _ in range(60):
        here = pc()
        insn = arch.disassemble(here, count=1)[0]
        if insn["asm"].split()[0].startswith("call"):
            sp = int(gdb.parse_and_eval("$sp")) & (2**64 - 1)
            start = time.time()
            run("nexti")
            back, sp_after = pc(), int(gdb.parse_and_eval("$sp")) & (2**64 - 1)
            check("next-call", back == here + insn["length"] and sp_after == sp,
                  "nexti over '%s' at 0x%x: back at 0x%x (want 0x%x), rsp 0x%x -> 0x%x, %.1f s wall" %
                  (insn["asm"], here, back, here + insn["length"], sp, sp_after, time.time() - start))
            return
        run("stepi")
    check("next-call", False, "no call within 60 instructions of the breakpoint")


def packet(text):
    """One raw packet through gdb's connection (maint packet): the reply."""
    out = run("maint packet " + text)
    m = re.search(r'received: "(.*)"\s*$', out, re.S)
    return m.group(1) if m else ""


def raw_registers():
    """rip, rsp and eflags of the selected CPU from a raw 'g' (x86-64 core
    order: 16 GPRs, rip, then the 4-byte eflags)."""
    g = bytes.fromhex(packet("g")[:(17 * 8 + 4) * 2].replace("x", "0"))
    return (int.from_bytes(g[16 * 8:17 * 8], "little"), int.from_bytes(g[7 * 8:8 * 8], "little"),
            int.from_bytes(g[17 * 8:17 * 8 + 4], "little"))


TF = 1 << 8


DIRECT = re.compile(r"^(?:(?:bnd|notrack)\s+)?(j\w+|call)\s+(0x[0-9a-f]+)")


def expected_next(insn, here, rsp):
    """The RIPs allowed after insn at here: a set, or None where only the
    CPU's state decides (indirect jumps and calls, iret, syscall...)."""
    asm = insn["asm"].strip()
    fall = here + insn["length"]
    direct = DIRECT.match(asm)
    if direct:
        target = int(direct.group(2), 16)
        unconditional = direct.group(1) in ("jmp", "call")
        return {target} if unconditional else {target, fall}
    if re.match(r"^(?:rep\w*\s+)?retq?$", asm):
        # gdb's stack cache did not see the raw steps: read through the stub.
        return {int.from_bytes(bytes.fromhex(packet("m%x,8" % rsp)), "little")}
    if is_branch(asm):
        return None
    return {fall, here}  # here: a rep string instruction's next iteration


def pushed_flags_ok(insn, flags_before, rsp_after):
    """After a pushf the image on the stack is RFLAGS as they were before
    it (SDM Vol. 2B PUSHF; RF and VM read as 0): never the stepper's TF."""
    if not re.match(r"^pushf[qwl]?$", insn["asm"].strip()):
        return None
    image = int.from_bytes(bytes.fromhex(packet("m%x,8" % rsp_after)), "little")
    return (image & 0xFFFFFFFF) == (flags_before & ~(1 << 16))


def check_steps(count, name="steps", need_pushf=False):
    """count single steps by raw vCont;s (two packets each rather than gdb's
    ten): every new RIP must be the fall-through, the decoded target of a
    direct branch, or the return address of a ret, as gdb's disassembler
    decodes the instruction. Indirect transfers are counted, not judged.
    The guest's kernel never sets TF itself, so no step may leave it in
    RFLAGS or in the image a pushf stored."""
    thread = packet("qC")[2:] or "1"
    bad, indirect, tf_seen, pushfs, pushf_bad = 0, 0, 0, 0, 0
    start = time.time()
    here, rsp, flags = raw_registers()
    for i in range(count):
        insn = gdb.selected_frame().architecture().disassemble(here, count=1)[0]
        allowed = expected_next(insn, here, rsp)
        stop = packet("vCont;s:" + thread)
        there, rsp, flags_after = raw_registers()
        if not stop.startswith("T05"):
            bad += 1
            print("step %d: stop reply %s" % (i, stop), flush=True)
        if allowed is None:
            indirect += 1
        elif there not in allowed:
            bad += 1
            if bad <= 5:
                print("step %d: 0x%x %s -> 0x%x, allowed %s" %
                      (i, here, insn["asm"], there, " ".join("0x%x" % a for a in sorted(allowed))), flush=True)
        tf_seen += bool(flags_after & TF)
        pushed = pushed_flags_ok(insn, flags, rsp)
        if pushed is not None:
            pushfs += 1
            pushf_bad += not pushed
        here, flags = there, flags_after
    secs = time.time() - start
    run("maint flush register-cache")
    check(name, bad == 0 and pc() == here,
          "%d steps: %d RIPs not the fall-through or decoded target, %d indirect transfers not judged; "
          "%.1f steps/s wall" % (count, bad, indirect, count / secs))
    check(name + "-tf-hidden", tf_seen == 0 and pushf_bad == 0 and (pushfs or not need_pushf),
          "RFLAGS.TF after a step: %d times; pushf images unlike RFLAGS before them: %d of %d" %
          (tf_seen, pushf_bad, pushfs))
    print("VTICE-FIGURE hv.%s-per-s-wall=%.1f" % (name, count / secs), flush=True)


def check_watch(fig):
    """A write watchpoint on the kernel's domain name, which the guest's
    loop rewrites through /proc/sys/kernel/domainname (a write syscall).
    gdb must report the stop as that watchpoint's, and the bytes changed."""
    domain = int(fig["hv.stub-uts.addr"], 16) + 5 * 65  # new_utsname.domainname
    stops = []
    handler = stops.append
    gdb.events.stop.connect(handler)
    try:
        run("delete")
        before = read(domain, 8)
        wp = gdb.Breakpoint("*(char (*)[8])0x%x" % domain, gdb.BP_WATCHPOINT, gdb.WP_WRITE)
        start = time.time()
        run("continue")
        after = read(domain, 8)
    finally:
        gdb.events.stop.disconnect(handler)
    ours = [e for e in stops if isinstance(e, gdb.BreakpointEvent) and wp in e.breakpoints]
    hit = pc()
    check("watch", bool(ours) and before != after and hit >= 0xFFFF800000000000,
          "write watch on domainname: stop at 0x%x %.1f s wall after continue, reported as "
          "the watchpoint: %s, bytes %s -> %s" %
          (hit, time.time() - start, bool(ours), before.hex(), after.hex()))
    run("delete")


def stop_by(bp, command="continue"):
    """Runs command; true if gdb's stop event names breakpoint bp."""
    stops = []
    gdb.events.stop.connect(stops.append)
    try:
        run(command)
    finally:
        gdb.events.stop.disconnect(stops.append)
    return any(isinstance(e, gdb.BreakpointEvent) and bp in e.breakpoints for e in stops)


def check_hw_break(fig):
    """Z1: a debug-register breakpoint, virtualized by the hypervisor."""
    addr = int(fig["hv.stub-text.addr"], 16)
    run("delete")
    bp = gdb.Breakpoint("*0x%x" % addr, gdb.BP_HARDWARE_BREAKPOINT)
    ok = stop_by(bp)
    check("hbreak", ok and pc() == addr, "hbreak *do_sys_openat2 stopped there: %s at 0x%x" % (ok, pc()))
    run("delete")


def check_jiffies_watch(name, kind):
    """Z3 (read) or Z4 (access) on jiffies, which the kernel reads all the
    time and the timer writes."""
    def step(fig):
        jiffies = int(fig["hv.stub-jiffies.addr"], 16)
        run("delete")
        wp = gdb.Breakpoint("*(long *)0x%x" % jiffies, gdb.BP_WATCHPOINT, kind)
        ok = stop_by(wp)
        check(name, ok, "a %s on jiffies stopped the machine as that watchpoint: %s" % (name, ok))
        run("delete")
    return step


def check_many_watches(fig):
    """100 write watchpoints at once: 99 on bytes of the kernel's release and
    version strings (read by every uname, never written) and one on the
    domain name, which the guest writes: the stop must be that one's, and
    the reads of the other bytes of the page complete silently."""
    uts = int(fig["hv.stub-uts.addr"], 16)
    run("delete")
    quiet = [gdb.Breakpoint("*(char *)0x%x" % (uts + 2 * 65 + i), gdb.BP_WATCHPOINT, gdb.WP_WRITE)
             for i in range(99)]
    loud = gdb.Breakpoint("*(char (*)[8])0x%x" % (uts + 5 * 65), gdb.BP_WATCHPOINT, gdb.WP_WRITE)
    ok = stop_by(loud)
    quiet_hits = sum(1 for w in quiet if w.hit_count)
    check("watch-100", ok and quiet_hits == 0,
          "100 watchpoints: the domain name's stopped the machine (%s), the 99 on untouched bytes "
          "of the same page never did (%d hits)" % (ok, quiet_hits))
    run("delete")


BREAK_INS = 5
BREAK_IN_LIMIT_US = 100000  # issue 7: a 0x03 is noticed within 100 ms of guest time


def check_break_in(rsp):
    """0x03 while the guest runs stops it, BREAK_INS times; the stub's own
    TSC bound on each latency (monitor breakin) is in guest time."""
    walls = []
    for i in range(BREAK_INS):
        if i:
            rsp.packet("c")
            time.sleep(0.7)
        start = time.time()
        rsp.send(b"\x03")
        stop = rsp.reply()
        walls.append(time.time() - start)
        if stop[:1] not in ("T", "S"):
            check("break-in", False, "0x03 on the line stopped the running machine: %s" % stop[:12])
            return
    check("break-in", True, "0x03 on the line stopped the running machine %d times, %.2f s wall at most" %
          (BREAK_INS, max(walls)))
    text = monitor(rsp, "breakin")
    m = re.search(r"break-in: (\d+) measured, last <= (\d+) us, max <= (\d+) us", text)
    ok = m is not None and int(m.group(1)) >= BREAK_INS - 1 and int(m.group(3)) <= BREAK_IN_LIMIT_US
    check("break-in-latency", ok, "guest time from the last empty poll to the stop reply: %s (limit %d us)" %
          (text.strip(), BREAK_IN_LIMIT_US))
    if m:
        print("VTICE-FIGURE hv.breakin-max-us=%s" % m.group(3), flush=True)


def check_hidden_while_running(rsp, fig):
    """A hidden breakpoint stays inserted while the guest runs: the guest's
    watcher keeps reading do_sys_openat2 through /proc/kcore meanwhile and
    must see the original bytes; the next openat hits it."""
    addr = int(fig["hv.stub-text.addr"], 16)
    rsp.packet("Z0,%x,1" % addr)
    check("raw-z0", rsp.reply() == "OK", "Z0 on do_sys_openat2 while stopped")
    start = time.time()
    rsp.packet("c")
    stop = rsp.reply()
    check("raw-hit", stop.startswith("T05") and "swbreak" in stop,
          "the guest ran %.1f s wall with the breakpoint in place, then hit it: %s" %
          (time.time() - start, stop))
    rsp.packet("z0,%x,1" % addr)
    check("raw-z0-removed", rsp.reply() == "OK", "")


def cold_functions(fig, count, max_pages):
    """Starts of functions an idle kernel and a getpid loop never run
    (kexec, crash dumps, sysrq, hibernation, kgdb), as the guest's
    /proc/kallsyms listed them. At most max_pages distinct pages: each page
    with breakpoints takes one of the stub's shadow pages."""
    starts = sorted(int(a, 16) for a in fig.get("hv.stub-cold.addrs", "").split(",") if a)
    picked, pages = [], set()
    for a in starts:
        if len(picked) == count:
            break
        if a >> 12 not in pages and len(pages) == max_pages:
            continue
        pages.add(a >> 12)
        picked.append(a)
    return picked


# The host's requests go into the guest's hostname (stub_bench_if_asked),
# which nothing else in the guest writes. A request the guest has not taken
# ("VTICE-TOOK request" on its console) after this long is looked at.
HANDOFF_S = 20
NODENAME = 65  # new_utsname.nodename: the hostname, the second of init_uts_ns's 65-byte fields


def write_request(rsp, uts, request):
    """The request and its NUL written with M into the guest's hostname."""
    rsp.packet("M%x,%x:%s" % (uts + NODENAME, len(request) + 1, (request + b"\0").hex()))
    return rsp.reply()
NOT_TAKEN = "not taken yet"


def guest_said(line):
    """The guest printed this whole line on its console."""
    with open(os.environ["VTICE_SERIAL_LOG"], errors="replace") as log:
        return any(l.strip() == line for l in log)


def wait_for_figure(rsp, key, taken=None, timeout=600):
    """While the guest works, watch for its figure and for any stop the
    stub reports (a hook hit by the workload). True if the figure came with
    the machine still running. With taken (a console line), a guest that
    has not printed it within HANDOFF_S is stopped and (False, NOT_TAKEN)
    returned. A guest that goes quiet is broken into and looked at
    (where_the_machine_stands) before the rig calls it hung."""
    start = time.time()
    size, grew = serial_size(), start
    rsp.sock.settimeout(0.5)
    try:
        while time.time() < start + timeout:
            if key in figures():
                return True, ""
            if taken and time.time() - start >= HANDOFF_S and not guest_said(taken):
                rsp.send(b"\x03")
                return False, NOT_TAKEN if rsp.reply().startswith("T") else "no stop reply"
            if serial_size() != size:
                size, grew = serial_size(), time.time()
            elif time.time() - grew >= GUEST_QUIET_S:
                return False, "the guest printed nothing for %d s: %s" % (
                    GUEST_QUIET_S, where_the_machine_stands(rsp))
            try:
                rsp._more()
            except socket.timeout:
                continue
            if b"$" in rsp.buf:
                stop = rsp.reply()
                return False, "%s (%s)" % (stop, monitor(rsp, "why").strip().replace("\n", "; "))
        return False, "no %s figure in %d s" % (key, timeout)
    finally:
        rsp.sock.settimeout(120)


def run_request(rsp, uts, request, key):
    """Resumes the stopped machine until the guest printed key, handing the
    request over again (said, at most 3 times) when the guest's loop wrote
    over it (HANDOFF_S). Ends with the machine stopped. (ok, why)."""
    for _ in range(4):
        rsp.packet("c")
        ok, why = wait_for_figure(rsp, key, "VTICE-TOOK " + request)
        if ok:
            rsp.send(b"\x03")
            rsp.reply()
        if why != NOT_TAKEN:
            return ok, why
        rsp.packet("m%x,20" % (uts + NODENAME))
        found = bytes.fromhex(rsp.reply()).split(b"\0")[0].decode(errors="replace")
        if found != request:
            print("NOTE the guest's hostname is %r, not the request %s: handed over again" % (found, request),
                  flush=True)
            if write_request(rsp, uts, request.encode()) != "OK":
                return False, "writing the request %s again failed" % request
    return False, "the guest took the request %s in none of 4 tries" % request


def guest_phase(rsp, fig, request, key, hooks):
    """The hooks set (Z packets), the guest asked through its hostname
    (request), the machine resumed until the guest printed the figure key,
    then stopped again and the hooks removed. (ok, why, what monitor hooks
    said while they were set)."""
    for packet in hooks:
        rsp.packet(packet)
        if rsp.reply() != "OK":
            return False, "%s refused" % packet, ""
    planted = monitor(rsp, "hooks").strip().replace("\n", "; ")
    uts = int(fig["hv.stub-uts.addr"], 16)
    wrote = write_request(rsp, uts, request.encode())
    if wrote == "OK":
        ok, why = run_request(rsp, uts, request, key)
    else:
        ok, why = False, "writing the request %s into the hostname: %s" % (request, wrote)
    for packet in hooks:
        rsp.packet("z" + packet[1:])
        rsp.reply()
    return ok, why, planted


def bench_phase(rsp, fig, name, hooks):
    """One benchmark (guest_phase): the guest times a getpid loop."""
    ok, why, planted = guest_phase(rsp, fig, "vtice-bench-" + name, "hv.bench-%s.vm_exits" % name, hooks)
    if not ok:
        check("bench-" + name, False, "the workload stopped the machine or never finished: %s" % why)
        return None
    print("bench %s: %s" % (name, planted), flush=True)
    got = figures()
    return {k: float(got["hv.bench-%s.%s" % (name, k)]) for k in ("vm_exits", "ns_per_call")}


def check_detect_under_debugger(rsp, fig):
    """The transparency detector with the debugger at work (issue 9): a
    hidden breakpoint on the cold function the guest chose, a debug-register
    breakpoint on another (vtice then owns DR0-DR7 and emulates the
    kernel's), a write watchpoint on the kernel's version string, a read
    watchpoint on the page table the prober's straddling reads walk
    through, and a breakpoint on the page of code the prober rewrites and
    runs (its self-modifying code: the new bytes must run), while the guest
    arms a syscall-path trace and reruns the detector and the prober; the
    guest compares them with its bare runs (hv.stub-detect,
    hv.transparency-stub). Here: the phase ran with the five hooks in place
    and nothing stopped the machine."""
    for key in ("hv.detect.bp", "hv.detect.ptwatch", "hv.detect.smcbp"):
        if key not in fig:
            check("detect-phase", False, "the guest printed no %s figure (no bare detector or prober run)" % key)
            return
    hooks = ["Z0,%s,1" % fig["hv.detect.bp"], "Z1,%s,1" % fig["hv.detect.hbp"], "Z2,%s,8" % fig["hv.detect.watch"],
             "Z3,%s,8" % fig["hv.detect.ptwatch"], "Z0,%s,1" % fig["hv.detect.smcbp"]]
    before = hook_traffic(rsp)
    ok, why, planted = guest_phase(rsp, fig, "vtice-detect", "hv.stub-detect.done", hooks)
    check("detect-phase", ok and "2 breakpoints" in planted and "2 watchpoints" in planted and
          "1 debug-register breakpoints" in planted,
          "%s; hooks while the detector ran: %s" % ("ran" if ok else why, planted))
    if ok:
        after = hook_traffic(rsp)
        check_walk_traffic(before, after, figures().get("hv.transparency.stub.walks", ""))
        check_smc_traffic(before, after, figures().get("hv.transparency.stub.smc", ""))


def check_walk_traffic(before, after, walks):
    """The prober's straddling reads through its first alias (the guest's
    figure: walks, in the state "stub") each walk the guest's page table to
    the unmapped page's PTE, on the page the read watchpoint holds in EPT: each is an
    access to a watched page, completed under MTF and never a hit (the
    CPU's walk is not the program's read). So the stub's page-walk steps
    grew by at least that many (the prober's page table is its own: no
    other mapping walks through it), and the hits not at all; the guest's
    comparison with its bare run (hv.transparency-stub) says the #PF each
    raised was the bare CPU's, CR2 and error code."""
    ok = before is not None and after is not None and walks.isdigit() and int(walks) > 0
    grew = {k: after[k] - before[k] for k in before} if ok else {}
    check("detect-walk", ok and grew["watch_walks"] >= int(walks) and grew["watch_hits"] == 0,
          "%s straddling reads walked the watched page table; page walks stepped on watched pages meanwhile: "
          "%s (of %s watched-page steps), hits: %s" %
          (walks or "no figure: ?", grew.get("watch_walks", "?"), grew.get("watch_steps", "?"),
           grew.get("watch_hits", "?")))


def check_smc_traffic(before, after, runs):
    """The prober's self-modifying code (its figure: how many of its
    observations, in the state "stub") writes each time into the page that
    holds the breakpoint: a write to a split page, stepped on the original
    and copied into the page the CPU runs. So the stub's count of text
    writes grew by at least that many, and the guest's comparison with its
    bare run (hv.transparency-stub) says each ran the bytes just written."""
    ok = before is not None and after is not None and runs.isdigit() and int(runs) > 0
    grew = after["text_writes"] - before["text_writes"] if ok else "?"
    check("detect-smc", ok and grew >= int(runs),
          "%s writes to the code page with the breakpoint, then calls; text writes stepped meanwhile: %s" %
          (runs or "no figure: ?", grew))


def hook_traffic(rsp):
    """monitor hooks' counts since load: {'watch_steps': N, 'watch_hits': N, ...}."""
    m = re.search(r"views: (\d+) to execute, (\d+) to data, .*\((\d+) text writes\); watched pages: (\d+) accesses "
                  r"stepped \((\d+) of them page walks\), (\d+) hits; int3: (\d+) ours", monitor(rsp, "hooks"))
    keys = ("exec_flips", "data_flips", "text_writes", "watch_steps", "watch_walks", "watch_hits", "int3")
    return dict(zip(keys, map(int, m.groups()))) if m else None


def check_watch_traffic(before, after, same_page):
    """The watch1 phase through the stub's own counters: the guest's writes
    to its hostname (taking the request), on the page of the watched
    version byte when same_page, were completed under MTF, and none was a
    hit (the byte is never written)."""
    ok = before is not None and after is not None
    stepped = ok and (after["watch_steps"] > before["watch_steps"] or not same_page)
    check("bench-watch1-traffic", stepped and after["watch_hits"] == before["watch_hits"],
          "monitor hooks before and after the phase: %s -> %s" % (before, after))


def check_exit_costs(rsp, fig):
    """Issue 7's benchmark: VM exits of a getpid loop (200,000 calls, guest
    counted) with 0, 1 and 100 breakpoints set but not hit and 1 and 100
    write watchpoints on a page the loop does not touch. Goal: 0 added
    exits. Each figure against the no-hook phase and against the module
    with no stub (the overhead scenario's getpid figure)."""
    cold = cold_functions(fig, 100, 60)
    if len(cold) < 100:
        check("bench", False, "only %d cold functions in the guest's kallsyms" % len(cold))
        return
    uts = int(fig["hv.stub-uts.addr"], 16)
    # new_utsname.version and .machine: read by uname, never written. Not
    # the release: a hostname write (the guest taking a request) ends with a
    # one-byte store right before it, which a watch counts as touching it
    # (an access starting up to 7 bytes below a range: VT_WATCH_ACCESS_MAX).
    watched = uts + 3 * 65
    phases = [("none", []), ("bp1", ["Z0,%x,1" % cold[0]]),
              ("bp100", ["Z0,%x,1" % a for a in cold]),
              ("watch1", ["Z2,%x,1" % watched]),
              ("watch100", ["Z2,%x,1" % (watched + i) for i in range(100)])]
    results = {}
    for name, hooks in phases:
        before = hook_traffic(rsp) if name == "watch1" else None
        results[name] = bench_phase(rsp, fig, name, hooks)
        if name == "watch1" and results[name]:
            check_watch_traffic(before, hook_traffic(rsp), watched >> 12 == (uts + NODENAME) >> 12)
    base = results.get("none")
    nostub = float(figures().get("overhead.getpid.ns_per_call", "0"))
    if not base:
        return
    calls = 200000
    base_rate = base["vm_exits"] / (base["ns_per_call"] * calls / 1e9)
    for name, r in results.items():
        if not r:
            continue
        secs = r["ns_per_call"] * calls / 1e9
        rate = r["vm_exits"] / secs
        vs_nostub = ("%.3f" % (r["ns_per_call"] / nostub)) if nostub else "n/a"
        # The stub's line poll (preemption timer, 50 ms per CPU) is the only
        # exit it adds; hooks the loop never touches must add none.
        check("bench-" + name, r["vm_exits"] < calls / 1000 and rate <= 1.25 * base_rate + 2,
              "%d exits in %d getpid calls over %.2f s of guest time: %.1f exits/s (no hooks: %.1f/s), "
              "%.1f ns/call: x%.3f against no hooks, x%s against the module with no stub" %
              (r["vm_exits"], calls, secs, rate, base_rate, r["ns_per_call"],
               r["ns_per_call"] / base["ns_per_call"], vs_nostub))


def report_root_nmis(rsp):
    """How many of the all-stop's NMIs found a CPU in VMX root so far, where
    root's own IDT took them (docs/hypervisor.md): a figure, not a check;
    it depends on timing."""
    text = monitor(rsp, "exits")
    n = sum(int(x) for x in re.findall(r"NMIs in VMX root (\d+)", text))
    print("FIGURE hv.stub.nmis_in_root=%d (%s)" % (n, text.strip().replace("\n", "; ")), flush=True)


def check_unload_refused(rsp):
    """monitor unload is for a stealth load only: this one stays."""
    text = monitor(rsp, "unload")
    check("unload-refused", "only a stealth load" in text and "rmmod vtice" in text, text.strip())


def check_bad_input(rsp):
    rsp.send(b"garbage with no packet in it\r\n")
    rsp.send(b"$g#00")
    check("bad-checksum", rsp.ack() == "-", "a bad checksum is NAKed")
    rsp.send(b"$" + b"m" * 6000 + b"#00")
    check("oversized", rsp.ack() == "-", "a packet over PacketSize is NAKed")
    rsp.packet("?")
    reply = rsp.reply()
    check("after-garbage", reply[:1] in ("T", "S"), "'?' still answered: %s" % reply[:12])
    rsp.send(b"$m ffffffff")  # then the line drops mid-packet
    rsp.close()


def write_done(rsp, fig, name):
    """Ends the guest's loop: its hostname becomes vtice-done, through M."""
    uts = int(fig["hv.stub-uts.addr"], 16) + 65  # init_uts_ns.name.nodename
    rsp.packet("M%x,b:%s" % (uts, b"vtice-done\0".hex()))
    check(name, rsp.reply() == "OK", "wrote the guest's hostname through M")


def finish(fig, name):
    """A raw connection of its own: the guest's loop ends (write_done), then D."""
    rsp = Rsp()
    rsp.packet("?")
    rsp.reply()
    write_done(rsp, fig, name)
    rsp.packet("D")
    rsp.reply()
    rsp.close()


def check_resync_and_finish(fig):
    rsp = Rsp()
    rsp.packet("?")
    reply = rsp.reply()
    check("reconnect", reply[:1] in ("T", "S"), "a new connection after a cut packet: %s" % reply[:12])
    write_done(rsp, fig, "write")
    rsp.packet("D")
    check("detach-raw", rsp.reply() == "OK", "D answered OK: the machine runs again")
    check_break_ioctl(rsp)
    check_debug_wait(rsp)
    rsp.close()


def guest_stop(rsp):
    """The stop the guest itself asked for through the module's VMCALL. Such
    a stop sends nothing (no debugger was waiting) and the console stops with
    the machine, so the host waits, asks '?', and checks that the stopped CPU
    is inside the module (RIP in module space). If its '?' came first and
    stopped the machine itself, it continues and waits for the guest's stop.
    Returns (stop reply, rip)."""
    time.sleep(8)
    rsp.buf = b""
    rsp.packet("?")
    stop = rsp.reply()
    thread = stop_thread(stop)
    rsp.packet("Hg%x" % (thread if thread is not None else 1))
    rsp.reply()
    rsp.packet("p10")
    rip = int.from_bytes(bytes.fromhex(rsp.reply()[:16].replace("x", "0")), "little")
    if rip < 0xFFFFFFFFC0000000:
        rsp.packet("c")
        stop = rsp.reply()
    return stop, rip


def check_break_ioctl(rsp):
    """The guest runs `vtice hv break` (VTICE_IOC_BREAK); D lets it return."""
    if not wait_for_guest_line("VTICE-HVBREAK now"):
        check("hvbreak", False, "the guest never got to vtice hv break")
        return
    stop, rip = guest_stop(rsp)
    check("hvbreak", stop.startswith("T02"), "vtice hv break stopped the machine: %s (rip 0x%x)" % (stop, rip))
    check_detached_state(rsp)
    rsp.packet("D")
    check("hvbreak-resume", rsp.reply() == "OK", "D resumed the machine; the ioctl returns")


def check_debug_wait(rsp):
    """The guest reloads the module with debug_wait=1: insmod must stop every
    CPU right after virtualizing (like kgdbwait) until the debugger resumes."""
    if not wait_for_guest_line("VTICE-DEBUGWAIT now"):
        check("debug-wait", False, "the guest never reloaded the module with debug_wait=1")
        return
    stop, rip = guest_stop(rsp)
    rsp.packet("qfThreadInfo")
    threads = rsp.reply()
    check("debug-wait", stop.startswith("T02") and threads.count(",") + 1 == 2,
          "insmod debug_wait=1 stopped the machine: %s (rip 0x%x in the module), threads %s" %
          (stop, rip, threads))
    rsp.packet("D")
    check("debug-wait-resume", rsp.reply() == "OK", "D resumed the machine; insmod returns")


def check_detached_state(rsp):
    """After D and a new connection: nothing planted, every EPT leaf back
    to identity with full rights (the stub walks the live tables), and the
    guest's getpid loop run after the detach exited no more than with the
    stub idle before any hook."""
    state = monitor(rsp, "hooks")
    clean = re.search(r"hooks: 0 breakpoints on 0 pages, 0 watchpoints on 0 pages, 0 debug-register "
                      r"breakpoints, (\d+) crash guards on (\d+) pages", state)
    identity = re.search(r"ept: (\d+) leaves \((\d+) of 4 KiB\), (\d+) not identity", state)
    # The crash guards (panic, __die) outlive detach; nothing else may.
    check("detach-ept", bool(clean and identity) and clean.group(1) == "2" and
          identity.group(3) == clean.group(2), state.strip().replace("\n", "; "))
    got = figures()
    after = got.get("hv.bench-detached.vm_exits")
    before = got.get("hv.bench-none.vm_exits")
    if after is None or before is None:
        check("detach-exits", False, "no hv.bench-detached or hv.bench-none figure")
        return
    check("detach-exits", float(after) <= 2 * float(before) + 20,
          "getpid loop after detach: %s exits; with the stub idle before any hook: %s" % (after, before))


def main():
    fig = figures()
    steps = [
        connect,
        check_registers,
        lambda: check_memory(fig),
        check_threads,
        lambda: check_frozen(fig),
        lambda: check_breakpoint(fig),
        check_next_over_call,
        lambda: check_steps(int(os.environ.get("VTICE_STUB_STEPS", "1000"))),
        lambda: check_watch(fig),
        lambda: check_hw_break(fig),
        lambda: check_jiffies_watch("rwatch", gdb.WP_READ)(fig),
        lambda: check_jiffies_watch("awatch", gdb.WP_ACCESS)(fig),
        lambda: check_many_watches(fig),
    ]
    run_checks(steps)
    try:
        run("detach")
        check("detach", True, "gdb detached")
    except gdb.error as e:
        check("detach", False, str(e))
    run_checks((vtice_phase, lambda: vtice_probe_phase(fig), lambda: raw_phase(fig),
                lambda: check_resync_and_finish(fig)), "raw")
    quit_with_failures("stub_gdb")


def run_checks(steps, failure_name=None):
    """Runs each check in turn: one that raises fails (under its own name,
    or failure_name) and does not hide the later ones."""
    for step in steps:
        try:
            step()
        except Exception as e:
            check(failure_name or getattr(step, "__name__", "step"), False, "%s: %s" % (type(e).__name__, e))


def quit_with_failures(script):
    """gdb's exit status is the number of failed checks (the driver's result)."""
    print("%s: %d failures" % (script, FAILURES[0]), flush=True)
    gdb.execute("quit %d" % min(FAILURES[0], 100))


def vtice_batch(name, cmds, timeout):
    """`vtice attach` on the stub with the Debian vmlinux's symbols, the
    commands on stdin: (exit status, output, wall seconds), or None (a
    failed check named name) without build/vtice or the vmlinux."""
    import subprocess
    vtice = find_one("build*/vtice")
    vmlinux = guest_vmlinux()
    if not vtice or not vmlinux:
        check(name, False, "no build/vtice or build/kernel/*/vmlinux under VTICE_ROOT")
        return None
    start = time.time()
    out = subprocess.run([vtice, "attach", os.environ["VTICE_COM2"], "--symbols", vmlinux,
                          "--batch", "-", "--timeout", str(timeout)], input=cmds,
                         capture_output=True, text=True, timeout=max(600, 2 * timeout))
    text = out.stdout + out.stderr
    print(text, flush=True)
    return out.returncode, text, time.time() - start


def vtice_phase():
    """vtice's own console on the stub: symbols and ORC from the Debian
    vmlinux on the host (no KASLR in the rig), a breakpoint hit by the guest's
    loop, a backtrace, the CPUs. The expected call chain is the one the
    kernel's own unwinder prints for an openat (entry_SYSCALL_64 ->
    do_syscall_64 -> __x64_sys_openat -> do_sys_openat2)."""
    cmds = "break do_sys_openat2\ncontinue\nbt\ninfo threads\ndelete\nfinish\ndetach\n"
    ran = vtice_batch("vtice-attach", cmds, 120)
    if not ran:
        return
    rc, text, wall = ran
    check("vtice-stub", "(vtice hypervisor stub)" in text, "vtice attach names the stub")
    check("vtice-banner", "banner matches the running kernel" in text,
          "the --symbols image's banner is the one the running kernel shows")
    chain = ["do_sys_openat2", "__x64_sys_openat", "do_syscall_64", "entry_SYSCALL_64"]
    positions = [text.find(f) for f in chain]
    check("vtice-bt", all(p >= 0 for p in positions) and positions == sorted(positions),
          "bt through ORC: %s" % " <- ".join(chain))
    check("vtice-threads", "vCPU 1" in text, "info threads lists both CPUs")
    finish = text.find("Run till exit")
    check("vtice-finish", finish >= 0 and "__x64_sys_openat" in text[finish:],
          "finish returns into __x64_sys_openat")
    check("vtice-attach", rc == 0, "exit %d after %.0f s wall" % (rc, wall))


def vtice_probe_phase(fig):
    """`probe` in vtice attach, armed and drained through the stub (issue
    24): the batch asks the guest for its workload by writing "vt-probe"
    into the kernel's hostname name, then runs a program whose exit() is the
    workload's last write; then the same with "vt-probe2" and the syscall:
    probes (the stub's syscall trap) beside a count of vfs_read by comm kept
    in root (hv.stub-probe2.reads its oracle too), and with "vt-spin" and a profile:
    probe (check_stub_profile). The oracles are the guest's: the count of its
    syscall tracepoint sys_enter_read for the same comm (hv.stub-probe.reads)
    and the sum of those reads' buffer addresses (hv.stub-probe.bufs), both
    of which root keeps itself (a sum() alone), the reads' count: fields
    bucketed (hv.stub-probe.counts, against a hist(arg2) at ksys_read,
    which read(2) calls once with its count, also kept in root), the 20 opens
    of /proc/sys/kernel/ostype its script makes, and the stack
    its own unwinder gave a kprobe at the same write before the module
    loaded (hv.stub-probe.write-callers)."""
    import tempfile
    hostname = int(fig["hv.stub-uts.addr"], 16) + NODENAME  # where the requests go (stub_bench_if_asked)
    program = ('fn:vfs_read /comm == "vtstubprobe"/ { @bufs = sum(arg1); } '
               'fn:ksys_read /comm == "vtstubprobe"/ { @sizes[func] = hist(arg2); } '
               'fn:do_sys_openat2 /comm == "vtstubprobe"/ { printf("open %s\\n", str(args->filename)); } '
               'fn:vfs_write /comm == "vtstubprobe"/ { @[kstack] = count(); exit(); }')
    # A run of its own, with a workload of its own (hv.stub-probe2.*), so
    # each program's counts meet their own oracle. (In one program they once
    # overflowed a ring between two drains, when every fn: hit copied 2 KiB
    # of stack and every syscall of the comm was recorded; root now copies
    # the stack at vfs_write's hits alone and records the three syscalls.)
    # Its vfs_read probe counts by key in root (qVtice:probes:keys), its
    # ksys_read probe by two (the tid, and the count root sets aside: KEY),
    # and its __x64_sys_read probe sums a read that faults at every hit (the
    # count taken for a file's address), counted by root
    # (qVtice:probes:unreadable).
    syscalls = ('syscall:read /comm == "vtstubprobe"/ { @sysreads = count(); } '
                'fn:vfs_read /comm == "vtstubprobe"/ { @byname[comm] = count(); } '
                'fn:ksys_read /comm == "vtstubprobe"/ { @bytid[tid, arg2] = count(); } '
                'fn:__x64_sys_read /comm == "vtstubprobe"/ { '
                '@badpos[comm] = sum(((struct file *)((struct pt_regs *)arg0)->dx)->f_pos); } '
                'syscall:openat /comm == "vtstubprobe"/ { printf("sysopen %s\\n", str(args->filename)); } '
                'syscall:write /comm == "vtstubprobe"/ { exit(); }')
    # A third run (hv.stub-spin.*): the profiler through the stub, the
    # spinner's samples alone (root's comm filter) with their stacks.
    spin = ('profile:hz:99 /comm == "vtice-spin"/ { @spincpu[cpu] = count(); @[kstack] = count(); } '
            'fn:vfs_write /comm == "vtstubspin"/ { exit(); }')
    scratch = tempfile.mkdtemp(prefix="vtstub")
    folded = os.path.join(scratch, "write.folded")
    spin_folded = os.path.join(scratch, "spin.folded")
    ask = "set *(u64*)0x%x = 0x%x\nset *(u8*)0x%x = %%d\nset *(u8*)0x%x = 0\n" % (
        hostname, int.from_bytes(b"vt-probe", "little"), hostname + 8, hostname + 9)
    ask_spin = "set *(u64*)0x%x = 0x%x\n" % (hostname, int.from_bytes(b"vt-spin\0", "little"))
    # A fourth (hv.stub-spinbt.*): the machine stopped at the profiler's
    # first sample of the spinner, and `bt` on its CPU, the last of the two
    # (check_threads), through its module's frames (check_stub_module_bt).
    ask_spinbt = "set *(u64*)0x%x = 0x%x\nset *(u8*)0x%x = %d\nset *(u8*)0x%x = 0\n" % (
        hostname, int.from_bytes(b"vt-spinb", "little"), hostname + 8, ord("t"), hostname + 9)
    spinbt = "profile:hz:99 /comm == \"vtice-spin\"/ { exit(); }"
    # A fifth: a probe on the module's own function, by the name its
    # symbols give (check_stub_module_probe).
    spinback = "fn:vtice_spin_loop:return { @[kstack] = count(); exit(); }"
    # A sixth: args-> of a module's function named with its module (only
    # msr's symbols looked in), typed by the BTF the kernel keeps for
    # msr.ko, which the guest's loop opens (check_stub_module_args).
    modargs = 'fn:msr:msr_open { printf("rdev %d\\n", args->inode->i_rdev); exit(); }'
    # A seventh: msr goes while the stub's probe sits in it; the guest
    # unloads it when asked (check_stub_module_going).
    ask_rmmod = "set *(u64*)0x%x = 0x%x\nset *(u8*)0x%x = 0\n" % (
        hostname, int.from_bytes(b"vt-rmmod", "little"), hostname + 8)
    # a pattern of msr's symbols read through the stub, its module a pattern too (only msr's read)
    going = "fn:ms[r]:msr_op* { @opens = count(); }"
    # The guest loads msr again; a run until a module's init starts (or 10
    # s, if it did before the machine stopped), then msr_open by name, from
    # the session's symbols of the old load (check_stub_module_reload).
    reloaded = "fn:do_init_module { exit(); }"
    cmds = (ask % 0 + "probe '%s' --folded %s\n" % (program, folded) +
            ask % ord("2") + "probe '%s'\n" % syscalls +
            ask_spin + "probe '%s' --folded %s\n" % (spin, spin_folded) +
            ask_spinbt + "probe '%s'\nthread 2\nbt\nx/2i vtice_spin_loop\nprobe '%s'\nprobe '%s'\n" % (
                spinbt, spinback, modargs) +
            "probe --list 'syscall:fstat, fn:msr:msr_open, fn:msr:msr_[orw]*'\n" +
            ask_rmmod + "probe '%s' --duration 120\n" % going +
            "probe '%s' --duration 10\nx/2i msr_open\ndetach\n" % reloaded)
    ran = vtice_batch("vtice-probe", cmds, 1200)
    if not ran:
        return
    check_stub_kstack(folded, fig.get("hv.stub-probe.write-callers"))
    rc, text, wall = ran
    check("vtice-probe", rc == 0, "exit %d after %.0f s wall" % (rc, wall))
    deadline = time.time() + 120
    # the guest prints its read count, then adds the buffers up: wait for the last
    while "hv.stub-probe.bufs" not in figures() and time.time() < deadline:
        time.sleep(1)
    want = figures().get("hv.stub-probe.reads")
    in_root = re.search(r"recorded (\d+) hits and counted (\d+) in root", text)
    check("vtice-probe-root-count", want is not None and in_root is not None and in_root.group(2) == str(2 * int(want)),
          "root counted %s hits of comm vtstubprobe itself, two a read (vfs_read, ksys_read; the "
          "guest's sys_enter_read tracepoint: %s reads)" % (in_root.group(2) if in_root else "none", want))
    check_stub_hist(text, figures().get("hv.stub-probe.counts"))
    bufs = figures().get("hv.stub-probe.bufs")
    got = re.search(r"^@bufs: (-?\d+)$", text, re.M)
    check("vtice-probe-sum", bufs is not None and got is not None and got.group(1) == bufs and
          "adds up their sum() value" in text,
          "fn:vfs_read's sum(arg1) through the stub: %s, added up in root (qVtice:probes:sums); the guest's "
          "tracepoint's buf: fields add up to %s" % (got.group(1) if got else "no @bufs", bufs))
    opens = re.findall(r"^open (.*)$", text, re.M)  # the first run's
    ostype = "/proc/sys/kernel/ostype"
    check("vtice-probe-args", opens == [ostype] * 20 + ["/dev/null"],
          "str(args->filename) of do_sys_openat2: %d lines, %d of them %s, then %s (the script opens it 20 "
          "times, then /dev/null for its last write)" % (len(opens), opens.count(ostype), ostype,
                                                        opens[-1] if opens else "nothing"))
    while "hv.stub-probe2.reads" not in figures() and time.time() < deadline:
        time.sleep(1)
    check_stub_syscalls(text, figures().get("hv.stub-probe2.reads"), ostype)
    byname = re.search(r"^@byname\[vtstubprobe\]: (\d+)$", text, re.M)
    check("vtice-probe-keys", byname is not None and byname.group(1) == figures().get("hv.stub-probe2.reads") and
          "counts them by key" in text,
          "@byname[comm] = count() at vfs_read through the stub, counted by key in root (qVtice:probes:keys): "
          "%s under vtstubprobe; the guest's sys_enter_read tracepoint: %s reads"
          % (byname.group(1) if byname else "nothing", figures().get("hv.stub-probe2.reads")))
    check_stub_two_keys(text, figures().get("hv.stub-probe2.reads"))
    check_stub_unreadable(text, figures().get("hv.stub-probe2.reads"))
    while "hv.stub-spin.spun" not in figures() and time.time() < deadline:
        time.sleep(1)
    check_stub_profile(text, spin_folded, figures())
    while "hv.stub-spinbt.hi" not in figures() and time.time() < deadline:
        time.sleep(1)
    check_stub_module_bt(text, figures())
    check_stub_module_args(text, figures().get("hv.stub-msr.dev"))
    check_stub_list(text)
    check_stub_list_pattern(text, figures().get("hv.stub-msr.functions"))
    while "hv.stub-module-going.log" not in figures() and time.time() < deadline:
        time.sleep(1)
    check_stub_module_going(text, figures().get("hv.stub-module-going.log"))
    while "hv.stub-module-reload.after" not in figures() and time.time() < deadline:
        time.sleep(1)
    check_stub_module_reload(text, figures())
    lost = re.findall(r"; (\d+) records lost in the rings", text)
    check("vtice-probe-lost", lost == ["0"] * 8,
          "records lost in the rings by each run: %s" % (", ".join(lost) or "no summary"))


def hist_label_low(label):
    """The least value a hist() row's label names: "[1]" 1, "[2, 4)" 2,
    "[4K, 8K)" 4096, "(..., 0)" -1."""
    if label.startswith("("):
        return -1
    m = re.match(r"\[(\d+)([KMGTPE]?)", label)
    return int(m.group(1)) << (10 * ("KMGTPE".index(m.group(2)) + 1) if m.group(2) else 0)


def check_stub_hist(text, counts):
    """hist(arg2) by func at ksys_read through the stub, counted in root
    (qVtice:probes:hist) and filed under ksys_read, the function the
    session's symbols give the probed address: its rows, bucket by bucket, against the guest's
    sys_enter_read count: fields as this file buckets them (bpftrace's
    rule: a value v >= 0 in bucket v.bit_length(), below 0 in one bucket)."""
    want = {}
    for pair in (counts or "").split(","):
        if ":" in pair:
            value, times = pair.split(":")
            v = int(value, 16)
            bucket = -1 if v >= 1 << 63 else v.bit_length()  # a size_t that high is negative to hist()
            want[bucket] = want.get(bucket, 0) + int(times)
    table = re.search(r"^@sizes\[ksys_read\]:\n((?:[\[(].*\|\n)+)", text, re.M)
    got = {}
    for row in (table.group(1).splitlines() if table else []):
        m = re.match(r"(.*?\)|\[\d+\w?\])\s+(\d+) \|", row)
        if m and int(m.group(2)):  # the empty buckets between the first and the last are drawn too
            low = hist_label_low(m.group(1))
            bucket = -1 if low < 0 else low.bit_length()
            got[bucket] = got.get(bucket, 0) + int(m.group(2))
    check("vtice-probe-hist", bool(want) and got == want and
          "their hist() value in its power-of-two bucket by function" in text,
          "@sizes[func] = hist(arg2) at ksys_read through the stub, counted in root (qVtice:probes:hist) and filed "
          "under the function: "
          "buckets %s; the guest's sys_enter_read count: fields (%s) make %s"
          % (sorted(got.items()), counts, sorted(want.items())))


def check_stub_syscalls(text, reads, ostype):
    """syscall: probes through the stub (the trap each CPU arms as it leaves
    the stop): the read syscalls counted against the guest's own
    sys_enter_read tracepoint, the paths openat's entry copied against the
    opens the guest's script makes (str(args->filename): openat's argument
    named by the kernel's declaration, read through the stub)."""
    got = re.search(r"^@sysreads: (\d+)$", text, re.M)
    check("vtice-probe-syscall-count", reads is not None and got is not None and got.group(1) == reads,
          "syscall:read through the stub counted %s (the guest's sys_enter_read tracepoint: %s)"
          % (got.group(1) if got else "nothing", reads))
    opens = re.findall(r"^sysopen (.*)$", text, re.M)
    trap = re.search(r"the hypervisor executed (\d+) SYSCALL/SYSRET, (\d+) passed its filter", text)
    check("vtice-probe-syscall-str", opens == [ostype] * 20 + ["/dev/null"] and trap is not None,
          "str(args->filename) of syscall:openat through the stub: %d lines, %d of them %s, then %s; the trap: %s"
          % (len(opens), opens.count(ostype), ostype, opens[-1] if opens else "nothing",
             "%s SYSCALL/SYSRET executed, %s recorded" % trap.groups() if trap else "no summary"))


def check_stub_two_keys(text, reads):
    """@bytid[tid, arg2] = count() at ksys_read through the stub, counted in
    root under two words (the task's tid, then the count set aside by KEY):
    every line has both parts, one tid (the script's one task), and they add
    up to the guest's sys_enter_read tracepoint's count of the comm (each
    read(2) calls ksys_read once)."""
    lines = re.findall(r"^@bytid\[(\d+), (\d+)\]: (\d+)$", text, re.M)
    total = sum(int(n) for _, _, n in lines)
    tids = sorted(set(t for t, _, _ in lines))
    check("vtice-probe-two-keys", reads is not None and str(total) == reads and len(tids) == 1 and
          "at fn:ksys_read root counts the hits, counts them by key" in text,
          "@bytid[tid, arg2] = count() at ksys_read through the stub, counted in root under two words: %d "
          "reads in %d lines, tid %s; the guest's sys_enter_read tracepoint: %s reads"
          % (total, len(lines), ",".join(tids) or "none", reads))


def check_stub_unreadable(text, reads):
    """@badpos[comm] = sum() of a read that faults at every hit of
    __x64_sys_read through the stub: root counts and sums every hit (0),
    so the run's summary can count the reads found unmapped only from
    root's count (qVtice:probes:unreadable): one a read(2), the guest's
    sys_enter_read tracepoint's count of the comm."""
    said = re.findall(r"; (\d+) reads through arguments found their memory unmapped \(they gave 0, (\d+) in root\)",
                      text)
    badpos = re.search(r"^@badpos\[vtstubprobe\]: (-?\d+)$", text, re.M)
    check("vtice-probe-unreadable", reads is not None and said == [(reads, reads)] and badpos is not None and
          badpos.group(1) == "0",
          "a read through __x64_sys_read's regs->dx, faulting at every hit, summed in root through the stub: "
          "@badpos %s; the summaries count %s unreadable reads (total, in root); the guest's sys_enter_read "
          "tracepoint: %s reads" % (badpos.group(1) if badpos else "missing", said or "no", reads))


def check_stub_profile(text, folded, fig):
    """profile: through the stub (each CPU's timer armed as it leaves the
    stop): root records the spinner's samples alone, all on the CPU its
    module binds it to (the last); and >= 90 % of them in vtice_spin_loop
    or what it calls: a frame of the unwound stack named vtice_spin_loop
    (the module's own symbols, read through the stub). Not 99 a second of its
    5 s: the spinner's clock (the TSC, tsc_offset=0 by default) runs on
    while the drains stop the machine, about a hundred times in those 5 s,
    and the timer counts only while the guest runs; >= 50 (half a second
    of running) is asked."""
    cpus = fig.get("hv.stub-spin.cpus")
    per_cpu = dict(re.findall(r"^@spincpu\[(\d+)\]: (\d+)$", text, re.M))
    spinner = per_cpu.get(str(int(cpus) - 1)) if cpus else None
    drains = re.findall(r"vtice probe: (\d+) break-ins drained the rings", text)
    check("vtice-probe-profile-filter", spinner is not None and len(per_cpu) == 1 and int(spinner) >= 50,
          "profile:hz:99 /comm == \"vtice-spin\"/ through the stub: samples per CPU %s (the spinner is bound "
          "to CPU %s; want it alone, >= 50; it spun %s ms by its clock, %s break-ins drained the rings)"
          % (per_cpu or "none", int(cpus) - 1 if cpus else "?", fig.get("hv.stub-spin.spun"),
             drains[-1] if drains else "no"))
    try:
        lines = open(folded).read().splitlines()
    except OSError as e:
        lines = []
        print("no --folded file: %s" % e, flush=True)
    total = inside = 0
    for line in lines:
        stack, _, count = line.rpartition(" ")
        total += int(count)
        inside += int(count) if "vtice_spin_loop" in stack.split(";") else 0
    check("vtice-probe-profile-stack", total >= 50 and inside * 10 >= total * 9,
          "%d of the spinner's %d samples through the stub in vtice_spin_loop or what it calls "
          "(want >= 90%% of >= 50)" % (inside, total))
    # The spinner is a kthread: below its module's frames the kernel's own
    # kthread() and, at the stack's base, ret_from_fork. Reached only when
    # the module's frames unwind with the module's ORC tables, which the
    # console finds through the stub (the kernel's list of modules).
    based = sum(int(line.rpartition(" ")[2]) for line in lines
                if re.match(r"ret_from_fork(_asm)?;(ret_from_fork;)?kthread;vtice_spin_thread;",
                            line.rpartition(" ")[0]))
    check("vtice-probe-profile-module-unwind", total >= 50 and based * 10 >= total * 9,
          "%d of the spinner's %d samples through the stub unwound through its module's frames, named, to "
          "kthread and ret_from_fork (want >= 90%%); a line: %s" % (based, total, lines[0] if lines else "none"))


def check_stub_module_probe(block):
    """fn:vtice_spin_loop:return through the stub: a module's function,
    found in its symbols read through the stub, probed at its RET when
    the spinner's loop ends, its kstack unwound through the module's
    frames to kthread (the map the batch printed before it detached)."""
    tail = block[block.rfind("@["):] if "@[" in block else ""
    frames = re.findall(r"^\t(\S+)$", tail, re.M)
    names = [f.split("+")[0] for f in frames]
    ok = names[:2] == ["vtice_spin_loop", "vtice_spin_thread"] and "kthread" in names and \
        re.search(r"^\]: 1$", tail, re.M) is not None
    check("vtice-probe-module-function", ok,
          "fn:vtice_spin_loop:return through the stub: one hit, kstack %s" % (" <- ".join(frames) or "none"))


def check_stub_module_args(text, dev):
    """args->inode->i_rdev at fn:msr:msr_open through the stub (the address
    from msr's own symbols): msr_open is in msr.ko's BTF alone, which the console reads where the kernel keeps it
    (btf_modules); the guest's loop opens /dev/cpu/0/msr, whose device
    numbers its ls -l gives ("202,0"): the kernel's dev_t of them is
    MAJOR << 20 | MINOR (include/linux/kdev_t.h, MINORBITS 20)."""
    got = re.findall(r"^rdev (\d+)$", text, re.M)
    want = None
    if dev and re.match(r"^\d+,\d+$", dev):
        major, minor = (int(x) for x in dev.split(","))
        want = major << 20 | minor
    check("vtice-probe-module-args", want is not None and got == [str(want)],
          "fn:msr:msr_open's args->inode->i_rdev through the stub, typed by msr.ko's BTF in guest memory: %s; the "
          "guest's /dev/cpu/0/msr is %s (dev_t %s)" % (", ".join(got) or "nothing", dev, want))


def check_stub_list(text):
    """probe --list through the stub: syscall:fstat's arguments from the
    kernel's declaration in its memory (number 5 is newfstat: fs/stat.c
    declares SYSCALL_DEFINE2(newfstat, unsigned int, fd, struct stat
    __user *, statbuf), and __user is empty outside sparse), and msr_open's
    from msr.ko's BTF the kernel keeps (arch/x86/kernel/msr.c:
    msr_open(struct inode *inode, struct file *file))."""
    want = ("syscall:fstat (the kernel's declaration)\n"
            "    arg0  unsigned int fd\n"
            "    arg1  struct stat *statbuf\n"
            "fn:msr:msr_open (its BTF)\n"
            "    arg0  struct inode *inode\n"
            "    arg1  struct file *file\n")
    check("vtice-probe-list", want in text,
          "probe --list 'syscall:fstat, fn:msr:msr_open' through the stub: %s"
          % ("fstat's fd and statbuf, msr_open's inode and file, with their types" if want in text
             else "not the kernel's declarations: " + repr(text[text.find("syscall:fstat ("):][:300])))


def check_stub_list_pattern(text, functions):
    """probe --list's pattern fn:msr:msr_[orw]* through the stub: the
    points it became are msr.ko's functions the guest's /proc/kallsyms
    names [msr] (text symbols), sorted, each listed from msr.ko's BTF,
    after the msr_open written out before it."""
    got = re.findall(r"^fn:msr:(\w+) \(its BTF\)$", text, re.M)
    want = ["msr_open"] + (functions.split(",") if functions else [])
    check("vtice-probe-list-pattern", functions is not None and got == want,
          "fn:msr:msr_[orw]* through the stub listed %s; the guest's kallsyms: %s"
          % (", ".join(got[1:]) or "nothing", functions))


def check_stub_module_going(text, log):
    """msr unloaded while the stub's probe sits in msr_open: the kernel
    side's module notifier has root remove it first (the guest's kernel
    log says so), and the console, told by qVtice:probes:removed, says so
    and ends the run (nothing else was armed) long before its 120 s."""
    said = "the probes were removed under the run" in text and "nothing is armed, the run ends" in text
    ended = re.search(r"^@opens: \d+$", text, re.M) is not None  # its maps printed as the run ended
    check("vtice-probe-module-going", said and ended and log == "probes_removed:_module_msr_is_going_(the_debug_stub's)",
          "rmmod msr under fn:ms[r]:msr_op* (msr_open) through the stub: the console %s; the guest's kernel log: %s"
          % ("said the probes were removed and ended the run" if said else "did not say the probes were removed",
             log or "nothing"))


def check_stub_module_reload(text, fig):
    """msr unloaded and loaded again while the session ran: `x/2i msr_open`
    afterwards, a name the session read in the old load's symbols, must
    be where the guest's /proc/kallsyms puts the new load's (the old
    load's address, if it moved, is freed or another's code)."""
    before, after = fig.get("hv.stub-module-reload.before"), fig.get("hv.stub-module-reload.after")
    start = text.find("\n@opens:")  # the going run's map, printed on stdout before x/2i's lines
    lines = re.findall(r"^\s+(0x[0-9a-f]+):", text[start:], re.M) if start >= 0 else []
    got = lines[0] if lines else None
    ok = after not in (None, "", "none") and got is not None and int(got, 16) == int(after, 16)
    check("vtice-module-reload", ok,
          "x/2i msr_open after rmmod and insmod of msr through the stub: %s; the guest's kallsyms: %s "
          "(before the reload: %s, %s)" % (got or "nothing", after, before,
                                           "the same address" if before == after else "another address"))


def check_stub_module_lookup(block, begin):
    """`x/2i vtice_spin_loop`: a name the vmlinux lacks, found in the
    module's symbols read through the stub, at the address the guest's
    /proc/kallsyms gives it."""
    lines = [line.strip() for line in block.splitlines() if line.startswith("   0x")]
    check("vtice-module-symbol-lookup", bool(lines) and lines[0].startswith("0x%x:" % begin),
          "x/2i vtice_spin_loop through the stub: %s (the guest's kallsyms: 0x%x)" % (lines[:2] or "nothing", begin))


def check_stub_module_bt(text, fig):
    """`bt` on the spinner's CPU, stopped while it spins: ORC frames (no
    '?' guess, no stop) from vtice_spin_loop (its text from the guest's
    /proc/kallsyms) down to kthread and, at the stack's base,
    ret_from_fork, as every kernel thread's stack ends. Reached only when
    the module's frames unwind with its own ORC tables, found through the
    stub (the kernel's list of modules); the frame is named as the guest's
    kallsyms places vtice_spin_loop (the module's symbols, read through
    the stub)."""
    lo, hi = fig.get("hv.stub-spinbt.lo"), fig.get("hv.stub-spinbt.hi")
    start = text.find("[Switching to thread 2")
    block = text[start:text.find("Detached", start)] if start >= 0 else ""
    frames = re.findall(r"^#(\d+) +(\? )?0x([0-9a-f]+) in (\S+)(.*)$", block, re.M)
    if not lo or not hi or lo == "none":
        check("vtice-bt-module", False, "the guest gave no vtice_spin_loop range (lo %s, hi %s)" % (lo, hi))
        return
    begin, end = int(lo, 16), int(hi, 16)
    check_stub_module_lookup(block, begin)
    check_stub_module_probe(block)
    loop = [i for i, f in enumerate(frames) if begin <= int(f[2], 16) < end]
    names = [f[3].split("+")[0] for f in frames]
    after = names[loop[0]:] if loop else []
    named = bool(loop) and frames[loop[0]][3] == "vtice_spin_loop+0x%x" % (int(frames[loop[0]][2], 16) - begin)
    ok = (named and "kthread" in after and after[-1].startswith("ret_from_fork") and
          after.index("kthread") < len(after) - 1 and
          not any(f[1] or "unwind stopped" in f[4] for f in frames))
    check("vtice-bt-module", ok,
          "bt on the spinner's CPU through the stub: %d frames, vtice_spin_loop [0x%x, 0x%x) at #%s as %s, then %s"
          % (len(frames), begin, end, loop[0] if loop else "none", frames[loop[0]][3] if loop else "nothing",
             " <- ".join(("? " if f[1] else "") + f[3] + f[4] for f in frames[loop[0] + 1 if loop else 0:]) or
             "nothing"))


def check_stub_kstack(folded, kernel_callers):
    """kstack through the stub, unwound with the session's ORC tables: one
    folded stack, counted once (exit() at the first write), vfs_write its
    leaf and its callers the kernel's own unwinder named."""
    try:
        lines = open(folded).read().splitlines()
    except OSError as e:
        lines = ["(no --folded file: %s)" % e]
    stack, _, count = lines[0].rpartition(" ") if lines else ("", "", "")
    frames = stack.split(";")[::-1]  # leaf first
    callers = "<".join(frames[1:])
    check("vtice-probe-kstack", kernel_callers is not None and len(lines) == 1 and count == "1" and
          frames[0] == "vfs_write" and callers == kernel_callers,
          "the write's kstack through the stub: %s (%d folded lines); the kernel's kprobe stacktrace before "
          "the module loaded: vfs_write<%s" % (" < ".join(frames), len(lines), kernel_callers))


def raw_phase(fig):
    time.sleep(1)  # the guest runs again after gdb's detach
    rsp = Rsp()
    check_break_in(rsp)
    check_hidden_while_running(rsp, fig)
    check_exit_costs(rsp, fig)
    check_detect_under_debugger(rsp, fig)
    report_root_nmis(rsp)
    check_unload_refused(rsp)
    check_bad_input(rsp)


if __name__ == "__main__":
    main()
