"""The ``ftree`` routing engine: fat-tree routing by the index scheme, as OpenSM's ftree.

Zahavi et al. route a fat-tree destination by destination, in the order of
an indexing of the leaves, so that the routes towards every destination
converge on one top switch and the *shift* permutations (host i sends to
host i + s) load no link twice.  OpenSM's ``ftree`` engine implements it for
k-ary n-trees and quasi fat-trees (missing hosts or switches, parallel
links, any constant bisectional bandwidth); this module follows its
behaviour with array work over all switches per destination.
"""

from __future__ import annotations

from collections import deque
from typing import Any, Mapping

import numpy as np

from ibfabric.components.fabric import FabricGraph
from ibfabric.components.tables import NO_PORT, ForwardingTables
from ibfabric.errors import ConfigError
from ibfabric.plugins.manager import hookimpl

from ._common import SwitchView, parse_options, record_work
from ._layers import flag

__all__ = ["compute", "FatTree"]

_INF = np.iinfo(np.int32).max // 4
_BIG = 1 << 40


class FatTree:
    """The levels and the index of a fat-tree's switches; raises ConfigError on anything else.

    Level 0 holds the switches with channel adapters (the leaves); every
    other switch is one level above its nearest leaf.  Attributes: ``level``
    (S,), ``up``/``down`` (S, P) port masks, ``index`` (S,) the breadth-first
    index, ``leaves`` (leaf rows in index order), ``dist_down`` and ``dist``
    (S, S): from switch x to switch t, going down only / going up then down
    (a large number where impossible).
    """

    def __init__(self, view: SwitchView):
        g = view.fabric
        names = _names(g)
        self.view = view
        S = view.S
        if not S:
            raise ConfigError("routing engine 'ftree': the fabric has no switch")
        nbr = view.nbr
        nbv = nbr >= 0
        nbc = np.where(nbv, nbr, 0)
        ca_eps = np.flatnonzero(~g.is_switch[g.ep_node] & (view.ep_row >= 0))
        if not len(ca_eps):
            raise ConfigError("routing engine 'ftree': not a fat-tree: no channel adapter hangs on a switch "
                              "(the adapters are the leaves of the tree)")
        is_leaf = np.zeros(S, dtype=bool)
        is_leaf[view.ep_row[ca_eps]] = True
        level = np.full(S, -1, dtype=np.int64)
        level[is_leaf] = 0
        frontier, k = is_leaf.copy(), 0
        while frontier.any():
            k += 1
            new = (nbv & frontier[nbc]).any(axis=1) & (level < 0)
            level[new] = k
            frontier = new
        if (level < 0).any():
            x = int(np.flatnonzero(level < 0)[0])
            raise ConfigError(f"routing engine 'ftree': not a fat-tree: {names[g.switches[x]]} is not connected "
                              "to any switch with channel adapters")
        same = nbv & (level[nbc] == level[:, None])
        if same.any():
            x, p = (int(v) for v in np.argwhere(same)[0])
            y = int(nbr[x, p])
            what = ("two switches with channel adapters (all adapters must hang at the lowest level)"
                    if level[x] == 0 else f"two switches of level {int(level[x])}")
            raise ConfigError(f"routing engine 'ftree': not a fat-tree: the link {names[g.switches[x]]} port {p} - "
                              f"{names[g.switches[y]]} joins {what}; a fat-tree links adjacent levels only")
        self.level = level
        self.height = int(level.max()) + 1
        self.up = nbv & (level[nbc] == level[:, None] + 1)
        self.down = nbv & (level[nbc] == level[:, None] - 1)
        self.nbc = nbc
        self.index = self._indexing(int(np.flatnonzero(is_leaf)[0]))
        self.leaves = np.flatnonzero(is_leaf)[np.argsort(self.index[is_leaf], kind="stable")]
        self.dist_down, self.dist = self._distances()
        bad = self.dist[np.ix_(self.leaves, self.leaves)] >= _INF
        if bad.any():
            i, j = (int(v) for v in np.argwhere(bad)[0])
            raise ConfigError(f"routing engine 'ftree': not a fat-tree: the leaf {names[g.switches[self.leaves[i]]]} "
                              f"cannot reach the leaf {names[g.switches[self.leaves[j]]]} going up and then down")

    def _indexing(self, first: int) -> np.ndarray:
        """Breadth-first index of every switch from the first leaf, ports in increasing order (OpenSM's tuples)."""
        index = np.full(self.view.S, -1, dtype=np.int64)
        index[first] = 0
        q, n = deque([first]), 1
        nbr = self.view.nbr
        while q:
            x = q.popleft()
            for y in nbr[x][nbr[x] >= 0]:
                if index[y] < 0:
                    index[y] = n
                    n += 1
                    q.append(int(y))
        return index

    def _distances(self) -> tuple[np.ndarray, np.ndarray]:
        S, lv = self.view.S, self.level
        down = np.full((S, S), _INF, dtype=np.int64)
        np.fill_diagonal(down, 0)
        for ell in range(1, self.height):
            for rows in _chunks(np.flatnonzero(lv == ell), S * self.view.P):
                sub = np.where(self.down[rows, :, None], down[self.nbc[rows]], _INF).min(axis=1) + 1
                down[rows] = np.minimum(down[rows], sub)
        dist = down.copy()
        for ell in range(self.height - 2, -1, -1):
            for rows in _chunks(np.flatnonzero(lv == ell), S * self.view.P):
                sub = np.where(self.up[rows, :, None], dist[self.nbc[rows]], _INF).min(axis=1) + 1
                dist[rows] = np.minimum(dist[rows], sub)
        down[down >= _INF] = _INF
        dist[dist >= _INF] = _INF
        return down, dist


