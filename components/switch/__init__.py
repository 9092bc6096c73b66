"""The InfiniBand switch, composed of stages (DESIGN §3).

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

The stages, each a module of this package, chosen per switch from its
parameters (:mod:`~ibfabric.components.switch.plan` has the table and the one rule for what does not
combine):

- :mod:`~ibfabric.components.switch.rx`: the receiving side, forwarding-table lookup and the route;
- :mod:`~ibfabric.components.switch.inbuf`: the input buffer organisation of each input VL (one FIFO,
  virtual output queues, a FIFO split into adaptive and escape parts);
- :mod:`~ibfabric.components.switch.options`: routing options (Martínez's fully adaptive routing,
  Kim's multipath);
- :mod:`~ibfabric.components.switch.multicast`: multicast copy sets and the replication engine;
- :mod:`~ibfabric.components.switch.tx`: the output port -- crossbar choice (:mod:`~ibfabric.components.switch.crossbar`: FIFO or
  weighted round robin), VL arbitration, and the output side, straight to
  the link or through output VL buffers (:mod:`~ibfabric.components.switch.outbuf`);
- :mod:`~ibfabric.components.switch.lifetimes`: packet lifetimes watching every queue;
- :mod:`~ibfabric.components.switch.inactive`: what a port that is not Active does.
"""

from __future__ import annotations

import numpy as np

from ibfabric.errors import ConfigError

from ..link import shared
from ..node import STAGE_LOCAL, STAGE_WIRE, IBNode, parse_options
from ..packet import CREDIT_BYTES
from ..routing.tables import NO_PORT
from .inbuf import InputBuffer, SplitBuffer, VoqPool
from .plan import Plan, check
from .rx import RoutingUnits, SwitchRx
from .tx import SwitchTx

__all__ = ["Switch", "SwitchRx", "SwitchTx", "DROP_VL"]

#: SL-to-VL value meaning "drop" (IBA uses VL15 in data SL-to-VL tables this way).
DROP_VL = 15


