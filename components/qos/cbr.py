"""QoS in a running simulation: CBR connection traffic and the :class:`QosNetwork` that sets it up.

::

    sim = ibfabric.load("net.ned", overrides={"**.numVLs": "10"}, warmup="1ms")
    qos = QosNetwork(sim, policy="alfaro2001", options={"be_share": "0.2"})
    est = qos.establish(1000, packet_size=256)      # admission (Alfaro et al. 2001 §5.2)
    qos.start_traffic()                             # one CBR source per sending host
    summary = sim.run("5ms")                        # summary["qos"]: per-SL and per-connection metrics

:class:`QosNetwork` installs the class map's SL-to-VL table on every port
(every switch input/output pair and every HCA), creates the arbitration
policy's table state for every output port (so BE and CH reservations exist
before any connection), admits connections and installs the tables it
computes into the ports' ``iba-vlarb`` arbiters; :meth:`QosNetwork.start_traffic`
attaches a :class:`CbrSource` to every host with connections.  The
simulation's summary then gains a ``"qos"`` section
(:func:`ibfabric.qos_metrics.qos_summary`).
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

from ibfabric.errors import ConfigError
from ibfabric.kernel import module_rng
from ibfabric.qos_metrics import ConnectionStats

from ..hca.sources import MergedSource
from ..packet import Packet
from . import PAPER_RANGES, Admission, ClassMap, Connection, Establishment, Rejection, establish

__all__ = ["CbrSource", "QosNetwork"]

INF = math.inf


class CbrSource:
    """Constant-bit-rate packets of the connections leaving one HCA port.

    Each connection sends one packet of ``packet_size`` bytes every ``iat``
    ns from a random phase in ``[start, start + iat)``: packet ``k`` is
    created at ``phase + k x iat`` (computed, not accumulated, so long runs
    do not drift).  The connections are merged in time order with a heap;
    every packet is created on time and queued in its SL's send queue
    (``lazy`` is False).  Packets carry the connection id in ``flow`` and
    their index in ``seq``.
    """

    lazy = False

    def __init__(self, hca, tx, connections: Iterable[Connection], dlids: Mapping[int, int],
                 rng: np.random.Generator, start: float = 0.0):
        self.sim = hca.sim
        self.stats = hca.sim.stats
        self.tx = tx
        self.slid = hca.lid
        conns = list(connections)
        n = len(conns)
        self.iat = [c.iat for c in conns]
        phases = rng.uniform(0.0, 1.0, n) if n else np.zeros(0)
        self.phase = [start + float(u) * iat for u, iat in zip(phases, self.iat)]
        self.k = [0] * n
        self.fields = [(dlids[c.id], c.sl, c.packet_size, (c.packet_size + 63) >> 6, c.src, c.dst, c.id) for c in conns]
        self.heap = [(t, i) for i, t in enumerate(self.phase)]
        heapq.heapify(self.heap)
        self.next_time = self.heap[0][0] if self.heap else INF

    @property
    def sent(self) -> int:
        """Packets created so far."""
        return sum(self.k)

    def materialize(self, now: float) -> None:
        """Create every packet due by *now* (none after the simulation's ``traffic_stop``)."""
        heap = self.heap
        stop = self.sim.traffic_stop
        tx = self.tx
        st = self.stats
        phase, iat, ks, fields = self.phase, self.iat, self.k, self.fields
        sendq = tx.sendq
        slid = self.slid
        next_id = self.sim.next_message_id
        while heap and heap[0][0] <= now:
            t, i = heap[0]
            if t > stop:
                heap.clear()
                break
            k = ks[i]
            dlid, sl, size, credits, src, dst, flow = fields[i]
            # positional: (slid, dlid, sl, size, credits, src, dst, created, vl, lnh, flow, msg, seq, last)
            sendq[sl].append(Packet(slid, dlid, sl, size, credits, src, dst, t, 0, 2, flow, next_id(), k, True, cls=1))
            tx.queued += 1
            st.add_generated(1, size, t)
            ks[i] = k + 1
            heapq.heapreplace(heap, (phase[i] + (k + 1) * iat[i], i))
        self.next_time = heap[0][0] if heap and heap[0][0] <= stop else INF

    def next_after(self, now: float) -> float:
        """Never held back: the next packet after *now* (see :class:`~ibfabric.components.hca.sources.MergedSource`)."""
        return self.next_time if self.next_time > now else INF

    def pending_estimate(self, now: float) -> float:
        """The exact count: O(connections), cheap enough for the backlog samples."""
        return float(self.pending(now)[0])

    def pending(self, now: float) -> tuple[int, int]:
        """``(packets, bytes created in the measurement window)`` due by *now* but not created yet."""
        lim = min(now, self.sim.traffic_stop)
        window = self.stats.window
        packets = nbytes = 0
        for t, i in self.heap:
            if t > lim:
                continue
            k, ph, iat = self.k[i], self.phase[i], self.iat[i]
            last = _last_index(ph, iat, lim)
            if last < k:
                continue
            packets += last - k + 1
            first_w = max(k, _first_index(ph, iat, window))
            if last >= first_w:
                nbytes += (last - first_w + 1) * self.fields[i][2]
        return packets, nbytes


def _last_index(phase: float, iat: float, t: float) -> int:
    """Largest j with phase + j * iat <= t (-1 if none), exactly as the source computes times."""
    j = math.floor((t - phase) / iat)
    while phase + (j + 1) * iat <= t:
        j += 1
    while j >= 0 and phase + j * iat > t:
        j -= 1
    return max(j, -1)


def _first_index(phase: float, iat: float, t: float) -> int:
    """Smallest j >= 0 with phase + j * iat >= t."""
    if phase >= t:
        return 0
    j = max(0, math.ceil((t - phase) / iat))
    while j > 0 and phase + (j - 1) * iat >= t:
        j -= 1
    while phase + j * iat < t:
        j += 1
    return j


class QosNetwork:
    """The QoS set-up of a built simulation (see the module docstring).

    Parameters
    ----------
    sim : Simulation
        Built, with forwarding tables; every port needs ``classes.num_vls``
        data VLs and the ``iba-vlarb`` arbiter.
    policy : str
        Arbitration policy (``ibfabric plugins`` lists them).
    options : mapping, optional
        The policy's options.
    classes : ClassMap, optional
        Traffic classes, SLs and VLs (default: the paper's).

    Attributes
    ----------
    admission : Admission
    establishment : Establishment or None
        What the last :meth:`establish` did.
    summary_options : dict
        Keyword arguments of :func:`ibfabric.qos_metrics.qos_summary` for the
        ``"qos"`` section of the run's summary (``deadline``,
        ``per_connection``, ``min_packets``).
    """

    def __init__(self, sim, policy: str = "alfaro2001", options: Mapping[str, Any] | None = None,
                 classes: ClassMap | None = None):
        if options is not None and not isinstance(options, Mapping):
            raise ConfigError(f"QosNetwork's options must be a mapping {{name: value}} (got {options!r})")
        if sim.tables is None:
            raise ConfigError("QoS needs forwarding tables: the network has no subnet manager or no switch")
        self.sim = sim
        self.classes = classes or ClassMap()
        reg = sim.plugins.arbitration_policies.get(policy)
        self.policy_name = policy
        self.policy = reg.create(dict(options or {}))
        need = self.classes.num_vls
        for node in sim.ib_nodes:
            for tx in node.tx.values():
                if tx.nvl < need:
                    raise ConfigError(f"{tx.name_}: the QoS classes use {need} data VLs but the link has {tx.nvl}"
                                      f" (set '**.numVLs = {need}')")
                if not hasattr(tx.arbiter, "set_tables"):
                    raise ConfigError(f"{tx.name_}: QoS needs the 'iba-vlarb' arbiter, whose VLArbitrationTable"
                                      f" it fills (got {type(tx.arbiter).__name__})")
        self._set_sl2vl()
        self.admission = Admission(sim.tables, self.policy, self.classes)
        hosts = [sim.ib_nodes[int(n)] for n in self.admission.hosts]
        if hosts != list(sim.hosts):
            raise ConfigError("the subnet's hosts do not match the simulation's traffic endpoints")
        self.install()
        self.establishment: Establishment | None = None
        self.sources: dict[int, CbrSource] = {}
        self.window_end: float | None = None
        self.busy_at_end: dict[str, float] | None = None
        self.summary_options: dict[str, Any] = {}
        sim.qos = self
        sim.add_summary_section("qos", lambda: {"qos": self.summary()})
        #: Per-connection sums of the deliveries folded out of the log on a long run.
        self.folded: ConnectionStats | None = None
        sim.stats.fold_hooks.append(self._fold)

    def _fold(self, log: dict, now: float) -> None:
        """Add the complete deliveries of *log*, about to be folded out of it, to :attr:`folded`."""
        if self.folded is None:
            self.folded = ConnectionStats(self.sim.warmup, self.window_end, self.summary_options.get("deadline", 0.5))
        self.folded.add(log, {c.id: c.iat for c in self.connections}, now)

    # ------------------------------------------------------------- set-up

    def _set_sl2vl(self) -> None:
        table = list(self.classes.sl2vl)
        for node in self.sim.ib_nodes:
            if node.is_switch:
                for i in node.rx:
                    for o in node.tx:
                        node.set_sl2vl(i, o, table)
            else:
                for tx in node.tx.values():
                    tx.sl2vl = list(table)

    def install(self, ports: Iterable[tuple[int, int]] | None = None) -> None:
        """Write the policy's tables into the arbiters of *ports* (default: every output port)."""
        nodes = self.sim.ib_nodes
        adm = self.admission
        for hop in adm.ports if ports is None else ports:
            node, port = hop
            nodes[node].tx[port].arbiter.set_tables(*adm.ports[hop].tables())

    def connect(self, src: int, dst: int, bandwidth: float, **kw) -> Connection | Rejection:
        """Request one connection (see :meth:`Admission.connect`); on success the tables on its path are installed."""
        res = self.admission.connect(src, dst, bandwidth, **kw)
        if isinstance(res, Connection):
            self.install(self.admission.touched_ports(res.id))
        return res

    def establish(self, n: int, *, packet_size: int = 256, overhead: int = 0, retries: int = 100,
                  ranges: Mapping[int, tuple[float, float]] = PAPER_RANGES,
                  rng: np.random.Generator | None = None) -> Establishment:
        """Establish up to *n* connections as the paper does (:func:`~ibfabric.components.qos.establish`).

        The requests draw from *rng*, by default a generator derived from
        the simulation's seed.
        """
        if rng is None:
            rng = module_rng(self.sim.seed, "qos:establish")
        est = establish(self.admission, n, rng, ranges=ranges, packet_size=packet_size, overhead=overhead,
                        retries=retries)
        self.install()
        if self.establishment is None:
            self.establishment = est
        else:  # a second round adds to the first
            prev = self.establishment
            self.establishment = Establishment(
                prev.requested + n, prev.established + est.established,
                {s: prev.attempts.get(s, 0) + est.attempts.get(s, 0) for s in set(prev.attempts) | set(est.attempts)},
                {s: prev.accepted.get(s, 0) + est.accepted.get(s, 0) for s in set(prev.accepted) | set(est.accepted)},
                est.exhausted_sl, prev.connections + est.connections,
            )
        return est

    def start_traffic(self, start: float | None = None, stop: float | None = None) -> None:
        """Attach a CBR source to every host with established connections.

        Connections start at a random phase from *start* (default now).
        With *stop*, no packet is created after it (the simulation's
        ``traffic_stop``) and the QoS metrics' window ends there; port
        utilisations are taken at that moment.
        """
        sim = self.sim
        if self.sources:
            raise ConfigError("CBR traffic is already running")
        t0 = sim.now if start is None else float(start)
        if stop is not None:
            if stop <= max(t0, sim.now):
                raise ConfigError(f"traffic stop ({stop} ns) must be after its start")
            sim.traffic_stop = float(stop)
            self.window_end = float(stop)
            sim.call_at(float(stop), self._snapshot)
        by_src: dict[int, list[Connection]] = {}
        for c in self.admission.connections.values():
            by_src.setdefault(c.src, []).append(c)
        self._check_sizes(max((c.packet_size for c in self.admission.connections.values()), default=0))
        for src in sorted(by_src):
            conns = sorted(by_src[src], key=lambda c: c.id)
            hca = sim.hosts[src]
            tx = hca.tx[hca.first_port]
            dlids = {c.id: self.admission.dlid(c.src, c.dst) for c in conns}
            cbr = CbrSource(hca, tx, conns, dlids, module_rng(sim.seed, f"{hca.path}:cbr"), t0)
            self.sources[src] = cbr
            tx.source = cbr if tx.source is None else MergedSource(tx.source, cbr)
            for c in conns:
                tx.use_sl(c.sl)
            tx.poke(max(t0, sim.now))

    def _check_sizes(self, size: int) -> None:
        """Every VL buffer a packet passes must hold a whole packet (virtual cut-through)."""
        for node in self.sim.ib_nodes:
            limits = [(f"{node.path}: vlBufferSize", node.vl_buffer)]
            if node.is_switch and node.out_buffer:
                limits.append((f"{node.path}: outputBufferSize", node.out_buffer))
            for port, rx in node.rx.items():
                limits.append((f"{node.path}.port[{port}]: vlBufferSize", min(rx.capacities(), default=1 << 30) * 64))
            for what, cap in limits:
                if size > cap:
                    raise ConfigError(f"{what} ({cap}B) cannot hold the connections' {size}B packets")

    def _snapshot(self) -> None:
        now = self.sim.now
        self.busy_at_end = {tx.name_: tx.busy_time(now) for tx in self.sim.ports}

    # ------------------------------------------------------------- results

    @property
    def connections(self) -> list[Connection]:
        """The admitted connections, in the order of their keys."""
        return [self.admission.connections[k] for k in sorted(self.admission.connections)]

    def summary(self, **kw) -> dict[str, Any]:
        """The ``"qos"`` section of the run's summary (see :func:`ibfabric.qos_metrics.qos_summary`);
        *kw* overrides :attr:`summary_options`."""
        from ibfabric.qos_metrics import qos_summary

        return qos_summary(self, **{**self.summary_options, **kw})
