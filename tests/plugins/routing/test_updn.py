"""updn: shortest legal up*/down* routes, consistent without input ports."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from routing_cases import RANDOM_CASES, assert_delivers, chain_fabric, node_of_lid, random_fabric

from ibfabric.components.routing.routecheck import check_routes
from ibfabric.errors import ConfigError
from ibfabric.plugins.routing import fera, minhop, updn
from ibfabric.plugins.routing._common import SwitchView
from ibfabric.plugins.routing._updown import UpDown
from ibfabric.topologies.generators import fat_tree, irregular


def legal(tables, ud):
    """True if no walked route takes an up link after a down link."""
    g = tables.fabric
    exp = tables.expanded()
    for s in range(len(g.ep_lid)):
        for d in range(len(g.ep_lid)):
            if s == d:
                continue
            node = int(g.ep_node[s])
            if not g.is_switch[node]:
                node = int(g.peer_node[node, g.ep_port[s]])
            went_down = False
            lid = tables.dlid(s, d)
            while g.is_switch[node]:
                p = int(exp[g.switch_row[node], lid])
                if p == 0:
                    break
                r = g.switch_row[node]
                nxt = int(g.peer_node[node, p])
                if g.is_switch[nxt]:
                    if ud.up[r, p] and went_down:
                        return False
                    went_down |= bool(ud.down[r, p])
                node = nxt
    return True


class TestUpdn:
    def test_fig1_root_sw1_levels_match_fig4(self, fig1):
        t = updn.compute(fig1, {"root": "1"})
        levels = {fig1.nodes[int(s)].lid: int(t.info["level"][r]) for r, s in enumerate(fig1.switches)}
        assert levels == {1: 0, 2: 1, 3: 1, 5: 2, 6: 2, 8: 2, 9: 2, 10: 3}
        r = assert_delivers(t)
        assert r.cycle == () and r.longer_than_minimum == 0

    def test_shorter_than_fera_where_fera_insists_on_down_links(self):
        g = chain_fabric()
        u, f = updn.compute(g, {"root": "r"}), fera.compute(g, {"root": "r"})
        assert check_routes(u).mean_hops < check_routes(f).mean_hops

    def test_equal_levels_up_towards_lower_guid(self):
        g = chain_fabric()
        ud = UpDown(SwitchView(g), 0)
        # b (GUID 2) - c (GUID 3): up from c to b, down from b to c
        assert ud.up[2, 2] and not ud.up[1, 2]

    @pytest.mark.parametrize("case", RANDOM_CASES)
    def test_random_fabrics_legal_connected_deadlock_free(self, case):
        g = random_fabric(*case)
        t = updn.compute(g, {})
        r = assert_delivers(t)
        assert r.cycle == ()
        ud = UpDown(SwitchView(g), int(g.switch_row[g.index(t.info["root"])]))
        assert legal(t, ud)

    @settings(max_examples=40, deadline=None)
    @given(st.integers(4, 20), st.integers(2, 5), st.integers(0, 2), st.integers(0, 10_000), st.data())
    def test_cdg_acyclic_any_root(self, switches, links, hosts, seed, data):
        g = irregular(switches, links_per_switch=links, hosts_per_switch=hosts, seed=seed).with_lids()
        root = data.draw(st.integers(0, switches - 1))
        t = updn.compute(g, {"root": f"sw{root}"})
        r = check_routes(t)
        assert r.ok, r.summary(g)

    def test_routes_no_longer_than_fera_and_no_shorter_than_minhop(self):
        for seed in range(5):
            g = random_fabric(24, 4, 1, seed)
            u = check_routes(updn.compute(g, {})).mean_hops
            assert check_routes(minhop.compute(g, {})).mean_hops <= u <= check_routes(fera.compute(g, {})).mean_hops

    def test_minimal_on_a_fat_tree_rooted_at_the_top(self):
        # a 4-ary 2-tree rooted at a top switch: every leaf-to-leaf route climbs to the root
        # (the other top switches are below the leaves in this up*/down* graph), still 2 hops
        g = fat_tree(4, 2).with_lids()
        r = assert_delivers(updn.compute(g, {"root": "s0_0"}))
        assert r.longer_than_minimum == 0 and r.cycle == ()
        # minhop's switch-to-switch routes there turn down-up at the leaves: a dependency cycle
        assert check_routes(minhop.compute(g, {})).cycle

    def test_balances_equal_routes_like_minhop(self):
        from test_minhop_spf import two_switches_parallel

        g = two_switches_parallel()
        assert np.array_equal(updn.compute(g, {}).lft, minhop.compute(g, {}).lft)

    def test_distance_info(self, fig1):
        t = updn.compute(fig1, {"root": "1"})
        d = t.info["distance"]
        assert d[fig1.switch_row[node_of_lid(fig1, 10)], 4] == 4  # sw10 -> sw5 -> sw2 -> sw1 -> h4
        assert d[0, 1] == 0

    def test_center_root(self, fig1):
        """root=center: the switch with the smallest sum of switch hops, ties to the lowest node."""
        # in the chain fabric r reaches every switch in one hop (sum 4), c in 1+1+1+2 = 5
        g = chain_fabric()
        assert updn.compute(g, {"root": "center"}).info["root"] == "r"
        # Fig. 1: the switches of LIDs 3 and 6 have the smallest sums (11 hops); LID 3's is the lower node
        hops = fig1.switch_hops()
        sums = {fig1.nodes[int(s)].lid: int(hops[r].sum()) for r, s in enumerate(fig1.switches)}
        assert sums == {1: 13, 2: 13, 3: 11, 5: 17, 6: 11, 8: 17, 9: 17, 10: 15}
        t = updn.compute(fig1, {"root": "center"})
        assert t.info["root_lid"] == 3
        assert assert_delivers(t).cycle == ()
        assert fera.compute(fig1, {"root": "center"}).info["root_lid"] == 3

    def test_bad_root(self, fig1):
        with pytest.raises(ConfigError, match="no endpoint has LID 99"):
            updn.compute(fig1, {"root": "99"})
