"""The host channel adapter (HCA): its module type, and its ports' two sides and traffic sources.

Send side (Kim et al. 2007 §2.3, Fig. 2; :mod:`~ibfabric.components.hca.tx`):
messages wait in per-SL send queues; the HCA serves the queues in SL
priority order (``slPriority``) and moves their packets (DMA) into the VL
buffers of its port (``sl2vl``); the port's VL arbiter then picks which VL
sends next, subject to the credits of the switch's input buffers.  Messages
larger than the MTU are segmented into MTU-sized packets, each carrying
``headerSize`` bytes of headers.  VL15 (management) packets skip the queues,
arbitration and flow control.

Receive side (:mod:`~ibfabric.components.hca.rx`): packets are consumed at
their tail, their credits return one wire delay later, and their latency is
recorded; a packet whose DLID is not one of the port's LIDs is counted as
dropped ("misrouted").

Traffic sources are lazy (:mod:`~ibfabric.components.hca.sources`): a source
knows the time of its next message and the HCA's transmitter creates every
message due by the time it wakes, so a source costs no events of its own.
Besides the pattern traffic of ``traffic`` and ``load``, an HCA sends Kim et
al.'s MPEG-2 streams and control packets
(:mod:`~ibfabric.components.hca.realtime`) and, in a QoS run, the CBR
packets of its connections (:mod:`ibfabric.components.qos.cbr`).
"""

from __future__ import annotations

import copy

import numpy as np

from ibfabric.errors import ConfigError

from ..node import STAGE_LOCAL, STAGE_TRAFFIC, STAGE_WIRE, IBNode
from ..packet import CREDIT_BYTES, VL15, Packet
from .rx import HcaRx
from .sources import MergedSource, SplitSource, TrafficSource
from .tx import HcaTx

__all__ = ["HCA", "MTUS"]

#: IBA path MTUs (payload bytes).
MTUS = (256, 512, 1024, 2048, 4096)


