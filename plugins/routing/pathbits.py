"""Path bits for multipath forwarding tables (Kim et al. 2007, §3.2-3.3).

The graph algorithms of the paper, on an undirected simple graph of
switches: the back edges of a BFS tree (Algorithm 1), one cycle per back
edge (Algorithm 2), the signed cycle list of every directed edge
(Definition 1) and their union (Definition 2), the path bits of a path
(Algorithm 3) and the multipath forwarding table of a switch (§3.3).  A
packet carries a full assignment ``P`` in ``{0,1}^C`` (``C`` cycles, ``P_k``
the k-th character); a table entry ``(destination, pattern, next_hop)``
matches it when every non-``X`` character of ``pattern`` equals ``P``'s.

Looked up hop by hop, these tables are not consistent (ambiguous lookups,
gaps, loops): :mod:`ibfabric.plugins.routing.pathtables` shows why and
builds tables that are, and forwards packets by them.

A path whose union is "not defined" (Definition 2, last case) has no name:
:func:`path_bits` returns None and both table builders
(:func:`multipath_table`, ``pathtables.consistent_tables``) leave it out.
Two more caveats of the paper: Algorithm 2 can return the same cycle for
two back edges (:func:`find_cycles`), and Theorem 2 ("some pair has
``2^C`` paths") is false (``K4``: ``C = 3``, at most 5 paths per pair).

Patterns are strings over ``{'1', '0', 'X'}``, ``P_1`` first; signed cycle
ids are ``+k`` (cycle ``C_k`` as written) and ``-k`` (its reverse),
``k`` counted from 1.
"""

from __future__ import annotations

from collections import defaultdict, deque
from collections.abc import Hashable, Iterable, Iterator, Mapping, Sequence
from typing import NamedTuple

import networkx as nx
import numpy as np
from networkx.utils import not_implemented_for

__all__ = [
    "Entry",
    "back_edges",
    "number_of_cycles",
    "find_cycles",
    "cycle_lists",
    "cycle_list_union",
    "union_all",
    "path_bits",
    "matches",
    "multipath_table",
    "path_bits_needed",
    "check_lmc",
    "MAX_PATH_BITS",
]

#: Most path bits a DLID can carry: IBA's LMC is at most 7.
MAX_PATH_BITS = 7


class Entry(NamedTuple):
    """One multipath forwarding table entry (compares equal to a plain 3-tuple)."""

    destination: Hashable
    pattern: str
    next_hop: Hashable


# ---------------------------------------------------------------- helpers


def _rank(G) -> dict:
    """Deterministic order of the vertices: sorted if comparable, else insertion order."""
    try:
        nodes = sorted(G)
    except TypeError:
        nodes = list(G)
    return {v: i for i, v in enumerate(nodes)}


def _union(a, b):
    """Definition 2 on ``(pos, neg)`` bitmasks (bit k-1 for cycle k); None if not defined."""
    p1, n1 = a
    p2, n2 = b
    x, y = p1 & n2, n1 & p2  # a in alpha1 with a-bar in alpha2, for a = C_k and a = C_k-bar
    p, n = p1 | p2, n1 | n2
    if not x | y:
        return p, n
    big1 = (p1.bit_count() + n1.bit_count()) > 1
    big2 = (p2.bit_count() + n2.bit_count()) > 1
    if big1 and big2:
        return p & ~(x | y), n & ~(x | y)
    if big1:  # drop alpha1's member a, keep alpha2's a-bar
        return p & ~x, n & ~y
    if big2:  # drop alpha2's member a-bar, keep alpha1's a
        return p & ~y, n & ~x
    return None


def _to_masks(members: Iterable[int]) -> tuple[int, int]:
    p = n = 0
    for k in members:
        if not isinstance(k, (int, np.integer)) or k == 0:
            raise ValueError(f"cycle ids must be nonzero integers (got {k!r})")
        if k > 0:
            p |= 1 << (k - 1)
        else:
            n |= 1 << (-k - 1)
    return p, n


def _from_masks(p: int, n: int) -> frozenset:
    return frozenset([k + 1 for k in range(p.bit_length()) if p >> k & 1] + [-k - 1 for k in range(n.bit_length()) if n >> k & 1])


