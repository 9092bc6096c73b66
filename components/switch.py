"""The InfiniBand switch.

Pipeline of one packet through a switch (Kim et al. 2007 §2.2, Fig. 1):

1. its first bit reaches input port *i* at ``head_at`` and it is stored in
   the input buffer of its VL (the sender held credits for all of it);
2. the forwarding table is looked up as soon as it arrives (output port *o*)
   and SL-to-VL mapping of (*i*, *o*, SL) picks the output VL;
3. ``routingDelay + arbitrationDelay`` after ``head_at`` it may cross the
   crossbar (``ready_at``), once it heads its input VL queue;
4. the output port's VL arbiter chooses among the VLs whose head candidate
   is ready and fits in the downstream buffer; the packet crosses the
   crossbar at ``crossbarSpeedup`` times the fastest link rate of the
   switch, holding input *i*'s crossbar connection meanwhile, and is sent on
   link *o* at that link's rate (virtual cut-through: it may start before
   its tail has arrived; it cannot end before its tail has, nor before the
   crossbar has delivered it);
5. its credits go back to the upstream sender when its tail has left the
   input buffer, one wire delay later.

Zero-load latency across one switch, from the first bit leaving the source
to the last bit arriving at the destination, for a packet of ``L`` bytes on
links of byte time ``tau`` and wire delays ``d1``, ``d2``::

    d1 + routingDelay + arbitrationDelay + L * tau + d2

— one byte time per byte, not two, because of cut-through.

VL15 (subnet management) has its own small input buffer, is served before
every data VL and uses no credits; a VL15 packet that finds that buffer full
is dropped, as the IBA specification allows.
"""

from __future__ import annotations

import numpy as np

from ibfabric.errors import ConfigError

from .link import shared
from .node import STAGE_LOCAL, STAGE_WIRE, IBNode, parse_options
from .packet import CREDIT_BYTES, VL15
from .port import INF, SEVERAL, InputBuffer, TxPort, return_credits
from .tables import NO_PORT

__all__ = ["Switch", "SwitchRx", "SwitchTx"]

#: SL-to-VL value meaning "drop" (IBA uses VL15 in data SL-to-VL tables this way).
DROP_VL = 15
_LOCAL = (0, None, None)
_NO_ROUTE = (NO_PORT, None, None)
#: The port of a route entry whose routing options are chosen at lookup time.
_OPTIONS = -1
#: The port of a route entry whose options are asked for by the packet's SLID (``optionsWhen = "slid"``).
_BY_SLID = -2


