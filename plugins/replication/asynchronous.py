"""The ``asynchronous`` replication engine, the default (Kim et al. 2007 §3.6.1).

Copies leave independently, each as soon as its output port is free and
has the credits.  The first copy dequeues the packet from its input VL
(its credits go back upstream as for a unicast packet) into a one-packet
*extra buffer* of the input port, from which the other copies leave; the
input VL goes on meanwhile.  A packet with one copy left needs no extra
buffer; one with several waits at the head of its VL while the extra
buffer of its port is busy ("only one multicast transfer can progress at
a time, one packet size buffer is sufficient", §3.6.1).  The extra buffer
reads into the crossbar through a path of its own: its copies do not wait
for the input's unicast transfers, nor they for them.
"""

from __future__ import annotations

from ibfabric.components.port import INF

from .base import ReplicationEngine

__all__ = ["Asynchronous"]


class Asynchronous(ReplicationEngine):
    """Copies leave independently; a one-packet extra buffer per input port (module docstring)."""

    name = "asynchronous"

    def attach(self, switch) -> None:
        super().attach(switch)
        self.extra = {rx: None for rx in switch.rx.values()}  # input port -> the Head in its extra buffer

    def _may(self, h, tx, now: float) -> float:
        """When *h* may send a copy on *tx* as far as its own place allows (INF: when poked)."""
        if h.where is None:
            if len(h.outs) > 1 and self.extra[h.rx] is not None:
                return INF  # waits for the extra buffer of its port (poked when it empties)
            return h.ready_at()
        return now

    def serve(self, tx, now: float):
        """Send at most one copy on *tx*: of the first head that may use it and has the credits.

        Returns
        -------
        tuple
            ``(end, next, hold)``: the end of the copy's transmission (None if none
            was sent), when to look again, and False (unicast never waits).
        """
        nxt = INF
        for h in tx.mq:
            t = self._may(h, tx, now)
            if t > now:
                if t < nxt:
                    nxt = t
                continue
            vl = h.vl[tx]
            need = h.p.credits
            if not tx.has_room(vl, need, now):
                t = tx.room_time(vl, need, now)
                if t < nxt:
                    nxt = t
                continue
            return self._send(tx, h, vl, now), nxt, False
        return None, nxt, False

    def _send(self, tx, h, vl: int, now: float) -> float:
        p = h.p
        rx = h.rx
        h.outs.remove(tx)
        tx.mq.remove(h)
        last = not h.outs
        if h.where is None:
            del self.heads[h.buf]
            xend = h.buf.take(p, now)  # out of the input VL: credits go back, the next head moves up
            if not last:
                h.where = rx
                self.extra[rx] = h
                for o in h.outs:
                    o.poke(now)
        else:
            xend = now + p.size * rx.xbar_bt
            if p.tail_at > xend:
                xend = p.tail_at
            if last:
                self.extra[rx] = None
                for buf in rx.reads():  # heads of this port that waited for the extra buffer
                    w = self.heads.get(buf)
                    if w is not None:
                        t = w.ready_at()
                        for o in w.outs:
                            o.poke(t if t > now else now)
        return self.copy_out(tx, p, vl, now, xend, last)

    def offers(self, tx, now: float):
        """For VL arbitration (a bandwidth policy without multicast priority): ``({vl: head}, next
        time)``, the first head per output VL that may send a copy on *tx* now."""
        out = {}
        nxt = INF
        for h in tx.mq:
            vl = h.vl[tx]
            if vl in out:
                continue
            t = self._may(h, tx, now)
            if t > now:
                if t < nxt:
                    nxt = t
                continue
            need = h.p.credits
            if not tx.has_room(vl, need, now):
                t = tx.room_time(vl, need, now)
                if t < nxt:
                    nxt = t
                continue
            out[vl] = h
        return out, nxt

    def send_offer(self, tx, h, vl: int, now: float) -> float:
        """Send the copy of head *h* that the VL arbiter chose, on VL *vl*; return when the link is free."""
        return self._send(tx, h, vl, now)

    def sendable(self, tx, now: float):
        """``(could a copy start on tx now, False)``, without side effects (audits)."""
        for h in tx.mq:
            if self._may(h, tx, now) <= now and tx.free_at() <= now and h.p.credits <= tx.room_at(h.vl[tx], now):
                return True, False
        return False, False

    def held(self) -> int:
        """Packets in the extra buffers of the input ports."""
        return sum(1 for h in self.extra.values() if h is not None)

    def gone(self, h, now: float, reason: str) -> None:
        if h.where is not None:  # in its extra buffer, which frees
            self.extra[h.rx] = None
            for buf in h.rx.reads():  # heads of this port that waited for the extra buffer
                w = self.heads.get(buf)
                if w is not None:
                    for o in w.outs:
                        o.poke(now)
        super().gone(h, now, reason)

    def flush(self, now: float, reason: str) -> int:
        n = 0
        for rx, h in self.extra.items():
            if h is not None:
                for o in h.outs:
                    if h in o.mq:
                        o.mq.remove(h)
                self.switch.sim.drop(h.p, reason, self.switch)
                self.extra[rx] = None
                n += 1
        self.heads.clear()
        return n

    def waits(self, h, now: float, starved):
        """What head *h* waits for (the deadlock watchdog): ``(keys or None, False)``; the extra buffer of its
        input port if it needs it and it is taken, else the downstream buffers if every output lacks credits.
        """
        if h.ready_at() > now:
            return None, False
        if len(h.outs) > 1 and self.extra[h.rx] is not None:
            return [("extra", id(h.rx))], False
        return self.any_starved(h, h.outs, now, starved), False

    def nodes(self, now: float, starved):
        """The occupied extra buffers whose packet lacks credits at every remaining output."""
        for rx, h in self.extra.items():
            if h is not None:
                w = self.any_starved(h, h.outs, now, starved)
                if w:
                    yield ("extra", id(rx)), f"{rx.node.path}.port[{rx.port}] extra buffer", w, False
