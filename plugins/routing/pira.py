"""The ``pira`` routing engine: Partially Implicit Routing (Bermúdez et al. 2006, §3.2)."""

from __future__ import annotations

import heapq
from typing import Any, Mapping

import numpy as np

from ibfabric.components.routing.fabric import FabricGraph
from ibfabric.components.routing.opensm import short_names
from ibfabric.components.routing.routecheck import endpoint_label
from ibfabric.components.routing.tables import NO_PORT, ForwardingTables
from ibfabric.errors import ConfigError
from ibfabric.plugins.manager import hookimpl

from ._common import SwitchView, choice, parse_options, record_work
from ._updown import UpDown, root_info, updown_for

__all__ = ["compute", "pira_tables"]

FATHERS = ("random", "lowest-port", "highest-port")


def _fathers_option(value: Any) -> dict[int, int]:
    """``{lid: lid}`` from a mapping or from ``'6:3,10:6'``."""
    if isinstance(value, Mapping):
        return {int(k): int(v) for k, v in value.items()}
    out = {}
    for item in str(value).replace(";", ",").split(","):
        if item.strip():
            k, sep, v = item.partition(":")
            if not sep:
                raise ValueError(f"expected LID:LID pairs such as '6:3,10:6' (got {item.strip()!r})")
            out[int(k)] = int(v)
    return out


def pira_tables(
    fabric: FabricGraph,
    view: SwitchView,
    ud: UpDown,
    rng: np.random.Generator,
    father: str = "random",
    fathers: Mapping[int, int] | None = None,
) -> ForwardingTables:
    """PIRa tables on an existing up*/down* graph (used by ``hybrid`` too)."""
    S = view.S
    eps = np.flatnonzero(view.ep_row >= 0)
    ca_eps = eps[~fabric.is_switch[fabric.ep_node[eps]]]
    # graph nodes: switch rows 0..S-1, then one node per reachable CA endpoint
    n = S + len(ca_eps)
    node_ep = np.concatenate([np.arange(S), ca_eps])  # endpoint of each graph node: switch row r is endpoint r
    lid = fabric.ep_lid[node_ep]
    reach = np.concatenate([ud.level >= 0, ud.level[view.ep_row[ca_eps]] >= 0])
    # PREV(x) as (neighbour, port of x towards it; for a CA the switch's port towards the CA),
    # KIDS(y) = the nodes whose PREV holds y
    prev: list[list[tuple[int, int]]] = [[] for _ in range(n)]
    kids: list[list[int]] = [[] for _ in range(n)]
    up_r, up_p = np.nonzero(ud.up)  # ports in increasing order: the first link to a neighbour is its lowest
    for r, p in zip(up_r.tolist(), up_p.tolist()):
        y = int(ud.nbr[r, p])
        if all(node != y for node, _ in prev[r]):
            prev[r].append((y, p))
            kids[y].append(r)
    for k, e in enumerate(ca_eps.tolist()):
        x = S + k
        prev[x].append((int(view.ep_row[e]), int(view.ep_att_port[e])))
        kids[int(view.ep_row[e])].append(x)
    node_of_lid = {int(lid[i]): i for i in range(n)}
    chosen = {}
    for k, v in (fathers or {}).items():
        if k not in node_of_lid or v not in node_of_lid:
            raise ConfigError(f"routing engine 'pira': fathers: LID {k if k not in node_of_lid else v} is not a switch or routed CA")
        chosen[node_of_lid[k]] = node_of_lid[v]
    shorts = short_names(fabric)

    def name(x: int) -> str:
        return endpoint_label(fabric, int(node_ep[x]), shorts)

    ft = np.full((n, S), -1, dtype=np.int64)  # ft[x, r]: port switch r uses to reach node x
    default = np.full(S, -1, dtype=np.int64)
    fathers_out: dict[str, str] = {}
    order: list[int] = []
    pending = np.array([len(prev[x]) for x in range(n)])
    root = ud.root
    heap = [(int(lid[root]), root)]
    explored = np.zeros(n, dtype=bool)
    # work in the paper's terms (§3.2): a step explores one node (a visit),
    # examines its PREV and KIDS sets (relaxations) and interacts with every
    # switch explored before it (one table entry each: n(n-1)/2 in all)
    relax = interactions = switches_done = 0
    while heap:
        _, x = heapq.heappop(heap)
        order.append(x)
        explored[x] = True
        interactions += switches_done + (x < S)
        switches_done += x < S
        relax += len(prev[x]) + len(kids[x])
        if x != root:
            cands = prev[x]
            if x in chosen:
                f = chosen[x]
                if all(f != y for y, _ in cands):
                    raise ConfigError(f"routing engine 'pira': fathers: {name(f)} is not an up-neighbour of {name(x)}")
            elif father == "random" and len(cands) > 1:
                f = cands[int(rng.integers(len(cands)))][0]
            else:
                f = (min if father != "highest-port" else max)(cands, key=lambda c: c[1])[0]
            fathers_out[name(x)] = name(f)
            ft[x] = ft[f]  # everyone explored reaches x as it reaches the father
            for y, p in cands:
                # the explored neighbour reaches x through its port to x ...
                ft[x, y] = view.lowest_port_to(y, x) if x < S else p
                # ... and x reaches every explored neighbour but its father explicitly
                if x < S and y != f:
                    ft[y, x] = p
            if x < S:
                default[x] = next(p for y, p in cands if y == f)
        if x < S:
            ft[x, x] = 0
        for z in kids[x]:
            pending[z] -= 1
            if pending[z] == 0 and reach[z]:
                heapq.heappush(heap, (int(lid[z]), z))
    lft = np.full((S, fabric.max_lid + 1), NO_PORT, dtype=np.uint8)
    for x in np.flatnonzero(explored):
        e = int(node_ep[x])
        lo = int(fabric.ep_lid[e])
        col = ft[x]
        keep = (col >= 0) & (col != default)
        vals = np.where(keep, col, NO_PORT).astype(np.uint8)
        lft[:, lo : lo + (1 << int(fabric.ep_lmc[e]))] = vals[:, None]
    info = dict(root_info(fabric, ud))
    info["fathers"] = fathers_out
    info["order"] = [name(x) for x in order]
    record_work(info, ud.graph_work, {"visits": len(order), "relaxations": relax, "entries": interactions})
    return ForwardingTables(fabric, lft, default, engine="pira", info=info)


