"""FERa (Bermúdez et al. 2006, §2.3) against the paper's Fig. 6, entry by entry."""

import re

import numpy as np
import pytest
from routing_cases import RANDOM_CASES, assert_delivers, chain_fabric, node_of_lid, random_fabric

from ibfabric.components.routing.routecheck import check_routes
from ibfabric.errors import ConfigError
from ibfabric.plugins.routing import fera, updn

#: Fig. 6 of the paper: for each destination LID, the entries "switch LID:port(distance)" in
#: the order FERa's flooding finds them, for the subnet of Fig. 1 with the directed graph of Fig. 4.
FIG6 = {
    1: "1:0(0) 2:1(1) 3:1(1) 5:2(2) 6:1(2) 8:1(2) 9:1(2) 10:1(3)",
    2: "2:0(0) 1:1(1) 5:2(1) 6:1(1) 3:1(2) 10:1(2) 8:1(3) 9:1(3)",
    3: "3:0(0) 1:2(1) 8:1(1) 9:1(1) 6:2(1) 2:1(2) 10:2(2) 5:2(3)",
    4: "1:3(1) 2:1(2) 3:1(2) 5:2(3) 6:1(3) 8:1(3) 9:1(3) 10:1(4)",
    5: "5:0(0) 10:1(1) 2:2(1) 1:1(2) 6:1(2) 3:1(3) 8:1(4) 9:1(4)",
    6: "6:0(0) 2:3(1) 3:4(1) 10:2(1) 1:1(2) 5:2(2) 8:1(2) 9:1(2)",
    7: "2:4(1) 1:1(2) 5:2(2) 6:1(2) 3:1(3) 10:1(3) 8:1(4) 9:1(4)",
    8: "8:0(0) 3:2(1) 1:2(2) 9:1(2) 6:2(2) 2:1(3) 10:2(3) 5:2(4)",
    9: "9:0(0) 3:3(1) 1:2(2) 8:1(2) 6:2(2) 2:1(3) 10:2(3) 5:2(4)",
    10: "10:0(0) 5:1(1) 6:3(1) 2:2(2) 3:4(2) 1:1(3) 8:1(3) 9:1(3)",
    11: "5:3(1) 10:1(2) 2:2(2) 1:1(3) 6:1(3) 3:1(4) 8:1(5) 9:1(5)",
    12: "6:4(1) 2:3(2) 3:4(2) 10:2(2) 1:1(3) 5:2(3) 8:1(3) 9:1(3)",
    13: "8:2(1) 3:2(2) 1:2(3) 9:1(3) 6:2(3) 2:1(4) 10:2(4) 5:2(5)",
    14: "9:2(1) 3:3(2) 1:2(3) 8:1(3) 6:2(3) 2:1(4) 10:2(4) 5:2(5)",
    15: "10:3(1) 5:1(2) 6:3(2) 2:2(3) 3:4(3) 1:1(4) 8:1(4) 9:1(4)",
}


def fig6_entries():
    """(switch LID, DLID, port, distance) for all 120 entries of Fig. 6."""
    out = []
    for dlid, text in FIG6.items():
        for sw, port, dist in re.findall(r"(\d+):(\d+)\((\d+)\)", text):
            out.append((int(sw), dlid, int(port), int(dist)))
    return out


class TestFERa:
    def test_fig6_has_120_entries_15_per_switch(self):
        entries = fig6_entries()
        assert len(entries) == 120
        per_switch = {}
        for sw, *_ in entries:
            per_switch[sw] = per_switch.get(sw, 0) + 1
        assert per_switch == {lid: 15 for lid in (1, 2, 3, 5, 6, 8, 9, 10)}

    def test_reproduces_every_entry_and_distance_of_fig6(self, fig1):
        t = fera.compute(fig1, {"root": "1"})
        dist = t.info["distance"]
        got = []
        for sw, dlid, port, d in fig6_entries():
            r = fig1.switch_row[node_of_lid(fig1, sw)]
            got.append((sw, dlid, int(t.lft[r, dlid]), int(dist[r, dlid])))
        assert got == fig6_entries()
        # ... and nothing else: 120 explicit entries, no default ports
        assert int(t.explicit_entries().sum()) == 120
        assert not t.is_random

    def test_root_by_name_and_default_root_give_fig6(self, fig1):
        # the SM runs on h4, whose switch is sw1 (LID 1)
        by_lid = fera.compute(fig1, {"root": "1"})
        assert np.array_equal(fera.compute(fig1, {"root": "sw1"}).lft, by_lid.lft)
        assert np.array_equal(fera.compute(fig1, {}).lft, by_lid.lft)
        assert by_lid.info["root"] == "sw1"

    def test_down_option_wins_over_shorter_up_route(self):
        # Fig. 5: b has a 3-hop down route to d (b-c-e-d) and a 2-hop up route (b-r-d)
        g = chain_fabric()
        t = fera.compute(g, {"root": "r"})
        b, d_lid = 1, 5
        assert t.port(b, d_lid) == 2 and t.info["distance"][1, d_lid] == 3
        # updn keeps the shorter legal route instead
        u = updn.compute(g, {"root": "r"})
        assert u.port(b, d_lid) == 1 and u.info["distance"][1, d_lid] == 2

    def test_ties_go_to_lowest_port(self, fig1):
        # sw10 reaches sw1 through sw5 (port 1) or sw6 (port 2), both 3 hops up
        t = fera.compute(fig1, {"root": "1"})
        assert t.port(node_of_lid(fig1, 10), 1) == 1

    @pytest.mark.parametrize("case", RANDOM_CASES)
    def test_random_fabrics_connected_and_deadlock_free(self, case):
        t = fera.compute(random_fabric(*case), {})
        r = assert_delivers(t)
        assert r.cycle == ()

    def test_root_must_be_a_switch(self, fig1):
        with pytest.raises(ConfigError, match="h4, which is not a switch"):
            fera.compute(fig1, {"root": "4"})
        with pytest.raises(ConfigError, match="no node has that name"):
            fera.compute(fig1, {"root": "nosuch"})

    def test_unknown_option_lists_valid_ones(self, fig1):
        with pytest.raises(ConfigError, match=r"unknown option 'father' for routing engine 'fera' \(valid: root\)"):
            fera.compute(fig1, {"father": "random"})

    def test_distances_match_route_walks(self, fig1):
        # distance of an entry == hops a packet from that switch actually takes
        t = fera.compute(fig1, {"root": "1"})
        rep = check_routes(t)
        assert rep.ok
        for r, sw in enumerate(fig1.switches):
            for lid in range(1, 16):
                node, hops = int(sw), 0
                while True:
                    p = t.port(node, lid)
                    if p == 0:
                        break
                    nxt = int(fig1.peer_node[node, p])
                    hops += 1
                    if not fig1.is_switch[nxt]:
                        break
                    node = nxt
                assert hops == t.info["distance"][r, lid]