def _edge_masks(cycles: Sequence[Sequence]) -> dict:
    """Definition 1 as bitmasks: directed edge -> (pos, neg)."""
    out: dict = defaultdict(lambda: [0, 0])
    for k, c in enumerate(cycles):
        if len(c) < 4 or c[0] != c[-1]:
            raise ValueError(f"a cycle must be a closed vertex sequence (v, w, ..., v) of at least 3 edges (got {tuple(c)!r})")
        for u, v in zip(c, c[1:]):
            out[u, v][0] |= 1 << k
            out[v, u][1] |= 1 << k
    return {e: tuple(m) for e, m in out.items()}


def _pattern(mask: int, val: int, C: int) -> str:
    return "".join(("1" if val >> k & 1 else "0") if mask >> k & 1 else "X" for k in range(C))


def _cube(pattern: str) -> tuple[int, int]:
    mask = val = 0
    for k, ch in enumerate(pattern):
        if ch == "1":
            mask, val = mask | 1 << k, val | 1 << k
        elif ch == "0":
            mask |= 1 << k
        elif ch != "X":
            raise ValueError(f"path bits must be '0', '1' or 'X' (got {pattern!r})")
    return mask, val


def _merge(cubes: Iterable[tuple[int, int]]) -> set:
    """Merge cubes ``(mask, val)`` differing in one determined bit until none do, then drop covered ones."""
    every = set(cubes)
    used, frontier = set(), every
    while frontier:
        new = set()
        for mask, val in frontier:
            bits = mask
            while bits:
                bit = bits & -bits
                bits ^= bit
                if (mask, val ^ bit) in every:
                    used |= {(mask, val), (mask, val ^ bit)}
                    new.add((mask & ~bit, val & ~bit))
        frontier = new - every
        every |= frontier
    by_mask: dict = defaultdict(set)
    for mask, val in every - used:  # a used cube lies inside the cube it merged into
        by_mask[mask].add(val)
    wider = {m: [o for o in by_mask if o != m and o & m == o] for m in by_mask}
    return {(m, v) for m, vals in by_mask.items() for v in vals if not any(v & o in by_mask[o] for o in wider[m])}


def _named_paths(G, source, masks, nbrs, max_len) -> Iterator[tuple[tuple, tuple[int, int]]]:
    """Every simple path from source (at most max_len edges) whose cycle list union is defined.

    Depth first in ``nbrs`` order, carrying the union of each prefix: a path
    whose union is undefined has no defined extension, so it is pruned.
    """
    if max_len is not None and max_len < 1:
        return
    path, acc, on = [source], [(0, 0)], {source}
    stack = [iter(nbrs[source])]
    while stack:
        x = next(stack[-1], None)
        if x is None:
            stack.pop()
            on.discard(path.pop())
            acc.pop()
            continue
        if x in on:
            continue
        u = _union(acc[-1], masks.get((path[-1], x), (0, 0)))
        if u is None:
            continue
        path.append(x)
        yield tuple(path), u
        if max_len is None or len(path) <= max_len:
            on.add(x)
            acc.append(u)
            stack.append(iter(nbrs[x]))
        else:
            path.pop()


def _cycles_or_default(G, cycles):
    return find_cycles(G) if cycles is None else [tuple(c) for c in cycles]


# ---------------------------------------------------------------- Algorithms 1 and 2


