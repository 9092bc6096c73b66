"""The receiving side of a switch port: forwarding-table lookup and the route stage (DESIGN §3).

A packet's first bit reaches input port *i* at ``head_at``; the forwarding
table is looked up at once and gives its *route*: one output port (and the
SL-to-VL table of (*i*, that port), which gives the output VL), the switch
itself (port 0), no route, or -- for the DLIDs that have them -- routing
options (:mod:`~ibfabric.components.switch.options`), chosen now (``selectAt = "lookup"``) or offered
to every option's port until one takes the packet (``"arbitration"``), or a
multicast copy set (:mod:`~ibfabric.components.switch.multicast`, for a DLID past the forwarding
table).  The packet is then stored in the input buffer organisation of its
VL (:mod:`~ibfabric.components.switch.inbuf`), which offers it to its route target once it heads its
read point; it may cross ``routingDelay + arbitrationDelay`` after
``head_at`` (``ready_at``).  With ``routingUnits`` = *n* > 0 the switch
makes *n* lookups at a time for all its inputs (:class:`RoutingUnits`), as
the switch models with one routing control unit do: a header waits for a
free unit, and the packet may cross ``routingDelay + arbitrationDelay``
after its lookup began.

VL15 (subnet management) has its own small input buffer, uses no credits
and goes before every data VL; a VL15 packet that finds that buffer full is
dropped, as the IBA specification allows.  A packet routed to port 0 is
taken in by the switch's management agent at its tail.
"""

from __future__ import annotations

from ..packet import VL15
from ..port import return_credits
from ..routing.tables import NO_PORT
from .inbuf import Vl15Buffer

__all__ = ["SwitchRx", "RoutingUnits", "OPTIONS", "BY_SLID", "NO_ROUTE"]

_LOCAL = (0, None, None)
#: the route of a DLID without one
NO_ROUTE = (NO_PORT, None, None)
#: The port of a route entry whose routing options are chosen at lookup time (the entry's third item is
#: the OptionSet).
OPTIONS = -1
#: The port of a route entry whose options are asked for by the packet's SLID (``optionsWhen = "slid"``;
#: the third item is the SlidRoute).
BY_SLID = -2


