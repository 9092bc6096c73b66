"""HCAs send on the SL of each path when the routing engine assigns virtual layers (dfsssp, lash)."""

from __future__ import annotations

import numpy as np
import pytest

from ibfabric.errors import ConfigError, DeadlockError
from ibfabric.simulation import Simulation

from .conftest import RING
from .test_deadlock import plus_two_plugin


def ring_sim(routing: str, options: str = "", **over) -> Simulation:
    # 7-ring, host i -> host i + 3 clockwise at full load, one 256-byte packet per buffer
    ov = dict(over)  # specific patterns first: the first matching assignment wins
    for key, value in {"**.n": "7", "**.traffic": "plus-k", "**.trafficOptions": '"k=3"', "**.load": "1.0",
                       "**.routing": f'"{routing}"', "**.routingOptions": f'"{options}"', "**.mtu": "256B",
                       "**.vlBufferSize": "320B", "**.numVLs": "2"}.items():
        ov.setdefault(key, value)
    return Simulation(RING, overrides=ov, plugins=[plus_two_plugin], seed=1, deadlock_interval="20us", check=True)


def path_sl_of_each_packet(sim: Simulation, log) -> np.ndarray:
    tables = sim.tables
    eps = sim.host_endpoints()
    dlids = tables.dlids(eps[log["src"]], eps[log["dst"]])
    return tables.sls(eps[log["src"]], dlids)


class TestVirtualLayers:
    def test_minhop_deadlocks_where_dfsssp_layers_do_not(self):
        with pytest.raises(DeadlockError):
            ring_sim("minhop").run("200us")
        sim = ring_sim("dfsssp", "vls=2")
        s = sim.run("200us")
        assert s["conservation_ok"] and s["deadlock"] is None
        log = sim.stats.arrays()
        assert len(log["sl"]) > 200
        assert set(np.unique(log["sl"]).tolist()) == {0, 1}  # both layers carry traffic
        assert (log["sl"] == path_sl_of_each_packet(sim, log)).all()

    def test_uniform_traffic_sends_each_message_on_its_paths_sl(self):
        sim = Simulation("irregular16", overrides={"**.routing": '"dfsssp"', "**.routingOptions": '"vls=4"',
                                                   "**.numVLs": "4", "**.traffic": "uniform", "**.load": "0.2",
                                                   "**.mtu": "256B"}, seed=2, check=True)
        s = sim.run("40us")
        assert s["conservation_ok"]
        log = sim.stats.arrays()
        assert len(np.unique(log["sl"])) > 1
        assert (log["sl"] == path_sl_of_each_packet(sim, log)).all()

    def test_the_traffic_sl_cannot_be_set_too(self):
        with pytest.raises(ConfigError, match="gives every path its SL .* 'sl' cannot be set too"):
            ring_sim("dfsssp", "vls=2", **{"**.sl": '"1"'})

    def test_too_few_vls_at_the_hca(self):
        # the engine puts SL 1 on VL 1; with one data VL the HCA would map it to VL 0
        with pytest.raises(ConfigError, match="puts SL 1 on VL 1, .* 'numVLs' >= 2"):
            ring_sim("dfsssp", "vls=2", **{"**.h[0].numVLs": "1"})
