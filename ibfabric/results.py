"""Run summaries and result files.

:func:`summarize` turns a simulation's counters into the summary dict that
``summary.json`` holds.  The measurement definitions (window, offered and
accepted load, latency, saturation) are in :mod:`ibfabric.measure` and in
the summary's own ``definitions`` block.  Other keys:

``packets_in_flight``
    Counted where packets are (switch buffers, last wires), independently of
    the other counters, so ``conservation_ok`` checks
    ``injected + copies == delivered + dropped + in flight`` (``copies``: packets
    made by multicast replication, 0 without multicast; :mod:`ibfabric.components.multicast`).
``link_utilisation``
    Fraction of the window each directed link spent transmitting.
``by_sl``, ``by_class``
    Packets, accepted load and latency of the packets delivered in the
    window, per service level and per traffic class (best effort, CBR...).
``warnings``
    One line each: what looked wrong in the run (routes with a dependency
    cycle, idle traffic sources, an empty window, saturation...), see
    :mod:`ibfabric.checks`.
``scenario``
    What the scenario did, in time order: ``{time_ns, action, target, result}``
    per failure, restore or traffic change (:mod:`ibfabric.scenario`); empty
    without one.
``versions``
    ibfabric's version and the plugin distributions' (:mod:`ibfabric.versions`).
``qos``
    Only in QoS runs: admission and per-SL/per-connection metrics
    (:mod:`ibfabric.qos_metrics`).

:func:`result_files` renders a run's result set (``summary.json``,
``scalars.csv``, ``results.sca``) and :func:`write_results` writes it so
that the set is complete or absent (:func:`write_result_set`).
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
import math
import os
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ibfabric.errors import ConfigError

if TYPE_CHECKING:  # pragma: no cover
    from ibfabric.simulation import Simulation

__all__ = ["summarize", "to_json", "write_atomic", "write_results"]


def window_stats(sim: Simulation):
    """The :class:`~ibfabric.measure.WindowStats` of the packets delivered in ``[warmup, now]``:
    the delivery log's, merged with what was folded out of it on a long run."""
    from ibfabric.measure import WindowStats

    log = sim.stats.arrays()
    d = log["delivered_at"]
    ws = WindowStats.of(log, (d <= sim.now) & (d >= sim.warmup), len(sim.hosts))
    return ws if sim.stats.folded is None else sim.stats.folded.merge(ws)


