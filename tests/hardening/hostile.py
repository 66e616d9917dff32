#!/usr/bin/env python3
"""The hostile-input suite (docs/hardening.md): the real vtice binary against
hostile files, a misbehaving stub and signals, as a table of cases.

Usage: hostile.py VTICE HOSTILE_TRACE_TOOL FIXTURE_TRACE [--only SUBSTRING] [--list]

Every case asserts:
  - no death by a signal, and an exit code the case names;
  - a bounded time (signal cases: at most 2 s from the signal to the exit);
  - memory under `ulimit -v 1048576` (1 GiB of address space);
  - its input files byte-identical afterwards;
  - a message naming what was wrong, for every failure;
  - no byte under 0x20 but tab and newline, and none of 0x7f-0x9f, in what
    vtice wrote to stdout and stderr.
The table is built from:
  - every command x every path option x {directory, FIFO, /dev/zero, a
    sparse 4 GiB file, the path of another input, a symlink};
  - every signal in each waiting state against fake_stub.py's modes;
  - the classes issue 22 found by hand (numbers, targets, output over
    input, deep traces, decompression bombs, terminal injection).
At the end: counts per class, peak memory per class, and the failures.
"""
import hashlib
import os
import resource
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field

HERE = os.path.dirname(os.path.abspath(__file__))
GIB = 1 << 30
SIGNAL_BOUND_S = 2.0


@dataclass
class Case:
    name: str
    cls: str
    argv: list
    rc: object = "nonzero"          # an int, a set of ints, or "nonzero"
    text: str = ""                  # must appear in stdout or stderr
    limit: float = 30.0             # seconds, from the start
    stdin: object = None            # bytes, a path, or "hold" (a pipe left open)
    send: tuple = None              # (signal, seconds after the start)
    inputs: list = field(default_factory=list)
    setup: object = None            # a callable run just before the case
    after: object = None            # a callable(output text) -> error text or ""
    second: tuple = None            # a second (signal, seconds after the start)
    hold_after: bool = False        # stdin bytes, then the pipe is left open
    close_stdin_at: float = None    # a held stdin is closed at this time


@dataclass
class Outcome:
    case: Case
    ok: bool
    why: str
    rc: int
    seconds: float
    maxrss_kb: int


# --- files the cases read ----------------------------------------------------

class Workspace:
    def __init__(self, hostile_trace, fixture):
        self.dir = tempfile.mkdtemp(prefix="vtice-hostile-")
        self.hostile_trace = hostile_trace
        self.path = lambda name: os.path.join(self.dir, name)
        os.mkdir(self.path("dir"))
        self.sparse = self.path("sparse-4g")
        with open(self.sparse, "wb") as f:
            f.truncate(4 * GIB)
        self.trace = self.path("t.vtrace")
        shutil.copy(fixture, self.trace)
        self.map = self.path("System.map")
        with open(self.map, "w") as f:
            f.write("ffffffff81000000 T _text\nffffffff81000100 T do_sys_openat2\n")
        self.batch = self.path("cmds.txt")
        with open(self.batch, "w") as f:
            f.write("info registers rip\n")
        self.kallsyms = self.path("kallsyms.txt")
        with open(self.kallsyms, "w") as f:
            f.write("ffffffff81000000 T _text\nffffffff81c00000 T entry_SYSCALL_64\n")
        self.btf = "/sys/kernel/btf/vmlinux"
        self.symlink_zero = self.path("link-to-zero")
        os.symlink("/dev/zero", self.symlink_zero)
        self.make_traces()
        self.make_bomb()

    def make_traces(self):
        for kind, extra in (("deep", ["20000"]), ("backwards", []), ("names", [])):
            subprocess.run([self.hostile_trace, kind, self.path(kind + ".vtrace")] + extra, check=True)
        subprocess.run([self.hostile_trace, "deep", self.path("deep1m.vtrace"), "1000000"], check=True)

    def make_bomb(self):
        """A bzImage whose gzip payload inflates to 2 GiB of zeros: refused
        while inflating, inside the 1 GiB cap."""
        payload = subprocess.run("head -c %d /dev/zero | gzip -1" % (2 * GIB), shell=True, check=True,
                                 stdout=subprocess.PIPE).stdout
        setup_sects = 1
        header = bytearray(512 * (setup_sects + 1))
        header[0x1f1] = setup_sects
        header[0x1fe:0x200] = b"\x55\xaa"
        header[0x202:0x206] = b"HdrS"
        header[0x206:0x208] = (0x020f).to_bytes(2, "little")
        header[0x248:0x24c] = (0).to_bytes(4, "little")
        header[0x24c:0x250] = len(payload).to_bytes(4, "little")
        self.bomb = self.path("bomb.vmlinuz")
        with open(self.bomb, "wb") as f:
            f.write(bytes(header) + payload)

    def fifo(self, name, feed=None):
        """A FIFO; feed: bytes a writer puts into it once a reader opens it
        (None: no writer ever comes)."""
        path = self.path(name)
        if os.path.exists(path):
            os.unlink(path)
        os.mkfifo(path)
        if feed is not None:
            def writer():
                try:
                    with open(path, "wb") as f:
                        f.write(feed)
                except OSError:
                    pass
            threading.Thread(target=writer, daemon=True).start()
        return path

    def drain_fifo(self, name):
        """A FIFO read to the end by a reader, for outputs."""
        path = self.fifo(name)

        def reader():
            try:
                with open(path, "rb") as f:
                    while f.read(65536):
                        pass
            except OSError:
                pass
        threading.Thread(target=reader, daemon=True).start()
        return path

    def release_fifos(self):
        """Unblocks writers and readers still waiting on a FIFO."""
        for name in os.listdir(self.dir):
            path = self.path(name)
            if os.path.exists(path) and stat.S_ISFIFO(os.stat(path).st_mode):
                for flags in (os.O_RDONLY | os.O_NONBLOCK, os.O_WRONLY | os.O_NONBLOCK):
                    try:
                        os.close(os.open(path, flags))
                    except OSError:
                        pass


