"""Packet droppers: HLL and SLL lifetimes (Kim et al. 2007 §3.5), selective protection, conservation,
deadlock breaking."""

from __future__ import annotations

import pytest

from ibfabric.components.switch.inbuf import InputBuffer, VoqQueue
from ibfabric.components.packet import Packet
from ibfabric.errors import ConfigError
from ibfabric.plugins.droppers import HeadOfQueueLifetime, SwitchLifetime, lifetime_ns
from ibfabric.simulation import Simulation

#: spf on irregular16 at load 0.9 deadlocks within 50 us without dropping (at 30 us: a deadlock
#: search every microsecond finds it then)
SPF = {"**.routing": "spf", "**.load": "0.9", "**.traffic": "uniform"}


def run(dropper="none", options="", check=False, deadlock_interval="50us"):
    ov = dict(SPF, **{"**.dropper": f'"{dropper}"', "**.dropperOptions": f'"{options}"'})
    return Simulation("irregular16", overrides=ov, seed=1, warmup="5us", check=check,
                      deadlock_interval=deadlock_interval)


class TestLimits:
    def test_iba_encoding(self):
        assert lifetime_ns(0) == 4096.0 and lifetime_ns(3) == 4096.0 * 8 and lifetime_ns(19) == 4096.0 * 2**19
        assert lifetime_ns(20) == float("inf")

    def test_expiry_rules(self):
        hll = HeadOfQueueLifetime({"hv": "1"})
        sll = SwitchLifetime({"lv": "0"})
        p = Packet.make(1, 2, 256)
        p.head_at = 100.0
        assert hll.expiry(p, None, 500.0) == 500.0 + 8192.0  # from reaching the head
        assert sll.expiry(p, None, 500.0) == 100.0 + 4096.0  # from arriving at the switch
        assert HeadOfQueueLifetime({"hv": "20"}).expiry(p, None, 0.0) == float("inf")

    def test_selective_protects_control_and_kept_packets(self):
        hll = HeadOfQueueLifetime({"hv": "0"})
        keep, ctl, plain = Packet.make(1, 2, 256, keep=True), Packet.make(1, 2, 256), Packet.make(1, 2, 256)
        ctl.cls = 3
        assert hll.expiry(keep, None, 0.0) == hll.expiry(ctl, None, 0.0) == float("inf")
        assert hll.expiry(plain, None, 0.0) == 4096.0
        every = HeadOfQueueLifetime({"hv": "0", "selective": "false"})
        assert every.expiry(keep, None, 0.0) == 4096.0

    @pytest.mark.parametrize("options, message", [
        ({}, "needs 'hv'"), ({"hv": "x"}, "must be an integer"), ({"hv": "-1"}, ">= 0"),
        ({"hv": "1", "lv": "2"}, "unknown option 'lv'"), ({"hv": "1", "selective": "maybe"}, "true or false"),
    ])
    def test_bad_options(self, options, message):
        with pytest.raises(ConfigError, match=message):
            HeadOfQueueLifetime(options)


class TestInTheDataPath:
    def test_spf_deadlocks_without_dropping(self):
        sim = run()
        with pytest.raises(Exception, match="at 50000 ns"):
            sim.run("150us")
        assert sim.summary()["deadlock"]

    @pytest.mark.parametrize("dropper, options", [("hll", "hv=0"), ("sll", "lv=1")])
    def test_and_completes_with_a_lifetime_dropper(self, dropper, options):
        # twice as long as it takes to deadlock without dropping, with a deadlock search every 5 us (and
        # the credit and wake-up audits at every event: they cost most of the time)
        sim = run(dropper, options, check=True, deadlock_interval="5us")
        s = sim.run("60us")
        assert s["deadlock"] is None and s["conservation_ok"]
        assert s["packets_dropped"] == sim.stats.dropped[dropper] > 100
        assert s["packets_delivered"] > 5 * 1279  # what got through before the deadlock

    @pytest.mark.parametrize("queues", ["fifo", "voq"])
    def test_hll_drops_only_packets_whose_head_time_exceeded_the_limit(self, monkeypatch, queues):
        # the head time of a packet runs from when the previous head of its queue left (the queue's
        # `since`, which crossings keep) or from its own arrival, whichever is later
        dropped: list[tuple[Packet, float, float]] = []
        for cls in (InputBuffer, VoqQueue):
            real = cls.discard

            def spy(self, now, reason, _real=real):
                p = self.q[0]
                dropped.append((p, now, max(self.since, p.head_at)))
                _real(self, now, reason)

            monkeypatch.setattr(cls, "discard", spy)
        sim = run("hll", "hv=0")
        for sw in (n for n in sim.ib_nodes if n.is_switch):
            assert sw.input_queues == "voq"  # (the default)
        ov = dict(SPF, **{"**.dropper": '"hll"', "**.dropperOptions": '"hv=0"', "**.inputQueues": f'"{queues}"'})
        sim = Simulation("irregular16", overrides=ov, seed=1, warmup="5us")
        sim.run("100us")
        assert len(dropped) > 100
        for p, t, since in dropped:
            assert t - since >= lifetime_ns(0) - 1e-6
        # nothing was dropped that had not waited that long: every drop is accounted by the dropper
        assert sim.stats.dropped["hll"] == len(dropped)

    @pytest.mark.parametrize("queues", ["fifo", "voq"])
    def test_lifetimes_watch_output_buffers_too(self, queues):
        ov = dict(SPF, **{"**.dropper": '"hll"', "**.dropperOptions": '"hv=0"', "**.outputBufferSize": "4096B",
                          "**.inputQueues": f'"{queues}"'})
        sim = Simulation("irregular16", overrides=ov, seed=1, warmup="5us", check=True)
        s = sim.run("100us")
        assert s["deadlock"] is None and s["conservation_ok"] and s["drops_by_reason"]["hll"] > 100
