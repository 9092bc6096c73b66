"""The crossbar set-up time of an input (``crossbarSetup``): arbitration and the set-up of the next connection,
not overlapped with the transfer before it.

With ``crossbarSetup`` = g an input's crossbar connection stays busy g after each crossing, so an input whose
packets queue sends one every ``L x crossbar byte time + g``: a 32-byte packet (128 ns on a 1x SDR link,
crossbar speedup 1) every 228 ns with g = 100 ns, a 256-byte one every 1,124 ns.  A packet that
finds its input idle crosses as without it (the zero-load latency does not change).  The default, 0, is the
model without it.
"""

from __future__ import annotations

import pytest

from ibfabric.errors import ConfigError
from ibfabric.simulation import Simulation
from ibfabric.testing import STAR_NED

from .conftest import send_at

TAU_SDR = 4.0  # ns per byte on a 1x SDR link
R, A = 100.0, 20.0  # default routingDelay, arbitrationDelay


def latencies(sim):
    log = sim.stats.arrays()
    return sorted((log["delivered_at"] - log["created"]).tolist())


@pytest.mark.parametrize("setup", ["0ns", "100ns"])
def test_zero_load_latency_does_not_change(chain, setup):
    # one packet finds every input idle: d1 + n (R + A) + L tau + d2 either way
    sim = chain(2, **{"**.crossbarSetup": setup})
    send_at(sim, 0.0, "a", "b", 256)
    sim.run("50us")
    assert latencies(sim) == [pytest.approx(5.0 * 12 + 2 * (R + A) + 256 * TAU_SDR)]


def test_packets_queued_at_one_input_cross_one_set_up_apart():
    # h[0] sends three 32-byte packets at once to h[1]: they queue at the switch input (the first at the HCA
    # too), each crossing starts g after the one before has crossed; the last is g later than without it
    def last(setup: str) -> float:
        sim = Simulation(STAR_NED, overrides={"**.k": "2", "**.traffic": '""', "**.crossbarSpeedup": "1",
                                              "**.crossbarSetup": setup}, check=True)
        for _ in range(3):
            send_at(sim, 0.0, "h[0]", "h[1]", 32)
        sim.run("20us")
        return latencies(sim)[-1]

    # without it the packets follow each other at the link's pace (128 ns), the crossing ending with the tail
    assert last("0ns") == pytest.approx(2 * 128 + 5.0 * 2 + R + A + 32 * TAU_SDR)
    # with it each crossing (128 ns, speedup 1) waits for the set-up after the one before: 228 ns apart
    assert last("100ns") == pytest.approx(5.0 * 2 + R + A + 32 * TAU_SDR + 2 * (128 + 100))


def spacing(size: int, setup: str, n: int = 20) -> list[float]:
    """h[0] sends *n* *size*-byte packets at once to h[1] through one switch (crossbar speedup 1): the times
    between their deliveries, once they queue at the switch's input."""
    sim = Simulation(STAR_NED, overrides={"**.k": "2", "**.traffic": '""', "**.crossbarSpeedup": "1",
                                          "**.crossbarSetup": setup}, check=True)
    for _ in range(n):
        send_at(sim, 0.0, "h[0]", "h[1]", size)
    sim.run("100us")
    t = sorted(sim.stats.arrays()["delivered_at"].tolist())
    return [b - a for a, b in zip(t, t[1:])]


@pytest.mark.parametrize(("size", "setup", "period"), [(32, "0ns", 128), (32, "100ns", 228), (256, "0ns", 1024),
                                                       (256, "100ns", 1124)])
def test_a_busy_input_sends_a_packet_per_crossing_and_set_up(size, setup, period):
    # the link brings a packet every L tau; the input sends one every L tau + g: a 100 ns set-up costs 32-byte
    # packets 44 % of the link, 256-byte ones 9 %
    assert spacing(size, setup) == [pytest.approx(period)] * 19


def test_negative_is_a_one_line_error():
    with pytest.raises(ConfigError, match=r"star\.sw: 'crossbarSetup' must be >= 0 \(got -1\.0ns\)") as info:
        Simulation(STAR_NED, overrides={"**.crossbarSetup": "-1ns"})
    assert "\n" not in str(info.value)
