"""Figures to compare routing engines on one fabric (what ``ibfabric routes --compare`` prints).

Traffic is between channel adapters (CA ports): the routes a cluster's
hosts use.  Links are the directed switch-to-switch links, classed by the
ranks of OpenSM's dnup (0 for a switch with adapters, one more per hop
away from them): *up* links lead away from the adapters (leaf-up in a
fat-tree), *down* links towards them (spine-down), *level* links join
equal ranks.
"""

from __future__ import annotations

import time
from typing import Any, Callable

import attrs
import numpy as np

from ibfabric.components.routing.fabric import FabricGraph
from ibfabric.components.routing.tables import NO_PORT, ForwardingTables

__all__ = ["EngineFigures", "engine_figures", "walk_pairs"]


@attrs.frozen
class EngineFigures:
    """One engine's figures on one fabric (see :func:`engine_figures`)."""

    engine: str
    seconds: float
    mean_hops: float
    max_hops: int
    max_routes: int  #: most CA-to-CA routes on one switch-to-switch link
    mean_routes: float
    max_up: int  #: ... on an up link (away from the adapters)
    max_down: int  #: ... on a down link
    uniform_worst: float  #: worst link's load under uniform traffic, in hosts' injection rates
    shift_worst: int  #: most flows on one link in any shift permutation
    shift_mean: float  #: mean over shifts of the most flows on one link
    sls: int
    vls: int
    deadlock_free: bool
    unreachable: int  #: pairs of endpoints (switches included) not delivered


def walk_pairs(tables: ForwardingTables, src: np.ndarray, dst: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Follow the tables from CA endpoints *src* to endpoints *dst*.

    Returns ``(hops, node, port, pair)``: the links taken per pair (-1 if
    not delivered) and, for every switch-to-switch hop, the switch node,
    its output port and the pair's index into *src*.
    """
    g = tables.fabric
    exp = tables.expanded()
    dlid = tables.dlids(src, dst)
    n = len(src)
    cur = g.peer_node[g.ep_node[src], g.ep_port[src]]
    hops = np.ones(n, dtype=np.int64)
    done = np.full(n, False)
    hop_pair, hop_node, hop_port = [], [], []
    active = np.flatnonzero(g.is_switch[np.maximum(cur, 0)] & (cur >= 0))
    for _ in range(len(g.switches) + 2):
        if not len(active):
            break
        node = cur[active]
        p = exp[g.switch_row[node], dlid[active]].astype(np.int64)
        ok = (p != NO_PORT) & (p != 0)
        active, node, p = active[ok], node[ok], p[ok]
        nxt = g.peer_node[node, p]
        ok = nxt >= 0
        active, node, p, nxt = active[ok], node[ok], p[ok], nxt[ok]
        sw = g.is_switch[nxt]
        hop_pair.append(active[sw]), hop_node.append(node[sw]), hop_port.append(p[sw])
        hops[active] += 1
        cur[active] = nxt
        arrived = active[~sw]
        done[arrived] = g.ep_node[dst[arrived]] == nxt[~sw]
        active = active[sw]
    cat = lambda xs: np.concatenate(xs) if xs else np.zeros(0, dtype=np.int64)  # noqa: E731
    return np.where(done, hops, -1), cat(hop_node), cat(hop_port), cat(hop_pair)


def engine_figures(fabric: FabricGraph, name: str, engine: Callable[..., ForwardingTables],
                   options: dict[str, Any] | None = None, rng: np.random.Generator | None = None,
                   shift_block: int = 1 << 18) -> EngineFigures:
    """Run *engine* on *fabric* (timed) and measure its tables.

    Uniform traffic: every CA sends to every other CA equally, so a link's
    load is its routes over N - 1 (N adapters).  Shift permutations: CA i
    sends to CA (i + s) mod N, CAs in fabric order, for every s.
    Deadlock freedom is :func:`~ibfabric.components.routing.routecheck.check_routes`
    over all endpoint pairs, per VL when the engine sets path SLs.
    """
    from ibfabric.components.routing.routecheck import check_routes

    from .dnup import ca_ranks
    from ._common import SwitchView

    t0 = time.perf_counter()
    tables = engine(fabric, dict(options or {}), rng if rng is not None else np.random.default_rng(1))
    seconds = time.perf_counter() - t0
    g = tables.fabric
    view = SwitchView(g)
    ca = np.flatnonzero(~g.is_switch[g.ep_node] & (view.ep_row >= 0))
    N = len(ca)
    rank = ca_ranks(view)
    width = g.peer_node.shape[1]
    load = np.zeros(len(g.nodes) * width, dtype=np.int64)
    hop_sum, hop_max, delivered = 0, 0, 0
    step = max(1, shift_block // max(N, 1))
    for lo in range(0, N, step):
        blk = ca[lo : lo + step]
        src, dst = np.repeat(blk, N), np.tile(ca, len(blk))
        keep = src != dst
        hops, node, port, _ = walk_pairs(tables, src[keep], dst[keep])
        load += np.bincount(node * width + port, minlength=len(load))
        ok = hops >= 0
        hop_sum += int(hops[ok].sum())
        hop_max = max(hop_max, int(hops[ok].max(initial=0)))
        delivered += int(ok.sum())
    load = load.reshape(len(g.nodes), width)
    peer = g.peer_node
    swlink = g.is_switch[:, None] & (peer >= 0) & g.is_switch[np.maximum(peer, 0)]
    nodes, ports = np.nonzero(swlink)
    lr = load[nodes, ports]
    r_from = rank[g.switch_row[nodes]]
    r_to = rank[g.switch_row[peer[nodes, ports]]]
    worst, means = 0, []
    for lo in range(0, max(N - 1, 0), step):
        shifts = np.arange(1 + lo, min(N, 1 + lo + step))
        s_src = np.tile(ca, len(shifts))
        s_dst = ca[(np.tile(np.arange(N), len(shifts)) + np.repeat(shifts, N)) % N]
        _, sn, sp, pair = walk_pairs(tables, s_src, s_dst)
        k = pair // N
        per = np.bincount(k * (len(g.nodes) * width) + sn * width + sp, minlength=len(shifts) * len(g.nodes) * width)
        m = per.reshape(len(shifts), -1).max(axis=1) if len(per) else np.zeros(len(shifts), dtype=np.int64)
        worst = max(worst, int(m.max(initial=0)))
        means.append(m)
    vl, num_vls = tables.vl_function()
    report = check_routes(tables, vl=vl, num_vls=num_vls)
    sls = len(np.unique(tables.path_sl)) if tables.path_sl is not None else 1
    return EngineFigures(
        engine=name,
        seconds=seconds,
        mean_hops=hop_sum / delivered if delivered else 0.0,
        max_hops=hop_max,
        max_routes=int(lr.max(initial=0)),
        mean_routes=float(lr.mean()) if len(lr) else 0.0,
        max_up=int(lr[r_to > r_from].max(initial=0)),
        max_down=int(lr[r_to < r_from].max(initial=0)),
        uniform_worst=float(lr.max(initial=0)) / max(N - 1, 1),
        shift_worst=worst,
        shift_mean=float(np.concatenate(means).mean()) if means else 0.0,
        sls=sls,
        vls=num_vls,
        deadlock_free=not report.cycle,
        unreachable=len(report.unreachable),
    )
