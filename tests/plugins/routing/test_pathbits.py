"""pathbits: Kim et al. 2007 §3.2-3.3 (Algorithms 1-3, Definitions 1-2, multipath tables)."""

import doctest
import itertools

import networkx as nx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ibfabric.plugins.routing import pathbits
from ibfabric.plugins.routing.pathbits import (
    Entry,
    back_edges,
    check_lmc,
    cycle_list_union,
    cycle_lists,
    find_cycles,
    matches,
    multipath_table,
    number_of_cycles,
    path_bits,
    path_bits_needed,
    union_all,
)
from ibfabric.plugins.routing.pathtables import Walk, check_tables, consistent_tables, walk

#: Fig. 4a of the paper: a-b, a-c, b-c, b-d, c-d (two cycles).
FIG4_EDGES = [("a", "b"), ("a", "c"), ("b", "c"), ("b", "d"), ("c", "d")]
#: C1 = acba, C2 = cdbc (BFS root b).
FIG4_CYCLES = [("a", "c", "b", "a"), ("c", "d", "b", "c")]


@pytest.fixture
def fig4():
    return nx.Graph(FIG4_EDGES)


def assignments(C):
    return ["".join(p) for p in itertools.product("01", repeat=C)]


@st.composite
def connected_graphs(draw, max_nodes=8, max_extra=5):
    """A random spanning tree plus a few extra edges, relabelled by a random permutation."""
    n = draw(st.integers(2, max_nodes))
    G = nx.Graph()
    G.add_nodes_from(range(n))
    G.add_edges_from((i, draw(st.integers(0, i - 1))) for i in range(1, n))
    free = [(u, v) for u, v in itertools.combinations(range(n), 2) if not G.has_edge(u, v)]
    if free:
        G.add_edges_from(draw(st.lists(st.sampled_from(free), max_size=max_extra, unique=True)))
    perm = draw(st.permutations(range(n)))
    return nx.relabel_nodes(G, dict(zip(range(n), perm)))


class TestBackEdges:
    def test_fig4_root_b(self, fig4):
        # BFS from b meets a, c, d; then (a, c) from a and (c, d) from c
        assert back_edges(fig4, root="b") == [("a", "c"), ("c", "d")]

    def test_default_root_is_smallest(self, fig4):
        # from a: tree a-b, a-c, b-d; back edges (b, c) and (c, d)
        assert back_edges(fig4) == [("b", "c"), ("c", "d")]

    def test_tree_has_none(self):
        assert back_edges(nx.path_graph(5)) == []
        assert number_of_cycles(nx.path_graph(5)) == 0

    def test_number_of_cycles(self, fig4):
        assert number_of_cycles(fig4) == 2
        assert number_of_cycles(nx.complete_graph(5)) == 6 == len(back_edges(nx.complete_graph(5)))

    def test_forest(self):
        # two triangles and an isolated vertex: |E| - |V| + components = 6 - 7 + 3
        G = nx.Graph([(0, 1), (1, 2), (0, 2), (3, 4), (4, 5), (3, 5)])
        G.add_node(6)
        assert number_of_cycles(G) == 2
        assert back_edges(G) == [(1, 2), (4, 5)]

    def test_errors(self, fig4):
        with pytest.raises(nx.NodeNotFound):
            back_edges(fig4, root="z")
        with pytest.raises(nx.NetworkXNotImplemented):
            back_edges(nx.DiGraph(FIG4_EDGES))
        with pytest.raises(nx.NetworkXNotImplemented):
            back_edges(nx.MultiGraph(FIG4_EDGES))


