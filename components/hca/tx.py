"""The send side of an HCA port (Kim et al. 2007 §2.3, Fig. 2).

Messages wait in per-SL send queues; the HCA serves the queues in SL
priority order (``slPriority``) and moves their packets (DMA) into the VL
buffers of its port (``sl2vl``); the port's VL arbiter then picks which VL
sends next, subject to the credits of the switch's input buffers.  VL15
(management) packets skip the queues, arbitration and flow control.  The
port's traffic source (:mod:`~ibfabric.components.hca.sources`) makes the
messages due each time the transmitter wakes.
"""

from __future__ import annotations

from collections import deque
from typing import TYPE_CHECKING

from ..packet import VL15, Packet
from ..port import INF, SEVERAL, TxPort
from ..portstate import PortState

if TYPE_CHECKING:  # pragma: no cover
    from . import HCA
    from .sources import TrafficSource

__all__ = ["HcaTx", "VLSendBuffer"]

#: the send queue of an SL that nothing was queued on yet (see HcaTx.sendq)
_NO_QUEUE = ()


class VLSendBuffer:
    """One VL buffer of an HCA port (bytes)."""

    __slots__ = ("q", "vl", "bytes", "capacity")

    def __init__(self, vl: int, capacity: int):
        self.q: deque[Packet] = deque()
        self.vl = vl
        self.bytes = 0
        self.capacity = capacity