class SwitchRx:
    """The receiving side of one switch port: per-VL input buffers and routing."""

    # in the order a packet-hop reads them (see TxPort's slots)
    __slots__ = (
        "table", "index", "bufs", "route_delay", "xbar_free", "xbar_bt", "upstream",
        "delay", "dropper", "vl15", "node", "sim", "port", "lft", "tx_by_port", "sl2vl_out", "xsetup", "__dict__",
    )

    def __init__(self, node, port: int, bufs: tuple, vl15_credits: int, delay: float):
        self.node = node
        self.sim = node.sim
        self.port = port
        #: the input buffer organisation of each data VL (:mod:`~ibfabric.components.switch.inbuf`; a tuple: see TxPort.returns)
        self.bufs = bufs
        self.vl15 = Vl15Buffer(self, VL15, vl15_credits)
        self.upstream = None
        self.delay = delay
        self.xbar_free = 0.0
        self.lft: bytes = b""
        #: the route of DLID d is ``table[index[d]]`` (see :meth:`rebuild_routes`)
        self.table: list[tuple] = []
        self.index = b""
        self.tx_by_port: list = []
        self.sl2vl_out: list[list[int] | None] = []
        self.route_delay = node.route_delay
        self.xbar_bt = 0.0
        #: how long the input's crossbar connection stays busy after each crossing (``crossbarSetup``)
        self.xsetup = node.crossbar_setup
        self.dropper = node.dropper
        # ``receive(p, now)``: the packet's first bit arrives; with a dropper that looks at arrivals
        # (``passive`` False) it asks it first.  Else the class's own: no bound-method object per port,
        # which on a large fabric would be one more cold cache line per hop.
        if not getattr(node.dropper, "passive", False):
            self.receive = self._receive_checked
        if node.routing_units is not None:  # lookups shared by the switch's inputs: wait for one first
            self._looked_up = self.receive
            self.receive = self._receive_after_unit

    @property
    def routes(self) -> list[tuple] | None:
        """With routing options, the route of every DLID (``table``, one entry per DLID); None without."""
        return self.table if self.node.option_bits else None

    @property
    def nvl(self) -> int:
        """The number of input buffers, one per data VL."""
        return len(self.bufs)

    def capacities(self) -> list[int]:
        """Input buffer size of each data VL, in credits."""
        return [b.capacity for b in self.bufs]

    def held(self, vl: int) -> int:
        """Credits occupied in the input buffer of VL *vl*."""
        return self.bufs[vl].occ

    def rebuild_routes(self) -> None:
        """Precompute the route of every DLID: (output port, its transmitter, the SL-to-VL table of
        this input to it), found as ``table[index[dlid]]``.

        Without routing options, ``index`` is the forwarding table itself (one byte per LID) and
        ``table`` has one entry per byte value, so a switch keeps no per-LID Python object (8 bytes
        a LID would be 8 times the table on a large fabric) and input ports whose SL-to-VL tables are
        the same objects (the usual case) share one ``table``.  With routing options a DLID's route
        may be its own (its options): ``table`` is then one entry per DLID (:attr:`routes`) and
        ``index`` counts them.
        """
        node = self.node
        if node.option_bits:
            key = (id(self.lft), tuple(map(id, self.sl2vl_out)))
        else:
            key = tuple(map(id, self.sl2vl_out))
        cache = node.route_cache
        table = cache.get(key)
        if table is None:
            per_port = [_LOCAL] + [
                (port, tx, self.sl2vl_out[port]) if tx is not None else NO_ROUTE
                for port, tx in enumerate(self.tx_by_port) if port > 0
            ]
            table = per_port + [NO_ROUTE] * max(0, 256 - len(per_port))  # every byte value of the table
            if node.option_bits:
                from .options import add_options

                table = list(map(table.__getitem__, self.lft))
                add_options(node, table, self.lft, per_port)
            cache[key] = table
        self.table = table
        self.index = range(len(table)) if node.option_bits else self.lft

    # ------------------------------------------------------------ per packet

    def _receive(self, p, now: float) -> None:
        """Route *p*, whose first bit arrives at ``p.head_at``, and store it."""
        try:
            port, op, sl2vl = self.table[self.index[p.dlid]]
        except IndexError:
            self._past_table(p, now)
            return
        vl = p.vl
        if vl == VL15:
            if port == BY_SLID:  # (Kim's multipath) the SLID's LSB picks the DLID's own entry or the paths
                port, op, sl2vl = sl2vl.route(p)
            self._vl15(p, port, op, now)
            return
        if op is None:
            op, ovl = self._resolve(p, port, sl2vl, now)
            if op is None:
                return
        else:
            ovl = sl2vl[p.sl]
            if ovl >= op.nvl:
                self._discard(p, "sl2vl-drop")
                return
        p.out_port = op
        p.out_vl = ovl
        self.bufs[vl].store(p, op, ovl)

    receive = _receive

    def _receive_checked(self, p, now: float) -> None:
        """:meth:`_receive`, after asking the dropper whether to discard the arriving packet."""
        vl = p.vl
        if vl != VL15 and self.dropper.on_arrival(p, self.bufs[vl], now):
            self._discard(p, "dropper")
            return
        self._receive(p, now)

    def _receive_after_unit(self, p, now: float) -> None:
        """``receive`` with lookups shared by the switch's inputs: book a routing unit for *p*'s header, then
        route and store it as the input would (``route_delay`` is this packet's: the wait for the unit and
        the lookup)."""
        self.route_delay = self.node.routing_units.book(p.head_at, now) - p.head_at
        self._looked_up(p, now)

    # ------------------------------------------------------------ cold

    def _resolve(self, p, port: int, sl2vl, now: float):
        """The route target and output VL of a route entry that is not one output port: the switch itself,
        no route, routing options chosen now, or options asked for by the SLID; ``(None, 0)`` when the packet
        was consumed or dropped."""
        if port == BY_SLID:  # (sl2vl holds the SlidRoute)
            port, op, sl2vl = sl2vl.route(p)
            if op is not None:
                ovl = sl2vl[p.sl]
                if ovl >= op.nvl:
                    self._discard(p, "sl2vl-drop")
                    return None, 0
                return op, ovl
        if port == 0:
            self._consume(p)
            return None, 0
        if port != OPTIONS:
            self._discard(p, "no-route")
            return None, 0
        o, ovl = sl2vl.choose_at_lookup(p, now)  # (sl2vl holds the OptionSet)
        op = o.tx
        p.opt = o.index if o.adaptive else 0  # (Kim's paths are options 0, 1, ... and none is adaptive)
        if ovl >= op.nvl:
            self._discard(p, "sl2vl-drop")
            return None, 0
        return op, ovl

    def _vl15(self, p, port: int, op, now: float) -> None:
        """A LID-routed VL15 packet: to the switch's agent (port 0), or on towards its output's VL15."""
        if op is None:
            if port == 0:
                self._consume(p)
            else:
                self._discard(p, "no-route")
            return
        buf = self.vl15
        if buf.occ + p.credits > buf.capacity:
            self.sim.drop(p, "vl15-full", self.node)
            return
        p.out_port = op
        p.out_vl = VL15
        buf.store(p, op, VL15)

    def _past_table(self, p, now: float) -> None:
        """A DLID past the forwarding table: a directed-route SMP for the switch's agent, a multicast
        packet (:mod:`~ibfabric.components.switch.multicast`), or no route."""
        node = self.node
        if p.vl == VL15 and node.sma is not None and getattr(p, "smp", None) is not None:
            node.sma.receive(p, self.port, now)
            return
        if node.replicator is not None:
            from .multicast import receive

            receive(self, p, now)
            return
        self._discard(p, "no-route")

    def _consume(self, p) -> None:
        """A packet for the switch itself (port 0): taken in by its management agent at its tail."""
        if p.vl != VL15:
            return_credits(self.upstream, p.vl, p.tail_at + self.delay, p.credits)
        elif self.node.sma is not None:  # a LID-routed SMP for this switch (components/sm)
            self.node.sma.receive(p, self.port, p.head_at)
            return
        self.sim.deliver_local(p, self.node)

    def _discard(self, p, reason: str) -> None:
        """Drop an arriving packet; its buffer space is freed as its tail arrives."""
        if p.vl != VL15:
            return_credits(self.upstream, p.vl, p.tail_at + self.delay, p.credits)
        self.sim.drop(p, reason, self.node)

    def reads(self):
        """Every read point of this input that holds packets: data VLs, then VL15."""
        for b in self.bufs:
            yield from b.reads()
        yield from self.vl15.reads()

    def organisations(self):
        """The buffers of this input: each data VL's organisation, then VL15."""
        yield from self.bufs
        yield self.vl15


