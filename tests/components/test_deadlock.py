"""Deadlock detection: a cycle of full buffers is reported, not left to spin."""

from __future__ import annotations

import numpy as np
import pytest

from ibfabric import hookimpl
from ibfabric.errors import DeadlockError
from ibfabric.plugins.traffic import TrafficPattern
from ibfabric.simulation import Simulation

from .conftest import RING


class PlusK(TrafficPattern):
    """Host i sends to host i + k (option k, default 2): on a ring with k < n/2
    every min-hop route turns the same way round."""

    name = "plus-k"
    option_names = ("k",)

    def destinations(self, src, rng, n):
        return np.full(n, (src + int(self.options.get("k", "2"))) % self.num_hosts)


class plus_two_plugin:  # a per-simulation plugin object
    @staticmethod
    @hookimpl
    def ibfabric_register_traffic_patterns(register):
        register("plus-k", PlusK)


def ring_sim(routing, load="1.0"):
    return Simulation(
        RING,
        overrides={"**.traffic": "plus-k", "**.load": load, "**.routing": routing,
                   "**.mtu": "256B", "**.vlBufferSize": "320B"},
        plugins=[plus_two_plugin], seed=1, deadlock_interval="20us",
    )


class TestDeadlockDetection:
    def test_minhop_on_a_ring_deadlocks_and_the_cycle_is_reported(self):
        sim = ring_sim("minhop")
        with pytest.raises(DeadlockError) as info:
            sim.run("2ms")
        cycle = info.value.cycle
        # five switch input buffers, one per switch, each waiting on the next one clockwise
        assert len(cycle) == 5
        assert {c.split(".port")[0] for c in cycle} == {f"ring.sw[{i}]" for i in range(5)}
        assert all(c.endswith(".port[2] VL0") for c in cycle)
        s = sim.summary()
        assert s["deadlock"]["cycle"] == cycle
        assert s["conservation_ok"]
        assert info.value.time < 2e6  # detected early, not at the time limit

    def test_up_down_on_the_same_ring_does_not_deadlock(self):
        sim = ring_sim("updn")
        s = sim.run("1ms")
        assert s["deadlock"] is None
        assert s["packets_delivered"] > 1000
