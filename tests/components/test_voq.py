"""Virtual output queues in switch input buffers (inputQueues = "voq"): no head-of-line blocking
between outputs, credits per input VL, conservation, deadlock detection, configuration errors."""

from __future__ import annotations

import numpy as np
import pytest

from ibfabric.components.switch.inbuf import VoqPool, VoqQueue
from ibfabric.errors import ConfigError, DeadlockError
from ibfabric.simulation import Simulation

from .conftest import RING, STAR, send_at
from .test_deadlock import plus_two_plugin
from .test_switch_hca import split_plugin, split_run

STAR8 = STAR.replace("int k = 4;", "int k = 8;")


class TestHeadOfLineBlocking:
    @staticmethod
    def latency_to_h2(queues: str, burst: bool) -> float:
        """h0 sends a 256-byte packet to h1 and then one to h2 (flow 9), 100 ns after h3 starts a burst
        of four to h1 (if *burst*) that the output to h1 serves first (port 4 has weight 4): the
        latency of h0's packet to h2."""
        sim = Simulation(STAR, overrides={"**.mtu": "256B", "**.sw.inputQueues": f'"{queues}"',
                                          "**.sw.crossbarArbiter": '"wrr"', "**.sw.crossbarWeights": '"4:4"'},
                         seed=1, check=True)
        if burst:
            for _ in range(4):
                send_at(sim, 0.0, "h[3]", "h[1]", 256)
        send_at(sim, 100.0, "h[0]", "h[1]", 256)
        send_at(sim, 100.0, "h[0]", "h[2]", 256, flow=9)
        sim.run("50us")
        log = sim.stats.arrays()
        (k,) = np.flatnonzero(log["flow"] == 9)
        return float(log["delivered_at"][k] - log["created"][k])

    def test_a_blocked_output_does_not_hold_back_another(self):
        free = self.latency_to_h2("fifo", burst=False)
        assert self.latency_to_h2("voq", burst=False) == free
        # one FIFO per input VL: the packet for h2 waits behind h0's packet for h1, which waits
        # for h3's four (1 us each at 4 ns per byte)
        assert self.latency_to_h2("fifo", burst=True) >= free + 3000
        # a queue per output: it crosses as soon as it is routed, as if h1's output were free
        assert self.latency_to_h2("voq", burst=True) == free

    def test_credits_stay_shared_by_the_queues_of_a_vl(self):
        # h0 sends to h1 and h2 at random at full load while h3 floods h1: the packets for the
        # overloaded h1 fill h0's input VL buffer, whose credits the queue to h2 shares (IBA
        # flow control is per VL), so VOQs cannot give h0's traffic to h2 its full share either
        _, fifo = split_run(1, 0)
        _, voq = split_run_voq()
        assert fifo < 0.4 and voq < 0.4  # of the 0.5 h0 offers to h2

    def test_packets_of_one_vl_to_one_output_stay_in_order(self):
        sim = Simulation(STAR, overrides={"**.mtu": "256B", "**.sw.inputQueues": '"voq"'}, seed=1, check=True)
        for k in range(40):
            send_at(sim, 10.0 * k, "h[0]", f"h[{1 + k % 3}]", 64 + 16 * (k % 11), flow=k)
        sim.run("100us")
        log = sim.stats.arrays()
        for d in (1, 2, 3):
            sel = log["dst"] == d
            order = log["flow"][sel][np.argsort(log["delivered_at"][sel], kind="stable")]
            assert order.tolist() == sorted(order.tolist())

    def test_a_single_switch_under_uniform_traffic(self):
        # 8 hosts offering more than their links carry (so that no source ever idles): FIFO input
        # queueing saturates near 2 - sqrt(2) of the link rate; VOQs at link speed near 0.94;
        # ibfabric's default switch (VOQs, 16 KiB per VL, a crossbar 1.25 times as fast as the
        # links) carries more than 0.95, as real switches do
        def accepted(**params):
            over = {"**.traffic": "uniform", "**.load": "1.2", "**.mtu": "256B", "**.packetSize": "256B"}
            over.update({f"**.sw.{k}": v for k, v in params.items()})
            sim = Simulation(STAR8, overrides=over, seed=1, warmup="50us", check=True)
            s = sim.run("400us")
            assert s["conservation_ok"]
            return s["accepted_load"]

        slow = {"crossbarSpeedup": "1", "vlBufferSize": "4096B"}
        fifo, voq = accepted(inputQueues='"fifo"', **slow), accepted(inputQueues='"voq"', **slow)
        assert 0.55 < fifo < 0.66
        default = accepted()
        assert 0.88 < voq < default
        assert default >= 0.95


