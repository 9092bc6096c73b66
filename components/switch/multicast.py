"""The multicast stage of a switch: MFT lookup, multicast heads, copies (DESIGN §3).

A switch whose subnet manager installed multicast forwarding-table entries
(:meth:`Switch.install_mft <ibfabric.components.switch.Switch.install_mft>`)
gets a *replication engine* (switch parameter ``replication``, a plugin:
:mod:`ibfabric.plugins.replication`), and its output ports a multicast
stage in front of their crossbar (:func:`wrap_multicast`).  A switch without
entries, and every switch of a fabric without groups, has no such stage:
unicast packets never meet this module.

- **Lookup.**  A DLID in ``0xC000..0xFFFE`` lies past every forwarding
  table, so the receive side's lookup fails and hands the packet to
  :func:`receive` here.  Each input port holds a :class:`McastRoute` per
  MLID: the ports of the MLID's mask but the input port itself (IBA never
  sends a multicast packet back where it came from).
- **Heads.**  The packet is stored in its input VL like any other (with
  virtual output queues: in the VL's multicast queue), with the
  :class:`McastRoute` as its route target, and when it heads its read point
  it becomes a :class:`Head` that the engine offers to every output port of
  the route that is Active (``tx.mq``); the copies for the others are
  dropped (``port-down``), as are those whose SL maps to no VL there.
- **Ports.**  An output port asks the engine first (multicast has priority
  over unicast at the crossbar, Kim et al. 2007 §3.6.1 and §5.2) and serves
  unicast packets only when the engine lets it.  With output buffers the
  copies cross into them (``tx.accept``) and the link's VL arbiter serves
  them; without, they go on the link outside the VL arbiter, unless a
  bandwidth policy gives multicast VLs of its own
  (:mod:`ibfabric.components.qos.mcastbw`), where copies and unicast packets
  take part in VL arbitration together (``engine.offers``).
- **Copies.**  A copy is a new :class:`~ibfabric.components.packet.Packet`
  object (``copy.copy``); the last copy of a packet is the original object.

Accounting (:mod:`ibfabric.mstats`): a replicated packet counts once
wherever it waits (input VL, extra buffer, central buffer); every copy
that leaves a switch, or is dropped, while the packet stays behind adds one
to ``stats.copies``, so ``injected + copies == delivered + dropped + in
flight``.
"""

from __future__ import annotations

import copy

from ibfabric.errors import PluginError

from ..port import INF, SEVERAL
from ..portstate import PORT_DOWN, PortState
from ..routing.mfts import MCAST_LID_END, MCAST_LID_START
from .inbuf import MCAST_QUEUE

__all__ = ["Head", "McastRoute", "clone", "install_mft", "make_engine", "receive", "wrap_multicast"]

ACTIVE = PortState.ACTIVE


class _Register:
    """``McastRoute.cands[vl]``: ``append(c)`` makes the head of read point *c* a multicast :class:`Head`."""

    __slots__ = ("route",)

    def __init__(self, route: "McastRoute"):
        self.route = route

    def append(self, c) -> None:
        route = self.route
        h = Head(c, route)
        if h.outs:
            route.engine.register(h)


class McastRoute:
    """The route target of the multicast packets of one MLID at one input port.

    ``outs`` holds ``(transmitter, SL-to-VL table of this input to it)`` per
    port of the mask but the input port.
    """

    nvl = 16
    mcast = True
    #: the virtual output queue of multicast packets
    port = MCAST_QUEUE

    def __init__(self, engine, rx, mlid: int, outs: list[tuple]):
        self.engine = engine
        self.rx = rx
        self.mlid = mlid
        self.outs = outs
        self.cands = [_Register(self)] * 16

    def __repr__(self) -> str:
        return f"<McastRoute 0x{self.mlid:04X} ports {[tx.port for tx, _ in self.outs]}>"

    def poke(self, t: float) -> None:
        """Nothing to do: the replication engine pokes the output ports when the head registers."""

    def unregister(self, c) -> None:
        """The head of read point *c* leaves without its copies (dropped, or lost with its link)."""
        h = self.engine.heads.get(c)
        if h is not None:
            self.engine.unregister(h)