class TestFindCycles:
    def test_fig4_paper(self, fig4):
        assert find_cycles(fig4, root="b") == FIG4_CYCLES

    def test_fig4_explicit_back_edges(self, fig4):
        assert find_cycles(fig4, back=[("a", "c"), ("c", "d")]) == FIG4_CYCLES
        # the paper's other spelling (d, c) gives the reverse orientation of C2
        assert find_cycles(fig4, back=[("a", "c"), ("d", "c")]) == [("a", "c", "b", "a"), ("d", "c", "b", "d")]

    def test_fig4_default_root(self, fig4):
        # root a: back edge (b, c); c->a->b and c->d->b tie, a is smaller
        assert find_cycles(fig4) == [("b", "c", "a", "b"), ("c", "d", "b", "c")]

    def test_ties(self):
        # square 0-1-2-3 with chord 1-3; back edge (1, 3): 3-0-1 and 3-2-1 tie, 0 is smaller
        G = nx.Graph([(0, 1), (1, 2), (2, 3), (3, 0), (1, 3)])
        assert back_edges(G) == [(1, 3), (3, 2)]
        assert find_cycles(G) == [(1, 3, 0, 1), (3, 2, 1, 3)]

    def test_duplicate_cycles(self):
        # back edges (3, 4) and (4, 5) both get the triangle 3-4-5 (not the tree's square
        # 3-4-2-0-1-3); the bits of the two copies are always equal and no bit tells the
        # two sides of the square apart
        G = nx.Graph([(0, 1), (0, 2), (1, 3), (2, 4), (3, 4), (3, 5), (4, 5)])
        assert back_edges(G) == [(3, 4), (4, 5)]
        assert find_cycles(G) == [(3, 4, 5, 3), (4, 5, 3, 4)]
        paper = {v: multipath_table(G, v) for v in G}
        assert [e for e in paper[0] if e.destination == 5] == [(5, "00", 1), (5, "00", 2), (5, "11", 1), (5, "11", 2)]
        assert walk(G, paper, 0, 5, "00") == Walk((0,), "ambiguous", (1, 2))
        assert walk(G, paper, 0, 5, "01") == Walk((0,), "no route")
        assert check_tables(G, consistent_tables(G)) == {"ambiguous": [], "no route": [], "loop": []}

    def test_errors(self, fig4):
        with pytest.raises(ValueError, match="not an edge"):
            find_cycles(fig4, back=[("a", "d")])
        with pytest.raises(ValueError, match="bridge"):
            find_cycles(nx.path_graph(3), back=[(0, 1)])

    @settings(max_examples=60, deadline=None)
    @given(connected_graphs())
    def test_shortest_cycle_through_back_edge(self, G):
        back = back_edges(G)
        cycles = find_cycles(G)
        assert len(back) == len(cycles) == number_of_cycles(G)
        for (v, w), c in zip(back, cycles):
            assert c[:2] == (v, w) and c[-1] == v
            assert len(set(c[:-1])) == len(c) - 1  # simple
            assert all(G.has_edge(x, y) for x, y in zip(c, c[1:]))
            H = G.copy()
            H.remove_edge(v, w)
            assert len(c) - 2 == nx.shortest_path_length(H, w, v)


class TestCycleLists:
    def test_fig4(self):
        lists = cycle_lists(FIG4_CYCLES)
        assert lists == {
            ("a", "c"): {1}, ("c", "a"): {-1},
            ("c", "b"): {1, -2}, ("b", "c"): {-1, 2},  # bc: {C1-bar, C2}, as in the paper
            ("b", "a"): {1}, ("a", "b"): {-1},
            ("c", "d"): {2}, ("d", "c"): {-2},
            ("d", "b"): {2}, ("b", "d"): {-2},
        }  # fmt: skip

    def test_not_a_cycle(self):
        with pytest.raises(ValueError, match="closed vertex sequence"):
            cycle_lists([("a", "b", "c")])
        with pytest.raises(ValueError, match="closed vertex sequence"):
            cycle_lists([("a", "b", "a")])


class TestCycleListUnion:
    def test_no_contradiction(self):
        assert cycle_list_union({1}, {2}) == {1, 2}
        assert cycle_list_union(set(), {-3}) == {-3}

    def test_both_larger_than_one(self):
        # a = C1 in alpha1, C1-bar in alpha2: both go
        assert cycle_list_union({1, 2}, {-1, 3}) == {2, 3}

    def test_first_larger(self):
        # |alpha1| > 1, |alpha2| = 1: alpha1's C1 goes, alpha2's C1-bar stays
        assert cycle_list_union({1, 2}, {-1}) == {-1, 2}

    def test_second_larger(self):
        assert cycle_list_union({1}, {-1, 3}) == {1, 3}

    def test_not_defined(self):
        assert cycle_list_union({1}, {-1}) is None
        assert cycle_list_union({-2}, {2}) is None

    def test_several_contradictions(self):
        assert cycle_list_union({1, 2}, {-1, -2}) == set()
        assert cycle_list_union({1, 2, 3}, {-1}) == {-1, 2, 3}

    def test_bad_ids(self):
        with pytest.raises(ValueError, match="nonzero integers"):
            cycle_list_union({0}, {1})

    def test_union_all(self):
        assert union_all([]) == set()
        assert union_all([{-1, 2}, {-1}]) == {-1, 2}  # path bca
        assert union_all([{-2}, {-2}, {-1}]) == {-2, -1}  # path bdca
        assert union_all([{1}, set(), {-1}, {2}]) is None  # undefined stays undefined


