"""Kim et al.'s multipath tables in LMC ranges: named paths walk hop by hop to their destination,
the default route in entry base, the path-bit reduction, and adaptive packets in the data path."""

from __future__ import annotations

import numpy as np
import pytest

from ibfabric.components.routing.tables import NO_PORT
from ibfabric.errors import ConfigError
from ibfabric.plugins.routing import multipath, spf, updn
from ibfabric.plugins.routing._common import SwitchView
from ibfabric.plugins.routing.pathbits import find_cycles
from ibfabric.plugins.routing.pathtables import consistent_tables, walk
from ibfabric.simulation import Simulation
from ibfabric.topologies import load_fabric
from ibfabric.topologies.generators import irregular


def walk_lft(t, view, s, lid):
    """Switch rows visited from switch row *s* following *lid*'s entries, up to the destination's switch."""
    g = t.fabric
    seen = [s]
    for _ in range(view.S + 1):
        port = int(t.lft[s, lid])
        assert port != NO_PORT
        n = int(view.nbr[s, port])
        if n < 0:  # the host port (or port 0): arrived
            return seen
        s = n
        seen.append(s)
    raise AssertionError(f"loop: {seen}")


@pytest.mark.parametrize("seed, switches", [(1, 8), (2, 10), (3, 12)])
def test_every_named_path_is_walked_hop_by_hop(seed, switches):
    g = irregular(switches, links_per_switch=3, hosts_per_switch=1, seed=seed).with_lids(lmc=7)
    t = multipath.compute(g, {"bits": "4"})
    view = SwitchView(g)
    G = multipath.switch_graph(view)
    K = t.info["bits"]
    tables = consistent_tables(G, find_cycles(G)[:K])
    for e in np.flatnonzero(~g.is_switch[g.ep_node]).tolist():
        base, dst = int(g.ep_lid[e]), int(view.ep_row[e])
        for s in range(view.S):
            for P in range(1 << K):
                path = walk_lft(t, view, s, base + 2 * P + 1)
                assert len(set(path)) == len(path) and path[-1] == dst
                assert tuple(path) == walk(G, tables, s, dst, format(P, f"0{K}b")).path


def test_entry_base_is_the_default_route():
    g = irregular(10, links_per_switch=3, hosts_per_switch=1, seed=4).with_lids(lmc=3)
    for base, engine in (("spf", spf), ("updn", updn)):
        t = multipath.compute(g, {"base": base, "bits": "2"})
        d = engine.compute(g, {})
        cas = g.ep_lid[~g.is_switch[g.ep_node]]
        assert np.array_equal(t.lft[:, cas], d.lft[:, cas])
        assert np.array_equal(t.lft[:, cas + 2], d.lft[:, cas])  # even entries repeat it


def test_kims_15_switch_network_needs_a_reduction():
    g = load_fabric("topologies/kim2007_15.ned").with_lids(lmc=7)
    t = multipath.compute(g, {})
    assert (t.info["cycles_found"], t.info["bits"], t.info["dropped_cycles"]) == (9, 6, 3)
    with pytest.raises(ConfigError, match=r"option 'bits': must be 0..6"):
        multipath.compute(g, {"bits": "9"})
    with pytest.raises(ConfigError, match=r"6 path bits need LMC >= 7"):
        multipath.compute(load_fabric("topologies/kim2007_15.ned").with_lids(lmc=3), {})


MP = {"**.routing": "multipath", "**.sm.lmc": "7", "**.optionBits": "7", "**.optionsWhen": '"slid"',
      "**.adaptiveBy": '"slid"', "**.traffic": "uniform", "**.mtu": "1024B", "**.packetSize": "1050B",
      "**.outputBufferSize": "0B", "**.vlBufferSize": "8400B", "**.load": "0.3"}


@pytest.mark.parametrize("selector, mix", [("lfu", ("1", "0")), ("max-credit", ("0.5", "0.5")),
                                           ("random", ("0", "1")), ("max-credit", ("1", "0"))])
def test_adaptive_and_source_routed_packets_run_with_audits(selector, mix):
    ov = dict(MP, **{"**.pathSelector": f'"{selector}"', "**.adaptive": mix[0], "**.randomPath": mix[1]})
    sim = Simulation("kim2007_15", overrides=ov, seed=2, warmup="0us", check=True)
    s = sim.run("60us")
    assert s["conservation_ok"] and s["packets_delivered"] > 50
    log = sim.stats.arrays()
    assert log["hops"].max() <= 16  # a simple path of at most 15 switches


def test_registered_with_a_description():
    from ibfabric.plugins import PluginSet

    reg = PluginSet.load().routing_engines.get("multipath")
    assert reg.obj is multipath.compute and reg.plugin == "multipath" and reg.description


def test_doctests():
    import doctest

    assert doctest.testmod(multipath).failed == 0