@not_implemented_for("directed")
@not_implemented_for("multigraph")
def back_edges(G, root=None) -> list[tuple]:
    """Edges outside a breadth-first spanning tree (Algorithm 1 of [1]_).

    Parameters
    ----------
    G : networkx.Graph
        Undirected simple graph of switches.
    root : node, optional
        Root of the BFS tree (default: the smallest vertex).  Components not
        reached from it get their own trees, rooted at their smallest vertex.

    Returns
    -------
    list of (v, w)
        The back edges in the order the BFS meets them, each oriented from
        the vertex the BFS scans first.

    Raises
    ------
    networkx.NetworkXNotImplemented
        For directed graphs and multigraphs.
    networkx.NodeNotFound
        If ``root`` is not in ``G``.

    Examples
    --------
    Fig. 4 of [1]_, BFS from b:

    >>> G = nx.Graph([("a", "b"), ("a", "c"), ("b", "c"), ("b", "d"), ("c", "d")])
    >>> back_edges(G, root="b")
    [('a', 'c'), ('c', 'd')]
    >>> number_of_cycles(G)
    2

    Notes
    -----
    Neighbours are visited in sorted order (insertion order if the vertices
    do not compare), so the tree and the orientation are deterministic.
    ``O(|V| log |V| + |E|)``.

    References
    ----------
    .. [1] E. J. Kim, K. H. Yum, C. R. Das, M. Yousif, J. Duato, "Exploring
       IBA Design Space for Improved Performance", IEEE TPDS 18(4), 2007,
       §3.2, Algorithm 1.
    """
    rank = _rank(G)
    if root is not None and root not in G:
        raise nx.NodeNotFound(f"root {root!r} is not in G")
    seen, done, out = set(), set(), []
    for start in ([root] if root is not None else []) + sorted(G, key=rank.__getitem__):
        if start in seen:
            continue
        seen.add(start)
        queue = deque([start])
        while queue:
            u = queue.popleft()
            done.add(u)
            for x in sorted(G[u], key=rank.__getitem__):
                if x in done:
                    continue  # the tree edge to u's parent, or an edge already met from x
                if x in seen:
                    out.append((u, x))
                else:
                    seen.add(x)
                    queue.append(x)
    return out


def number_of_cycles(G) -> int:
    """Number of independent cycles, ``|E| - |V| + (number of components)`` (§3.2 of [1]_).

    Equals ``len(back_edges(G))``, the ``|E^c|`` of Algorithm 1.

    Examples
    --------
    >>> number_of_cycles(nx.complete_graph(4))
    3

    References
    ----------
    .. [1] E. J. Kim, K. H. Yum, C. R. Das, M. Yousif, J. Duato, "Exploring
       IBA Design Space for Improved Performance", IEEE TPDS 18(4), 2007,
       §3.2, Algorithm 1.
    """
    return G.number_of_edges() - G.number_of_nodes() + nx.number_connected_components(G)


@not_implemented_for("directed")
@not_implemented_for("multigraph")
def find_cycles(G, root=None, back=None) -> list[tuple]:
    """The cycle ``C_i`` of every back edge (Algorithm 2 of [1]_).

    Parameters
    ----------
    G : networkx.Graph
        Undirected simple graph of switches.
    root : node, optional
        BFS root passed to :func:`back_edges` (ignored when ``back`` is given).
    back : sequence of (v, w), optional
        The back edges, oriented, in cycle order (default:
        ``back_edges(G, root)``).

    Returns
    -------
    list of tuple
        ``C_i = (v_i, w_i, ..., v_i)`` for the i-th back edge: the edge
        ``v_i w_i`` followed by a shortest path from ``w_i`` back to ``v_i``
        that does not use the edge ``w_i v_i``.

    Raises
    ------
    ValueError
        If a given back edge is not an edge of ``G`` or lies on no cycle.

    Examples
    --------
    Fig. 4 of [1]_ with the paper's BFS root b:

    >>> G = nx.Graph([("a", "b"), ("a", "c"), ("b", "c"), ("b", "d"), ("c", "d")])
    >>> find_cycles(G, root="b")
    [('a', 'c', 'b', 'a'), ('c', 'd', 'b', 'c')]

    Notes
    -----
    The shortest ``v w ... v`` leaf of the paper's path tree is a shortest
    path from ``w`` to ``v`` in ``G`` minus the edge ``vw``, found here by a
    BFS from ``v``.  Ties go to the lexicographically smallest vertex
    sequence from ``w`` (in the order of :func:`back_edges`): walking from
    ``w``, each step takes the smallest neighbour one hop closer to ``v``.
    ``O(m (|V| + |E|))`` for ``m`` back edges.

    Two back edges can give the same cycle: in 0-1, 0-2, 1-3, 2-4, 3-4, 3-5,
    4-5 both back edges, (3, 4) and (4, 5), get the triangle 3-4-5 and no
    cycle crosses the square 0-1-3-4-2.  The cycles are then no basis: two
    bits are always equal and no bit tells the sides of the square apart.

    References
    ----------
    .. [1] E. J. Kim, K. H. Yum, C. R. Das, M. Yousif, J. Duato, "Exploring
       IBA Design Space for Improved Performance", IEEE TPDS 18(4), 2007,
       §3.2, Algorithm 2 and Fig. 4.
    """
    rank = _rank(G)
    back = back_edges(G, root) if back is None else [tuple(e) for e in back]
    cycles = []
    for v, w in back:
        if not G.has_edge(v, w):
            raise ValueError(f"back edge {(v, w)!r} is not an edge of G")
        dist, queue = {v: 0}, deque([v])
        while queue:
            u = queue.popleft()
            for x in G[u]:
                if x not in dist and {u, x} != {v, w}:
                    dist[x] = dist[u] + 1
                    queue.append(x)
        if w not in dist:
            raise ValueError(f"back edge {(v, w)!r} lies on no cycle (it is a bridge)")
        cyc, u = [v, w], w
        while u != v:
            u = min((x for x in G[u] if dist.get(x, -2) == dist[u] - 1 and {u, x} != {v, w}), key=rank.__getitem__)
            cyc.append(u)
        cycles.append(tuple(cyc))
    return cycles