def summarize(sim: Simulation) -> dict[str, Any]:
    """The summary of *sim* at its current time: the dict ``summary.json`` holds.

    Parameters
    ----------
    sim : ~ibfabric.simulation.Simulation
        A built simulation, run or not (:meth:`Simulation.summary
        <ibfabric.simulation.Simulation.summary>` calls this).

    Returns
    -------
    dict
        The run's counters and measurements over ``[warmup, now]``: the keys
        of :data:`ibfabric.measure.DEFINITIONS` and those listed above, plus
        ``routing_time_s`` when the run has it.  The sections of the run's
        features (``qos``, ``multicast``, ``realtime``, the dynamic subnet
        manager's timelines) are added by the run-finished hook
        (:meth:`Simulation.add_summary_section <ibfabric.simulation.Simulation.add_summary_section>`).

    Notes
    -----
    The warnings the results call for
    (:func:`ibfabric.checks.result_warnings`) are given through
    :meth:`Simulation.warn <ibfabric.simulation.Simulation.warn>` before
    ``warnings`` is filled in.
    """
    from ibfabric.measure import ALPHA, DEFINITIONS, source_backlog
    from ibfabric.versions import versions

    now = sim.now
    st = sim.stats
    backlog, pending_packets, pending_bytes = source_backlog(sim, now)
    delivered = st.delivered(now)
    dropped = int(sum(st.dropped.values()))
    in_flight = sim.packets_in_network()
    window = max(now - sim.warmup, 0.0)
    ws = window_stats(sim)
    rates = np.array([h.tx[h.first_port].link.rate / 8e9 for h in sim.hosts])  # bytes per ns
    capacity = float(rates.sum()) * window
    offered_bytes = st.offered_bytes + pending_bytes
    offered = offered_bytes / capacity if capacity > 0 else 0.0
    accepted_bytes = ws.bytes
    accepted = accepted_bytes / capacity if capacity > 0 else 0.0
    if window > 0 and len(rates):
        per_dst = ws.dst_bytes / (rates * window)
        accepted_per_dst = {"min": float(per_dst.min()), "mean": float(per_dst.mean()), "max": float(per_dst.max())}
    else:
        accepted_per_dst = {"min": 0.0, "mean": 0.0, "max": 0.0}
    created = st.offered_packets + pending_packets
    backlog_block, saturated = sim.backlog.summary(now, created, sim.deadlock is not None)
    util = np.array([tx.busy_time(now) / window for tx in sim.ports]) if window > 0 and sim.ports else np.zeros(0)
    hops = int(sum(tx.sent for tx in sim.ports))
    summary: dict[str, Any] = {
        "network": sim.network.name,
        "topology": sim.network.source,
        "seed": sim.seed,
        "routing": sim.tables.engine if sim.tables is not None else None,
        "sim_time_ns": now,
        "warmup_ns": sim.warmup,
        "window_ns": window,
        "wall_s": sim.wall,
        "events": sim.events,
        "packet_hops": hops,
        "switches": sum(1 for n in sim.ib_nodes if n.is_switch),
        "hosts": len(sim.hosts),
        "packets_generated": st.generated + pending_packets,
        "packets_queued_at_source": backlog,
        "packets_injected": st.injected,
        "packets_delivered": delivered,
        "packets_dropped": dropped,
        "drops_by_reason": dict(sorted(st.dropped.items())),
        "packets_in_flight": in_flight,
        "conservation_ok": st.injected + st.copies == delivered + dropped + in_flight,
        "offered_load": offered,
        "accepted_load": accepted,
        "accepted_packets": ws.packets,
        "accepted_load_per_destination": accepted_per_dst,
        "saturated": saturated,
        "source_backlog": backlog_block,
        "latency_ns": ws.latency.summary(),
        "network_latency_ns": ws.network_latency.summary(),
        "latency_quantiles": "exact" if ws.exact else f"within {ALPHA:.1%} (relative) of the true quantile: the"
                             f" delivery log was folded every {st.log_limit:,} packets",
        "mean_hops": ws.hops / ws.packets if ws.packets else None,
        "offered_bytes_per_ns_per_host": offered_bytes / (window * len(rates)) if window > 0 and len(rates) else 0.0,
        "accepted_bytes_per_ns_per_host": accepted_bytes / (window * len(rates))
        if window > 0 and len(rates)
        else 0.0,
        "by_sl": ws.breakdown("sl", capacity),
        "by_class": ws.breakdown("cls", capacity),
        "link_utilisation": {
            "max": float(util.max()) if len(util) else 0.0,
            "mean": float(util.mean()) if len(util) else 0.0,
        },
        "events_per_s": sim.events / sim.wall if sim.wall > 0 else None,
        "packet_hops_per_s": hops / sim.wall if sim.wall > 0 else None,
        "deadlock": None
        if sim.deadlock is None
        else {"time_ns": sim.deadlock.time, "cycle": list(sim.deadlock.cycle)},
        "warnings": [],  # filled below
        "scenario": [dict(e) for e in sim.scenario_log],  # failures, restores, traffic changes (ibfabric.scenario)
        "versions": versions(sim.plugins),  # ibfabric's and the plugin distributions' (ibfabric.versions)
        "definitions": DEFINITIONS,
    }
    if sim.routing_time is not None:
        summary["routing_time_s"] = sim.routing_time
    # (the sections of the run's features -- qos, multicast, realtime, the dynamic subnet manager's
    # assimilations -- come through the run-finished hook: Simulation.add_summary_section)
    from ibfabric.checks import result_warnings

    for message in result_warnings(sim, summary):
        sim.warn(message)
    summary["warnings"] = list(sim.warnings)
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


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike, suffix: str = ".tmp"):
    """Yield a temporary path beside *path*; on success it replaces *path* in one rename.

    The file gets the permissions ``open()`` would give (``mkstemp`` makes it
    private); on failure it is removed and *path* is untouched.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=suffix)
    os.close(fd)
    try:
        yield Path(tmp)
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def write_atomic(path: str | os.PathLike, text: str) -> None:
    """Write *text* to *path* via a temporary file and a rename."""
    with atomic_path(path) as tmp:
        tmp.write_text(text, encoding="utf-8")


def config_id(config: dict[str, Any]) -> str:
    """A run id: the first 16 hex digits of the SHA-256 of *config* as canonical JSON."""
    import hashlib

    text = json.dumps(_clean(config), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def run_config(sim: Simulation, until: float) -> dict[str, Any]:
    """What determines a run's results: topology (with its content hash), parameters set, seed, window."""
    import hashlib

    source = sim.network.source
    topo: dict[str, Any] = {"name": sim.network.name, "source": source}
    if source and os.path.isfile(source):
        topo["sha256"] = hashlib.sha256(Path(source).read_bytes()).hexdigest()
    return {
        "topology": topo,
        "parameters": [list(item) for item in sim.parameters_set()],
        "seed": sim.seed,
        "warmup_ns": sim.warmup,
        "time_ns": until,
    }


