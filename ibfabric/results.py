"""Run summaries and result files.

:func:`summarize` turns a simulation's counters into the summary dict that
``summary.json`` holds.  Definitions:

``offered_load`` / ``accepted_load``
    Bytes of the packets created in the measurement window ``[warmup, now]``
    (offered), and of those among them that reached their destination
    (accepted), divided by the total data rate of every traffic endpoint's
    link times the window length.  Accepted load can therefore never exceed
    offered load, nor 1.
``latency_ns``
    From a packet's creation at its source to its last bit at the
    destination, over the packets created in the window and delivered.
``network_latency_ns``
    From the packet's first bit leaving the source to its last bit arriving.
``packets_in_flight``
    Counted where packets are (switch buffers, last wires), independently of
    the other counters, so ``conservation_ok`` checks
    ``injected == delivered + dropped + in flight``.
``link_utilisation``
    Fraction of the window each directed link spent transmitting.
``qos``
    Only in QoS runs: admission and per-SL/per-connection metrics
    (:mod:`ibfabric.qos_metrics`).

Files are written atomically: to a temporary file in the same directory,
then renamed, so an interrupted run never leaves a half-written result.
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:  # pragma: no cover
    from ibfabric.simulation import Simulation

__all__ = ["summarize", "to_json", "write_atomic", "write_results"]


def _pct(values: np.ndarray) -> dict[str, float | int | None]:
    if len(values) == 0:
        return {"count": 0, "mean": None, "p50": None, "p99": None, "max": None, "min": None}
    return {
        "count": int(len(values)),
        "mean": float(values.mean()),
        "p50": float(np.percentile(values, 50)),
        "p99": float(np.percentile(values, 99)),
        "max": float(values.max()),
        "min": float(values.min()),
    }


def summarize(sim: Simulation) -> dict[str, Any]:
    now = sim.now
    st = sim.stats
    pending_packets = pending_bytes = 0
    for n in sim.hosts:
        for tx in n.tx.values():
            if tx.source is not None:
                pk, nb = tx.source.pending(now)
                pending_packets += pk
                pending_bytes += nb
    log = st.arrays()
    done = log["delivered_at"] <= now
    delivered = int(done.sum()) + sum(1 for t in st.local if t <= now)
    dropped = int(sum(st.dropped.values()))
    in_flight = sim.packets_in_network()
    window = max(now - sim.warmup, 0.0)
    in_window = done & (log["created"] >= sim.warmup)
    lat = log["delivered_at"][in_window] - log["created"][in_window]
    net_lat = log["delivered_at"][in_window] - log["injected_at"][in_window]
    rates = [h.tx[h.first_port].link.rate / 8e9 for h in sim.hosts]  # bytes per ns
    capacity = sum(rates) * window
    offered_bytes = st.offered_bytes + pending_bytes
    offered = offered_bytes / capacity if capacity > 0 else 0.0
    accepted_bytes = float(log["size"][in_window].sum())
    accepted = accepted_bytes / capacity if capacity > 0 else 0.0
    util = np.array([tx.busy_time(now) / window for tx in sim.ports]) if window > 0 and sim.ports else np.zeros(0)
    queued = sum(tx.queued_packets() for h in sim.hosts for tx in h.tx.values()) + pending_packets
    hops = int(sum(tx.sent for tx in sim.ports))
    summary: dict[str, Any] = {
        "network": sim.network.name,
        "topology": sim.network.source,
        "seed": sim.seed,
        "routing": sim.tables.engine if sim.tables is not None else None,
        "sim_time_ns": now,
        "warmup_ns": sim.warmup,
        "wall_s": sim.wall,
        "events": sim.events,
        "packet_hops": hops,
        "switches": sum(1 for n in sim.ib_nodes if n.is_switch),
        "hosts": len(sim.hosts),
        "packets_generated": st.generated + pending_packets,
        "packets_queued_at_source": queued,
        "packets_injected": st.injected,
        "packets_delivered": delivered,
        "packets_dropped": dropped,
        "drops_by_reason": dict(sorted(st.dropped.items())),
        "packets_in_flight": in_flight,
        "conservation_ok": st.injected == delivered + dropped + in_flight,
        "latency_ns": _pct(lat),
        "network_latency_ns": _pct(net_lat),
        "mean_hops": float(log["hops"][in_window].mean()) if in_window.any() else None,
        "offered_load": offered,
        "accepted_load": accepted,
        "offered_bytes_per_ns_per_host": offered_bytes / (window * len(rates)) if window > 0 and rates else 0.0,
        "accepted_bytes_per_ns_per_host": accepted_bytes / (window * len(rates))
        if window > 0 and rates
        else 0.0,
        "link_utilisation": {
            "max": float(util.max()) if len(util) else 0.0,
            "mean": float(util.mean()) if len(util) else 0.0,
        },
        "events_per_s": sim.events / sim.wall if sim.wall > 0 else None,
        "packet_hops_per_s": hops / sim.wall if sim.wall > 0 else None,
        "deadlock": None
        if sim.deadlock is None
        else {"time_ns": sim.deadlock.time, "cycle": list(sim.deadlock.cycle)},
    }
    if sim.routing_time is not None:
        summary["routing_time_s"] = sim.routing_time
    if sim.qos is not None:  # a QoS run (ibfabric.components.cbr.QosNetwork): see ibfabric.qos_metrics
        summary["qos"] = sim.qos.summary(log=log)
    return summary


def to_json(obj: Any, indent: int | None = 2) -> str:
    """*obj* as JSON: numpy scalars as numbers, NaN and infinities as null."""
    return json.dumps(_clean(obj), indent=indent)


def _clean(obj: Any) -> Any:
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    if isinstance(obj, dict):
        return {k: _clean(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_clean(v) for v in obj]
    if isinstance(obj, np.generic):
        return obj.item()
    return obj


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_atomic(path: str | os.PathLike, text: str) -> None:
    """Write *text* to *path* via a temporary file and a rename."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.chmod(tmp, 0o666 & ~_umask())  # what open() would give (mkstemp makes it private)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def write_results(sim: Simulation, summary: dict[str, Any], out_dir: str | os.PathLike) -> list[Path]:
    """Write ``summary.json``, ``scalars.csv`` and ``results.sca`` (OMNeT++ text) into *out_dir*."""
    out = Path(out_dir)
    files = []
    write_atomic(out / "summary.json", to_json(summary) + "\n")
    files.append(out / "summary.json")
    rows = sim.scalars()
    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(["module", "name", "value"])
    for row in rows:
        w.writerow(row)
    write_atomic(out / "scalars.csv", buf.getvalue())
    files.append(out / "scalars.csv")
    lines = ["version 2", f"run ibfabric-{sim.network.name}-seed{sim.seed}", f'attr network {sim.network.name}',
             f"attr seedset {sim.seed}", ""]
    for key in ("packets_injected", "packets_delivered", "packets_dropped", "packets_in_flight",
                "offered_load", "accepted_load"):
        lines.append(f"scalar {sim.network.name} {key} {summary[key]}")
    for key in ("mean", "p50", "p99", "max"):
        v = summary["latency_ns"][key]
        if v is not None:
            lines.append(f"scalar {sim.network.name} latency:{key} {v}")
    for module, name, value in rows:
        lines.append(f"scalar {module} {name} {value}")
    write_atomic(out / "results.sca", "\n".join(lines) + "\n")
    files.append(out / "results.sca")
    return files
