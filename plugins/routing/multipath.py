"""The ``multipath`` routing engine: Kim et al.'s multipath forwarding tables mapped onto LMC ranges.

Kim, Yum, Das, Yousif, Duato, "Exploring IBA Design Space for Improved
Performance", IEEE TPDS 18(4), 2007, §3.2-3.4.  Path bits name paths
through the cycles of the switch graph (:mod:`~ibfabric.plugins.routing.pathbits`);
the tables are the hop-by-hop consistent ones of
:func:`~ibfabric.plugins.routing.pathtables.consistent_tables`, so every
assignment of the path bits is a loop-free route to each destination.

**Layout in the LID range** (``LMC = K + 1`` for ``K`` path bits): of a
destination's ``2^(K+1)`` LIDs, entry ``base`` holds the *default route*
(``base = spf`` or ``updn``: Kim's flag bits, one table serving the
deterministic schemes too), entry ``base + 2P + 1`` the next hop of the
path named by ``P`` (the DLID's low bit is Kim's multipath-enable
indication), and the other even entries the default route again.  Bit
``P_k`` of the paper's pattern (``k`` from 1) is bit ``K - k`` of the
integer ``P``.

**Traffic classes** (§3.4): real-time and control traffic take the default
route (DLID ``base``, with ``base = spf`` the shortest path); a reliable
datagram gets one path chosen at the source (DLID ``base + 2P + 1``, ``P``
uniform: the HCA's ``randomPath``); an unreliable datagram chooses at each
switch (the HCA's ``adaptive`` with ``adaptiveBy = "slid"``: its SLID's low
bit set, Kim's second indication), among the next hops of the paths still
consistent with the hops it took, so its route is always one of the named
paths (:mod:`ibfabric.components.options`, ``optionsWhen = "slid"``).

**More cycles than IBA has bits**: LMC is at most 7, so at most 6 path
bits.  The paper's 15-switch network has 9 cycles.  ``bits`` (default: the
number of cycles, at most 6) keeps the first ``bits`` cycles (in the order
of their back edges) and fixes no bit of the others: the paths the dropped
cycles tell apart are not separately named, so fewer alternatives are
offered; ``info["dropped_cycles"]`` says how many.  Asking for more than 6
is an error.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Mapping

import numpy as np

from ibfabric.components.routing.fabric import FabricGraph
from ibfabric.components.routing.tables import NO_PORT, ForwardingTables
from ibfabric.errors import ConfigError
from ibfabric.plugins.manager import hookimpl

from . import spf, updn
from ._common import SwitchView, choice, parse_options, record_work

if TYPE_CHECKING:
    import networkx as nx

# networkx and the path-table code are imported by the functions that use them: every
# simulation loads this plugin, few route with it (``ibfabric run`` never imports networkx).

__all__ = ["compute", "path_next_hops"]


def _bits(value: Any) -> int:
    from .pathbits import MAX_PATH_BITS

    n = int(value)
    if not 0 <= n <= MAX_PATH_BITS - 1:
        raise ValueError(f"must be 0..{MAX_PATH_BITS - 1}: LMC (at most {MAX_PATH_BITS}) holds the path bits and the"
                         f" multipath-enable bit (got {value!r})")
    return n


def _length(value: Any) -> int:
    n = int(value)
    if n < 1:
        raise ValueError(f"must be a positive number of links (got {value!r})")
    return n


def switch_graph(view: SwitchView) -> nx.Graph:
    """The switch graph: nodes are switch rows, one edge per pair of adjacent switches."""
    import networkx as nx

    G = nx.Graph()
    G.add_nodes_from(range(view.S))
    for s in range(view.S):
        for n in np.unique(view.nbr[s][view.nbr[s] >= 0]).tolist():
            if n != s:
                G.add_edge(s, n)
    return G


def path_next_hops(G: nx.Graph, cycles, max_len: int | None = None, work: dict | None = None) -> np.ndarray:
    """``next[s, t, P]``: the switch after ``s`` on the path named by ``P`` towards ``t`` (``s`` at ``t``)."""
    from .pathbits import matches
    from .pathtables import consistent_tables

    K = len(cycles)
    S = G.number_of_nodes()
    nxt = np.tile(np.arange(S)[:, None, None], (1, S, 1 << K))
    tables = consistent_tables(G, list(cycles), max_len)
    if work is not None:  # the consistent tables' entries, each matched against every pattern
        n = sum(len(entries) for entries in tables.values())
        work["entries"] = work.get("entries", 0) + n
        work["checks"] = work.get("checks", 0) + n * (1 << K)
    for s, entries in tables.items():
        for e in entries:
            for P in range(1 << K):
                pattern = format(P, f"0{K}b") if K else ""
                if matches(e.pattern, pattern):
                    nxt[s, e.destination, P] = e.next_hop
    return nxt


def compute(fabric: FabricGraph, options: Mapping[str, Any] | None = None,
            rng: np.random.Generator | None = None) -> ForwardingTables:
    """Multipath tables (Kim et al. 2007): default route in entry ``base``, named paths at ``base + 2P + 1``.

    Parameters
    ----------
    fabric : FabricGraph
        With LIDs assigned; CA ports need ``LMC >= bits + 1``.
    options : dict of str
        ``base``: the default routing, ``spf`` (default) or ``updn``;
        ``root``: the BFS root of the cycle search and of ``updn`` (a LID or
        switch name; default the lowest switch); ``bits``: path bits (default
        the number of cycles, at most 6; fewer keeps the first cycles);
        ``maxlen``: longest path, in links, that claims path names.
    rng : numpy.random.Generator
        Passed to the base engine.

    Returns
    -------
    ForwardingTables
        ``info``: ``cycles`` (as switch names), ``bits``, ``cycles_found``,
        ``dropped_cycles``, ``base``, ``layout`` ("kim2007").

    Raises
    ------
    ConfigError
        If a CA port's LID range cannot hold the paths, or for bad options.

    Examples
    --------
    The paper's Fig. 4 graph (switches a, b, c, d; links ab, ac, bc, bd, cd;
    a host on each): two cycles, two path bits, LMC 3.

    >>> from ibfabric.components.routing.fabric import FabricGraph, NodeSpec, Link
    >>> sw = [NodeSpec(x, True, 4, lid=i + 1) for i, x in enumerate("abcd")]
    >>> hosts = [NodeSpec(f"h{x}", False, 1, lid=8 * (i + 1), lmc=3) for i, x in enumerate("abcd")]
    >>> links = [Link(0, 1, 1, 1), Link(0, 2, 2, 1), Link(1, 2, 2, 2), Link(1, 3, 3, 1), Link(2, 3, 3, 2)]
    >>> links += [Link(i, 4, 4 + i, 1) for i in range(4)]
    >>> t = compute(FabricGraph(sw + hosts, links), {"root": "b"})
    >>> t.info["cycles"], t.info["bits"]
    ([['a', 'c', 'b', 'a'], ['c', 'd', 'b', 'c']], 2)
    >>> [int(t.lft[0, 16 + 2 * P + 1]) for P in range(4)]  # a towards hb: paths 0X (ab), 10 (acb), 11 (acdb)
    [1, 1, 2, 2]

    References
    ----------
    .. [1] E. J. Kim, K. H. Yum, C. R. Das, M. Yousif, J. Duato, "Exploring
       IBA Design Space for Improved Performance", IEEE TPDS 18(4), 2007.
    """
    opts = parse_options("multipath", options, {"base": ("spf", choice("spf", "updn")), "root": (None, str),
                                                "bits": (None, _bits), "maxlen": (None, _length)})
    from .pathbits import MAX_PATH_BITS, find_cycles

    view = SwitchView(fabric)
    G = switch_graph(view)
    root = None
    if opts["root"] is not None:
        from ._common import resolve_switch

        root = int(fabric.switch_row[resolve_switch(fabric, opts["root"])])
    cycles = find_cycles(G, root=root) if G.number_of_edges() else []
    found = len(cycles)
    K = min(found, MAX_PATH_BITS - 1) if opts["bits"] is None else min(opts["bits"], found)
    cycles = cycles[:K]
    base_opts = {"root": opts["root"]} if (opts["base"] == "updn" and opts["root"] is not None) else {}
    default = (spf if opts["base"] == "spf" else updn).compute(fabric, base_opts, rng)
    lft = default.lft.copy()
    work = {"visits": view.S, "relaxations": 2 * G.number_of_edges()}  # the cycle search (a DFS)
    nxt = path_next_hops(G, cycles, opts["maxlen"], work)
    size = 1 << (K + 1)
    # the lowest port of each switch towards each neighbour switch
    port_to = np.full((view.S, view.S), NO_PORT, dtype=np.int64)
    for s in range(view.S):
        for p in range(view.P - 1, 0, -1):
            n = int(view.nbr[s, p])
            if n >= 0:
                port_to[s, n] = p
    for e in range(len(fabric.ep_node)):
        if fabric.is_switch[int(fabric.ep_node[e])]:
            continue
        base = int(fabric.ep_lid[e])
        t = int(view.ep_row[e])
        if t < 0 or base <= 0:
            continue
        if (1 << int(fabric.ep_lmc[e])) < size:
            raise ConfigError(f"routing engine 'multipath': {fabric.endpoint_name(e)} has LMC {int(fabric.ep_lmc[e])}"
                              f" but {K} path bits need LMC >= {K + 1} (set the subnet manager's 'lmc', or the"
                              f" 'bits' option)")
        lft[:, base:base + size] = lft[:, [base]]  # the default route in every entry, then the named paths
        work["entries"] += view.S * size
        hops = nxt[:, t, :]  # (S, 2^K)
        ports = np.where(hops == np.arange(view.S)[:, None], int(view.att_port[base]),
                         port_to[np.arange(view.S)[:, None], hops])
        lft[:, base + 1:base + size:2] = ports.astype(np.uint8)
    names = [fabric.nodes[int(fabric.switches[r])].name.split(".")[-1] for r in range(view.S)]
    info = dict(default.info)
    info.update({"cycles": [[names[v] for v in c] for c in cycles], "bits": K, "cycles_found": found,
                 "dropped_cycles": found - K, "base": opts["base"], "layout": "kim2007"})
    record_work(info, default.info["work"], work)  # plus the default route's engine
    return ForwardingTables(fabric, lft, engine="multipath", info=info)


@hookimpl
def ibfabric_register_routing_engines(register):
    register("multipath", compute,
             description="Kim et al.'s multipath tables in LMC ranges (base=spf|updn, bits=, root=, maxlen=)")
