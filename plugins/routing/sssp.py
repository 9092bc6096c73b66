"""The ``sssp`` and ``dfsssp`` routing engines: globally balanced shortest paths, deadlock-free over virtual layers.

Domke, Hoefler and Nagel route one destination at a time along shortest
paths of a weighted channel graph and add to every channel's weight the
number of routes that now use it, so later destinations avoid loaded
channels; ``dfsssp`` then breaks every cycle of the channel dependency
graph by moving routes onto further virtual layers (SLs).
"""

from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from ibfabric.components.routing.fabric import FabricGraph
from ibfabric.components.routing.tables import NO_PORT, ForwardingTables
from ibfabric.errors import ConfigError
from ibfabric.plugins.manager import hookimpl

from . import _layers
from ._common import SwitchView, new_work, parse_options, record_work, search_work

__all__ = ["compute_sssp", "compute_dfsssp", "balanced_paths", "layered_tables"]


def _vls(value: Any) -> int:
    n = int(value)
    if not 1 <= n <= 15:
        raise ValueError(f"must be a number of data VLs from 1 to 15 (got {value!r})")
    return n


def balanced_paths(view: SwitchView, work: dict | None = None) -> tuple[np.ndarray, np.ndarray]:
    """SSSP's tables: for each LID in turn, the shortest routes of least accumulated channel weight.

    Destinations are the CA LIDs in LID order, then the switch LIDs.  For
    each, every switch takes, among its ports on a minimum-hop route, the one
    whose route has the least total weight (ties to the lowest port); every
    channel's weight then grows by the number of CA sources whose route uses
    it.  Returns ``(lft, weight)`` with ``weight`` (S, P) the final channel
    weights.  With *work*, adds to it the all-pairs hop searches and, per
    LID, every switch the weighted search reaches (``visits``), the ports
    it examines and the weights it updates (``relaxations``) and the
    entries written.
    """
    g = view.fabric
    S, P = view.S, view.P
    hops = g.switch_hops()
    nbv = view.nbr >= 0
    nbc = np.where(nbv, view.nbr, 0)
    lft = np.full((S, g.max_lid + 1), NO_PORT, dtype=np.uint8)
    weight = np.zeros((S, P), dtype=np.int64)
    ca = ~g.is_switch[g.ep_node] & (view.ep_row >= 0)
    sources = np.bincount(view.ep_row[ca], minlength=S).astype(np.int64)
    lids = view.lids()
    owner_is_ca = ~g.is_switch[g.ep_node[view.lid_ep[lids]]]
    order = np.concatenate((lids[owner_is_ca], lids[~owner_is_ca]))
    big = np.iinfo(np.int64).max // 4
    levels_of: dict[int, list[np.ndarray]] = {}
    degree = nbv.sum(axis=1)
    per_dest: dict[int, tuple[int, int]] = {}
    visits = relax = 0
    for lid in order:
        a = int(view.att_row[lid])
        levels = levels_of.get(a)
        if levels is None:
            h = hops[:, a]
            levels = levels_of[a] = [np.flatnonzero(h == k) for k in range(1, int(h.max()) + 1)]
            reached = h > 0
            per_dest[a] = (int(np.count_nonzero(reached)), int(degree[reached].sum()))
        n_reach, n_relax = per_dest[a]
        visits += n_reach
        relax += n_relax + n_reach
        h = hops[:, a]
        cost = np.zeros(S, dtype=np.int64)
        port = np.full(S, -1, dtype=np.int64)
        for k, rows in enumerate(levels, start=1):
            cand = nbv[rows] & (h[nbc[rows]] == k - 1)
            c = np.where(cand, weight[rows] + cost[nbc[rows]], big)
            p = c.argmin(axis=1)
            port[rows] = p
            cost[rows] = c[np.arange(len(rows)), p]
        flow = sources.copy()
        for rows in reversed(levels):
            p = port[rows]
            weight[rows, p] += flow[rows]
            np.add.at(flow, nbc[rows, p], flow[rows])
        reach = port >= 0
        lft[reach, lid] = port[reach]
        lft[a, lid] = view.att_port[lid]
    if work is not None:
        for k, v in search_work(hops >= 0, degree).items():
            work[k] = work.get(k, 0) + v
        work["visits"] = work.get("visits", 0) + visits
        work["relaxations"] = work.get("relaxations", 0) + relax
        work["entries"] = work.get("entries", 0) + visits + len(order)
    return lft, weight


