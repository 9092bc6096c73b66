"""The multicast data path of a switch: MFT lookup, multicast heads, copies (DESIGN §3).

A switch whose subnet manager installed multicast forwarding-table entries
(:meth:`Switch.install_mft <ibfabric.components.switch.Switch.install_mft>`)
gets a *replication engine* (switch parameter ``replication``, a plugin:
:mod:`ibfabric.plugins.replication`) and multicast-capable transmitters.
A switch without entries, and every switch of a fabric without groups, keeps
its plain classes: unicast packets never meet this module.

- **Lookup.**  A DLID in ``0xC000..0xFFFE`` lies past every forwarding
  table, so :meth:`SwitchRx.receive` reaches its no-route branch, which
  hands the packet to :func:`receive` here.  Each input port holds a
  :class:`McastRoute` per MLID: the ports of the MLID's mask but the input
  port itself (IBA never sends a multicast packet back where it came from).
- **Heads.**  The packet is stored in its input VL like any other, with a
  :class:`McastRoute` as its ``out_port``: the switch's ``store()`` and
  ``cross()`` treat it like a transmitter (``cands[vl].append``, ``poke``),
  and appending makes the packet a :class:`Head` that the engine offers to
  every output port of the route (``tx.mq``).
- **Ports.**  :class:`McastTx` (a mixin over the switch's transmitter class)
  asks the engine first (multicast has priority over unicast at the
  crossbar, Kim et al. 2007 §3.6.1 and §5.2) and serves unicast packets
  only when the engine lets it.  Multicast copies bypass the VL arbiter.
- **Copies.**  A copy is a new :class:`~ibfabric.components.packet.Packet`
  object (``copy.copy``); the last copy of a packet is the original object.

Accounting (:mod:`ibfabric.components.mstats`): a replicated packet counts
once wherever it waits (input VL, extra buffer, central buffer); every copy
that leaves a switch while the packet stays behind adds one to
``stats.copies``, so ``injected + copies == delivered + dropped + in flight``.
"""

from __future__ import annotations

import copy
from collections import deque

from ibfabric.errors import PluginError

from .mfts import MCAST_LID_END, MCAST_LID_START

__all__ = ["Head", "McastRoute", "McastTx", "clone", "has_credits", "install_mft", "launch_copy", "mcast_class", "receive"]

_CLASSES: dict[type, type] = {}


class _Register:
    """``McastRoute.cands[vl]``: ``append(buf)`` makes the head of *buf* a multicast :class:`Head`."""

    __slots__ = ("route",)

    def __init__(self, route: "McastRoute"):
        self.route = route

    def append(self, buf) -> None:
        route = self.route
        route.engine.register(Head(buf, route))


class McastRoute:
    """The ``out_port`` of multicast packets of one MLID at one input port.

    ``outs`` holds ``(transmitter, SL-to-VL table of this input to it)`` per
    port of the mask but the input port.
    """

    nvl = 16
    mcast = True

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
        pass  # the engine pokes the output ports when the head registers


class Head:
    """A multicast packet at the head of its input VL (or moved on by the engine).

    ``outs`` are the transmitters that still have to send a copy, ``vl``
    the output VL of each; ``ts`` orders heads first come, first served
    (the time the packet's first bit reached the switch, then registration).
    """

    __slots__ = ("buf", "rx", "p", "outs", "vl", "ts", "where")
    _seq = 0

    def __init__(self, buf, route: McastRoute):
        self.buf = buf
        self.rx = route.rx
        p = self.p = buf.q[0]
        sl = p.sl
        self.outs = []
        self.vl = {}
        for tx, table in route.outs:
            vl = table[sl]
            if vl < tx.nvl:
                self.outs.append(tx)
                self.vl[tx] = vl
        Head._seq += 1
        self.ts = (p.head_at, Head._seq)
        self.where = None  # None: in its input VL; else the engine's buffer holding it

    def __repr__(self) -> str:
        return f"<Head {self.p!r} to ports {[tx.port for tx in self.outs]}>"

    def ready_at(self) -> float:
        """When it may cross from its input VL (routing done, the input's crossbar connection free)."""
        t = self.p.ready_at
        xf = self.rx.xbar_free
        return t if t >= xf else xf


