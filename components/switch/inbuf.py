"""Input buffer organisations of a switch port: one per input VL (DESIGN §3, the first stage).

A switch input VL buffer holds the packets its upstream port sent it
credits for; the upstream port holds credits for the *whole* VL buffer, as
IBA requires, whatever the organisation inside.  Three organisations:

``fifo`` (:class:`InputBuffer`)
    One FIFO: only its head packet may cross the crossbar (head-of-line
    order within a VL; a single switch under uniform traffic saturates
    near 2 - sqrt(2) = 0.59 of the link rate, the classic result).
``voq`` (:class:`VoqPool`)
    A queue per output port inside the buffer (virtual output queues):
    every non-empty queue's head is offered to its output at once, so a
    packet waits only for its own output; packets of one VL bound for one
    output still leave in order.  Multicast packets have one queue of
    their own (:data:`MCAST_QUEUE`), and so have packets whose routing
    option is chosen at arbitration time (:data:`OPTIONS_QUEUE`).
``split`` (:class:`SplitBuffer`)
    One FIFO split into an adaptive part and an escape part of
    ``escapeBufferSize`` (Martínez et al. 2003 §4.4, Fig. 2), with a second
    read point (:class:`EscapeRead`) into the escape part.  Only with
    routing options (the one rule: :func:`ibfabric.components.switch.plan.check`).

**Read points.**  What an organisation offers the output ports is a *read
point*: the FIFO itself, a virtual output queue, or the escape read point.
The crossbar and the output ports see only this interface:

- ``q``: its packets, ``q[0]`` the one it offers;
- ``rx``: the input port (``xbar_free``, ``xbar_bt``, ``delay``,
  ``upstream``, ``port``);
- ``vl``: the input VL; ``since``: when its head became its head (the
  time the previous head left, or that head's arrival: IBA's HOQ time,
  Kim et al.'s *HQLifetime*, which lifetime watchers read);
- ``take(p, now)``: *p*, its head, starts crossing at *now*: it leaves
  the buffer, its credits go back upstream once its tail has left (one
  wire delay later), the input's crossbar connection is busy until then
  (returned) and ``crossbarSetup`` longer (``rx.xsetup``), and the next
  head is offered to its output;
- ``discard(now, reason)``: its head is dropped (port down, lifetime):
  as a take, without the crossing;
- ``name``.

An organisation (one per input VL, ``rx.bufs[vl]``) adds ``store(p, op,
ovl)`` (the receive side's call after routing), ``occ``/``capacity``
(credits held and its size), ``reads()`` (its read points holding packets,
for the deadlock finder and failures), ``packets()``, ``arriving(now)``
(the packets whose tail has not arrived: what a link failure loses) and
``remove(p)``, ``clear()``.

Offering a read point to its packet's *route target* ``op`` (an output
port, or a routing-option set or multicast route standing for several) is
``op.cands[ovl].append(read point)`` (``op.mcands`` for VL15) and
``op.poke(t)`` with the time it may cross: ``max(ready_at, xbar_free)``.
"""

from __future__ import annotations

from collections import deque

from ..packet import VL15
from ..port import return_credits

__all__ = ["InputBuffer", "Vl15Buffer", "VoqPool", "VoqQueue", "SplitBuffer", "EscapeRead", "MCAST_QUEUE",
           "OPTIONS_QUEUE", "offer", "withdraw"]

#: The queue of a virtual-output-queue buffer that holds its multicast packets (the last one).
MCAST_QUEUE = -1
#: The queue that holds the packets whose routing options are chosen at arbitration time (no output yet).
OPTIONS_QUEUE = -2


def offer(cand, p, after: float) -> None:
    """Make *p*, read through *cand*, a candidate of its route target, which looks once it may cross
    (not before *after*).  The organisations do the same inline on the per-packet path."""
    op = p.out_port
    if p.out_vl == VL15:
        op.mcands.append(cand)
    else:
        op.cands[p.out_vl].append(cand)
    t = p.ready_at
    if after > t:
        t = after
    op.poke(t)


