"""updn-tree: Kim et al.'s Up/Down, routes over breadth-first spanning-tree links only."""

import importlib
from pathlib import Path

import networkx as nx
import numpy as np
import pytest
from routing_cases import RANDOM_CASES, assert_delivers, random_fabric, rng

from ibfabric.components.routing.fabric import FabricGraph, Link, NodeSpec
from ibfabric.components.routing.routecheck import check_routes, route_walk
from ibfabric.errors import ConfigError
from ibfabric.plugins import PluginSet
from ibfabric.plugins.routing import updn, updn_tree
from ibfabric.topologies import load_fabric

KIM15 = Path(__file__).parents[3] / "topologies" / "kim2007_15.ned"


def fig4() -> FabricGraph:
    """The graph of Kim et al. 2007, Fig. 4a, with one host per switch.

    a: port 1 -> b, port 2 -> c            (Fig. 5a: SPF sends c and d to port 2)
    b: port 1 -> a, port 2 -> c, port 3 -> d
    c: port 1 -> a, port 2 -> b, port 3 -> d
    d: port 1 -> b, port 2 -> c
    Host h<x> hangs on the next free port of switch x.
    """
    nodes = [NodeSpec(n, True, 4) for n in "abcd"] + [NodeSpec(f"h{n}", False, 1) for n in "abcd"]
    links = [
        Link(0, 1, 1, 1), Link(0, 2, 2, 1),  # ab, ac
        Link(1, 2, 2, 2), Link(1, 3, 3, 1),  # bc, bd
        Link(2, 3, 3, 2),                    # cd
        Link(4, 1, 0, 3), Link(5, 1, 1, 4), Link(6, 1, 2, 4), Link(7, 1, 3, 3),  # hosts
    ]  # fmt: skip
    return FabricGraph(nodes, links).with_lids()


def tree_only(tables) -> bool:
    """True if every switch-to-switch channel a route uses is a tree link."""
    g = tables.fabric
    r = check_routes(tables)
    tree = {(int(n), int(p)) for n, p in tables.info["tree_links"]}
    used = r.channels[r.link_load > 0]
    sw_sw = g.is_switch[used[:, 0]] & g.is_switch[g.peer_node[used[:, 0], used[:, 1]]]
    return all((int(n), int(p)) in tree for n, p in used[sw_sw])


def port_order_bfs_parents(g: FabricGraph, root_row: int) -> list[int]:
    """Tree parents (switch rows) of a queue-based BFS scanning ports in increasing order (networkx)."""
    d = nx.DiGraph()
    d.add_nodes_from(range(len(g.switches)))
    for r, node in enumerate(g.switches.tolist()):
        for p in g.ports(node):
            peer = int(g.peer_node[node, p])
            if g.is_switch[peer]:
                d.add_edge(r, int(g.switch_row[peer]))  # successors keep insertion (port) order
    parent = [-1] * len(g.switches)
    for u, v in nx.bfs_edges(d, root_row):
        parent[v] = u
    return parent


