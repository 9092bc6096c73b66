"""VL arbiters against hand-computed service orders (IBA vol. 1 §7.6.9)."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ibfabric import hookimpl
from ibfabric.components.packet import Packet
from ibfabric.errors import ConfigError
from ibfabric.kernel import module_rng
from ibfabric.plugins.arbiters import ArbiterConfig, IBAVLArbiter, RoundRobinArbiter
from ibfabric.simulation import Simulation

from ..components.conftest import STAR


def pkt(size):
    return Packet.make(1, 2, size)


def serve(arb, ready_sizes, n):
    """Service order of n decisions when every VL in ready_sizes always has a packet of that size."""
    nvl = arb.num_vls
    ready = [pkt(ready_sizes[vl]) if vl in ready_sizes else None for vl in range(nvl)]
    return [arb.select(list(ready)) for _ in range(n)]


class TestIBAVLArbiter:
    def test_weights_are_64_byte_units(self):
        # (VL0, 4) sends four 64-byte packets per turn, (VL1, 1) one.
        arb = IBAVLArbiter(ArbiterConfig(2, high=((0, 4), (1, 1)), limit_high=255))
        assert serve(arb, {0: 64, 1: 64}, 10) == [0, 0, 0, 0, 1, 0, 0, 0, 0, 1]

    def test_packet_is_never_split(self):
        # A 256-byte packet needs 4 units; weight 1 still sends it whole, then the turn passes.
        arb = IBAVLArbiter(ArbiterConfig(2, high=((0, 1), (1, 1)), limit_high=255))
        assert serve(arb, {0: 256, 1: 256}, 6) == [0, 1, 0, 1, 0, 1]

    def test_weight_rounded_up_to_whole_packets(self):
        # Weight 3 with 128-byte (2-unit) packets: 2 packets (2 + 2 > 3 is still allowed once).
        arb = IBAVLArbiter(ArbiterConfig(2, high=((0, 3), (1, 2)), limit_high=255))
        assert serve(arb, {0: 128, 1: 128}, 6) == [0, 0, 1, 0, 0, 1]

    def test_limit_of_high_priority_zero_lets_one_low_packet_through(self):
        # LimitOfHighPriority 0: one high packet, then a low packet if one is ready.
        arb = IBAVLArbiter(ArbiterConfig(3, high=((0, 2), (1, 1)), low=((2, 1),), limit_high=0))
        assert serve(arb, {0: 128, 1: 128, 2: 128}, 8) == [0, 2, 1, 2, 0, 2, 1, 2]

    def test_limit_counts_4096_byte_units(self):
        # Limit 1 = 4096 bytes of high priority (32 packets of 128 B) before one low packet.
        arb = IBAVLArbiter(ArbiterConfig(2, high=((0, 255),), low=((1, 1),), limit_high=1))
        order = serve(arb, {0: 128, 1: 128}, 66)
        assert order[:32] == [0] * 32
        assert order[32] == 1
        assert order[33:65] == [0] * 32
        assert order[65] == 1

    def test_unlimited_high_starves_low_while_high_is_ready(self):
        arb = IBAVLArbiter(ArbiterConfig(2, high=((0, 1),), low=((1, 1),), limit_high=255))
        assert serve(arb, {0: 64, 1: 64}, 5) == [0] * 5

    def test_low_goes_when_high_has_nothing_ready(self):
        arb = IBAVLArbiter(ArbiterConfig(2, high=((0, 1),), low=((1, 1),), limit_high=255))
        assert serve(arb, {1: 64}, 3) == [1, 1, 1]

    def test_entry_without_ready_packet_passes_its_turn(self):
        arb = IBAVLArbiter(ArbiterConfig(3, low=((0, 10), (1, 10), (2, 10)), limit_high=0))
        ready = [None, pkt(64), None]
        assert arb.select(ready) == 1

    def test_weight_zero_entries_are_skipped(self):
        arb = IBAVLArbiter(ArbiterConfig(2, low=((0, 0), (1, 1)), limit_high=0))
        assert arb.unserved() == [0]

    def test_high_continues_after_limit_when_no_low_ready(self):
        arb = IBAVLArbiter(ArbiterConfig(2, high=((0, 1),), low=((1, 1),), limit_high=0))
        assert serve(arb, {0: 64}, 4) == [0, 0, 0, 0]

    def test_vl_in_both_tables(self):
        # VL0 in high and low: with limit 0 and only VL0 ready, it is served every time.
        arb = IBAVLArbiter(ArbiterConfig(1, high=((0, 1),), low=((0, 1),), limit_high=0))
        assert serve(arb, {0: 64}, 3) == [0, 0, 0]

    @pytest.mark.parametrize("table", [((15, 1),), ((0, 256),)])
    def test_invalid_entries(self, table):
        with pytest.raises(ConfigError):
            IBAVLArbiter(ArbiterConfig(2, low=table))

    def test_at_most_64_entries(self):
        with pytest.raises(ConfigError, match="at most 64"):
            IBAVLArbiter(ArbiterConfig(2, low=tuple((0, 1) for _ in range(65))))

    def test_bandwidth_shares_follow_weights(self):
        # Over many decisions, bytes per VL are proportional to the weights.
        arb = IBAVLArbiter(ArbiterConfig(3, low=((0, 32), (1, 64), (2, 160)), limit_high=0))
        order = serve(arb, {0: 256, 1: 256, 2: 256}, 256 * 10)
        counts = [order.count(v) for v in range(3)]
        assert counts[1] == 2 * counts[0]
        assert counts[2] == 5 * counts[0]


@st.composite
def tables_and_choices(draw):
    """A low-priority table (zero weights and VLs beyond the port's included: set_tables drops
    them), sometimes a high one, and a sequence of ready sets: mostly one VL, sometimes several,
    sometimes a VL in no table."""
    nvl = draw(st.integers(1, 15))
    entry = st.tuples(st.integers(0, 15), st.integers(0, 255))
    low = draw(st.lists(entry, min_size=1, max_size=64))
    high = draw(st.one_of(st.just([]), st.lists(entry, max_size=8)))
    steps = draw(st.lists(
        st.lists(st.tuples(st.integers(0, nvl - 1), st.sampled_from([64, 65, 256, 2048, 4096])),
                 min_size=1, max_size=3), max_size=60))
    return nvl, tuple(low), tuple(high), draw(st.sampled_from([0, 1, 255])), steps


class TestOneReadyVL:
    """select()'s one-VL path (looked-up entries) against the table walk it replaces."""

    @settings(max_examples=300, deadline=None)
    @given(tables_and_choices())
    def test_same_choices_and_table_state_as_the_walk(self, case):
        nvl, low, high, limit, steps = case
        try:
            fast = IBAVLArbiter(ArbiterConfig(nvl, high=high, low=low, limit_high=limit))
        except ConfigError:  # entries beyond VL 14: refused by both
            return
        walk = IBAVLArbiter(ArbiterConfig(nvl, high=high, low=low, limit_high=limit))
        for step in steps:
            ready = [None] * nvl
            for vl, size in step:
                ready[vl] = pkt(size)
            outcomes = []
            for arb, choose in ((fast, fast.select), (walk, walk._select)):
                try:
                    outcomes.append(choose(list(ready)))
                except ConfigError as exc:
                    outcomes.append(str(exc))
            assert outcomes[0] == outcomes[1]
            assert (fast.lo_idx, fast.lo_rem, fast.hi_idx, fast.hi_rem, fast.hi_sent) == (
                walk.lo_idx, walk.lo_rem, walk.hi_idx, walk.hi_rem, walk.hi_sent)

    @settings(max_examples=300, deadline=None)
    @given(tables_and_choices())
    def test_select_one_chooses_as_select(self, case):
        """The data path's call when one VL alone is ready: the same choice and state as the table
        walk (and, for round robin, as select())."""
        nvl, low, high, limit, steps = case
        try:
            one = IBAVLArbiter(ArbiterConfig(nvl, high=high, low=low, limit_high=limit))
        except ConfigError:
            return
        sel = IBAVLArbiter(ArbiterConfig(nvl, high=high, low=low, limit_high=limit))
        rr_one, rr_sel = RoundRobinArbiter(ArbiterConfig(nvl)), RoundRobinArbiter(ArbiterConfig(nvl))
        for step in steps:
            ready = [None] * nvl
            for vl, size in step:
                ready[vl] = pkt(size)
            vls = [vl for vl, p in enumerate(ready) if p is not None]
            if len(vls) != 1:
                continue
            outcomes = []
            for call in (lambda: one.select_one(list(ready), vls[0]), lambda: sel._select(list(ready))):
                try:
                    outcomes.append(call())
                except ConfigError as exc:
                    outcomes.append(str(exc))
            assert outcomes[0] == outcomes[1]
            assert (one.lo_idx, one.lo_rem, one.hi_idx, one.hi_rem, one.hi_sent) == (
                sel.lo_idx, sel.lo_rem, sel.hi_idx, sel.hi_rem, sel.hi_sent)
            assert rr_one.select_one(list(ready), vls[0]) == rr_sel.select(list(ready))
            assert rr_one.last == rr_sel.last

    def test_a_checked_arbiter_is_always_asked_through_select(self):
        from ibfabric.components.port import one_ready
        from ibfabric.plugins.arbiters import CheckedArbiter
        from ibfabric.plugins.registry import Registration

        class WithOne:
            def select(self, ready):
                return 0

            def select_one(self, ready, vl):  # would bypass the checks: never used through the wrapper
                raise AssertionError("select_one of a wrapped arbiter called")

        wrapped = CheckedArbiter(WithOne(), Registration("x", WithOne, "plug"), "sw.port[1]")
        assert one_ready(wrapped)([pkt(64), None], 0) == 0
        assert one_ready(IBAVLArbiter(ArbiterConfig(2, low=((0, 1),)))).__name__ == "select_one"

    def test_the_entry_looked_up_is_the_next_of_that_vl(self):
        # (VL0, 1) (VL1, 20) (VL0, 2): VL0 alone sends from entry 0, then entry 2 (entry 1 passes)
        arb = IBAVLArbiter(ArbiterConfig(2, low=((0, 1), (1, 20), (0, 2))))
        assert arb.lo_next == [[2, 2, 0], [1, 1, 1]]
        # 64-byte packets: entry 0 sends one (its weight spent, the turn is entry 1's), entry 2 two,
        # entry 0 one more; the turn is entry 1's again, at its full weight
        assert serve(arb, {0: 64}, 4) == [0, 0, 0, 0]
        assert (arb.lo_idx, arb.lo_rem) == (1, 20)


