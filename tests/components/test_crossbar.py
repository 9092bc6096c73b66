"""Crossbar arbitration among input ports (Kim et al. 2007 §2.2, stage 4): FIFO and weighted round robin."""

from __future__ import annotations

import numpy as np
import pytest

from ibfabric.errors import ConfigError
from ibfabric.simulation import Simulation

from .conftest import STAR, send_at
from .test_options import fa_sim


def grant_order(arbiter: str, weights: str = "", per_host: int = 12, **over) -> list[int]:
    """h[0..2] each send *per_host* 256-byte packets to h[3] at t = 0 (switch ports 1..3): the
    sending host of each packet h[3] receives, in delivery order."""
    ov = {"**.mtu": "256B", "**.sw.crossbarArbiter": f'"{arbiter}"', "**.sw.crossbarWeights": f'"{weights}"'}
    ov.update(over)
    sim = Simulation(STAR, overrides=ov, seed=1, check=True)
    for h in range(3):
        for _ in range(per_host):
            send_at(sim, 0.0, f"h[{h}]", "h[3]", 256, flow=h)
    sim.run("200us")
    log = sim.stats.arrays()
    assert len(log["flow"]) == 3 * per_host  # conservation
    return log["flow"][np.argsort(log["delivered_at"], kind="stable")].tolist()


class TestOrder:
    def test_fifo_takes_turns_in_the_order_inputs_became_ready(self):
        assert grant_order("fifo") == [0, 1, 2] * 12

    def test_round_robin_with_equal_weights(self):
        assert grant_order("wrr") == [0, 1, 2] * 12

    def test_weights_are_packets_per_turn(self):
        # port 1 (h[0]) takes two packets per turn until it runs out, then the others alternate
        assert grant_order("wrr", "1:2") == [0, 0, 1, 2] * 6 + [1, 2] * 6

    def test_an_input_with_nothing_ready_loses_its_turn(self):
        # port 2 (h[1]) has weight 3: three in a row while it sends; when it sends nothing,
        # ports 1 and 3 alternate as if it were absent
        assert grant_order("wrr", "2:3", per_host=6) == [0, 1, 1, 1, 2] * 2 + [0, 2] * 4
        ov = {"**.mtu": "256B", "**.sw.crossbarArbiter": '"wrr"', "**.sw.crossbarWeights": '"2:3"'}
        sim = Simulation(STAR, overrides=ov, seed=1, check=True)
        for h in (0, 2):
            for _ in range(6):
                send_at(sim, 0.0, f"h[{h}]", "h[3]", 256, flow=h)
        sim.run("100us")
        log = sim.stats.arrays()
        assert log["flow"][np.argsort(log["delivered_at"], kind="stable")].tolist() == [0, 2] * 6

    @pytest.mark.parametrize("out_buffer", ["0B", "1024B"])
    @pytest.mark.parametrize("queues", ["fifo", "voq"])
    def test_shares_of_a_saturated_output_follow_the_weights(self, out_buffer, queues):
        # h[0..2] flood h[3]; input ports 1, 2, 3 get 3, 1 and 1 packets per turn, whatever the input
        # organisation and the output side
        sim = Simulation(STAR, overrides={
            "**.h[3].traffic": '""', "**.traffic": "hot-spot", "**.trafficOptions": '"fraction=1 hotspot=3"',
            "**.load": "1.0", "**.mtu": "256B", "**.packetSize": "256B", "**.sw.outputBufferSize": out_buffer,
            "**.sw.crossbarArbiter": '"wrr"', "**.sw.crossbarWeights": '"1:3"', "**.sw.inputQueues": f'"{queues}"',
        }, seed=1, warmup="20us", check=True)
        sim.run("400us")
        log = sim.stats.arrays()
        w = log["delivered_at"] >= 20_000
        counts = np.array([np.count_nonzero(w & (log["src"] == s)) for s in range(3)])
        assert counts.sum() > 350  # the output link is saturated (1 us per packet)
        assert counts / counts.sum() == pytest.approx([0.6, 0.2, 0.2], abs=0.01)

    def test_without_weights_a_saturated_output_is_shared_equally(self):
        for arbiter in ("fifo", "wrr"):
            sim = Simulation(STAR, overrides={
                "**.h[3].traffic": '""', "**.traffic": "hot-spot", "**.trafficOptions": '"fraction=1 hotspot=3"',
                "**.load": "1.0", "**.mtu": "256B", "**.packetSize": "256B", "**.sw.crossbarArbiter": f'"{arbiter}"',
            }, seed=1, warmup="20us")
            sim.run("300us")
            log = sim.stats.arrays()
            w = log["delivered_at"] >= 20_000
            counts = np.array([np.count_nonzero(w & (log["src"] == s)) for s in range(3)])
            assert counts / counts.sum() == pytest.approx([1 / 3] * 3, abs=0.01)


class TestWithOtherStages:
    def test_routing_options_run_with_weighted_round_robin(self):
        sim = fa_sim(check=True, **{"**.crossbarArbiter": '"wrr"'})
        s = sim.run("30us")
        assert s["conservation_ok"] and len(sim.stats.arrays()["size"]) > 100


@pytest.mark.parametrize("over, message", [
    ({"**.sw.crossbarArbiter": '"lottery"'}, "'crossbarArbiter' must be \"fifo\" or \"wrr\""),
    ({"**.sw.crossbarWeights": '"1:2"'}, "needs crossbarArbiter = \"wrr\""),
    ({"**.sw.crossbarArbiter": '"wrr"', "**.sw.crossbarWeights": '"1:0"'}, "weights 1..255"),
    ({"**.sw.crossbarArbiter": '"wrr"', "**.sw.crossbarWeights": '"1"'}, "\"port:weight\" items"),
    ({"**.sw.crossbarArbiter": '"wrr"', "**.sw.crossbarWeights": '"9:2"'}, "port '9', which is not connected"),
    ({"**.sw.crossbarArbiter": '"wrr"', "**.sw.crossbarWeights": '"1:2 1:3"'}, "names port 1 twice"),
])
def test_bad_parameters(over, message):
    with pytest.raises(ConfigError, match=message):
        Simulation(STAR, overrides=over)
