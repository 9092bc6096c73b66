"""Path bits for multipath forwarding tables (Kim et al. 2007, §3.2-3.3).

The graph algorithms of the paper, on an undirected simple graph of
switches: the back edges of a BFS tree (Algorithm 1), one cycle per back
edge (Algorithm 2), the signed cycle list of every directed edge
(Definition 1) and their union (Definition 2), the path bits of a path
(Algorithm 3) and the multipath forwarding table of a switch (§3.3).  A
packet carries a full assignment ``P`` in ``{0,1}^C`` (``C`` cycles, ``P_k``
the k-th character); a table entry ``(destination, pattern, next_hop)``
matches it when every non-``X`` character of ``pattern`` equals ``P``'s.

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

A path whose union is "not defined" (Definition 2, last case) has no name:
:func:`path_bits` returns None and both table builders leave it out.  Two
more caveats of the paper: Algorithm 2 can return the same cycle for two
back edges (:func:`find_cycles`), and Theorem 2 ("some pair has ``2^C``
paths") is false (``K4``: ``C = 3``, at most 5 paths per pair).

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
    "Walk",
    "back_edges",
    "number_of_cycles",
    "find_cycles",
    "cycle_lists",
    "cycle_list_union",
    "union_all",
    "path_bits",
    "matches",
    "multipath_table",
    "consistent_tables",
    "walk",
    "check_tables",
    "path_bits_needed",
    "check_lmc",
    "MAX_PATH_BITS",
]

#: Most path bits a DLID can carry: IBA's LMC is at most 7.
MAX_PATH_BITS = 7
#: :func:`consistent_tables` enumerates all 2**C assignments; refuse beyond this.
_MAX_ENUMERATED = 20

class Entry(NamedTuple):
    """One multipath forwarding table entry (compares equal to a plain 3-tuple)."""

    destination: Hashable
    pattern: str
    next_hop: Hashable


class Walk(NamedTuple):
    """Result of :func:`walk`.

    ``outcome`` is ``'delivered'``, ``'ambiguous'`` (several next hops match;
    ``choices`` holds them), ``'no route'`` (none matches) or ``'loop'`` (the
    last vertex of ``path`` was visited before).
    """

    path: tuple
    outcome: str
    choices: tuple = ()


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
    are not consistent hop by hop (module docstring): use
    :func:`consistent_tables` to forward packets.

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
