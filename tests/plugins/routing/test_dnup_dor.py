"""dnup (up*/down* ranked from the adapters) and dor (dimension order by lowest port)."""

import pytest
from routing_cases import random_fabric

from ibfabric.components.routing.fabric import FabricGraph, Link, NodeSpec
from ibfabric.components.routing.routecheck import check_routes
from ibfabric.errors import ConfigError
from ibfabric.plugins.routing import dnup, dor, minhop
from ibfabric.topologies.generators import fat_tree, hypercube, mesh, torus


def ca_pairs_unreachable(report, g):
    ca = ~g.is_switch[g.ep_node]
    u = report.unreachable
    return int((ca[u[:, 0]] & ca[u[:, 1]]).sum())


class TestDnup:
    def test_ranks_count_hops_from_the_adapters(self):
        t = dnup.compute(fat_tree(3, 3).with_lids(), {})
        # fat_tree lists the top level first: tops are 2 hops from the leaves
        assert t.info["rank"].tolist() == [2] * 9 + [1] * 9 + [0] * 9

    def test_hosts_on_a_spine_switch(self):
        # leaves l0, l1 (2 hosts each) under spines s0, s1; s0 also has an I/O host, so dnup ranks it
        # with the leaves (equal ranks: up towards the lower GUID, s0's)
        nodes = [NodeSpec("s0", True, 3, guid=1), NodeSpec("s1", True, 2, guid=2),
                 NodeSpec("l0", True, 4, guid=3), NodeSpec("l1", True, 4, guid=4)]
        links = [Link(2, 3, 0, 1), Link(2, 4, 1, 1), Link(3, 3, 0, 2), Link(3, 4, 1, 2)]
        for i, leaf in enumerate([2, 2, 3, 3, 0]):
            nodes.append(NodeSpec(f"h{i}", False, 1))
            links.append(Link(len(nodes) - 1, 1, leaf, [1, 2, 1, 2, 3][i]))
        g = FabricGraph(nodes, links).with_lids()
        t = dnup.compute(g, {})
        assert t.info["rank"].tolist() == [0, 1, 0, 0]
        r = check_routes(t)
        assert ca_pairs_unreachable(r, g) == 0 and not r.cycle, r.summary(g)
        # only the top switch s1 and the hosts on the other spine s0 need a down-then-up turn
        s1 = g.endpoint_of(g.index("s1"))
        assert len(r.unreachable) == 4 and (r.unreachable == s1).any(axis=1).all()

    @pytest.mark.parametrize("k, n", [(2, 3), (4, 2), (3, 3)])
    def test_fat_trees_deliver_every_ca_pair_shortest_and_deadlock_free(self, k, n):
        g = fat_tree(k, n).with_lids()
        r = check_routes(dnup.compute(g, {}))
        assert ca_pairs_unreachable(r, g) == 0 and not r.cycle and not len(r.loops)
        assert r.longer_than_minimum == 0

    def test_fabrics_where_no_legal_route_joins_two_leaves_are_refused(self):
        with pytest.raises(ConfigError, match="dnup': no legal down\\*/up\\* route from sw0 to sw1") as exc:
            dnup.compute(random_fabric(8, 3, 1, 0), {})
        assert "\n" not in str(exc.value)


class TestDor:
    @pytest.mark.parametrize("fabric", [mesh((4, 4)), mesh((3, 3, 3)), hypercube(4), mesh((5,), hosts_per_switch=2)],
                             ids=["mesh4x4", "mesh3x3x3", "hypercube4", "line5"])
    def test_meshes_and_hypercubes_are_deadlock_free_and_shortest(self, fabric):
        g = fabric.with_lids()
        r = check_routes(dor.compute(g, {}))
        assert r.ok and r.longer_than_minimum == 0, r.summary(g)

    def test_minhop_on_the_same_mesh_has_a_cycle(self):
        assert check_routes(minhop.compute(mesh((4, 4)).with_lids(), {})).cycle

    def test_corrects_dimensions_in_increasing_order(self):
        g = mesh((4, 4, 3)).with_lids()
        t = dor.compute(g, {})
        # from sw0_0_0 to sw3_2_1: x three times (port 1), then y twice (port 3), then z (port 5)
        lid = g.lid_of(g.index("h3_2_1_0"))
        node, ports = g.index("sw0_0_0"), []
        while g.is_switch[node]:
            p = t.port(node, lid)
            ports.append(p)
            node = int(g.peer_node[node, p])
        assert ports == [1, 1, 1, 3, 3, 5, 7]

    def test_a_torus_keeps_its_ring_cycles(self):
        assert check_routes(dor.compute(torus((4, 4)).with_lids(), {})).cycle

    def test_parallel_links_share_the_routes(self):
        # two switches joined by two links, three hosts on each
        nodes = [NodeSpec("a", True, 5), NodeSpec("b", True, 5)] + [NodeSpec(f"h{i}", False, 1) for i in range(6)]
        links = [Link(0, 4, 1, 4), Link(0, 5, 1, 5)] + [Link(2 + i, 1, i // 3, i % 3 + 1) for i in range(6)]
        g = FabricGraph(nodes, links).with_lids()
        t = dor.compute(g, {})
        lids = [g.lid_of(g.index(f"h{i}")) for i in range(3, 6)]
        assert sorted({t.port(0, lid) for lid in lids}) == [4, 5]