class RoutingUnits:
    """The forwarding-table lookups of a switch shared by its inputs (``routingUnits`` = *n* > 0).

    Each of the *n* units serves one header at a time for ``span`` ns (``routingDelay + arbitrationDelay``).  A
    header is booked when its packet is put on the link to the switch, ahead of its arrival: it takes the unit
    that is free soonest for ``span`` ns from its arrival on, filling an idle gap between earlier bookings where
    one is long enough.  On links of equal delay headers arrive in the order they are booked, so they are served
    in the order of arrival, each unit without idling while a header waits.
    """

    __slots__ = ("units", "span")

    def __init__(self, n: int, span: float):
        if n < 1 or not span > 0:
            raise ValueError(f"RoutingUnits needs n >= 1 and span > 0 (got {n}, {span})")
        #: per unit, its bookings ``(start, end)`` in time order, those over before the last call dropped
        self.units: list[list[tuple[float, float]]] = [[] for _ in range(n)]
        self.span = span

    def book(self, head: float, now: float) -> float:
        """Book a lookup for a header arriving at *head* (booked at *now* <= *head*: no later call books one
        arriving before *now*); returns the time it ends."""
        span = self.span
        best = -1.0
        where = None
        for cal in self.units:
            k = 0
            n = len(cal)
            while k < n and cal[k][1] <= now:
                k += 1
            if k:
                del cal[:k]
            t = head
            i = 0
            for s, e in cal:
                if t + span <= s:
                    break
                if e > t:
                    t = e
                i += 1
            if where is None or t < best:
                best, where, at = t, cal, i
                if t == head:
                    break
        where.insert(at, (best, best + span))
        return best + span
