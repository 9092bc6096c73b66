"""Switch output buffers and crossbar speedup; HCA segmentation, SL priority; VL arbitration in a network."""

from __future__ import annotations

import numpy as np
import pytest

from ibfabric import hookimpl
from ibfabric.components.packet import Packet
from ibfabric.errors import ConfigError, DeadlockError
from ibfabric.plugins.traffic import TrafficPattern
from ibfabric.simulation import Simulation
from ibfabric.topologies import shipped

from .conftest import CHAIN, RING, STAR, send_at
from .test_deadlock import plus_two_plugin

TAU = 4.0


class Split(TrafficPattern):
    """Host 0 sends to hosts 1 and 2 at random, host 3 to host 1: host 0's queue for
    host 1 blocks the packets behind it that go to host 2 (head-of-line blocking)."""

    name = "split"

    def destinations(self, src, rng, n):
        if src == 0:
            return rng.integers(1, 3, n)
        return np.full(n, 1 if src == 3 else -1)

    def active(self, src):
        return src in (0, 3)


class split_plugin:
    @staticmethod
    @hookimpl
    def ibfabric_register_traffic_patterns(register):
        register("split", Split)


def split_run(speedup, out_buffer, **kw):
    sim = Simulation(STAR, overrides={"**.traffic": "split", "**.load": "1.0", "**.crossbarSpeedup": str(speedup),
                                      "**.mtu": "256B", "**.vlBufferSize": "1024B", "**.inputQueues": "fifo",
                                      "**.outputBufferSize": f"{out_buffer}B"},
                     plugins=[split_plugin], seed=1, warmup="20us", **kw)
    sim.run("300us")
    log = sim.stats.arrays()
    w = (log["created"] >= 20_000) & (log["delivered_at"] <= 300_000)
    to2 = log["size"][w & (log["dst"] == 2)].sum() / 280_000 / 0.25  # fraction of h2's 1x SDR link
    return sim, to2


class TestCrossbar:
    def test_without_output_buffers_speedup_cannot_relieve_head_of_line_blocking(self):
        # host 0's packet for the busy output to host 1 blocks its packets for host 2,
        # however fast the crossbar: it can only cross when that output is free
        assert split_run(1, 0)[1] == split_run(4, 0)[1]
        # with output buffers the blocked packet crosses into host 1's output buffer
        # and the packets behind it get through to host 2
        assert split_run(2, 1024)[1] > split_run(1, 1024)[1] * 1.03

    def test_speedup_and_output_buffers_raise_throughput_under_load(self):
        # saturated irregular fabric: input-queued at link speed < speedup 2 < speedup 2 with output buffers
        def accepted(speedup, out_buffer, check=False):
            sim = Simulation(shipped("irregular16"), overrides={
                "**.traffic": "uniform", "**.load": "0.6", "**.crossbarSpeedup": str(speedup),
                "**.outputBufferSize": out_buffer, "**.mtu": "256B", "**.vlBufferSize": "2KiB",
                "**.inputQueues": "fifo"},
                seed=1, warmup="50us", check=check)
            s = sim.run("200us")
            assert s["conservation_ok"]
            return s["accepted_load"]

        # delivered throughput in the window (seeds 1 and 2, 50-200 us: +10-13 % and +2-5 %)
        plain, fast, buffered = accepted(1, "0B"), accepted(2, "0B"), accepted(2, "2KiB")
        assert fast > plain * 1.05
        assert buffered > fast * 1.01

    def test_slow_crossbar_limits_throughput(self):
        sim = Simulation(STAR, overrides={"**.h[0].traffic": "hot-spot", "**.trafficOptions": '"fraction=1 hotspot=1"',
                                          "**.load": "1.0", "**.crossbarSpeedup": "0.5"}, seed=1, warmup="10us")
        sim.run("200us")
        log = sim.stats.arrays()
        w = log["delivered_at"] >= 10_000
        # h0 offers a full link; the crossbar at half the link rate passes half of it
        assert log["size"][w].sum() / 190_000 / 0.25 == pytest.approx(0.5, abs=0.02)

    @pytest.mark.parametrize("speedup, out_buffer", [(1, 0), (2, 0), (1, 4096), (2, 4096), (0.5, 0)])
    def test_zero_load_latency(self, speedup, out_buffer):
        sim = Simulation(CHAIN, overrides={"**.n": "2", "**.crossbarSpeedup": str(speedup),
                                           "**.outputBufferSize": f"{out_buffer}B"}, check=True)
        send_at(sim, 0.0, "a", "b", 512)
        sim.run("50us")
        log = sim.stats.arrays()
        serial = 512 * TAU / min(speedup, 1.0)
        assert (log["delivered_at"] - log["created"])[0] == pytest.approx(5.0 * 12 + 2 * 120 + serial)

    def test_output_buffers_keep_conservation_and_credits_under_overload(self):
        sim = Simulation(STAR, overrides={"**.traffic": "uniform", "**.load": "1.3", "**.mtu": "256B",
                                          "**.vlBufferSize": "768B", "**.outputBufferSize": "512B",
                                          "**.crossbarSpeedup": "2"}, check=True, seed=9)
        s = sim.run("150us")
        assert s["conservation_ok"]
        assert any(len(q) for tx in sim.module("sw").tx.values() for q in tx.obuf) or s["packets_in_flight"] >= 0

    def test_deadlock_through_output_buffers_is_found(self):
        # 7-ring, host i -> host i + 3: three hops clockwise, one packet per buffer
        sim = Simulation(RING, overrides={"**.n": "7", "**.traffic": "plus-k", "**.trafficOptions": '"k=3"',
                                          "**.load": "1.0", "**.routing": "minhop", "**.mtu": "256B",
                                          "**.vlBufferSize": "320B", "**.outputBufferSize": "320B",
                                          "**.crossbarSpeedup": "2"},
                         plugins=[plus_two_plugin], seed=1, deadlock_interval="20us")
        with pytest.raises(DeadlockError) as info:
            sim.run("3ms")
        cycle = info.value.cycle
        assert len(cycle) == 14  # seven output buffers and seven input buffers, alternating
        assert [c.endswith("out VL0") for c in cycle] == [True, False] * 7

    def test_output_buffer_must_hold_a_packet(self):
        with pytest.raises(ConfigError, match="outputBufferSize"):
            Simulation(CHAIN, overrides={"**.outputBufferSize": "256B"})