class SwitchRx:
    """The receiving side of one switch port: per-VL input buffers and routing."""

    # in the order a packet-hop reads them (see TxPort's slots)
    __slots__ = (
        "table", "index", "bufs", "route_delay", "xbar_free", "drop_check", "xbar_bt", "upstream",
        "delay", "dropper", "vl15", "node", "sim", "port", "lft", "tx_by_port", "sl2vl_out",
    )

    def __init__(self, node: "Switch", port: int, nvl: int, buf_credits: int, vl15_credits: int, delay: float):
        self.node = node
        self.sim = node.sim
        self.port = port
        self.bufs = tuple(InputBuffer(self, vl, buf_credits) for vl in range(nvl))  # (a tuple: see TxPort.returns)
        self.vl15 = InputBuffer(self, VL15, vl15_credits)
        self.upstream: TxPort | None = None
        self.delay = delay
        self.xbar_free = 0.0
        self.lft: list[int] = []
        #: the route of DLID d is ``table[index[d]]`` (see :meth:`rebuild_routes`)
        self.table: list[tuple] = []
        self.index = b""
        self.tx_by_port: list[SwitchTx | None] = []
        self.sl2vl_out: list[list[int] | None] = []
        self.route_delay = node.route_delay
        self.xbar_bt = 0.0
        self.dropper = node.dropper
        self.drop_check = not getattr(node.dropper, "passive", False)

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
        cache = node._route_cache
        table = cache.get(key)
        if table is None:
            per_port = [_LOCAL] + [
                (port, tx, self.sl2vl_out[port]) if tx is not None else _NO_ROUTE
                for port, tx in enumerate(self.tx_by_port) if port > 0
            ]
            table = per_port + [_NO_ROUTE] * max(0, 256 - len(per_port))  # every byte value of the table
            if node.option_bits:
                from .options import add_options

                table = list(map(table.__getitem__, self.lft))
                add_options(node, table, self.lft, per_port)
            cache[key] = table
        self.table = table
        self.index = range(len(table)) if node.option_bits else self.lft

    def receive(self, p, now: float) -> None:
        """Store *p*, whose first bit arrives at ``p.head_at``, and route it."""
        try:
            port, op, sl2vl = self.table[self.index[p.dlid]]
        except IndexError:
            if p.vl == VL15 and self.node.sma is not None and getattr(p, "smp", None) is not None:
                # a directed-route SMP (DLID 0xFFFF): the switch's agent (components/sm)
                self.node.sma.receive(p, self.port, now)
                return
            if self.node.replicator is not None:  # a multicast LID: past every forwarding table (cold path)
                from .multicast import receive

                receive(self, p, self.vl15 if p.vl == VL15 else self.bufs[p.vl], now)
                return
            port, op, sl2vl = _NO_ROUTE
        vl = p.vl
        if vl == VL15:
            buf = self.vl15
            if buf.occ + p.credits > buf.capacity:
                self.sim.drop(p, "vl15-full", self.node)
                return
            ovl = VL15
        else:
            buf = self.bufs[vl]
            if op is not None:
                ovl = sl2vl[p.sl]
        if op is None:
            if port == _BY_SLID:  # routing options asked for by the SLID (sl2vl holds the SlidRoute)
                port, op, sl2vl = sl2vl.route(p)
                if op is not None:
                    ovl = VL15 if vl == VL15 else sl2vl[p.sl]
        if op is None:
            if port == 0:
                self._consume(p, buf)
                return
            if port != _OPTIONS:
                self._discard(p, buf, "no-route")
                return
            # routing options chosen at lookup time (sl2vl holds the OptionSet)
            o, ovl = sl2vl.choose_at_lookup(p, now)
            op = o.tx
            p.opt = o.index
        if ovl >= op.nvl and ovl != VL15:
            self._discard(p, buf, "sl2vl-drop")
            return
        if self.drop_check and self.dropper.on_arrival(p, buf, now):
            self._discard(p, buf, "dropper")
            return
        p.out_port = op
        p.out_vl = ovl
        # store it; a new head becomes a candidate of its output port (inline: the per-packet path)
        t = p.ready_at = p.head_at + self.route_delay
        q = buf.q
        q.append(p)
        occ = buf.occ = buf.occ + p.credits
        if occ > buf.max_occ:
            buf.max_occ = occ
        if len(q) == 1:
            if ovl == VL15:
                op.mcands.append(buf)
            else:
                op.cands[ovl].append(buf)
            if self.xbar_free > t:
                t = self.xbar_free
            op.poke(t)

    def store(self, p, buf: InputBuffer, op, ovl: int) -> None:
        """Append the routed packet *p* to *buf*; a new head becomes a candidate of *op* (for the cold
        paths, multicast heads; :meth:`receive` and :class:`~ibfabric.components.voq.VoqRx` inline it)."""
        t = p.ready_at = p.head_at + self.route_delay
        q = buf.q
        q.append(p)
        occ = buf.occ = buf.occ + p.credits
        if occ > buf.max_occ:
            buf.max_occ = occ
        if len(q) == 1:
            if ovl == VL15:
                op.mcands.append(buf)
            else:
                op.cands[ovl].append(buf)
            if self.xbar_free > t:
                t = self.xbar_free
            op.poke(t)

    def _consume(self, p, buf: InputBuffer) -> None:
        """A packet for the switch itself (port 0): taken in by its management agent at its tail."""
        if p.vl != VL15:
            return_credits(self.upstream, p.vl, p.tail_at + self.delay, p.credits)
        elif self.node.sma is not None:  # a LID-routed SMP for this switch (components/sm)
            self.node.sma.receive(p, self.port, p.head_at)
            return
        self.sim.deliver_local(p, self.node)

    def _discard(self, p, buf: InputBuffer, reason: str) -> None:
        """Drop an arriving packet; its buffer space is freed as its tail arrives."""
        if p.vl != VL15:
            return_credits(self.upstream, p.vl, p.tail_at + self.delay, p.credits)
        self.sim.drop(p, reason, self.node)