def compute_sssp(fabric: FabricGraph, options: Mapping[str, Any] | None = None,
                 rng: np.random.Generator | None = None) -> ForwardingTables:
    """SSSP tables: shortest paths balanced by channel weights that grow with every route added.

    Parameters
    ----------
    fabric : FabricGraph
        The fabric, with every LID assigned (any LMC: each LID of a range
        is routed on its own, so the weights spread a range over disjoint
        paths).
    options : dict of str
        None are accepted.
    rng : numpy.random.Generator
        Unused (the engine is deterministic).

    Returns
    -------
    ForwardingTables
        Linear tables; ``info["weight"]`` is the final (S, P) channel weight
        (routes from CA sources per switch port).

    Raises
    ------
    ConfigError
        For any option, or a fabric with unassigned LIDs.

    Examples
    --------
    A ring of four switches with a host each: every channel of the ring
    ends up carrying the same number of routes between hosts.

    >>> from ibfabric.topologies.generators import torus
    >>> t = compute_sssp(torus((4,)).with_lids(), {})
    >>> t.info["weight"][:, 1:3].tolist()   # ports 1 and 2 of sw0..sw3 (+ and - round the ring)
    [[4, 4], [4, 4], [4, 4], [4, 4]]

    Notes
    -----
    Domke et al. run Dijkstra's algorithm per destination on a channel
    graph whose weights start at P^2 (P the number of CAs, which keeps the
    paths shortest in practice) and add the routes found.  Here the paths
    are shortest by construction: a switch only considers ports one hop
    nearer the destination (hop counts from :meth:`FabricGraph.switch_hops`),
    and among them the least accumulated weight to the destination, computed
    level by level from the destination outwards for all switches at once.
    Each route's CA sources (the CAs on its switch) are then added to every
    channel of the route, summed level by level back towards the
    destination.  Cost: O(L * S * P) array work for L LIDs.  The routes are
    loop-free but not deadlock-free in general; ``dfsssp`` makes them so.

    References
    ----------
    .. [1] J. Domke, T. Hoefler, W. E. Nagel, "Deadlock-Free Oblivious
       Routing for Arbitrary Topologies", IPDPS 2011, §III-IV.
    .. [2] T. Hoefler, T. Schneider, A. Lumsdaine, "Optimized Routing for
       Large-Scale InfiniBand Networks", HOTI 2009.
    .. [3] OpenSM, ``osm_ucast_dfsssp.c`` (engines ``sssp`` and ``dfsssp``).
    """
    parse_options("sssp", options, {})
    view = SwitchView(fabric)
    work = new_work()
    lft, weight = balanced_paths(view, work)
    return ForwardingTables(fabric, lft, engine="sssp", info=record_work({"weight": weight}, work))