def _quote(v: Any) -> str:
    text = str(v)
    if text == "" or any(c.isspace() or c == '"' for c in text):
        return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return text


def scalar_rows(sim: Simulation, summary: dict[str, Any]) -> list[tuple[str, str, float]]:
    """Every scalar of a run as ``(module, name, value)``: the summary's statistics (module: the network),
    per host (packets sent and received in the window, accepted load, mean latency to it), per port
    (utilisation and packets sent), then the recorders'."""
    from ibfabric.measure import flatten

    net = sim.network.name
    rows: list[tuple[str, str, float]] = [(net, k, v) for k, v in flatten(summary).items()]
    now = sim.now
    window = max(now - sim.warmup, 0.0)
    ws = window_stats(sim)
    received, nbytes, latsum = ws.dst_packets, ws.dst_bytes, ws.dst_latency
    for i, h in enumerate(sim.hosts):
        rate = h.tx[h.first_port].link.rate / 8e9
        rows.append((h.path, "packetsSent", float(sum(tx.sent for tx in h.tx.values()))))
        rows.append((h.path, "packetsReceived", float(received[i])))
        rows.append((h.path, "acceptedLoad", float(nbytes[i] / (rate * window)) if window > 0 else 0.0))
        if received[i]:
            rows.append((h.path, "latencyMean", float(latsum[i] / received[i])))
    for tx in sim.ports:
        rows.append((tx.name_, "utilisation", tx.busy_time(now) / window if window > 0 else 0.0))
        rows.append((tx.name_, "packetsSent", float(tx.sent)))
    rows.extend(sim.scalars())
    return rows


def result_files(sim: Simulation, summary: dict[str, Any], run: dict[str, Any] | None = None) -> dict[str, str]:
    """The texts of a run's result set: ``summary.json``, ``scalars.csv`` and ``results.sca`` (and
    ``workload_ops.csv`` for a run with a workload).

    *run* gives the run's identity: ``run_id``, ``configname``, ``iterationvars`` (OMNeT++ style
    ``$load=0.1, $routing=updn``), ``repetition`` and ``vars``; by default the run id hashes
    :func:`run_config` and the configuration is named ``General``, as in OMNeT++.
    """
    from ibfabric.versions import versions

    run = dict(run or {})
    run.setdefault("run_id", config_id(run_config(sim, sim.now)))
    run.setdefault("configname", "General")
    run.setdefault("iterationvars", "")
    run.setdefault("repetition", 0)
    rid = run["run_id"]
    rows = scalar_rows(sim, summary)
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["run_id", "module", "name", "value"])
    for module, name, value in rows:
        w.writerow([rid, module, name, repr(float(value))])
    lines = ["version 2", f"run {rid}"]
    attrs_ = {
        "configname": run["configname"],
        "network": sim.network.name,
        "inifile": sim.network.source,
        "iterationvars": run["iterationvars"],
        "repetition": run["repetition"],
        "replication": f"#{run['repetition']}, seedset={sim.seed}",
        "seedset": sim.seed,
        "warmup-period": f"{sim.warmup}ns",
        "sim-time-limit": f"{sim.now}ns",
        **version_attributes(summary.get("versions") or versions(sim.plugins)),
    }
    for name, value in (run.get("vars") or {}).items():
        attrs_.setdefault(name, value)
    lines += [f"attr {k} {_quote(v)}" for k, v in attrs_.items()]
    lines += [f"param {p} {_quote(v)}" for p, v in sim.parameters_set()]
    lines.append("")
    lines += [f"scalar {_quote(m)} {_quote(n)} {float(v)!r}" for m, n, v in rows]
    files = {
        "summary.json": to_json(summary) + "\n",
        "scalars.csv": buf.getvalue(),
        "results.sca": "\n".join(lines) + "\n",
    }
    if sim.workload is not None:  # a workload's operations, one row each (docs/workloads.md)
        files["workload_ops.csv"] = workload_ops_csv(sim.workload, rid)
    return files