class Switch(IBNode):
    """An IBA switch module (see the module docstring for its pipeline and stages)."""

    is_switch = True
    #: multicast (:mod:`~ibfabric.components.switch.multicast`): the replication engine, the MFT ``{MLID: ports}`` and per input
    #: port ``{MLID: McastRoute}``; set by :meth:`install_mft`
    replicator = None
    #: a random forwarding table set by the dynamic subnet manager ({"default", "top", "blocks"}), or None
    rft: dict | None = None
    mft: dict = {}
    mroutes: dict = {}

    def initialize(self, stage: int) -> None:
        if stage == STAGE_LOCAL:
            self._read_params()
            self.rx: dict[int, SwitchRx] = {}
            credits = self.vl_buffer // CREDIT_BYTES
            escape = -(-self.escape_buffer // CREDIT_BYTES)
            width = max(self.links, default=0) + 1
            for port, (peer, _pp, link) in self.links.items():
                nvl = self.link_vls(peer)
                rx = SwitchRx(self, port, (), self.vl15_buffer // CREDIT_BYTES, link.delay)
                if escape:
                    rx.bufs = tuple(SplitBuffer(rx, vl, credits, escape) for vl in range(nvl))
                elif self.voq:
                    rx.bufs = tuple(VoqPool(rx, vl, credits, width) for vl in range(nvl))
                else:
                    rx.bufs = tuple(InputBuffer(rx, vl, credits) for vl in range(nvl))
                self.rx[port] = rx
        elif stage == STAGE_WIRE:
            self._build_transmitters()

    def _read_params(self) -> None:
        self.read_common()
        p = self.params
        self.routing_delay = float(p["routingDelay"])
        self.arbitration_delay = float(p["arbitrationDelay"])
        for name, v in (("routingDelay", self.routing_delay), ("arbitrationDelay", self.arbitration_delay)):
            if v < 0:
                raise ConfigError(f"{self.path}: '{name}' must be >= 0 (got {v}ns)")
        self.route_delay = shared(self.routing_delay + self.arbitration_delay)
        units = self.int_param("routingUnits", 0, 255)
        #: the lookups shared by the inputs (``routingUnits`` > 0), or None: each input port does its own
        self.routing_units = RoutingUnits(units, self.route_delay) if units and self.route_delay > 0 else None
        self.crossbar_setup = float(p["crossbarSetup"])
        if self.crossbar_setup < 0:
            raise ConfigError(f"{self.path}: 'crossbarSetup' must be >= 0 (got {self.crossbar_setup}ns)")
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
        self.out_escape = self.int_param("outputEscapeBufferSize", 0, 1 << 30)
        if self.out_escape and self.out_buffer and self.out_escape > self.out_buffer - CREDIT_BYTES:
            raise ConfigError(f"{self.path}: 'outputEscapeBufferSize' ({self.out_escape}B) leaves no adaptive part"
                              f" of the {self.out_buffer}B output VL buffer")
        self.selector = None
        self.lifetimes = bool(getattr(self.dropper, "lifetimes", False))
        self.xbar_arbiter = str(p["crossbarArbiter"])
        if self.xbar_arbiter not in ("fifo", "wrr"):
            raise ConfigError(f"{self.path}: 'crossbarArbiter' must be \"fifo\" or \"wrr\" (got {self.xbar_arbiter!r})")
        queues = str(p["inputQueues"])
        if queues not in ("auto", "fifo", "voq"):
            raise ConfigError(f"{self.path}: 'inputQueues' must be \"auto\", \"fifo\" or \"voq\" (got {queues!r})")
        check(self)
        if queues == "auto":  # a FIFO where an escape split asks for one, virtual output queues otherwise
            queues = "fifo" if self.escape_buffer else "voq"
        #: what the switch's input VL buffers are (``inputQueues``, "auto" resolved; "split" with an escape part)
        self.input_queues = "split" if self.escape_buffer else queues
        self.voq = queues == "voq"
        if self.option_bits:
            self.selector = plugins.path_selectors.get(str(p["pathSelector"])).create(
                parse_options(str(p["pathSelectorOptions"]), self.path, "pathSelectorOptions"), self.rng,
                where=self.path)
        self.lft_ports: bytes = b""
        self.sl2vl_cache: dict[int, list[int]] = {}
        #: route tables shared by input ports with the same SL-to-VL tables (see SwitchRx.rebuild_routes)
        self.route_cache: dict[tuple, list] = {}

    def _build_transmitters(self) -> None:
        plan = self.plan = Plan(self)
        if plan.wrr:
            from .crossbar import parse_weights

            given = parse_weights(str(self.params["crossbarWeights"]), list(self.links), self.path)
            plan.weights = [given.get(port, 1) for port in range(max(self.links, default=0) + 1)]
        self.build_transmitters(lambda port, link, nvl, arb, env: SwitchTx(self, port, link, nvl, arb, env, plan))
        width = max(self.links, default=0) + 1
        tx_by_port = [None] * width
        for port, tx in self.tx.items():
            tx_by_port[port] = tx
        if self.escape_buffer:
            self._check_escape_halves()
        if self.out_escape:
            self._check_output_adaptive_part()
        if self.option_bits:
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

    def _largest_packet(self) -> int:
        """The largest packet the fabric's hosts send (MTU + header), in bytes."""
        return max((n.mtu + n.header_size for n in self.sim.ib_nodes if not n.is_switch), default=0)

    def _check_escape_halves(self) -> None:
        """Each part of a split VL buffer must hold a whole packet (virtual cut-through)."""
        largest = self._largest_packet()
        esc = -(-self.escape_buffer // CREDIT_BYTES) * CREDIT_BYTES
        adaptive = (self.vl_buffer // CREDIT_BYTES) * CREDIT_BYTES - esc
        for part, size in (("escape", esc), ("adaptive", adaptive)):
            if size < largest:
                raise ConfigError(
                    f"{self.path}: the {part} part of the {self.vl_buffer}B VL buffer ({size}B, escapeBufferSize"
                    f" {self.escape_buffer}B) cannot hold a {largest}B packet (MTU + header); raise vlBufferSize"
                    f" or lower the MTU")

    def _check_output_adaptive_part(self) -> None:
        """The adaptive part of a split output VL buffer must hold a whole packet (escape-option packets may
        fill the whole buffer, so its escape part need not)."""
        largest = self._largest_packet()
        adaptive = (self.out_buffer // CREDIT_BYTES - self.plan.out_reserve) * CREDIT_BYTES
        if adaptive < largest:
            raise ConfigError(
                f"{self.path}: the adaptive part of the {self.out_buffer}B output VL buffer ({adaptive}B,"
                f" outputEscapeBufferSize {self.out_escape}B) cannot hold a {largest}B packet (MTU + header);"
                f" raise outputBufferSize or lower the MTU")

    def _sl2vl_table(self, nvl: int) -> list[int]:
        """The default SL-to-VL table towards a port with *nvl* data VLs (one shared list per nvl)."""
        cache = self.sl2vl_cache
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
        self.route_cache = {}
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
        has entries, the replication engine named by ``replication`` (:mod:`~ibfabric.components.switch.multicast`)."""
        from .multicast import install_mft

        install_mft(self, entries)

    def buffers(self):
        """Every input buffer organisation of the switch (data VLs, then VL15, per port; then the management
        port's VL15 buffers of a dynamic subnet manager's agent)."""
        for rx in self.rx.values():
            yield from rx.organisations()
        if self.sma is not None:
            yield from self.sma.buffers()

    def packets_held(self) -> int:
        """Packets the switch holds: in its input buffers, output buffers and replication engine."""
        n = sum(len(b.packets()) for b in self.buffers())
        n += sum(tx.held_packets() for tx in self.tx.values())
        if self.replicator is not None and not self.replicator.source_copies:
            n += self.replicator.held()
        return n