def withdraw(cand) -> None:
    """Take *cand*, whose head is routed somewhere, out of the candidates of its route target."""
    p = cand.q[0]
    op = p.out_port
    unregister = getattr(op, "unregister", None)
    if unregister is not None:  # a routing-option set or a multicast route: several outputs know it
        unregister(cand)
        return
    c = op.mcands if p.out_vl == VL15 else op.cands[p.out_vl]
    if cand in c:
        c.remove(cand)


class InputBuffer:
    """One data VL of a switch input port as one FIFO (``inputQueues = "fifo"``); its own read point.

    ``capacity`` and ``occ`` count 64-byte credits.
    """

    __slots__ = ("q", "vl", "rx", "capacity", "occ", "since")

    def __init__(self, rx, vl: int, capacity: int):
        self.q: deque = deque()
        self.vl = vl
        self.rx = rx
        self.capacity = capacity
        self.occ = 0
        self.since = 0.0

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name} {len(self.q)} pkts {self.occ}/{self.capacity} credits>"

    @property
    def name(self) -> str:
        """The buffer as messages name it: ``<node path>.port[<port>] VL<vl>``."""
        return f"{self.rx.node.path}.port[{self.rx.port}] VL{self.vl}"

    # -------------------------------------------------------- per packet

    def store(self, p, op, ovl: int) -> None:
        """Append the routed packet *p* (route target *op*, output VL *ovl*); a new head is offered."""
        t = p.ready_at = p.head_at + self.rx.route_delay
        q = self.q
        q.append(p)
        self.occ += p.credits
        if len(q) == 1:
            op.cands[ovl].append(self)
            xf = self.rx.xbar_free
            op.poke(xf if xf > t else t)

    def take(self, p, now: float) -> float:
        """*p*, the head, starts crossing at *now*; returns when it has crossed (see the module)."""
        q = self.q
        q.popleft()
        rx = self.rx
        cr = p.credits
        xend = now + p.size * rx.xbar_bt
        if p.tail_at > xend:
            xend = p.tail_at
        rx.xbar_free = xf = xend + rx.xsetup
        self.occ -= cr
        self.since = now
        return_credits(rx.upstream, self.vl, xend + rx.delay, cr)
        if q:
            n = q[0]
            op = n.out_port
            op.cands[n.out_vl].append(self)
            t = n.ready_at
            op.poke(xf if xf > t else t)
        return xend

    # ------------------------------------------------------------ cold

    def discard(self, now: float, reason: str) -> None:
        """Drop the head (no longer a candidate anywhere) at *now*; its space frees as its tail arrives."""
        q = self.q
        p = q.popleft()
        rx = self.rx
        self.occ -= p.credits
        self.since = now
        self._give_back(p, now)
        rx.sim.drop(p, reason, rx.node)
        if q:
            offer(self, q[0], rx.xbar_free if rx.xbar_free > now else now)

    def _give_back(self, p, now: float) -> None:
        """The credits of *p*, which left without crossing, go back upstream as its tail arrives."""
        rx = self.rx
        t = p.tail_at if p.tail_at > now else now
        return_credits(rx.upstream, self.vl, t + rx.delay, p.credits)

    def reads(self) -> list:
        """The read points that hold packets: this FIFO, if it is not empty."""
        return [self] if self.q else []

    def packets(self) -> list:
        """Every packet of the buffer."""
        return list(self.q)

    def held(self) -> int:
        """Credits occupied."""
        return self.occ

    def arriving(self, now: float) -> list:
        """The packets whose tail has not arrived by *now* (the last ones of the FIFO)."""
        out = []
        for p in reversed(self.q):
            if p.tail_at <= now:
                break
            out.append(p)
        return out

    def remove(self, p) -> None:
        """Take *p* out of the buffer (a packet lost on its link, or in a failed node), without credits:
        the link's credits are void."""
        q = self.q
        if q and q[0] is p:
            withdraw(self)
            q.popleft()
            self.occ -= p.credits
            if q:
                offer(self, q[0], self.rx.xbar_free)
        else:
            q.remove(p)
            self.occ -= p.credits

    def clear(self) -> list:
        """Empty the buffer (its node failed; the candidates of its ports are cleared by the caller);
        return what it held."""
        out = list(self.q)
        self.q.clear()
        self.occ = 0
        return out