# --- running one case --------------------------------------------------------

def digest(path):
    """Size, mtime and a hash of the head and tail: the sparse 4 GiB file is
    not read whole."""
    if not os.path.isfile(path):
        return None
    st = os.stat(path)
    h = hashlib.sha256()
    with open(path, "rb") as f:
        h.update(f.read(1 << 20))
        if st.st_size > 2 << 20:
            f.seek(st.st_size - (1 << 20))
        h.update(f.read(1 << 20))
    return (st.st_size, st.st_mtime_ns, h.hexdigest())


def bad_bytes(data):
    return sorted({b for b in data if (b < 0x20 and b not in (9, 10)) or 0x7f <= b <= 0x9f})


def limit_memory():
    resource.setrlimit(resource.RLIMIT_AS, (GIB, GIB))
    os.setsid()


def run_case(case):
    if case.setup:
        case.setup()
    before = {p: digest(p) for p in case.inputs}
    stdin = subprocess.DEVNULL
    opened = None
    held = case.stdin == "hold" or case.hold_after
    if isinstance(case.stdin, bytes) or case.stdin == "hold":
        stdin = subprocess.PIPE
    elif isinstance(case.stdin, str):
        opened = open(case.stdin, "rb")
        stdin = opened
    start = time.monotonic()
    proc = subprocess.Popen(case.argv, stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            preexec_fn=limit_memory)
    outs = {"out": b"", "err": b""}

    def drain(stream, key):
        outs[key] = stream.read()
    readers = [threading.Thread(target=drain, args=(proc.stdout, "out")),
               threading.Thread(target=drain, args=(proc.stderr, "err"))]
    for t in readers:
        t.start()
    if isinstance(case.stdin, bytes):
        try:
            proc.stdin.write(case.stdin)
            proc.stdin.flush()
            if not held:
                proc.stdin.close()
        except OSError:
            pass
    for when in (case.send, case.second):
        if when:
            sig, at = when
            time.sleep(max(0.0, at - (time.monotonic() - start)))
            try:
                os.kill(proc.pid, sig)
            except ProcessLookupError:
                pass
    if held and case.close_stdin_at:
        time.sleep(max(0.0, case.close_stdin_at - (time.monotonic() - start)))
        proc.stdin.close()
    status, rusage = wait_bounded(proc.pid, case.limit - (time.monotonic() - start))
    seconds = time.monotonic() - start
    for t in readers:
        t.join(5)
    if held and not proc.stdin.closed:
        proc.stdin.close()
    if opened:
        opened.close()
    return judge(case, status, rusage, seconds, before, outs)


