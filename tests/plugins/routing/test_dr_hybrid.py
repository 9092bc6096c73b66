"""DR (destination renaming, Bermúdez et al. 2006, §2.4) and hybrid PIRa+FERa/DR routing (§3.4)."""

import numpy as np
import pytest
from routing_cases import RANDOM_CASES, assert_delivers, random_fabric, rng

from ibfabric.components.routing.routecheck import check_routes
from ibfabric.errors import ConfigError
from ibfabric.plugins.routing import dr, fera, hybrid, pira
from ibfabric.plugins.routing._common import SwitchView
from ibfabric.plugins.routing._updown import UpDown
from ibfabric.topologies.generators import irregular


def renaming_fabric(lmc):
    # an 8-switch fabric in which DR gives host h2_0 a second name
    return irregular(8, links_per_switch=4, hosts_per_switch=1, seed=42).with_lids(lmc=lmc)


class TestDR:
    def test_asks_for_the_lmc_it_needs(self):
        with pytest.raises(ConfigError, match=r"dr needs LMC >= 1; set the subnet manager's lmc to 1 \(h2_0 port 1 needs 2 LIDs"):
            dr.compute(renaming_fabric(0), {})

    def test_renamed_host_gets_two_dlids(self):
        g = renaming_fabric(1)
        t = dr.compute(g, {})
        assert t.info["names"]["h2_0 port 1"] == 2 and t.info["renamed"] == 1 and t.info["lmc_required"] == 1
        h2 = g.endpoint_of(g.index("h2_0"), 1)
        used = {int(t.path_offset[s, h2]) for s in range(len(g.ep_lid)) if s != h2}
        assert used == {0, 1}
        r = assert_delivers(t)
        assert r.cycle == ()

    def test_no_renaming_needed_on_fig1(self, fig1):
        t = dr.compute(fig1, {"root": "1"})
        assert t.info["renamed"] == 0
        assert_delivers(t)

    @pytest.mark.parametrize("case", RANDOM_CASES)
    def test_host_routes_are_shortest_legal_routes(self, case):
        g = random_fabric(*case, lmc=3)
        t = dr.compute(g, {})
        r = assert_delivers(t)
        assert r.cycle == ()
        view = SwitchView(g)
        ud = UpDown(view, int(g.switch_row[g.index(t.info["root"])]))
        from ibfabric.components.routing.routecheck import route_walk

        w = route_walk(t)
        hosts = ~g.is_switch[g.ep_node]
        sel = hosts[w["src"]] & hosts[w["dst"]]
        dist = {}
        for s, d, h in zip(w["src"][sel], w["dst"][sel], w["hops"][sel]):
            a = int(view.ep_row[d])
            if a not in dist:
                dist[a] = ud.legal_distances(a)[1]
            assert h == dist[a][view.ep_row[s]] + 2  # + the two host links

    def test_every_lid_of_the_range_is_routed(self):
        g = renaming_fabric(2)
        t = dr.compute(g, {})
        exp = t.expanded()
        owned = np.flatnonzero(g.lid_owner >= 0)
        assert (exp[:, owned] != 255).all()

    def test_slower_than_fera_but_shorter_routes(self):
        g = random_fabric(24, 5, 1, 1, lmc=3)
        assert check_routes(dr.compute(g, {})).mean_hops <= check_routes(fera.compute(g, {})).mean_hops


class TestHybrid:
    def test_fig1_provisional_pira_final_fera(self, fig1):
        t = hybrid.compute(fig1, {"final": "fera", "father": "highest-port", "root": "1"})
        assert np.array_equal(t.lft, fera.compute(fig1, {"root": "1"}).lft)
        prov = t.info["provisional"]
        assert prov.engine == "pira" and int(prov.explicit_entries().sum()) == 50
        assert t.info["coexist"] is True and t.info["cycle"] == []

    @pytest.mark.parametrize("case", RANDOM_CASES[::2])
    @pytest.mark.parametrize("final", ["fera", "dr"])
    def test_sets_coexist_on_random_fabrics(self, case, final):
        g = random_fabric(*case, lmc=3)
        t = hybrid.compute(g, {"final": final}, rng(case[3]))
        assert t.info["coexist"], t.info["cycle"]
        assert_delivers(t)
        assert_delivers(t.info["provisional"])
        if final == "dr":
            assert t.path_offset is not None

    def test_coexistence_check_finds_a_cycle(self, fig1):
        # minhop's tables on Fig. 1 have a dependency cycle, so nothing coexists with them
        from ibfabric.plugins.routing import minhop

        cyc = hybrid.coexistence_cycle(pira.compute(fig1, {}, rng()), minhop.compute(fig1, {}))
        assert cyc and all(" port " in c for c in cyc)

    def test_bad_final(self, fig1):
        with pytest.raises(ConfigError, match=r"'final': must be one of \(fera, dr\)"):
            hybrid.compute(fig1, {"final": "updn"})
