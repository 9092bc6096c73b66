"""minhop (OpenSM-style balancing) and spf (Kim et al. 2007, §3.1)."""

import numpy as np
import pytest
from routing_cases import RANDOM_CASES, assert_delivers, random_fabric

from ibfabric.components.routing.fabric import FabricGraph, Link, NodeSpec
from ibfabric.components.routing.tables import NO_PORT
from ibfabric.errors import ConfigError
from ibfabric.plugins.routing import minhop, spf


def two_switches_parallel(lmc=0, hosts=4):
    """s1 and s2 joined by links on ports 1, 2 and 3; hosts on s1 ports 4.. and s2 ports 4.."""
    nodes = [NodeSpec("s1", True, 3 + hosts, lid=1), NodeSpec("s2", True, 3 + hosts, lid=2)]
    links = [Link(0, 1, 1, 1), Link(0, 2, 1, 2), Link(0, 3, 1, 3)]
    for i in range(hosts):
        nodes.append(NodeSpec(f"a{i}", False, 1))
        links.append(Link(len(nodes) - 1, 1, 0, 4 + i))
        nodes.append(NodeSpec(f"b{i}", False, 1))
        links.append(Link(len(nodes) - 1, 1, 1, 4 + i))
    return FabricGraph(nodes, links).with_lids(lmc=lmc)


class TestMinhop:
    @pytest.mark.parametrize("case", RANDOM_CASES)
    def test_every_route_is_a_minimum_hop_route(self, case):
        r = assert_delivers(minhop.compute(random_fabric(*case), {}))
        assert r.longer_than_minimum == 0 and r.mean_hops == r.mean_min_hops

    def test_parallel_links_share_the_load(self):
        g = two_switches_parallel()
        t = minhop.compute(g, {})
        s1 = 0
        # the five LIDs behind s2 (s2 itself and b0..b3) in LID order spread round-robin over ports 1-3
        far = sorted([g.lid_of(1)] + [g.lid_of(g.index(f"b{i}"), 1) for i in range(4)])
        ports = [int(t.lft[s1, lid]) for lid in far]
        assert ports == [1, 2, 3, 1, 2]

    def test_lmc_range_spreads_over_equal_cost_ports(self):
        g = two_switches_parallel(lmc=2, hosts=1)
        t = minhop.compute(g, {})
        b0 = g.endpoint_of(g.index("b0"), 1)
        lo = int(g.ep_lid[b0])
        ports = [t.port(0, lid) for lid in range(lo, lo + 4)]
        assert sorted(ports[:3]) == [1, 2, 3]  # one LID per link before any link gets a second
        assert t.port(1, lo) == t.port(1, lo + 3) == 4  # every LID of the range is delivered by s2

    def test_ties_go_to_the_lowest_port_and_own_lid_to_port_0(self):
        g = two_switches_parallel(hosts=0)
        t = minhop.compute(g, {})
        assert t.lft[:, 1:3].tolist() == [[0, 1], [1, 0]]

    def test_unreachable_lids_have_no_entry(self):
        g = FabricGraph([NodeSpec("s1", True, 2, lid=1), NodeSpec("s2", True, 2, lid=2)], [])
        t = minhop.compute(g, {})
        assert t.lft[0, 2] == NO_PORT and t.lft[0, 1] == 0

    def test_no_options(self):
        with pytest.raises(ConfigError, match=r"unknown option 'root' for routing engine 'minhop' \(valid: none\)"):
            minhop.compute(random_fabric(6, 3, 1, 0), {"root": "1"})


class TestSPF:
    @pytest.mark.parametrize("case", RANDOM_CASES[::3])
    def test_hops_cost_is_minhop(self, case):
        g = random_fabric(*case)
        a, b = spf.compute(g, {}), minhop.compute(g, {})
        assert np.array_equal(a.lft, b.lft)

    def test_inverse_rate_avoids_slow_links(self):
        # triangle: s1-s3 directly over a 1x SDR link (2 Gb/s) or via s2 over 4x QDR (32 Gb/s)
        g = FabricGraph(
            [NodeSpec("s1", True, 2, lid=1), NodeSpec("s2", True, 2, lid=2), NodeSpec("s3", True, 2, lid=3)],
            [Link(0, 1, 1, 1, "4x", "QDR"), Link(1, 2, 2, 1, "4x", "QDR"), Link(0, 2, 2, 2, "1x", "SDR")],
        )
        assert spf.compute(g, {}).port(0, 3) == 2
        t = spf.compute(g, {"cost": "1/rate"})
        assert t.port(0, 3) == 1 and t.info["cost"][0, 2] == pytest.approx(2.0)

    def test_python_cost_function(self):
        g = random_fabric(12, 4, 1, 1)
        # make every link touching sw0 expensive: only sw0's own traffic should use them
        t = spf.compute(g, {"cost": lambda ln: 100.0 if 0 in (ln.a, ln.b) else 1.0})
        assert_delivers(t)
        assert t.info["cost_function"] == "<lambda>"
        from ibfabric.components.routing.routecheck import check_routes

        load = check_routes(t).link_load
        plain = check_routes(minhop.compute(g, {})).link_load
        chans = check_routes(t).channels
        into0 = [i for i, (n, p) in enumerate(chans) if g.is_switch[n] and g.peer_node[n, p] == 0]
        assert load[into0].sum() < plain[into0].sum()

    def test_bad_costs(self):
        g = random_fabric(6, 3, 1, 0)
        with pytest.raises(ConfigError, match=r"'cost': must be one of \(hops, 1/rate\)"):
            spf.compute(g, {"cost": "latency"})
        with pytest.raises(ConfigError, match="must be positive and finite"):
            spf.compute(g, {"cost": lambda ln: 0.0})

    @pytest.mark.parametrize("case", RANDOM_CASES[::4])
    def test_loop_free_with_rate_costs(self, case):
        from ibfabric.topologies.generators import irregular

        s, d, h, seed = case
        g = irregular(s, links_per_switch=d, hosts_per_switch=h, seed=seed)
        # every third link slower
        from ibfabric.components.routing.fabric import FabricGraph as FG
        import attrs

        links = [attrs.evolve(ln, width="1x", rate=0.0) if k % 3 == 0 else ln for k, ln in enumerate(g.links)]
        g2 = FG(g.nodes, links).with_lids()
        r = assert_delivers(spf.compute(g2, {"cost": "1/rate"}))
        assert r.pairs > 0
