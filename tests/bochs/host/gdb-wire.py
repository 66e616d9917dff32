#!/usr/bin/env python3
"""Host end of the Bochs rig's com2gdb check (guest end: vtice-test gdbwire).

Runs real gdb with "target remote $VTICE_COM2" and its remote protocol debug
log on. The guest NAKs gdb's first packet, then answers it and the next one
with empty replies and stops answering (it is not a stub). Exit 0 only if
  - gdb's log shows the NAK received, its qSupported sent twice and
    identical, two replies received, and vMustReplyEmpty sent (gdb read
    what the guest wrote, checksums included), and
  - the guest reported com2gdb.wire PASS on its console (it saw gdb's
    packets with valid checksums, the resend unchanged, and gdb's acks).
gdb is then stopped: it waits for a reply that never comes.
"""

import os
import re
import subprocess
import sys
import time

WAIT_S = 180  # wall time for the guest's verdict
GUEST_VERDICT = re.compile(r"VTICE-TEST (\S+)\.wire (PASS|FAIL) ?(.*)")


def guest_verdict(serial_log, scenario):
    """The guest's (outcome, details) for SCENARIO.wire, or None yet."""
    try:
        text = open(serial_log, encoding="latin-1").read().replace("\r", "")
    except OSError:
        return None
    for match in GUEST_VERDICT.finditer(text):
        if match.group(1) == scenario:
            return match.group(2), match.group(3)
    return None


def wait_for_guest(serial_log, scenario):
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        verdict = guest_verdict(serial_log, scenario)
        if verdict:
            return verdict
        time.sleep(0.5)
    return None


def check_gdb_log(log):
    """Problems found in gdb's "set debug remote 1" output."""
    problems = []
    sent = re.findall(r"Sending packet: \$(qSupported[^#]*)#", log)
    if len(sent) < 2 or sent[0] != sent[1]:
        problems.append("gdb did not send qSupported twice, identical (sent %d)" % len(sent))
    if "Received Nak" not in log:
        problems.append("gdb never saw the guest's NAK")
    if len(re.findall(r"Packet received: *$", log, re.M)) < 2:
        problems.append("gdb did not receive two empty replies")
    if "Sending packet: $vMustReplyEmpty#" not in log:
        problems.append("gdb did not go on to vMustReplyEmpty")
    return problems


def main():
    address = os.environ.get("VTICE_COM2")
    serial_log = os.environ.get("VTICE_SERIAL_LOG")
    scenario = os.environ.get("VTICE_SCENARIO", "com2gdb")
    if not address or not serial_log:
        print("gdb-wire: VTICE_COM2 and VTICE_SERIAL_LOG must be set (run.sh sets them)", file=sys.stderr)
        return 2
    with open("gdb.log", "w") as out:
        gdb = subprocess.Popen(["gdb", "-nx", "-batch", "-ex", "set remotetimeout 10",
                                "-ex", "set debug remote 1", "-ex", "target remote " + address],
                               stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT)
        verdict = wait_for_guest(serial_log, scenario)
        time.sleep(0.5)  # gdb logs the last reply right after the guest's ack
        gdb.kill()  # SIGTERM makes gdb's Python print a traceback; it holds no state
        gdb.wait()
    log = open("gdb.log").read()
    print("gdb's remote protocol log:\n" + log)
    problems = check_gdb_log(log)
    if verdict is None:
        problems.append("the guest printed no %s.wire verdict in %d s" % (scenario, WAIT_S))
    elif verdict[0] != "PASS":
        problems.append("the guest says: " + verdict[1])
    for problem in problems:
        print("gdb-wire: FAIL: " + problem, file=sys.stderr)
    if not problems:
        print("gdb-wire: gdb and the guest exchanged NAK, resend, replies and acks over COM2")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