class SwitchTx(TxPort):
    """The transmitter of one switch port: picks the next packet among the
    input buffers whose head packet is routed to it."""

    # a slot, as TxPort's (``mcands`` is one of TxPort's): on a large fabric an instance dictionary is
    # two more cold objects per look
    __slots__ = ("chosen",)

    #: weighted round robin among the inputs (components/crossbar.py); FIFO order otherwise
    wrr = False

    def __init__(self, *args, **kw):
        super().__init__(*args, **kw)
        self.mcands: list[InputBuffer] = []
        self.chosen: list[InputBuffer | None] = [None] * self.nvl

    def has_work(self) -> bool:
        return bool(self.mcands) or any(self.cands)

    def sendable(self, now: float) -> bool:
        for buf in self.mcands:
            if max(buf.q[0].ready_at, buf.rx.xbar_free) <= now:
                return True
        for vl in range(self.nvl):
            for buf in self.cands[vl]:
                p = buf.q[0]
                if max(p.ready_at, buf.rx.xbar_free) <= now and p.credits <= self._credits_at(vl, now):
                    return True
        return False

    def after_send(self, end: float) -> float:
        if self.mcands or not self.single:
            return end if self.has_work() else INF
        c = self.cands[0]
        if not c:
            return INF
        t_el = INF
        need = 1 << 30
        for buf in c:
            p = buf.q[0]
            t = p.ready_at
            xf = buf.rx.xbar_free
            if xf > t:
                t = xf
            if t < t_el:
                t_el = t
            if p.credits < need:
                need = p.credits
        t = self.credit_time(0, need, end)
        if t_el > t:
            t = t_el
        return t if t > end else end

    def _try_vl15(self, now: float) -> tuple[float | None, float]:
        """Send a ready VL15 packet if there is one: ``(end or None, next time one is ready)``."""
        nxt = INF
        for buf in self.mcands:
            p = buf.q[0]
            t = p.ready_at
            xf = buf.rx.xbar_free
            if xf > t:
                t = xf
            if t <= now:
                self.mcands.remove(buf)
                return self._send(buf, p, VL15, now), nxt
            if t < nxt:
                nxt = t
        return None, nxt

    def _pick(self, vl: int, now: float) -> tuple[InputBuffer | None, float]:
        """The first candidate of VL *vl* that may cross now and fits the credits
        downstream, or ``(None, when to look again)``.  A packet that does not
        fit does not hold back a smaller one from another input behind it."""
        credits = self.credits[vl]
        nxt = INF
        need = 0
        for buf in self.cands[vl]:
            p = buf.q[0]
            t = p.ready_at
            xf = buf.rx.xbar_free
            if xf > t:
                t = xf
            if t <= now:
                if p.credits <= credits:
                    return buf, nxt
                if need == 0 or p.credits < need:
                    need = p.credits
            elif t < nxt:
                nxt = t
        if need:
            t = self.credit_time(vl, need, now)
            if t < nxt:
                nxt = t
        return None, nxt

    def try_send(self, now: float) -> float | None:
        """Send one packet at *now*: VL15 packets first, then the data VL the arbiter picks
        among those whose head packet has credits.  Returns as :meth:`TxPort.try_send
        <ibfabric.components.port.TxPort.try_send>`.
        """
        nxt = INF
        if self.mcands:
            end, nxt = self._try_vl15(now)
            if end is not None:
                return end
        if self.single:
            # One data VL: no arbitration to do (every arbiter would pick VL 0).
            if not self.cands[0]:
                self.next_t = nxt
                return None
            rq = self.returns[0]
            if rq and rq[0] <= now:
                self.absorb(0, now)
            buf, t = self._pick(0, now)
            if buf is None:
                self.next_t = t if t < nxt else nxt
                return None
            self.cands[0].remove(buf)
            return self._send(buf, buf.q[0], 0, now)
        ready = self.ready
        chosen = self.chosen
        returns = self.returns
        one = -1  # the VL ready if it is the only one, SEVERAL if more are
        for vl in range(self.nvl):
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
            one = vl if one < 0 else SEVERAL
        if one < 0:
            self.next_t = nxt
            return None
        vl = self.pick_one(ready, one) if one != SEVERAL else self.arbiter.select(ready)
        buf = chosen[vl]
        self.cands[vl].remove(buf)
        return self._send(buf, buf.q[0], vl, now)

    def _send(self, buf: InputBuffer, p, vl: int, now: float) -> float:
        """Move *p* from the head of *buf* across the crossbar and onto this port's link."""
        xend = cross(buf, p, now)
        end = now + p.size * self.byte_time
        if xend > end:
            end = xend  # the link cannot send bytes before the crossbar (or the input link) delivers them
        self.launch(p, vl, now, end)
        return end


