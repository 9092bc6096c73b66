"""The ``updn-tree`` routing engine: Kim et al.'s Up/Down, routes on spanning-tree links only."""

from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from ibfabric.components.routing.fabric import FabricGraph
from ibfabric.components.routing.tables import ForwardingTables
from ibfabric.plugins.manager import hookimpl

from ._common import SwitchView, expand_switch_ports, parse_options, record_work, search_work
from ._updown import root_node as updown_root
from .updn import _lid_distances

__all__ = ["compute", "bfs_tree"]


def bfs_tree(fabric: FabricGraph, view: SwitchView, root: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Breadth-first spanning tree of the switches from switch row *root*, neighbours in port order.

    The tree is the one a queue-based breadth-first search builds: switches
    leave the queue in the order they entered it, each scans its ports in
    increasing order and enqueues the switches not seen yet.  One level is
    one array step: the frontier's (switch, port) neighbours, flattened in
    queue order then port order, keep their first occurrence.

    Returns ``(parent, level, up_port, down_port)`` per switch row: the
    parent row (-1 at the root and for switches the root does not reach),
    the depth (-1 if unreached), the port towards the parent and the
    parent's port towards the switch (-1 where there is none).
    """
    S = view.S
    nbr = view.nbr
    parent = np.full(S, -1, dtype=np.int64)
    level = np.full(S, -1, dtype=np.int64)
    up_port = np.full(S, -1, dtype=np.int64)
    down_port = np.full(S, -1, dtype=np.int64)
    level[root] = 0
    queue = np.array([root], dtype=np.int64)
    k = 0
    sw = fabric.switches
    while len(queue):
        k += 1
        cand = nbr[queue]  # (F, P) in queue order, then port order
        flat = cand.ravel()
        ok = flat >= 0
        ok[ok] = level[flat[ok]] < 0
        hits = np.flatnonzero(ok)
        if not len(hits):
            break
        kids, first = np.unique(flat[hits], return_index=True)
        pos = hits[first]  # flat index of the first (parent, port) reaching each new switch
        order = np.argsort(pos, kind="stable")
        kids, pos = kids[order], pos[order]
        par, port = np.divmod(pos, nbr.shape[1])
        par = queue[par]
        parent[kids] = par
        level[kids] = k
        down_port[kids] = port
        up_port[kids] = fabric.peer_port[sw[par], port]
        queue = kids
    return parent, level, up_port, down_port


def compute(fabric: FabricGraph, options: Mapping[str, Any] | None = None, rng: np.random.Generator | None = None) -> ForwardingTables:
    """Up/Down routing restricted to the channels of a breadth-first spanning tree (Kim et al. 2007).

    Parameters
    ----------
    fabric : FabricGraph
        The fabric, with every LID assigned.
    options : dict of str
        ``root``: the root switch of the spanning tree, as a LID (digits) or
        a node name; default the switch nearest the subnet manager's node
        (``fabric.sm_node``), as for ``updn``.
    rng : numpy.random.Generator
        Unused (the engine is deterministic).

    Returns
    -------
    ForwardingTables
        Linear tables.  ``info``: ``root`` (name), ``root_lid``, ``level``
        and ``parent`` (per switch row, -1 for the root and for switches the
        root does not reach), ``tree_links`` (the (switch node, port) pairs
        of both ends of every tree link, shape (2 * (S - 1), 2) on a
        connected fabric), ``distance`` (S x LIDs route lengths in links,
        -1 where none).

    Raises
    ------
    ConfigError
        For an unknown option or a root that is not a switch.

    Examples
    --------
    The graph of the paper's Fig. 4a -- switches a, b, c, d with links ab,
    ac, bc, bd, cd -- with the spanning tree of Fig. 4b rooted at b: a
    sends everything to b (port 1), the table of Fig. 5b, where shortest
    paths would reach c and d through port 2 (Fig. 5a).

    >>> from ibfabric.components.routing.fabric import FabricGraph, NodeSpec, Link
    >>> g = FabricGraph([NodeSpec(n, True, 3, lid=i) for i, n in enumerate("abcd", 1)],
    ...                 [Link(0, 1, 1, 1), Link(0, 2, 2, 1), Link(1, 2, 2, 2),
    ...                  Link(1, 3, 3, 1), Link(2, 3, 3, 2)])
    >>> t = compute(g, {"root": "b"})
    >>> t.lft[0, 2:].tolist()   # a -> b, c, d
    [1, 1, 1]
    >>> t.info["parent"].tolist()   # a, c, d hang on b
    [1, -1, 1, 1]

    Notes
    -----
    Kim et al. (§3.1) describe Up/Down as in Autonet, but "the original
    Up/Down routing algorithm allows to use channels in a spanning tree
    only, the other channels in the network are forbidden to route
    packets"; their Fig. 5b is such a table.  This engine builds the
    spanning tree by breadth-first search from the root, each switch
    scanning its ports in increasing order (the first port wins between
    parallel links), and routes every destination along the unique tree
    path: up towards the root until the destination's subtree, then down.
    The ``updn`` engine is the Autonet variant, which also routes over the
    links outside the tree (up towards the lower level); its routes are
    never longer than these, since every tree route is a legal up*/down*
    route of the same root.

    Deadlock freedom: a tree route is an up phase followed by a down phase,
    so no channel dependency goes from a down channel to an up channel; up
    channels lead strictly towards the root and down channels away from it,
    so the channel dependency graph is acyclic (``ibfabric routes FILE
    --routing updn-tree --check`` reports it).

    The paper's performance figures use the best of three roots ("We have
    tested the network with three different roots and chose the best case
    results for the Up/Down routing", §5.1).  That is an experiment-level
    sweep over the ``root`` option, not part of the engine.

    Vectorised: the tree is one array step per level; the ancestors of
    every switch at every depth form a (D + 1) x S array, from which the
    (switch, destination switch) next-hop table is a single gather: a
    switch that is an ancestor of the destination takes the down port to
    its child on the way, every other switch its up port.  Cost
    O(D * S * P) for the tree and O(D * S^2) for the tables and route
    lengths (D the depth of the tree).

    References
    ----------
    .. [1] E. J. Kim, K. H. Yum, C. R. Das, M. Yousif, J. Duato, "Exploring
       IBA Design Space for Improved Performance", IEEE TPDS 18(4), 2007,
       §3.1, Figs. 4 and 5, §5.1.
    .. [2] M. D. Schroeder et al., "Autonet: A High-Speed, Self-Configuring
       Local Area Network Using Point-to-Point Links", IEEE JSAC 9(8), 1991.
    """
    opts = parse_options("updn-tree", options, {"root": (None, str)})
    view = SwitchView(fabric)
    root_node = updown_root(fabric, opts["root"])
    root = int(fabric.switch_row[root_node])
    parent, level, up_port, down_port = bfs_tree(fabric, view, root)
    S = view.S
    reach = level >= 0
    depth = int(level.max()) + 1
    # anc[k, a]: the ancestor of switch a at depth k (a itself at its own depth), -1 if none
    anc = np.full((depth + 1, S), -1, dtype=np.int64)
    cur = np.arange(S)
    for k in range(depth - 1, -1, -1):
        on = level >= k  # cur[a] is a's ancestor at depth k for these
        anc[k, on] = cur[on]
        cur[on] = parent[cur[on]]
    rows = np.arange(S)
    lv = np.where(reach, level, depth)  # unreached switches look past the deepest level: no ancestor
    is_anc = anc[lv[:, None], rows[None, :]] == rows[:, None]  # x is an ancestor of a (or a itself)
    child = anc[np.minimum(lv + 1, depth)[:, None], rows[None, :]]  # a's ancestor one level below x
    both = reach[:, None] & reach[None, :]
    down = np.where(child >= 0, down_port[np.maximum(child, 0)], -1)
    to_switch = np.where(both, np.where(is_anc, down, up_port[:, None]), -1)
    lft = expand_switch_ports(view, to_switch)
    # route lengths: depth(x) + depth(a) - 2 depth(lowest common ancestor)
    common = np.zeros((S, S), dtype=np.int64)
    for k in range(depth):
        common += (anc[k][:, None] == anc[k][None, :]) & (anc[k] >= 0)[:, None]
    dist_sw = np.where(both, level[:, None] + level[None, :] - 2 * (common - 1), -1)
    from ibfabric.components.routing.opensm import short_names

    kids = np.flatnonzero(parent >= 0)
    sw = fabric.switches
    tree_links = np.concatenate([np.stack([sw[kids], up_port[kids]], axis=1), np.stack([sw[parent[kids]], down_port[kids]], axis=1)])
    info = {
        "root": short_names(fabric)[root_node],
        "root_lid": fabric.lid_of(root_node),
        "level": level,
        "parent": parent,
        "tree_links": tree_links,
        "distance": _lid_distances(view, dist_sw),
    }
    # work: the spanning-tree search, one ancestor test per pair of reached
    # switches (up to the common ancestor or down), one entry per (switch, LID)
    n = int(np.count_nonzero(reach))
    record_work(info, search_work(reach, (view.nbr >= 0).sum(axis=1)),
                {"checks": n * n, "entries": S * len(view.lids())})
    return ForwardingTables(fabric, lft, engine="updn-tree", info=info)


@hookimpl
def ibfabric_register_routing_engines(register):
    register("updn-tree", compute, description="Kim et al.'s Up/Down: routes on BFS spanning-tree links only (option root=LID|name)")