class TestUpdnTree:
    def test_fig5b_table_of_vertex_a(self):
        # root b: the BFS tree of Fig. 4b is ba, bc, bd (back edges ac, cd); a sends b, c, d to port 1
        g = fig4()
        t = updn_tree.compute(g, {"root": "b"})
        a = g.index("a")
        for x in "bcd":
            assert t.port(a, g.lid_of(g.index(x))) == 1  # the switch x
            assert t.port(a, g.lid_of(g.index(f"h{x}"))) == 1  # its host
        assert t.port(a, g.lid_of(a)) == 0 and t.port(a, g.lid_of(g.index("ha"))) == 3
        assert t.info["parent"].tolist() == [1, -1, 1, 1] and t.info["level"].tolist() == [1, 0, 1, 1]
        assert t.info["root"] == "b" and t.info["root_lid"] == g.lid_of(g.index("b"))

    def test_fig4_unused_back_edges_and_longer_routes(self):
        g = fig4()
        t = updn_tree.compute(g, {"root": "b"})
        assert tree_only(t)
        c, d = g.index("c"), g.index("d")
        # c -> d goes c-b-d (2 links), not over the back edge cd; SPF (Fig. 5a) would take it
        assert t.port(c, g.lid_of(d)) == 2 and int(t.info["distance"][g.switch_row[c], g.lid_of(d)]) == 2
        r = assert_delivers(t)
        assert r.cycle == () and r.longer_than_minimum > 0

    def test_tree_is_the_port_order_bfs_tree(self):
        for case in RANDOM_CASES[::3]:
            g = random_fabric(*case)
            t = updn_tree.compute(g, {})
            root = int(g.switch_row[g.index(t.info["root"])])
            assert t.info["parent"].tolist() == port_order_bfs_parents(g, root)
            hops = g.switch_hops()
            assert np.array_equal(t.info["level"], hops[root])
            assert len(t.info["tree_links"]) == 2 * (len(g.switches) - 1)

    @pytest.mark.parametrize("case", RANDOM_CASES)
    def test_random_fabrics_tree_only_reachable_acyclic(self, case):
        g = random_fabric(*case)
        t = updn_tree.compute(g, {})
        r = assert_delivers(t)
        assert r.cycle == ()
        assert tree_only(t)

    @pytest.mark.parametrize("root", ["sw0", "sw7", "sw14"])
    def test_kim2007_15_acyclic_from_three_roots(self, root):
        # the paper's best-of-three-roots experiment sweeps this option (§5.1)
        g = load_fabric(str(KIM15)).with_lids()
        t = updn_tree.compute(g, {"root": root})
        r = check_routes(t)
        assert r.ok and r.pairs == len(g.ep_lid) * (len(g.ep_lid) - 1), r.summary(g)
        assert tree_only(t)
        # only the 14 tree links of 23 carry switch-to-switch routes: 28 + 2 * 29 host channels
        assert r.cdg_channels == 2 * 14 + 2 * 29

    @pytest.mark.parametrize("lmc", [0, 1])
    @pytest.mark.parametrize("case", RANDOM_CASES[::4])
    def test_no_shorter_than_updn_pair_by_pair(self, case, lmc):
        g = random_fabric(*case, lmc=lmc)
        tree = updn_tree.compute(g, {})
        auto = updn.compute(g, {"root": tree.info["root"]})
        wt, wu = route_walk(tree), route_walk(auto)
        assert np.array_equal(wt["src"], wu["src"]) and np.array_equal(wt["dst"], wu["dst"])
        assert (wt["hops"] > 0).all() and (wt["hops"] >= wu["hops"]).all()

    def test_distance_info_matches_the_walk(self):
        g = random_fabric(16, 4, 1, 3)
        t = updn_tree.compute(g, {"root": "sw5"})
        w = route_walk(t)
        sw_src = g.is_switch[g.ep_node[w["src"]]]
        rows = g.switch_row[g.ep_node[w["src"][sw_src]]]
        lids = g.ep_lid[w["dst"][sw_src]]
        assert np.array_equal(t.info["distance"][rows, lids], w["hops"][sw_src])

    def test_root_by_lid_or_name_default_nearest_the_sm(self):
        g = random_fabric(8, 3, 2, 1)
        sw3 = g.index("sw3")
        by_lid = updn_tree.compute(g, {"root": str(g.lid_of(sw3))})
        assert np.array_equal(by_lid.lft, updn_tree.compute(g, {"root": "sw3"}).lft)
        assert by_lid.info["root"] == "sw3"
        assert updn_tree.compute(g, {}).info["root"] == updn.compute(g, {}).info["root"]

    def test_errors(self):
        g = random_fabric(6, 3, 1, 0)
        with pytest.raises(ConfigError, match=r"unknown option 'bogus' for routing engine 'updn-tree' \(valid: root\)"):
            updn_tree.compute(g, {"bogus": "1"})
        with pytest.raises(ConfigError, match="not a switch"):
            updn_tree.compute(g, {"root": "h0_0"})

    def test_registered_through_its_entry_point(self):
        reg = PluginSet.load().routing_engines.get("updn-tree")
        assert reg.plugin == "updn-tree" and reg.description
        assert reg.obj is importlib.import_module("ibfabric.plugins.routing.updn_tree").compute
        t = reg.obj(fig4(), {"root": "b"}, rng())
        assert t.engine == "updn-tree"

    def test_doctests(self):
        import doctest

        res = doctest.testmod(updn_tree)
        assert res.failed == 0 and res.attempted > 0
