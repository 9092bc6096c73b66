"""The routing view of a subnet: ports, links, LIDs and their assignment."""

from __future__ import annotations

import numpy as np
import pytest

from ibfabric.components.routing.fabric import FabricGraph, Link, NodeSpec
from ibfabric.components.routing.tables import NO_PORT, ForwardingTables
from ibfabric.errors import TopologyError


def small(**kw):
    # sw0 -- sw1, h0 on sw0, h1 (two ports) on sw1 by port 2, its port 1 free
    nodes = [NodeSpec("sw0", True, 4), NodeSpec("sw1", True, 4), NodeSpec("h0", False, 1), NodeSpec("h1", False, 2, **kw)]
    links = [Link(0, 1, 1, 1), Link(2, 1, 0, 2), Link(3, 2, 1, 3)]
    return FabricGraph(nodes, links)


class TestStructure:
    def test_peers_both_ways(self):
        g = small()
        assert (g.peer_node[0, 1], g.peer_port[0, 1]) == (1, 1)
        assert (g.peer_node[3, 2], g.peer_port[3, 2]) == (1, 3)
        assert g.ports(3) == [2]
        assert g.attachment(g.endpoint_of(3)) == (1, 3)

    def test_switch_hops_and_networkx(self):
        g = small()
        assert g.switch_hops().tolist() == [[0, 1], [1, 0]]
        nx_g = g.to_networkx()
        assert nx_g.number_of_nodes() == 4 and nx_g.number_of_edges() == 3
        assert nx_g.nodes[3]["name"] == "h1"

    @pytest.mark.parametrize("links, message", [
        ([Link(0, 1, 1, 1), Link(0, 1, 2, 1)], "port 1 of sw0 has two links"),
        ([Link(0, 9, 1, 1)], "sw0 has no port 9"),
        ([Link(0, 1, 7, 1)], "node 7, which does not exist"),
    ])
    def test_bad_links(self, links, message):
        with pytest.raises(TopologyError, match=message):
            FabricGraph([NodeSpec("sw0", True, 4), NodeSpec("sw1", True, 4), NodeSpec("h0", False, 1)], links)

    def test_lid_clash(self):
        with pytest.raises(TopologyError, match="LID 5 is used by both"):
            FabricGraph([NodeSpec("sw0", True, 4, lid=5), NodeSpec("h0", False, 1, lid=5)], [Link(0, 1, 1, 1)])


