"""pathtables: hop-by-hop forwarding by Kim et al. 2007 path bits (the paper's tables, consistent tables)."""

import doctest
import itertools

import networkx as nx
import pytest
from hypothesis import given, settings
from test_pathbits import FIG4_CYCLES, FIG4_EDGES, assignments, connected_graphs

from ibfabric.plugins.routing import pathtables
from ibfabric.plugins.routing.pathbits import (
    Entry,
    cycle_lists,
    find_cycles,
    matches,
    multipath_table,
    number_of_cycles,
    path_bits,
)
from ibfabric.plugins.routing.pathtables import Walk, check_tables, consistent_tables, walk


@pytest.fixture
def fig4():
    return nx.Graph(FIG4_EDGES)


def named_pairs(G, cycles):
    """Every (source path, full assignment matching its path bits)."""
    lists, C = cycle_lists(cycles), len(cycles)
    for s in G:
        for t in G:
            if s == t:
                continue
            for p in nx.all_simple_paths(G, s, t):
                b = path_bits(p, lists, C)
                if b is not None:
                    yield tuple(p), b, [P for P in assignments(C) if matches(b, P)]


class TestPaperHopByHop:
    """The paper's tables, looked up hop by hop: the counter-examples of the pathtables module docstring."""

    def test_fig4_ambiguous_at_c(self, fig4):
        paper = {v: multipath_table(fig4, v, FIG4_CYCLES) for v in fig4}
        assert [e for e in paper["c"] if e.destination == "b"] == [("b", "0X", "a"), ("b", "10", "b"), ("b", "X1", "d")]
        assert walk(fig4, paper, "c", "b", "01") == Walk(("c",), "ambiguous", ("a", "d"))
        assert check_tables(fig4, paper) == {"ambiguous": [("b", "c", "10"), ("c", "b", "01")], "no route": [], "loop": []}

    def test_fig4_named_paths(self, fig4):
        # 50 (path, assignment) pairs; 46 followed exactly, the other 4 ambiguous at their source
        paper = {v: multipath_table(fig4, v, FIG4_CYCLES) for v in fig4}
        pairs = [(p, P) for p, _, Ps in named_pairs(fig4, FIG4_CYCLES) for P in Ps]
        assert len(pairs) == 50
        missed = sorted(("".join(p), P) for p, P in pairs if walk(fig4, paper, p[0], p[-1], P).path != p)
        assert missed == [("bac", "10"), ("bdc", "10"), ("cab", "01"), ("cdb", "01")]

    def test_suffix_renamed(self):
        # 1 names 1-5-4-0-2 'X00' and sends 000 to 5, but 5's entry for 000 is its link to 2
        G = nx.Graph([(0, 1), (0, 2), (0, 4), (1, 5), (2, 3), (2, 5), (3, 4), (4, 5)])
        cycles = find_cycles(G)
        assert cycles == [(2, 5, 1, 0, 2), (4, 3, 2, 0, 4), (4, 5, 1, 0, 4)]
        assert path_bits((1, 5, 4, 0, 2), cycle_lists(cycles), 3) == "X00"
        paper = {v: multipath_table(G, v, cycles) for v in G}
        assert walk(G, paper, 1, 2, "000") == Walk((1, 5, 2), "delivered")

    def test_loop(self):
        # 0 -> 6 -> 2 -> 8 -> 2: switches 2 and 8 each name a path through the other
        G = nx.Graph([(0, 1), (0, 6), (1, 3), (1, 4), (1, 8), (2, 5), (2, 6), (2, 8), (3, 4), (3, 7), (3, 8), (4, 5), (4, 7), (5, 7)])
        cycles = find_cycles(G)
        paper = {v: multipath_table(G, v, cycles) for v in G}
        assert walk(G, paper, 0, 4, "000011") == Walk((0, 6, 2, 8, 2), "loop")
        assert walk(G, consistent_tables(G, cycles), 0, 4, "000011").outcome == "delivered"

    @pytest.mark.parametrize("seed", [1, 2, 3])
    def test_random_regular(self, seed):
        G = nx.random_regular_graph(3, 10, seed=seed)
        cycles = find_cycles(G)
        paper = {v: multipath_table(G, v, cycles) for v in G}
        r = check_tables(G, paper)
        assert r["ambiguous"] and r["no route"]
        # and named paths are left: some (path, assignment) is not followed although unambiguous at the source
        left = [
            (p, P)
            for p, _, Ps in named_pairs(G, cycles)
            for P in Ps
            if (w := walk(G, paper, p[0], p[-1], P)).path != p and len(w.path) > 1
        ]
        assert left


