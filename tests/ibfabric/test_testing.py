"""ibfabric.testing, the fixtures plugin authors use: its fabrics match simulations, its walkers catch bad tables."""

from __future__ import annotations

import doctest

import numpy as np
import pytest

import ibfabric.testing as testing
from ibfabric.components.routing.tables import NO_PORT, ForwardingTables
from ibfabric.errors import ConfigError
from ibfabric.plugins.routing.minhop import compute as minhop
from ibfabric.testing import (
    SMALL_TOPOLOGIES,
    assert_deadlock_free,
    assert_delivers,
    build_simulation,
    small_fabric_graph,
    small_topology,
    trace_route,
)


def test_doctests():
    assert doctest.testmod(testing).failed == 0


class TestSmallFabrics:
    @pytest.mark.parametrize("name", list(SMALL_TOPOLOGIES))
    def test_the_graph_is_the_simulations_with_its_lids(self, name):
        g = small_fabric_graph(name)
        sim = build_simulation(name, check=False)
        assert [nd.name for nd in g.nodes] == [m.path for m in sim.ib_nodes]
        assert (g.ep_lid == sim.tables.fabric.ep_lid).all() and g.lids_complete

    def test_sizes(self):
        sizes = {name: (len(small_fabric_graph(name).switches), len(small_fabric_graph(name).cas)) for name in SMALL_TOPOLOGIES}
        assert sizes == {"chain": (3, 2), "star": (1, 4), "irregular16": (16, 64), "fat-tree": (12, 8)}

    def test_lmc(self):
        g = small_fabric_graph("fat-tree", lmc=2)
        assert set(g.ep_lmc[~g.is_switch[g.ep_node]].tolist()) == {2}

    def test_unknown_name_lists_the_valid_ones(self):
        with pytest.raises(ConfigError, match=r"no small topology 'ring' \(valid: chain, star, irregular16, fat-tree\)"):
            small_topology("ring")

    def test_other_topologies_pass_through(self):
        sim = build_simulation(testing.STAR_NED.replace("int k = 4;", "int k = 3;"), overrides={"**.traffic": "uniform", "**.load": "0.2"})
        assert len(sim.hosts) == 3 and sim.check


def chain_tables():
    """The chain a - sw0 - sw1 - sw2 - b with min-hop routes, and its endpoints a and b."""
    g = small_fabric_graph("chain")
    a, b = g.endpoint_of(g.index("chain.a")), g.endpoint_of(g.index("chain.b"))
    return minhop(g, {}, np.random.default_rng(0)), a, b


class TestTraceRoute:
    def test_follows_the_entries(self):
        t, a, b = chain_tables()
        assert trace_route(t, a, b) == [(0, 2), (1, 2), (2, 2)]
        assert trace_route(t, b, a) == [(2, 1), (1, 1), (0, 1)]
        sw1 = t.fabric.endpoint_of(1)
        assert trace_route(t, a, sw1) == [(0, 2), (1, 0)]  # to a switch: its port 0

    def test_a_missing_entry(self):
        t, a, b = chain_tables()
        t.lft[1, t.fabric.ep_lid[b]] = NO_PORT
        with pytest.raises(AssertionError, match=r"chain.sw\[1\] has no entry for DLID 5"):
            trace_route(t, a, b)

    def test_a_loop(self):
        t, a, b = chain_tables()
        t.lft[1, t.fabric.ep_lid[b]] = 1  # sw1 sends b's packets back to sw0, which sends them to sw1
        with pytest.raises(AssertionError, match="loop from chain.a port 1 to chain.b port 1"):
            trace_route(t, a, b)

    def test_the_wrong_destination(self):
        t, a, b = chain_tables()
        t.lft[0, t.fabric.ep_lid[b]] = 1  # sw0 sends b's packets to a
        with pytest.raises(AssertionError, match="arrives at chain.a port 1, not chain.b port 1"):
            trace_route(t, a, b)


class TestAssertions:
    def test_delivers(self):
        t, a, b = chain_tables()
        assert assert_delivers(t).pairs == 5 * 4
        t.lft[2, t.fabric.ep_lid[a]] = NO_PORT
        with pytest.raises(AssertionError, match="unreachable: +[1-9]"):
            assert_delivers(t)

    def test_deadlock_free(self):
        g = small_fabric_graph("irregular16")
        t = minhop(g, {}, np.random.default_rng(0))
        assert_delivers(t)  # min-hop delivers everything on irregular16 ...
        with pytest.raises(AssertionError, match="CYCLE"):  # ... through a cyclic channel dependency graph
            assert_deadlock_free(t)
        assert assert_deadlock_free(build_simulation("irregular16", check=False).tables).cycle == ()  # up*/down*

    def test_empty_tables_are_caught(self):
        g = small_fabric_graph("star")
        with pytest.raises(AssertionError, match="unreachable"):
            assert_delivers(ForwardingTables(g))
