"""What the Bochs rig's host drivers share (stub_gdb.py inside gdb,
crash_rsp.py on its own): CHECK lines, the guest's figures and console,
a bare RSP client on the stub's line, and paths in the source tree.
Environment: tests/bochs/lib/host.sh."""

import os
import re
import socket
import sys
import time

FAILURES = [0]


def check(name, ok, details=""):
    print("CHECK %s %s %s" % (name, "PASS" if ok else "FAIL", details), flush=True)
    if not ok:
        FAILURES[0] += 1
    return ok


def run_driver(name, main, line_check=None):
    """Runs a driver's main; a line to the stub that fails or closes is the
    check LINE_CHECK's failure (uncaught without one). Exits with the
    number of failures, at most 100."""
    try:
        main()
    except (OSError, EOFError) as e:
        if not line_check:
            raise
        check(line_check, False, "the line to the stub failed: %s" % e)
    print("%s: %d failures" % (name, FAILURES[0]), flush=True)
    sys.exit(min(FAILURES[0], 100))


def figures():
    """VTICE-FIGURE test.key=value lines the guest printed so far."""
    out = {}
    with open(os.environ["VTICE_SERIAL_LOG"], errors="replace") as log:
        for line in log:
            m = re.match(r"VTICE-FIGURE (\S+)=(\S+)", line.strip())
            if m:
                out[m.group(1)] = m.group(2)
    return out


class Rsp:
    """A bare RSP client on a raw socket, for what gdb will not send."""

    def __init__(self):
        host, port = os.environ["VTICE_COM2"].rsplit(":", 1)
        self.sock = socket.create_connection((host, int(port)), timeout=120)
        self.buf = b""

    def send(self, raw):
        self.sock.sendall(raw)

    def packet(self, data):
        body = data.encode() if isinstance(data, str) else data
        self.send(b"$" + body + b"#%02x" % (sum(body) & 0xFF))

    def _more(self):
        chunk = self.sock.recv(4096)
        if not chunk:
            raise EOFError("the line closed")
        self.buf += chunk

    def reply(self):
        """The next packet's body (acked); '+'/'-' before it are skipped."""
        while True:
            start = self.buf.find(b"$")
            end = self.buf.find(b"#", start) if start >= 0 else -1
            if end >= 0 and len(self.buf) >= end + 3:
                break
            self._more()
        body = self.buf[start + 1:end]
        self.buf = self.buf[end + 3:]
        self.send(b"+")
        return self.expand(body.decode(errors="replace"))

    @staticmethod
    def expand(body):
        """Run-length encoding (GDB manual, Overview): X*N is X, N-29 more times."""
        out, i = [], 0
        while i < len(body):
            if body[i] == "*" and out and i + 1 < len(body):
                out.append(out[-1] * (ord(body[i + 1]) - 29))
                i += 2
            else:
                out.append(body[i])
                i += 1
        return "".join(out)

    def ack(self):
        """The first '+' or '-' that arrives."""
        while True:
            for i, c in enumerate(self.buf):
                if c in b"+-":
                    self.buf = self.buf[i + 1:]
                    return chr(c)
            self._more()

    def close(self):
        self.sock.close()




def write_domainname(rsp, uts_addr, cue):
    """The host's cue to the guest (wait_for_domainname in the scenarios):
    CUE and its NUL written with M into new_utsname.domainname, the sixth of
    init_uts_ns's 65-byte fields, at UTS_ADDR. Returns the stub's reply."""
    domain = uts_addr + 5 * 65
    rsp.packet("M%x,%x:%s" % (domain, len(cue) + 1, (cue + b"\0").hex()))
    return rsp.reply()


def stop_thread(stop):
    """The thread (CPU + 1) a T stop reply names, or None."""
    m = re.search(r"thread:([0-9a-f]+);", stop)
    return int(m.group(1), 16) if m else None


RIP_OFFSET = 16 * 16  # 'g': sixteen 8-byte GPRs, then RIP (target.xml order)


def thread_g(rsp, thread):
    """The 'g' reply of THREAD (CPU + 1) of the stopped machine (hex, in
    target.xml order: 16 GPRs, rip, eflags, cs, ...), or None."""
    rsp.packet("Hg%x" % thread)
    if rsp.reply() != "OK":
        return None
    rsp.packet("g")
    regs = rsp.reply()
    return None if len(regs) < RIP_OFFSET + 32 or regs.startswith("E") else regs


