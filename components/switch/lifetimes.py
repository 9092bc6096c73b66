"""Packet lifetimes in a switch (IBA's HLL and SLL; Kim et al. 2007 §3.5): a watcher of its queues.

A switch whose dropper has ``lifetimes`` (:mod:`ibfabric.plugins.droppers`)
gets one :class:`Lifetimes` watcher, which wraps the wake-up of each of its
output ports (:meth:`Lifetimes.wrap`).  At every wake-up it looks at the
heads of the queues that wait for that port -- the read points offered to
it (input FIFOs, virtual output queues, escape read points), the multicast
heads that want it, and its own output VL buffers -- and discards those
whose time is up: ``dropper.expiry(packet, queue, since)``, where *since*
is when the packet became the head (``max(head_at, queue.since)``: the
queue keeps the time its previous head left, Kim's *HQLifetime*).  The port
then looks again at the earliest expiry still ahead, so a lifetime costs at
most one wake-up per head packet, and none per tick.

A discarded head frees its space (credits go back upstream once its tail
has arrived), is counted under the dropper's name, and the next packet
becomes the head.  Straight-to-the-link ports discard while their link is
free (a port sending a packet looks again when it has sent it, as its
crossbar does).
"""

from __future__ import annotations

from ..port import INF
from ..portstate import PortState
from .inbuf import withdraw

__all__ = ["Lifetimes"]


class Lifetimes:
    """The lifetime watcher of one switch (see the module docstring)."""

    def __init__(self, switch, dropper):
        self.switch = switch
        self.dropper = dropper
        self.name = dropper.name

    def __repr__(self) -> str:
        return f"<Lifetimes {self.switch.path} {self.name}>"

    def wrap(self, tx) -> None:
        """Have port *tx*'s wake-ups discard the expired heads first, and look again at the next expiry (an
        Active port's: a port out of Active flushed its queues)."""
        if tx.state != PortState.ACTIVE:
            return
        inner = tx.step
        expire = self.expire
        if tx.obuf is None:

            def step(now: float) -> float:
                if now < tx.busy_until:
                    return inner(now)
                due = expire(tx, now)
                sent = tx.sent
                t = inner(now)
                if tx.sent != sent:
                    return t  # it looks again once it has sent, if anything waits, and sees the expiries then
                return t if t < due else due
        else:

            def step(now: float) -> float:
                due = expire(tx, now)
                t = inner(now)
                return t if t < due else due

        tx.step = step

    def expiry(self, c) -> float:
        """When the head of read point *c* is discarded (inf: never)."""
        p = c.q[0]
        since = c.since
        return self.dropper.expiry(p, c, since if since > p.head_at else p.head_at)

    def expire(self, tx, now: float) -> float:
        """Discard the expired heads of the queues that wait for *tx* at *now*; return the earliest expiry
        still ahead."""
        dropper = self.dropper
        again = True
        while again:  # a discarded head's successor may have expired too, and be offered here again
            again = False
            nxt = INF
            for lst in tx.cands:
                if not lst:
                    continue
                for c in tuple(lst):
                    if not c.q:
                        continue
                    e = self.expiry(c)
                    if e <= now:
                        withdraw(c)
                        c.discard(now, self.name)
                        again = True
                    elif e < nxt:
                        nxt = e
            if tx.mq:
                for h in tuple(tx.mq):
                    if h.where is None and h in tx.mq:
                        e = self.expiry(h.buf)
                        if e <= now:
                            tx.engine.unregister(h)
                            h.buf.discard(now, self.name)
                            again = True
                        elif e < nxt:
                            nxt = e
            obuf = tx.obuf
            if obuf is not None:
                for vl, q in enumerate(obuf):
                    while q:
                        p = q[0]
                        since = tx.osince[vl]
                        e = dropper.expiry(p, q, since if since > p.ready_at else p.ready_at)
                        if e > now:
                            if e < nxt:
                                nxt = e
                            break
                        q.popleft()
                        cr = p.credits
                        tx.ofree[vl] += cr
                        tx.oqueued[vl] -= cr
                        tx.osince[vl] = now
                        tx.node.sim.drop(p, self.name, tx.node)
        return nxt

    def frees(self, c) -> bool:
        """Whether the head of read point *c* will be discarded some time (the deadlock finder: such a
        buffer is not deadlocked)."""
        return self.expiry(c) < INF
