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

from ibfabric.components.routing.fabric import FabricGraph
from ibfabric.components.routing.tables import NO_PORT, ForwardingTables
from ibfabric.errors import ConfigError
from ibfabric.plugins.manager import hookimpl

from ._common import SwitchView, parse_options, record_work
from ._layers import flag

__all__ = ["compute", "FatTree"]

_INF = np.iinfo(np.int32).max // 4


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
        #: each switch's down (up) ports packed to the left (:func:`_compact`): not all P ports
        self.packed_down = _compact(self.down, nbc)
        self.packed_up = _compact(self.up, nbc)
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
        _, dv, dnb = self.packed_down
        _, uv, unb = self.packed_up
        down = np.full((S, S), _INF, dtype=np.int64)
        np.fill_diagonal(down, 0)
        for ell in range(1, self.height):
            for rows in _chunks(np.flatnonzero(lv == ell), S * dv.shape[1]):
                sub = np.where(dv[rows, :, None], down[dnb[rows]], _INF).min(axis=1) + 1
                down[rows] = np.minimum(down[rows], sub)
        dist = down.copy()
        for ell in range(self.height - 2, -1, -1):
            for rows in _chunks(np.flatnonzero(lv == ell), S * uv.shape[1]):
                sub = np.where(uv[rows, :, None], dist[unb[rows]], _INF).min(axis=1) + 1
                dist[rows] = np.minimum(dist[rows], sub)
        down[down >= _INF] = _INF
        dist[dist >= _INF] = _INF
        return down, dist


