"""The ``synchronous`` replication engine (one of the four schemes of Kim et al. 2007, §3.6.1 and §5.2).

From the crossbar-reservation stage a ready multicast packet reserves
every output port it needs, with priority over unicast packets, taking
ports reserved by other multicast packets whose transfer has not started
and whose timestamp (arrival at the switch) is later: FCFS (option
``priority=fcfs``, the default), or, with ``priority=rr``, whose input
port comes later in a round robin that starts after the input port of
the last packet started (then timestamps).  A reserved
port serves no unicast packet.  The copies start together, in lock step,
once every output is reserved and idle; the input VL is freed as they
start.  A packet takes part in the reservation only while every output
VL has the credits for it; waiting for credits, it holds nothing (why:
``docs/multicast.md``, *Synchronous replication and deadlock*).
"""

from __future__ import annotations

from ibfabric.components.port import INF
from ibfabric.errors import ConfigError

from .base import ReplicationEngine

__all__ = ["Synchronous"]


class Synchronous(ReplicationEngine):
    """Lock-step copies after reserving every output port, FCFS among multicast packets (module docstring)."""

    name = "synchronous"
    options = {"priority": "fcfs"}

    def __init__(self, options=None, rng=None):
        super().__init__(options, rng)
        self.rr = self.opts["priority"] == "rr"
        if self.opts["priority"] not in ("fcfs", "rr"):
            raise ConfigError(f"replication engine 'synchronous': 'priority' must be fcfs or rr"
                              f" (got {self.opts['priority']!r})")

    def attach(self, switch) -> None:
        super().attach(switch)
        self.ports = list(switch.tx.values())
        #: rr: input ports in turn; the one after the input of the last packet started goes first
        self.order = {rx: i for i, rx in enumerate(switch.rx.values())}
        self.turn = 0

    def _key(self, h):
        if not self.rr:
            return h.ts
        return ((self.order[h.rx] - self.turn) % len(self.order), h.ts)

    def settle(self, now: float, apply: bool) -> dict:
        """Port reservations at *now*, from scratch: each *eligible* head (ready, and every output VL
        has its credits), in priority order (FCFS: lowest timestamp first; rr: input ports in turn,
        then timestamp), takes the ports no earlier head took.  A started packet has left the heads,
        so its ports are free to reserve (while it is still sending)."""
        owners = dict.fromkeys(self.ports)
        ready = sorted((h for h in self.heads.values() if h.ready_at() <= now), key=self._key)
        for h in ready:
            need = h.p.credits
            if any(o.room_time(h.vl[o], need, now) > now for o in h.outs):
                continue  # waits for credits like a unicast packet, holding nothing
            for o in h.outs:
                if owners[o] is None:
                    owners[o] = h
        if apply:
            changed = []
            for o, h in owners.items():
                if o.owner is not h:
                    o.owner = h
                    changed.append(o)
                    if h is not None:
                        changed.extend(h.outs)
            for o in changed:
                o.poke(now)
        return owners

    @staticmethod
    def start_time(h, owners: dict, now: float) -> float:
        """When *h* may start with the given reservations (INF: not every port is its own)."""
        t = now
        need = h.p.credits
        for o in h.outs:
            if owners[o] is not h:
                return INF
            b = o.free_at()
            if b > t:
                t = b
            c = o.room_time(h.vl[o], need, now)
            if c > t:
                t = c
        return t

    def serve(self, tx, now: float):
        """Settle the port reservations; start the copies of *tx*'s owner if every port is its own and ready.

        Returns
        -------
        tuple
            ``(end, next, hold)``: the end of this port's copy (None if nothing
            started), when to look again, and whether unicast must wait (True while
            a multicast packet holds the port).
        """
        owners = self.settle(now, True)
        h = tx.owner
        # when another head of this port may become eligible (a credit return not yet taken in would
        # not poke the port again); INF: a later return pokes it
        nxt = INF
        for w in tx.mq:
            if w is not h:
                t = w.ready_at()
                if t <= now:
                    need = w.p.credits
                    t = max(o.room_time(w.vl[o], need, now) for o in w.outs)
                if now < t < nxt:
                    nxt = t
        if h is None:
            return None, nxt, False
        for o in h.outs:  # take in the room freed by now
            o.has_room(h.vl[o], h.p.credits, now)
        t = self.start_time(h, owners, now)
        if t <= now:
            return self._start(h, tx, now), INF, True
        return None, (t if t < nxt else nxt), True

    def _start(self, h, tx, now: float) -> float:
        p = h.p
        del self.heads[h.buf]
        self.turn = (self.order[h.rx] + 1) % len(self.order)
        xend = h.buf.take(p, now)  # one crossing feeds every copy
        outs = h.outs
        h.outs = []
        n = len(outs)
        mine = now
        for i, o in enumerate(outs):
            o.mq.remove(h)
            o.owner = None
            end = self.copy_out(o, p, h.vl[o], now, xend, i == n - 1)
            if o is tx:
                mine = end
            else:
                o.poke(end)
        self.settle(now, True)  # the copies took credits: later heads may have lost their eligibility
        return mine

    def sendable(self, tx, now: float):
        """``(could the copies start now with this port looking, hold)``, without side effects (audits)."""
        owners = self.settle(now, False)
        h = owners[tx]
        if h is None:
            return False, False
        if self.start_time(h, owners, now) > now:
            return False, True
        # any port of the packet starts every copy: this one must look now unless another is due to
        return not any(o is not tx and (o.running or o.pending_wake() <= now) for o in h.outs), True

    def port_left(self, tx, now: float) -> None:
        lost = [h for h in tx.mq if tx in h.outs]
        super().port_left(tx, now)
        self.settle(now, True)  # the reservations of the heads that wanted it change
        for h in lost:  # ... and those that waited for it may start now: their other ports look again
            for o in h.outs:
                o.poke(now)

    def waits(self, h, now: float, starved):
        """What head *h* waits for (the deadlock watchdog): the downstream buffers of its outputs that lack
        credits, all of them needed (lock step).
        """
        if h.ready_at() > now:
            return None, False
        waits = [k for k in (starved(o, h.vl[o], h.p.credits) for o in h.outs) if k is not None]
        return (waits or None), True  # lock step: blocked while any output is