def g_field(regs, offset, size):
    """A little-endian register of SIZE bytes at hex OFFSET of a 'g' reply."""
    return int.from_bytes(bytes.fromhex(regs[offset:offset + 2 * size]), "little")


def stopped_rip(rsp, thread):
    """RIP of THREAD (CPU + 1) of the stopped machine, or None."""
    regs = thread_g(rsp, thread)
    return g_field(regs, RIP_OFFSET, 8) if regs else None


def thread_registers(rsp, thread):
    """rip, rsp, eflags and cs of THREAD as text, or None."""
    regs = thread_g(rsp, thread)
    if not regs:
        return None
    return "rip 0x%x rsp 0x%x eflags 0x%x cs 0x%x" % (
        g_field(regs, RIP_OFFSET, 8), g_field(regs, 7 * 16, 8), g_field(regs, RIP_OFFSET + 16, 4),
        g_field(regs, RIP_OFFSET + 24, 4))


def serial_size():
    """Bytes of the guest console so far."""
    try:
        return os.path.getsize(os.environ["VTICE_SERIAL_LOG"])
    except OSError:
        return 0


# The rig stops Bochs as hung after 240 s with nothing on the console or
# COM2 (run.sh --stall); a driver that waits on a quiet guest looks first.
GUEST_QUIET_S = 150


def stopped_all_along(rsp):
    """After an unanswered break-in: '?' is answered only by a stub that
    reads packets, i.e. one that never let the machine run."""
    rsp.packet("?")
    rsp.sock.settimeout(10)
    try:
        return "yet it answered '?' with %s: the machine never ran" % rsp.reply()
    except socket.timeout:
        return "nor '?' within 10 s: VMX root itself is stuck, or the line is"
    finally:
        rsp.sock.settimeout(120)


def where_the_machine_stands(rsp):
    """Break in on a running guest that went quiet, and say where each CPU
    stands and what the hooks and exits counted: the evidence a hang would
    otherwise take with it. Leaves the machine stopped when the stub
    answered. One line of text."""
    rsp.send(b"\x03")
    rsp.sock.settimeout(30)
    try:
        stop = rsp.reply()
    except socket.timeout:
        return "the stub answered no break-in within 30 s; " + stopped_all_along(rsp)
    finally:
        rsp.sock.settimeout(120)
    said = ["the stub stopped it: " + stop]
    for thread in range(1, 9):
        regs = thread_registers(rsp, thread)
        if not regs:
            break
        said.append("CPU %d: %s" % (thread - 1, regs))
    for command in ("exits", "hooks"):
        said.append(monitor(rsp, command).strip().replace("\n", "; "))
    return " | ".join(said)


def monitor(rsp, command):
    """qRcmd: the output comes as O packets then OK, or as one hex reply."""
    rsp.packet("qRcmd," + command.encode().hex())
    text = ""
    while True:
        reply = rsp.reply()
        if reply == "OK" or reply.startswith("E"):
            return text
        if reply.startswith("O") and len(reply) > 1:
            text += bytes.fromhex(reply[1:]).decode(errors="replace")
            continue
        return text + bytes.fromhex(reply).decode(errors="replace")


def wait_for_guest_line(marker, timeout=300):
    deadline = time.time() + timeout
    while time.time() < deadline:
        with open(os.environ["VTICE_SERIAL_LOG"], errors="replace") as log:
            if marker in log.read():
                return True
        time.sleep(0.5)
    return False


def guest_vmlinux():
    """The uncompressed image of the kernel the guest boots (run.sh passes
    its directory), else the first one under build*/kernel/."""
    kdir = os.environ.get("VTICE_KERNEL_DIR")
    if kdir and os.path.exists(os.path.join(kdir, "vmlinux")):
        return os.path.join(kdir, "vmlinux")
    return find_one("build*/kernel/*/vmlinux")


def find_one(pattern):
    import glob
    hits = sorted(glob.glob(os.path.join(os.environ.get("VTICE_ROOT", "."), pattern)))
    return hits[0] if hits else None
