"""Lookups shared by a switch's inputs (``routingUnits``): the switch models with one routing control unit.

With ``routingUnits`` = 0 (the default) every input port looks up its own headers: a packet may cross
``routingDelay + arbitrationDelay`` after its head arrives, whatever the other inputs do.  With *n* > 0
the switch has *n* units, each busy ``routingDelay + arbitrationDelay`` per header: a header waits for
a free one, so a switch makes at most *n* lookups per ``routingDelay + arbitrationDelay``.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ibfabric.components.switch.rx import RoutingUnits
from ibfabric.errors import ConfigError
from ibfabric.ned_like.errors import NedError
from ibfabric.simulation import Simulation
from ibfabric.testing import STAR_NED

from .conftest import send_at

TAU_SDR = 4.0  # ns per byte on a 1x SDR link
R, A = 100.0, 20.0  # default routingDelay, arbitrationDelay


def latencies(sim):
    log = sim.stats.arrays()
    return sorted((log["delivered_at"] - log["created"]).tolist())


class TestLatency:
    @pytest.mark.parametrize("units", [0, 1, 3])
    def test_zero_load_formula_holds_whatever_the_units(self, chain, units):
        # one packet meets no other header: d1 + n (R + A) + L tau + d2, as without shared units
        sim = chain(2, **{"**.routingUnits": str(units)})
        send_at(sim, 0.0, "a", "b", 256)
        sim.run("50us")
        assert latencies(sim) == [pytest.approx(5.0 * 12 + 2 * (R + A) + 256 * TAU_SDR)]

    @pytest.mark.parametrize(("units", "waits"), [(0, [0, 0, 0]), (1, [0, R + A, 2 * (R + A)]),
                                                  (2, [0, 0, R + A]), (3, [0, 0, 0])])
    def test_headers_arriving_together_wait_for_a_unit(self, units, waits):
        # three hosts of a star send at once to three others (no output port shared): the switch looks
        # up `units` headers at a time, the others wait R + A for each lookup before theirs
        sim = Simulation(STAR_NED, overrides={"**.k": "6", "**.traffic": '""', "**.routingUnits": str(units)},
                         check=True)
        for src, dst in ((0, 3), (1, 4), (2, 5)):
            send_at(sim, 0.0, f"h[{src}]", f"h[{dst}]", 64)
        sim.run("20us")
        zero = 5.0 * 2 + R + A + 64 * TAU_SDR
        assert latencies(sim) == [pytest.approx(zero + w) for w in waits]


def delivered_at_full_load(units: int) -> int:
    """8 hosts on one switch send 32-byte packets at full load (routingDelay 100 ns, arbitrationDelay 0): the
    packets delivered in the 80 us after a 20 us warm-up."""
    ov = {"**.k": "8", "**.traffic": "uniform", "**.load": "1.0", "**.packetSize": "32B",
          "**.routingDelay": "100ns", "**.arbitrationDelay": "0ns", "**.routingUnits": str(units)}
    sim = Simulation(STAR_NED, overrides=ov, seed=3, warmup="20us", check=True)
    with pytest.warns(UserWarning, match="saturated"):
        sim.run("100us")
    delivered = sim.stats.arrays()["delivered_at"]
    return int(((delivered >= 20_000) & (delivered < 100_000)).sum())


class TestThroughput:
    @pytest.mark.parametrize("units", [1, 2])
    def test_a_switch_makes_at_most_units_lookups_per_lookup_time(self, units):
        # the links could carry 8 packets per 128 ns; one unit looks up one header per 100 ns: 10 packets a
        # microsecond a unit
        assert delivered_at_full_load(units) == pytest.approx(units * 80_000 / 100, abs=units)

    def test_without_shared_units_the_links_bound_it(self):
        assert delivered_at_full_load(0) > 4 * 800

    def test_the_same_seed_gives_the_same_run(self):
        def run():
            sim = Simulation("irregular16", overrides={"**.routingUnits": "1", "**.load": "0.4"}, seed=7)
            sim.run("30us")
            return latencies(sim)

        assert run() == run()


class TestConfig:
    @pytest.mark.parametrize("value", ["-1", "256"])
    def test_out_of_range_is_a_one_line_error(self, value):
        with pytest.raises(ConfigError, match=r"star\.sw: 'routingUnits' must be an integer in 0\.\.255") as info:
            Simulation(STAR_NED, overrides={"**.routingUnits": value})
        assert "\n" not in str(info.value)

    def test_not_an_integer_is_refused_by_the_parameter_type(self):
        with pytest.raises(NedError, match=r"'routingUnits' expects an integer, got 1\.5 \(for star\.sw\.routingUnits\)"):
            Simulation(STAR_NED, overrides={"**.routingUnits": "1.5"})


class TestBooking:
    def test_equal_delays_are_served_in_order_of_arrival(self):
        u = RoutingUnits(1, 100.0)
        assert [u.book(h, h - 50) for h in (0.0, 10.0, 20.0, 500.0)] == [100.0, 200.0, 300.0, 600.0]

    def test_an_idle_gap_is_filled(self):
        # booked first for a header arriving at 500; one arriving at 110 (a shorter link) fits before it
        u = RoutingUnits(1, 100.0)
        assert u.book(500.0, 0.0) == 600.0
        assert u.book(110.0, 10.0) == 210.0
        assert u.book(450.0, 20.0) == 700.0  # 50 ns before 500 is too short: after 600

    def test_the_unit_free_soonest_takes_the_header(self):
        u = RoutingUnits(2, 100.0)
        assert [u.book(0.0, 0.0) for _ in range(5)] == [100.0, 100.0, 200.0, 200.0, 300.0]

    def test_bad_sizes(self):
        with pytest.raises(ValueError, match="n >= 1"):
            RoutingUnits(0, 100.0)
        with pytest.raises(ValueError, match="span > 0"):
            RoutingUnits(1, 0.0)

    @given(n=st.integers(1, 3), span=st.sampled_from([20.0, 100.0, 120.0]),
           calls=st.lists(st.tuples(st.integers(0, 50), st.integers(0, 600)), min_size=1, max_size=40))
    def test_lookups_never_overlap_on_a_unit_nor_start_before_their_header(self, n, span, calls):
        # calls: (time since the last call, how far ahead the header arrives); every booking is kept
        u = RoutingUnits(n, span)
        now = 0.0
        booked = []
        for step, ahead in calls:
            now += step
            head = now + ahead
            end = u.book(head, now)
            assert end - span >= head
            booked.append((end - span, end))
        # at no instant are more than n lookups under way
        for s, _ in booked:
            assert sum(1 for b, e in booked if b <= s < e) <= n

    @given(span=st.sampled_from([50.0, 100.0]),
           gaps=st.lists(st.integers(0, 300), min_size=1, max_size=40), ahead=st.integers(0, 500))
    def test_one_unit_on_equal_delays_never_idles_while_a_header_waits(self, span, gaps, ahead):
        # headers booked in the order they arrive (the same link delay for all): each starts at its arrival
        # or when the one before it ends, whichever is later
        u = RoutingUnits(1, span)
        now, prev_end = 0.0, 0.0
        for g in gaps:
            now += g
            head = now + ahead
            end = u.book(head, now)
            assert end - span == max(head, prev_end)
            prev_end = end