def wait_bounded(pid, budget):
    """wait4 with a deadline; past it the process is killed (and the case fails)."""
    deadline = time.monotonic() + max(budget, 0.1)
    while True:
        done, status, rusage = os.wait4(pid, os.WNOHANG)
        if done:
            return status, rusage
        if time.monotonic() > deadline:
            os.killpg(pid, signal.SIGKILL)
            done, status, rusage = os.wait4(pid, 0)
            return ("timeout", status), rusage
        time.sleep(0.02)


def judge(case, status, rusage, seconds, before, outs):
    timed_out = isinstance(status, tuple)
    raw = status[1] if timed_out else status
    rc = os.WEXITSTATUS(raw) if os.WIFEXITED(raw) else -os.WTERMSIG(raw)
    text = (outs["out"] + outs["err"]).decode("latin-1")
    problems = []
    if timed_out:
        problems.append("still running after %.0f s (killed)" % case.limit)
    elif os.WIFSIGNALED(raw):
        problems.append("died by signal %d" % os.WTERMSIG(raw))
    elif not rc_matches(case.rc, rc):
        problems.append("exit %d, wanted %s" % (rc, case.rc))
    ending = case.send and case.send[0] in (signal.SIGTERM, signal.SIGHUP)
    if ending and not timed_out and seconds - case.send[1] > SIGNAL_BOUND_S:
        problems.append("exited %.2f s after %s (bound %.1f s)" % (seconds - case.send[1],
                                                                 signal.Signals(case.send[0]).name, SIGNAL_BOUND_S))
    if case.text and case.text not in text:
        problems.append("output lacks %r" % case.text)
    if rc != 0 and not outs["err"].strip() and not outs["out"].strip():
        problems.append("failed without a message")
    bad = bad_bytes(outs["out"] + outs["err"])
    if bad:
        problems.append("control bytes on the terminal: %s" % ", ".join("0x%02x" % b for b in bad[:8]))
    for path, was in before.items():
        if digest(path) != was:
            problems.append("input %s changed" % path)
    if case.after and not problems:
        extra = case.after(text)
        if extra:
            problems.append(extra)
    why = "; ".join(problems) if problems else text.strip().splitlines()[-1][:120] if text.strip() else ""
    return Outcome(case, not problems, why, rc, seconds, rusage.ru_maxrss)


def rc_matches(want, rc):
    if want == "nonzero":
        return rc != 0
    if isinstance(want, (set, frozenset, tuple, list)):
        return rc in want
    return rc == want


# --- the stub ------------------------------------------------------------------

class Stubs:
    """fake_stub.py, one process per mode, each on its own unix socket."""

    def __init__(self, dir):
        self.dir = dir
        self.procs = {}

    def target(self, mode):
        path = os.path.join(self.dir, "stub-%s.sock" % mode)
        if mode not in self.procs:
            self.procs[mode] = subprocess.Popen([sys.executable, os.path.join(HERE, "fake_stub.py"), mode,
                                                 "unix:" + path])
            for _ in range(100):
                if os.path.exists(path):
                    break
                time.sleep(0.05)
        return "unix:" + path

    def stop(self):
        for p in self.procs.values():
            p.kill()
            p.wait()


# --- the table -------------------------------------------------------------------

def path_kinds(ws, other_input):
    """The hostile kinds of a path option: (kind, path, setup)."""
    junk = os.urandom(65536)
    return [
        ("directory", ws.path("dir"), None),
        ("fifo", ws.path("fifo-junk"), lambda: ws.fifo("fifo-junk", junk)),
        ("dev-zero", "/dev/zero", None),
        ("sparse-4g", ws.sparse, None),
        ("another-input", other_input, None),
        ("symlink", ws.symlink_zero, None),
    ]