class TestPathBits:
    @pytest.mark.parametrize(
        "path, bits",
        [("ba", "1X"), ("bca", "01"), ("bdca", "00"), ("ab", "0X"), ("acb", "10"), ("acdb", "11"), ("abdc", "00"), ("acbd", "10")],
    )
    def test_fig4(self, path, bits):
        assert path_bits(path, cycle_lists(FIG4_CYCLES), 2) == bits

    def test_edge_on_no_cycle(self):
        assert path_bits("de", cycle_lists(FIG4_CYCLES), 2) == "XX"
        assert path_bits("cde", cycle_lists(FIG4_CYCLES), 2) == "X1"

    def test_undefined_union(self):
        # C1 = 4-2-6-1-4: path 4-2-5-0-1-6 goes along C1 (4->2), leaves it, comes back against it (1->6)
        G = nx.Graph([(0, 1), (0, 5), (1, 4), (1, 6), (2, 3), (2, 4), (2, 5), (2, 6), (3, 6)])
        cycles = find_cycles(G)
        assert cycles == [(4, 2, 6, 1, 4), (6, 2, 3, 6), (2, 3, 6, 2)]
        lists = cycle_lists(cycles)
        p = (4, 2, 5, 0, 1, 6)
        assert [lists.get(e, set()) for e in zip(p, p[1:])] == [{1}, set(), set(), set(), {-1}]
        assert path_bits(p, lists, 3) is None
        # the unnamed path is left out of the table; the other five paths from 4 to 6 remain
        named = {q: path_bits(q, lists, 3) for q in map(tuple, nx.all_simple_paths(G, 4, 6))}
        assert len(named) == 6 and [q for q, b in named.items() if b is None] == [p]
        assert [e for e in multipath_table(G, 4, cycles) if e.destination == 6] == [(6, "0XX", 1), (6, "100", 2), (6, "111", 2)]
        # and the consistent tables still deliver everything
        assert check_tables(G, consistent_tables(G, cycles)) == {"ambiguous": [], "no route": [], "loop": []}

    def test_num_cycles_too_small(self):
        with pytest.raises(ValueError, match="num_cycles"):
            path_bits("acdb", cycle_lists(FIG4_CYCLES), 1)


class TestMultipathTable:
    def test_fig5c(self, fig4):
        # Fig. 5c: b0X -> b, b10 and b11 merged into b1X -> c; 2 entries per destination
        assert multipath_table(fig4, "a", FIG4_CYCLES) == [
            ("b", "0X", "b"), ("b", "1X", "c"),
            ("c", "0X", "b"), ("c", "1X", "c"),
            ("d", "0X", "b"), ("d", "1X", "c"),
        ]  # fmt: skip

    def test_entries_are_named(self, fig4):
        e = multipath_table(fig4, "a", FIG4_CYCLES)[1]
        assert isinstance(e, Entry) and (e.destination, e.pattern, e.next_hop) == ("b", "1X", "c")

    def test_vertex_b(self, fig4):
        # ba 1X, bca 01, bdca 00 (the paper's example); c and d likewise
        table = multipath_table(fig4, "b", FIG4_CYCLES)
        assert [e for e in table if e.destination == "a"] == [("a", "00", "d"), ("a", "01", "c"), ("a", "1X", "a")]
        assert len(table) == 9

    def test_max_len(self, fig4):
        assert multipath_table(fig4, "a", FIG4_CYCLES, max_len=1) == [("b", "0X", "b"), ("c", "1X", "c")]
        assert multipath_table(fig4, "a", FIG4_CYCLES, max_len=0) == []
        assert multipath_table(fig4, "a", FIG4_CYCLES, max_len=3) == multipath_table(fig4, "a", FIG4_CYCLES)

    def test_merging(self):
        # K4: three cycles; merged patterns cover exactly the named assignments
        G = nx.complete_graph(4)
        cycles = find_cycles(G)
        lists, C = cycle_lists(cycles), len(cycles)
        table = multipath_table(G, 0, cycles)
        for t in (1, 2, 3):
            for nh in G[0]:
                named = {P for p in nx.all_simple_paths(G, 0, t) if p[1] == nh for P in assignments(C) if matches(path_bits(p, lists, C), P)}
                merged = {P for e in table if e.destination == t and e.next_hop == nh for P in assignments(C) if matches(e.pattern, P)}
                assert named == merged

    def test_matches(self):
        assert matches("1X", "10") and matches("1X", "11") and not matches("1X", "01")
        assert matches("XX", "X0") and not matches("1X", "X1")
        with pytest.raises(ValueError, match="same length"):
            matches("1X", "1")


class TestPathBitsNeeded:
    def test_fig4(self, fig4):
        assert path_bits_needed(fig4) == 2

    def test_theorem2_does_not_hold(self):
        # K4: C = 3 but no pair has 2**3 paths (at most 5), although N <= 2**C always
        G = nx.complete_graph(4)
        assert path_bits_needed(G) == 3
        assert max(len(list(nx.all_simple_paths(G, s, t))) for s, t in itertools.combinations(G, 2)) == 5

    def test_check_lmc(self):
        assert check_lmc(0) == 0 and check_lmc(7) == 7
        with pytest.raises(ValueError, match=r"^'num_bits' must be at most 7, IBA's largest LMC \(got 9\)$"):
            check_lmc(9)
        with pytest.raises(ValueError, match="at least 0"):
            check_lmc(-1)


def test_doctests():
    res = doctest.testmod(pathbits, optionflags=doctest.ELLIPSIS)
    assert res.failed == 0 and res.attempted >= 20
    for name in ("back_edges", "find_cycles", "cycle_lists", "cycle_list_union", "path_bits", "multipath_table"):
        doc = getattr(pathbits, name).__doc__
        assert all(s in doc for s in ("Parameters", "Returns", "Examples", "References")), name