def clone(p):
    """A copy of packet *p* (a new object: per-hop fields change independently)."""
    return copy.copy(p)


def launch_copy(tx, c, vl: int, now: float, xend: float) -> float:
    """Send copy *c* on *tx*'s link on VL *vl* from *now*, not ending before its data has crossed (*xend*)."""
    end = now + c.size * tx.byte_time
    if xend > end:
        end = xend
    tx.launch(c, vl, now, end)
    return end


def has_credits(tx, vl: int, need: int, now: float) -> bool:
    """Take in the credits returned by *now* and say whether *need* credits of VL *vl* are there."""
    rq = tx.returns[vl]
    if rq and rq[0] <= now:
        tx.absorb(vl, now)
    return need <= tx.credits[vl]


class _Wants:
    """``tx.wants`` of a multicast-capable port: a credit return pokes the port if a unicast
    candidate of that VL or any multicast work waits."""

    __slots__ = ("tx",)

    def __init__(self, tx):
        self.tx = tx

    def __getitem__(self, vl: int):
        tx = self.tx
        return tx.mq or tx.mfifo or tx.cands[vl]


class McastTx:
    """Mixin of a switch transmitter that multicast copies may use (see the module docstring).

    ``mq``: the :class:`Head` objects that want this port; ``mfifo``: engine-owned copies
    queued for this port (central buffer); ``owner``: the head that reserved the port
    (synchronous replication).
    """

    def init_mcast(self, engine) -> None:
        """Set up the multicast state of the transmitter: its replication *engine*, no heads,
        no queued copies, no owner.
        """
        self.engine = engine
        self.mq: list[Head] = []
        self.mfifo: deque = deque()
        self.owner = None
        self.wants = _Wants(self)

    def has_work(self) -> bool:
        """Whether multicast heads or copies want the port, or unicast packets wait."""
        return bool(self.mq) or bool(self.mfifo) or super().has_work()

    def after_send(self, end: float) -> float:
        """Look again at once while multicast heads or copies wait; else as for unicast."""
        if self.mq or self.mfifo:
            return end
        return super().after_send(end)

    #: multicast copies go before unicast packets, outside the VL arbiter (Kim et al. §5.2); False
    #: (a bandwidth policy with multicast VLs of their own, :mod:`ibfabric.components.mcastbw`):
    #: they compete in VL arbitration like unicast packets, on their own VLs
    mprio = True

    def try_send(self, now: float):
        """Send one packet at *now*, multicast or unicast, as the replication engine decides.

        Without multicast work the port sends as for unicast.  VL15 packets go
        first; then, if multicast has priority (``mprio``), the engine serves a
        copy, and a port the engine holds for a multicast packet sends no unicast
        meanwhile.  Returns as :meth:`TxPort.try_send <ibfabric.components.port.TxPort.try_send>`.
        """
        if not (self.mq or self.mfifo or self.owner is not None):
            return super().try_send(now)
        if self.mcands:
            end, _ = self._try_vl15(now)
            if end is not None:
                return end
        if not self.mprio:
            return self._arbitrated(now)
        end, nxt, hold = self.engine.serve(self, now)
        if end is not None:
            return end
        if hold:  # the port is held for a multicast packet: no unicast meanwhile
            self.next_t = nxt
            return None
        end = super().try_send(now)
        if end is None and nxt < self.next_t:
            self.next_t = nxt
        return end

    def sendable(self, now: float) -> bool:
        """Whether the engine could send a copy now, or, if it does not hold the port, a unicast packet could go."""
        can, hold = self.engine.sendable(self, now)
        return can or (not hold and super().sendable(now))

    def _arbitrated(self, now: float):
        """Send the packet the VL arbiter picks among the unicast candidates and the multicast
        copies the engine offers (``engine.offers``: ``{vl: offer}``, the first copy that may go on
        each VL); a VL with both sends its multicast copy first.  (The unicast half repeats the loop
        of ``SwitchTx.try_send``, which keeps it inline because it is the per-packet path.)"""
        offers, nxt = self.engine.offers(self, now)
        ready = self.ready
        chosen = self.chosen
        returns = self.returns
        any_ready = False
        for vl in range(self.nvl):
            o = offers.get(vl)
            if o is not None:
                ready[vl] = o.p
                any_ready = True
                continue
            if not self.cands[vl]:
                ready[vl] = None
                continue
            rq = returns[vl]
            if rq and rq[0] <= now:
                self.absorb(vl, now)
            buf, t = self._pick(vl, now)
            if buf is None:
                ready[vl] = None
                if t < nxt:
                    nxt = t
                continue
            ready[vl] = buf.q[0]
            chosen[vl] = buf
            any_ready = True
        if not any_ready:
            self.next_t = nxt
            return None
        vl = self.arbiter.select(ready) if self.nvl > 1 else 0
        o = offers.get(vl)
        if o is not None:
            return self.engine.send_offer(self, o, vl, now)
        buf = chosen[vl]
        self.cands[vl].remove(buf)
        return self._send(buf, buf.q[0], vl, now)