# ---------------------------------------------------------------- Definitions 1, 2 and Algorithm 3


def cycle_lists(cycles: Sequence[Sequence]) -> dict[tuple, frozenset]:
    """The cycle list of every directed edge (Definition 1 of [1]_).

    Parameters
    ----------
    cycles : sequence of vertex sequences
        ``C_1, C_2, ...`` as closed sequences ``(v, w, ..., v)``.

    Returns
    -------
    dict
        ``(u, v) -> frozenset`` of signed cycle ids: ``+k`` if ``u -> v`` is
        an edge of ``C_k`` as written (clockwise), ``-k`` if it is an edge of
        its reverse ``C_k``-bar.  Edges on no cycle are absent (their list is
        empty).

    Raises
    ------
    ValueError
        If a cycle is not closed or has fewer than 3 edges.

    Examples
    --------
    >>> lists = cycle_lists([("a", "c", "b", "a"), ("c", "d", "b", "c")])
    >>> sorted(lists["b", "c"])  # {C1-bar, C2}, as in the paper
    [-1, 2]

    References
    ----------
    .. [1] E. J. Kim, K. H. Yum, C. R. Das, M. Yousif, J. Duato, "Exploring
       IBA Design Space for Improved Performance", IEEE TPDS 18(4), 2007,
       §3.2, Definition 1.
    """
    return {e: _from_masks(p, n) for e, (p, n) in _edge_masks(cycles).items()}


def cycle_list_union(a1: Iterable[int], a2: Iterable[int]) -> frozenset | None:
    """Cycle list union ``a1 ⊔ a2`` (Definition 2 of [1]_).

    Parameters
    ----------
    a1, a2 : iterable of int
        Cycle lists as signed cycle ids (``+k`` for ``C_k``, ``-k`` for
        ``C_k``-bar).

    Returns
    -------
    frozenset or None
        The union without contradicting members: for each ``a`` in ``a1``
        whose reverse is in ``a2``, both go if ``|a1| > 1`` and ``|a2| > 1``;
        only the member of the larger list goes if one list has a single
        member.  None when both lists have a single member and contradict:
        the paper's "not defined".

    Raises
    ------
    ValueError
        For a cycle id that is not a nonzero integer.

    Examples
    --------
    >>> sorted(cycle_list_union({-1, 2}, {-1}))
    [-1, 2]
    >>> sorted(cycle_list_union({1, 3}, {-1}))
    [-1, 3]
    >>> cycle_list_union({1}, {-1}) is None
    True

    References
    ----------
    .. [1] E. J. Kim, K. H. Yum, C. R. Das, M. Yousif, J. Duato, "Exploring
       IBA Design Space for Improved Performance", IEEE TPDS 18(4), 2007,
       §3.2, Definition 2.
    """
    a1, a2 = frozenset(a1), frozenset(a2)
    u = _union(_to_masks(a1), _to_masks(a2))
    return None if u is None else _from_masks(*u)