def input_matrix(vtice, ws, stubs):
    """Each input option of each command, given each hostile kind."""
    good_stub = stubs.target("good")
    commands = [
        # (command label, option, argv builder, another input of it, timeout)
        ("syms", "SRC", lambda p: [vtice, "syms", p, "_text"], ws.trace, 30),
        ("report", "TRACE", lambda p: [vtice, "report", p], ws.map, 30),
        ("report", "--symbols", lambda p: [vtice, "report", ws.trace, "--symbols", p], ws.trace, 30),
        ("attach", "TARGET", lambda p: [vtice, "attach", p, "--batch", ws.batch, "--no-cache"], ws.batch, 30),
        ("attach", "--batch", lambda p: [vtice, "attach", good_stub, "--batch", p, "--no-cache"], ws.map, 30),
        ("attach", "--symbols", lambda p: [vtice, "attach", good_stub, "--batch", ws.batch, "--symbols", p,
                                           "--no-cache"], ws.batch, 30),
        ("attach", "--btf", lambda p: [vtice, "attach", good_stub, "--batch", ws.batch, "--btf", p,
                                       "--no-cache"], ws.batch, 30),
        ("trace syscalls", "--device", lambda p: [vtice, "trace", "syscalls", "--device", p], ws.map, 30),
        ("trace syscall", "--device", lambda p: [vtice, "trace", "syscall", "openat", "--device", p,
                                                 "--kallsyms", ws.kallsyms, "--kcore", "/proc/self/exe"],
         ws.map, 30),
        ("trace syscall", "--kallsyms", lambda p: [vtice, "trace", "syscall", "openat", "--kallsyms", p],
         ws.trace, 30),
        ("trace syscall", "--kcore", lambda p: [vtice, "trace", "syscall", "openat", "--kallsyms", ws.kallsyms,
                                                "--kcore", p], ws.trace, 30),
        ("hv status", "--device", lambda p: [vtice, "hv", "status", "--device", p], ws.map, 30),
        ("hv caps", "--device", lambda p: [vtice, "hv", "caps", "--device", p], ws.map, 30),
        ("hv lbr", "--device", lambda p: [vtice, "hv", "lbr", "--device", p], ws.map, 30),
    ]
    cases = []
    for label, option, build, other, limit in commands:
        for kind, path, setup in path_kinds(ws, other):
            if label == "attach" and option == "TARGET" and kind == "fifo":
                # A FIFO is a line a stub could sit on: the junk in it fails
                # the handshake (NAKs, or no acknowledgement).
                text = "qSupported"
            elif label == "attach" and option == "TARGET" and kind == "dev-zero":
                text = "no acknowledgement"
            else:
                text = ""
            cases.append(Case("%s %s=%s" % (label, option, kind), "path:" + kind, build(path),
                              text=text, limit=limit, setup=setup,
                              inputs=[p for p in (path, other, ws.trace, ws.map, ws.batch) if
                                      p and os.path.isfile(p)]))
    return cases


def output_matrix(vtice, ws):
    """Each output option: refused over an input (by name, hard link or
    symlink) and over a directory; a FIFO, /dev/null or a device is written."""
    hard = ws.path("hardlink-trace")
    if not os.path.exists(hard):
        os.link(ws.trace, hard)
    link = ws.path("symlink-trace")
    if not os.path.exists(link):
        os.symlink(ws.trace, link)
    commands = [
        ("report", lambda o: [vtice, "report", ws.trace, "--symbols", ws.map, "-o", o], ws.map),
        ("trace syscalls", lambda o: [vtice, "trace", "syscalls", "--device", ws.trace, "-o", o], None),
        ("trace syscall", lambda o: [vtice, "trace", "syscall", "openat", "--kallsyms", ws.kallsyms,
                                     "--device", ws.trace, "-o", o], ws.kallsyms),
    ]
    cases = []
    for label, build, other in commands:
        inputs = [ws.trace, ws.map, ws.kallsyms]
        cases.append(Case("%s -o=directory" % label, "output", build(ws.path("dir")), rc=2,
                          text="is a directory", inputs=inputs))
        cases.append(Case("%s -o=its input" % label, "output", build(ws.trace), rc=2,
                          text="refusing to write over it", inputs=inputs))
        cases.append(Case("%s -o=a hard link to its input" % label, "output", build(hard), rc=2,
                          text="refusing to write over it", inputs=inputs))
        cases.append(Case("%s -o=a symlink to its input" % label, "output", build(link), rc=2,
                          text="refusing to write over it", inputs=inputs))
        if other:
            cases.append(Case("%s -o=another input" % label, "output", build(other), rc=2,
                              text="refusing to write over it", inputs=inputs))
        ok = 0 if label == "report" else 1
        fifo_name = "out-fifo-" + label.replace(" ", "-")
        cases.append(Case("%s -o=a FIFO with a reader" % label, "output", build(ws.path(fifo_name)), rc=ok,
                          setup=lambda n=fifo_name: ws.drain_fifo(n), inputs=inputs))
        cases.append(Case("%s -o=/dev/null" % label, "output", build("/dev/null"), rc=ok, inputs=inputs))
    cases.append(Case("report -o=/dev/full", "output",
                      [vtice, "report", ws.trace, "-o", "/dev/full"], rc=1, text="failed", inputs=[ws.trace]))
    cases.append(Case("report > /dev/full", "output",
                      ["sh", "-c", '"$0" report "$1" > /dev/full', vtice, ws.trace], rc=1, text="failed",
                      inputs=[ws.trace]))
    for what in (["version"], ["--help"], ["syms", "--help"], ["attach", "--help"]):
        cases.append(Case("%s > /dev/full" % " ".join(what), "output",
                          ["sh", "-c", '"$0" "$@" > /dev/full', vtice] + what, rc=1, text="failed"))
    return cases