def cross(buf: InputBuffer, p, now: float) -> float:
    """*p*, the head of *buf*, starts crossing the crossbar at *now*: return when it has crossed.

    The input's crossbar connection is busy until then; the packet's credits
    go back upstream once its tail has left the buffer (one wire delay
    later); the next packet of the buffer becomes a candidate of its output
    port.  Shared by input-queued and output-buffered ports.
    """
    q = buf.q
    del q[0]  # a deque, or the list of a virtual output queue (components/voq.py)
    rx = buf.rx
    cr = p.credits
    xend = now + p.size * rx.xbar_bt
    if p.tail_at > xend:
        xend = p.tail_at
    rx.xbar_free = xend
    if buf.recycled:  # a virtual output queue: its pool counts the buffer's credits
        buf._occ -= cr
        buf.pool.occ -= cr
        if not q:
            buf.release()
    else:
        buf.occ -= cr
    if buf.vl != VL15:
        return_credits(rx.upstream, buf.vl, xend + rx.delay, cr)
    if q:
        n = q[0]
        op = n.out_port
        if n.out_vl == VL15:
            op.mcands.append(buf)
        else:
            op.cands[n.out_vl].append(buf)
        t = n.ready_at
        if xend > t:
            t = xend
        op.poke(t)
    return xend


def _declares_groups(sim) -> bool:
    """Whether a module of *sim* declares multicast groups (``multicastGroups``); looked up once per
    simulation, not once per switch (that scan is quadratic in the size of the fabric)."""
    found = sim.__dict__.get("_declares_multicast_groups")
    if found is None:
        found = sim._declares_multicast_groups = any(
            str(m.params["multicastGroups"]).strip() for m in sim.modules_by_path.values() if "multicastGroups" in m.params)
    return found


