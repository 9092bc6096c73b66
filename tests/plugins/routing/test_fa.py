"""The fa routing engine (Martínez et al. 2003): escape entry d, minimal adaptive options, Table 2 shares."""

from __future__ import annotations

import numpy as np
import pytest

from ibfabric.components.routing.fabric import FabricGraph, Link, NodeSpec
from ibfabric.components.routing.routecheck import check_routes
from ibfabric.components.routing.tables import NO_PORT
from ibfabric.errors import ConfigError
from ibfabric.plugins.routing import fa, updn
from ibfabric.topologies.generators import irregular


def ring(n=4):
    sw = [NodeSpec(f"s{i}", True, 3, lid=i + 1) for i in range(n)]
    hosts = [NodeSpec(f"h{i}", False, 1, lid=2 * n + 2 * i, lmc=1) for i in range(n)]
    links = [Link(i, 1, (i + 1) % n, 2) for i in range(n)] + [Link(i, 3, n + i, 1) for i in range(n)]
    return FabricGraph(sw + hosts, links)


class TestTables:
    def test_table2_shares_on_a_ring_by_hand(self):
        # 4 switches x 3 other hosts = 12 pairs: 8 neighbours (1 minimal port), 4 opposite (2 minimal ports)
        t = fa.compute(ring(4), {"root": "s0"})
        assert t.info["option_counts"] == {1: 8 / 12, 2: 4 / 12}
        # 6 switches rooted at s0 (levels 0 1 2 3 2 1): neighbours 1 option, the 6 opposite pairs 2 (both
        # ways minimal), and s2 <-> s4: the minimal route through s3 goes down then up, so the escape
        # route goes round by s0 and the minimal port is a second option: 8 of 30 pairs
        assert fa.compute(ring(6), {"root": "s0"}).info["option_counts"] == {1: 22 / 30, 2: 8 / 30}

    def test_entry_d_is_the_updn_route(self):
        g = ring(6)
        t, u = fa.compute(g, {"root": "s0"}), updn.compute(g, {"root": "s0"})
        base = g.ep_lid[~g.is_switch[g.ep_node]]
        assert np.array_equal(t.lft[:, base], u.lft[:, base])

    @pytest.mark.parametrize("switches, links, seed", [(8, 4, 1), (16, 4, 2), (32, 4, 3), (16, 6, 4), (64, 4, 5)])
    @pytest.mark.parametrize("options", [2, 3, 4])
    def test_generated_fabrics_options_minimal_escape_acyclic(self, switches, links, seed, options):
        g = irregular(switches, links_per_switch=links, hosts_per_switch=4, seed=seed).with_lids(lmc=2)
        t = fa.compute(g, {"options": str(options)})
        assert fa.non_minimal_options(t) == []
        report = check_routes(fa.escape_tables(t))
        assert report.ok, report.cycle  # the escape sub-network: all pairs, no loop, acyclic CDG
        for e in np.flatnonzero(~g.is_switch[g.ep_node]).tolist():  # never more options than asked for
            lo = int(g.ep_lid[e])
            block = t.lft[:, lo:lo + 4]
            assert max(len(set(r.tolist()) - {NO_PORT}) for r in block) <= options
        shares = t.info["option_counts"]
        assert abs(sum(shares.values()) - 1) < 1e-9 and max(shares) <= options

    def test_more_options_never_fewer_choices(self):
        g = irregular(32, links_per_switch=4, hosts_per_switch=4, seed=7).with_lids(lmc=2)
        two = fa.compute(g, {"options": "2"}).info["option_counts"]
        three = fa.compute(g, {"options": "3"}).info["option_counts"]
        assert three.get(1, 0) == pytest.approx(two.get(1, 0))  # single-option pairs have one minimal port
        assert three.get(3, 0) > 0

    def test_lmc_too_small_is_a_clear_error(self):
        g = irregular(8, links_per_switch=4, hosts_per_switch=2, seed=1).with_lids(lmc=1)
        with pytest.raises(ConfigError, match=r"3 routing options need LMC >= 2 \(set the subnet manager's 'lmc'\)"):
            fa.compute(g, {"options": "3"})

    def test_routes_cli_stats_and_check(self, capsys):
        from ibfabric.cli import main

        assert main(["routes", "irregular16", "--routing", "fa", "--lmc", "1", "--check", "--stats"]) == 0
        out = capsys.readouterr().out
        assert "routing options:      1: " in out and "adaptive options:     all minimal" in out
        assert "acyclic (deadlock-free)" in out