def workload_ops_csv(workload, run_id: str) -> str:
    """The tidy table of a workload's operations: ``run_id, rank, label, kind, size, peer, tag, phase,
    start_ns, end_ns`` (empty times for operations that did not start or end)."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    cols = ["rank", "label", "kind", "size", "peer", "tag", "phase", "start_ns", "end_ns"]
    w.writerow(["run_id", *cols])
    for row in workload.op_rows():
        w.writerow([run_id, *("" if row[c] is None else repr(row[c]) if isinstance(row[c], float) else row[c]
                              for c in cols)])
    return buf.getvalue()


def version_attributes(v: dict[str, Any]) -> dict[str, str]:
    """The ``results.sca`` run attributes of :func:`ibfabric.versions.versions`: ``ibfabric-version``
    and ``plugins`` (``"dist==version ..."``, empty without plugin distributions)."""
    return {"ibfabric-version": v["ibfabric"], "plugins": " ".join(f"{n}=={x}" for n, x in v["plugins"].items())}


MANIFEST = "manifest.json"


def write_result_set(out_dir: str | os.PathLike, files: dict[str, str]) -> list[Path]:
    """Write a result set so that it is complete or absent.

    A new (or empty) *out_dir* is written as a temporary sibling directory
    and renamed into place in one step.  Into an existing directory, the old
    ``manifest.json`` is removed first, every file is replaced atomically,
    and a new manifest (each file's SHA-256) is written last: a reader that
    requires a manifest matching the files never sees a partial or mixed set.
    """
    import hashlib
    import shutil

    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise ConfigError(f"{out}: exists and is not a directory")
    manifest = to_json({"files": {n: hashlib.sha256(t.encode()).hexdigest() for n, t in files.items()}}) + "\n"
    names = [*files, MANIFEST]
    if not out.exists() or not any(out.iterdir()):
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(dir=out.parent, prefix=f".{out.name}.tmp-"))
        try:
            os.chmod(tmp, 0o777 & ~_umask())
            for name, text in files.items():
                _write(tmp / name, text)
            _write(tmp / MANIFEST, manifest)
            if out.exists():
                out.rmdir()  # empty: replaced by the complete set
            os.rename(tmp, out)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
    else:
        try:
            (out / MANIFEST).unlink()
        except FileNotFoundError:
            pass
        for name, text in files.items():
            write_atomic(out / name, text)
        write_atomic(out / MANIFEST, manifest)
    return [out / n for n in names]


def _write(path: Path, text: str) -> None:
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())


def read_result_set(out_dir: str | os.PathLike) -> dict[str, str] | None:
    """The files of a complete result set in *out_dir* (None if its manifest is missing or does not match)."""
    import hashlib

    out = Path(out_dir)
    try:
        manifest = json.loads((out / MANIFEST).read_text(encoding="utf-8"))
        files = {}
        for name, digest in manifest["files"].items():
            text = (out / name).read_text(encoding="utf-8")
            if hashlib.sha256(text.encode()).hexdigest() != digest:
                return None
            files[name] = text
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None
    return files


def write_results(sim: Simulation, summary: dict[str, Any], out_dir: str | os.PathLike,
                  run: dict[str, Any] | None = None) -> list[Path]:
    """Write ``summary.json``, ``scalars.csv`` and ``results.sca`` (OMNeT++ text) into *out_dir*, as one set."""
    return write_result_set(out_dir, result_files(sim, summary, run))