def doctor_cases(vtice, ws):
    """vtice doctor's options: refused before anything is loaded or traced."""
    bad = "not a regular file"
    return [
        Case("doctor --module=directory", "doctor", [vtice, "doctor", "--module", ws.path("dir")], rc=2, text=bad),
        Case("doctor --module=/dev/zero", "doctor", [vtice, "doctor", "--module", "/dev/zero"], rc=2, text=bad),
        Case("doctor --module=a FIFO", "doctor", [vtice, "doctor", "--module", ws.path("fifo-doctor")], rc=2,
             text=bad, setup=lambda: ws.fifo("fifo-doctor")),
        Case("doctor --json=directory", "doctor", [vtice, "doctor", "--json", ws.path("dir")], rc=2,
             text="is a directory"),
        Case("doctor --json=its --module", "doctor", [vtice, "doctor", "--module", ws.trace, "--json", ws.trace],
             rc=2, text="refusing to write over it", inputs=[ws.trace]),
        Case("doctor --work-dir=a file", "doctor", [vtice, "doctor", "--work-dir", ws.trace], rc=2,
             text="not a directory", inputs=[ws.trace]),
        Case("doctor --timeout=nan", "doctor", [vtice, "doctor", "--timeout", "nan"], rc=2, text="--timeout"),
        Case("doctor --timeout=1e99", "doctor", [vtice, "doctor", "--timeout", "1e99"], rc=2, text="--timeout"),
        Case("doctor stray argument", "doctor", [vtice, "doctor", "now"], rc=2, text="unexpected argument"),
    ]


def debugger_output_cases(vtice, ws, stubs):
    """The debugger's own trace -o: never over its symbols or its commands."""
    good = stubs.target("good")
    cmds = ws.path("trace-over-batch.txt")
    with open(cmds, "w") as f:
        f.write("trace -o %s\n" % cmds)
    return [
        Case("attach: trace -o over the batch file", "output",
             [vtice, "attach", good, "--batch", cmds, "--no-cache"], rc=1, text="refusing to write over it",
             inputs=[cmds]),
        Case("attach: trace -o over --symbols", "output",
             [vtice, "attach", good, "--batch", "-", "--symbols", ws.map, "--no-cache"],
             stdin=("trace -o %s\n" % ws.map).encode(), rc=1, text="refusing to write over it",
             inputs=[ws.map]),
        Case("attach: trace -o over the commands on stdin", "output",
             [vtice, "attach", good, "--batch", "-", "--no-cache"], stdin=cmds, rc=1,
             text="refusing to write over it", inputs=[cmds]),
    ]


def stub_cases(vtice, stubs):
    """Stubs that misbehave: every wait has a deadline garbage cannot extend."""
    cases = []
    for mode, text in (("nul", "no acknowledgement"), ("dollar", "no acknowledgement"),
                       ("stale", "no acknowledgement"), ("silent", "no acknowledgement"),
                       ("close", "qSupported")):
        cases.append(Case("handshake with a stub that is %s" % mode, "stub", [vtice, "attach", stubs.target(mode),
                          "--batch", "/dev/null", "--no-cache"], rc=1, text=text, limit=15))
    cases.append(Case("attach /dev/zero", "stub", [vtice, "attach", "/dev/zero", "--batch", "/dev/null"],
                      rc=1, text="no acknowledgement", limit=15))
    cases.append(Case("hot conditional breakpoint, --timeout 2", "stub",
                      [vtice, "attach", stubs.target("hot"), "--batch", "-", "--timeout", "2", "--no-cache"],
                      stdin=b"break *0x0 if 0\ncontinue\n", rc=1, text="time limit", limit=8))
    cases.append(Case("finish re-hit in the same frame, --timeout 2", "stub",
                      [vtice, "attach", stubs.target("hot"), "--batch", "-", "--timeout", "2", "--no-cache"],
                      stdin=b"break *0x0\nignore 1 1000000000\ncontinue\n", rc=1,
                      text="time limit", limit=8))
    cases.append(Case("terminal controls from the stub", "terminal",
                      [vtice, "attach", stubs.target("hostile-text"), "--batch", "-", "--no-cache"],
                      stdin=b"monitor hi\n", rc=0, text="\\x1b[2J"))
    return cases


