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
    "breakdown",
    "flatten",
    "percentiles",
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


def percentiles(values: np.ndarray) -> dict[str, float | int | None]:
    """count, mean, p50, p99, max and min of *values* (None where empty)."""
    if len(values) == 0:
        return {"count": 0, "mean": None, "p50": None, "p99": None, "max": None, "min": None}
    p50, p99 = np.percentile(values, (50, 99))
    return {
        "count": int(len(values)),
        "mean": float(values.mean()),
        "p50": float(p50),
        "p99": float(p99),
        "max": float(values.max()),
        "min": float(values.min()),
    }


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

    :meth:`schedule` is called by :meth:`Simulation.run` with the run's end;
    a later ``run`` (continuing the simulation) extends the window and
    schedules the samples of the new span.
    """

    def __init__(self, sim: Simulation):
        self.sim = sim
        self.samples: list[tuple[float, int]] = []
        self._until = -1.0

    def schedule(self, end: float) -> None:
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


def breakdown(key: np.ndarray, names, size: np.ndarray, latency: np.ndarray, capacity: float) -> dict[str, Any]:
    """Per value of *key* (an SL or a traffic class): packets, accepted load and latency statistics."""
    out: dict[str, Any] = {}
    for k in np.unique(key):
        sel = key == k
        out[names(int(k))] = {
            "packets": int(sel.sum()),
            "accepted_load": float(size[sel].sum()) / capacity if capacity > 0 else 0.0,
            "latency_ns": percentiles(latency[sel]),
        }
    return out


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
