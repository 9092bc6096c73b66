"""The receive side of an HCA port.

Packets are consumed at their tail (the HCA's receive buffers drain at line
rate), their credits return one wire delay later, and their latency is
recorded.  A packet whose DLID is not one of the port's LIDs is counted as
dropped ("misrouted").
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..packet import VL15, Packet
from ..port import TxPort, return_credits

if TYPE_CHECKING:  # pragma: no cover
    from . import HCA

__all__ = ["HcaRx"]


class HcaRx:
    """Receiving side of one HCA port."""

    __slots__ = ("node", "port", "upstream", "delay", "lid_lo", "lid_hi", "sim", "nvl", "capacity")

    def __init__(self, node: "HCA", port: int, nvl: int, capacity: int, delay: float):
        self.node = node
        self.sim = node.sim
        self.port = port
        self.nvl = nvl
        self.capacity = capacity
        self.upstream: TxPort | None = None
        self.delay = delay
        self.lid_lo = 0
        self.lid_hi = 0

    def capacities(self) -> list[int]:
        """Receive buffer size of each data VL, in credits."""
        return [self.capacity] * self.nvl

    def held(self, vl: int) -> int:
        """Credits held in the receive buffer of *vl*: always 0 (packets are consumed at
        their tail; the space returns as credits).
        """
        return 0  # consumed at the tail; space is in flight back as credits

    def receive(self, p: Packet, now: float) -> None:
        """Take in packet *p*, whose head arrives at *now*, at its tail.

        Data packets return their credits; an SMP goes to the HCA's management
        agent; a packet for one of the HCA's LIDs is delivered, a multicast copy
        is handed to the multicast layer, anything else is dropped as
        ``misrouted``.
        """
        t = p.tail_at
        if p.vl != VL15:
            return_credits(self.upstream, p.vl, t + self.delay, p.credits)
        elif self.node.sma is not None and getattr(p, "smp", None) is not None:  # an SMP: its agent (components/sm)
            self.node.sma.receive(p, self.port, t)
            return
        if not self.lid_lo <= p.dlid < self.lid_hi:
            if p.dlid >= 0xC000 and self.sim.multicast is not None:  # a multicast copy (cold path)
                self.sim.multicast.receive(p, t, self.node)
                return
            self.sim.drop(p, "misrouted", self.node)
            return
        self.sim.deliver(p, t, self.node)
