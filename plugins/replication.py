"""Multicast replication engines: how a switch sends the copies of a multicast packet.

A switch with multicast forwarding-table entries builds one engine
(``replication`` parameter, options from ``replicationOptions``) and its
output ports ask it before they serve unicast packets
(:mod:`ibfabric.components.multicast`).  Kim et al. 2007 §3.6.1 and §5.2
compare four schemes; all four are here:

``asynchronous`` (the default)
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
``synchronous``
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
``central-buffer``
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
``replicated-unicast``
    No switch support: the source HCA sends one unicast copy to each member
    (``HCA.send_multicast``).  A fabric-wide choice: every switch with
    multicast entries must name it.

Every switch engine serves multicast copies before unicast packets (§5.2:
"we give multicast traffic higher priority over unicast traffic in
reserving the output VLs") and outside the VL arbiter, unless a bandwidth
policy puts multicast on VLs of its own (:mod:`ibfabric.components.mcastbw`):
then ``asynchronous`` and ``central-buffer`` offer their copies to the VL
arbiter (``offers``/``send_offer``), and ``synchronous``, whose lock step
needs priority, works only where the ports have output buffers (its lock
step is then at the crossbar; the links arbitrate).

The engines work with either output side of a port (straight to the link,
or output VL buffers): what they use of a port is its multicast state
(``mq``, ``mfifo``, ``owner``) and ``has_room``, ``room_time``,
``room_at``, ``accept``, ``free_at``, ``poke`` (:mod:`ibfabric.components.switch.tx`).
The engine API (``attach``, ``register``, ``unregister``, ``serve``,
``sendable``, ``held``, ``port_left``, ``flush``, ``waits``, ``nodes``) is
described in ``docs/plugins.md``.
"""

from __future__ import annotations

from collections import deque

from ibfabric.components.port import INF
from ibfabric.components.portstate import PORT_DOWN
from ibfabric.components.switch.multicast import clone
from ibfabric.errors import ConfigError
from ibfabric.plugins.manager import hookimpl

__all__ = ["ReplicationEngine", "Asynchronous", "Synchronous", "CentralBuffer", "ReplicatedUnicast"]


def _ts(h):
    return h.ts


class ReplicationEngine:
    """Base class: options checked against :attr:`options`, per-switch state made in :meth:`attach`."""

    name = ""
    #: option name -> default (strings, as ``replicationOptions`` gives them)
    options: dict[str, str] = {}
    #: True: switches never replicate; the source HCA sends a unicast copy per member
    source_copies = False

    def __init__(self, options: dict[str, str] | None = None, rng=None):
        options = dict(options or {})
        bad = sorted(set(options) - set(self.options))
        if bad:
            valid = ", ".join(sorted(self.options)) or "none"
            raise ConfigError(f"replication engine '{self.name}' has no option '{bad[0]}' (valid: {valid})")
        self.opts = {**self.options, **options}
        self.rng = rng

    def attach(self, switch) -> None:
        """Attach the engine to *switch*, once, when the switch gets multicast entries, and
        set up its per-switch state (``heads``: input buffer -> its multicast Head).
        """
        self.switch = switch
        self.stats = switch.sim.stats
        self.heads: dict = {}  # input buffer -> its multicast Head, while in the input VL

    def register(self, h) -> None:
        """Offer the new head *h* to each of its output ports, which look once it may cross."""
        self.heads[h.buf] = h
        t = h.ready_at()
        for tx in h.outs:
            tx.mq.append(h)
            tx.poke(t)

    def unregister(self, h) -> None:
        """Head *h*, still at its read point, leaves without its copies (dropped, or lost with its link):
        no output port waits for it any more."""
        self.heads.pop(h.buf, None)
        for tx in h.outs:
            if h in tx.mq:
                tx.mq.remove(h)
        h.outs = []

    def held(self) -> int:
        """Packets the engine keeps outside the input VLs (for the conservation counts): none here."""
        return 0

    def port_left(self, tx, now: float) -> None:
        """Port *tx* left the Active state: the copies still owed to it are dropped (``port-down``); a
        packet that owed no other copy is dropped itself."""
        sim = self.switch.sim
        for h in list(tx.mq):
            if tx not in h.outs:
                continue
            h.outs.remove(tx)
            tx.mq.remove(h)
            if h.outs:
                self.stats.copies += 1  # a copy made and dropped
                sim.drop(h.p, PORT_DOWN, self.switch)
            else:
                self.gone(h, now, PORT_DOWN)

    def gone(self, h, now: float, reason: str) -> None:
        """Head *h* has no copy left to make: drop its packet where it waits."""
        if h.where is None:
            self.heads.pop(h.buf, None)
            h.buf.discard(now, reason)
        else:
            self.switch.sim.drop(h.p, reason, self.switch)

    def flush(self, now: float, reason: str) -> int:
        """The switch failed: drop the packets the engine holds outside the input VLs; return how many."""
        return 0

    def nodes(self, now: float, starved):
        """The engine's own buffers that wait, for the deadlock watchdog: ``(key, description, keys
        waited for, needs_all)`` each; none here.  *starved* ``(tx, vl, need)`` gives the
        downstream buffer port *tx* lacks credits from, or None.
        """
        return ()

    def copy_out(self, tx, p, vl: int, now: float, xend: float, last: bool) -> float:
        """A copy of *p* (the packet itself if it is the *last* copy) crosses into port *tx* on VL *vl*,
        its data there by *xend*: onto the link, or into the output VL buffer; returns when the port's
        crossbar output is free again (``tx.accept``)."""
        if last:
            c = p
        else:
            c = clone(p)
            self.stats.copies += 1
        return tx.accept(c, vl, now, xend)

    @staticmethod
    def any_starved(h, outs, now: float, starved) -> list | None:
        """The downstream buffers of *outs* if every one of them is credit-starved for *h*, else None."""
        waits = []
        for o in outs:
            k = starved(o, h.vl[o], h.p.credits)
            if k is None:
                return None
            waits.append(k)
        return waits


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
    options = {"size": "16384", "quota": "auto"}

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
                s, vl = tx.mfifo[0]
                k = starved(tx, vl, s.p.credits)
                if self.qcap is not None and k is not None:  # this output's share drains only downstream
                    yield ("central", id(self), tx.port), f"{self.switch.path} central buffer, port {tx.port} share", [k], False
                if waits is not None:
                    if k is None:
                        waits = None
                    else:
                        waits.append(k)
        if waits:
            yield ("central", id(self)), f"{self.switch.path} central buffer", waits, False


class ReplicatedUnicast(ReplicationEngine):
    """No switch support: the source sends one unicast copy per member (module docstring)."""

    name = "replicated-unicast"
    source_copies = True


@hookimpl
def ibfabric_register_replication_engines(register) -> None:
    register("asynchronous", Asynchronous,
             description="copies leave independently; one-packet extra buffer per input port (Kim et al.)")
    register("synchronous", Synchronous,
             description="lock-step copies after reserving every output, FCFS among multicast packets")
    register("central-buffer", CentralBuffer,
             description="a multicast FIFO per output in a central buffer of size= bytes, before unicast")
    register("replicated-unicast", ReplicatedUnicast,
             description="no switch support: the source sends a unicast copy to each member")