class Head:
    """A multicast packet at the head of its read point (or moved on by the engine).

    ``outs`` are the transmitters that still have to take a copy, ``vl``
    the output VL of each; ``ts`` orders heads first come, first served
    (the time the packet's first bit reached the switch, then registration).
    Making it drops the copies for outputs whose SL maps to no VL or that
    are not Active.
    """

    __slots__ = ("buf", "rx", "p", "outs", "vl", "ts", "where")
    _count = 0

    def __init__(self, buf, route: McastRoute):
        self.buf = buf
        self.rx = route.rx
        p = self.p = buf.q[0]
        sl = p.sl
        self.outs = []
        self.vl = {}
        lost = 0
        for tx, table in route.outs:
            vl = table[sl]
            if vl < tx.nvl and tx.state == ACTIVE:
                self.outs.append(tx)
                self.vl[tx] = vl
            elif vl < tx.nvl:
                lost += 1
        Head._count += 1
        self.ts = (p.head_at, Head._count)
        self.where = None  # None: at its read point; else the engine's buffer holding it
        if lost:
            sim = self.rx.sim
            if self.outs:  # copies made and dropped
                sim.stats.copies += lost
                for _ in range(lost):
                    sim.drop(p, PORT_DOWN, self.rx.node)
            else:  # every output is down: the packet itself (its last copy) goes too
                sim.stats.copies += lost - 1
                for _ in range(lost - 1):
                    sim.drop(p, PORT_DOWN, self.rx.node)
                buf.discard(sim.now, PORT_DOWN)

    def __repr__(self) -> str:
        return f"<Head {self.p!r} to ports {[tx.port for tx in self.outs]}>"

    def ready_at(self) -> float:
        """When it may cross from its read point (routing done, the input's crossbar connection free)."""
        t = self.p.ready_at
        xf = self.rx.xbar_free
        return t if t >= xf else xf


def clone(p):
    """A copy of packet *p* (a new object: per-hop fields change independently)."""
    return copy.copy(p)


# ------------------------------------------------------------ the ports' multicast stage


class _Wants:
    """``tx.wants`` of a multicast port straight to the link: a credit return pokes the port if a unicast
    candidate of that VL or any multicast work waits."""

    __slots__ = ("tx",)

    def __init__(self, tx):
        self.tx = tx

    def __getitem__(self, vl: int):
        tx = self.tx
        return tx.mq or tx.mfifo or tx.cands[vl]


def wrap_multicast(tx) -> None:
    """Put the multicast stage in front of *tx*'s crossbar (called by ``SwitchTx.bind`` when the switch
    has a replication engine): the engine first, unicast when the engine lets the port serve it."""
    engine = tx.engine
    if tx.obuf is None:
        tx.wants = _Wants(tx)
        inner = tx.try_send

        def try_send(now: float):
            if not (tx.mq or tx.mfifo or tx.owner is not None):
                return inner(now)
            if tx.mcands:
                end, _ = tx._try_vl15(now)
                if end is not None:
                    return end
            if not tx.mprio:
                return _arbitrated(tx, now)
            end, nxt, hold = engine.serve(tx, now)
            if end is not None:
                return end
            if hold:  # the port is held for a multicast packet: no unicast meanwhile
                tx.next_t = nxt
                return None
            end = inner(now)
            if end is None and nxt < tx.next_t:
                tx.next_t = nxt
            return end

        inner_after = tx.after_send

        def after_send(end: float) -> float:
            return end if tx.mq or tx.mfifo else inner_after(end)

        tx.try_send = try_send
        tx.after_send = after_send
    else:
        inner = tx.transfer
        offers = callable(getattr(engine, "offers", None))

        def transfer(now: float) -> float:
            if not (tx.mq or tx.mfifo or tx.owner is not None):
                return inner(now)
            if not tx.mprio and offers:  # (an engine that must go first keeps its priority at the crossbar)
                return _arbitrated_transfer(tx, now)
            end, nxt, hold = engine.serve(tx, now)
            if end is not None:
                return end  # look again when the crossbar output is free
            if hold:
                return nxt
            t = inner(now)
            return t if t < nxt else nxt

        inner_next = tx.next_transfer

        def next_transfer(after: float) -> float:
            # a port held for a multicast packet (a lock-step engine's reservation, ``owner``) lets no unicast
            # packet cross meanwhile: the engine's ``serve`` says when to look again
            return INF if tx.owner is not None else inner_next(after)

        tx.transfer = transfer
        tx.next_transfer = next_transfer
    _wrap_send(tx)


def _wrap_send(tx) -> None:
    """A unicast packet crossing from an input keeps that input's crossbar connection busy, so the input's
    multicast heads are ready later: the ports a lock-step engine holds for such a head (``owner``, given
    only to ready heads) look again, to give the reservation up or keep it (``serve``)."""
    engine = tx.engine
    inner = tx.send

    def send(c, p, vl: int, now: float) -> float:
        end = inner(c, p, vl, now)
        heads = getattr(engine, "heads", None)  # (ReplicationEngine.attach makes it, after the ports bind)
        if heads:
            rx = c.rx
            for h in tuple(heads.values()):
                if h.rx is rx:
                    for o in h.outs:
                        if o.owner is h:
                            o.poke(now)
        return end

    tx.send = send