class TestRoundRobin:
    def test_alternates_over_ready_vls(self):
        arb = RoundRobinArbiter(ArbiterConfig(3))
        assert serve(arb, {0: 64, 2: 4096}, 4) == [0, 2, 0, 2]

    def test_starts_after_last_served(self):
        arb = RoundRobinArbiter(ArbiterConfig(4))
        assert arb.select([pkt(64)] * 4) == 0
        assert arb.select([None, None, None, pkt(64)]) == 3
        assert arb.select([pkt(64)] * 4) == 0


class Lottery:
    """A third-party arbiter that draws: a ready VL at random, from the port's own generator."""

    made: list = []  # (port, arbiter) of every instance, for the tests

    def __init__(self, config):
        self.rng = config.rng
        self.draws = []
        Lottery.made.append((config.port, self))

    def select(self, ready):
        vls = [vl for vl, p in enumerate(ready) if p is not None]
        vl = vls[int(self.rng.integers(len(vls)))]
        self.draws.append(vl)
        return vl


class lottery_plugin:
    @staticmethod
    @hookimpl
    def ibfabric_register_vl_arbiters(register):
        register("lottery", Lottery, description="a ready VL at random")


class TestArbiterRng:
    def test_each_port_has_its_own_reproducible_generator(self):
        a = ArbiterConfig(2, port="net.sw.port[1]", seed=7)
        b = ArbiterConfig(2, port="net.sw.port[2]", seed=7)
        assert a.rng is a.rng  # one generator per port, not a fresh one per access
        assert list(a.rng.random(4)) != list(b.rng.random(4))
        again = ArbiterConfig(2, port="net.sw.port[1]", seed=7).rng.random(8)
        assert list(again) == list(ArbiterConfig(2, port="net.sw.port[1]", seed=7).rng.random(8))
        assert list(again) != list(ArbiterConfig(2, port="net.sw.port[1]", seed=8).rng.random(8))
        # the generator of module_rng's (seed, path) scheme, as every module's
        assert list(again) == list(module_rng(7, "net.sw.port[1]:arbiter").random(8))

    @pytest.mark.parametrize("arbiter", ["iba-vlarb", "round-robin"])
    def test_builtin_arbiters_never_create_it(self, arbiter, monkeypatch):
        # the generator is made on first use: built-in arbiters draw nothing, so they change no result
        def no_rng(seed, path):
            raise AssertionError(f"built-in arbiter made a generator for {path}")

        monkeypatch.setattr("ibfabric.plugins.arbiters.module_rng", no_rng)
        sim = Simulation(STAR, overrides={"**.arbiter": arbiter, "**.numVLs": "2", "**.sl": "0..1",
                                          "**.traffic": "uniform", "**.load": "0.9"}, seed=1)
        assert sim.run("20us")["packets_delivered"] > 0

    def test_third_party_arbiter_draws_from_it(self):
        def run(seed):
            Lottery.made.clear()
            sim = Simulation(STAR, overrides={"**.arbiter": "lottery", "**.numVLs": "2", "**.sl": "0..1",
                                              "**.traffic": "uniform", "**.load": "0.9"},
                             plugins=[lottery_plugin], seed=seed)
            s = sim.run("30us")
            assert s["conservation_ok"] and s["packets_delivered"] > 0
            return {port: arb.draws for port, arb in Lottery.made}

        first = run(1)
        assert len(first) >= 8 and sum(len(d) for d in first.values()) > 100
        assert run(1) == first  # same seed, same draws on every port
        assert run(2) != first
        busy = sorted((p for p in first if len(first[p]) >= 20), key=lambda p: -len(first[p]))
        # two ports draw different sequences (independent generators)
        assert first[busy[0]][:20] != first[busy[1]][:20]