class TestHCA:
    def test_messages_are_segmented_into_mtu_packets(self):
        sim = Simulation(CHAIN, overrides={"**.a.traffic": "uniform", "**.load": "0.1", "**.messageSize": "5000B",
                                           "**.mtu": "2048B", "**.vlBufferSize": "8KiB"}, seed=1)
        sim.run("2ms")
        log = sim.stats.arrays()
        first = log["msg"] == log["msg"][0]
        assert log["size"][first].tolist() == [2074, 2074, 930]
        assert log["sl"][first].tolist() == [0, 0, 0]
        assert log["last"][first].tolist() == [False, False, True]
        assert np.all(np.diff(log["delivered_at"][first]) > 0)

    def test_sl_priority_orders_the_send_queues(self):
        sim = Simulation(CHAIN, overrides={"**.a.slPriority": '"1 0"', "**.mtu": "256B", "**.vlBufferSize": "512B"})
        a, b = sim.module("a"), sim.module("b")

        def burst():
            for sl in (0, 0, 0, 0, 1, 1, 1, 1):
                a.send_packet(Packet.make(a.lid, b.lid, 256, sl=sl))

        sim.call_at(0.0, burst)
        sim.run("50us")
        log = sim.stats.arrays()
        order = log["sl"][np.argsort(log["delivered_at"])].tolist()
        assert order == [1, 1, 1, 1, 0, 0, 0, 0]

    def test_without_priorities_lower_sl_goes_first(self):
        sim = Simulation(CHAIN, overrides={"**.mtu": "256B", "**.vlBufferSize": "512B"})
        a, b = sim.module("a"), sim.module("b")
        sim.call_at(0.0, lambda: [a.send_packet(Packet.make(a.lid, b.lid, 256, sl=s)) for s in (3, 3, 2, 2)])
        sim.run("50us")
        log = sim.stats.arrays()
        assert log["sl"][np.argsort(log["delivered_at"])].tolist() == [2, 2, 3, 3]

    @pytest.mark.parametrize("param, value, message", [
        ("slPriority", '"1 1"', "distinct"),
        ("mtu", "300B", "must be one of"),
        ("sl", '"0..16"', "SLs 0..15"),
        ("arrival", '"bursty"', "poisson"),
        ("numVLs", "16", "1..15"),
    ])
    def test_invalid_parameters(self, param, value, message):
        with pytest.raises(ConfigError, match=message):
            Simulation(CHAIN, overrides={f"**.a.{param}": value, "**.a.traffic": "uniform", "**.a.load": "0.1"})


class TestVLArbitrationInTheNetwork:
    def test_output_link_shares_follow_the_table_weights(self):
        # h1 (SL0 -> VL0) and h2 (SL1 -> VL1) both flood h0; the switch port to h0 serves
        # VL0 at weight 4 and VL1 at weight 16 (one and four 256-byte packets per turn).
        sim = Simulation(STAR, overrides={
            "**.h[0].traffic": '""', "**.h[3].traffic": '""', "**.traffic": "hot-spot",
            "**.trafficOptions": '"fraction=1 hotspot=0"', "**.load": "1.0",
            "**.h[2].sl": '"1"', "**.numVLs": "2", "**.mtu": "256B", "**.packetSize": "256B",
            "**.sw.vlArbLow": '"0:4,1:16"',
        }, seed=1, warmup="20us")
        sim.run("400us")
        log = sim.stats.arrays()
        w = log["delivered_at"] >= 20_000
        by_sl = [log["size"][w & (log["sl"] == sl)].sum() for sl in (0, 1)]
        assert by_sl[1] / by_sl[0] == pytest.approx(4.0, rel=0.03)

    def test_high_priority_table_without_limit(self):
        # VL1 in the high-priority table with LimitOfHighPriority 255 (unbounded): its
        # packets never wait behind VL0's, which only gets the rest of the link.
        sim = Simulation(STAR, overrides={
            "**.h[0].traffic": '""', "**.h[3].traffic": '""', "**.traffic": "hot-spot",
            "**.trafficOptions": '"fraction=1 hotspot=0"', "**.h[1].load": "0.3", "**.load": "1.0",
            "**.h[1].sl": '"1"', "**.numVLs": "2", "**.mtu": "256B",
            "**.sw.vlArbHigh": '"1:1"', "**.sw.vlArbLow": '"0:1"', "**.sw.vlArbHighLimit": "255",
        }, seed=1, warmup="20us")
        sim.run("400us")
        log = sim.stats.arrays()
        w = log["delivered_at"] >= 20_000
        share = [log["size"][w & (log["sl"] == sl)].sum() / 380_000 / 0.25 for sl in (0, 1)]
        lat = log["delivered_at"] - log["created"]
        zero_load = 2 * 5.0 + 120 + 256 * TAU
        assert lat[log["sl"] == 1].mean() < 2 * zero_load
        assert lat[log["sl"] == 0].mean() > 20 * zero_load
        assert share[0] + share[1] == pytest.approx(1.0, abs=0.01)  # the link is full
        assert 0.25 < share[1] < 0.35
