"""The ``central-buffer`` replication engine (one of the four schemes of Kim et al. 2007, §3.6.1 and §5.2).

A ready multicast packet moves from its input VL (freeing it, credits
back upstream) into a central buffer of ``size`` bytes (option, default
16384) when it fits, one copy queued in the multicast FIFO of each
output port; a port serves its FIFO's head before unicast packets from
the input VLs.  The packet's space is freed when its last copy leaves.
Each output port's FIFO may hold at most ``quota`` bytes of packets
(a packet counts in each FIFO it is queued in; ``auto``, the default:
``size`` / ports; ``shared``: no quota).  Without quotas one full
buffer holds packets for every output, and two switches whose buffers
each wait for the other's input buffers deadlock even under up*/down*
routes; with them each FIFO waits only on its own output, as an output
buffer does.

``fifo`` says what one FIFO is: ``port`` (the default) one per output
port, served in order whatever the copies' VLs, so a copy whose VL lacks
credits downstream holds back the copies behind it on other VLs; ``vl``
one per output port and VL, as the asynchronous engine's output buffers
are: each VL's oldest copy is offered to the VL arbiter (and, without
one, the oldest copy whose VL has the credits goes).  The port's share
(``quota``) counts the copies of all its VLs either way.  ``fifo=vl``
builds :class:`CentralBufferPerVL`, whose methods serve the VLs' heads:
the choice is made once, when the engine is built.
"""

from __future__ import annotations

from collections import deque

from ibfabric.components.port import INF
from ibfabric.components.portstate import PORT_DOWN
from ibfabric.errors import ConfigError

from .base import ReplicationEngine

__all__ = ["CentralBuffer", "CentralBufferPerVL"]


def _ts(h):
    return h.ts


class _Stored:
    """A packet in the central buffer: its copies left to send, when its data is in, and the byte time of
    the switch's crossbar (a copy takes ``size x xbar_bt`` to cross out of the buffer)."""

    __slots__ = ("p", "left", "xend", "xbar_bt")

    def __init__(self, p, left: int, xend: float, xbar_bt: float):
        self.p = p
        self.left = left
        self.xend = xend
        self.xbar_bt = xbar_bt