def compute(fabric: FabricGraph, options: Mapping[str, Any] | None = None, rng: np.random.Generator | None = None) -> ForwardingTables:
    """Partially Implicit Routing: up segments by default ports, down segments by explicit entries.

    Parameters
    ----------
    fabric : FabricGraph
        The fabric, with every LID assigned.
    options : dict
        ``root``: root switch of the up*/down* graph (LID or node name;
        default the switch nearest the subnet manager).  ``father``: how a
        node's father is chosen among its already-explored up-neighbours:
        ``random`` (default, from *rng*, i.e. the run's seed),
        ``lowest-port`` or ``highest-port``.  ``fathers``: explicit choices
        overriding ``father``, as ``'6:3,10:6'`` (node LID: father LID) or,
        from Python, a ``{lid: lid}`` mapping.
    rng : numpy.random.Generator
        Used by ``father=random``.

    Returns
    -------
    ForwardingTables
        Random forwarding tables (RFT): ``default_port`` is each switch's
        port to its father (-1 on the root), ``lft`` holds only the explicit
        entries.  ``info["fathers"]`` maps node names to their fathers,
        ``info["order"]`` is the exploration order, ``info["work"]`` and
        ``["work_total"]`` count its operations in the paper's terms (one
        entry per interaction; docs/routing.md, "Computation time").

    Raises
    ------
    ConfigError
        For an unknown option or value, a root that is not a switch, or a
        ``fathers`` entry that is not an up-neighbour.

    Examples
    --------
    A triangle of switches under root r: a and b are level 1, and the a-b
    link is up towards the lower GUID, so b's PREV set is {r, a}.

    >>> from ibfabric.components.routing.fabric import FabricGraph, NodeSpec, Link
    >>> g = FabricGraph([NodeSpec("r", True, 2, lid=1, guid=1), NodeSpec("a", True, 2, lid=2, guid=2),
    ...                  NodeSpec("b", True, 2, lid=3, guid=3)],
    ...                 [Link(0, 1, 1, 1), Link(0, 2, 2, 1), Link(1, 2, 2, 2)])
    >>> t = compute(g, {"root": "r", "father": "lowest-port"})
    >>> t.default_port.tolist(), t.info["fathers"]
    ([-1, 1, 1], {'a': 'r', 'b': 'r'})
    >>> int(t.explicit_entries().sum())   # r: 3 entries; a: itself, b; b: itself, a
    7

    Notes
    -----
    The up*/down* graph is explored from its sink (the root).  Each step
    takes the unexplored node of lowest LID whose up-neighbours (its PREV
    set) are all explored, chooses one of them as its father and makes the
    port to it the node's default port; the node gets an explicit entry for
    each other PREV neighbour; those neighbours get an entry towards it;
    every other explored switch reaches it as it reaches the father (the
    father's column of the table is copied, which also copies "use the
    default port").  Entries equal to a switch's default port are never
    stored.  One step is one column copy over all switches, so PIRa is
    O(n) array operations, O(n^2) work: the paper's complexity (§3.2).
    Routes climb by default ports and descend by explicit entries, so
    they are up*/down* routes and deadlock-free (Lemma 3).  With the fathers
    of the paper's Fig. 8 (``father=highest-port`` on Fig. 1) the subnet of
    Fig. 1 needs 7 default ports and 50 explicit entries.

    References
    ----------
    .. [1] A. Bermúdez, R. Casado, F. J. Quiles, J. Duato, "Fast Routing
       Computation on InfiniBand Networks", IEEE TPDS 17(3), 2006, §3.2,
       §3.3 and Figs. 8-9.
    .. [2] A. Bermúdez, R. Casado, F. J. Quiles, J. Duato, "Use of
       Provisional Routes to Speed-Up Change Assimilation in InfiniBand
       Networks", Proc. CAC 2004.
    """
    opts = parse_options(
        "pira",
        options,
        {"root": (None, str), "father": ("random", choice(*FATHERS)), "fathers": ({}, _fathers_option)},
    )
    view = SwitchView(fabric)
    ud = updown_for(fabric, view, opts["root"])
    rng = rng if rng is not None else np.random.default_rng(0)
    return pira_tables(fabric, view, ud, rng, opts["father"], opts["fathers"])


@hookimpl
def ibfabric_register_routing_engines(register):
    register("pira", compute, description="Partially Implicit Routing with default ports (Bermúdez et al. 2006, §3.2)")