def union_all(lists: Iterable[Iterable[int]]) -> frozenset | None:
    """``((a1 ⊔ a2) ⊔ a3) ⊔ ...`` over the cycle lists of a path's edges (Algorithm 3, step 2 of [1]_).

    Returns the empty set for no lists and None as soon as one step is not
    defined (:func:`cycle_list_union`).

    Examples
    --------
    >>> sorted(union_all([{-2}, {-2}, {-1}]))  # path bdca of Fig. 4
    [-2, -1]

    References
    ----------
    .. [1] E. J. Kim, K. H. Yum, C. R. Das, M. Yousif, J. Duato, "Exploring
       IBA Design Space for Improved Performance", IEEE TPDS 18(4), 2007,
       §3.2, Algorithm 3.
    """
    acc = (0, 0)
    for a in lists:
        acc = _union(acc, _to_masks(frozenset(a)))
        if acc is None:
            return None
    return _from_masks(*acc)


def path_bits(path: Sequence, lists: Mapping[tuple, Iterable[int]], num_cycles: int) -> str | None:
    """Path bits ``P_1 ... P_C`` of a path (Algorithm 3 of [1]_).

    Parameters
    ----------
    path : sequence of vertices
        ``v_1 ... v_p``, source first.
    lists : dict
        Cycle list of each directed edge, as :func:`cycle_lists` returns.
    num_cycles : int
        ``C``, the number of bits.

    Returns
    -------
    str or None
        ``P_k = '1'`` if ``C_k`` is in the union of the edges' cycle lists,
        ``'0'`` if ``C_k``-bar is, ``'X'`` otherwise.  None if the union is
        not defined: such a path has no name, and the tables leave it out.

    Examples
    --------
    Fig. 4 of [1]_:

    >>> lists = cycle_lists([("a", "c", "b", "a"), ("c", "d", "b", "c")])
    >>> [path_bits(p, lists, 2) for p in ("ba", "bca", "bdca", "ab", "acb", "acdb")]
    ['1X', '01', '00', '0X', '10', '11']

    References
    ----------
    .. [1] E. J. Kim, K. H. Yum, C. R. Das, M. Yousif, J. Duato, "Exploring
       IBA Design Space for Improved Performance", IEEE TPDS 18(4), 2007,
       §3.2, Algorithm 3.
    """
    acc = (0, 0)
    for e in zip(path, path[1:]):
        acc = _union(acc, _to_masks(frozenset(lists.get(e, ()))))
        if acc is None:
            return None
    p, n = acc
    if (p | n) >> num_cycles:
        raise ValueError(f"'num_cycles' must cover every cycle id in the lists (got {num_cycles})")
    return _pattern(p | n, p, num_cycles)


def matches(pattern: str, bits: str) -> bool:
    """True if every non-``X`` character of ``pattern`` equals that of ``bits``.

    With a full assignment ``bits`` (no ``X``) this is the table lookup;
    with ``X`` in ``bits`` it says whether ``pattern`` covers ``bits``.

    Examples
    --------
    >>> matches("1X", "10"), matches("1X", "00"), matches("1X", "X0")
    (True, False, False)
    """
    if len(pattern) != len(bits):
        raise ValueError(f"pattern and bits must have the same length (got {pattern!r} and {bits!r})")
    return all(p == "X" or p == b for p, b in zip(pattern, bits))


# ---------------------------------------------------------------- §3.3 tables


