"""The packet-level data path: latency formulas, flow control, conservation, determinism.

The formulas are the ones docs/model.md states.
"""

from __future__ import annotations

from bisect import insort

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ibfabric.components.packet import VL15, Packet
from ibfabric.components.port import insert_return, pending_returns
from ibfabric.simulation import Simulation

from .conftest import CHAIN, RING_MIXED, STAR, send_at

TAU_SDR = 4.0  # ns per byte on a 1x SDR link (2 Gb/s of data)
R, A = 100.0, 20.0  # default routingDelay, arbitrationDelay


def latencies(sim):
    log = sim.stats.arrays()
    return log["delivered_at"] - log["created"]


class TestZeroLoadLatency:
    @pytest.mark.parametrize("n", [1, 2, 4])
    @pytest.mark.parametrize("size", [64, 256, 2074])
    def test_formula(self, chain, n, size):
        # T(L) = sum of wire delays + n (routingDelay + arbitrationDelay) + L tau
        sim = chain(n)
        send_at(sim, 0.0, "a", "b", size)
        sim.run("100us")
        wires = 5.0 * (2 + 3 * (n - 1) + 7)
        assert latencies(sim).tolist() == [pytest.approx(wires + n * (R + A) + size * TAU_SDR)]

    def test_cut_through_adds_one_byte_time_per_byte_across_a_switch(self, chain):
        # Doubling the packet adds L tau, not 2 L tau (store-and-forward would).
        out = {}
        for size in (512, 1024):
            sim = chain(1)
            send_at(sim, 0.0, "a", "b", size)
            sim.run("50us")
            out[size] = latencies(sim)[0]
        assert out[1024] - out[512] == pytest.approx(512 * TAU_SDR)

    def test_routing_and_arbitration_delays_are_parameters(self, chain):
        sim = chain(2, **{"**.routingDelay": "250ns", "**.arbitrationDelay": "0.05us"})
        send_at(sim, 0.0, "a", "b", 256)
        sim.run("50us")
        assert latencies(sim)[0] == pytest.approx(5.0 * 12 + 2 * 300 + 256 * TAU_SDR)

    def test_propagation_delay_per_metre(self, chain):
        sim = chain(1, **{"**.propagationDelay": "10ns/m", "**.la": "20m"})
        send_at(sim, 0.0, "a", "b", 100)
        sim.run("50us")
        assert latencies(sim)[0] == pytest.approx(10.0 * (20 + 7) + R + A + 100 * TAU_SDR)

    def test_faster_output_cannot_finish_before_the_tail_arrives(self):
        # 1x SDR in, 4x QDR out: the output link idles waiting for the tail.
        sim = Simulation(
            CHAIN.replace('sw[n-1].port[2] <--> Link { width = "1x"; speed = "SDR";',
                          'sw[n-1].port[2] <--> Link { width = "4x"; speed = "QDR";'),
            check=True,
        )
        send_at(sim, 0.0, "a", "b", 1000)
        sim.run("50us")
        tail_at_switch = 10.0 + 1000 * TAU_SDR
        assert latencies(sim)[0] == pytest.approx(tail_at_switch + 35.0)

    def test_idle_source_sends_at_creation(self, chain):
        sim = chain(1)
        send_at(sim, 5000.0, "a", "b", 256)
        sim.run("50us")
        log = sim.stats.arrays()
        assert log["injected_at"][0] == log["created"][0] == 5000.0


class TestFlowControl:
    def test_credit_invariant_and_buffer_bound_under_overload(self):
        # Four hosts all sending to host 0 at full load: the output to host 0
        # is the bottleneck and input buffers fill up.  check=True asserts
        # credits available + returning + held == buffer size at every step.
        sim = Simulation(STAR, overrides={"**.h[0].traffic": '""', "**.load": "1.0",
                                          "**.trafficOptions": '"fraction=1 hotspot=0"',
                                          "**.h[*].traffic": "hot-spot", "**.vlBufferSize": "1024B",
                                          "**.mtu": "256B"},
                         check=True, seed=3)
        sw = sim.module("sw")
        peak = [0]

        def sample():  # (check=True asserts the bound at every transmission; this shows they fill up)
            peak[0] = max([peak[0]] + [buf.occ for buf in sw.buffers()])
            sim.call_at(sim.now + 100.0, sample)

        sim.call_at(0.0, sample)
        sim.run("200us")
        for buf in sw.buffers():
            assert buf.occ <= buf.capacity
        assert peak[0] == 1024 // 64  # they did fill up
        for tx in sim.ports:
            for vl in range(tx.nvl):
                assert 0 <= tx.credits[vl] <= tx.capacity[vl]

    def test_packet_waits_for_credits_for_all_of_it(self):
        # A 1024-byte buffer holds 16 credits: 4 packets of 256 B, never a fifth.
        sim = Simulation(CHAIN, overrides={"**.vlBufferSize": "1024B", "**.mtu": "256B",
                                           "**.routingDelay": "1ms"}, check=True)
        for k in range(8):
            send_at(sim, 0.0, "a", "b", 256)
        sim.run("500us")  # the switch holds every packet for 1 ms: only 4 fit
        buf = sim.module("sw[0]").rx[1].bufs[0]
        assert len(buf.q) == 4 and buf.occ == 16
        assert sim.module("a").tx[1].credits[0] == 0

    def test_vl15_bypasses_arbitration_and_flow_control(self):
        # Fill VL0 towards b and leave the switch without data credits; a
        # management packet still goes through, ahead of the queued data.
        sim = Simulation(CHAIN, overrides={"**.vlBufferSize": "512B", "**.mtu": "256B"}, check=True)
        for _ in range(20):
            send_at(sim, 0.0, "a", "b", 256)
        send_at(sim, 100.0, "a", "b", 256, vl=VL15)
        sim.run("100us")
        log = sim.stats.arrays()
        order = sorted(range(len(log["created"])), key=lambda i: log["delivered_at"][i])
        mgmt_rank = [k for k, i in enumerate(order) if log["created"][i] == 100.0][0]
        assert len(order) == 21
        assert mgmt_rank <= 3  # overtakes the 16 or so data packets queued before it