class Switch(IBNode):
    """An IBA switch module (see the module docstring for its pipeline)."""

    is_switch = True
    #: multicast (:mod:`ibfabric.components.multicast`): the replication engine, the MFT
    #: ``{MLID: ports}`` and per input port ``{MLID: McastRoute}``; set by :meth:`install_mft`
    replicator = None
    mcast_problem: str | None = None
    #: a random forwarding table set by the dynamic subnet manager ({"default", "top", "blocks"}), or None
    rft: dict | None = None
    mft: dict = {}
    mroutes: dict = {}

    def initialize(self, stage: int) -> None:
        if stage == STAGE_LOCAL:
            self._read_params()
            self.rx: dict[int, SwitchRx] = {}
            rx_class = SwitchRx
            if self.escape_buffer or self.lifetimes:
                from .options import SplitRx as rx_class
            elif self.voq:
                from .voq import VoqRx as rx_class
            for port, (peer, _pp, link) in self.links.items():
                nvl = self.link_vls(peer)
                self.rx[port] = rx_class(
                    self, port, nvl, self.vl_buffer // CREDIT_BYTES, self.vl15_buffer // CREDIT_BYTES, link.delay
                )
                if self.escape_buffer:
                    for buf in self.rx[port].bufs:
                        buf.adaptive_cap = buf.capacity - -(-self.escape_buffer // CREDIT_BYTES)
        elif stage == STAGE_WIRE:
            self._build_transmitters()

    def _needs_fifo(self) -> bool:
        """``inputQueues = "auto"``: whether a mechanism of this switch is defined on one FIFO per input
        VL (routing options, escape buffers, packet lifetimes, or multicast replicated by the switch in a
        network that declares groups); the switch gets virtual output queues otherwise."""
        if self.option_bits or self.escape_buffer or self.lifetimes:
            return True
        if not _declares_groups(self.sim):
            return False
        reg = self.sim.plugins.replication_engines.get(str(self.params["replication"]))
        return not getattr(reg.obj, "source_copies", False)  # replicated unicast: the switch copies nothing

    def _read_params(self) -> None:
        self.read_common()
        p = self.params
        self.routing_delay = float(p["routingDelay"])
        self.arbitration_delay = float(p["arbitrationDelay"])
        for name, v in (("routingDelay", self.routing_delay), ("arbitrationDelay", self.arbitration_delay)):
            if v < 0:
                raise ConfigError(f"{self.path}: '{name}' must be >= 0 (got {v}ns)")
        self.route_delay = shared(self.routing_delay + self.arbitration_delay)
        self.speedup = float(p["crossbarSpeedup"])
        if not self.speedup > 0:
            raise ConfigError(f"{self.path}: 'crossbarSpeedup' must be > 0 (got {self.speedup})")
        self.vl15_buffer = self.int_param("vl15BufferSize", CREDIT_BYTES, 1 << 30)
        self.out_buffer = self.int_param("outputBufferSize", 0, 1 << 30)
        plugins = self.sim.plugins
        self.dropper = plugins.packet_droppers.get(str(p["dropper"])).create(
            parse_options(str(p["dropperOptions"]), self.path, "dropperOptions"), self.rng, where=self.path
        )
        self.option_bits = self.int_param("optionBits", 0, 7)
        self.select_at = str(p["selectAt"])
        if self.select_at not in ("lookup", "arbitration"):
            raise ConfigError(f"{self.path}: 'selectAt' must be \"lookup\" or \"arbitration\" (got {self.select_at!r})")
        self.options_when = str(p["optionsWhen"])
        if self.options_when not in ("dlid", "slid"):
            raise ConfigError(f"{self.path}: 'optionsWhen' must be \"dlid\" or \"slid\" (got {self.options_when!r})")
        self.escape_buffer = self.int_param("escapeBufferSize", 0, 1 << 30)
        if self.escape_buffer and self.escape_buffer > self.vl_buffer - CREDIT_BYTES:
            raise ConfigError(f"{self.path}: 'escapeBufferSize' ({self.escape_buffer}B) leaves no adaptive part of"
                              f" the {self.vl_buffer}B VL buffer")
        self.selector = None
        self.lifetimes = bool(getattr(self.dropper, "lifetimes", False))
        if (self.option_bits or self.escape_buffer or self.lifetimes) and self.out_buffer:
            what = "packet lifetimes (dropper)" if self.lifetimes else "routing options and escape buffers"
            raise ConfigError(f"{self.path}: {what} need an input-queued switch (outputBufferSize = 0B)")
        self.xbar_arbiter = str(p["crossbarArbiter"])
        if self.xbar_arbiter not in ("fifo", "wrr"):
            raise ConfigError(f"{self.path}: 'crossbarArbiter' must be \"fifo\" or \"wrr\" (got {self.xbar_arbiter!r})")
        if self.xbar_arbiter == "fifo" and str(p["crossbarWeights"]).strip():
            raise ConfigError(f"{self.path}: 'crossbarWeights' needs crossbarArbiter = \"wrr\"")
        queues = str(p["inputQueues"])
        if queues not in ("auto", "fifo", "voq"):
            raise ConfigError(f"{self.path}: 'inputQueues' must be \"auto\", \"fifo\" or \"voq\" (got {queues!r})")
        if queues == "auto":
            queues = "fifo" if self._needs_fifo() else "voq"
        #: "fifo" or "voq": what the switch's input VL buffers are (``inputQueues``, "auto" resolved)
        self.input_queues = queues
        self.voq = queues == "voq"
        if self.voq and (self.option_bits or self.escape_buffer or self.lifetimes):
            what = "packet lifetimes (dropper)" if self.lifetimes else "routing options and escape buffers"
            raise ConfigError(f"{self.path}: {what} need one FIFO per input VL (inputQueues = \"fifo\")")
        if self.option_bits:
            self.selector = plugins.path_selectors.get(str(p["pathSelector"])).create(
                parse_options(str(p["pathSelectorOptions"]), self.path, "pathSelectorOptions"), self.rng,
                where=self.path)
        self.lft_ports: bytes = b""
        self._sl2vl_cache: dict[int, list[int]] = {}
        self._route_cache: dict[tuple, list] = {}

    def _build_transmitters(self) -> None:
        wrr = self.xbar_arbiter == "wrr"
        if wrr:
            from .crossbar import parse_weights, wrr_class

            given = parse_weights(str(self.params["crossbarWeights"]), list(self.links), self.path)
            weights = [given.get(port, 1) for port in range(max(self.links, default=0) + 1)]

        def make(port, link, nvl, arb, env):
            if self.out_buffer:
                from .outbuf import BufferedSwitchTx as cls

                extra = (self.out_buffer,)
            elif self.option_bits or self.escape_buffer or self.lifetimes:
                from .options import OptionSwitchTx as cls

                extra = ()
            else:
                cls, extra = SwitchTx, ()
            if wrr:
                tx = wrr_class(cls)(self, port, link, nvl, arb, env, *extra)
                tx.init_wrr(weights)
                return tx
            return cls(self, port, link, nvl, arb, env, *extra)

        self.build_transmitters(make)
        width = max(self.links, default=0) + 1
        tx_by_port = [None] * width
        for port, tx in self.tx.items():
            tx_by_port[port] = tx
        if self.escape_buffer:
            self._check_escape_halves()
        if self.option_bits or self.escape_buffer:
            for tx in self.tx.values():
                peer = tx.peer_rx.node
                tx.escape_reserve = -(-getattr(peer, "escape_buffer", 0) // CREDIT_BYTES)
        fastest = min((link.byte_time for _, _, link in self.links.values()), default=1.0)
        xbar_bt = shared(fastest / self.speedup)
        sl2vl_out = [None] * width  # the same tables for every input: one list each, filled once per switch
        for out, tx in self.tx.items():
            sl2vl_out[out] = self._sl2vl_table(tx.nvl)
        for port, rx in self.rx.items():
            rx.tx_by_port = tx_by_port
            rx.xbar_bt = xbar_bt
            rx.sl2vl_out = sl2vl_out.copy()

    def _check_escape_halves(self) -> None:
        """Each part of a split VL buffer must hold a whole packet (virtual cut-through)."""
        largest = max((n.mtu + n.header_size for n in self.sim.ib_nodes if not n.is_switch), default=0)
        esc = -(-self.escape_buffer // CREDIT_BYTES) * CREDIT_BYTES
        adaptive = (self.vl_buffer // CREDIT_BYTES) * CREDIT_BYTES - esc
        for part, size in (("escape", esc), ("adaptive", adaptive)):
            if size < largest:
                raise ConfigError(
                    f"{self.path}: the {part} part of the {self.vl_buffer}B VL buffer ({size}B, escapeBufferSize"
                    f" {self.escape_buffer}B) cannot hold a {largest}B packet (MTU + header); raise vlBufferSize"
                    f" or lower the MTU")

    def _sl2vl_table(self, nvl: int) -> list[int]:
        """The default SL-to-VL table towards a port with *nvl* data VLs (one shared list per nvl)."""
        cache = self._sl2vl_cache
        if nvl not in cache:
            if self.sl2vl is None:
                cache[nvl] = [sl % nvl for sl in range(16)]
            else:
                cache[nvl] = [vl if vl < nvl else DROP_VL for vl in self.sl2vl]
        return cache[nvl]

    def set_sl2vl(self, in_port: int, out_port: int, table: list[int]) -> None:
        """Set the SL-to-VL table of one (input port, output port) pair: 16 VLs, 15 = drop."""
        if len(table) != 16 or not all(0 <= v <= 15 for v in table):
            raise ConfigError(f"{self.path}: an SL-to-VL table has 16 VLs in 0..15")
        if in_port not in self.rx or out_port not in self.tx:
            raise ConfigError(f"{self.path}: ports {in_port} -> {out_port} are not both connected")
        self.rx[in_port].sl2vl_out[out_port] = list(table)
        self.rx[in_port].rebuild_routes()

    def install_lft(self, ports) -> None:
        """Install a forwarding table: ``ports[lid]`` is the output port (255 = none, 0 = this switch).

        Kept as ``bytes`` (one byte per LID: switches x LIDs is the largest table of a big fabric)."""
        self.lft_ports = np.asarray(ports, dtype=np.uint8).tobytes()
        self._route_cache = {}
        for rx in self.rx.values():
            rx.lft = self.lft_ports
            rx.rebuild_routes()

    def install_lft_block(self, block: int, ports, size: int = 64) -> None:
        """Install one block of the forwarding table: LIDs ``block * size ...`` get *ports* (a
        SubnSet(LinearForwardingTable) of the dynamic subnet manager, :mod:`ibfabric.components.sm`).
        Packets already routed keep their output port; the next lookups see the new entries."""
        self.rft = None  # a linear table again (random forwarding entries, if any, are gone)
        lo = block * size
        lft = bytearray(self.lft_ports)
        if len(lft) < lo + len(ports):
            lft.extend([NO_PORT] * (lo + len(ports) - len(lft)))
        lft[lo:lo + len(ports)] = np.asarray(ports, dtype=np.uint8).tobytes()
        self.install_lft(lft)

    def set_default_port(self, port: int, top: int) -> None:
        """SubnSet(SwitchInfo) of a switch routed by a random forwarding table: every DLID below
        *top* without an RFT entry goes to *port* (IBA's DefaultPort).  Clears the RFT entries (the
        subnet manager sends them next, block by block)."""
        self.rft = {"default": int(port), "top": int(top), "blocks": {}}
        self._install_rft()

    def install_rft_block(self, block: int, entries) -> None:
        """SubnSet(RandomForwardingTable): block *block* holds *entries*, ``(LID, port)`` pairs
        (16 per block in IBA; an empty block clears it)."""
        if self.rft is None:
            self.rft = {"default": NO_PORT, "top": len(self.lft_ports), "blocks": {}}
        self.rft["blocks"][int(block)] = tuple(entries)
        self._install_rft()

    def _install_rft(self) -> None:
        rft = self.rft
        lft = bytearray([rft["default"]]) * rft["top"]
        for entries in rft["blocks"].values():
            for lid, port in entries:
                if lid >= len(lft):
                    lft.extend([NO_PORT] * (lid + 1 - len(lft)))
                lft[lid] = port
        self.install_lft(lft)

    def install_mft(self, entries: dict[int, tuple[int, ...]]) -> None:
        """Install a multicast forwarding table ``{MLID: output ports}`` (port 0 excluded) and, if it
        has entries, the replication engine named by ``replication`` (:mod:`ibfabric.components.multicast`)."""
        from .multicast import install_mft

        install_mft(self, entries)

    def buffers(self):
        """Every input buffer of the switch (data VLs, then VL15, per port)."""
        for rx in self.rx.values():
            yield from rx.bufs
            yield rx.vl15
        if self.sma is not None:  # the management port's VL15 buffers (dynamic subnet manager)
            yield from self.sma.buffers()