class HCA(IBNode):
    """A host channel adapter module (see the module docstring)."""

    def initialize(self, stage: int) -> None:
        if stage == STAGE_LOCAL:
            self._read_params()
            self.rx: dict[int, HcaRx] = {}
            for port, (peer, _pp, link) in self.links.items():
                nvl = self.link_vls(peer)
                self.rx[port] = HcaRx(self, port, nvl, self.vl_buffer // CREDIT_BYTES, link.delay)
        elif stage == STAGE_WIRE:
            self.build_transmitters(lambda port, link, nvl, arb, env: HcaTx(self, port, link, nvl, arb, env))
        elif stage == STAGE_TRAFFIC:
            self._start_traffic()

    def _read_params(self) -> None:
        self.read_common()
        p = self.params
        self.mtu = int(p["mtu"])
        if self.mtu not in MTUS:
            raise ConfigError(f"{self.path}: 'mtu' must be one of {MTUS} (got {self.mtu})")
        self.header_size = self.int_param("headerSize", 0, 4096)
        prio = str(p["slPriority"]).replace(",", " ").split()
        try:
            order = [int(s) for s in prio]
        except ValueError:
            raise ConfigError(f"{self.path}: 'slPriority' must list SLs 0..15 (got {p['slPriority']!r})") from None
        if any(not 0 <= s <= 15 for s in order) or len(set(order)) != len(order):
            raise ConfigError(f"{self.path}: 'slPriority' must list distinct SLs 0..15 (got {p['slPriority']!r})")
        self.sl_order = order + [s for s in range(16) if s not in order]
        self.port_lids = {}
        # traffic
        self.traffic = str(p["traffic"])
        self.load = float(p["load"])
        self.arrival = str(p["arrival"])
        self.adaptive = float(p["adaptive"])
        if not 0.0 <= self.adaptive <= 1.0:
            raise ConfigError(f"{self.path}: 'adaptive' must be a fraction from 0 to 1 (got {self.adaptive})")
        self.adaptive_by = str(p["adaptiveBy"])
        if self.adaptive_by not in ("dlid", "slid"):
            raise ConfigError(f"{self.path}: 'adaptiveBy' must be \"dlid\" or \"slid\" (got {self.adaptive_by!r})")
        self.random_path = float(p["randomPath"])
        if not 0.0 <= self.random_path <= 1.0 or self.adaptive + self.random_path > 1.0:
            raise ConfigError(f"{self.path}: 'randomPath' must be a fraction from 0 to 1, and with 'adaptive' at most"
                              f" 1 (got {self.random_path} and {self.adaptive})")
        self.realtime = str(p["realtime"])
        self.realtime_load = float(p["realtimeLoad"])
        self.realtime_sl = self.int_param("realtimeSL", 0, 14)
        self.realtime_sls = self.int_param("realtimeSLs", 1, 15 - self.realtime_sl)
        self.realtime_dst = int(p["realtimeDestination"])
        self.realtime_streams = self.int_param("realtimeStreams", 0, 4096)
        self.realtime_multicast = float(p["realtimeMulticast"])
        if not 0.0 <= self.realtime_multicast <= 1.0:
            raise ConfigError(f"{self.path}: 'realtimeMulticast' must be a fraction from 0 to 1"
                              f" (got {self.realtime_multicast})")
        if not 0.0 <= self.realtime_load <= 10.0:
            raise ConfigError(f"{self.path}: 'realtimeLoad' must be from 0 to 10 (got {self.realtime_load})")
        self.control_interval = float(p["controlInterval"])  # ns
        self.control_size = self.int_param("controlSize", 1, 1 << 16)
        if self.control_interval < 0:
            raise ConfigError(f"{self.path}: 'controlInterval' must be >= 0 (got {self.control_interval}ns)")
        if self.traffic:
            if not 0 < self.load:
                raise ConfigError(f"{self.path}: 'load' must be > 0 when traffic is '{self.traffic}' (got {self.load})")
            if self.arrival not in ("poisson", "constant"):
                raise ConfigError(f"{self.path}: 'arrival' must be 'poisson' or 'constant' (got {self.arrival!r})")
        self.traffic_sls = _parse_sls(str(p["sl"]), self.path)
        #: what the traffic source sends on: its own SLs, or those of the routing's paths (see _start_traffic)
        self.source_sls, self.path_sls = self.traffic_sls, None
        packet_size = self.int_param("packetSize", 1, 1 << 20)
        message = self.int_param("messageSize", 0, 1 << 40)
        if message:
            self.message_payload = message
        else:
            if packet_size <= self.header_size:
                raise ConfigError(
                    f"{self.path}: 'packetSize' ({packet_size}B) must exceed 'headerSize' ({self.header_size}B)"
                )
            if packet_size - self.header_size > self.mtu:
                raise ConfigError(
                    f"{self.path}: 'packetSize' ({packet_size}B) exceeds mtu + headerSize"
                    f" ({self.mtu + self.header_size}B); set messageSize to send larger messages"
                )
            self.message_payload = packet_size - self.header_size
        self.traffic_start = 0.0

    def sl2vl_table(self, nvl: int) -> list[int]:
        """The SL-to-VL map of a port with *nvl* data VLs: 16 VLs, one per SL.

        The ``sl2vl`` parameter if it is set, else ``sl % nvl``.

        Raises
        ------
        ConfigError
            If ``sl2vl`` maps an SL to a VL the port does not have.
        """
        if self.sl2vl is None:
            return [sl % nvl for sl in range(16)]
        bad = [vl for vl in self.sl2vl if vl >= nvl]
        if bad:
            raise ConfigError(f"{self.path}: 'sl2vl' uses VL {bad[0]} but the port has {nvl} data VLs")
        return list(self.sl2vl)

    def check_path_sls(self, sls) -> None:
        """Check that this HCA's SL-to-VL table puts each of *sls* (SLs of the routing's paths: dfsssp,
        lash) on the VL the routing engine gives it.

        Raises
        ------
        ConfigError
            Naming the first SL that it does not, and the ``numVLs`` that would do.
        """
        sim = self.sim
        vl_of = self.sl2vl_table(self.link_vls(self.links[self.first_port][0]))
        for sl in sls:
            if vl_of[sl] != sim.tables.sl2vl[sl]:
                raise ConfigError(f"{self.path}: the routing engine puts SL {sl} on VL {sim.tables.sl2vl[sl]},"
                                  f" this HCA's SL-to-VL table on VL {vl_of[sl]}: give it 'numVLs' >="
                                  f" {max(sim.tables.sl2vl[x] for x in sls) + 1} (or the engine"
                                  f" fewer layers)")

    def max_packet(self) -> int:
        """The largest packet the HCA sends, in bytes: its MTU plus the header size."""
        return self.mtu + self.header_size

    @property
    def first_port(self) -> int | None:
        """The lowest connected port number, or None if no port is connected."""
        return min(self.links) if self.links else None

    def set_port_lids(self, lids: dict[int, tuple[int, int]]) -> None:
        """Set ``{port: (base LID, lmc)}`` (done by the subnet manager)."""
        self.port_lids = dict(lids)
        for port, (lid, lmc) in lids.items():
            rx = self.rx[port]
            rx.lid_lo = lid
            rx.lid_hi = lid + (1 << lmc)
        if self.first_port is not None and self.first_port in lids:
            self.lid, self.lmc = lids[self.first_port]

    def _start_traffic(self) -> None:
        if self.first_port is None:
            return
        if self.realtime_load > 0 or self.control_interval > 0:
            self._start_realtime()
        if not self.traffic:
            return
        sim = self.sim
        src = sim.traffic_index(self)
        if src is None:
            return
        pattern = sim.traffic_pattern(self.traffic, str(self.params["trafficOptions"]))
        if not pattern.active(src):
            return
        dlids = sim.dlids_from(self)
        self.path_sls = sim.path_sls_from(self, dlids)
        if self.path_sls is not None:  # (else source_sls stays traffic_sls, as _read_params set it)
            if self.traffic_sls != [0]:
                raise ConfigError(f"{self.path}: the routing engine gives every path its SL (dfsssp, lash):"
                                  f" 'sl' cannot be set too (got {self.params['sl']!r})")
            self.source_sls = sorted(set(np.delete(self.path_sls, src).tolist()))
            self.check_path_sls(self.source_sls)
        tx = self.tx[self.first_port]
        # with path SLs the destination decides the SL: one source, creating every message on time when
        # there are several (SplitSource splits a stream of drawn SLs; a pattern may never reach an SL)
        source = TrafficSource if len(self.source_sls) == 1 or self.path_sls is not None else SplitSource
        self._add_source(tx, source(self, tx, pattern, src, dlids, self.rng))
        for sl in self.source_sls:
            tx.use_sl(sl)
        tx.poke(0.0)

    def _start_realtime(self) -> None:
        """Kim et al.'s MPEG-2 stream and control packets (:mod:`ibfabric.components.hca.realtime`)."""
        from .realtime import MpegSource, start_sources

        tx = self.tx[self.first_port]
        for s in start_sources(self):
            self._add_source(tx, s)
            if isinstance(s, MpegSource):
                for sl in sorted(set(s.sls)):
                    tx.use_sl(sl)
        tx.poke(0.0)

    def add_source(self, source) -> None:
        """Add a traffic source to the first port's transmitter, beside those it has (a workload's
        :class:`~ibfabric.components.hca.workload.MessageSource`); the port looks at it from now on."""
        if self.first_port is None:
            raise ConfigError(f"{self.path}: no port is connected")
        tx = self.tx[self.first_port]
        self._add_source(tx, source)
        tx.poke(self.sim.now)

    @staticmethod
    def _add_source(tx, source) -> None:
        if tx.source is None:
            tx.source = source
            return
        tx.source = MergedSource(tx.source, source)

    def send_packet(self, p: Packet, port: int | None = None) -> None:
        """Send one packet built by a script or another module (set ``p.vl = 15`` for management)."""
        port = self.first_port if port is None else port
        if port not in self.tx:
            raise ConfigError(f"{self.path}: port {port} is not connected")
        if p.size > self.vl_buffer and p.vl != VL15:
            raise ConfigError(f"{self.path}: a {p.size}B packet does not fit the {self.vl_buffer}B VL buffer")
        if p.slid == 0:
            p.slid = self.lid
        p.created = self.sim.now
        self.sim.stats.add_generated(1, p.size, p.created)
        self.tx[port].enqueue(p)

    def send_multicast(self, group, size: int, *, sl: int | None = None, **kw) -> list[Packet]:
        """Send one packet of *size* wire bytes to multicast *group* (its name or MulticastGroup), now.

        This host must be one of the group's senders.  *sl* defaults to the group's first SL under a
        bandwidth policy that gives groups SLs of their own (``multicastBandwidth``), else 0.  With
        switch replication the packet goes to the group's MLID for this sender (``group.mlid_of(host)``); with
        ``replication = "replicated-unicast"`` one unicast copy goes to each other member.  The
        packet(s) share a new message id; :mod:`ibfabric.mstats` accounts for the members
        reached.  Returns the packets queued.
        """
        if isinstance(size, bool) or not isinstance(size, (int, np.integer)) or size < 1:  # (public API check)
            raise ConfigError(f"{self.path}: send_multicast's size must be a positive number of bytes (got {size!r})")
        gi = self.multicast_group(group)
        if sl is None:
            sls = self.sim.multicast.sls[gi]
            sl = sls[0] if sls else 0
        out = self.multicast_packets(gi, size, sl=sl, created=self.sim.now, msg=self.sim.next_message_id(), **kw)
        for p in out:
            self.send_packet(p)
        return out

    def multicast_group(self, group) -> int:
        """The index in ``sim.multicast`` of *group* (a name or MulticastGroup), checked: groups are
        declared, the switches can replicate, this host sends to the group and it has another member.

        Raises
        ------
        ConfigError
            Naming what is wrong.
        """
        sim = self.sim
        acc = sim.multicast
        if acc is None:
            raise ConfigError(f"{self.path}: no multicast groups are declared (the subnet manager's"
                              f" 'multicastGroups')")
        try:
            gi = acc.group_index(group)
        except KeyError as exc:
            raise ConfigError(f"{self.path}: {exc.args[0]}") from None
        g = acc.groups[gi]
        host = sim.traffic_index(self)
        if host not in g.sender_hosts:
            raise ConfigError(f"{self.path}: host {host} is not a sender of multicast group '{g.name}'")
        if not any(m != host for m in g.member_hosts):
            raise ConfigError(f"{self.path}: multicast group '{g.name}' has no member but the sender")
        return gi

    def multicast_packets(self, gi: int, size: int, *, sl: int, created: float, **kw) -> list[Packet]:
        """The packet(s) that carry one multicast packet of *size* wire bytes to group *gi* (an index
        checked by :meth:`multicast_group`), accounted as sent in ``sim.multicast`` but not queued.

        One packet to the group's MLID for this host with switch replication, one unicast copy per
        other member with ``replicated-unicast``; *kw* are :class:`Packet` fields (``msg`` and
        ``seq`` identify the packet to the accounting, so every packet sent needs its own pair).
        """
        sim = self.sim
        acc = sim.multicast
        g = acc.groups[gi]
        host = sim.traffic_index(self)
        klass = kw.pop("cls", 0)  # Packet.make's own first argument is named cls
        p = Packet.make(self.lid, g.mlid_of(host), size, sl=sl, src=host, **kw)
        p.created, p.cls = created, klass
        acc.add_sent(p, gi, host)
        if not acc.source_copies:
            return [p]
        dlids = self.__dict__.get("_member_dlids")
        if dlids is None:  # the unicast DLID of every host (routes are static): the list HCAs share
            dlids = self._member_dlids = sim.dlids_from(self)
        out = []
        for m in g.member_hosts:
            if m != host:
                c = copy.copy(p)
                c.dlid = int(dlids[m])
                c.dst = m
                out.append(c)
        return out


def _parse_sls(text: str, owner: str) -> list[int]:
    """'3' -> [3]; '0,2' -> [0, 2]; '0..15' -> [0, ..., 15]."""
    out: list[int] = []
    try:
        for item in text.replace(",", " ").split():
            if ".." in item:
                lo, hi = item.split("..")
                out.extend(range(int(lo), int(hi) + 1))
            else:
                out.append(int(item))
    except ValueError:
        raise ConfigError(f"{owner}: 'sl' must be SLs like '3', '0,2' or '0..15' (got {text!r})") from None
    if not out or any(not 0 <= s <= 15 for s in out):
        raise ConfigError(f"{owner}: 'sl' must name SLs 0..15 (got {text!r})")
    return out
