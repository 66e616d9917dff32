"""A logging TCP relay between an RSP client and a stub: what QEMU itself
answered, byte for byte, to compare a recording with (tests/qemu/replay_test.py)."""
import re
import socket
import threading


class Relay:
    """Listens on a free loopback port; forwards one client to host:port and
    keeps every packet each side sent, in order: a list of (side, payload)
    with side "c" (client) or "s" (stub)."""

    def __init__(self, port):
        self.target = int(port)
        self.listener = socket.socket()
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(1)
        self.port = self.listener.getsockname()[1]
        self.raw = []          # (side, bytes) as they came
        self.lock = threading.Lock()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _pump(self, src, dst, side):
        while True:
            try:
                data = src.recv(65536)
            except OSError:
                data = b""
            if not data:
                # The client leaving ends the stub's connection too, so the
                # next client (a new gdb, the rig's finish) can connect.
                try:
                    dst.shutdown(socket.SHUT_RDWR if side == "c" else socket.SHUT_WR)
                except OSError:
                    pass
                return
            with self.lock:
                self.raw.append((side, data))
            dst.sendall(data)

    def _serve(self):
        client, _ = self.listener.accept()
        stub = socket.create_connection(("127.0.0.1", self.target))
        # Small packets both ways, each waited for: no Nagle delay on either.
        for s in (client, stub):
            s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        up = threading.Thread(target=self._pump, args=(client, stub, "c"), daemon=True)
        up.start()
        self._pump(stub, client, "s")
        up.join(5)
        client.close()
        stub.close()

    def packets(self):
        """Each side's byte stream split into packet payloads ($...#cs); acks,
        interrupts and noise are dropped. Run-length encoding is expanded."""
        streams = {"c": b"", "s": b""}
        order = []
        with self.lock:
            chunks = list(self.raw)
        # Keep the interleaving: a packet belongs where its last byte arrived.
        for side, data in chunks:
            streams[side] += data
            while True:
                m = re.search(rb"\$([^#$]*)#[0-9a-fA-F]{2}", streams[side])
                if not m:
                    break
                order.append((side, expand(m.group(1))))
                streams[side] = streams[side][m.end():]
        return order


def expand(payload):
    """RSP run-length encoding: x*N repeats x N-29 more times."""
    out = bytearray()
    i = 0
    while i < len(payload):
        if payload[i:i + 1] == b"*" and out:
            out += out[-1:] * (payload[i + 1] - 29)
            i += 2
        else:
            out += payload[i:i + 1]
            i += 1
    return bytes(out).decode("latin-1")
