"""sssp, dfsssp and lash: balanced shortest paths, and virtual layers that keep every layer acyclic."""

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from routing_cases import random_fabric

from ibfabric.components.routing.routecheck import check_routes
from ibfabric.errors import ConfigError
from ibfabric.plugins.routing import lash, minhop, sssp
from ibfabric.plugins.routing.lash import DynamicOrder
from ibfabric.plugins.routing.metrics import walk_pairs
from ibfabric.topologies import load_fabric
from ibfabric.topologies.generators import fat_tree, torus

ROOT = Path(__file__).resolve().parents[3]
SHIPPED = sorted(ROOT.glob("topologies/*.ned")) + [ROOT / "tests/data/ibnetdiscover/cluster2014_8sw_144hca.ibnetdiscover"]


def per_layer(tables):
    """check_routes with one channel dependency graph per VL."""
    vl, n = tables.vl_function()
    return check_routes(tables, vl=vl, num_vls=n)


def ca_switch_link_max(tables):
    """Most CA-to-CA routes on one switch-to-switch link."""
    g = tables.fabric
    ca = np.flatnonzero(~g.is_switch[g.ep_node])
    src, dst = np.repeat(ca, len(ca)), np.tile(ca, len(ca))
    keep = src != dst
    hops, node, port, _ = walk_pairs(tables, src[keep], dst[keep])
    assert (hops >= 0).all()
    return int(np.bincount(node * g.peer_node.shape[1] + port).max())


class TestSSSP:
    @pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.name)
    def test_max_link_load_not_above_minhops_on_the_shipped_fabrics(self, path):
        g = load_fabric(str(path)).with_lids()
        ours = sssp.compute_sssp(g, {})
        assert ca_switch_link_max(ours) <= ca_switch_link_max(minhop.compute(g, {}))
        r = check_routes(ours)
        assert not len(r.unreachable) and not len(r.loops) and r.longer_than_minimum == 0

    def test_balances_a_fat_tree_like_ftree(self):
        # 4-ary 3-tree: 64 hosts, 16 up ports per level; uniform traffic loads every link alike
        g = fat_tree(4, 3).with_lids()
        assert ca_switch_link_max(sssp.compute_sssp(g, {})) == 60  # (64 - 4) routes down into each leaf port

    def test_lmc_ranges_spread_and_output_is_deterministic(self):
        g = random_fabric(12, 4, 1, 2, lmc=1)
        a, b = sssp.compute_sssp(g, {}), sssp.compute_sssp(g, {})
        assert np.array_equal(a.lft, b.lft)
        lids = g.ep_lid[~g.is_switch[g.ep_node]]
        assert (a.lft[:, lids] != a.lft[:, lids + 1]).any()  # the two LIDs of a port take different ports somewhere


class TestVirtualLayers:
    @settings(max_examples=25, deadline=None)
    @given(st.integers(6, 20), st.integers(3, 5), st.integers(0, 2), st.integers(0, 10_000), st.integers(0, 1),
           st.sampled_from(["dfsssp", "lash"]))
    def test_deadlock_free_per_layer_and_shortest_on_random_fabrics(self, switches, links, hosts, seed, lmc, engine):
        g = random_fabric(switches, links, hosts, seed, lmc=lmc)
        compute = sssp.compute_dfsssp if engine == "dfsssp" else lash.compute
        t = compute(g, {})
        r = per_layer(t)
        assert r.ok, r.summary(g)
        assert r.longer_than_minimum == 0
        assert t.info["sls_used"] <= 8 and t.sl2vl[: t.info["sls_used"]] == tuple(range(t.info["sls_used"]))

    @pytest.mark.parametrize("compute", [sssp.compute_dfsssp, lash.compute])
    def test_a_ring_needs_a_second_layer_and_one_vl_is_refused(self, compute):
        g = torus((6,)).with_lids()
        assert check_routes(minhop.compute(g, {})).cycle  # shortest paths round a ring close a cycle
        t = compute(g, {"balance": "false"})
        assert t.info["layers_needed"] == 2 and per_layer(t).ok
        with pytest.raises(ConfigError, match="1 VLs do not suffice") as exc:
            compute(g, {"vls": "1"})
        assert "\n" not in str(exc.value)

    @pytest.mark.parametrize("compute", [sssp.compute_dfsssp, lash.compute])
    def test_balance_spreads_routes_over_the_vls(self, compute):
        g = torus((4, 4)).with_lids()
        lids = np.flatnonzero(g.lid_owner >= 0)
        raw = compute(g, {"balance": "false"})
        t = compute(g, {"vls": "8"})
        before = np.bincount(raw.path_sl[:, lids].ravel())
        after = np.bincount(t.path_sl[:, lids].ravel(), minlength=8)
        assert len(after) == 8 and after.min() > 0 and after.max() < before.max()
        assert per_layer(t).ok

    def test_lash_uses_one_sl_both_ways_between_two_switches(self):
        g = torus((4, 4)).with_lids()
        t = lash.compute(g, {})
        sw_lids = np.array([g.lid_of(int(n)) for n in g.switches])
        sl = t.path_sl[:, sw_lids]
        assert np.array_equal(sl, sl.T)


class TestDynamicOrder:
    def test_refuses_the_edge_that_closes_a_cycle_and_keeps_a_topological_order(self):
        d = DynamicOrder(4)
        assert d.add(3, 2) and d.add(2, 1) and d.add(1, 0)
        assert not d.add(0, 3)  # 3 -> 2 -> 1 -> 0 -> 3
        assert d.add(3, 0)  # a shortcut is fine
        self.assert_ordered(d)
        assert not d.add(0, 2)
        d.remove(1, 0)
        assert d.add(0, 1) and d.add(0, 2)  # nothing leads back to 0 any more
        self.assert_ordered(d)
        assert not d.add(1, 3)

    @staticmethod
    def assert_ordered(d):
        for a, outs in d.succ.items():
            assert all(d.ord[a] < d.ord[b] for b in outs)
