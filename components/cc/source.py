"""The source side of congestion control: each flow's CCT index and the injection delay it gives.

IBA 1.2.1 Annex A10 (CA Congestion Setting, Congestion Control Table): a
channel adapter keeps a CCT index (CCTI) per QP, or per SL when
``Port_Control`` bit 0 says so.  Each BECN raises it by ``ccti_increase``,
up to ``ccti_limit``; each expiry of the SL's CCTI timer (``ccti_timer`` x
1.024 us) lowers it by one, down to ``ccti_min``.  The CCT entry at the
index, ``multiplier << shift`` units, is the inter-packet delay: after a
packet of the flow, the next one of that flow waits that long past its end.

Here a *flow* is the pair (this port, destination host): the QP of each
destination, as the unreliable datagrams of the traffic sources use one
per peer.  The HCA has one send queue per SL (:mod:`~ibfabric.components.hca.tx`),
so a throttled flow at the head of its VL buffer holds back what queues
behind it on that VL, as a QP's packets would queue behind the DMA engine's.

Cost: no event per tick.  The timer is read lazily: the index a flow has at
time *t* is its index at its last change less the timer expiries since
(expiries at the multiples of the period, one free-running timer per SL).
The delay is part of the port's own wake-up: the port's ``try_send`` asks
``ready_heads`` which heads may go, and :meth:`Throttle.ready_heads` holds a
throttled head back and says when it may go as the time to look again;
:meth:`Throttle.inject` starts the flow's delay after each packet.  A port
without congestion control runs :class:`~ibfabric.components.hca.tx.HcaTx`'s
own methods, untouched.
"""

from __future__ import annotations

from ..packet import VL15
from ..port import SEVERAL
from ..portstate import PortState

ACTIVE = PortState.ACTIVE

__all__ = ["Throttle"]


class Throttle:
    """The CCTIs of the flows of one HCA port and its throttle (see the module docstring).

    ``becns`` counts the BECNs it took; ``ccti`` and ``tick`` hold each flow's index and the timer
    expiry count at its last change (read them with :meth:`index`); ``next_ok[flow]`` is when the
    flow's next packet may start.
    """

    def __init__(self, tx, settings, cnps: set):
        self.tx = tx
        self.per_sl = settings.per_sl
        self.ca = settings.ca
        self.limit = settings.ccti_limit
        self.delays = settings.delays()
        self.cnps = cnps
        self.ccti: dict[int, int] = {}
        self.tick: dict[int, int] = {}
        self.next_ok: dict[int, float] = {}
        self.becns = 0
        #: BECNs taken per flow
        self.flow_becns: dict[int, int] = {}
        #: the SL each flow's BECNs came on (whose CA Congestion Setting entry governs its timer)
        self.flow_sl: dict[int, int] = {}
        self.max_ccti = 0

    def flow_of(self, p) -> int:
        """The flow whose CCTI throttles packet *p*: its SL (per-SL control) or its destination host."""
        return p.sl if self.per_sl else p.dst

    def index(self, flow: int, sl: int, now: float) -> int:
        """The CCTI of *flow* (on SL *sl*) at *now*, the timer expiries since its last change taken off."""
        e = self.ca[sl]
        c = self.ccti.get(flow, e.ccti_min)
        if c > e.ccti_min and e.ccti_timer:
            k = int(now // e.period)
            dk = k - self.tick[flow]
            if dk > 0:
                c = c - dk if c - dk > e.ccti_min else e.ccti_min
                self.ccti[flow] = c
                self.tick[flow] = k
        return c

    def becn(self, flow: int, sl: int, now: float) -> int:
        """A BECN for *flow* arrives at *now*: raise its CCTI by ``ccti_increase`` up to ``ccti_limit``;
        return the new index."""
        e = self.ca[sl]
        c = self.index(flow, sl, now) + e.ccti_increase
        if c > self.limit:
            c = self.limit
        self.ccti[flow] = c
        self.tick[flow] = int(now // e.period) if e.ccti_timer else 0
        self.becns += 1
        self.flow_becns[flow] = self.flow_becns.get(flow, 0) + 1
        self.flow_sl[flow] = sl
        if c > self.max_ccti:
            self.max_ccti = c
        return c

    def delay(self, flow: int, sl: int, now: float) -> float:
        """The inter-packet delay of *flow* at *now*: the CCT entry at its index."""
        return self.delays[self.index(flow, sl, now)]

    def held(self, p, now: float) -> bool:
        """Whether packet *p* waits for its flow's delay at *now*."""
        return self.next_ok.get(p.sl if self.per_sl else p.dst, 0.0) > now and p not in self.cnps

    def sendable(self, now: float) -> bool:
        """:meth:`HcaTx.sendable <ibfabric.components.hca.tx.HcaTx.sendable>` (the port audits), a head
        held by its flow's delay not counted."""
        tx = self.tx
        if tx.state != ACTIVE:
            return type(tx).sendable(tx, now)
        if tx.mgmt:
            return True
        for vl in range(tx.nvl):
            q = tx.vbuf[vl].q
            if q and not self.held(q[0], now) and q[0].credits <= tx.credits_at(vl, now):
                return True
        src = tx.source
        return (src is not None and src.next_time <= now and not any(vb.q for vb in tx.vbuf)
                and not tx.queued)

    def attach(self) -> None:
        """Throttle the port: its heads pass :meth:`ready_heads` and its injections :meth:`inject`
        (bound on the port instance; a port without congestion control keeps the class's methods)."""
        tx = self.tx
        tx.single = False  # every head goes through ready_heads, even on a port of one data VL
        self.inner_ready_heads = tx.ready_heads
        self.inner_inject = tx.inject
        tx.ready_heads = self.ready_heads
        tx.inject = self.inject
        tx.sendable = self.sendable

    def ready_heads(self, queues: list, now: float) -> tuple[int, float]:
        """:meth:`TxPort.ready_heads <ibfabric.components.port.TxPort.ready_heads>`, a head held by its
        flow's delay not ready: the time to look again is then when the delay ends, if sooner."""
        one, nxt = self.inner_ready_heads(queues, now)
        if one < 0:
            return one, nxt
        ready = self.tx.ready
        next_ok = self.next_ok
        per_sl = self.per_sl
        one = -1
        for vl, p in enumerate(ready):
            if p is None:
                continue
            t = next_ok.get(p.sl if per_sl else p.dst, 0.0)
            if t > now and p not in self.cnps:
                ready[vl] = None
                if t < nxt:
                    nxt = t
            else:
                one = vl if one < 0 else SEVERAL
        return one, nxt

    def inject(self, p, vl: int, now: float) -> float:
        """:meth:`HcaTx.inject <ibfabric.components.hca.tx.HcaTx.inject>`; a data packet (not a CNP) then
        starts its flow's delay: the next packet of the flow may start that long after this one's end."""
        end = self.inner_inject(p, vl, now)
        if vl != VL15 and p not in self.cnps:
            flow = p.sl if self.per_sl else p.dst
            d = self.delays[self.index(flow, p.sl, end)]
            next_ok = self.next_ok
            if d:
                next_ok[flow] = end + d
            elif flow in next_ok:
                del next_ok[flow]
        return end