class Vl15Buffer(InputBuffer):
    """The VL15 buffer of an input port, or of a switch agent's management port: a FIFO without flow
    control (a VL15 packet that finds it full is dropped, as IBA allows), offered to the outputs' VL15
    candidates (``mcands``)."""

    __slots__ = ()

    def store(self, p, op, ovl: int) -> None:
        t = p.ready_at = p.head_at + self.rx.route_delay
        q = self.q
        q.append(p)
        self.occ += p.credits
        if len(q) == 1:
            op.mcands.append(self)
            xf = self.rx.xbar_free
            op.poke(xf if xf > t else t)

    def take(self, p, now: float) -> float:
        q = self.q
        q.popleft()
        rx = self.rx
        xend = now + p.size * rx.xbar_bt
        if p.tail_at > xend:
            xend = p.tail_at
        rx.xbar_free = xf = xend + rx.xsetup
        self.occ -= p.credits
        self.since = now
        if q:
            n = q[0]
            op = n.out_port
            op.mcands.append(self)
            t = n.ready_at
            op.poke(xf if xf > t else t)
        return xend

    def _give_back(self, p, now: float) -> None:
        pass  # no flow control on VL15


# ------------------------------------------------------------ virtual output queues


class VoqQueue(list):
    """The packets of one input VL bound for one output port: a read point (see the module).

    The queue is the list of its packets itself (``q`` is the queue: one object where a queue object
    and a list of packets were two, each a cold cache line of a large fabric at every packet-hop).  It
    compares and hashes as the object it is, not as a list of packets.  A queue exists only while it
    holds packets: :meth:`take` hands an emptied one back to its pool.
    """

    __slots__ = ("q", "vl", "rx", "pool", "out", "occ", "since")
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
        self.occ = 0
        self.since = 0.0

    @property
    def capacity(self) -> int:
        """The credits of the shared buffer of the input VL, which the queue draws from."""
        return self.pool.capacity

    @property
    def name(self) -> str:
        """The queue as messages name it: ``<buffer name> to port <out>`` (or ``multicast``)."""
        what = {MCAST_QUEUE: "multicast", OPTIONS_QUEUE: "options"}.get(self.out, f"to port {self.out}")
        return f"{self.pool.name} {what}"

    def __repr__(self) -> str:
        return f"<VoqQueue {self.name} {len(self)} pkts {self.occ} credits>"

    def take(self, p, now: float) -> float:
        """*p*, the head, starts crossing at *now*; returns when it has crossed (an emptied queue goes back
        to its pool)."""
        del self[0]
        rx = self.rx
        pool = self.pool
        cr = p.credits
        xend = now + p.size * rx.xbar_bt
        if p.tail_at > xend:
            xend = p.tail_at
        rx.xbar_free = xf = xend + rx.xsetup
        self.occ -= cr
        pool.occ -= cr
        self.since = now
        return_credits(rx.upstream, self.vl, xend + rx.delay, cr)
        if self:
            n = self[0]
            op = n.out_port
            op.cands[n.out_vl].append(self)
            t = n.ready_at
            op.poke(xf if xf > t else t)
        else:
            pool.voqs[self.out] = None
            pool.free.append(self)
        return xend

    def discard(self, now: float, reason: str) -> None:
        """Drop the head at *now* (as :meth:`InputBuffer.discard`)."""
        p = self.pop(0)
        pool = self.pool
        rx = self.rx
        self.occ -= p.credits
        pool.occ -= p.credits
        self.since = now
        t = p.tail_at if p.tail_at > now else now
        return_credits(rx.upstream, self.vl, t + rx.delay, p.credits)
        rx.sim.drop(p, reason, rx.node)
        if self:
            offer(self, self[0], rx.xbar_free if rx.xbar_free > now else now)
        else:
            pool.voqs[self.out] = None
            pool.free.append(self)