def signal_cases(vtice, ws, stubs):
    """Every signal in each waiting state: SIGTERM and SIGHUP end the run with
    128+N within 2 s; Ctrl-C (SIGINT) stops what the command waits for, as
    in gdb, and what follows depends on the state (the last column)."""
    deep_out = ws.path("deep1m.graph")
    states = [
        # (state, argv, stdin, what Ctrl-C gives: (exit, text, limit), or
        #  "prompt": nothing happens until the input ends)
        ("the handshake (silent stub)",
         [vtice, "attach", stubs.target("silent"), "--batch", "/dev/null"], None,
         (1, "interrupted (Ctrl-C)", 5)),
        ("the handshake (NUL stream)",
         [vtice, "attach", stubs.target("nul"), "--batch", "/dev/null"], None,
         (1, "interrupted (Ctrl-C)", 5)),
        ("continue on a stub that ignores the break-in (batch, --timeout 3)",
         [vtice, "attach", stubs.target("deaf"), "--batch", "-", "--no-cache", "--timeout", "3"], b"continue\n",
         (1, "did not stop", 15)),
        ("continue on a stub that ignores the break-in (commands on stdin)",
         [vtice, "attach", stubs.target("deaf"), "--no-cache"], b"continue\n", None),
        ("a hot conditional breakpoint",
         [vtice, "attach", stubs.target("hot"), "--batch", "-", "--no-cache"], b"break *0x0 if 0\ncontinue\n",
         (0, "Interrupted at", 10)),
        ("a request the stub never answers",
         [vtice, "attach", stubs.target("slow-read"), "--batch", "-", "--no-cache"], b"x/4x 0x1000\n",
         (1, "interrupted (Ctrl-C)", 16)),
        ("the prompt, waiting for a command",
         [vtice, "attach", stubs.target("good"), "--no-cache"], "hold", "prompt"),
        ("the open of a FIFO no one writes",
         [vtice, "syms", ws.path("fifo-nobody")], None, (128 + signal.SIGINT, "SIGINT", 5)),
        ("a report of a million-deep trace",
         [vtice, "report", ws.path("deep1m.vtrace"), "-o", deep_out], None, (128 + signal.SIGINT, "SIGINT", 5)),
    ]
    cases = []
    for state, argv, stdin, on_ctrl_c in states:
        setup = (lambda: ws.fifo("fifo-nobody")) if "FIFO" in state else None
        after = no_temp_left(ws) if "report" in state else None
        for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
            name = "%s in %s" % (signal.Signals(sig).name, state)
            # The report is over in about a second: its signal comes sooner.
            at = 0.3 if "report" in state else 1.0
            case = Case(name, "signal", argv, rc=128 + sig, limit=at + SIGNAL_BOUND_S + 3,
                        stdin=stdin if stdin is not None else None, send=(sig, at), setup=setup, after=after)
            if stdin == b"continue\n" and "stdin" in state:
                case.stdin, case.hold_after = stdin, True
            if sig == signal.SIGINT:
                if on_ctrl_c is None:
                    continue  # waits as gdb does: the two-Ctrl-C case below
                if on_ctrl_c == "prompt":
                    case.rc, case.close_stdin_at, case.limit = 0, 2.5, 6
                else:
                    case.rc, case.text, case.limit = on_ctrl_c
            cases.append(case)
    cases.append(Case("SIGINT twice on a stub that ignores the break-in", "signal",
                      [vtice, "attach", stubs.target("deaf"), "--no-cache"], stdin=b"continue\n", rc=1,
                      text="gave up the connection", limit=8, send=(signal.SIGINT, 1.0),
                      second=(signal.SIGINT, 2.0), hold_after=True))
    return cases