class CentralBuffer(ReplicationEngine):
    """A multicast FIFO per output port in a central buffer of ``size`` bytes (module docstring)."""

    name = "central-buffer"
    options = {"size": "16384", "quota": "auto", "fifo": "port"}

    def __new__(cls, options=None, rng=None):
        if cls is CentralBuffer and (options or {}).get("fifo") == "vl":
            cls = CentralBufferPerVL  # one FIFO per output port and VL
        return super().__new__(cls)

    def __init__(self, options=None, rng=None):
        super().__init__(options, rng)
        try:
            self.size = int(self.opts["size"])
        except ValueError:
            self.size = -1
        if self.size <= 0:
            raise ConfigError(f"replication engine 'central-buffer': 'size' must be a positive number of bytes"
                              f" (got {self.opts['size']!r})")
        q = self.opts["quota"]
        try:
            self.quota = None if q == "shared" else (0 if q == "auto" else int(q))
        except ValueError:
            self.quota = -1
        if self.quota is not None and self.quota < 0:
            raise ConfigError(f"replication engine 'central-buffer': 'quota' must be auto, shared or a number of"
                              f" bytes (got {q!r})")
        if self.opts["fifo"] not in ("port", "vl"):
            raise ConfigError(f"replication engine 'central-buffer': 'fifo' must be port or vl"
                              f" (got {self.opts['fifo']!r})")

    def attach(self, switch) -> None:
        super().attach(switch)
        biggest = max((h.max_packet() for h in switch.sim.hosts), default=0)
        if self.size < biggest:
            raise ConfigError(f"replicationOptions: the central buffer ({self.size}B) cannot hold a {biggest}B packet")
        self.cap = self.size // 64
        quota = self.quota
        if quota == 0:  # auto: the buffer split evenly among the output ports
            quota = self.size // max(1, len(switch.tx))
        if quota is not None and quota < biggest:
            raise ConfigError(f"replicationOptions: {switch.path}: the central buffer's share of each output port"
                              f" ({quota}B, quota={self.opts['quota']}) cannot hold a {biggest}B packet")
        #: credits of the packets queued for each output port may not exceed qcap (None: no quota)
        self.qcap = None if quota is None else quota // 64
        self.qused = {tx: 0 for tx in switch.tx.values()}
        self.used = 0
        self.stored = 0
        self.full = False
        for tx in switch.tx.values():
            tx.mfifo = deque()

    def fits(self, h) -> bool:
        """Whether head *h* fits the central buffer and every output port's share of it."""
        c = h.p.credits
        if self.used + c > self.cap:
            return False
        qcap = self.qcap
        if qcap is None:
            return True
        qused = self.qused
        return all(qused[o] + c <= qcap for o in h.outs)

    def _move(self, h, now: float) -> None:
        p = h.p
        del self.heads[h.buf]
        xend = h.buf.take(p, now)  # out of the input VL: credits go back upstream
        self.used += p.credits
        self.stored += 1
        s = _Stored(p, len(h.outs), xend, h.rx.xbar_bt)
        for o in h.outs:
            o.mq.remove(h)
            o.mfifo.append((s, h.vl[o]))
            self.qused[o] += p.credits
            o.poke(now)
        h.where = self

    def _admit(self, tx, now: float) -> float:
        """Move the ready heads that want *tx* into the central buffer while they fit; return when
        the next one is ready."""
        nxt = INF
        if tx.mq:
            for h in sorted(tx.mq, key=_ts):
                t = h.ready_at()
                if t > now:
                    if t < nxt:
                        nxt = t
                elif self.fits(h):
                    self._move(h, now)
                else:
                    self.full = True  # poked when space frees
        return nxt

    def serve(self, tx, now: float):
        """Move ready heads into the central buffer while they fit, then send the head of
        *tx*'s multicast FIFO if its VL has the credits.

        Returns
        -------
        tuple
            ``(end, next, hold)``: the end of the copy's transmission (None if none
            was sent), when to look again, and False (unicast never waits).
        """
        nxt = self._admit(tx, now)
        f = tx.mfifo
        if f:
            s, vl = f[0]
            p = s.p
            if tx.free_at() <= now and tx.has_room(vl, p.credits, now):
                return self.send_offer(tx, s, vl, now), nxt, False
            t = tx.room_time(vl, p.credits, now)
            if t < nxt:
                nxt = t
        return None, nxt, False

    def offers(self, tx, now: float):
        """For VL arbitration: ``({vl: stored packet}, next time)``, the head of *tx*'s multicast
        FIFO if its VL has the credits (the FIFO is one queue: only its head may go)."""
        nxt = self._admit(tx, now)
        f = tx.mfifo
        if f:
            s, vl = f[0]
            if tx.has_room(vl, s.p.credits, now):
                return {vl: s}, nxt
            t = tx.room_time(vl, s.p.credits, now)
            if t < nxt:
                nxt = t
        return {}, nxt

    def send_offer(self, tx, s, vl: int, now: float) -> float:
        """Send the head copy *s* of *tx*'s multicast FIFO on VL *vl*."""
        tx.mfifo.popleft()
        return self._sent(tx, s, vl, now)

    def _sent(self, tx, s, vl: int, now: float) -> float:
        """Copy *s*, out of *tx*'s FIFO, leaves on VL *vl*: the buffer's accounting, then the copy."""
        p = s.p
        s.left -= 1
        self.qused[tx] -= p.credits
        last = not s.left
        if last:
            self.used -= p.credits
            self.stored -= 1
        if self.full and (last or self.qcap is not None):  # space freed: the heads that waited look again
            self.full = False
            for h in self.heads.values():
                t = h.ready_at()
                for o in h.outs:
                    o.poke(t if t > now else now)
        xend = now + p.size * s.xbar_bt  # the copy crosses out of the buffer, not before the data is in
        if s.xend > xend:
            xend = s.xend
        return self.copy_out(tx, p, vl, now, xend, last)

    def sendable(self, tx, now: float):
        """``(could the FIFO's head, or a head that fits the buffer, start now, False)``, without side effects."""
        f = tx.mfifo
        if f:
            s, vl = f[0]
            return tx.free_at() <= now and s.p.credits <= tx.room_at(vl, now), False
        for h in tx.mq:
            if h.ready_at() <= now and self.fits(h) and tx.free_at() <= now and h.p.credits <= tx.room_at(h.vl[tx], now):
                return True, False
        return False, False

    def held(self) -> int:
        """Packets stored in the central buffer."""
        return self.stored

    def port_left(self, tx, now: float) -> None:
        super().port_left(tx, now)
        f = tx.mfifo
        while f:  # the copies queued for it
            s, _vl = f.popleft()
            self._drop_copy(tx, s, now, PORT_DOWN)

    def _drop_copy(self, tx, s, now: float, reason: str) -> None:
        """A copy of stored packet *s* queued for *tx* is dropped (the last one: the packet itself)."""
        p = s.p
        s.left -= 1
        self.qused[tx] -= p.credits
        if s.left:
            self.stats.copies += 1
        else:
            self.used -= p.credits
            self.stored -= 1
        self.switch.sim.drop(p, reason, self.switch)

    def flush(self, now: float, reason: str) -> int:
        n = self.stored
        for tx in self.switch.tx.values():
            f = tx.mfifo
            while f:
                s, _vl = f.popleft()
                s.left -= 1
                self.qused[tx] -= s.p.credits
                if not s.left:
                    self.switch.sim.drop(s.p, reason, self.switch)
        self.used = self.stored = 0
        self.heads.clear()
        return n

    def waits(self, h, now: float, starved):
        """What head *h* waits for (the deadlock watchdog): the central buffer when it does not fit it, or the
        shares of the outputs it exceeds (all needed).
        """
        if h.ready_at() > now or self.fits(h):
            return None, False
        c = h.p.credits
        if self.used + c > self.cap:
            return [("central", id(self))], False
        return [("central", id(self), o.port) for o in h.outs if self.qused[o] + c > self.qcap], True

    def nodes(self, now: float, starved):
        """The central buffer and, with quotas, each output's share, when the heads of the
        multicast FIFOs lack credits downstream.
        """
        if not self.stored:
            return
        waits = []
        for tx in self.switch.tx.values():
            if tx.mfifo:
                ks = self._blocked(tx, starved)
                if self.qcap is not None and ks is not None:  # this output's share drains only downstream
                    yield ("central", id(self), tx.port), f"{self.switch.path} central buffer, port {tx.port} share", ks, False
                if waits is not None:
                    if ks is None:
                        waits = None
                    else:
                        waits.extend(ks)
        if waits:
            yield ("central", id(self)), f"{self.switch.path} central buffer", waits, False

    def _blocked(self, tx, starved):
        """What *tx*'s multicast FIFO waits for (the watchdog): ``[what its head waits for]``, or None when
        the head can go."""
        s, vl = tx.mfifo[0]
        k = starved(tx, vl, s.p.credits)
        return None if k is None else [k]