def mcast_class(base: type) -> type:
    """*base* (a switch transmitter class) able to send multicast copies."""
    cls = _CLASSES.get(base)
    if cls is None:
        cls = _CLASSES[base] = type("Mcast" + base.__name__, (McastTx, base), {"__module__": __name__})
    return cls


def receive(rx, p, buf, now: float) -> None:
    """A packet whose DLID is past the forwarding table arrived at *rx*: route it if it is multicast.

    Called from the no-route branch of :meth:`SwitchRx.receive` (never for routed unicast packets).
    """
    route = rx.node.mroutes.get(rx.port, {}).get(p.dlid) if MCAST_LID_START <= p.dlid <= MCAST_LID_END else None
    if route is None or p.vl == 15:
        rx._discard(p, buf, "no-route")
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
            rx._discard(p, buf, "sl2vl-drop")
            return
    if rx.drop_check and rx.dropper.on_arrival(p, buf, now):
        rx._discard(p, buf, "dropper")
        return
    p.out_port = route
    p.out_vl = 0
    rx.store(p, buf, route, 0)


def switch_problem(sw) -> str | None:
    """Why switch *sw* cannot replicate (None if it can): switch engines need an input-queued switch
    with one FIFO per input VL and no routing options."""
    what = None
    if sw.out_buffer:
        what = "output buffers (outputBufferSize > 0B)"
    elif sw.option_bits or sw.escape_buffer:
        what = "routing options and escape buffers"
    elif sw.lifetimes:
        what = "packet lifetimes (dropper)"
    elif sw.voq:
        what = "virtual output queues (inputQueues = \"voq\")"
    if what:
        return (f"{sw.path}: multicast replication does not support {what} yet; multicast switches"
                f" must be input-queued with one FIFO per input VL (or use replication = \"replicated-unicast\")")
    return None


_ENGINE_METHODS = ("register", "serve", "sendable", "held")


def make_engine(sw):
    """The replication engine named by *sw*'s ``replication`` parameter (one per switch)."""
    from .node import parse_options

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
        engine = make_engine(sw)
        if not getattr(engine, "source_copies", False):
            problem = switch_problem(sw)
            if problem:  # reported when a host sends to a group (the MFTs themselves are fine)
                sw.mcast_problem = problem
                return
        sw.replicator = engine
        if getattr(engine, "source_copies", False):
            return
        for tx in sw.tx.values():
            if not isinstance(tx, McastTx):
                tx.__class__ = mcast_class(type(tx))  # same object, same state; a subclass adds the multicast path
                tx.init_mcast(engine)
        engine.attach(sw)
    if getattr(engine, "source_copies", False):
        return
    for port, rx in sw.rx.items():
        routes = sw.mroutes[port] = {}
        for mlid, ports in entries.items():
            outs = [(sw.tx[o], rx.sl2vl_out[o]) for o in ports if o != port and o in sw.tx]
            if outs:
                routes[mlid] = McastRoute(engine, rx, mlid, outs)

