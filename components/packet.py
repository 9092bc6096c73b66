"""InfiniBand packets as they move through the data path.

A :class:`Packet` carries the fields of the Local Route Header that
forwarding needs (SLID, DLID, SL, VL, LNH), its size on the wire (headers
included) and bookkeeping: when it was created, injected and where it is.
Packets are slotted attrs objects (never simulation components); one object
travels the whole path.
"""

from __future__ import annotations

import attrs

__all__ = ["Packet", "CREDIT_BYTES", "credits_for", "VL15"]

#: Bytes per flow-control credit.
CREDIT_BYTES = 64
#: The subnet-management virtual lane.
VL15 = 15


def credits_for(size: int) -> int:
    """Credits (64-byte blocks) that a packet of *size* bytes occupies."""
    return -(-size // CREDIT_BYTES)


@attrs.define(slots=True, eq=False, repr=False)
class Packet:
    """One packet.

    Header fields: ``slid``, ``dlid``, ``sl`` (service level), ``vl`` (the
    virtual lane it occupies on its current link), ``lnh`` (link next header:
    2 = IBA local).  ``size`` is the wire size in bytes and ``credits`` the
    64-byte credits it needs.  ``src``/``dst`` are traffic-endpoint indices;
    ``flow`` is a connection id (0 for best-effort traffic) and ``cls`` the
    traffic class (an index into :data:`ibfabric.measure.TRAFFIC_CLASSES`: 0
    best effort, 1 CBR, 2 real time, 3 control); ``msg`` and ``seq`` place it
    in its message (``last`` marks the final packet).

    Timing: ``created`` (entered the source's send queue), ``injected``
    (first bit on the wire at the source), and per hop ``head_at``/``tail_at``
    (first and last bit arrive at the current input buffer) and ``ready_at``
    (routing and arbitration done, may cross the crossbar).  ``out_port`` and
    ``out_vl`` are the routing decision at the current switch, and ``opt``
    the routing option it took there (0: the only or the escape option;
    see :mod:`ibfabric.components.options`).  ``keep`` marks a packet that
    selective droppers never discard (:mod:`ibfabric.plugins.droppers`);
    ``paths`` is the set of path names (a bit mask) an adaptive packet on
    Kim's multipath tables is still on.
    """

    slid: int
    dlid: int
    sl: int
    size: int
    credits: int
    src: int = -1
    dst: int = -1
    created: float = 0.0
    vl: int = 0
    lnh: int = 2
    flow: int = 0
    msg: int = -1
    seq: int = 0
    last: bool = True
    injected: float = 0.0
    head_at: float = 0.0
    tail_at: float = 0.0
    ready_at: float = 0.0
    out_port: object = None
    out_vl: int = 0
    hops: int = 0
    cls: int = 0
    opt: int = 0
    keep: bool = False
    paths: int = -1

    @classmethod
    def make(cls, slid: int, dlid: int, size: int, *, sl: int = 0, **kw) -> "Packet":
        """A packet with its credits derived from its size."""
        return cls(slid, dlid, sl, size, credits_for(size), **kw)

    @property
    def is_management(self) -> bool:
        """Whether the packet travels on VL15, the management VL."""
        return self.vl == VL15

    def __repr__(self) -> str:
        return (
            f"<Packet {self.slid}->{self.dlid} SL{self.sl} VL{self.vl} {self.size}B"
            f" msg={self.msg}/{self.seq} created={self.created:.1f}>"
        )
