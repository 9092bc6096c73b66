"""The ``fera`` routing engine: Fully Explicit Routing (Bermúdez et al. 2006, §2.3)."""

from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from ibfabric.components.routing.fabric import FabricGraph
from ibfabric.components.routing.tables import NO_PORT, ForwardingTables
from ibfabric.plugins.manager import hookimpl

from ._common import SwitchView, expand_switch_ports, parse_options, record_work, search_work
from ._updown import UpDown, root_info, updown_for
from .updn import _lid_distances

__all__ = ["compute", "fera_tables"]


def fera_tables(fabric: FabricGraph, view: SwitchView, ud: UpDown) -> ForwardingTables:
    """FERa tables on an existing up*/down* graph (used by ``dr`` and ``hybrid`` too)."""
    S = view.S
    port_sw = np.full((S, S), -1, dtype=np.int64)
    dist_sw = np.full((S, S), -1, dtype=np.int64)
    for a in range(S):
        port, dist = ud.fera(a)
        port_sw[:, a] = port
        dist_sw[:, a] = dist
    lft = expand_switch_ports(view, port_sw)
    info = dict(root_info(fabric, ud))
    info["distance"] = _lid_distances(view, dist_sw)
    # work: one search per destination switch (its down-only and up phases
    # reach each switch once), then one explicit entry per (switch, LID)
    record_work(info, ud.graph_work, search_work(dist_sw >= 0, ud.degree),
                {"entries": np.count_nonzero(lft != NO_PORT)})
    return ForwardingTables(fabric, lft, engine="fera", info=info)


def compute(fabric: FabricGraph, options: Mapping[str, Any] | None = None, rng: np.random.Generator | None = None) -> ForwardingTables:
    """Fully Explicit Routing: one explicit up*/down* entry per (switch, LID).

    Parameters
    ----------
    fabric : FabricGraph
        The fabric, with every LID assigned.
    options : dict of str
        ``root``: root switch of the up*/down* graph, as a LID or a node
        name; default the switch nearest the subnet manager.
    rng : numpy.random.Generator
        Unused (the engine is deterministic).

    Returns
    -------
    ForwardingTables
        Linear tables with every entry explicit.  ``info["distance"]`` is
        the (S x LIDs) route length of each entry (the bracketed numbers of
        the paper's Fig. 6), ``info["root"]``/``["root_lid"]``/``["level"]``
        describe the up*/down* graph, ``info["work"]``/``["work_total"]``
        count its operations (docs/routing.md, "Computation time").

    Raises
    ------
    ConfigError
        For an unknown option or a root that is not a switch.

    Examples
    --------
    The situation of the paper's Fig. 5: root r with four children whose
    GUIDs grow along the chain b-c-e-d, so b reaches d down the chain
    (3 hops) although the up route through r is shorter (2 hops).  FERa
    takes the down route; ``updn`` takes the shortest legal one.

    >>> from ibfabric.components.routing.fabric import FabricGraph, NodeSpec, Link
    >>> g = FabricGraph(
    ...     [NodeSpec("r", True, 4, lid=1, guid=1)]
    ...     + [NodeSpec(n, True, 3, lid=i, guid=i) for i, n in [(2, "b"), (3, "c"), (4, "e"), (5, "d")]],
    ...     [Link(0, 1, 1, 1), Link(0, 2, 2, 1), Link(0, 3, 3, 1), Link(0, 4, 4, 1),
    ...      Link(1, 2, 2, 2), Link(2, 3, 3, 2), Link(3, 3, 4, 2)])
    >>> t = compute(g, {"root": "r"})
    >>> t.port(1, 5), int(t.info["distance"][1, 5])   # b -> d: down port 2, 3 hops
    (2, 3)
    >>> from ibfabric.plugins.routing import updn
    >>> u = updn.compute(g, {"root": "r"})
    >>> u.port(1, 5), int(u.info["distance"][1, 5])   # updn: up through r, 2 hops
    (1, 2)

    Notes
    -----
    For every destination the paper floods the up*/down* graph from the
    destination, never allowing a forbidden down-up transition, and keeps
    the shortest route found at every switch.  Its rule for consistency
    without input ports: *if a switch has any output port in the down
    direction for a destination, it ignores all options that use an up
    link, even if they are shorter* (§2.3, the n2 of Fig. 5 uses port 3).
    Here each flood is two breadth-first searches over all switches at
    once: first backwards over down links only (every switch with a
    down-only route, at its shortest down-only distance), then the
    remaining switches layer by layer through up links to the nearest
    routed switch.  Ties go to the lowest port.  Routes to a channel
    adapter are the routes to its switch plus the last link.  Every route
    is legal, so the tables are deadlock-free.  The paper's Dijkstra-based
    FERa is O(n^3) over all destinations; this is O(S * D * S * P) array
    work.

    References
    ----------
    .. [1] A. Bermúdez, R. Casado, F. J. Quiles, J. Duato, "Fast Routing
       Computation on InfiniBand Networks", IEEE TPDS 17(3), 2006, §2.3
       and Fig. 6.
    .. [2] A. Bermúdez, R. Casado, F. J. Quiles, T. M. Pinkston, J. Duato,
       "Evaluation of a Subnet Management Mechanism for InfiniBand
       Networks", Proc. ICPP 2003.
    """
    opts = parse_options("fera", options, {"root": (None, str)})
    view = SwitchView(fabric)
    ud = updown_for(fabric, view, opts["root"])
    return fera_tables(fabric, view, ud)


@hookimpl
def ibfabric_register_routing_engines(register):
    register("fera", compute, description="Fully Explicit Routing on up*/down* (Bermúdez et al. 2006, §2.3)")
