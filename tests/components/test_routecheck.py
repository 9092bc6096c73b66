"""routecheck on hand-made tables: delivery, loops, path lengths, link load, entries, CDG cycles."""

import attrs
import numpy as np
import pytest

from ibfabric.components.routing.fabric import FabricGraph, Link, NodeSpec
from ibfabric.components.routing.routecheck import RouteReport, cdg_cycle, check_routes, route_walk
from ibfabric.components.routing.tables import NO_PORT, ForwardingTables


def ring(n=4):
    """n switches in a ring (port 1 clockwise to the next one's port 2), host h<i> on port 3 of s<i>.

    Switch LIDs 1..n, host LIDs n+1..2n.
    """
    nodes = [NodeSpec(f"s{i}", True, 3, lid=i + 1) for i in range(n)] + [NodeSpec(f"h{i}", False, 1, lid=n + 1 + i) for i in range(n)]
    links = [Link(i, 1, (i + 1) % n, 2) for i in range(n)] + [Link(n + i, 1, i, 3) for i in range(n)]
    return FabricGraph(nodes, links)


def clockwise(g, n=4):
    """Every switch sends everything clockwise (port 1), except its own LID (0) and its host (3)."""
    lft = np.full((n, g.max_lid + 1), 1, dtype=np.uint8)
    lft[:, 0] = NO_PORT
    for i in range(n):
        lft[i, i + 1] = 0
        lft[i, n + 1 + i] = 3
    return ForwardingTables(g, lft, engine="clockwise")


class TestRouteCheck:
    def test_clockwise_ring_delivers_but_has_a_cycle(self):
        g = ring()
        r = check_routes(clockwise(g))
        assert r.pairs == 8 * 7 and len(r.unreachable) == 0 and len(r.loops) == 0
        assert not r.ok
        # the cycle is the four clockwise channels
        assert sorted(r.cycle) == ["s0 port 1", "s1 port 1", "s2 port 1", "s3 port 1"]
        # h0 -> h3 takes 5 links clockwise instead of 3 the other way
        assert r.max_hops == 5 and r.longer_than_minimum > 0 and r.max_extra_hops == 2

    def test_dateline_vls_break_the_cycle(self):
        g = ring()

        def dateline(src, dst, hop, node, port):
            # VL1 once a packet has left s3 clockwise (it crossed the dateline s3 -> s0)
            start = np.where(g.is_switch[g.ep_node[src]], g.ep_node[src], g.peer_node[g.ep_node[src], 1])
            crossed = (node < start) & g.is_switch[node]
            return crossed.astype(int)

        r = check_routes(clockwise(g), vl=dateline, num_vls=2)
        assert r.cycle == () and r.ok

    def test_loop_and_unreachable(self):
        g = ring()
        t = clockwise(g)
        t.lft[0, 6] = 2  # s0 sends h1's LID back counter-clockwise: s0 <-> s3 ping-pong for LID 6
        t.lft[3, 6] = 1
        t.lft[2, 7] = NO_PORT  # s2 has no entry for h2: nothing reaches h2
        t.lft[1, 8] = 0  # s1 swallows h3's LID
        r = check_routes(t)
        loops = {(g.endpoint_name(int(s)), g.endpoint_name(int(d))) for s, d in r.loops}
        assert ("s0", "h1 port 1") in loops and ("h3 port 1", "h1 port 1") in loops
        lost = {(g.endpoint_name(int(s)), g.endpoint_name(int(d))) for s, d in r.unreachable}
        assert ("s0", "h2 port 1") in lost and ("h0 port 1", "h3 port 1") in lost
        assert ("s3", "h3 port 1") not in lost  # s3 delivers its own host directly
        assert not r.ok

    def test_link_load_counts_routes_per_directed_link(self):
        # s0 - s1, one host on each: 4 endpoints, 12 pairs
        g = FabricGraph(
            [NodeSpec("s0", True, 2, lid=1), NodeSpec("s1", True, 2, lid=2), NodeSpec("a", False, 1, lid=3), NodeSpec("b", False, 1, lid=4)],
            [Link(0, 1, 1, 1), Link(2, 1, 0, 2), Link(3, 1, 1, 2)],
        )
        lft = np.array([[NO_PORT, 0, 1, 2, 1], [NO_PORT, 1, 0, 1, 2]], dtype=np.uint8)
        r = check_routes(ForwardingTables(g, lft))
        load = {(g.nodes[int(n)].name, int(p)): int(c) for (n, p), c in zip(r.channels, r.link_load)}
        # s0 -> s1 carries s0->{s1,b}, a->{s1,b}: 4 routes; a's own link carries a->{s0,s1,b}: 3
        assert load[("s0", 1)] == 4 and load[("a", 1)] == 3 and load[("s0", 2)] == 3
        assert r.max_link_load == 4 and r.mean_link_load == pytest.approx(sum(load.values()) / 6)
        assert r.mean_hops == r.mean_min_hops and r.ok

    def test_default_ports_and_path_offsets_are_followed(self):
        g = ring()
        t = clockwise(g)
        # s1 forgets everything but its own LID and host, and defaults to port 1 (clockwise)
        t.lft[1, :] = NO_PORT
        t.lft[1, 2], t.lft[1, 6] = 0, 3
        t.default_port[1] = 1
        assert check_routes(t).pairs == 56 and len(check_routes(t).unreachable) == 0
        assert check_routes(t).explicit_entries.tolist() == [8, 2, 8, 8] and check_routes(t).default_ports == 1
        # with a path offset of 1 towards h0 (LID 5), packets carry LID 6, which is h1's: misdelivered
        off = np.zeros((8, 8), dtype=np.int64)
        off[:, 4] = 1
        t2 = ForwardingTables(g, t.lft, t.default_port, path_offset=off)
        assert len(check_routes(t2).unreachable) == 7

    def test_report_is_frozen(self):
        r = check_routes(clockwise(ring()))
        assert isinstance(r, RouteReport)
        with pytest.raises(attrs.exceptions.FrozenInstanceError):
            r.pairs = 0
        assert "CYCLE: " in r.summary(ring()) and "56" in r.summary()

    def test_cdg_cycle_helper(self):
        # 0 -> 1 -> 2 -> 0 plus a tail 3 -> 0
        n = 4
        deps = np.array([0 * n + 1, 1 * n + 2, 2 * n + 0, 3 * n + 0])
        assert sorted(cdg_cycle(deps, n)) == [0, 1, 2]
        assert cdg_cycle(np.array([0 * n + 1, 1 * n + 2, 3 * n + 0]), n) == []
        # union of two acyclic sets can be cyclic
        assert sorted(cdg_cycle([np.array([0 * n + 1]), np.array([1 * n + 0])], n)) == [0, 1]

    def test_walk_in_chunks_gives_the_same_result(self):
        g = ring()
        a = route_walk(clockwise(g))
        b = route_walk(clockwise(g), chunk=8)
        assert np.array_equal(a["deps"], b["deps"]) and np.array_equal(a["load"], b["load"])
        assert np.array_equal(np.sort(a["hops"]), np.sort(b["hops"]))