class VoqPool:
    """One input VL buffer of a switch with virtual output queues (``inputQueues = "voq"``): the credits
    its queues share, and the queue of each output that has packets (see the module)."""

    __slots__ = ("vl", "rx", "capacity", "occ", "voqs", "free")

    def __init__(self, rx, vl: int, capacity: int, width: int):
        self.vl = vl
        self.rx = rx
        self.capacity = capacity
        self.occ = 0
        # a queue is there while it holds packets (taken from ``free``, or made, when one arrives for an
        # output that has none): a 64-port switch has 4,096 (input, output) pairs per VL, and one input VL
        # buffer holds packets for a few of them at a time; the last entry is the multicast queue
        self.voqs: list[VoqQueue | None] = [None] * (width + 2)
        self.free: list[VoqQueue] = []

    @property
    def name(self) -> str:
        """The shared buffer as messages name it: ``<node path>.port[<port>] VL<vl>``."""
        return f"{self.rx.node.path}.port[{self.rx.port}] VL{self.vl}"

    def __repr__(self) -> str:
        return f"<VoqPool {self.name} {self.occ}/{self.capacity} credits>"

    @property
    def q(self) -> list:
        """Every packet of the buffer, queue by queue (for counting and inspection)."""
        return self.packets()

    def store(self, p, op, ovl: int) -> None:
        """Append *p* to the queue of its output (``op.port``; the multicast queue for a multicast route)."""
        out = op.port
        v = self.voqs[out]
        if v is None:
            free = self.free
            if free:
                v = free.pop()
                v.out = out
            else:
                v = VoqQueue(self, out)
            self.voqs[out] = v
        t = p.ready_at = p.head_at + self.rx.route_delay
        v.append(p)
        cr = p.credits
        v.occ += cr
        self.occ += cr
        if len(v) == 1:
            op.cands[ovl].append(v)
            xf = self.rx.xbar_free
            op.poke(xf if xf > t else t)

    def reads(self) -> list:
        """The queues that hold packets."""
        return [v for v in self.voqs if v]

    def heads(self) -> list:
        """The head packet of every non-empty queue."""
        return [v[0] for v in self.voqs if v]

    def packets(self) -> list:
        """Every packet of the buffer, queue by queue."""
        return [p for v in self.voqs if v for p in v]

    def held(self) -> int:
        """Credits occupied by the queues together."""
        return self.occ

    def arriving(self, now: float) -> list:
        """The packets whose tail has not arrived by *now* (the last ones of each queue)."""
        out = []
        for v in self.voqs:
            if v:
                for p in reversed(v):
                    if p.tail_at <= now:
                        break
                    out.append(p)
        return out

    def remove(self, p) -> None:
        """Take *p* out of its queue, without credits (see :meth:`InputBuffer.remove`)."""
        for v in self.voqs:
            if v and p in v:
                if v[0] is p:
                    withdraw(v)
                    del v[0]
                    if v:
                        offer(v, v[0], self.rx.xbar_free)
                else:
                    v.remove(p)
                v.occ -= p.credits
                self.occ -= p.credits
                if not v:
                    self.voqs[v.out] = None
                    self.free.append(v)
                return
        raise ValueError(f"{p!r} is not in {self.name}")

    def clear(self) -> list:
        """Empty every queue; return what they held."""
        out = self.packets()
        for v in self.voqs:
            if v is not None:
                v.clear()
                v.occ = 0
                self.voqs[v.out] = None
                self.free.append(v)
        self.occ = 0
        return out


# ------------------------------------------------------------ split VL buffers


