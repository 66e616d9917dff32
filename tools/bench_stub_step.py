#!/usr/bin/env python3
"""How fast stock gdb single-steps through the hypervisor stub over a
115,200-baud serial line (issue 21 §8), side by side with another build of
the stub (--peer SIM: e.g. the one before register expedition).

The stub's RSP engine (the module's own C, in vtice-rsp-sim over its fake
machine) sits behind a relay that lets bytes through at a serial line's
rate: 115,200 baud, 8N1, 11,520 bytes/s each way, no added latency. gdb
connects to the relay and runs `stepi N`; the figure is steps per second of
wall time for the whole command, what a user waits for. What each figure
includes: gdb's own work, the relay's pacing of every byte both ways, and
the engine; not a real UART's latency nor the hypervisor's exits.

Usage: bench_stub_step.py SIM [--peer SIM] [--steps N] [--baud B]
Prints one line per stub and the ratio.
"""
import argparse
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def pace(src, dst, bytes_per_s):
    """Copies src to dst, one byte per 1/bytes_per_s seconds at most."""
    due = time.monotonic()
    try:
        while True:
            data = src.recv(4096)
            if not data:
                break
            due = max(due, time.monotonic()) + len(data) / bytes_per_s
            delay = due - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            dst.sendall(data)
    except OSError:
        pass
    finally:
        for s in (src, dst):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


def serial_relay(listen_port, stub_port, bytes_per_s):
    server = socket.socket()
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind(("127.0.0.1", listen_port))
    server.listen(1)

    def run():
        client, _ = server.accept()
        stub = socket.create_connection(("127.0.0.1", stub_port))
        for a, b in ((client, stub), (stub, client)):
            a.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            threading.Thread(target=pace, args=(a, b, bytes_per_s), daemon=True).start()
    threading.Thread(target=run, daemon=True).start()
    return server


def steps_per_second(sim, steps, bytes_per_s):
    stub_port, relay_port = free_port(), free_port()
    proc = subprocess.Popen([sim, str(stub_port)], stdout=subprocess.PIPE, text=True)
    try:
        if proc.stdout.readline().strip() != "listening":
            sys.exit("%s did not start" % sim)
        relay = serial_relay(relay_port, stub_port, bytes_per_s)
        with tempfile.NamedTemporaryFile("w", suffix=".gdb", delete=False) as f:
            f.write("set confirm off\nset pagination off\ntarget remote 127.0.0.1:%d\n"
                    "stepi 1\nstepi %d\ndetach\n" % (relay_port, steps))
            script = f.name
        start = time.monotonic()
        run = subprocess.run(["gdb", "-nx", "-batch", "-x", script], capture_output=True, text=True,
                             timeout=600)
        wall = time.monotonic() - start
        os.unlink(script)
        relay.close()
        if run.returncode != 0:
            sys.exit("gdb failed: " + run.stderr[-500:])
        return steps / wall, wall
    finally:
        proc.kill()
        proc.wait()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("sim")
    ap.add_argument("--peer", help="another vtice-rsp-sim to compare with")
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--baud", type=int, default=115200)
    args = ap.parse_args()
    if not shutil.which("gdb"):
        print("SKIP: gdb is not installed")
        return 77
    bytes_per_s = args.baud / 10.0	# 8N1: ten bits a byte
    rate, wall = steps_per_second(args.sim, args.steps, bytes_per_s)
    print("stub %s: %.1f stepi/s (%d steps in %.2f s at %d baud)" % (args.sim, rate, args.steps, wall, args.baud))
    if args.peer:
        peer, pwall = steps_per_second(args.peer, args.steps, bytes_per_s)
        print("peer %s: %.1f stepi/s (%d steps in %.2f s)" % (args.peer, peer, args.steps, pwall))
        print("ratio: %.2fx" % (rate / peer))
    return 0


if __name__ == "__main__":
    sys.exit(main())
