"""Run-wide packet accounting: generated, injected, delivered and dropped packets.

Deliveries are kept per packet in compact typed arrays (``array.array``,
8 bytes or less per field), never as lists of Python objects, and turned
into numpy arrays when results are computed.
"""

from __future__ import annotations

from array import array
from collections import Counter

import numpy as np

__all__ = ["PacketStats"]


class PacketStats:
    """Counters and the delivery log of one simulation.

    ``window`` is the start of the measurement window (the warm-up time):
    offered bytes count messages created at or after it.  What was delivered
    in the window is found from the delivery log (:mod:`ibfabric.measure`).
    """

    def __init__(self, window: float = 0.0):
        self.window = window
        self.generated = 0
        self.offered_bytes = 0  # bytes of messages created in the window
        self.offered_packets = 0  # their packets
        self.injected = 0
        self.dropped: Counter[str] = Counter()
        self.local: list[float] = []  # tail times of packets consumed by switches
        self.created = array("d")
        self.injected_at = array("d")
        self.delivered_at = array("d")
        self.size = array("l")
        self.sl = array("b")
        self.src = array("l")
        self.dst = array("l")
        self.hops = array("l")
        self.flow = array("l")
        self.msg = array("l")
        self.last = array("b")
        self.cls = array("b")

    def add_generated(self, n: int, nbytes: int, t: float) -> None:
        self.generated += n
        if t >= self.window:
            self.offered_bytes += nbytes
            self.offered_packets += n

    def add_delivery(self, p, t: float) -> None:
        self.created.append(p.created)
        self.injected_at.append(p.injected)
        self.delivered_at.append(t)
        self.size.append(p.size)
        self.sl.append(p.sl)
        self.src.append(p.src)
        self.dst.append(p.dst)
        self.hops.append(p.hops)
        self.flow.append(p.flow)
        self.msg.append(p.msg)
        self.last.append(p.last)
        self.cls.append(p.cls)

    def arrays(self) -> dict[str, np.ndarray]:
        """The delivery log as numpy arrays (one entry per delivered packet, in delivery order)."""
        out = {}
        for name in ("created", "injected_at", "delivered_at", "size", "sl", "src", "dst", "hops", "flow", "msg", "last", "cls"):
            a = getattr(self, name)
            out[name] = np.frombuffer(a, dtype=a.typecode).copy() if len(a) else np.zeros(0, dtype=a.typecode)
        out["last"] = out["last"].astype(bool)
        return out

    def on_wire_to_hosts(self, now: float) -> int:
        d = np.frombuffer(self.delivered_at, dtype="d") if len(self.delivered_at) else np.zeros(0)
        return int((d > now).sum()) + sum(1 for t in self.local if t > now)