def triangle_lmc1():
    """3 switches in a ring (port 1 clockwise to the next one's port 2), host h<i> on port 3 of s<i> with LMC 1.

    Base LIDs (4, 6, 8) are routed the short way, the odd LIDs (5, 7, 9) clockwise: a host two hops away
    clockwise is reached the long way round, as a second named path.
    """
    nodes = [NodeSpec(f"s{i}", True, 3, lid=i + 1) for i in range(3)]
    nodes += [NodeSpec(f"h{i}", False, 1, lid=4 + 2 * i, lmc=1) for i in range(3)]
    g = FabricGraph(nodes, [Link(i, 1, (i + 1) % 3, 2) for i in range(3)] + [Link(3 + i, 1, i, 3) for i in range(3)])
    lft = np.full((3, g.max_lid + 1), NO_PORT, dtype=np.uint8)
    for i in range(3):
        for j in range(3):
            short = 0 if i == j else 1 if j == (i + 1) % 3 else 2
            lft[i, j + 1] = short
            lft[i, 4 + 2 * j] = 3 if i == j else short
            lft[i, 5 + 2 * j] = 3 if i == j else 1
    return g, ForwardingTables(g, lft, engine="triangle")


class TestEveryLid:
    def test_the_second_lids_routes_close_a_cycle_the_base_lids_do_not(self):
        g, t = triangle_lmc1()
        plain = check_routes(t)
        assert plain.ok and plain.pairs == 6 * 5 and not plain.every_lid
        every = check_routes(t, every_lid=True)
        # each pair once per LID of the destination's range: switches have 1, hosts 2
        assert every.pairs == 3 * 5 * 1 + 3 * 5 * 2 and every.every_lid
        assert sorted(every.cycle) == ["s0 port 1", "s1 port 1", "s2 port 1"]
        assert every.max_extra_hops == 1 and every.longer_than_minimum > 0
        assert every.summary(g).splitlines()[1].startswith("routes:")
        assert "longer than minimum:  " in every.summary(g) and " routes, at most" in every.summary(g)

    def test_walk_gives_each_routes_dlid(self):
        g, t = triangle_lmc1()
        w = route_walk(t, every_lid=True)
        host = ~g.is_switch[g.ep_node[w["dst"]]]
        assert sorted(set(w["dlid"][host].tolist())) == [4, 5, 6, 7, 8, 9]
        assert np.array_equal(w["dlid"][~host], g.ep_lid[w["dst"][~host]])
        assert np.array_equal(route_walk(t)["dlid"], t.dlids(route_walk(t)["src"], route_walk(t)["dst"]))

    def test_a_vl_function_is_refused(self):
        g, t = triangle_lmc1()
        with pytest.raises(ValueError, match="every_lid"):
            route_walk(t, vl=lambda s, d, h, n, p: np.zeros(len(s)), num_vls=1, every_lid=True)