class HcaTx(TxPort):
    """Transmitter of an HCA port: send queues per SL, DMA into VL buffers, VL arbitration."""

    # slots, as TxPort's: on a large fabric an instance dictionary is two more cold objects per look
    __slots__ = ("source", "sendq", "queued", "sl_order", "used_sls", "sl2vl", "vbuf", "vqueues", "mgmt", "stats")

    def __init__(self, node: "HCA", port, link, nvl, arbiter, env):
        super().__init__(node, port, link, nvl, arbiter, env)
        self.source: TrafficSource | None = None
        #: per SL, its send queue; an SL not used yet has the shared empty tuple (16 empty deques
        #: per HCA took ~10 KB: :meth:`use_sl` makes an SL's deque before anything is queued on it)
        self.sendq: list[deque[Packet] | tuple] = [_NO_QUEUE] * 16
        self.queued = 0
        self.sl_order = node.sl_order
        self.used_sls: list[int] = []  # SLs that ever had a send queue, in priority order
        self.sl2vl = node.sl2vl_table(nvl)
        self.vbuf = tuple(VLSendBuffer(vl, node.vl_buffer) for vl in range(nvl))
        self.vqueues = tuple(vb.q for vb in self.vbuf)
        self.mgmt: deque[Packet] = deque()
        self.stats = node.sim.stats

    def enqueue(self, p: Packet) -> None:
        """Queue a packet for sending (management packets go first, on VL15)."""
        if p.vl == VL15:
            self.mgmt.append(p)
        else:
            self.use_sl(p.sl)
            self.sendq[p.sl].append(p)
            self.queued += 1
        self.poke(self.loop.now)

    def has_work(self) -> bool:
        if self.state != PortState.ACTIVE:
            return bool(self.state != PortState.DOWN and self.mgmt)
        return bool(self.queued or self.mgmt) or any(self.cands)

    def _step_inactive(self, now: float) -> float:
        """A port that is not Active: Down sends nothing (its send queues and VL buffers stay as they are,
        as a real HCA keeps its send queues; the source makes no messages meanwhile), Init and Armed send
        VL15 packets only."""
        if self.state == PortState.DOWN or not self.mgmt:
            return INF
        if now < self.busy_until:
            return self.busy_until
        end = self.busy_until = self.inject(self.mgmt.popleft(), VL15, now)
        return end

    def sendable(self, now: float) -> bool:
        if self.state != PortState.ACTIVE:
            return bool(self.state != PortState.DOWN and self.mgmt) and self.busy_until <= now
        if self.mgmt:
            return True
        for vl in range(self.nvl):
            q = self.vbuf[vl].q
            if q and q[0].credits <= self.credits_at(vl, now):
                return True
        src = self.source
        if src is not None and src.next_time <= now and not any(vb.q for vb in self.vbuf) and not self.queued:
            return True  # a message is due and nothing queued could block it
        return False

    def after_send(self, end: float) -> float:
        if self.mgmt:
            return end
        # a VL whose head lacks credits waits for them (new messages queue
        # behind it); an empty VL may get a new message from the source
        best = self.heads_credit_time(self.vqueues, end)
        if not all(self.vqueues):
            t = self.idle_wake(end)
            if t < best:
                best = t
        return best

    def idle_wake(self, end: float) -> float:
        src = self.source
        if src is None:
            return INF
        t = src.next_time
        return end if t < end else t

    def use_sl(self, sl: int) -> None:
        """Include *sl* in the send queues DMA looks at."""
        if sl not in self.used_sls:
            self.used_sls = [s for s in self.sl_order if s in self.used_sls or s == sl]
            if self.sendq[sl] is _NO_QUEUE:
                self.sendq[sl] = deque()

    def _dma(self) -> None:
        vbuf = self.vbuf
        sl2vl = self.sl2vl
        for sl in self.used_sls:
            q = self.sendq[sl]
            if not q:
                continue
            vb = vbuf[sl2vl[sl]]
            while q and vb.bytes + q[0].size <= vb.capacity:
                p = q.popleft()
                self.queued -= 1
                vb.q.append(p)
                vb.bytes += p.size
                if len(vb.q) == 1:
                    self.cands[vb.vl].append(vb)

    def try_send(self, now: float) -> float | None:
        src = self.source
        if src is not None and src.next_time <= now:
            src.materialize(now)
        if self.queued:
            self._dma()
        if self.mgmt:
            return self.inject(self.mgmt.popleft(), VL15, now)
        credits = self.credits
        returns = self.returns
        if self.single:
            q = self.vbuf[0].q
            if not q:
                # (a source due in the past is one held back by BACKLOG: it cannot be, with q empty)
                self.next_t = src.next_time if src is not None and src.next_time > now else INF
                return None
            rq = returns[0]
            if rq and rq[0] <= now:
                self.absorb(0, now)
            if q[0].credits > credits[0]:
                # new messages would queue behind the blocked head: only credits can help
                self.next_t = rq[0] if rq else INF
                return None
            vl = 0
        else:
            one, nxt = self.ready_heads(self.vqueues, now)
            if one < 0:
                if src is not None and not all(self.vqueues):
                    # a new message may go on an empty VL.  A source due in the past is
                    # held back by BACKLOG: the send queue of its SL is full, so that SL's
                    # VL is not empty; a source of several SLs may have others due later
                    t = src.next_time
                    if t <= now:
                        t = src.next_after(now)
                    if t < nxt:
                        nxt = t
                self.next_t = nxt
                return None
            vl = self.pick_one(self.ready, one) if one != SEVERAL else self.arbiter.select(self.ready)
        vb = self.vbuf[vl]
        p = vb.q.popleft()
        vb.bytes -= p.size
        if not vb.q:
            self.cands[vl].remove(vb)
        end = self.inject(p, vl, now)
        if self.queued:
            self._dma()
        return end

    def inject(self, p: Packet, vl: int, now: float) -> float:
        """Put *p*, taken from its VL buffer, on the wire on VL *vl* at *now*; return when it ends."""
        end = now + p.size * self.byte_time
        p.injected = now
        self.stats.injected += 1
        self.launch(p, vl, now, end)
        return end

    # what another stage of the send side calls (congestion control's throttle, ibfabric.components.cc.source)

    def dma(self) -> None:
        """Move the packets of the send queues that fit into the port's VL buffers, in SL priority order."""
        self._dma()


    def queued_packets(self) -> int:
        """Packets at the source: in send queues and VL buffers, not yet on the wire."""
        return self.queued + sum(len(vb.q) for vb in self.vbuf) + len(self.mgmt)
