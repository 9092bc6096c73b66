"""The ``lash`` routing engine: layered shortest path routing, as OpenSM's lash."""

from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from ibfabric.components.routing.fabric import FabricGraph
from ibfabric.components.routing.tables import ForwardingTables
from ibfabric.errors import ConfigError
from ibfabric.plugins.manager import hookimpl

from . import _layers
from ._common import SwitchView, expand_switch_ports, parse_options, record_work, search_work
from .sssp import _vls

__all__ = ["compute", "DynamicOrder"]


class DynamicOrder:
    """A directed acyclic graph kept topologically ordered as edges are added (Pearce and Kelly 2006).

    :meth:`add` refuses an edge that would close a cycle; :meth:`remove`
    never invalidates the order.  *order* gives each node's initial
    position (a permutation of ``range(n)``); a good guess saves reorders.
    """

    def __init__(self, n: int, order: np.ndarray | None = None):
        self.ord = list(range(n)) if order is None else [int(v) for v in order]
        self.succ: dict[int, dict[int, int]] = {}
        self.pred: dict[int, dict[int, int]] = {}
        self.steps = 0  # nodes the reachability searches of add() expanded (work counter)

    def add(self, a: int, b: int) -> bool:
        """Add edge a -> b (counted: it may be added several times); False, and nothing added, if it closes a cycle."""
        out = self.succ.setdefault(a, {})
        if b in out:
            out[b] += 1
            self.pred[b][a] += 1
            return True
        ord_ = self.ord
        lb, ub = ord_[b], ord_[a]
        if lb < ub:
            fwd = self._reach(b, self.succ, ub, True, a)
            if fwd is None:
                return False
            back = self._reach(a, self.pred, lb, False, -1)
            nodes = sorted(back, key=ord_.__getitem__) + sorted(fwd, key=ord_.__getitem__)
            for w, pos in zip(nodes, sorted(ord_[w] for w in nodes)):
                ord_[w] = pos
        out[b] = 1
        self.pred.setdefault(b, {})[a] = 1
        return True

    def remove(self, a: int, b: int) -> None:
        """Take back one addition of edge a -> b."""
        self.succ[a][b] -= 1
        self.pred[b][a] -= 1
        if not self.succ[a][b]:
            del self.succ[a][b]
            del self.pred[b][a]

    def _reach(self, start: int, adj: dict, bound: int, below: bool, stop: int) -> list[int] | None:
        """Nodes reachable from *start* through nodes positioned below (or above) *bound*; None if *stop* is."""
        ord_ = self.ord
        seen, stack = {start}, [start]
        while stack:
            self.steps += 1
            for y in adj.get(stack.pop(), ()):
                if y == stop:
                    return None
                if y not in seen and (ord_[y] < bound if below else ord_[y] > bound):
                    seen.add(y)
                    stack.append(y)
        return list(seen)


def switch_routes(view: SwitchView) -> np.ndarray:
    """Minimum-hop next hops between switches, ``to[x, a]``, balanced by the LIDs routed over each port."""
    g = view.fabric
    S = view.S
    hops = g.switch_hops()
    nbv = view.nbr >= 0
    nbc = np.where(nbv, view.nbr, 0)
    lids_at = np.bincount(view.att_row[view.lids()], minlength=S)
    load = np.zeros((S, view.P), dtype=np.int64)
    to = np.full((S, S), -1, dtype=np.int64)
    rows = np.arange(S)
    big = np.iinfo(np.int64).max
    for a in range(S):
        h = hops[:, a]
        ok = nbv & (h[nbc] == (h - 1)[:, None]) & (h[nbc] >= 0)
        has = ok.any(axis=1)
        port = np.where(ok, load, big).argmin(axis=1)
        to[has, a] = port[has]
        load[rows[has], port[has]] += lids_at[a]
    return to