class CentralBufferPerVL(CentralBuffer):
    """``fifo=vl``: a multicast FIFO per output port and VL in the central buffer (module docstring).

    The copies queued for a port stay in one deque in arrival order; each VL's FIFO is the copies of that VL
    in it, and its head the VL's first copy there."""

    @staticmethod
    def _heads(tx):
        """Each VL's oldest copy queued for *tx*, oldest first: ``[(stored packet, vl)]``."""
        seen, heads = set(), []
        for s, vl in tx.mfifo:
            if vl not in seen:
                seen.add(vl)
                heads.append((s, vl))
        return heads

    def serve(self, tx, now: float):
        """As :meth:`CentralBuffer.serve`, sending the oldest VL head whose VL has the credits."""
        nxt = self._admit(tx, now)
        if tx.mfifo:
            free = tx.free_at() <= now
            for s, vl in self._heads(tx):
                c = s.p.credits
                if free and tx.has_room(vl, c, now):
                    return self.send_offer(tx, s, vl, now), nxt, False
                t = tx.room_time(vl, c, now)
                if t < nxt:
                    nxt = t
        return None, nxt, False

    def offers(self, tx, now: float):
        """For VL arbitration: ``({vl: stored packet}, next time)``, each VL's oldest copy whose VL has the
        credits."""
        nxt = self._admit(tx, now)
        offered = {}
        if tx.mfifo:
            for s, vl in self._heads(tx):
                if tx.has_room(vl, s.p.credits, now):
                    offered[vl] = s
                else:
                    t = tx.room_time(vl, s.p.credits, now)
                    if t < nxt:
                        nxt = t
        return offered, nxt

    def send_offer(self, tx, s, vl: int, now: float) -> float:
        """Send copy *s*, the head of VL *vl*'s FIFO for *tx*."""
        f = tx.mfifo
        if f[0][0] is s:
            f.popleft()
        else:
            f.remove((s, vl))
        return self._sent(tx, s, vl, now)

    def sendable(self, tx, now: float):
        """``(could a VL head, or a head that fits the buffer, start now, False)``, without side effects."""
        if tx.mfifo:
            return tx.free_at() <= now and any(s.p.credits <= tx.room_at(vl, now) for s, vl in self._heads(tx)), False
        return super().sendable(tx, now)

    def _blocked(self, tx, starved):
        """What *tx*'s copies wait for: every VL head's wait, or None when one of them can go."""
        ks = [starved(tx, vl, s.p.credits) for s, vl in self._heads(tx)]
        return None if None in ks else ks