def _chunks(rows: np.ndarray, per_row: int, budget: int = 1 << 24):
    step = max(1, budget // max(per_row, 1))
    for k in range(0, len(rows), step):
        yield rows[k : k + step]


def _names(g: FabricGraph) -> list[str]:
    from ibfabric.components.routing.opensm import short_names

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
    Cost: O(S^2 * K) array work for the distances (K the most up or down
    neighbours of a switch), O(S * K) per leaf and per switch for the
    candidate ports towards it, and per destination O(S) for the switches
    whose choice is forced (one candidate, kept as a bit mask) plus O(K)
    for each switch that chooses by load (L destinations; the tables are
    S x L entries).  The destinations are routed one after another, since
    each choice depends on the loads the earlier ones left.

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


def _compact(mask: np.ndarray, nbc: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The ports of *mask* (S, P) packed to the left in increasing order: (ports, valid, neighbour rows)."""
    width = max(int(mask.sum(axis=1).max(initial=0)), 1)
    cols = np.argsort(~mask, axis=1, kind="stable")[:, :width]
    valid = np.take_along_axis(mask, cols, axis=1)
    return np.where(valid, cols, 0), valid, np.where(valid, np.take_along_axis(nbc, cols, axis=1), 0)


class _Targets:
    """What every switch may do towards one target switch, in the packed port order of :func:`_compact`.

    ``fd_rows``/``fd_ports``: rows above the target with one shortest down port; ``md_rows``/``md_mask``:
    rows above it with several (chosen by load); ``cu``: (S, U) the up ports one hop nearer of the rows
    not above it; ``u_rows``: the rows with any; ``bits``: their ``cu`` as bit masks (None past 64 up ports).
    """

    __slots__ = ("fd_rows", "fd_ports", "md_rows", "md_mask", "cu", "u_rows", "bits")

    def __init__(self, tree: "FatTree", packed, target: int):
        dnp, dnv, dnn, upv, upn = packed
        dcol, ecol = tree.dist_down[:, target], tree.dist[:, target]
        anc = dcol < _INF
        cd = dnv & (dcol[dnn] == (dcol - 1)[:, None]) & anc[:, None]
        nd = cd.sum(axis=1)
        self.fd_rows = np.flatnonzero(nd == 1)
        self.fd_ports = dnp[self.fd_rows, cd[self.fd_rows].argmax(axis=1)]
        self.md_rows = np.flatnonzero(nd > 1)
        self.md_mask = cd[self.md_rows]
        self.cu = upv & (ecol[upn] == (ecol - 1)[:, None]) & (~anc & (ecol < _INF))[:, None]
        self.u_rows = np.flatnonzero(self.cu.any(axis=1))
        self.bits = _bits(self.cu[self.u_rows])


def _bits(mask: np.ndarray) -> np.ndarray | None:
    """Each row of the boolean (R, U) *mask* as one integer, bit j for column j (None if U > 64)."""
    if mask.shape[1] > 64:
        return None
    return np.bitwise_or.reduce(mask.astype(np.uint64) << np.arange(mask.shape[1], dtype=np.uint64), axis=1)


def _route(g: FabricGraph, view: SwitchView, tree: FatTree, connect_roots: bool) -> ForwardingTables:
    S, P = view.S, view.P
    rport = np.where(view.nbr >= 0, g.peer_port[g.switches][:, :P], 0)
    lft_t = np.full((g.max_lid + 1, S), NO_PORT, dtype=np.uint8)  # transposed: a LID's column is one row
    dn = np.zeros((S, P), dtype=np.int64)  # destinations routed down out of (switch, port)
    dnp, dnv, dnn = tree.packed_down
    upp, upv, upn = tree.packed_up
    packed = (dnp, dnv, dnn, upv, upn)
    upl = np.zeros(upp.shape, dtype=np.int64)  # destinations routed up out of (switch, packed up port)
    never = np.iinfo(np.int64).max
    ca = ~g.is_switch[g.ep_node] & (view.ep_row >= 0)
    per_leaf: dict[int, list[int]] = {}
    for e in np.flatnonzero(ca):
        per_leaf.setdefault(int(view.ep_row[e]), []).append(int(e))
    most = max(len(v) for v in per_leaf.values())
    root_of = np.full(g.max_lid + 1, -1, dtype=np.int64)
    order: list[int] = []
    dummies = 0
    routes = 0  # route() calls: each examines every port of every switch
    below = tree.dist_down < _INF  # below[t, y]: switch y is reached from t going down
    below_bits: dict[int, np.ndarray] = {}  # per top: the packed up ports leading below it, as bits
    shifts = np.arange(upp.shape[1], dtype=np.uint64)
    spines = _Spines(tree, rport, dn)

    def route(t: _Targets, lid: int | None, main: bool, top: int) -> None:
        """Entries of every switch towards the target of *t* (column *lid*; None: count only).

        Down: the shortest down port carrying the fewest destinations (``dn``).  Up: the up port one
        hop nearer carrying the fewest (``upl``), among those leading below *top* if there are any.
        Ties go to the lowest port.
        """
        nonlocal routes
        routes += 1
        rows = t.u_rows
        if t.bits is not None:  # candidates as bit masks: one bit is the choice, several go by load
            cand = t.bits
            if top >= 0:
                okb = below_bits.get(top)
                if okb is None:
                    okb = below_bits[top] = _bits(below[top][upn] & upv)
                ok = cand & okb[rows]
                cand = np.where(ok != 0, ok, cand)
            pick = np.frexp(cand.astype(np.float64))[1].astype(np.int64) - 1  # exact where one bit is set
            several = np.flatnonzero(cand & (cand - np.uint64(1)))
            if len(several):
                mask = ((cand[several, None] >> shifts) & np.uint64(1)).astype(bool)
                pick[several] = np.where(mask, upl[rows[several]], never).argmin(axis=1)
        elif top >= 0:
            ok = t.cu & below[top][upn]
            pick = np.where(np.where(ok.any(axis=1)[:, None], ok, t.cu), upl, never).argmin(axis=1)[rows]
        else:
            pick = np.where(t.cu, upl, never).argmin(axis=1)[rows]
        if main:
            upl[rows, pick] += 1
        if lid is not None:
            lft_t[lid, t.fd_rows] = t.fd_ports
            lft_t[lid, rows] = upp[rows, pick]
            if len(t.md_rows):
                md = t.md_rows
                ports = dnp[md]
                lft_t[lid, md] = ports[np.arange(len(md)), np.where(t.md_mask, dn[md[:, None], ports], never).argmin(axis=1)]

    for leaf in tree.leaves:
        eps = per_leaf[int(leaf)]
        targets = _Targets(tree, packed, int(leaf))
        for e in eps + [-1] * (most - len(eps)):
            path = spines.rise(int(leaf))
            top = path[-1][0] if path else int(leaf)
            lid = None if e < 0 else int(g.ep_lid[e])
            route(targets, lid, True, top)
            if e < 0:
                dummies += 1
                continue
            for parent, pp in path:
                lft_t[lid, parent] = pp
            lft_t[lid, leaf] = view.att_port[lid]
            root_of[lid] = int(g.switches[top])
            order.append(e)
    for x in range(S):
        lid = int(g.ep_lid[g.endpoint_of(int(g.switches[x]))])
        route(_Targets(tree, packed, x), lid, False, -1)
        lft_t[lid, x] = 0
    lft = np.ascontiguousarray(lft_t.T)
    del lft_t
    if connect_roots:
        _connect_roots(g, tree, lft)
    # work: two searches over the switches (levels, indexing), the distance
    # tables (every port relaxed towards every switch), one pass over every
    # port per routed target, the spines, the entries written
    ports = int((view.nbr >= 0).sum())
    work = {"visits": 2 * S + routes * S, "relaxations": 2 * ports + S * ports + routes * ports + spines.relaxed,
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


class _Spines:
    """The spines of the destinations: each rises from its leaf by the up link that already carries
    the fewest destinations downwards (fewest over the parallel links to the same switch first, then
    fewest on the link, then the lower index of the switch, then the lower port); ``dn`` counts them."""

    def __init__(self, tree: "FatTree", rport: np.ndarray, dn: np.ndarray):
        nbc, P = tree.nbc, dn.shape[1]
        self.dn = dn.reshape(-1)  # a view: counting here counts in dn
        self.relaxed = 0  # up ports compared (each against its siblings), as the plain search does
        self.links: list[tuple | None] = []  # per switch: (flat (parent, port) indices, groups, parents, ports)
        for x in range(len(nbc)):
            ups = sorted(np.flatnonzero(tree.up[x]).tolist(), key=lambda q, x=x: (tree.index[nbc[x, q]], q))
            if not ups:
                self.links.append(None)
                continue
            parent = nbc[x, ups]
            flat = parent * P + rport[x, ups]
            _, start, size = np.unique(parent, return_index=True, return_counts=True)
            groups = None if (size == 1).all() else (np.sort(start), size[np.argsort(start)])
            self.links.append((flat, groups, parent.tolist(), rport[x, ups].tolist()))

    def rise(self, leaf: int) -> list[tuple[int, int]]:
        """The spine of the next destination of *leaf*: (parent, parent's port down) per step, counted."""
        out, x, dn = [], leaf, self.dn
        while self.links[x] is not None:
            flat, groups, parent, port = self.links[x]
            self.relaxed += len(flat) ** 2
            load = dn[flat]
            if groups is None:
                best = int(load.argmin())
            else:  # same-parent links are adjacent (sorted by the parent's index): group sums, then the link
                start, size = groups
                total = np.repeat(np.add.reduceat(load, start), size)
                best = int(np.lexsort((load, total))[0])
            dn[flat[best]] += 1
            out.append((parent[best], port[best]))
            x = parent[best]
        return out


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