class EscapeRead:
    """The second read point of a split VL buffer (Martínez et al. 2003 §4.4, Fig. 2): the packet
    :meth:`SplitBuffer.refresh` names, offered to its output port(s) like a buffer head."""

    __slots__ = ("buf", "rx", "q", "vl", "since")

    def __init__(self, buf: "SplitBuffer", p, now: float):
        self.buf = buf
        self.rx = buf.rx
        self.vl = buf.vl
        self.q = [p]
        self.since = now

    def __repr__(self) -> str:
        return f"<EscapeRead {self.buf.name}>"

    @property
    def name(self) -> str:
        """The read point as messages name it: ``<buffer name> escape``."""
        return f"{self.buf.name} escape"

    def take(self, p, now: float) -> float:
        """*p* starts crossing out of the middle of the buffer (as :meth:`InputBuffer.take`)."""
        buf = self.buf
        buf.escape = None
        buf.q.remove(p)
        rx = self.rx
        cr = p.credits
        xend = now + p.size * rx.xbar_bt
        if p.tail_at > xend:
            xend = p.tail_at
        rx.xbar_free = xend + rx.xsetup
        buf.occ -= cr
        return_credits(rx.upstream, buf.vl, xend + rx.delay, cr)
        buf.refresh(now)
        return xend

    def discard(self, now: float, reason: str) -> None:
        """Drop the packet at this read point at *now*; the buffer names its next one."""
        buf = self.buf
        p = self.q[0]
        buf.escape = None
        buf.q.remove(p)
        buf.occ -= p.credits
        buf._give_back(p, now)
        self.rx.sim.drop(p, reason, self.rx.node)
        buf.refresh(now)


def _deterministic(p) -> bool:
    """Sent on the deterministic path (DLID least significant bit 0, Martínez §4.2): it must stay in
    order with the packets before it."""
    return not p.dlid & 1


class SplitBuffer(InputBuffer):
    """A FIFO split into an adaptive part of ``adaptive_cap`` credits and an escape part behind it,
    with a second read point into the escape part (see the module and :meth:`refresh`)."""

    __slots__ = ("adaptive_cap", "escape")

    def __init__(self, rx, vl: int, capacity: int, escape_credits: int):
        super().__init__(rx, vl, capacity)
        self.adaptive_cap = capacity - escape_credits
        self.escape: EscapeRead | None = None

    def store(self, p, op, ovl: int) -> None:
        super().store(p, op, ovl)
        if len(self.q) > 1 and self.escape is None:
            self.refresh(self.rx.sim.now)

    def take(self, p, now: float) -> float:
        xend = super().take(p, now)
        self.refresh(now)
        return xend

    def discard(self, now: float, reason: str) -> None:
        if self.escape is not None:
            withdraw(self.escape)
            self.escape = None
        super().discard(now, reason)
        self.refresh(now)

    def refresh(self, now: float) -> None:
        """Set the second read point and offer it: the first deterministic packet (DLID LSB 0) behind
        the head, if one is stored before the escape part (in-order delivery: it goes first, through
        its own read point, Martínez §4.4's pointer); else the first packet of the escape part, the
        first that does not end within the adaptive part (a packet the adaptive part had no room for
        came in on its escape option: its tail, at least, is in the escape part); none if the head is
        deterministic or the escape part is empty."""
        q = self.q
        cap = self.adaptive_cap
        new = None
        off = 0
        for i, p in enumerate(q):
            if i and off + p.credits > cap:
                new = p
                break
            if _deterministic(p):
                new = p if i else None
                break
            off += p.credits
        old = self.escape
        if old is not None and old.q[0] is new:
            return
        if old is not None:
            withdraw(old)
            self.escape = None
        if new is not None:
            self.escape = EscapeRead(self, new, now)
            offer(self.escape, new, self.rx.xbar_free)

    def reads(self) -> list:
        """The head, and the escape read point if there is one."""
        out = [self] if self.q else []
        if self.escape is not None:
            out.append(self.escape)
        return out

    def remove(self, p) -> None:
        if self.escape is not None:
            withdraw(self.escape)
            self.escape = None
        super().remove(p)
        self.refresh(self.rx.sim.now)

    def clear(self) -> list:
        self.escape = None
        return super().clear()