class TestCreditReturnList:
    """A VL's credit returns are one flat list ``[time, credits, ...]`` in time order (no object per return)."""

    @given(st.lists(st.tuples(st.sampled_from([0.0, 1.5, 2.0, 7.25, 9.0]), st.integers(1, 8)), max_size=12))
    def test_insertion_keeps_the_order_of_pairs(self, returns):
        flat, pairs = [], []
        for t, c in returns:
            insert_return(flat, t, c)
            insort(pairs, (t, c))
        assert flat == [x for pair in pairs for x in pair]

    def test_pending_counts_what_has_arrived_by_a_time(self):
        rq = [1.0, 4, 2.0, 3, 5.0, 8]
        assert pending_returns(rq) == 15
        assert pending_returns(rq, 2.0) == 7
        assert pending_returns(rq, 0.5) == 0
        assert pending_returns([]) == 0

    def test_absorb_takes_in_what_has_arrived_and_keeps_the_rest(self):
        sim = Simulation(CHAIN, overrides={"**.vlBufferSize": "1024B", "**.mtu": "256B"})
        tx = sim.module("a").tx[1]
        tx.credits[0] -= 12
        tx.returns[0][:] = [3.0, 4, 5.0, 4, 9.0, 4]
        assert tx.credit_time(0, tx.credits[0] + 8, 0.0) == 5.0
        assert tx.credit_time(0, tx.credits[0] + 13, 0.0) == float("inf")
        before = tx.credits[0]
        tx.absorb(0, 2.0)
        assert tx.credits[0] == before and tx.returns[0] == [3.0, 4, 5.0, 4, 9.0, 4]
        tx.absorb(0, 5.0)
        assert tx.credits[0] == before + 8 and tx.returns[0] == [9.0, 4]


class TestConservation:
    @pytest.mark.parametrize("load", [0.1, 0.6, 1.2])
    @pytest.mark.parametrize("stop", ["3us", "40us"])
    def test_injected_equals_delivered_dropped_in_flight(self, load, stop):
        sim = Simulation(STAR, overrides={"**.traffic": "uniform", "**.load": str(load), "**.k": "6"}, seed=5,
                         check=True)
        s = sim.run(stop)
        assert s["packets_injected"] == s["packets_delivered"] + s["packets_dropped"] + s["packets_in_flight"]
        assert s["conservation_ok"]
        assert s["packets_generated"] == s["packets_injected"] + s["packets_queued_at_source"]

    def test_conservation_with_mixed_cable_lengths(self):
        # Different wire delays make ready times arrive out of order at output ports.
        sim = Simulation(RING_MIXED, overrides={"**.traffic": "uniform", "**.load": "0.3", "**.routing": "updn", "**.n": "6"},
                         check=True, seed=2)
        s = sim.run("100us")
        assert s["conservation_ok"] and s["packets_delivered"] > 100


class TestLoads:
    def test_accepted_never_exceeds_offered_nor_capacity(self):
        sim = Simulation(STAR, overrides={"**.traffic": "hot-spot", "**.trafficOptions": '"fraction=0.9 hotspot=0"',
                                          "**.load": "1.5"}, seed=1)
        s = sim.run("200us")
        assert s["accepted_load"] <= s["offered_load"]
        assert s["accepted_load"] <= 1.0
        assert s["link_utilisation"]["max"] <= 1.0 + 1e-9
        # the hot host's link is saturated
        assert s["link_utilisation"]["max"] > 0.95

    def test_low_load_is_fully_accepted(self):
        sim = Simulation(STAR, overrides={"**.traffic": "uniform", "**.load": "0.2"}, seed=4, warmup="20us")
        s = sim.run("1ms")
        assert s["accepted_load"] == pytest.approx(s["offered_load"], rel=0.02)
        assert s["offered_load"] == pytest.approx(0.2, rel=0.1)


class TestDeterminism:
    def _summary(self, seed):
        sim = Simulation(STAR, overrides={"**.traffic": "uniform", "**.load": "0.7"}, seed=seed)
        s = sim.run("100us")
        for k in ("wall_s", "events_per_s", "packet_hops_per_s", "routing_time_s"):
            s.pop(k, None)
        return s

    def test_same_seed_same_summary(self):
        assert self._summary(11) == self._summary(11)

    def test_other_seed_other_summary(self):
        assert self._summary(11) != self._summary(12)


class TestRoutingFailures:
    def test_packet_to_unknown_lid_is_dropped_not_lost(self, chain):
        sim = chain(1)
        a = sim.module("a")
        sim.call_at(0.0, lambda: a.send_packet(Packet.make(a.lid, 999, 256)))
        s = sim.run("20us")
        assert s["drops_by_reason"] == {"no-route": 1}
        assert s["conservation_ok"]