def _chunks(rows: np.ndarray, per_row: int, budget: int = 1 << 24):
    step = max(1, budget // max(per_row, 1))
    for k in range(0, len(rows), step):
        yield rows[k : k + step]


def _names(g: FabricGraph) -> list[str]:
    from ibfabric.components.opensm import short_names

    return short_names(g)


def compute(fabric: FabricGraph, options: Mapping[str, Any] | None = None, rng: np.random.Generator | None = None) -> ForwardingTables:
    """Fat-tree forwarding tables: congestion-free shift permutations on k-ary n-trees.

    Parameters
    ----------
    fabric : FabricGraph
        A fat-tree (k-ary n-tree or quasi fat-tree), with every LID assigned
        and LMC 0.
    options : dict of str
        ``connect_roots``: route the LIDs that no up-then-down route reaches
        from a switch (other top switches; anything below a missing switch)
        through the last leaf switch, as OpenSM's
        ``connect_roots`` does for switch LIDs (default true; false leaves
        those entries empty, OpenSM's default).
    rng : numpy.random.Generator
        Unused (the engine is deterministic).

    Returns
    -------
    ForwardingTables
        Linear tables.  ``info``: ``level`` (per switch, 0 = leaves),
        ``leaves`` (leaf switch nodes in index order), ``ca_order`` (the
        CA endpoints in routing order, OpenSM's ``opensm-ftree-ca-order.dump``:
        the order in which shift permutations are congestion-free),
        ``root_of`` (per LID, the top switch node its routes converge on,
        -1 for switch LIDs) and ``dummies`` (routes of missing hosts).

    Raises
    ------
    ConfigError
        For an option, LMC > 0 (OpenSM's ftree does not support it either),
        or a fabric that is not a fat-tree, with the reason: no adapter, a
        switch without a path to the leaves, a link within a level (which is
        also what adapters at different levels give), or two leaves that no
        up-then-down route joins.

    Examples
    --------
    A 2-ary 2-tree: two leaves s1_0, s1_1 under two top switches s0_0, s0_1.

    >>> from ibfabric.topologies.generators import fat_tree
    >>> t = compute(fat_tree(2, 2).with_lids(), {})
    >>> t.info["level"].tolist()
    [1, 1, 0, 0]
    >>> g = t.fabric
    >>> [t.port(g.index("s1_0"), g.lid_of(g.index(h))) for h in ("h0", "h1", "h2", "h3")]
    [1, 2, 3, 4]

    The two remote hosts leave s1_0 by different up ports, one per top switch.

    Notes
    -----
    Levels are counted from the leaves (switches with adapters) up, by a
    breadth-first search; a link within a level, or a switch no path of
    up-then-down links joins to every leaf, makes the fabric a non-tree.
    Switches are indexed breadth-first from the first leaf (ports in
    increasing order), and leaves are routed in index order, each one's
    adapters in port order followed by *dummy* destinations up to the
    largest number of adapters on a leaf, so that missing hosts keep the
    balance of a full tree (OpenSM's ``max_cn_per_leaf``).

    For each destination d: (1) its *spine* rises from its leaf, each
    switch taking the up link that already carries the fewest destinations
    downwards (fewest over parallel links to the same switch first, then
    the lower index, then the lower port), up to a top switch R(d); the
    spine's switches route d down along it.  (2) Every other switch above
    d's leaf routes down, along a shortest down path.  (3) Every remaining
    switch routes up, to a neighbour one hop nearer, preferring neighbours
    below R(d) (so the routes to d converge on R(d)), then the up port that
    already carries the fewest destinations.  On a full k-ary n-tree this
    is Zahavi's destination-indexed routing: every up port of a level
    carries the same number of destinations and a shift permutation (in
    ``ca_order``) loads each link at most once per direction.  Switch LIDs
    are routed afterwards the same way without counting load.  Every route
    goes up and then down, so the channel dependency graph is acyclic.
    Cost: O(S^2 * P) array work for the distances, O((L + S) * S * P) for
    the routes (L destinations).

    References
    ----------
    .. [1] E. Zahavi, G. Johnson, D. J. Kerbyson, M. Lang, "Optimized
       InfiniBand fat-tree routing for shift all-to-all communication
       patterns", Concurrency and Computation: Practice and Experience
       22(2), 2010.
    .. [2] OpenSM, ``osm_ucast_ftree.c`` and ``doc/current-routing.txt``
       (Fat-tree Routing Algorithm).
    """
    opts = parse_options("ftree", options, {"connect_roots": (True, flag)})
    if (fabric.ep_lmc > 0).any():
        raise ConfigError("routing engine 'ftree' does not support LMC > 0 (OpenSM's ftree neither); use lmc 0")
    view = SwitchView(fabric)
    tree = FatTree(view)
    return _route(fabric, view, tree, opts["connect_roots"])


def _route(g: FabricGraph, view: SwitchView, tree: FatTree, connect_roots: bool) -> ForwardingTables:
    S, P = view.S, view.P
    nbc, up, down = tree.nbc, tree.up, tree.down
    rport = np.where(view.nbr >= 0, g.peer_port[g.switches][:, :P], 0)
    lft = np.full((S, g.max_lid + 1), NO_PORT, dtype=np.uint8)
    dn = np.zeros((S, P), dtype=np.int64)  # destinations routed down out of (switch, port)
    upl = np.zeros((S, P), dtype=np.int64)  # destinations routed up out of (switch, port)
    rows = np.arange(S)
    # up ports of each switch in (parent index, port) order, with their group (parent)
    ups = [sorted(np.flatnonzero(up[x]).tolist(), key=lambda q, x=x: (tree.index[nbc[x, q]], q)) for x in range(S)]
    ca = ~g.is_switch[g.ep_node] & (view.ep_row >= 0)
    per_leaf: dict[int, list[int]] = {}
    for e in np.flatnonzero(ca):
        per_leaf.setdefault(int(view.ep_row[e]), []).append(int(e))
    most = max(len(v) for v in per_leaf.values())
    root_of = np.full(g.max_lid + 1, -1, dtype=np.int64)
    order: list[int] = []
    dummies = 0
    spine_relax = 0  # up ports compared (each against its siblings) while choosing spines
    routes = 0  # route() calls: each examines every port of every switch

    def spine(leaf: int) -> list[tuple[int, int]]:
        """Rise from *leaf* by the least-loaded up links; (parent, parent's port down) per step, counted."""
        nonlocal spine_relax
        out, x = [], leaf
        while ups[x]:
            spine_relax += len(ups[x]) ** 2
            best = min(ups[x], key=lambda q: (sum(dn[nbc[x, r], rport[x, r]] for r in ups[x] if nbc[x, r] == nbc[x, q]),
                                              dn[nbc[x, q], rport[x, q]], tree.index[nbc[x, q]], q))
            parent, pp = int(nbc[x, best]), int(rport[x, best])
            dn[parent, pp] += 1
            out.append((parent, pp))
            x = parent
        return out

    def route(target: int, lid: int | None, main: bool, top: int) -> None:
        """Entries of every switch towards switch *target* (column *lid*; None: count only)."""
        nonlocal routes
        routes += 1
        dcol, ecol = tree.dist_down[:, target], tree.dist[:, target]
        anc = dcol < _INF
        cand_d = down & (dcol[nbc] == (dcol - 1)[:, None]) & anc[:, None]
        cand_u = up & (ecol[nbc] == (ecol - 1)[:, None]) & ~anc[:, None] & (ecol < _INF)[:, None]
        cost = np.where(cand_d, dn, np.where(cand_u, upl, _BIG * 4))
        if top >= 0:
            cost = cost + np.where(cand_u & (tree.dist_down[top][nbc] >= _INF), _BIG, 0)
        port = cost.argmin(axis=1)
        has = (cand_d | cand_u).any(axis=1)
        if main:
            goes_up = has & ~anc
            np.add.at(upl, (rows[goes_up], port[goes_up]), 1)
        if lid is not None:
            lft[rows[has], lid] = port[has]

    for leaf in tree.leaves:
        eps = per_leaf[int(leaf)]
        for e in eps + [-1] * (most - len(eps)):
            path = spine(int(leaf))
            top = path[-1][0] if path else int(leaf)
            lid = None if e < 0 else int(g.ep_lid[e])
            route(int(leaf), lid, True, top)
            if e < 0:
                dummies += 1
                continue
            for parent, pp in path:
                lft[parent, lid] = pp
            lft[leaf, lid] = view.att_port[lid]
            root_of[lid] = int(g.switches[top])
            order.append(e)
    for x in range(S):
        lid = int(g.ep_lid[g.endpoint_of(int(g.switches[x]))])
        route(x, lid, False, -1)
        lft[x, lid] = 0
    if connect_roots:
        _connect_roots(g, tree, lft)
    # work: two searches over the switches (levels, indexing), the distance
    # tables (every port relaxed towards every switch), one pass over every
    # port per routed target, the spines, the entries written
    ports = int((view.nbr >= 0).sum())
    work = {"visits": 2 * S + routes * S, "relaxations": 2 * ports + S * ports + routes * ports + spine_relax,
            "entries": int(np.count_nonzero(lft != NO_PORT))}
    info = {
        "level": tree.level.copy(),
        "leaves": g.switches[tree.leaves].copy(),
        "ca_order": np.array(order, dtype=np.int64),
        "root_of": root_of,
        "dummies": dummies,
    }
    record_work(info, work)
    return ForwardingTables(g, lft, engine="ftree", info=info)


def _connect_roots(g: FabricGraph, tree: FatTree, lft: np.ndarray) -> None:
    """Route the LIDs no up-then-down route reaches through the last leaf (OpenSM's ``connect_roots``).

    A switch without an entry for a LID (a switch LID beside its own
    up-cone, or, in a tree with missing switches, a top switch or any LID
    below a missing switch) takes the port it uses towards the last leaf
    switch in index order, if that leaf reaches the LID; all the
    down-to-up turns of the fabric then happen at that one leaf.
    """
    pivot = int(tree.leaves[-1])
    pivot_lid = g.lid_of(int(g.switches[pivot]))
    owned = np.flatnonzero(g.lid_owner >= 0)
    reach = owned[lft[pivot, owned] != NO_PORT]
    for x in range(len(lft)):
        if x == pivot or lft[x, pivot_lid] == NO_PORT:
            continue
        miss = reach[lft[x, reach] == NO_PORT]
        lft[x, miss] = lft[x, pivot_lid]


@hookimpl
def ibfabric_register_routing_engines(register):
    register("ftree", compute, description="fat-tree routing, congestion-free shift on k-ary n-trees, like OpenSM ftree "
             "(Zahavi et al. 2010; option connect_roots=true|false)")
