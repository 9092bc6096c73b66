"""The ``updn`` routing engine: shortest legal up*/down* routes, balanced like minhop."""

from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from ibfabric.components.routing.fabric import FabricGraph
from ibfabric.components.routing.tables import ForwardingTables
from ibfabric.plugins.manager import hookimpl

from ._common import SwitchView, assign_balanced, new_work, parse_options, record_work, search_work
from ._updown import root_info, updown_for

__all__ = ["compute"]


def compute(fabric: FabricGraph, options: Mapping[str, Any] | None = None, rng: np.random.Generator | None = None) -> ForwardingTables:
    """Up*/down* forwarding tables: shortest legal routes, consistent at every switch.

    Parameters
    ----------
    fabric : FabricGraph
        The fabric, with every LID assigned.
    options : dict of str
        ``root``: the root switch, as a LID (digits), a node name or ``center``; default
        the switch nearest the subnet manager's node (``fabric.sm_node``).
    rng : numpy.random.Generator
        Unused (the engine is deterministic).

    Returns
    -------
    ForwardingTables
        Linear tables.  ``info``: ``root`` (name), ``root_lid``, ``level``
        (per switch), ``distance`` (S x LIDs route lengths in links, -1 where
        none).

    Raises
    ------
    ConfigError
        For an unknown option or a root that is not a switch.

    Examples
    --------
    A ring of four switches rooted at s1: s3 is two hops from s1 either way
    and s2 and s4 are level 1, so every route is legal and shortest.

    >>> from ibfabric.components.routing.fabric import FabricGraph, NodeSpec, Link
    >>> g = FabricGraph([NodeSpec(f"s{i}", True, 2, lid=i) for i in range(1, 5)],
    ...                 [Link(0, 1, 1, 2), Link(1, 1, 2, 2), Link(2, 1, 3, 2), Link(3, 1, 0, 2)])
    >>> t = compute(g, {"root": "s1"})
    >>> t.info["level"].tolist(), int(t.info["distance"][0, 3])
    ([0, 1, 2, 1], 2)

    Notes
    -----
    Levels come from a breadth-first spanning tree from the root.  A
    switch-to-switch link is *up* towards the lower level, and between
    switches of equal level up towards the **lower node GUID** (OpenSM's
    rule).  A legal route never takes an up link after a down link.

    IBA tables ignore the input port, so one entry per (switch, LID) must be
    legal for every packet arriving there (Bermúdez et al. 2006, §2.2,
    Fig. 5).  For each destination switch a breadth-first search runs
    backwards from it, one layer per hop, all switches at once, over two
    states: a switch whose route is *down-only* may be entered through a
    down link, one whose route starts upwards only through an up link.  A
    switch first reached in layer k may use every port that reaches layer
    k-1 legally; if any of those ports is a down port it keeps only the
    down ports (its route is then down-only, so the switches above it can
    still use it).  This is also what guarantees connectivity: the down
    path from the root to the destination along the spanning tree is a
    shortest path, so every switch on it is down-only and every switch
    reaches the root by up links.  Each LID is then assigned, in LID order,
    to the least-loaded allowed port of every switch, as in ``minhop``.

    Deadlock freedom: every route is a suffix of a legal up*/down* route,
    so the channel dependency graph has no dependency from a down channel
    to an up channel; up channels point strictly towards the root in a
    fixed order and down channels away from it, so it is acyclic (the
    tests check the CDG of many random fabrics).

    Cost: O(S * D * S * P) array work for the searches (D the number of
    layers) plus O(L * S * P) for the assignment.

    References
    ----------
    .. [1] M. D. Schroeder et al., "Autonet: A High-Speed, Self-Configuring
       Local Area Network Using Point-to-Point Links", IEEE JSAC 9(8), 1991.
    .. [2] A. Bermúdez, R. Casado, F. J. Quiles, J. Duato, "Fast Routing
       Computation on InfiniBand Networks", IEEE TPDS 17(3), 2006, §2.2,
       Figs. 4 and 5.
    .. [3] E. J. Kim et al., "Exploring IBA Design Space for Improved
       Performance", IEEE TPDS 18(4), 2007, §3.1 (Up/Down routing).
    """
    opts = parse_options("updn", options, {"root": (None, str)})
    view = SwitchView(fabric)
    ud = updown_for(fabric, view, opts["root"])
    S = view.S
    dist_sw = np.full((S, S), -1, dtype=np.int64)
    masks: dict[int, np.ndarray] = {}
    for a in np.unique(view.att_row[view.lids()]):
        allowed, dist, _ = ud.updn_allowed(int(a))
        masks[int(a)] = allowed
        dist_sw[:, a] = dist
    work = new_work()
    lft = assign_balanced(view, masks.__getitem__, work)
    info = dict(root_info(fabric, ud))
    info["distance"] = _lid_distances(view, dist_sw)
    # work: the graph, one two-state search per destination switch, the balanced assignment
    record_work(info, ud.graph_work, search_work(dist_sw >= 0, ud.degree), work)
    return ForwardingTables(fabric, lft, engine="updn", info=info)


def _lid_distances(view: SwitchView, dist_sw: np.ndarray) -> np.ndarray:
    """Per (switch, LID) route length from per (switch, destination switch) lengths (+1 for CA LIDs)."""
    out = np.full((view.S, view.fabric.max_lid + 1), -1, dtype=np.int64)
    lids = view.lids()
    if len(lids):
        col = dist_sw[:, view.att_row[lids]]
        extra = (view.att_port[lids] > 0).astype(np.int64)
        out[:, lids] = np.where(col >= 0, col + extra, -1)
    return out


@hookimpl
def ibfabric_register_routing_engines(register):
    register("updn", compute, description="shortest legal up*/down* routes, balanced like minhop (option root=LID|name)")