@not_implemented_for("directed")
@not_implemented_for("multigraph")
def multipath_table(G, vertex, cycles=None, max_len=None) -> list[Entry]:
    """The multipath forwarding table of one switch, as the paper builds it (§3.3 of [1]_).

    Parameters
    ----------
    G : networkx.Graph
        Undirected simple graph of switches.
    vertex : node
        The switch whose table is built.
    cycles : sequence of vertex sequences, optional
        ``C_1 ... C_C`` (default: ``find_cycles(G)``).
    max_len : int, optional
        Only paths of at most this many edges (``cutoff`` of
        :func:`networkx.all_simple_paths`).  Default: all simple paths.

    Returns
    -------
    list of Entry
        ``(destination, pattern, next_hop)`` sorted by destination, pattern
        and next hop: every simple path from ``vertex`` gives its path bits
        (:func:`path_bits`) and first hop; per destination and next hop the
        patterns are merged.  Paths whose union is not defined are left out.

    Examples
    --------
    Fig. 5c of [1]_, the table of a in Fig. 4:

    >>> G = nx.Graph([("a", "b"), ("a", "c"), ("b", "c"), ("b", "d"), ("c", "d")])
    >>> for e in multipath_table(G, "a", find_cycles(G, root="b")):
    ...     print(*e)
    b 0X b
    b 1X c
    c 0X b
    c 1X c
    d 0X b
    d 1X c

    Notes
    -----
    Merging is Quine-McCluskey's: two patterns of one destination and next
    hop that differ in exactly one non-``X`` bit become one with an ``X``
    there, until no pair does; then patterns covered by another are dropped.
    The path enumeration is a depth-first search carrying each prefix's
    union, ``O(paths)``; its size grows exponentially with the cycles (a
    3-regular graph of 16 switches, 9 cycles, has about 2,400 simple paths
    per switch; see ``max_len``).

    The paper counts ``2^(cycles through vertex) * |V|`` entries; that
    holds in Fig. 4 but not in general (``kim2007(15, 9, seed=2007)``: 30 to
    238 entries per switch where the count gives 15 to 960).  These tables
    are not consistent hop by hop (see
    :mod:`ibfabric.plugins.routing.pathtables`): use
    :func:`~ibfabric.plugins.routing.pathtables.consistent_tables` to
    forward packets.

    References
    ----------
    .. [1] E. J. Kim, K. H. Yum, C. R. Das, M. Yousif, J. Duato, "Exploring
       IBA Design Space for Improved Performance", IEEE TPDS 18(4), 2007,
       §3.3 and Fig. 5c.
    """
    if vertex not in G:
        raise nx.NodeNotFound(f"vertex {vertex!r} is not in G")
    rank = _rank(G)
    cycles = _cycles_or_default(G, cycles)
    masks = _edge_masks(cycles)
    nbrs = {v: sorted(G[v], key=rank.__getitem__) for v in G}
    groups: dict = defaultdict(list)
    for path, (p, n) in _named_paths(G, vertex, masks, nbrs, max_len):
        groups[path[-1], path[1]].append((p | n, p))
    C = len(cycles)
    entries = [Entry(t, _pattern(m, v, C), nh) for (t, nh), cubes in groups.items() for m, v in _merge(cubes)]
    return sorted(entries, key=lambda e: (rank[e.destination], e.pattern, rank[e.next_hop]))


# ---------------------------------------------------------------- §5.1 and IBA


def path_bits_needed(G) -> int:
    """Number of path bits of the paper's scheme: one per cycle (Theorem 2 and §5.1 of [1]_).

    Examples
    --------
    >>> path_bits_needed(nx.Graph([("a", "b"), ("a", "c"), ("b", "c"), ("b", "d"), ("c", "d")]))
    2

    Notes
    -----
    The paper sets ``p = ceil(log2 max N_ij)`` and argues by Theorem 2 that
    some pair has ``2^C`` paths, hence ``C`` bits (its 15-switch network has
    9 cycles and uses 9 path bits).  Theorem 2 does not hold in general: a
    path is fixed by the set of back edges it uses, so ``N_ij <= 2^C``, but
    in ``K4`` (``C = 3``) no pair has more than 5 paths.  Algorithm 3 needs
    one bit per cycle regardless.  See :func:`check_lmc` for IBA's limit.

    References
    ----------
    .. [1] E. J. Kim, K. H. Yum, C. R. Das, M. Yousif, J. Duato, "Exploring
       IBA Design Space for Improved Performance", IEEE TPDS 18(4), 2007,
       §3.2 (Theorem 2), §5.1.
    """
    return number_of_cycles(G)


def check_lmc(num_bits: int) -> int:
    """Return ``num_bits`` if a DLID can carry that many path bits (IBA: LMC <= 7), else raise ValueError.

    Examples
    --------
    >>> check_lmc(2)
    2
    >>> check_lmc(9)
    Traceback (most recent call last):
    ...
    ValueError: 'num_bits' must be at most 7, IBA's largest LMC (got 9)

    Notes
    -----
    The paper's 15-switch network (9 cycles) needs 9 path bits with one bit
    per cycle, more than an IBA DLID can carry.
    """
    if num_bits < 0:
        raise ValueError(f"'num_bits' must be at least 0 (got {num_bits})")
    if num_bits > MAX_PATH_BITS:
        raise ValueError(f"'num_bits' must be at most {MAX_PATH_BITS}, IBA's largest LMC (got {num_bits})")
    return num_bits
