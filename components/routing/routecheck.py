"""Checks of forwarding tables: reachability, loops, path lengths, link load, entries, deadlock freedom.

Every function here is pure: it takes :class:`ForwardingTables` and returns
values.  :func:`check_routes` walks every source -> destination endpoint
pair (switches' port 0 and CA ports) through the tables, all pairs at once
(one numpy step per hop), and builds the channel dependency graph (CDG):
channels are directed links (and VLs, if a VL assignment is given), and
there is an edge from channel c1 to c2 when some route uses c2 right after
c1.  Routing is deadlock-free when the CDG is acyclic (Dally and Seitz; Duato).

By default a pair is walked on the one DLID its source sends to
(:meth:`ForwardingTables.dlids`: the base LID, or the engine's
``path_offset``).  ``every_lid=True`` walks every LID of the destination's
LMC range instead: the routes of sources that pick a LID per packet (Kim's
multipath, whose named paths live at ``base + 2P + 1``; LMC-based
multipathing in general), whose CDG is the union over all of them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

import attrs
import numpy as np

from ibfabric.wording import counted

from .fabric import FabricGraph
from .opensm import short_names
from .tables import NO_PORT, ForwardingTables

__all__ = ["RouteReport", "check_routes", "route_walk", "cdg_cycle", "describe_channel", "endpoint_label"]

#: ``vl(src_ep, dst_ep, hop, node, port) -> VLs``: vectorised VL of each hop (all arguments arrays).
VLFunction = Callable[[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray], np.ndarray]


@attrs.frozen
class RouteReport:
    """What :func:`check_routes` found.  ``ok`` is True when every pair is delivered without a loop and the CDG is acyclic."""

    engine: str
    pairs: int
    unreachable: np.ndarray = attrs.field(eq=False, repr=False)  #: (k, 2) endpoint pairs not delivered (no entry, wrong node)
    loops: np.ndarray = attrs.field(eq=False, repr=False)  #: (k, 2) endpoint pairs caught in a forwarding loop
    mean_hops: float
    max_hops: int
    mean_min_hops: float
    longer_than_minimum: int  #: delivered pairs whose route is longer than the fewest hops possible
    max_extra_hops: int
    link_load: np.ndarray = attrs.field(eq=False, repr=False)  #: routes per directed link (CA links too), indexed like ``channels``
    channels: np.ndarray = attrs.field(eq=False, repr=False)  #: (C, 2) (node, port) of every directed link
    max_link_load: int
    mean_link_load: float
    explicit_entries: np.ndarray = attrs.field(eq=False, repr=False)  #: per switch
    default_ports: int  #: switches with a default port (random forwarding tables)
    cdg_channels: int
    cdg_edges: int
    cycle: tuple[str, ...]  #: a CDG cycle as channel names ("sw3 port 2" or "sw3 port 2 VL0"), empty if none
    every_lid: bool = False  #: routes walked on every LID of each destination's range (``pairs`` counts routes)

    @property
    def ok(self) -> bool:
        """True when every pair is delivered, no pair loops and the channel dependency graph is acyclic."""
        return not len(self.unreachable) and not len(self.loops) and not self.cycle

    def summary(self, fabric: FabricGraph | None = None) -> str:
        """Human-readable lines; endpoint names need *fabric*."""

        def pair(p: np.ndarray) -> str:
            if fabric is None:
                return f"{int(p[0])} -> {int(p[1])}"
            return f"{endpoint_label(fabric, int(p[0]))} -> {endpoint_label(fabric, int(p[1]))}"

        pairs = (f"routes:               {self.pairs} (every LID of each destination's LMC range, over ordered pairs of"
                 " endpoints, switches included: the hops and loads below are over them)" if self.every_lid else
                 f"pairs:                {self.pairs} (ordered pairs of endpoints, switches included: the hops and"
                 " loads below are over them)")
        lines = [
            f"engine:               {self.engine or '-'}",
            pairs,
            f"unreachable:          {len(self.unreachable)}" + (f" (e.g. {pair(self.unreachable[0])})" if len(self.unreachable) else ""),
            f"loops:                {len(self.loops)}" + (f" (e.g. {pair(self.loops[0])})" if len(self.loops) else ""),
            f"hops:                 mean {self.mean_hops:.3f}, max {self.max_hops} (minimum possible: mean {self.mean_min_hops:.3f})",
            f"longer than minimum:  {counted(self.longer_than_minimum, 'route' if self.every_lid else 'pair')}, at most +{counted(self.max_extra_hops, 'hop')}",
            f"link load:            max {self.max_link_load}, mean {self.mean_link_load:.2f} routes per directed link",
            f"explicit entries:     {int(self.explicit_entries.sum())} ({int(self.explicit_entries.min(initial=0))}..{int(self.explicit_entries.max(initial=0))} per switch), default ports: {self.default_ports}",
            f"channel dependencies: {self.cdg_edges} between {self.cdg_channels} channels, "
            + ("acyclic (deadlock-free)" if not self.cycle else f"CYCLE: {' -> '.join(self.cycle)} -> {self.cycle[0]}"),
        ]
        return "\n".join(lines)


def _channels(fabric: FabricGraph) -> tuple[np.ndarray, np.ndarray]:
    """Channel id of every (node, port) (-1 where unconnected) and the (node, port) of every channel."""
    mask = fabric.peer_node >= 0
    ids = np.full(fabric.peer_node.shape, -1, dtype=np.int64)
    ids[mask] = np.arange(int(mask.sum()))
    return ids, np.argwhere(mask)


def route_walk(
    tables: ForwardingTables,
    sources: np.ndarray | None = None,
    *,
    vl: VLFunction | None = None,
    num_vls: int = 1,
    chunk: int = 1 << 21,
    every_lid: bool = False,
) -> dict:
    """Walk every (source, destination) endpoint pair through the tables.

    Returns a dict with ``src``, ``dst`` (pair arrays), ``hops`` (-1 if not
    delivered), ``status`` (0 delivered, 1 unreachable, 2 loop), ``load``
    (routes per channel), ``deps`` (unique int64 codes ``c1 * C + c2`` of
    consecutive (channel, VL) pairs, C = channels x *num_vls*),
    ``channels`` and ``dlid`` (the DLID each route was walked on).  Pairs
    are processed in chunks of about *chunk* pairs.  With *every_lid* each
    pair is walked once per LID of the destination's LMC range (its pair
    arrays repeat); *vl* must then be None (a VL function is given per
    pair, not per LID).
    """
    if every_lid and vl is not None:
        raise ValueError("every_lid walks routes per LID; a VL function gives one VL per (source, destination)")
    g = tables.fabric
    exp = tables.expanded()
    ids, chan_np = _channels(g)
    C = len(chan_np)
    CV = C * num_vls
    ne = len(g.ep_lid)
    src_all = np.arange(ne) if sources is None else np.asarray(sources)
    load = np.zeros(C, dtype=np.int64)
    deps: list[np.ndarray] = []
    out_src, out_dst, out_hops, out_status, out_dlid = [], [], [], [], []
    per = max(1, chunk // max(ne, 1))
    limit = len(g.switches) + 2
    # endpoint index of every (node, port) for delivery checks
    ep_at = np.full(g.peer_node.shape, -1, dtype=np.int64)
    ep_at[g.ep_node, g.ep_port] = np.arange(ne)
    for k in range(0, len(src_all), per):
        s_blk = src_all[k : k + per]
        src = np.repeat(s_blk, ne)
        dst = np.tile(np.arange(ne), len(s_blk))
        keep = src != dst
        src, dst = src[keep], dst[keep]
        if every_lid:  # one route per LID of the destination's range
            size = np.left_shift(1, g.ep_lmc[dst])
            start = np.repeat(np.cumsum(size) - size, size)
            src, dst = np.repeat(src, size), np.repeat(dst, size)
            dlid = g.ep_lid[dst] + (np.arange(len(src)) - start)
        else:
            dlid = tables.dlids(src, dst)
        n = len(src)
        hops = np.zeros(n, dtype=np.int64)
        status = np.full(n, -1, dtype=np.int64)  # -1 travelling
        prev = np.full(n, -1, dtype=np.int64)
        node = g.ep_node[src].copy()
        # CA sources inject on their own link first
        ca = ~g.is_switch[node]
        if ca.any():
            c0 = ids[node[ca], g.ep_port[src[ca]]]
            vlv = _vl(vl, src[ca], dst[ca], np.zeros(int(ca.sum()), dtype=np.int64), node[ca], g.ep_port[src[ca]])
            prev[ca] = c0 * num_vls + vlv
            np.add.at(load, c0, 1)
            peer = g.peer_node[node[ca], g.ep_port[src[ca]]]
            pport = g.peer_port[node[ca], g.ep_port[src[ca]]]
            hops[ca] = 1
            node[ca] = peer
            arrived_ca = ~g.is_switch[peer]
            idx = np.flatnonzero(ca)[arrived_ca]
            status[idx] = np.where(ep_at[peer[arrived_ca], pport[arrived_ca]] == dst[idx], 0, 1)
        active = np.flatnonzero(status < 0)
        while len(active):
            cur = node[active]
            row = g.switch_row[cur]
            lid = dlid[active]
            port = np.where(lid < exp.shape[1], exp[row, np.minimum(lid, exp.shape[1] - 1)], NO_PORT).astype(np.int64)
            dead = port == NO_PORT
            local = port == 0
            status[active[dead]] = 1
            loc = active[local]
            status[loc] = np.where(g.ep_node[dst[loc]] == node[loc], 0, 1)
            go = ~dead & ~local
            act = active[go]
            cur, port = cur[go], port[go]
            conn = g.peer_node[cur, port] >= 0
            status[act[~conn]] = 1
            act, cur, port = act[conn], cur[conn], port[conn]
            c = ids[cur, port]
            vlv = _vl(vl, src[act], dst[act], hops[act], cur, port)
            cv = c * num_vls + vlv
            has_prev = prev[act] >= 0
            if has_prev.any():
                deps.append(np.unique(prev[act][has_prev] * CV + cv[has_prev]))
            prev[act] = cv
            np.add.at(load, c, 1)
            hops[act] += 1
            nxt = g.peer_node[cur, port]
            nport = g.peer_port[cur, port]
            node[act] = nxt
            at_ca = ~g.is_switch[nxt]
            fin = act[at_ca]
            status[fin] = np.where(ep_at[nxt[at_ca], nport[at_ca]] == dst[fin], 0, 1)
            looping = act[~at_ca & (hops[act] > limit)]
            status[looping] = 2
            active = act[~at_ca & (status[act] < 0)]
        out_src.append(src)
        out_dst.append(dst)
        out_hops.append(np.where(status == 0, hops, -1))
        out_status.append(status)
        out_dlid.append(dlid)
    cat = lambda xs: np.concatenate(xs) if xs else np.zeros(0, dtype=np.int64)  # noqa: E731
    return {
        "src": cat(out_src),
        "dst": cat(out_dst),
        "hops": cat(out_hops),
        "status": cat(out_status),
        "dlid": cat(out_dlid),
        "load": load,
        "deps": np.unique(cat(deps)),
        "channels": chan_np,
        "num_vls": num_vls,
    }


def _vl(vl: VLFunction | None, src, dst, hop, node, port) -> np.ndarray:
    if vl is None:
        return np.zeros(len(src), dtype=np.int64)
    return np.asarray(vl(src, dst, hop, node, port), dtype=np.int64)


def endpoint_label(fabric: FabricGraph, e: int, names: list[str] | None = None) -> str:
    """An endpoint's name without the network's name: ``'sw3'``, ``'h4 port 1'``
    (*names*: ``short_names(fabric)``, when the caller already has them)."""
    node = int(fabric.ep_node[e])
    name = (names if names is not None else short_names(fabric))[node]
    return name if fabric.is_switch[node] else f"{name} port {int(fabric.ep_port[e])}"


def describe_channel(fabric: FabricGraph, channels: np.ndarray, code: int, num_vls: int = 1) -> str:
    """``'sw3 port 2'`` (``'sw3 port 2 VL1'`` with VLs) for a channel code."""
    c, v = divmod(int(code), num_vls)
    node, port = channels[c]
    name = f"{short_names(fabric)[int(node)]} port {int(port)}"
    return name + (f" VL{v}" if num_vls > 1 else "")


def cdg_cycle(deps: np.ndarray | Iterable[np.ndarray], num_channels: int) -> list[int]:
    """A cycle of the channel dependency graph, as channel codes, or [] if it is acyclic.

    *deps* holds codes ``c1 * num_channels + c2`` (one array, or several
    whose union is taken: the CDGs of several table sets together).
    Acyclicity is decided by peeling channels without incoming
    dependencies, all at once per round (Kahn's algorithm on arrays);
    networkx then finds a cycle in what is left.
    """
    if not isinstance(deps, np.ndarray):
        parts = [np.asarray(d, dtype=np.int64) for d in deps]
        deps = np.unique(np.concatenate(parts)) if parts else np.zeros(0, dtype=np.int64)
    if not len(deps):
        return []
    a, b = np.divmod(deps, num_channels)
    alive = np.ones(len(a), dtype=bool)
    while True:
        indeg = np.bincount(b[alive], minlength=num_channels)
        has_out = np.bincount(a[alive], minlength=num_channels) > 0
        drop = alive & ((indeg[a] == 0) | ~has_out[b])
        if not drop.any():
            break
        alive &= ~drop
    if not alive.any():
        return []
    import networkx as nx  # only for a cyclic CDG: a run that routes fine never imports it

    sub = nx.DiGraph()
    sub.add_edges_from(zip(a[alive].tolist(), b[alive].tolist()))
    cyc = nx.find_cycle(sub)
    return [int(u) for u, _ in cyc]


def check_routes(
    tables: ForwardingTables,
    *,
    vl: VLFunction | None = None,
    num_vls: int = 1,
    every_lid: bool = False,
) -> RouteReport:
    """Walk every endpoint pair through *tables* and report.

    Parameters
    ----------
    tables : ForwardingTables
    vl : callable, optional
        ``vl(src_ep, dst_ep, hop, node, port) -> VL`` (vectorised over
        arrays) when routes are split over virtual lanes (an SL-to-VL
        assignment); channels of the CDG are then (directed link, VL).
    num_vls : int
        Number of VLs *vl* returns values below.
    every_lid : bool
        Walk every LID of each destination's LMC range, not only the one
        the source uses (:func:`route_walk`); *vl* must then be None.

    Returns
    -------
    RouteReport
    """
    g = tables.fabric
    w = route_walk(tables, vl=vl, num_vls=num_vls, every_lid=every_lid)
    src, dst, hops, status = w["src"], w["dst"], w["hops"], w["status"]
    ok = status == 0
    mins = _min_hops(g)[src, dst]
    extra = np.where(ok & (mins >= 0), hops - mins, 0)
    chans = w["channels"]
    cycle = cdg_cycle(w["deps"], len(chans) * num_vls)
    used = w["load"]
    return RouteReport(
        engine=tables.engine,
        pairs=len(src),
        unreachable=np.stack([src[status == 1], dst[status == 1]], axis=1),
        loops=np.stack([src[status == 2], dst[status == 2]], axis=1),
        mean_hops=float(hops[ok].mean()) if ok.any() else 0.0,
        max_hops=int(hops[ok].max()) if ok.any() else 0,
        mean_min_hops=float(mins[ok].mean()) if ok.any() else 0.0,
        longer_than_minimum=int((extra > 0).sum()),
        max_extra_hops=int(extra.max()) if len(extra) else 0,
        link_load=used,
        channels=chans,
        max_link_load=int(used.max()) if len(used) else 0,
        mean_link_load=float(used.mean()) if len(used) else 0.0,
        explicit_entries=tables.explicit_entries(),
        default_ports=int((tables.default_port >= 0).sum()),
        cdg_channels=len(np.unique(np.concatenate(np.divmod(w["deps"], len(chans) * num_vls)))),
        cdg_edges=len(w["deps"]),
        cycle=tuple(describe_channel(g, chans, c, num_vls) for c in cycle),
        every_lid=every_lid,
    )


def _min_hops(g: FabricGraph) -> np.ndarray:
    """Fewest links between every pair of endpoints (-1 if none), through switches or a direct CA-CA link."""
    hs = g.switch_hops()
    ne = len(g.ep_lid)
    sw, _ = g.attachments()
    ok = sw >= 0
    att = np.where(ok, g.switch_row[np.where(ok, sw, 0)], -1)
    extra = (ok & ~g.is_switch[g.ep_node]).astype(np.int64)  # a CA is one link further than its switch
    out = np.full((ne, ne), -1, dtype=np.int64)
    sub = hs[np.ix_(att[ok], att[ok])]
    blk = np.where(sub >= 0, sub + extra[ok][:, None] + extra[ok][None, :], -1)
    out[np.ix_(np.flatnonzero(ok), np.flatnonzero(ok))] = blk
    for e in np.flatnonzero(~ok):  # back-to-back CA ports
        n, p = int(g.ep_node[e]), int(g.ep_port[e])
        peer = int(g.peer_node[n, p])
        if peer >= 0:
            other = np.flatnonzero((g.ep_node == peer) & (g.ep_port == g.peer_port[n, p]))
            out[e, other] = 1
            out[other, e] = 1
    return out