def _arbitrated(tx, now: float):
    """Straight to the link, multicast on VLs of its own: the VL arbiter picks among the unicast
    candidates and the copies the engine offers (``engine.offers``: ``{vl: offer}``, the first copy that
    may go on each VL); a VL with both sends its copy first."""
    engine = tx.engine
    offers, nxt = engine.offers(tx, now)
    ready = tx.ready
    chosen = tx.chosen
    returns = tx.returns
    one = -1
    for vl in range(tx.nvl):
        o = offers.get(vl)
        if o is not None:
            ready[vl] = o.p
            one = vl if one < 0 else SEVERAL
            continue
        if not tx.cands[vl]:
            ready[vl] = None
            continue
        rq = returns[vl]
        if rq and rq[0] <= now:
            tx.absorb(vl, now)
        c, t = tx.pick(vl, now)
        if c is None:
            ready[vl] = None
            if t < nxt:
                nxt = t
            continue
        ready[vl] = c.q[0]
        chosen[vl] = c
        one = vl if one < 0 else SEVERAL
    if one < 0:
        tx.next_t = nxt
        return None
    vl = tx.pick_one(ready, one) if one != SEVERAL else tx.arbiter.select(ready)
    o = offers.get(vl)
    if o is not None:
        return engine.send_offer(tx, o, vl, now)
    c = chosen[vl]
    tx.cands[vl].remove(c)
    return tx.send(c, c.q[0], vl, now)


def _arbitrated_transfer(tx, now: float) -> float:
    """With output buffers, multicast on VLs of its own: the crossbar serves the VLs in turn, a copy the
    engine offers before the unicast candidate of its VL (the link's VL arbiter then shares the
    bandwidth)."""
    engine = tx.engine
    offers, nxt = engine.offers(tx, now)
    nvl = tx.nvl
    for k in range(nvl):
        vl = tx.rr + k
        if vl >= nvl:
            vl -= nvl
        o = offers.get(vl)
        if o is not None:
            tx.rr = vl + 1 if vl + 1 < nvl else 0
            return engine.send_offer(tx, o, vl, now)
        if not tx.cands[vl]:
            continue
        c, t = tx.pick(vl, now)
        if c is None:
            if t < nxt:
                nxt = t
            continue
        tx.rr = vl + 1 if vl + 1 < nvl else 0
        tx.cands[vl].remove(c)
        return tx.send(c, c.q[0], vl, now)
    return nxt


# ------------------------------------------------------------ lookup


def receive(rx, p, now: float) -> None:
    """A packet whose DLID is past the forwarding table arrived at *rx*: route it if it is multicast.

    Called from the receive side's lookup when it fails (never for routed unicast packets).
    """
    route = rx.node.mroutes.get(rx.port, {}).get(p.dlid) if MCAST_LID_START <= p.dlid <= MCAST_LID_END else None
    if route is None or p.vl == 15:
        rx._discard(p, "no-route")
        return
    sl = p.sl
    good = sum(1 for tx, table in route.outs if table[sl] < tx.nvl)
    bad = len(route.outs) - good
    sim = rx.sim
    if bad:  # branches whose SL maps to no VL: those copies are made and dropped
        sim.stats.copies += bad if good else bad - 1
        for _ in range(bad if good else bad - 1):
            sim.drop(p, "sl2vl-drop", rx.node)
        if not good:
            rx._discard(p, "sl2vl-drop")
            return
    p.out_port = route
    p.out_vl = 0
    rx.bufs[p.vl].store(p, route, 0)


# ------------------------------------------------------------ set-up

_ENGINE_METHODS = ("register", "serve", "sendable", "held")


def make_engine(sw):
    """The replication engine named by *sw*'s ``replication`` parameter (one per switch)."""
    from ..node import parse_options

    name = str(sw.params["replication"])
    reg = sw.sim.plugins.replication_engines.get(name)
    opts = parse_options(str(sw.params["replicationOptions"]), sw.path, "replicationOptions")
    engine = reg.create(opts, sw.rng, where=sw.path)
    if not getattr(engine, "source_copies", False):
        missing = [m for m in _ENGINE_METHODS if not callable(getattr(engine, m, None))]
        if missing:
            raise PluginError(f"{sw.path}: replication engine '{name}' (plugin '{reg.plugin}') built a"
                              f" {type(engine).__name__!r} object, which lacks"
                              f" {', '.join(m + '()' for m in missing)}")
    engine.name = name
    return engine


def install_mft(sw, entries: dict[int, tuple[int, ...]]) -> None:
    """Give switch *sw* its multicast forwarding table ``{MLID: output ports}`` (port 0 excluded)."""
    sw.mft = dict(entries)
    sw.mroutes = {}
    if not entries:
        return
    engine = sw.replicator
    if engine is None:
        engine = sw.replicator = make_engine(sw)
        if getattr(engine, "source_copies", False):
            return
        for tx in sw.tx.values():
            tx.engine = engine
            tx.bind()  # the multicast stage goes in front of the crossbar
        engine.attach(sw)
    if getattr(engine, "source_copies", False):
        return
    for port, rx in sw.rx.items():
        routes = sw.mroutes[port] = {}
        for mlid, ports in entries.items():
            outs = [(sw.tx[o], rx.sl2vl_out[o]) for o in ports if o != port and o in sw.tx]
            if outs:
                routes[mlid] = McastRoute(engine, rx, mlid, outs)