def compute(fabric: FabricGraph, options: Mapping[str, Any] | None = None, rng: np.random.Generator | None = None) -> ForwardingTables:
    """LASH tables: shortest paths between switches, each pair of switches on a layer (SL) that stays acyclic.

    Parameters
    ----------
    fabric : FabricGraph
        The fabric, with every LID assigned (the LIDs of an LMC range share
        their switch's routes).
    options : dict of str
        ``vls``: the data VLs every port offers (default 8); the engine
        fails if the pairs need more layers.  ``balance``: spread the pairs
        over all ``vls`` SLs once assigned (default true).
    rng : numpy.random.Generator
        Unused (the engine is deterministic).

    Returns
    -------
    ForwardingTables
        Linear tables with ``path_sl`` and ``sl2vl`` (SL i on VL i);
        ``info``: ``layers_needed``, ``sls_used``, ``pair_layer`` (S x S,
        the layer of each pair of switches before balancing).

    Raises
    ------
    ConfigError
        For an unknown option or bad value, or when ``vls`` layers do not
        suffice.

    Examples
    --------
    A ring of five switches needs two layers for its shortest paths:

    >>> from ibfabric.topologies.generators import torus
    >>> t = compute(torus((5,)).with_lids(), {"balance": "false"})
    >>> t.info["layers_needed"], int(t.info["pair_layer"].max())
    (2, 1)

    Notes
    -----
    Routes are switch-level shortest paths (every LID of a switch takes
    the same route), each switch balancing its next hops over the LIDs it
    routes, destination switch by destination switch.  Pairs of switches
    {i, j} are then taken in order, and both routes i -> j and j -> i go
    into the first layer whose channel dependency graph stays acyclic with
    them (Skeie et al., §3; the same SL both ways, as in OpenSM); a new
    layer opens when none does.  Each layer's graph is kept topologically
    ordered as dependencies arrive (Pearce and Kelly's dynamic order),
    starting from channels leading away from the adapters before channels
    leading back (dnup's ranks), so a pair usually costs a few dictionary
    lookups.  Layers are then spread
    over the SLs to spare, pairs dealt round-robin, as ``dfsssp`` does.
    Routes to channel adapters on the source switch need no layer.

    References
    ----------
    .. [1] T. Skeie, O. Lysne, I. Theiss, "Layered Shortest Path (LASH)
       Routing in Irregular System Area Networks", IPDPS Workshop on
       Communication Architecture for Clusters (CAC), 2002.
    .. [2] O. Lysne, T. Skeie, S.-A. Reinemo, I. Theiss, "Layered Routing
       in Irregular Networks", IEEE TPDS 17(1), 2006.
    .. [3] D. J. Pearce, P. H. J. Kelly, "A Dynamic Topological Sort
       Algorithm for Directed Acyclic Graphs", ACM JEA 11, 2006.
    .. [4] OpenSM, ``osm_ucast_lash.c``.
    """
    opts = parse_options("lash", options, {"vls": (8, _vls), "balance": (True, _layers.flag)})
    view = SwitchView(fabric)
    to = switch_routes(view)
    S = view.S
    routes = _layers.Routes(view, to)
    work: dict[str, int] = {}
    layer, needed = _assign(routes, S, opts["vls"], _initial_order(view, routes), work)
    on = np.bincount(view.ep_row[view.ep_row >= 0], minlength=S).astype(np.int64)
    lids_at = np.bincount(view.att_row[view.lids()], minlength=S).astype(np.int64)
    pairs = on[:, None] * lids_at[None, :]
    upper = np.triu(np.ones((S, S), dtype=bool), 1)
    sl = _layers.balance(np.where(upper, layer, 0).astype(np.uint8), np.where(upper, pairs + pairs.T, 0),
                         needed, opts["vls"]) if opts["balance"] else layer.astype(np.uint8)
    sl = np.where(upper, sl, sl.T)
    lft = expand_switch_ports(view, to)
    path_sl = np.zeros(lft.shape, dtype=np.uint8)
    lids = view.lids()
    path_sl[:, lids] = sl[:, view.att_row[lids]]
    info = {"layers_needed": needed, "sls_used": int(path_sl.max()) + 1, "pair_layer": layer}
    # work: the all-pairs hop searches, every switch port examined per destination switch
    # (switch_routes), the routes' dependencies, the layering, one entry per (switch, LID)
    nbv = view.nbr >= 0
    record_work(info, search_work((to >= 0) | np.eye(S, dtype=bool), nbv.sum(axis=1)),
                {"relaxations": S * int(nbv.sum()), "checks": len(routes.dep_route),
                 "entries": S * len(lids)}, work)
    return ForwardingTables(fabric, lft, engine="lash", info=info, path_sl=path_sl,
                            sl2vl=tuple(min(i, 14) for i in range(16)))


def _initial_order(view: SwitchView, routes: _layers.Routes) -> np.ndarray:
    """Initial channel positions: channels leading away from the adapters first (nearest them first),
    then channels between equal ranks, then channels leading towards them (farthest first).

    Routes that go away from the adapters and then back, as every shortest
    route of a fat-tree does, then never reorder the layers' graphs.
    """
    from .dnup import ca_ranks

    rank = ca_ranks(view)
    rows, ports = routes.channels[:, 0], routes.channels[:, 1]
    r_from, r_to = rank[rows], rank[view.nbr[rows, ports]]
    cls = np.where(r_to > r_from, 0, np.where(r_to == r_from, 1, 2))
    key = np.lexsort((np.arange(len(rows)), np.where(cls == 2, -r_from, r_from), cls))
    pos = np.empty(len(rows), dtype=np.int64)
    pos[key] = np.arange(len(rows))
    return pos


def _assign(routes: _layers.Routes, S: int, vls: int, order: np.ndarray,
            work: dict | None = None) -> tuple[np.ndarray, int]:
    """The first layer, pair by pair, that both routes of a pair of switches keep acyclic.

    With *work*, adds the dependencies offered to a layer or taken back
    (``checks``) and the nodes the layers' order searches expanded (``visits``).
    """
    checks = 0
    layer = np.zeros((S, S), dtype=np.int64)
    n = len(routes.channels)
    dags = [DynamicOrder(n, order)]
    edges = routes.edges.tolist()
    T = routes.T
    for i in range(S):
        for j in range(i + 1, S):
            deps = [edges[e] for e in routes.dep_edge[routes.deps_of(np.array([i * T + j, j * T + i]))]]
            v = 0
            while True:
                if v == len(dags):
                    if v >= vls:
                        raise ConfigError(f"routing engine 'lash': {vls} VLs do not suffice for the layers the "
                                          "shortest paths need; raise option vls (at most 15) or use another engine")
                    dags.append(DynamicOrder(n, order))
                dag, done = dags[v], []
                checks += len(deps)
                for a, b in deps:
                    if not dag.add(a, b):
                        checks += len(done)
                        for x, y in reversed(done):
                            dag.remove(x, y)
                        break
                    done.append((a, b))
                else:
                    break
                v += 1
            layer[i, j] = layer[j, i] = v
    if work is not None:
        work["checks"] = work.get("checks", 0) + checks
        work["visits"] = work.get("visits", 0) + sum(dag.steps for dag in dags)
    return layer, len(dags)


@hookimpl
def ibfabric_register_routing_engines(register):
    register("lash", compute, description="layered shortest paths: one SL per switch pair, each layer deadlock-free, "
             "like OpenSM lash (Skeie et al. 2002; options vls=N, balance=true|false)")
