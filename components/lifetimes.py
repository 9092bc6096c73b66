"""Packet lifetimes in switch input buffers (IBA's HLL and SLL; Kim et al. 2007 §3.5).

A switch whose dropper has ``lifetimes`` (:mod:`ibfabric.plugins.droppers`)
keeps, per data VL buffer, the time its head packet expires
(``InputBuffer.hq_expire``, Kim's *HQLifetime* plus the limit): set when a
packet becomes the head (:func:`head_changed`), checked by the switch's
output ports whenever they look (:func:`expire`), and made sure of by one
poke of the head's output port(s) at that time, so a lifetime costs at most
one wake-up per head packet and none per tick.  An expired head is
discarded: its space is freed (credits return upstream once its tail has
arrived), it is counted under the dropper's name, and the next packet
becomes the head.
"""

from __future__ import annotations

from .port import INF, return_credits

__all__ = ["head_changed", "expire", "drop_head"]


def head_changed(buf, now: float) -> None:
    """The head of *buf* changed at *now* (it may be empty): set its expiry and make sure a port looks then."""
    q = buf.q
    if not q:
        buf.hq_expire = INF
        return
    p = q[0]
    since = p.head_at if p.head_at > now else now  # its header reaches the head of the queue
    e = buf.rx.dropper.expiry(p, buf, since)
    buf.hq_expire = e
    if e < INF:
        p.out_port.poke(e)


def expire(tx, now: float) -> float:
    """Discard the expired heads among the candidates of transmitter *tx*; return the earliest
    expiry still ahead (the port must look again by then even if nothing else wakes it)."""
    nxt = INF
    for c in tx.cands:
        if c:
            gone = None
            for b in c:
                e = getattr(b, "hq_expire", INF)
                if e <= now:
                    gone = [b] if gone is None else gone + [b]
                elif e < nxt:
                    nxt = e
            if gone:
                for buf in gone:
                    if buf.q and buf.hq_expire <= now:
                        drop_head(buf, now)
                for b in c:  # the next heads of those buffers
                    e = getattr(b, "hq_expire", INF)
                    if e < nxt:
                        nxt = e
    return nxt


def drop_head(buf, now: float) -> None:
    """Discard the head packet of *buf* at *now* and make the next packet the head."""
    from .options import offer, refresh_escape, withdraw

    q = buf.q
    p = q[0]
    withdraw(buf)
    q.popleft()
    rx = buf.rx
    buf.occ -= p.credits
    t = p.tail_at if p.tail_at > now else now
    return_credits(rx.upstream, buf.vl, t + rx.delay, p.credits)
    rx.sim.drop(p, rx.dropper.name, rx.node)
    if q:
        offer(buf, q[0], rx.xbar_free)
    head_changed(buf, now)
    if buf.adaptive_cap:
        refresh_escape(buf)
