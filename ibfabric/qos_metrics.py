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

import copy
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:  # pragma: no cover
    from ibfabric.components.qos import Connection
    from ibfabric.components.qos.cbr import QosNetwork

__all__ = ["DELAY_FRACTIONS", "DELAY_LABELS", "JITTER_LABELS", "ConnectionStats", "connection_stats", "qos_metrics", "qos_summary",
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


class ConnectionStats:
    """Per-connection sums of a delivery log, added one chunk at a time.

    What lets a QoS run keep bounded memory: every metric of
    :func:`qos_metrics` is a per-connection count, sum or maximum, so the
    delivery log can be folded into one of these as it grows
    (:meth:`ibfabric.stats.PacketStats.fold`) and the rest of the log added
    at the end.  Jitter pairs consecutive packets of a connection; the last
    packet of each connection is carried from one chunk to the next, so a
    pair is lost only if a connection's packets are delivered out of
    creation order across a fold (never with deterministic routing).

    Parameters
    ----------
    t0, t_end : float
        Packets created in ``[t0, t_end]`` are measured (``t_end=None``: no end).
    deadline : float
        The deadline, in IAT units, of the ``on_time`` counts.
    """

    _N = len(JITTER_LABELS)

    def __init__(self, t0: float = 0.0, t_end: float | None = None, deadline: float = 0.5):
        self.t0 = t0
        self.t_end = t_end
        self.deadline = deadline
        self.row: dict[int, int] = {}  # connection id -> row of the arrays
        self.packets = np.zeros(0)
        self.bytes = np.zeros(0)
        self.under = np.zeros((0, len(DELAY_FRACTIONS)))
        self.on_time = np.zeros(0)
        self.delay_sum = np.zeros(0)
        self.delay_max = np.zeros(0)
        self.jitter = np.zeros((0, self._N))
        self.last_created = np.zeros(0)  # creation time and delay of each connection's latest packet
        self.last_delay = np.zeros(0)

    def _rows(self, ids: np.ndarray) -> np.ndarray:
        for i in ids.tolist():
            if i not in self.row:
                self.row[i] = len(self.row)
        n = len(self.row)
        grow = n - len(self.packets)
        if grow > 0:
            for name in ("packets", "bytes", "on_time", "delay_sum", "delay_max"):
                setattr(self, name, np.concatenate([getattr(self, name), np.zeros(grow)]))
            self.under = np.concatenate([self.under, np.zeros((grow, len(DELAY_FRACTIONS)))])
            self.jitter = np.concatenate([self.jitter, np.zeros((grow, self._N))])
            self.last_created = np.concatenate([self.last_created, np.full(grow, np.nan)])
            self.last_delay = np.concatenate([self.last_delay, np.full(grow, np.nan)])
        return np.array([self.row[i] for i in ids.tolist()], dtype=np.int64)

    def add(self, log: Mapping[str, np.ndarray], iat: Mapping[int, float], now: float) -> "ConnectionStats":
        """Add the packets of *log* delivered by *now* whose ``flow`` is a connection of *iat*
        (connection id -> inter-arrival time, ns)."""
        ids = np.array(sorted(iat), dtype=np.int64)
        n = len(ids)
        flow = log["flow"]
        created = log["created"]
        delivered = log["delivered_at"]
        if n == 0 or len(flow) == 0:
            return self
        pos = np.minimum(np.searchsorted(ids, flow), n - 1)
        keep = (ids[pos] == flow) & (created >= self.t0) & (delivered <= now)
        if self.t_end is not None:
            keep &= created <= self.t_end
        if not keep.any():
            return self
        present = np.unique(pos[keep])
        rows = self._rows(ids[present])
        idx = rows[np.searchsorted(present, pos[keep])]
        iat_present = np.array([iat[i] for i in ids[present].tolist()])
        iat_of = iat_present[np.searchsorted(present, pos[keep])]
        c_t = created[keep]
        d = (delivered[keep] - c_t) / iat_of
        m = len(self.row)
        self.packets += np.bincount(idx, minlength=m)
        self.bytes += np.bincount(idx, weights=log["size"][keep], minlength=m)
        for k, f in enumerate(DELAY_FRACTIONS):
            self.under[:, k] += np.bincount(idx, weights=(d <= f), minlength=m)
        self.on_time += np.bincount(idx, weights=(d <= self.deadline), minlength=m)
        self.delay_sum += np.bincount(idx, weights=d, minlength=m)
        np.maximum.at(self.delay_max, idx, d)
        # jitter: consecutive packets of one connection (created exactly one IAT apart), with each
        # connection's latest packet of the previous chunks in front of this chunk's
        had = ~np.isnan(self.last_created[rows])
        carried = rows[had]
        cat = np.concatenate
        ji = cat([carried, idx])
        jc = cat([self.last_created[carried], c_t])
        jd = cat([self.last_delay[carried], d])
        jiat = cat([iat_present[had], iat_of])
        o = np.lexsort((jc, ji))
        si, sc, sd, sa = ji[o], jc[o], jd[o], jiat[o]
        if len(si) > 1:
            same = si[1:] == si[:-1]
            gap = (sc[1:] - sc[:-1]) / sa[1:]
            pair = same & (np.abs(gap - 1.0) < 1e-6)
            np.add.at(self.jitter, (si[1:][pair], _jitter_bins((sd[1:] - sd[:-1])[pair])), 1)
        last = np.ones(len(si), dtype=bool)
        last[:-1] = si[1:] != si[:-1]
        self.last_created[si[last]] = sc[last]
        self.last_delay[si[last]] = sd[last]
        return self

    def copy(self) -> "ConnectionStats":
        """An independent deep copy (folding more chunks into it leaves this one unchanged)."""
        return copy.deepcopy(self)

    def result(self, connections: Sequence["Connection"]) -> dict[str, np.ndarray]:
        """Per-connection arrays in the order of *connections*: ``packets``, ``bytes``, ``under``
        (packets, shape (connections, thresholds): delay <= each of :data:`DELAY_FRACTIONS` IAT),
        ``on_time`` (packets within the deadline), ``delay_sum``, ``delay_mean`` and ``delay_max``
        (IAT units), ``jitter`` (pairs per interval, shape (connections, 9))."""
        n = len(connections)
        rows = np.array([self.row.get(c.id, -1) for c in connections], dtype=np.int64)
        has = rows >= 0
        out: dict[str, np.ndarray] = {}
        for name in ("packets", "bytes", "on_time", "delay_sum", "delay_max", "under", "jitter"):
            a = getattr(self, name)
            v = np.zeros((n,) + a.shape[1:])
            v[has] = a[rows[has]]
            out[name] = v
        packets = out["packets"]
        with np.errstate(invalid="ignore", divide="ignore"):
            out["delay_mean"] = np.where(packets > 0, out["delay_sum"] / np.maximum(packets, 1), np.nan)
        out["delay_max"] = np.where(packets > 0, out["delay_max"], np.nan)
        return out


def connection_stats(log: Mapping[str, np.ndarray], connections: Sequence["Connection"], t0: float, t1: float,
                     now: float, deadline: float = 0.5) -> dict[str, np.ndarray]:
    """:meth:`ConnectionStats.result` of a whole delivery log: packets created in ``[t0, t1]``,
    delivered by *now*."""
    acc = ConnectionStats(t0, t1, deadline)
    return acc.add(log, {c.id: c.iat for c in connections}, now).result(connections)


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
    folded: ConnectionStats | None = None,
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
    folded : ConnectionStats, optional
        What a long run folded out of *log*; measured with the same window and deadline.
    """
    t0, t1 = window
    span = t1 - t0
    cycle = cycle_ns if cycle_ns is not None else 8e9 / link_rate
    if folded is None:
        cs = connection_stats(log, connections, t0, t1, now, deadline)
    else:
        cs = folded.copy().add(log, {c.id: c.iat for c in connections}, now).result(connections)
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
            "delay_mean_iat": float(cs["delay_sum"][m].sum()) / pk if pk else None,
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
    folded = qos.folded
    if folded is not None and (folded.t0, folded.t_end, folded.deadline) != (t0, qos.window_end, deadline):
        from ibfabric.errors import ConfigError

        raise ConfigError(
            f"the QoS metrics were folded with warm-up {folded.t0:g}ns, window end {folded.t_end} and deadline"
            f" {folded.deadline:g} IAT, not the {t0:g}ns, {qos.window_end} and {deadline:g} asked for now: set"
            " 'summary_options' before the run, or keep the whole log with Simulation(log_limit=None)")
    if rate > 0 and now > t0:
        res.update(qos_metrics(sim.stats.arrays() if log is None else log, qos.connections, window=(t0, t1), now=now,
                               num_hosts=len(sim.hosts), link_rate=rate, deadline=deadline,
                               min_packets=min_packets, per_connection=per_connection, folded=folded))
        if qos.busy_at_end is not None and qos.window_end is not None and now >= qos.window_end:
            busy = qos.busy_at_end
        else:
            busy = {tx.name_: tx.busy_time(t1) for tx in sim.ports}
        host_ports = [tx.name_ for h in sim.hosts for tx in h.tx.values()]
        res["utilisation"] = utilisation(busy, host_ports, t1 - t0)
    return res
