"""Virtual output queues in the switch input buffers (switch parameter ``inputQueues = "voq"``).

With ``inputQueues = "fifo"`` (the default) each input VL buffer is one FIFO
and only its head packet may cross the crossbar: a head whose output is busy
holds back the packets behind it that go elsewhere (head-of-line blocking;
a single switch under uniform traffic then saturates near 2 - sqrt(2) = 0.59
of the link rate, the classic result for FIFO input queueing).

With ``"voq"`` each input VL buffer keeps one queue per output port inside
it.  Flow control is unchanged, as IBA requires: the upstream port holds
credits for the whole VL buffer, whichever queue a packet joins, and gets
them back when the packet has crossed.  Every non-empty queue's head is a
candidate of its output port at once, so a packet waits only for its own
output; packets of one VL bound for one output still leave in order.  The
input's crossbar connection still carries one packet at a time, and the
output ports choose among inputs as ``crossbarArbiter`` says (first come or
weighted round robin, :mod:`ibfabric.components.crossbar`).

VL15 keeps its single FIFO.  Routing options, split escape buffers and
lifetime droppers, whose mechanisms are defined on one FIFO per VL, need
``inputQueues = "fifo"``; output buffers work with either.
"""

from __future__ import annotations

from .packet import VL15
from .port import INF
from .switch import SwitchRx

__all__ = ["VoqPool", "VoqQueue", "VoqRx"]


class VoqQueue(list):
    """The packets of one input VL bound for one output port (looks like an input buffer to the ports).

    The queue is the list of its packets itself (``q`` is the queue): one object where a queue
    object and a list of packets were two, each a cold cache line of a large fabric at every
    packet-hop.  :func:`~ibfabric.components.switch.cross` takes the head with ``del q[0]``, cold
    paths with :meth:`popleft`, as from a deque.  It compares and hashes as the object it is, not as
    a list of packets.

    A queue exists only while it holds packets: :func:`~ibfabric.components.switch.cross` hands an
    emptied one back to its pool, which gives it to the next output its input VL stores a packet for.
    """

    __slots__ = ("q", "vl", "rx", "pool", "out", "_occ")

    #: an emptied queue goes back to its pool (:func:`~ibfabric.components.switch.cross`)
    recycled = True
    __hash__ = object.__hash__

    def __eq__(self, other) -> bool:
        return self is other

    def __ne__(self, other) -> bool:
        return self is not other

    def __init__(self, pool: "VoqPool", out: int):
        super().__init__()
        self.q = self
        self.pool = pool
        self.vl = pool.vl
        self.rx = pool.rx
        self.out = out
        self._occ = 0

    def popleft(self):
        """Remove and return the head packet."""
        return self.pop(0)

    @property
    def occ(self) -> int:
        """Credits held by this queue's packets (its pool counts the sum)."""
        return self._occ

    @occ.setter
    def occ(self, value: int) -> None:
        self.pool.occ += value - self._occ
        self._occ = value

    @property
    def capacity(self) -> int:
        """The credits of the shared buffer of the input VL, which the queue draws from."""
        return self.pool.capacity

    @property
    def name(self) -> str:
        """The queue as messages name it: ``<buffer name> to port <out>``."""
        return f"{self.pool.name} to port {self.out}"

    def __repr__(self) -> str:
        return f"<VoqQueue {self.name} {len(self.q)} pkts {self._occ} credits>"

    def release(self) -> None:
        """Give the (empty) queue back to its pool."""
        pool = self.pool
        pool.voqs[self.out] = None
        pool.free.append(self)


class VoqPool:
    """One input VL buffer of a switch with virtual output queues: the credits its queues share."""

    __slots__ = ("vl", "rx", "capacity", "occ", "max_occ", "voqs", "free", "hq_expire")

    def __init__(self, rx, vl: int, capacity: int, ports: list[int]):
        self.vl = vl
        self.rx = rx
        self.capacity = capacity
        self.occ = 0
        self.max_occ = 0
        self.hq_expire = INF  # no lifetimes with VOQs: the deadlock finder reads it of every buffer
        # a queue is there while it holds packets (taken from ``free``, or made, when one arrives for
        # an output that has none; given back when emptied): a 64-port switch has 4,096 (input,
        # output) pairs per VL, and one input VL buffer holds packets for a few of them at a time
        self.voqs: list[VoqQueue | None] = [None] * (max(ports, default=0) + 1)
        self.free: list[VoqQueue] = []

    @property
    def q(self) -> list:
        """Every packet of the buffer, queue by queue (for counting and inspection)."""
        return [p for v in self.voqs if v is not None for p in v.q]

    def heads(self) -> list:
        """The head packet of every non-empty queue."""
        return [v.q[0] for v in self.voqs if v is not None and v.q]

    @property
    def name(self) -> str:
        """The shared buffer as messages name it: ``<node path>.port[<port>] VL<vl>``."""
        return f"{self.rx.node.path}.port[{self.rx.port}] VL{self.vl}"

    def __repr__(self) -> str:
        return f"<VoqPool {self.name} {self.occ}/{self.capacity} credits>"


class VoqRx(SwitchRx):
    """A switch input port whose data VL buffers hold one queue per output port."""

    __slots__ = ()

    def __init__(self, node, port: int, nvl: int, buf_credits: int, vl15_credits: int, delay: float):
        super().__init__(node, port, nvl, buf_credits, vl15_credits, delay)
        ports = sorted(node.links)
        self.bufs = tuple(VoqPool(self, vl, buf_credits, ports) for vl in range(nvl))

    def receive(self, p, now: float) -> None:
        try:
            port, op, sl2vl = self.table[self.index[p.dlid]]
        except IndexError:
            op = None
        vl = p.vl
        if vl == VL15 or op is None:
            SwitchRx.receive(self, p, now)  # VL15, local and unroutable packets: as in any switch
            return
        pool = self.bufs[vl]
        ovl = sl2vl[p.sl]
        if ovl >= op.nvl:
            self._discard(p, pool, "sl2vl-drop")
            return
        if self.drop_check and self.dropper.on_arrival(p, pool, now):
            self._discard(p, pool, "dropper")
            return
        p.out_port = op
        p.out_vl = ovl
        # store it in its output's queue (one from the pool's free list if it has none); a new head
        # becomes a candidate of its output port (inline, as in SwitchRx.receive: the per-packet path)
        v = pool.voqs[port]
        if v is None:
            free = pool.free
            if free:
                v = free.pop()
                v.out = port
            else:
                v = VoqQueue(pool, port)
            pool.voqs[port] = v
        t = p.ready_at = p.head_at + self.route_delay
        q = v.q
        q.append(p)
        cr = p.credits
        v._occ += cr
        occ = pool.occ = pool.occ + cr
        if occ > pool.max_occ:
            pool.max_occ = occ
        if len(q) == 1:
            op.cands[ovl].append(v)
            if self.xbar_free > t:
                t = self.xbar_free
            op.poke(t)