def no_temp_left(ws):
    def check(_text):
        left = [n for n in os.listdir(ws.dir) if ".vtice-tmp." in n]
        return "temporary output left: %s" % left if left else ""
    return check


def class_cases(vtice, ws, stubs):
    """The classes issue 22 listed, one case each."""
    good = stubs.target("good")
    cases = []
    for value in ("nan", "inf", "-1", "1e308", "0", "1e3", "0x10", " 5", ""):
        cases.append(Case("attach --timeout %r" % value, "numbers",
                          [vtice, "attach", good, "--batch", "/dev/null", "--timeout", value], rc=2,
                          text="--timeout"))
    for value in ("nan", "inf", "0", "-3", "1e9"):
        cases.append(Case("trace syscalls --duration %r" % value, "numbers",
                          [vtice, "trace", "syscalls", "--duration", value], rc=2, text="--duration"))
    cases.append(Case("trace syscall --count 0", "numbers", [vtice, "trace", "syscall", "openat", "--count", "0"],
                      rc=2, text="--count"))
    cases.append(Case("trace syscall --max-insns 2^64", "numbers",
                      [vtice, "trace", "syscall", "openat", "--max-insns", "18446744073709551616"], rc=2,
                      text="--max-insns"))
    for value in ("", "cpu", "TASK", "all,task"):
        cases.append(Case("trace syscall --step %r" % value, "numbers",
                          [vtice, "trace", "syscall", "openat", "--step", value], rc=2, text="--step"))
    for flag, value in (("--comm", "sixteen-chars-xx"), ("--pid", "0"), ("--pid", "1073741824"), ("--pid", "-5")):
        cases.append(Case("profile %s %r" % (flag, value), "numbers", [vtice, "profile", flag, value], rc=2,
                          text=flag))
    for flag, value in (("--hz", "0"), ("--hz", "10001"), ("--cpu", "1024"), ("--cpu", "-1"), ("--top", "0"),
                        ("--top", "1e3"), ("--stack-bytes", "24"), ("--stack-bytes", "4096"), ("--duration", "nan")):
        cases.append(Case("profile %s %r" % (flag, value), "numbers", [vtice, "profile", flag, value], rc=2,
                          text=flag))
    cases.append(Case("syms --slide 0x7fffffffffff", "numbers",
                      [vtice, "syms", ws.map, "--slide", "0x7fffffffffff"], rc=2, text="--slide"))
    cases.append(Case("attach --baud 12345", "numbers", [vtice, "attach", "/dev/null", "--baud", "12345"], rc=2,
                      text="--baud"))
    cases.append(Case("hv status --cpu 99999 (no device)", "numbers",
                      [vtice, "hv", "status", "--cpu", "99999", "--device", ws.map], rc=1))
    for target, text in (("unix:", "names no socket"), ("localhost: 1234", "blank"), ("", "empty"),
                         ("localhost:99999", "1..65535"), (ws.map, "regular file"),
                         (ws.path("dir"), "directory"), (ws.batch, "regular file")):
        cases.append(Case("attach target %r" % target, "targets",
                          [vtice, "attach", target, "--batch", "/dev/null"], rc=2 if "names" in text or
                          "blank" in text or "empty" in text or "65535" in text else 1, text=text,
                          inputs=[ws.map, ws.batch]))
    cases.append(Case("attach a copy of a kernel image as the target", "targets",
                      [vtice, "attach", ws.trace, "--batch", "/dev/null"], rc=1, text="regular file",
                      inputs=[ws.trace]))
    cases.append(Case("folded of a 20,000-deep recursion", "deep",
                      [vtice, "report", ws.path("deep.vtrace"), "--format", "folded"], rc=0,
                      after=lambda text: "" if len(text) < 4 << 20 else "output of %d bytes" % len(text)))
    for fmt in ("graph", "folded", "perfetto"):
        cases.append(Case("%s of a million-deep trace" % fmt, "deep",
                          [vtice, "report", ws.path("deep1m.vtrace"), "--format", fmt, "-o",
                           ws.path("deep1m." + fmt)], rc=0, limit=60))
    cases.append(Case("perfetto of a trace whose time goes back", "deep",
                      [vtice, "report", ws.path("backwards.vtrace"), "--format", "perfetto"], rc=0,
                      after=lambda text: "negative duration" if '"dur":-' in text else ""))
    cases.append(Case("a gzip bomb in a bzImage", "memory", [vtice, "syms", ws.bomb], rc=1,
                      text="inflates to more than", limit=60, inputs=[ws.bomb]))
    cases.append(Case("--btf that is not BTF", "targets",
                      [vtice, "attach", good, "--batch", "/dev/null", "--btf", ws.map], rc=2, text="--btf",
                      inputs=[ws.map]))
    for fmt in ("graph", "folded", "perfetto"):
        cases.append(Case("terminal controls in symbol names (%s)" % fmt, "terminal",
                          [vtice, "report", ws.path("names.vtrace"), "--format", fmt], rc=0, text="\\x1b"))
    cases.append(Case("terminal controls in syms --list names (ELF symbols)", "terminal",
                      [vtice, "syms", ws.path("evil.elf"), "--list"], rc=0, text="\\x1b",
                      setup=lambda: write_evil_elf(ws)))
    cases.append(Case("terminal controls in an argument echoed in an error", "terminal",
                      [vtice, "no-such-\x1b[2J\x9bcommand"], rc=2, text="\\x1b"))
    cases.append(Case("terminal controls in a syms query", "terminal",
                      [vtice, "syms", ws.map, "evil\x1b]0;x\x07"], rc=0, text="\\x1b"))
    return cases