def compute_dfsssp(fabric: FabricGraph, options: Mapping[str, Any] | None = None,
                   rng: np.random.Generator | None = None) -> ForwardingTables:
    """DFSSSP tables: SSSP's routes, with an SL per path so that every virtual layer is deadlock-free.

    Parameters
    ----------
    fabric : FabricGraph
        The fabric, with every LID assigned (any LMC).
    options : dict of str
        ``vls``: the data VLs every port offers (default 8, the usual
        hardware); the engine fails if breaking the cycles needs more.
        ``balance``: spread the routes over all ``vls`` SLs once the cycles
        are broken (default true, as OpenSM does).
    rng : numpy.random.Generator
        Unused (the engine is deterministic).

    Returns
    -------
    ForwardingTables
        SSSP's linear tables with ``path_sl`` (the SL of every source
        switch and DLID) and ``sl2vl`` (SL i on VL i).  ``info``:
        ``layers_needed`` (layers before balancing), ``sls_used``,
        ``weight``.

    Raises
    ------
    ConfigError
        For an unknown option or bad value, or when ``vls`` layers do not
        suffice to break every cycle.

    Examples
    --------
    A ring of five switches: its shortest paths close a cycle of channel
    dependencies each way round, which one more layer breaks.

    >>> from ibfabric.topologies.generators import torus
    >>> t = compute_dfsssp(torus((5,)).with_lids(), {"balance": "false"})
    >>> t.info["layers_needed"], t.sl2vl[:3]
    (2, (0, 1, 2))

    Notes
    -----
    Every route (source switch, DLID) starts in layer 0.  While layer v's
    channel dependency graph has a cycle, the dependency of the cycle
    induced by the fewest source-destination pairs is chosen and every
    route of layer v inducing it moves to layer v + 1 (Domke et al.,
    Algorithm 2).  Cycles are sought only among the dependencies left after
    peeling, all at once, those on no cycle (Kahn's algorithm on arrays).
    With layers to spare, each spare SL goes to the layer with the most
    pairs per SL and a layer's routes are dealt round-robin over its SLs.
    Every port maps SL i to VL i, so layers never mix.  Cost: the SSSP
    tables, plus O(S * L * D) to walk every route (D the diameter), plus
    O(c * E) for c cycles among E dependencies.

    References
    ----------
    .. [1] J. Domke, T. Hoefler, W. E. Nagel, "Deadlock-Free Oblivious
       Routing for Arbitrary Topologies", IPDPS 2011, §IV (Algorithms 1, 2).
    .. [2] OpenSM, ``osm_ucast_dfsssp.c`` (``dfsssp_remove_deadlocks``).
    """
    opts = parse_options("dfsssp", options, {"vls": (8, _vls), "balance": (True, _layers.flag)})
    view = SwitchView(fabric)
    work = new_work()
    lft, weight = balanced_paths(view, work)
    return layered_tables(view, lft, opts["vls"], opts["balance"], "dfsssp", {"weight": weight}, work)


def layered_tables(view: SwitchView, lft: np.ndarray, vls: int, do_balance: bool, engine: str,
                   info: dict, work: dict | None = None) -> ForwardingTables:
    """Tables whose routes are split over SLs by DFSSSP's cycle breaking (then balanced)."""
    g = view.fabric
    routes = _layers.Routes(view, lft)
    weight = _route_weights(view, lft.shape[1])
    try:
        layer, needed = _layers.break_cycles(routes, weight, vls, work)
    except ValueError:
        raise ConfigError(f"routing engine '{engine}': {vls} VLs do not suffice to break every cycle of the channel "
                          f"dependency graph; raise option vls (at most 15) or use another engine") from None
    sl = _layers.balance(layer, weight, needed, vls) if do_balance else layer
    info = dict(info, layers_needed=needed, sls_used=int(sl.max()) + 1)
    if work is not None:  # plus every (route, dependency) found by the route walk
        work["checks"] = work.get("checks", 0) + len(routes.dep_route)
        record_work(info, work)
    sl2vl = tuple(min(i, 14) for i in range(16))
    return ForwardingTables(g, lft, engine=engine, info=info, path_sl=sl, sl2vl=sl2vl)


def _route_weights(view: SwitchView, width: int) -> np.ndarray:
    """Source-destination pairs of each (source switch, DLID) route: the endpoints on the switch, for owned LIDs."""
    on = np.bincount(view.ep_row[view.ep_row >= 0], minlength=view.S).astype(np.int64)
    w = np.zeros((view.S, width), dtype=np.int64)
    w[:, view.lids()] = on[:, None]
    return w


@hookimpl
def ibfabric_register_routing_engines(register):
    register("sssp", compute_sssp, description="shortest paths balanced by growing channel weights, like OpenSM sssp "
             "(Domke et al. 2011)")
    register("dfsssp", compute_dfsssp, description="sssp made deadlock-free with SLs per path, like OpenSM dfsssp "
             "(Domke et al. 2011; options vls=N, balance=true|false)")
