"""Hop-by-hop forwarding with path bits (Kim et al. 2007, §3.2-3.3).

The names come from :mod:`ibfabric.plugins.routing.pathbits`: the path bits
of Algorithm 3 and the multipath tables of §3.3, with its notation (a packet
carries a full assignment ``P``, patterns are strings over ``{'1', '0',
'X'}``, ``P_1`` first).  This module forwards packets by them, one table
lookup per switch: :func:`consistent_tables` builds tables that are
consistent hop by hop, :func:`walk` follows one packet through tables and
:func:`check_tables` tries every lookup.

Hop-by-hop consistency
----------------------
The paper builds a switch's table from the paths *that start at it* and
never says what a downstream switch does with a packet named by the source.
Looked up hop by hop, the tables of :func:`multipath_table` are not
consistent, for four reasons:

1. *Overlapping names.*  Distinct paths can have overlapping path bits.  In
   the paper's own Fig. 4 (cycles C1 = acba, C2 = cdbc) switch c reaches b
   by cb (``10``), cab (``0X``) and cdb (``X1``): a packet with ``P = 01``
   matches both cab and cdb, so c cannot choose (the paper only shows the
   table of a, which happens to be consistent).
2. *Names depend on the source.*  The union of Definition 2 cancels members
   against earlier ones, so the bits of a suffix are not those of the whole
   path, and a downstream switch may send the packet elsewhere.  Graph
   ``0-1 0-2 0-4 1-5 2-3 2-5 3-4 4-5`` (cycles (2,5,1,0,2), (4,3,2,0,4),
   (4,5,1,0,4)): switch 1 names path 1-5-4-0-2 ``X00`` and sends ``P = 000``
   to 5, but switch 5's only entry for 2 matching ``000`` is the link 5-2.
3. *Gaps.*  Some assignments match no path at all (``no route``).
4. *Loops.*  In ``0-1 0-6 1-3 1-4 1-8 2-5 2-6 2-8 3-4 3-7 3-8 4-5 4-7 5-7``
   a packet from 0 to 4 with ``P = 000011`` goes 0-6-2-8-2: 2 matches its
   path 2-8-3-7-5-4 (``X00XX1``), 8 its path 8-2-6-0-1-4 (``0XXXXX``).

Of all (source, destination, assignment) lookups, 34 % end ambiguous and
15 % find no entry on random 3-regular graphs of 8 switches; on
``random_regular_graph(3, 16, seed=1)`` (9 cycles) 47 %, 16 % and 0.3 %
loop.  Of the (path, matching assignment) pairs of the 8-switch graphs only
37 % are forwarded along the named path (at most 73 % could be: there are
more pairs than lookups).

**The rule.**  :func:`consistent_tables` keeps the paper's names and makes
lookups consistent by *claiming*: for each destination ``t`` and each full
assignment ``P``, every switch gets at most one next hop.  The simple paths
of all sources towards ``t`` are taken shortest first (ties: the
lexicographically smaller vertex sequence), and a path claims ``P`` when its
bits match ``P`` and every switch on it either has no next hop for ``P`` yet
or already has the path's own next hop; then all its switches get its next
hops.  So each switch's entries come from the suffixes of the paths that
pass through it, and two paths that part at a switch never share an
assignment.  Switches left without a next hop for some ``P`` (gaps, or
paths that lost every assignment) take the neighbour one hop closer to
``t`` (smallest first): its route for ``P`` is already fixed and cannot pass
through them.  For every ``(t, P)`` the next hops then form a tree towards
``t``: every lookup is unambiguous, every packet arrives along a simple
path, and a packet whose path claimed ``P`` follows exactly that path.  The
cost: a path loses the assignments that a shorter (or lexicographically
smaller) path crossing it already took (62 % of the pairs above are
followed exactly; in Fig. 4, 48 of 50 against the paper's 46), and tables
grow (2,725 entries instead of 1,845 for ``kim2007(15, 9, seed=2007)``).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from typing import NamedTuple

import networkx as nx
import numpy as np
from networkx.utils import not_implemented_for

from .pathbits import Entry, _cube, _cycles_or_default, _edge_masks, _merge, _named_paths, _pattern, _rank, matches

__all__ = [
    "Walk",
    "consistent_tables",
    "walk",
    "check_tables",
]

#: :func:`consistent_tables` enumerates all 2**C assignments; refuse beyond this.
_MAX_ENUMERATED = 20


class Walk(NamedTuple):
    """Result of :func:`walk`.

    ``outcome`` is ``'delivered'``, ``'ambiguous'`` (several next hops match;
    ``choices`` holds them), ``'no route'`` (none matches) or ``'loop'`` (the
    last vertex of ``path`` was visited before).
    """

    path: tuple
    outcome: str
    choices: tuple = ()


# ---------------------------------------------------------------- consistent tables


def _split(f: np.ndarray, C: int) -> list[tuple[int, int, int]]:
    """Cover ``P -> f[P]`` by cubes ``(value, mask, val)`` fixing ``P_1 .. P_k`` (Shannon expansion)."""
    out, parent = [], np.zeros(1, dtype=bool)
    for k in range(C + 1):
        g = f.reshape(-1, 1 << k)  # column = the k low bits, row = the others
        uniform = (g == g[0]).all(axis=0)
        new = uniform & ~np.tile(parent, 2) if k else uniform
        out += [(int(g[0, v]), (1 << k) - 1, int(v)) for v in np.flatnonzero(new)]
        parent = uniform | (np.tile(parent, 2) if k else False)
    return out


@not_implemented_for("directed")
@not_implemented_for("multigraph")
def consistent_tables(G, cycles=None, max_len=None) -> dict:
    """Multipath forwarding tables of every switch, consistent hop by hop.

    The paper's names (Algorithm 3 of [1]_), with the claiming rule of the
    module docstring: for every destination and full assignment, the next
    hops form a tree towards the destination.

    Parameters
    ----------
    G : networkx.Graph
        Undirected simple graph of switches.
    cycles : sequence of vertex sequences, optional
        ``C_1 ... C_C`` (default: ``find_cycles(G)``).
    max_len : int, optional
        Only paths of at most this many edges claim assignments.

    Returns
    -------
    dict
        ``vertex -> list of Entry`` sorted as :func:`multipath_table`'s; for
        each destination the patterns of different next hops are disjoint
        and together cover every assignment.

    Raises
    ------
    ValueError
        If there are more than 20 cycles (all ``2**C`` assignments are
        enumerated).

    Examples
    --------
    >>> from ibfabric.plugins.routing.pathbits import find_cycles, multipath_table
    >>> G = nx.Graph([("a", "b"), ("a", "c"), ("b", "c"), ("b", "d"), ("c", "d")])
    >>> t = consistent_tables(G, find_cycles(G, root="b"))
    >>> t["a"] == multipath_table(G, "a", find_cycles(G, root="b"))
    True
    >>> [e for e in t["c"] if e.destination == "b"]  # cdb lost 01 to cab
    [Entry(destination='b', pattern='0X', next_hop='a'), Entry(destination='b', pattern='10', next_hop='b'), Entry(destination='b', pattern='11', next_hop='d')]

    Notes
    -----
    Per destination every switch keeps, for each next hop, the set of
    assignments bound to it as an integer of ``2**C`` bits; paths claim
    (shortest first), then gaps are filled along BFS layers.  Each switch's
    next-hop function is cut into cubes (Shannon expansion on ``P_1, P_2,
    ...``) and merged as in :func:`multipath_table`.  ``O(paths * length)``
    operations on ``2**C``-bit integers.

    References
    ----------
    .. [1] E. J. Kim, K. H. Yum, C. R. Das, M. Yousif, J. Duato, "Exploring
       IBA Design Space for Improved Performance", IEEE TPDS 18(4), 2007,
       §3.2-3.3.
    """
    rank = _rank(G)
    nodes = sorted(G, key=rank.__getitem__)
    idx = {v: i for i, v in enumerate(nodes)}
    cycles = _cycles_or_default(G, cycles)
    C = len(cycles)
    if C > _MAX_ENUMERATED:
        raise ValueError(f"'cycles' must number at most {_MAX_ENUMERATED}: all 2**C assignments are enumerated (got {C})")
    masks = _edge_masks(cycles)
    nbrs = {v: sorted(G[v], key=rank.__getitem__) for v in G}
    by_dst: dict = defaultdict(list)
    for s in nodes:
        for path, (p, n) in _named_paths(G, s, masks, nbrs, max_len):
            by_dst[path[-1]].append(([idx[v] for v in path], p, n))
    P, nbytes = np.arange(1 << C), max(1, (1 << C) // 8)
    cube_sets: dict = {}  # (pos, neg) -> the assignments matching it, as an int of 2**C bits
    tables: dict = {v: [] for v in nodes}
    for t in nodes:
        bound = [0] * len(nodes)  # assignments with a next hop at each vertex
        claimed = [defaultdict(int) for _ in nodes]  # vertex -> next hop -> its assignments
        for ip, p, n in sorted(by_dst[t], key=lambda r: (len(r[0]), r[0])):
            if (p, n) not in cube_sets:
                m = ((P & p) == p) & ((P & n) == 0)
                cube_sets[p, n] = int.from_bytes(np.packbits(m, bitorder="little").tobytes(), "little")
            m = cube_sets[p, n]
            hops = list(zip(ip, ip[1:]))
            for a, b in hops:
                m &= ~bound[a] | claimed[a][b]
            if m:
                for a, b in hops:
                    claimed[a][b] |= m
                    bound[a] |= m
        dist = nx.single_source_shortest_path_length(G, t)
        for v in sorted(dist, key=lambda v: (dist[v], rank[v]))[1:]:
            free = ~bound[idx[v]] & ((1 << (1 << C)) - 1)
            if free:
                up = min((x for x in G[v] if dist[x] == dist[v] - 1), key=rank.__getitem__)
                claimed[idx[v]][idx[up]] |= free
            row = np.empty(1 << C, dtype=np.intp)
            for b, m in claimed[idx[v]].items():
                sel = np.unpackbits(np.frombuffer(m.to_bytes(nbytes, "little"), dtype=np.uint8), bitorder="little")
                row[sel[: 1 << C].astype(bool)] = b
            groups: dict = defaultdict(list)
            for hop, mask, val in _split(row, C):
                groups[hop].append((mask, val))
            tables[v] += [Entry(t, _pattern(m, val, C), nodes[hop]) for hop, cubes in groups.items() for m, val in _merge(cubes)]
    for v in nodes:
        tables[v].sort(key=lambda e: (rank[e.destination], e.pattern, rank[e.next_hop]))
    return tables


# ---------------------------------------------------------------- forwarding


def walk(G, tables: Mapping, src, dst, bits: str) -> Walk:
    """Forward a packet with full path bits ``bits`` from ``src`` to ``dst``, one lookup per switch.

    Parameters
    ----------
    G : networkx.Graph
        The graph the tables were built for.
    tables : dict
        ``vertex -> entries`` (:func:`multipath_table` per vertex, or
        :func:`consistent_tables`).
    src, dst : node
        Source and destination switches.
    bits : str
        The packet's assignment ``P_1 ... P_C`` over ``{'0', '1'}``.

    Returns
    -------
    Walk
        The vertices visited and the outcome: at each switch the entries
        for ``dst`` matching ``bits`` must all name one next hop.

    Raises
    ------
    ValueError
        If ``bits`` is not a full assignment, or a table names a next hop
        that is not a neighbour.

    Examples
    --------
    Switch c of Fig. 4 in the paper's scheme cannot choose for ``P = 01``:

    >>> from ibfabric.plugins.routing.pathbits import find_cycles, multipath_table
    >>> G = nx.Graph([("a", "b"), ("a", "c"), ("b", "c"), ("b", "d"), ("c", "d")])
    >>> cyc = find_cycles(G, root="b")
    >>> paper = {v: multipath_table(G, v, cyc) for v in G}
    >>> walk(G, paper, "c", "b", "01")
    Walk(path=('c',), outcome='ambiguous', choices=('a', 'd'))
    >>> walk(G, consistent_tables(G, cyc), "c", "b", "01")
    Walk(path=('c', 'a', 'b'), outcome='delivered', choices=())
    """
    if set(bits) - {"0", "1"}:
        raise ValueError(f"'bits' must be a full assignment over '0' and '1' (got {bits!r})")
    rank = _rank(G)
    path, v = [src], src
    while v != dst:
        hops = {e.next_hop for e in tables.get(v, ()) if e.destination == dst and matches(e.pattern, bits)}
        if len(hops) != 1:
            return Walk(tuple(path), "ambiguous" if hops else "no route", tuple(sorted(hops, key=rank.__getitem__)))
        (nh,) = hops
        if not G.has_edge(v, nh):
            raise ValueError(f"the table of {v!r} sends {dst!r} to {nh!r}, which is not a neighbour")
        looped = nh in path
        path.append(nh)
        if looped:
            return Walk(tuple(path), "loop")
        v = nh
    return Walk(tuple(path), "delivered")


def check_tables(G, tables: Mapping) -> dict[str, list[tuple]]:
    """Every ``(source, destination, assignment)`` that :func:`walk` does not deliver.

    Parameters
    ----------
    G : networkx.Graph
        The graph the tables were built for.
    tables : dict
        ``vertex -> entries``; all patterns have the same length ``C``.

    Returns
    -------
    dict
        ``'ambiguous'``, ``'no route'``, ``'loop'`` -> list of ``(src, dst,
        bits)``, for every pair of distinct vertices in one component and
        every ``bits`` in ``{0,1}^C``.  All lists empty: the tables are
        consistent hop by hop.

    Examples
    --------
    >>> from ibfabric.plugins.routing.pathbits import find_cycles, multipath_table
    >>> G = nx.Graph([("a", "b"), ("a", "c"), ("b", "c"), ("b", "d"), ("c", "d")])
    >>> cyc = find_cycles(G, root="b")
    >>> {k: len(v) for k, v in check_tables(G, {v: multipath_table(G, v, cyc) for v in G}).items()}
    {'ambiguous': 2, 'no route': 0, 'loop': 0}
    >>> {k: len(v) for k, v in check_tables(G, consistent_tables(G, cyc)).items()}
    {'ambiguous': 0, 'no route': 0, 'loop': 0}

    Notes
    -----
    Vectorised over the ``2**C`` assignments: per destination, an array of
    next hops ``[vertex, P]`` (``-2`` where ambiguous), then all packets
    advance together ``|V|`` hops.  Lookups are deterministic, so a packet
    still travelling then has repeated a vertex and loops forever.
    """
    rank = _rank(G)
    nodes = sorted(G, key=rank.__getitem__)
    idx = {v: i for i, v in enumerate(nodes)}
    by_dst: dict = defaultdict(list)
    lengths = set()
    for v, entries in tables.items():
        for e in entries:
            by_dst[e.destination].append((idx[v], _cube(e.pattern), idx[e.next_hop]))
            lengths.add(len(e.pattern))
    if len(lengths) > 1:
        raise ValueError(f"all patterns must have the same length (got lengths {sorted(lengths)})")
    C = lengths.pop() if lengths else 0
    P = np.arange(1 << C)
    out: dict = {"ambiguous": [], "no route": [], "loop": []}
    V = len(nodes)
    for t in nodes:
        nxt = np.full((V, 1 << C), -1, dtype=np.intp)
        for a, (mask, val), b in by_dst[t]:
            m = (P & mask) == val
            row = nxt[a]
            row[m & (row >= 0) & (row != b)] = -2
            row[m & (row == -1)] = b
        srcs = np.array([idx[v] for v in nx.node_connected_component(G, t) if v != t], dtype=np.intp)
        pos = np.repeat(srcs, 1 << C).reshape(len(srcs), 1 << C)
        cols = np.broadcast_to(P, pos.shape)
        status = np.zeros(pos.shape, dtype=np.int8)  # 0 moving, 1 arrived, 2 ambiguous, 3 no route, 4 loop
        for _ in range(V):
            status[(status == 0) & (pos == idx[t])] = 1
            hop = nxt[pos, cols]
            status[(status == 0) & (hop == -2)] = 2
            status[(status == 0) & (hop == -1)] = 3
            pos = np.where(status == 0, hop, pos)
        status[(status == 0) & (pos == idx[t])] = 1
        status[status == 0] = 4
        for code, name in ((2, "ambiguous"), (3, "no route"), (4, "loop")):
            for i, k in zip(*np.nonzero(status == code)):
                out[name].append((nodes[srcs[i]], t, _pattern((1 << C) - 1, int(k), C)))
    for name in out:
        out[name].sort(key=lambda r: (rank[r[0]], rank[r[1]], r[2]))
    return out
