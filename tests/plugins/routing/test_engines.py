"""Every built-in routing engine: registered as a plugin, documented, correct on random fabrics."""

import doctest
import importlib

import numpy as np
import pytest
from routing_cases import RANDOM_CASES, assert_delivers, random_fabric, rng

from ibfabric.errors import ConfigError
from ibfabric.plugins import PluginSet

ENGINES = ["minhop", "spf", "updn", "fera", "pira", "dr", "hybrid", "file", "fa"]
MODULES = ENGINES + ["_common", "_updown"]


@pytest.fixture(scope="module")
def plugins():
    return PluginSet.load()


class TestRegistry:
    def test_every_engine_is_registered_through_its_entry_point(self, plugins):
        for name in ENGINES:
            reg = plugins.routing_engines.get(name)
            assert reg.plugin == name  # the entry point named like the engine registered it
            assert reg.description
            assert reg.obj is importlib.import_module(f"ibfabric.plugins.routing.{name}").compute

    def test_unknown_engine_lists_the_valid_ones(self, plugins):
        with pytest.raises(Exception, match="unknown routing engine 'nosuch' \\(valid: .*fera.*minhop.*updn"):
            plugins.routing_engines["nosuch"]

    @pytest.mark.parametrize("name", ENGINES)
    def test_unknown_option_is_a_one_line_config_error(self, plugins, name):
        with pytest.raises(ConfigError) as exc:
            plugins.routing_engines[name](random_fabric(6, 3, 1, 0), {"bogus": "1"}, rng())
        assert "unknown option 'bogus'" in str(exc.value) and "valid:" in str(exc.value)
        assert "\n" not in str(exc.value)

    @pytest.mark.parametrize("name", MODULES)
    def test_doctests(self, name):
        mod = importlib.import_module(f"ibfabric.plugins.routing.{name}")
        res = doctest.testmod(mod, optionflags=doctest.ELLIPSIS)
        assert res.failed == 0
        if name in ENGINES:
            assert res.attempted > 0
            doc = mod.compute.__doc__
            for section in ("Parameters", "Returns", "Raises", "Examples", "Notes", "References"):
                assert f"\n    {section}\n    ---" in doc, f"{name}: no {section} section"

    def test_unassigned_lids_are_refused(self, plugins):
        from ibfabric.topologies.generators import irregular

        with pytest.raises(ConfigError, match="without LIDs"):
            plugins.routing_engines["minhop"](irregular(4, links_per_switch=2, hosts_per_switch=1), {}, rng())


@pytest.mark.parametrize("name", [e for e in ENGINES if e != "file"])
@pytest.mark.parametrize("case", RANDOM_CASES[::2])
def test_all_pairs_reachable_and_loop_free(plugins, name, case):
    g = random_fabric(*case, lmc=2)
    t = plugins.routing_engines[name](g, {}, rng(case[3]))
    r = assert_delivers(t)
    assert r.pairs == len(g.ep_lid) * (len(g.ep_lid) - 1)
    if name not in ("minhop", "spf"):
        assert r.cycle == (), f"{name}: {r.cycle}"


@pytest.mark.parametrize("name", [e for e in ENGINES if e != "file"])
def test_switch_lids_map_to_port_0_and_lmc_ranges_are_filled(plugins, name):
    g = random_fabric(8, 3, 2, 4, lmc=1)
    t = plugins.routing_engines[name](g, {}, rng())
    exp = t.expanded()
    for r, sw in enumerate(g.switches):
        assert exp[r, g.lid_of(int(sw))] == 0
    owned = np.flatnonzero(g.lid_owner >= 0)
    assert (exp[:, owned] != 255).all()
