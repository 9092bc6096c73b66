"""What a run measures, and how: the measurement window, accepted throughput,
latency per service level and traffic class, and saturation.

Definitions (also in ``summary.json`` under ``definitions`` and in
``docs/model.md``, section "Measurement"):

window
    ``[warmup, end]`` of simulated time.
offered load
    Wire bytes of the messages *created* in the window (including those a
    lazy source has not materialised yet), divided by the window and by the
    summed data rate of every traffic endpoint's link.
accepted load (throughput)
    Wire bytes *delivered* in the window (last bit at the destination inside
    ``[warmup, end]``), whatever their creation time, divided likewise.  Per
    destination: the bytes delivered to one host over its own link rate.
latency
    From a packet's creation at its source to its last bit at the
    destination, over the packets delivered in the window.  Network latency
    starts when its first bit leaves the source instead.
source backlog
    Packets created but not yet on the wire (send queues, VL buffers, and
    messages a lazy source has not materialised: their expected number),
    sampled at nine evenly spaced instants of the window.
saturated
    The source backlog grew through the window: its least-squares slope over
    the samples, times the window, exceeds both the number of hosts (one
    packet per host) and 0.5 % of the packets created in the window.  Below
    saturation the backlog fluctuates around a constant; past it, it grows
    at the rate offered minus accepted.  A deadlocked run is saturated.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:  # pragma: no cover
    from ibfabric.simulation import Simulation

__all__ = [
    "BacklogMonitor",
    "DEFINITIONS",
    "TRAFFIC_CLASSES",
    "flatten",
    "LatencyStats",
    "WindowStats",
    "ALPHA",
    "TIMING",
    "source_backlog",
]

#: Traffic classes, indexed by ``Packet.cls``.
TRAFFIC_CLASSES = ("best_effort", "cbr", "real_time", "control")

#: The measurement definitions, as ``summary.json`` states them.
DEFINITIONS = {
    "docs": "docs/model.md#measurement",
    "window": "[warmup_ns, sim_time_ns] of simulated time",
    "offered_load": "wire bytes of messages created in the window / (window x summed endpoint link data rates)",
    "accepted_load": "wire bytes delivered in the window, whatever their creation time / (window x summed endpoint"
                     " link data rates)",
    "latency_ns": "creation at the source to last bit at the destination, packets delivered in the window",
    "network_latency_ns": "first bit on the source's link to last bit at the destination, packets delivered in"
                          " the window",
    "source_backlog": "packets created but not yet on the wire, sampled at 9 instants of the window",
    "saturated": "the source backlog's least-squares growth over the window exceeds max(hosts, 0.5% of the"
                 " packets created in it), or the run deadlocked",
}

#: Samples of the source backlog taken over the window.
SAMPLES = 9


def source_backlog(sim: Simulation, now: float) -> tuple[int, int, int]:
    """``(packets waiting at the sources, of them not materialised, their wire bytes created in the window)``.

    Exact: a lazy source replays its draws up to *now* (O(backlog))."""
    queued = pending = pending_bytes = 0
    for h in sim.hosts:
        for tx in h.tx.values():
            queued += tx.queued_packets()
            if tx.source is not None:
                pk, nb = tx.source.pending(now)
                pending += pk
                pending_bytes += nb
    return queued + pending, pending, pending_bytes


def backlog_estimate(sim: Simulation, now: float) -> float:
    """The source backlog in O(hosts): exact for materialised packets, the expected count for the
    messages a lazy source has not materialised (past saturation, replaying them at every sample
    would cost as much as generating them)."""
    n = 0.0
    for h in sim.hosts:
        for tx in h.tx.values():
            n += tx.queued_packets()
            src = tx.source
            if src is not None:
                est = getattr(src, "pending_estimate", None)
                n += est(now) if est is not None else src.pending(now)[0]
    return n


class BacklogMonitor:
    """Samples the source backlog at :data:`SAMPLES` instants of ``[warmup, end]``.

    :meth:`schedule` is called by :meth:`Simulation.run
    <ibfabric.simulation.Simulation.run>` with the run's end; a later ``run``
    (continuing the simulation) extends the window and schedules the samples
    of the new span.
    """

    def __init__(self, sim: Simulation):
        self.sim = sim
        self.samples: list[tuple[float, int]] = []
        self._until = -1.0

    def schedule(self, end: float) -> None:
        """Schedule the samples of ``[warmup, end]`` not yet scheduled.

        Parameters
        ----------
        end : float
            The end of the run, in ns.  Nothing is scheduled when it is not
            after the warm-up or after the end of a window already scheduled;
            of the :data:`SAMPLES` instants evenly spaced over ``[warmup,
            end]``, those not before now and after that earlier end are.
        """
        sim = self.sim
        start = sim.warmup
        if end <= start or end <= self._until:
            return
        step = (end - start) / (SAMPLES - 1)
        for k in range(SAMPLES):
            t = start + k * step
            if t >= sim.now and t > self._until:
                sim.call_at(t, self._sample)
        self._until = end

    def _sample(self) -> None:
        self.samples.append((self.sim.now, round(backlog_estimate(self.sim, self.sim.now), 1)))

    def summary(self, now: float, created: int, deadlocked: bool) -> tuple[dict[str, Any], bool]:
        """The ``source_backlog`` block and whether the run looks saturated."""
        pts = [(t, b) for t, b in self.samples if t <= now]
        growth = 0.0
        if len(pts) >= 2:
            t = np.array([p[0] for p in pts])
            b = np.array([p[1] for p in pts], dtype=float)
            span = t[-1] - t[0]
            if span > 0:
                growth = float(np.polyfit(t, b, 1)[0] * span)
        threshold = max(len(self.sim.hosts), 0.005 * created)
        block = {
            "samples": [b for _, b in pts],
            "start": pts[0][1] if pts else None,
            "end": pts[-1][1] if pts else None,
            "growth": growth,
            "threshold": threshold,
        }
        return block, bool(deadlocked or growth > threshold)


def class_name(k: int) -> str:
    return TRAFFIC_CLASSES[k] if 0 <= k < len(TRAFFIC_CLASSES) else f"class{k}"


#: Keys of ``summary.json`` that are not statistics of the simulated system.
NOT_STATISTICS = frozenset({"definitions", "seed", "warnings", "network", "topology", "routing"})
#: Statistics that measure the simulator, not the network: they differ between two runs of one configuration.
TIMING = frozenset({"wall_s", "events_per_s", "packet_hops_per_s", "routing_time_s"})


def flatten(summary: dict[str, Any]) -> dict[str, float]:
    """The numeric statistics of a summary as flat names, in summary order.

    Nested keys are joined with ``_``; a ``_ns`` suffix on a key holding a
    dict is dropped (the unit stays with the name's documentation):
    ``latency_ns.mean`` -> ``latency_mean``; ``by_sl.3.latency_ns.p99`` ->
    ``sl3_latency_p99``; ``by_class.cbr.accepted_load`` ->
    ``cbr_accepted_load``; ``link_utilisation.max`` -> ``link_utilisation_max``.
    Booleans become 0/1; lists, strings and None are left out.
    """
    out: dict[str, float] = {}

    def join(prefix: str, key: Any, value: Any) -> str:
        key = str(key)
        if prefix == "by_sl":
            return f"sl{key}"
        if prefix == "by_class":
            return key
        if key.endswith("_ns") and isinstance(value, dict):
            key = key[:-3]
        return f"{prefix}_{key}" if prefix else key

    def walk(name: str, value: Any) -> None:
        if isinstance(value, dict):
            for k, v in value.items():
                walk(join(name, k, v), v)
        elif isinstance(value, (bool, int, float, np.integer, np.floating)):
            out[name] = float(value)

    for key, value in summary.items():
        if key not in NOT_STATISTICS:
            walk(join("", key, value), value)
    return out


# ------------------------------------------------------------------ streaming statistics

#: Relative accuracy of latency quantiles once a run's delivery log has been folded
#: (DDSketch-style logarithmic bins: every quantile is within ALPHA of a value of the
#: right rank).
ALPHA = 0.005
_GAMMA = (1 + ALPHA) / (1 - ALPHA)
_LOG_GAMMA = float(np.log(_GAMMA))
_MIN_NS = 1e-3  # latencies are clamped to at least this before binning


class LatencyStats:
    """count, mean, min, max and quantiles of latencies, exact or from logarithmic bins.

    While every value is kept (``values`` is an array) the statistics are exact;
    after :meth:`merge` with a folded (binned) one, quantiles come from the bins,
    each within a relative error of :data:`ALPHA` (Masson et al., "DDSketch: a
    fast and fully-mergeable quantile sketch with relative-error guarantees",
    VLDB 2019); count, mean, min and max stay exact.
    """

    __slots__ = ("count", "total", "lo", "hi", "bins", "values")

    def __init__(self, values: np.ndarray | None = None):
        self.count = 0
        self.total = 0.0
        self.lo = np.inf
        self.hi = -np.inf
        self.bins: dict[int, int] = {}
        self.values = np.zeros(0) if values is None else np.asarray(values, dtype=float)
        if len(self.values):
            self.count = len(self.values)
            self.total = float(self.values.sum())
            self.lo = float(self.values.min())
            self.hi = float(self.values.max())

    def fold(self) -> "LatencyStats":
        """Move the kept values into the bins (constant memory from then on)."""
        if self.values is not None and len(self.values):
            idx = np.ceil(np.log(np.maximum(self.values, _MIN_NS)) / _LOG_GAMMA).astype(np.int64)
            keys, counts = np.unique(idx, return_counts=True)
            for k, c in zip(keys.tolist(), counts.tolist()):
                self.bins[k] = self.bins.get(k, 0) + c
        self.values = None
        return self

    def merge(self, other: "LatencyStats") -> "LatencyStats":
        """A new set holding both (binned when either is)."""
        out = LatencyStats()
        out.count = self.count + other.count
        out.total = self.total + other.total
        out.lo, out.hi = min(self.lo, other.lo), max(self.hi, other.hi)
        if self.values is not None and other.values is not None:
            out.values = np.concatenate([self.values, other.values])
            return out
        out.values = None
        for part in (self, other):
            binned = part if part.values is None else LatencyStats(part.values).fold()
            for k, c in binned.bins.items():
                out.bins[k] = out.bins.get(k, 0) + c
        return out

    def quantile(self, q: float) -> float:
        """The *q* quantile (``0 <= q <= 1``) of the latencies, in ns.

        Exact while every value is kept (:func:`numpy.percentile`, linear
        interpolation); once folded, the representative value of the bin
        holding rank ``q * (count - 1)``, within a relative error of
        :data:`ALPHA` and clamped to ``[min, max]``.
        """
        if self.values is not None:
            return float(np.percentile(self.values, 100 * q))
        keys = sorted(self.bins)
        rank = q * (self.count - 1)
        seen = 0
        for k in keys:
            seen += self.bins[k]
            if seen > rank:
                v = 2 * _GAMMA ** k / (_GAMMA + 1)
                return float(min(max(v, self.lo), self.hi))
        return self.hi

    def summary(self) -> dict[str, float | int | bool | None]:
        """The ``latency_ns`` block of a summary: ``count``, ``mean``, ``p50``, ``p99``, ``max``, ``min``.

        Latencies are in ns; every value but ``count`` is None when there is
        no latency.
        """
        if self.count == 0:
            return {"count": 0, "mean": None, "p50": None, "p99": None, "max": None, "min": None}
        return {
            "count": int(self.count),
            "mean": self.total / self.count,
            "p50": self.quantile(0.5),
            "p99": self.quantile(0.99),
            "max": float(self.hi),
            "min": float(self.lo),
        }


class WindowStats:
    """What the packets delivered in a window add up to: counts, bytes, hops, latencies,
    per destination and per SL and traffic class; mergeable, and foldable into
    constant memory (see :class:`LatencyStats`)."""

    def __init__(self, hosts: int):
        self.hosts = hosts
        self.packets = 0
        self.bytes = 0.0
        self.hops = 0
        self.latency = LatencyStats()
        self.network_latency = LatencyStats()
        self.dst_packets = np.zeros(hosts, dtype=np.int64)
        self.dst_bytes = np.zeros(hosts)
        self.dst_latency = np.zeros(hosts)
        self.groups: dict[tuple[str, int], list] = {}  # ("sl"|"cls", value) -> [packets, bytes, LatencyStats]

    @classmethod
    def of(cls, log: dict[str, np.ndarray], sel: np.ndarray, hosts: int) -> "WindowStats":
        """The statistics of the log entries selected by the boolean mask *sel*."""
        w = cls(hosts)
        delivered = log["delivered_at"][sel]
        lat = delivered - log["created"][sel]
        size = log["size"][sel].astype(float)
        w.packets = int(sel.sum())
        w.bytes = float(size.sum())
        w.hops = int(log["hops"][sel].sum())
        w.latency = LatencyStats(lat)
        w.network_latency = LatencyStats(delivered - log["injected_at"][sel])
        dst = log["dst"][sel]
        ok = (dst >= 0) & (dst < hosts)  # packets injected by hand may have no endpoint index
        w.dst_packets = np.bincount(dst[ok], minlength=hosts)
        w.dst_bytes = np.bincount(dst[ok], weights=size[ok], minlength=hosts)
        w.dst_latency = np.bincount(dst[ok], weights=lat[ok], minlength=hosts)
        for kind in ("sl", "cls"):
            key = log[kind][sel]
            for k in np.unique(key).tolist():
                m = key == k
                w.groups[kind, int(k)] = [int(m.sum()), float(size[m].sum()), LatencyStats(lat[m])]
        return w

    def fold(self) -> "WindowStats":
        """Fold every latency set (all, network, per SL and class) into bins; returns *self*."""
        self.latency.fold()
        self.network_latency.fold()
        for g in self.groups.values():
            g[2].fold()
        return self

    def merge(self, other: "WindowStats") -> "WindowStats":
        """A new set holding both windows' deliveries (counts and sums added, latencies merged).

        Both must count the same number of hosts.
        """
        out = WindowStats(self.hosts)
        out.packets = self.packets + other.packets
        out.bytes = self.bytes + other.bytes
        out.hops = self.hops + other.hops
        out.latency = self.latency.merge(other.latency)
        out.network_latency = self.network_latency.merge(other.network_latency)
        out.dst_packets = self.dst_packets + other.dst_packets
        out.dst_bytes = self.dst_bytes + other.dst_bytes
        out.dst_latency = self.dst_latency + other.dst_latency
        for key in sorted(set(self.groups) | set(other.groups)):
            a = self.groups.get(key, [0, 0.0, LatencyStats()])
            b = other.groups.get(key, [0, 0.0, LatencyStats()])
            out.groups[key] = [a[0] + b[0], a[1] + b[1], a[2].merge(b[2])]
        return out

    @property
    def exact(self) -> bool:
        """Whether the latencies are still all kept, so that quantiles are exact (not folded)."""
        return self.latency.values is not None

    def breakdown(self, kind: str, capacity: float) -> dict[str, Any]:
        """Per SL (``kind='sl'``) or traffic class (``'cls'``): packets, accepted load and latency."""
        names = str if kind == "sl" else class_name
        return {
            names(k): {
                "packets": g[0],
                "accepted_load": g[1] / capacity if capacity > 0 else 0.0,
                "latency_ns": g[2].summary(),
            }
            for (kd, k), g in sorted(self.groups.items())
            if kd == kind
        }
