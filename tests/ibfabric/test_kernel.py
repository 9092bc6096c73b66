"""The component kernel: lifecycle, gates and channels, messages, signals, random streams, the collector's
settings for builds and runs."""

from __future__ import annotations

import gc
import weakref

import numpy as np
import pytest

from ibfabric import Module, hookimpl
from ibfabric.errors import ConfigError
from ibfabric.kernel import RUN_GC_THRESHOLD, Message, module_rng, run_gc_threshold
from ibfabric.simulation import Simulation

NED = """
package toy;

simple Source
{
    parameters:
        int count = 3;
        double interval @unit(ns) = 10ns;
        int size @unit(B) = 100B;
    gates:
        output out;
}

simple Sink
{
    gates:
        input in;
}

simple Staged
{
    parameters:
        int stages = 3;
}
"""

CALLS: list[tuple] = []


class Source(Module):
    def initialize(self, stage):
        self.sent = 0
        self.timer = Message("tick")
        self.schedule_at(0.0, self.timer)

    def handle_message(self, msg):
        assert msg is self.timer and msg.arrival_gate is None
        self.send(Message("data", size=self.params.size, payload=self.sent), "out")
        self.sent += 1
        if self.sent < self.params.count:
            self.schedule_at(self.now + self.params.interval, self.timer)


class Sink(Module):
    def initialize(self, stage):
        self.got = []

    def handle_message(self, msg):
        self.got.append((msg.payload, msg.arrived_at, msg.arrival_gate.full_name, msg.sender.name))
        self.emit("received", msg.arrived_at - msg.sent_at)

    def finish(self):
        CALLS.append(("finish", self.path, len(self.got)))


class Staged(Module):
    def num_init_stages(self):
        return self.params.stages

    def initialize(self, stage):
        CALLS.append(("init", self.path, stage))


class toy_plugin:
    @staticmethod
    @hookimpl
    def ibfabric_register_module_types(register):
        register("toy.Source", Source, ned=NED)
        register("toy.Sink", Sink, ned=NED)
        register("toy.Staged", Staged, ned=NED)


def make(text, **kw):
    return Simulation("import toy.*;\n" + text, plugins=[toy_plugin], **kw)


PIPE = """
network pipe
{
    submodules:
        src: Source;
        dst: Sink;
    connections:
        src.out --> DatarateChannel { delay = 5ns; datarate = 8Gbps; } --> dst.in;
}
"""


class TestMessages:
    def test_delay_and_serialisation(self):
        sim = make(PIPE)
        sim.run("1us")
        # 100 bytes at 8 Gb/s = 100 ns, plus 5 ns of delay; one message every 10 ns
        assert sim.module("dst").got == [
            (0, 105.0, "in", "src"), (1, 115.0, "in", "src"), (2, 125.0, "in", "src"),
        ]

    def test_message_parameters_come_from_overrides(self):
        sim = make(PIPE, overrides={"**.count": "5", "**.interval": "1us"})
        sim.run("10us")
        assert [t for _, t, _, _ in sim.module("dst").got] == [105.0 + 1000.0 * k for k in range(5)]

    def test_cancelled_self_message_does_not_fire(self):
        sim = make(PIPE, overrides={"**.count": "10"})
        src = sim.module("src")
        sim.call_at(15.0, src.cancel_event, src.timer)
        sim.run("1us")
        assert len(sim.module("dst").got) == 2  # sent at 0 and 10; the one due at 20 was cancelled

    def test_cannot_send_through_an_unconnected_gate(self):
        sim = make("network n { submodules: src: Source; }")
        with pytest.raises(ConfigError, match="not connected"):
            sim.run("1us")

    def test_scheduling_in_the_past_is_refused(self):
        sim = make(PIPE)
        sim.run("50ns")
        with pytest.raises(ConfigError, match="cannot schedule"):
            sim.call_at(10.0, print)


class TestLifecycle:
    def test_stages_in_order_and_finish(self):
        CALLS.clear()
        sim = make("""
network life
{
    submodules:
        a: Staged { stages = 2; }
        b: Staged { stages = 3; }
        src: Source;
        dst: Sink;
    connections:
        src.out --> dst.in;
}""")
        inits = [c for c in CALLS if c[0] == "init"]
        # every module finishes stage k before any starts stage k + 1; b alone has stage 2
        assert inits == [("init", "life.a", 0), ("init", "life.b", 0), ("init", "life.a", 1),
                         ("init", "life.b", 1), ("init", "life.b", 2)]
        sim.run("1us")
        assert ("finish", "life.dst", 3) in CALLS

    def test_params_are_read_only(self):
        sim = make(PIPE)
        with pytest.raises(AttributeError):
            sim.module("src").params.count = 4


class TestSignals:
    def test_recorder_statistics(self):
        sim = make(PIPE, overrides={"**.count": "4"})
        rec = sim.record("received", "count", "mean", "max", modules="**.dst")
        sim.run("1us")
        rows = {name: value for _, name, value in rec.scalars()}
        assert rows == {"received:count": 4.0, "received:mean": 105.0, "received:max": 105.0}
        assert ("pipe.dst", "received:count", 4.0) in sim.scalars()

    def test_unknown_statistic(self):
        sim = make(PIPE)
        with pytest.raises(ConfigError, match="unknown statistic"):
            sim.record("received", "median")


class TestRandomStreams:
    def test_module_streams_are_independent_and_reproducible(self):
        a1 = module_rng(7, "net.a").random(5)
        a2 = module_rng(7, "net.a").random(5)
        b = module_rng(7, "net.b").random(5)
        other_seed = module_rng(8, "net.a").random(5)
        assert np.array_equal(a1, a2)
        assert not np.array_equal(a1, b)
        assert not np.array_equal(a1, other_seed)

    def test_adding_a_module_does_not_change_anothers_stream(self):
        small = make(PIPE, seed=3)
        big = make(PIPE.replace("dst: Sink;", "dst: Sink;\n        extra: Staged;"), seed=3)
        assert small.module("src").rng.random() == big.module("src").rng.random()

    def test_seed_must_be_a_non_negative_integer(self):
        with pytest.raises(ConfigError, match="seed"):
            make(PIPE, seed=-1)


class TestCollector:
    def test_the_young_generation_is_larger_during_a_run_only(self):
        before = gc.get_threshold()
        with run_gc_threshold():
            assert gc.get_threshold() == (RUN_GC_THRESHOLD, *before[1:])
        assert gc.get_threshold() == before
        gc.disable()
        try:
            with run_gc_threshold():
                assert gc.get_threshold() == before  # the caller's choice: left alone
        finally:
            gc.enable()

    def test_a_run_leaves_the_threshold_as_it_was(self):
        before = gc.get_threshold()
        sim = Simulation("irregular16", overrides={"**.traffic": "uniform", "**.load": "0.1"}, seed=1)
        sim.run("2us")
        assert gc.get_threshold() == before

    def test_a_build_freezes_what_it_made_and_the_next_frees_a_dropped_simulation(self):
        first = Simulation("irregular16", overrides={"**.traffic": "uniform", "**.load": "0.1"}, seed=1)
        assert gc.get_freeze_count() > 0
        first.run("2us")
        gone = weakref.ref(first)
        del first
        kept = Simulation("irregular16", overrides={"**.traffic": "uniform", "**.load": "0.1"}, seed=1)
        assert gone() is None  # dropped: collected before the second build froze anything
        alive = weakref.ref(kept)
        Simulation("irregular16", seed=1)
        assert alive() is kept and kept.run("2us")["conservation_ok"]