class TestAuto:
    """``inputQueues = "auto"`` (the default): VOQs unless a mechanism needs one FIFO per input VL."""

    @staticmethod
    def queues(topology=STAR, **over) -> set[str]:
        sim = Simulation(topology, overrides={"**.mtu": "256B", **over}, seed=1)
        sim.run("1ns")
        return {m.input_queues for m in sim.find("**") if getattr(m, "is_switch", False)}

    def test_virtual_output_queues_by_default(self):
        sim = Simulation(STAR, seed=1)
        sw = sim.module("sw")
        assert sw.input_queues == "voq" and all(isinstance(b, VoqPool) for rx in sw.rx.values() for b in rx.bufs)

    def test_a_fifo_split_where_escape_buffers_ask_for_one(self):
        over = {"**.routing": "fa", "**.sm.lmc": "1", "**.optionBits": "1", "**.escapeBufferSize": "2048B"}
        assert self.queues("irregular16", **over) == {"split"}

    @pytest.mark.parametrize("over", [
        {"**.routing": "fa", "**.sm.lmc": "1", "**.optionBits": "1"},
        {"**.dropper": '"hll"', "**.dropperOptions": '"hv=3"'},
        {"**.multicastGroups": '"g: 0 1 2 senders=0"'},
        {"**.multicastGroups": '"g: 0 1 2 senders=0"', "**.replication": '"synchronous"'},
        {"**.multicastGroups": '"g: 0 1 2 senders=0"', "**.replication": '"replicated-unicast"'},
    ], ids=["routing-options", "lifetimes", "multicast-groups", "synchronous-replication", "replicated-unicast"])
    def test_voqs_with_every_other_mechanism(self, over):
        topology = "irregular16" if "**.routing" in over else STAR
        assert self.queues(topology, **over) == {"voq"}

    def test_an_explicit_choice_is_kept(self):
        assert self.queues(**{"**.sw.inputQueues": '"fifo"'}) == {"fifo"}
        assert self.queues(**{"**.sw.inputQueues": '"voq"', "**.sw.dropper": '"hll"', "**.sw.dropperOptions": '"hv=3"'}) \
            == {"voq"}


def split_run_voq():
    """:func:`split_run` at speedup 1 without output buffers, with VOQs: (simulation, h2's share of its link)."""
    sim = Simulation(STAR, overrides={"**.traffic": "split", "**.load": "1.0", "**.mtu": "256B",
                                      "**.vlBufferSize": "1024B", "**.sw.inputQueues": '"voq"'},
                     plugins=[split_plugin], seed=1, warmup="20us", check=True)
    sim.run("300us")
    log = sim.stats.arrays()
    w = (log["created"] >= 20_000) & (log["delivered_at"] <= 300_000)
    return sim, log["size"][w & (log["dst"] == 2)].sum() / 280_000 / 0.25


class TestCredits:
    def test_one_credit_pool_per_input_vl(self):
        sim = Simulation(STAR, overrides={"**.traffic": "uniform", "**.load": "1.2", "**.mtu": "256B",
                                          "**.vlBufferSize": "768B", "**.sw.inputQueues": '"voq"',
                                          "**.numVLs": "2", "**.sl": '"0..1"'}, seed=3, check=True)
        sw = sim.module("sw")
        assert all(isinstance(b, VoqPool) for rx in sw.rx.values() for b in rx.bufs)
        peak = 0
        for t in range(10, 150, 10):
            sim.run(f"{t}us")
            for rx in sw.rx.values():
                for pool in rx.bufs:
                    assert isinstance(pool, VoqPool)
                    held = sum(v.occ for v in pool.voqs if v is not None)
                    assert pool.occ == held == sum(p.credits for p in pool.q) <= pool.capacity == 12
                    peak = max(peak, pool.occ)
        assert peak > 4  # the pools did fill (more than one 256-byte packet)

    def test_a_queue_is_its_own_packet_list_and_compares_as_itself(self):
        sim = Simulation(STAR, overrides={"**.sw.inputQueues": '"voq"'}, seed=1)
        pool = sim.module("sw").rx[1].bufs[0]
        a, b = VoqQueue(pool, 2), VoqQueue(pool, 3)
        assert a.q is a and len(a) == len(b) == 0 and a != b and a != [] and len({a, b}) == 2  # empty queues differ
        pkts = [object(), object()]
        a.q.append(pkts[0])
        a.q.append(pkts[1])
        assert a.pop(0) is pkts[0] and list(a) == [pkts[1]]
        cands = [b, a]
        cands.remove(a)  # an output port's candidates are removed by identity
        assert cands == [b] and cands[0] is b and a not in cands

    def test_output_buffers_with_voqs(self):
        sim = Simulation(STAR8, overrides={"**.traffic": "uniform", "**.load": "1.0", "**.mtu": "256B",
                                           "**.sw.inputQueues": '"voq"', "**.sw.outputBufferSize": "1024B",
                                           "**.crossbarSpeedup": "2"}, seed=2, warmup="30us", check=True)
        s = sim.run("200us")
        assert s["conservation_ok"] and s["accepted_load"] > 0.9


class TestDeadlock:
    def test_a_cycle_of_full_voq_buffers_is_found(self):
        # 7-ring, host i -> host i + 3 clockwise: every VL buffer fills with packets for the next switch
        sim = Simulation(RING, overrides={"**.n": "7", "**.traffic": "plus-k", "**.trafficOptions": '"k=3"',
                                          "**.load": "1.0", "**.routing": "minhop", "**.mtu": "256B",
                                          "**.vlBufferSize": "320B", "**.inputQueues": '"voq"'},
                         plugins=[plus_two_plugin], seed=1, deadlock_interval="20us")
        with pytest.raises(DeadlockError) as info:
            sim.run("3ms")
        assert len(info.value.cycle) == 7 and all(c.endswith("VL0") for c in info.value.cycle)


@pytest.mark.parametrize("over, message", [
    ({"**.sw.inputQueues": '"shared"'}, "'inputQueues' must be \"auto\", \"fifo\" or \"voq\""),
    ({"**.sw.inputQueues": '"voq"', "**.sw.escapeBufferSize": "1024B", "**.sw.optionBits": "1"},
     "it needs inputQueues = \"fifo\""),
])
def test_bad_parameters(over, message):
    with pytest.raises(ConfigError, match=message):
        Simulation(STAR, overrides=over)