class TestLidAssignment:
    def test_breadth_first_from_the_subnet_manager(self):
        g = small().with_lids()
        # the SM runs on the first CA (h0): h0, then sw0, then sw1, then h1's port 2
        assert [g.lid_of(i) for i in (2, 0, 1, 3)] == [1, 2, 3, 4]
        assert g.lid_of(3, 2) == 4

    def test_existing_lids_are_kept_and_lmc_ranges_aligned(self):
        g = FabricGraph(
            [NodeSpec("sw0", True, 4, lid=1), NodeSpec("h0", False, 1), NodeSpec("h1", False, 1)],
            [Link(0, 1, 1, 1), Link(0, 2, 2, 1)],
        ).with_lids(lmc=2)
        assert g.lid_of(0) == 1
        lids = sorted((g.lid_of(1), g.lid_of(2)))
        assert lids == [4, 8]  # multiples of 2**2, after LID 1 is taken
        e = int(g.lid_owner[4])
        assert g.ep_lid[e] == 4 and g.ep_lmc[e] == 2 and (g.lid_owner[4:8] == e).all()

    def test_large_fabric_is_linear(self):
        # 3000 hosts, 250 on each of 12 chained 254-port switches
        n, per = 3000, 250
        sws = n // per
        nodes = [NodeSpec(f"sw{s}", True, 254) for s in range(sws)] + [NodeSpec(f"h{i}", False, 1) for i in range(n)]
        links = [Link(s, 251, s + 1, 252) for s in range(sws - 1)]
        links += [Link(sws + i, 1, i // per, i % per + 1) for i in range(n)]
        g = FabricGraph(nodes, links, sm_node=sws).with_lids()
        assert sorted(g.ep_lid.tolist()) == list(range(1, n + sws + 1))


class TestWithLmc:
    """LIDs given with LMC 0 (a dump, a NED file) moved for a larger LMC, as OpenSM moves them."""

    @staticmethod
    def star(*lids, sw_lid=1, **kw):
        # sw0 with one host per port, the SM on h0
        n = len(lids)
        nodes = [NodeSpec("sw0", True, n + 1, lid=sw_lid)] + [NodeSpec(f"h{i}", False, 1, lid=lid, **kw)
                                                              for i, lid in enumerate(lids)]
        return FabricGraph(nodes, [Link(0, i + 1, i + 1, 1) for i in range(n)], sm_node=1)

    def test_aligned_free_blocks_stay_the_others_move(self):
        g = self.star(2, 3, 4, 7, 10)  # switch LID 1; hosts 2, 3, 4, 7, 10
        g2, moved = g.with_lmc(1)
        # h0 keeps 2..3, so h1's 3 moves; h2 keeps 4..5; h3's 7 is odd; h4 keeps 10..11
        assert [g2.lid_of(i) for i in range(6)] == [1, 2, 6, 4, 8, 10]
        assert moved == [(g.endpoint_of(2), 3, 6), (g.endpoint_of(4), 7, 8)]
        cas = ~g2.is_switch[g2.ep_node]
        assert (g2.ep_lmc[cas] == 1).all() and (g2.ep_lid[cas] % 2 == 0).all()
        assert g2.ep_lmc[~cas].tolist() == [0]  # switches keep their LMC and LID

    def test_every_port_then_owns_its_block(self):
        g2, moved = self.star(*range(2, 12)).with_lmc(2)
        owners = g2.lid_owner[g2.lid_owner >= 0]
        assert len(owners) == 1 + 10 * 4  # no LID shared: FabricGraph checks it, and every block is whole
        for e in np.flatnonzero(~g2.is_switch[g2.ep_node]).tolist():
            lid = int(g2.ep_lid[e])
            assert lid % 4 == 0 and (g2.lid_owner[lid:lid + 4] == e).all()
        assert len(moved) == 8  # only 4 and 8 were aligned

    def test_lmc_0_and_lids_that_fit_move_nothing(self):
        g = self.star(2, 3, 4)
        assert g.with_lmc(0)[1] == [] and g.with_lmc(0)[0].ep_lid.tolist() == g.ep_lid.tolist()
        g = self.star(4, 8, 12)
        g2, moved = g.with_lmc(2)
        assert moved == [] and g2.ep_lid.tolist() == g.ep_lid.tolist() and g2.ep_lmc.tolist() == [0, 2, 2, 2]

    def test_a_larger_lmc_of_its_own_is_kept(self):
        g2, moved = self.star(4, 8, lmc=2).with_lmc(1)
        assert moved == [] and g2.ep_lmc.tolist() == [0, 2, 2]

    def test_missing_lids_are_given_too(self):
        g2, moved = self.star(2, 0, 5).with_lmc(1)
        # breadth-first from the SM: h1 (no LID) gets the first free block, then h2 (5, odd) the next
        assert moved == [(g2.endpoint_of(3), 5, 6)] and [g2.lid_of(i) for i in range(4)] == [1, 2, 4, 6]

    def test_deterministic_and_breadth_first_from_the_subnet_manager(self):
        a, b = self.star(3, 5, 7).with_lmc(1), self.star(3, 5, 7).with_lmc(1)
        assert a[1] == b[1] == [(1, 3, 2), (2, 5, 4), (3, 7, 6)]

    def test_bad_lmc(self):
        with pytest.raises(Exception, match="'lmc' must be in 0..7"):
            self.star(2).with_lmc(8)


class TestForwardingTables:
    def test_default_port_fills_only_owned_lids(self):
        g = small().with_lids()
        lft = np.full((2, g.max_lid + 1), NO_PORT, dtype=np.uint8)
        lft[0, 2] = 0
        t = ForwardingTables(g, lft, np.array([1, -1]))
        assert t.is_random
        full = t.expanded()
        assert full[0].tolist() == [NO_PORT, 1, 0, 1, 1]
        assert full[1].tolist() == [NO_PORT] * 5
        assert t.port(0, 4) == 1 and t.explicit_entries().tolist() == [1, 0]

    def test_shape_is_checked(self):
        g = small().with_lids()
        with pytest.raises(ValueError, match="lft must have shape"):
            ForwardingTables(g, np.zeros((2, 3), dtype=np.uint8))


class TestParseOptions:
    def test_spaces_and_commas_separate_options(self):
        from ibfabric.components.node import parse_options

        assert parse_options("root=1 father=random", "x", "o") == {"root": "1", "father": "random"}
        assert parse_options("root=1,father=random", "x", "o") == {"root": "1", "father": "random"}

    def test_a_value_may_hold_commas(self):
        from ibfabric.components.node import parse_options

        assert parse_options("fathers=6:3,10:6 root=1", "x", "o") == {"fathers": "6:3,10:6", "root": "1"}

    def test_a_bare_word_is_an_error(self):
        from ibfabric.components.node import parse_options
        from ibfabric.errors import ConfigError

        with pytest.raises(ConfigError, match="'o' must be 'key=value ...' \\(got 'oops'\\)"):
            parse_options("root=1 oops", "x", "o")


class TestFromNetwork:
    NED = """
    network n {
        submodules: a: Switch { guid = "%s"; } b: HCA; c: HCA;
        connections:
            a.port[1] <--> Link { width = "1x"; speed = "SDR"; dataRate = 2.5Gbps; } <--> b.port[1];
            a.port[2] <--> Link { width = "4x"; speed = "QDR"; } <--> c.port[1];
    }
    """

    def test_same_fabric_as_the_subnet_manager_sees(self):
        from ibfabric.ned_like import elaborate
        from ibfabric.simulation import Simulation

        text = self.NED % "0x2c9"
        offline = FabricGraph.from_network(elaborate(text))
        sim = Simulation(text)
        assert [ln.rate for ln in offline.links] == [ln.rate for ln in sim.fabric.links] == [2.5e9, 32e9]
        assert offline.guid(0) == sim.fabric.guid(0) == 0x2C9

    def test_bad_guid_is_a_located_config_error(self):
        from ibfabric.errors import ConfigError
        from ibfabric.ned_like import elaborate

        with pytest.raises(ConfigError, match=r"^<string>:\d+:\d+: n.a: 'guid' must be a non-zero 64-bit hexadecimal number .*\(got 'xyz'\)"):
            FabricGraph.from_network(elaborate(self.NED % "xyz"))


class TestAttachments:
    def test_arrays_agree_with_attachment(self):
        # h2 and h3 are joined back to back: no switch reaches them
        nodes = [NodeSpec("sw0", True, 4), NodeSpec("sw1", True, 4), NodeSpec("h0", False, 1),
                 NodeSpec("h1", False, 2), NodeSpec("h2", False, 1), NodeSpec("h3", False, 1)]
        links = [Link(0, 1, 1, 1), Link(2, 1, 0, 2), Link(3, 2, 1, 3), Link(3, 1, 0, 3), Link(4, 1, 5, 1)]
        g = FabricGraph(nodes, links)
        node, port = g.attachments()
        assert [(int(n), int(p)) for n, p in zip(node, port)] == [g.attachment(e) for e in range(len(g.ep_lid))]
        assert g.attachment(g.endpoint_of(4, 1)) == (-1, -1)
        assert g.attachment(g.endpoint_of(3, 1)) == (0, 3) and g.attachment(g.endpoint_of(3, 2)) == (1, 3)


def test_doctests():
    import doctest

    from ibfabric.components.routing import fabric

    assert doctest.testmod(fabric).failed == 0
