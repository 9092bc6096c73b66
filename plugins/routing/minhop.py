"""The ``minhop`` routing engine: minimum-hop tables balanced as OpenSM's minhop."""

from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from ibfabric.components.routing.fabric import FabricGraph
from ibfabric.components.routing.tables import ForwardingTables
from ibfabric.plugins.manager import hookimpl

from ._common import SwitchView, assign_balanced, new_work, parse_options, record_work, search_work

__all__ = ["compute"]


def compute(fabric: FabricGraph, options: Mapping[str, Any] | None = None, rng: np.random.Generator | None = None) -> ForwardingTables:
    """Minimum-hop forwarding tables, balanced over equal-hop ports.

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
        Linear tables: every LID has an entry on every switch that reaches
        it; a switch's own LIDs map to port 0.  ``info["hops"]`` holds the
        switch-to-switch hop matrix.

    Raises
    ------
    ConfigError
        For any option, or a fabric with unassigned LIDs.

    Examples
    --------
    Two switches joined by two parallel links, one host on each:

    >>> from ibfabric.components.routing.fabric import FabricGraph, NodeSpec, Link
    >>> g = FabricGraph(
    ...     [NodeSpec("s1", True, 4, lid=1), NodeSpec("s2", True, 4, lid=2),
    ...      NodeSpec("a", False, 1, lid=3, lmc=1), NodeSpec("b", False, 1, lid=5)],
    ...     [Link(0, 1, 1, 1), Link(0, 2, 1, 2), Link(2, 1, 0, 3), Link(3, 1, 1, 3)])
    >>> t = compute(g, {})
    >>> t.lft[0].tolist()   # s1: LID 0 unused, itself, s2, a's LIDs 3 and 4, b
    [255, 0, 1, 3, 3, 2]
    >>> t.port(1, 3), t.port(1, 4)   # s2 spreads a's two LIDs over both links
    (2, 1)

    Notes
    -----
    Hop counts between all switches come from a breadth-first search run
    from every switch at once (one boolean matrix product per level,
    :meth:`FabricGraph.switch_hops`).  The ports of switch x that lead to a
    neighbour one hop nearer the destination switch are the candidates.
    LIDs are then processed in increasing order; for each LID, every switch
    at once (a numpy ``argmin`` over an S x P array) takes the candidate port
    that already carries the fewest LIDs, ties to the lowest port, and
    avoids ports already used by another LID of the same endpoint so that
    an LMC range spreads over parallel paths -- OpenSM's minhop balancing
    (``osm_switch_recommend_path``).  Cost: O(D * S^2) for the hop matrix
    (D the diameter) plus O(L * S * P) array work for L LIDs.

    References
    ----------
    .. [1] OpenSM, ``osm_ucast_mgr.c`` and ``osm_switch.c`` (minhop engine).
    .. [2] E. J. Kim, K. H. Yum, C. R. Das, M. Yousif, J. Duato, "Exploring
       IBA Design Space for Improved Performance", IEEE TPDS 18(4), 2007,
       §3.1 (shortest-path routing).
    """
    parse_options("minhop", options, {})
    view = SwitchView(fabric)
    hops = fabric.switch_hops()
    nbr = view.nbr
    nbv = nbr >= 0
    nbc = np.where(nbv, nbr, 0)

    def allowed(a: int) -> np.ndarray:
        h = hops[:, a]
        return nbv & (h[nbc] == (h - 1)[:, None]) & (h[nbc] >= 0)

    work = new_work()
    lft = assign_balanced(view, allowed, work)
    # work: the all-pairs hop matrix (one breadth-first search per switch), the balanced assignment
    info = record_work({"hops": hops}, search_work(hops >= 0, nbv.sum(axis=1)), work)
    return ForwardingTables(fabric, lft, engine="minhop", info=info)


@hookimpl
def ibfabric_register_routing_engines(register):
    register("minhop", compute, description="minimum-hop tables balanced over equal-hop ports, like OpenSM minhop")