def write_evil_elf(ws):
    """An ELF whose .symtab names a symbol with terminal controls (objcopy)."""
    c = ws.path("evil.c")
    with open(c, "w") as f:
        f.write("int f(void) { return 0; }\n")
    subprocess.run(["cc", "-c", c, "-o", ws.path("evil.o")], check=True)
    subprocess.run(["ld", "-e", "f", "-o", ws.path("plain.elf"), ws.path("evil.o")], check=True)
    subprocess.run(["objcopy", "--add-symbol", "evil\x1b[2J\x9b31m=.text:0,global,function",
                    ws.path("plain.elf"), ws.path("evil.elf")], check=True)


def build_table(vtice, ws, stubs):
    return (input_matrix(vtice, ws, stubs) + output_matrix(vtice, ws) + debugger_output_cases(vtice, ws, stubs)
            + doctor_cases(vtice, ws)
            + stub_cases(vtice, stubs) + signal_cases(vtice, ws, stubs) + class_cases(vtice, ws, stubs))


def report(outcomes):
    classes = {}
    for o in outcomes:
        c = classes.setdefault(o.case.cls, {"cases": 0, "failed": 0, "peak": 0})
        c["cases"] += 1
        c["failed"] += not o.ok
        c["peak"] = max(c["peak"], o.maxrss_kb)
    print("\n%-18s %6s %6s %12s" % ("class", "cases", "failed", "peak RSS"))
    for name in sorted(classes):
        c = classes[name]
        print("%-18s %6d %6d %9.1f MiB" % (name, c["cases"], c["failed"], c["peak"] / 1024))
    failed = [o for o in outcomes if not o.ok]
    print("\nhostile: %d cases, %d failed" % (len(outcomes), len(failed)))
    return not failed


def main():
    args = sys.argv[1:]
    only = None
    if "--only" in args:
        i = args.index("--only")
        only = args[i + 1]
        del args[i:i + 2]
    listing = "--list" in args
    args = [a for a in args if a != "--list"]
    if len(args) != 3:
        sys.exit(__doc__)
    vtice, hostile_trace, fixture = args
    ws = Workspace(hostile_trace, fixture)
    stubs = Stubs(ws.dir)
    try:
        table = build_table(os.path.abspath(vtice), ws, stubs)
        if only:
            table = [c for c in table if only in c.name]
        if listing:
            for c in table:
                print("%-10s %s" % (c.cls, c.name))
            return 0
        outcomes = []
        for case in table:
            o = run_case(case)
            ws.release_fifos()
            outcomes.append(o)
            print("%s %s (exit %d, %.2f s, %.0f MiB)%s" % ("PASS" if o.ok else "FAIL", case.name, o.rc,
                                                         o.seconds, o.maxrss_kb / 1024,
                                                         "" if o.ok else ": " + o.why), flush=True)
        return 0 if report(outcomes) else 1
    finally:
        stubs.stop()
        shutil.rmtree(ws.dir, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
