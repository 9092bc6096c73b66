"""The ``dnup`` routing engine: up*/down* ranked from the channel adapters, as OpenSM's dnup."""

from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from ibfabric.components.routing.fabric import FabricGraph
from ibfabric.components.routing.tables import ForwardingTables
from ibfabric.errors import ConfigError
from ibfabric.plugins.manager import hookimpl

from ._common import SwitchView, assign_balanced, new_work, parse_options, record_work, search_work
from ._updown import UpDown
from .updn import _lid_distances

__all__ = ["compute", "ca_ranks"]


def ca_ranks(view: SwitchView) -> np.ndarray:
    """OpenSM dnup's rank of every switch: 0 with a channel adapter attached, else 1 + the least neighbour rank.

    -1 for switches that reach no switch with a channel adapter.
    """
    g = view.fabric
    S = view.S
    ca = ~g.is_switch[g.ep_node] & (view.ep_row >= 0)
    rank = np.full(S, -1, dtype=np.int64)
    frontier = np.zeros(S, dtype=bool)
    frontier[view.ep_row[ca]] = True
    rank[frontier] = 0
    nbv = view.nbr >= 0
    nbc = np.where(nbv, view.nbr, 0)
    k = 0
    while frontier.any():
        k += 1
        new = (nbv & frontier[nbc]).any(axis=1) & (rank < 0)
        rank[new] = k
        frontier = new
    return rank


def compute(fabric: FabricGraph, options: Mapping[str, Any] | None = None, rng: np.random.Generator | None = None) -> ForwardingTables:
    """Down*/up* tables: updn with switches ranked by their distance from the channel adapters.

    Parameters
    ----------
    fabric : FabricGraph
        The fabric, with every LID assigned.
    options : dict of str
        None are accepted.
    rng : numpy.random.Generator
        Unused (the engine is deterministic).

    Returns
    -------
    ForwardingTables
        Linear tables.  ``info``: ``rank`` (per switch, 0 = a CA attached),
        ``distance`` (S x LIDs route lengths in links, -1 where none).

    Raises
    ------
    ConfigError
        For an option, a fabric without channel adapters on switches, or
        two switches with adapters that no legal route joins.  (Switch LIDs
        without a legal route, such as one top switch of a fat-tree seen
        from another, get no entry, as in OpenSM.)

    Examples
    --------
    A leaf with hosts and an uplink to a spine that also has a host:
    ``updn`` rooted at the spine would rank the spine above the leaf all
    the same; ``dnup`` ranks both 0 and orders the link by GUID.

    >>> from ibfabric.components.routing.fabric import FabricGraph, NodeSpec, Link
    >>> g = FabricGraph([NodeSpec("leaf", True, 3, lid=1, guid=2), NodeSpec("spine", True, 2, lid=2, guid=1),
    ...                  NodeSpec("a", False, 1, lid=3), NodeSpec("b", False, 1, lid=4)],
    ...                 [Link(0, 3, 1, 1), Link(2, 1, 0, 1), Link(3, 1, 1, 2)])
    >>> t = compute(g, {})
    >>> t.info["rank"].tolist(), t.port(0, 4), t.port(1, 3)
    ([0, 0], 3, 1)

    Notes
    -----
    OpenSM's DNUP ranks every switch with a channel adapter 0 and every
    other switch one more than its least-ranked neighbour, so the switches
    farthest from the adapters are the top.  A link is *up* towards the
    higher rank and, between equal ranks, towards the lower node GUID; a
    legal route never goes up after going down.  (OpenSM leaves links
    between equal ranks unordered, which can close a cycle of channel
    dependencies; ordering them by GUID, as ``updn`` does, keeps the
    up-links acyclic, so the routes are deadlock-free.)  The routes are then
    those of ``updn``: the shortest legal routes, consistent at every
    switch, balanced LID by LID over the allowed ports.  Fabrics whose
    adapters hang at several levels, which defeat ``updn`` from a root,
    are what it is for; on others some pairs may have no legal route, and
    the engine says which.

    References
    ----------
    .. [1] OpenSM, ``osm_ucast_dnup.c`` and ``doc/current-routing.txt``
       (DNUP Routing Algorithm).
    .. [2] M. D. Schroeder et al., "Autonet: A High-Speed, Self-Configuring
       Local Area Network Using Point-to-Point Links", IEEE JSAC 9(8), 1991.
    """
    parse_options("dnup", options, {})
    view = SwitchView(fabric)
    rank = ca_ranks(view)
    if not (rank == 0).any():
        raise ConfigError("routing engine 'dnup': no channel adapter hangs on a switch, so no switch has rank 0")
    top = int(rank.max())
    level = np.where(rank >= 0, top - rank, -1)
    ud = UpDown(view, int(np.argmax(rank)), level=level)
    S = view.S
    dist_sw = np.full((S, S), -1, dtype=np.int64)
    masks: dict[int, np.ndarray] = {}
    targets = np.unique(view.att_row[view.lids()])
    for a in targets:
        allowed, dist, _ = ud.updn_allowed(int(a))
        masks[int(a)] = allowed
        dist_sw[:, a] = dist
    leaves = np.flatnonzero(rank == 0)
    miss = np.argwhere(dist_sw[np.ix_(leaves, leaves)] < 0)
    if len(miss):
        from ibfabric.components.routing.opensm import short_names

        names = short_names(fabric)
        x, a = int(leaves[miss[0][0]]), int(leaves[miss[0][1]])
        raise ConfigError(f"routing engine 'dnup': no legal down*/up* route from {names[fabric.switches[x]]} to "
                          f"{names[fabric.switches[a]]} (ranked from the adapters, the fabric has several tops "
                          "that only a down-then-up turn joins); use updn or dfsssp")
    work = new_work()
    lft = assign_balanced(view, masks.__getitem__, work)
    info = {"rank": rank, "distance": _lid_distances(view, dist_sw)}
    # work: the ranking search from the adapters, the graph, one search per destination switch, the assignment
    record_work(info, search_work(rank >= 0, ud.degree), ud.graph_work, search_work(dist_sw >= 0, ud.degree), work)
    return ForwardingTables(fabric, lft, engine="dnup", info=info)


@hookimpl
def ibfabric_register_routing_engines(register):
    register("dnup", compute, description="up*/down* ranked from the channel adapters, like OpenSM dnup")
