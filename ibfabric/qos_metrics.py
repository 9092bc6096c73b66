"""QoS metrics of CBR connection traffic, as Alfaro et al. (2001, §5.3) report them.

The measurement window is ``[t0, t1]``; the packets measured are those of
the connections (``flow`` = connection id) created in it and delivered by
the time the metrics are computed.

``delivered``
    Bytes of those packets divided by ``t1 - t0``: per connection (bit/s and
    fraction of its requested bandwidth), per SL and in total, as *bytes per
    cycle per host* (``cycle_ns`` defaults to the byte time of the hosts'
    links, which is the paper's 3.2 ns clock on its 2.5 Gb/s links, so that 1
    byte/cycle/host is a fully used host link) and as a fraction of the
    hosts' total link bandwidth.
``delay``
    From a packet's creation to its last bit at the destination, in units
    of its connection's inter-arrival time (IAT): the share of packets whose
    delay is at most IAT/32, IAT/16, IAT/8, IAT/4, IAT/2, 3IAT/4 and IAT
    (Fig. 8).
``jitter``
    For consecutive packets ``k`` and ``k + 1`` of a connection, both
    measured: ``(a[k+1] - a[k]) - IAT = d[k+1] - d[k]`` (arrival times ``a``,
    delays ``d``), in IAT units; the share of pairs per interval, centred on
    ``[-IAT/8, IAT/8]`` (Fig. 9).
``best`` / ``worst``
    Per SL, the connections with the highest and lowest share of packets
    delivered within a deadline (IAT/2 by default), among those with at
    least ``min_packets`` measured packets (Figs. 10-12); ties go to the lower
    connection id.
``utilisation``
    Fraction of the window each transmitting port was busy: host interfaces
    (HCA ports) and switch ports (Figs. 5-7).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:  # pragma: no cover
    from ibfabric.components.cbr import QosNetwork
    from ibfabric.components.qos import Connection

__all__ = ["DELAY_FRACTIONS", "DELAY_LABELS", "JITTER_LABELS", "connection_stats", "qos_metrics", "qos_summary",
           "utilisation"]

#: Delay thresholds of Fig. 8, in IAT units.
DELAY_FRACTIONS = (1 / 32, 1 / 16, 1 / 8, 1 / 4, 1 / 2, 3 / 4, 1.0)
DELAY_LABELS = ("IAT/32", "IAT/16", "IAT/8", "IAT/4", "IAT/2", "3IAT/4", "IAT")
#: Bounds of |jitter| (IAT units) of the jitter intervals; the centre one is [-IAT/8, IAT/8].
_JITTER_BOUNDS = (1 / 8, 1 / 4, 1 / 2, 1.0)
JITTER_LABELS = ("< -IAT", "[-IAT, -IAT/2)", "[-IAT/2, -IAT/4)", "[-IAT/4, -IAT/8)", "[-IAT/8, IAT/8]",
                 "(IAT/8, IAT/4]", "(IAT/4, IAT/2]", "(IAT/2, IAT]", "> IAT")


def _jitter_bins(j: np.ndarray) -> np.ndarray:
    """Interval index 0..8 of each jitter (IAT units), by |j| and its sign."""
    mag = np.searchsorted(np.array(_JITTER_BOUNDS), np.abs(j), side="left")  # 0: |j| <= 1/8 ... 4: |j| > 1
    return 4 + np.where(j < 0, -mag, mag)


def connection_stats(log: Mapping[str, np.ndarray], connections: Sequence["Connection"], t0: float, t1: float,
                     now: float, deadline: float = 0.5) -> dict[str, np.ndarray]:
    """Per-connection arrays (in the order of *connections*) and the per-packet data behind them.

    Returns a dict with ``packets``, ``bytes``, ``under`` (packets, shape
    (connections, thresholds): delay <= each of :data:`DELAY_FRACTIONS` IAT),
    ``on_time`` (packets within *deadline* IAT), ``delay_mean`` and
    ``delay_max`` (IAT units), ``jitter`` (pairs per interval, shape
    (connections, 9)), and the packets' ``index`` (into *connections*) and
    ``delay`` (IAT units).
    """
    n = len(connections)
    ids = np.array([c.id for c in connections], dtype=np.int64)
    iat = np.array([c.iat for c in connections], dtype=float)
    order = np.argsort(ids, kind="stable")
    sorted_ids = ids[order]
    flow = log["flow"]
    created = log["created"]
    delivered = log["delivered_at"]
    pos = np.searchsorted(sorted_ids, flow)
    pos_c = np.minimum(pos, max(n - 1, 0))
    known = (pos < n) & (sorted_ids[pos_c] == flow) if n else np.zeros(len(flow), dtype=bool)
    keep = known & (created >= t0) & (created <= t1) & (delivered <= now)
    idx = order[pos_c[keep]]
    c_t = created[keep]
    d = (delivered[keep] - c_t) / iat[idx]
    size = log["size"][keep]
    packets = np.bincount(idx, minlength=n)
    nbytes = np.bincount(idx, weights=size, minlength=n)
    under = np.stack([np.bincount(idx, weights=(d <= f), minlength=n) for f in DELAY_FRACTIONS], axis=1) \
        if n else np.zeros((0, len(DELAY_FRACTIONS)))
    on_time = np.bincount(idx, weights=(d <= deadline), minlength=n)
    dsum = np.bincount(idx, weights=d, minlength=n)
    dmax = np.zeros(n)
    np.maximum.at(dmax, idx, d)
    # jitter: consecutive packets of one connection (created exactly one IAT apart)
    o = np.lexsort((c_t, idx))
    si, sc, sd = idx[o], c_t[o], d[o]
    jit = np.zeros((n, len(JITTER_LABELS)))
    if len(si) > 1:
        same = si[1:] == si[:-1]
        gap = (sc[1:] - sc[:-1]) / iat[si[1:]]
        pair = same & (np.abs(gap - 1.0) < 1e-6)
        j = (sd[1:] - sd[:-1])[pair]
        np.add.at(jit, (si[1:][pair], _jitter_bins(j)), 1)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(packets > 0, dsum / np.maximum(packets, 1), np.nan)
    return {"packets": packets, "bytes": nbytes, "under": under, "on_time": on_time, "delay_mean": mean,
            "delay_max": np.where(packets > 0, dmax, np.nan), "jitter": jit, "index": idx, "delay": d}


def _shares(counts: np.ndarray, total: float, labels: Sequence[str]) -> dict[str, float | None]:
    return {lab: (float(c) / total if total else None) for lab, c in zip(labels, counts)}


def qos_metrics(
    log: Mapping[str, np.ndarray],
    connections: Sequence["Connection"],
    *,
    window: tuple[float, float],
    now: float,
    num_hosts: int,
    link_rate: float,
    cycle_ns: float | None = None,
    deadline: float = 0.5,
    min_packets: int = 1,
    per_connection: bool = True,
) -> dict[str, Any]:
    """Per-SL (and per-connection) QoS metrics of a delivery log (see the module docstring).

    Parameters
    ----------
    log : dict of arrays
        ``Simulation.stats.arrays()``.
    connections : sequence of Connection
    window : (t0, t1)
        Measurement window, ns.
    now : float
        Packets delivered after *now* are not counted.
    num_hosts : int
        Hosts the traffic is normalised by.
    link_rate : float
        The hosts' link rate, bit/s.
    cycle_ns : float, optional
        Length of a cycle for bytes/cycle/host (default ``8e9 / link_rate``).
    deadline : float
        Deadline for the best and worst connections, in IAT units.
    min_packets : int
        Fewest measured packets a connection needs to be a best or worst one.
    per_connection : bool
        Include one record per connection.
    """
    t0, t1 = window
    span = t1 - t0
    cycle = cycle_ns if cycle_ns is not None else 8e9 / link_rate
    cs = connection_stats(log, connections, t0, t1, now, deadline)
    sl = np.array([c.sl for c in connections], dtype=np.int64)
    bw = np.array([c.bandwidth for c in connections], dtype=float)
    ids = [c.id for c in connections]
    capacity = num_hosts * link_rate  # bit/s

    def traffic(nbytes: float) -> dict[str, float]:
        if span <= 0:
            return {"bytes_per_cycle_per_host": 0.0, "fraction_of_link": 0.0}
        return {"bytes_per_cycle_per_host": nbytes / span * cycle / num_hosts,
                "fraction_of_link": nbytes * 8e9 / span / capacity}

    per_sl: dict[str, Any] = {}
    for s in sorted(set(sl.tolist())):
        m = sl == s
        pk = float(cs["packets"][m].sum())
        pairs = cs["jitter"][m].sum(axis=0)
        row: dict[str, Any] = {
            "connections": int(m.sum()),
            "requested_bps": float(bw[m].sum()),
            "requested_fraction_of_link": float(bw[m].sum()) / capacity,
            "packets": int(pk),
            "delivered": traffic(float(cs["bytes"][m].sum())),
            "delay_under": _shares(cs["under"][m].sum(axis=0), pk, DELAY_LABELS),
            "delay_mean_iat": float(cs["delay"][sl[cs["index"]] == s].mean()) if pk else None,
            "delay_max_iat": float(np.nanmax(cs["delay_max"][m])) if pk else None,
            "jitter_pairs": int(pairs.sum()),
            "jitter": _shares(pairs, float(pairs.sum()), JITTER_LABELS),
        }
        cand = np.flatnonzero(m & (cs["packets"] >= max(min_packets, 1)))
        if len(cand):
            share = cs["on_time"][cand] / cs["packets"][cand]
            for key, pick in (("worst", cand[np.argmin(share)]), ("best", cand[np.argmax(share)])):
                p = float(cs["packets"][pick])
                row[key] = {"id": ids[pick], "bandwidth_bps": float(bw[pick]), "packets": int(p),
                            "on_time": float(cs["on_time"][pick]) / p,
                            "delay_under": _shares(cs["under"][pick], p, DELAY_LABELS)}
        else:
            row["worst"] = row["best"] = None
        per_sl[str(s)] = row
    out: dict[str, Any] = {
        "window_ns": [t0, t1],
        "cycle_ns": cycle,
        "link_rate_bps": link_rate,
        "hosts": num_hosts,
        "deadline_iat": deadline,
        "connections": len(connections),
        "requested_fraction_of_link": float(bw.sum()) / capacity if len(bw) else 0.0,
        "delivered": traffic(float(cs["bytes"].sum())),
        "per_sl": per_sl,
    }
    if per_connection:
        recs = []
        for k, c in enumerate(connections):
            p = int(cs["packets"][k])
            got = float(cs["bytes"][k]) * 8e9 / span if span > 0 else 0.0
            recs.append({
                **c.as_dict(), "packets": p, "delivered_bps": got, "delivered_over_requested": got / c.bandwidth,
                "delivered_fraction_of_link": got / link_rate,
                "delay_mean_iat": None if p == 0 else float(cs["delay_mean"][k]),
                "delay_max_iat": None if p == 0 else float(cs["delay_max"][k]),
                "on_time": None if p == 0 else float(cs["on_time"][k]) / p,
            })
        out["per_connection"] = recs
    return out


def utilisation(busy: Mapping[str, float], hosts: Sequence[str], span: float) -> dict[str, Any]:
    """Utilisation of host interfaces and switch ports from busy times (ns) over *span* ns."""
    host_set = set(hosts)
    groups: dict[str, dict[str, float]] = {"host_interfaces": {}, "switch_ports": {}}
    for name, b in busy.items():
        groups["host_interfaces" if name in host_set else "switch_ports"][name] = b / span if span > 0 else 0.0
    out = {}
    for key, vals in groups.items():
        v = np.array(list(vals.values()))
        out[key] = {"count": len(v), "mean": float(v.mean()) if len(v) else None,
                    "min": float(v.min()) if len(v) else None, "max": float(v.max()) if len(v) else None,
                    "ports": vals}
    return out


def qos_summary(qos: "QosNetwork", *, deadline: float = 0.5, min_packets: int = 1,
                per_connection: bool = True, log: dict[str, np.ndarray] | None = None) -> dict[str, Any]:
    """The ``"qos"`` section of a simulation's summary: set-up, admission, metrics and utilisation.

    *log* is the delivery log (``sim.stats.arrays()``) when the caller already has it.
    """
    sim = qos.sim
    now = sim.now
    t0 = sim.warmup
    t1 = min(now, qos.window_end) if qos.window_end is not None else now
    rates = [h.tx[h.first_port].link.rate for h in sim.hosts]
    rate = float(np.mean(rates)) if rates else 0.0
    adm = qos.admission
    est = qos.establishment
    admission = est.as_dict() if est is not None else {"requested": None, "established": len(adm.connections)}
    admission["rejections"] = dict(sorted(adm.rejections.items()))
    res: dict[str, Any] = {
        "policy": qos.policy_name,
        "options": getattr(qos.policy, "options", lambda: {})(),
        "classes": qos.classes.describe(),
        "admission": admission,
    }
    if rate > 0 and now > t0:
        res.update(qos_metrics(sim.stats.arrays() if log is None else log, qos.connections, window=(t0, t1), now=now,
                               num_hosts=len(sim.hosts), link_rate=rate, deadline=deadline,
                               min_packets=min_packets, per_connection=per_connection))
        if qos.busy_at_end is not None and qos.window_end is not None and now >= qos.window_end:
            busy = qos.busy_at_end
        else:
            busy = {tx.name_: tx.busy_time(t1) for tx in sim.ports}
        host_ports = [tx.name_ for h in sim.hosts for tx in h.tx.values()]
        res["utilisation"] = utilisation(busy, host_ports, t1 - t0)
    return res