class TestConsistentTables:
    def test_fig4(self, fig4):
        tables = consistent_tables(fig4, FIG4_CYCLES)
        assert tables["a"] == multipath_table(fig4, "a", FIG4_CYCLES)  # Fig. 5c unchanged
        assert [e for e in tables["c"] if e.destination == "b"] == [("b", "0X", "a"), ("b", "10", "b"), ("b", "11", "d")]
        assert [e for e in tables["b"] if e.destination == "c"] == [("c", "00", "d"), ("c", "01", "c"), ("c", "1X", "a")]
        assert check_tables(fig4, tables) == {"ambiguous": [], "no route": [], "loop": []}

    def test_fig4_named_paths(self, fig4):
        # 48 of 50 followed exactly: bdc loses 10 to bac, cdb loses 01 to cab (same length, smaller)
        tables = consistent_tables(fig4, FIG4_CYCLES)
        missed = sorted(
            ("".join(p), P, walk(fig4, tables, p[0], p[-1], P).path)
            for p, _, Ps in named_pairs(fig4, FIG4_CYCLES)
            for P in Ps
            if walk(fig4, tables, p[0], p[-1], P).path != p
        )
        assert missed == [("bdc", "10", ("b", "a", "c")), ("cdb", "01", ("c", "a", "b"))]

    @pytest.mark.parametrize(
        "edges",
        [
            [(0, 1), (0, 2), (0, 4), (1, 5), (2, 3), (2, 5), (3, 4), (4, 5)],
            [(0, 1), (0, 6), (1, 3), (1, 4), (1, 8), (2, 5), (2, 6), (2, 8), (3, 4), (3, 7), (3, 8), (4, 5), (4, 7), (5, 7)],
        ],
    )
    def test_check_tables_agrees_with_walk(self, edges):
        G = nx.Graph(edges)
        cycles = find_cycles(G)
        for tables in ({v: multipath_table(G, v, cycles) for v in G}, consistent_tables(G, cycles)):
            walked = {"ambiguous": [], "no route": [], "loop": []}
            for s, t in itertools.permutations(sorted(G), 2):
                for P in assignments(len(cycles)):
                    w = walk(G, tables, s, t, P)
                    if w.outcome != "delivered":
                        walked[w.outcome].append((s, t, P))
            assert check_tables(G, tables) == walked

    @pytest.mark.parametrize("seed", [1, 2, 3])
    def test_random_regular(self, seed):
        G = nx.random_regular_graph(3, 10, seed=seed)
        tables = consistent_tables(G)
        assert check_tables(G, tables) == {"ambiguous": [], "no route": [], "loop": []}

    def test_sixteen_switches(self):
        # the size of the paper's 15-switch network: 9 cycles, 512 assignments
        G = nx.random_regular_graph(3, 16, seed=1)
        assert number_of_cycles(G) == 9
        tables = consistent_tables(G)
        assert check_tables(G, tables) == {"ambiguous": [], "no route": [], "loop": []}
        paper = {v: multipath_table(G, v) for v in G}
        r = check_tables(G, paper)
        assert r["ambiguous"] and r["no route"]

    def test_max_len(self, fig4):
        tables = consistent_tables(fig4, FIG4_CYCLES, max_len=1)
        assert check_tables(fig4, tables) == {"ambiguous": [], "no route": [], "loop": []}

    def test_tree_and_forest(self):
        # no cycles: empty patterns, one entry per reachable destination
        tables = consistent_tables(nx.path_graph(3))
        assert tables == {0: [(1, "", 1), (2, "", 1)], 1: [(0, "", 0), (2, "", 2)], 2: [(0, "", 1), (1, "", 1)]}
        assert walk(nx.path_graph(3), tables, 0, 2, "") == Walk((0, 1, 2), "delivered")
        G = nx.Graph([(0, 1), (1, 2), (0, 2), (3, 4)])
        tables = consistent_tables(G)
        assert tables[3] == [(4, "X", 4)]
        assert check_tables(G, tables) == {"ambiguous": [], "no route": [], "loop": []}

    def test_too_many_cycles(self):
        with pytest.raises(ValueError, match="at most 20"):
            consistent_tables(nx.complete_graph(8))

    @settings(max_examples=40, deadline=None)
    @given(connected_graphs())
    def test_property_consistent(self, G):
        tables = consistent_tables(G)
        C = number_of_cycles(G)
        # every table entry, walked with every matching assignment, arrives along a simple path
        for v, entries in tables.items():
            for e in entries:
                for P in assignments(C):
                    if matches(e.pattern, P):
                        w = walk(G, tables, v, e.destination, P)
                        assert w.outcome == "delivered" and w.path[1] == e.next_hop
                        assert len(set(w.path)) == len(w.path)
        # every assignment reaches every destination from every source
        for s, t in itertools.permutations(G, 2):
            for P in assignments(C):
                assert walk(G, tables, s, t, P).outcome == "delivered"
        # routes are suffix-closed: from any switch on a route, the packet follows the rest of it
        for s, t in itertools.permutations(G, 2):
            for P in assignments(C):
                w = walk(G, tables, s, t, P).path
                assert all(walk(G, tables, v, t, P).path == w[i:] for i, v in enumerate(w[:-1]))

    def test_walk_errors(self, fig4):
        tables = consistent_tables(fig4, FIG4_CYCLES)
        with pytest.raises(ValueError, match="full assignment"):
            walk(fig4, tables, "a", "b", "1X")
        with pytest.raises(ValueError, match="not a neighbour"):
            walk(fig4, {"a": [Entry("b", "XX", "d")]}, "a", "b", "00")
        assert walk(fig4, {}, "a", "b", "00") == Walk(("a",), "no route")


def test_doctests():
    res = doctest.testmod(pathtables, optionflags=doctest.ELLIPSIS)
    assert res.failed == 0 and res.attempted >= 13
    for name in ("consistent_tables",):
        doc = getattr(pathtables, name).__doc__
        assert all(s in doc for s in ("Parameters", "Returns", "Examples", "References")), name
