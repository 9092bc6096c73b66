"""The ports' event list and its merge with salabim's (components/eventloop.py)."""

import math

import salabim

from ibfabric.components.eventloop import EARLY, PortLoop


class FakePort:
    """Records its wake-ups in a shared log; asks to be woken again at the times in *again*
    (one per wake-up, inf: idle), as a port's step answers."""

    def __init__(self, name, log, again=()):
        self.name = name
        self.log = log
        self.again = list(again)
        self.gen = 0
        self.own_wake = self.early_at = math.inf
        self.running = False
        self.check = False

    def step(self, now):
        assert self.running and self.own_wake == math.inf  # as the loop runs a port's own wake-up
        self.log.append((now, self.name))
        return self.again.pop(0) if self.again else math.inf

    def wake_early(self, now):
        self.log.append((now, self.name + "!"))


class Holder(salabim.Component):
    """A salabim component that logs at the given times."""

    def setup(self, times, log):
        self.times = times
        self.log = log

    def process(self):
        for t in self.times:
            yield self.hold(till=t)
            self.log.append((self.env.now(), self.name()))


def env():
    return salabim.Environment(trace=False, random_seed="", set_numpy_random_seed=False, yieldless=False)


def test_salabim_events_run_before_port_wake_ups_due_at_the_same_time():
    e = env()
    loop = PortLoop(e)
    log = []
    a, b = FakePort("a", log), FakePort("b", log)
    loop.schedule(5.0, a, 0)
    Holder(env=e, name="s", times=[5.0, 7.0], log=log)
    loop.schedule(7.0, b, 0)
    loop.schedule(3.0, b, EARLY)
    loop.run(10.0)
    assert log == [(3.0, "b!"), (5.0, "s"), (5.0, "a"), (7.0, "s"), (7.0, "b")]
    assert e.now() == 10.0 and loop.now == 10.0  # salabim's clock and the loop's are at the end


def test_salabim_activity_scheduled_from_a_wake_up_runs_at_its_time_when_the_loop_is_told():
    e = env()
    loop = PortLoop(e)
    log = []

    class Poker(FakePort):
        def step(self, now):
            h.activate(at=now + 1.0)  # absolute: salabim's clock lags behind the loop's here
            loop.salabim_at(now + 1.0)
            return super().step(now)

    h = Holder(env=e, name="s", times=[100.0], log=log)
    loop.schedule(4.0, Poker("p", log), 0)
    loop.schedule(5.0, FakePort("a", log), 0)
    loop.schedule(6.0, FakePort("b", log), 0)
    loop.run(10.0)
    assert log == [(4.0, "p"), (5.0, "s"), (5.0, "a"), (6.0, "b")]


def test_in_check_mode_salabim_activity_the_loop_was_not_told_of_is_an_error():
    import pytest

    e = env()
    loop = PortLoop(e, check=True)

    class Poker(FakePort):
        def step(self, now):
            h.activate(at=now + 1.0)  # (no salabim_at)
            return super().step(now)

    h = Holder(env=e, name="s", times=[100.0], log=[])
    loop.schedule(4.0, Poker("p", []), 0)
    with pytest.raises(AssertionError, match="salabim_at"):
        loop.run(10.0)


def test_stop_ends_the_run_once_everything_due_then_has_run():
    e = env()
    loop = PortLoop(e)
    log = []

    class Stopper(FakePort):
        def step(self, now):
            loop.stop()
            return super().step(now)

    loop.schedule(3.0, Stopper("x", log), 0)
    loop.schedule(3.0, FakePort("a", log), 0)
    loop.schedule(4.0, FakePort("b", log), 0)
    loop.run(10.0)
    assert log == [(3.0, "x"), (3.0, "a")] and loop.now == 3.0 and e.now() == 3.0
    loop.run(10.0)
    assert log[-1] == (4.0, "b") and loop.now == 10.0


def test_entries_due_at_the_end_run_before_it_and_later_ones_wait():
    e = env()
    loop = PortLoop(e)
    log = []
    a = FakePort("a", log)
    loop.schedule(10.0, a, 0)
    loop.schedule(10.5, a, 0)
    loop.run(10.0)
    assert log == [(10.0, "a")] and len(loop) == 1
    loop.run(11.0)
    assert log == [(10.0, "a"), (10.5, "a")] and len(loop) == 0


def test_an_own_wake_up_steps_the_port_and_re_arms_it_where_the_step_says():
    e = env()
    loop = PortLoop(e)
    log = []
    a = FakePort("a", log, again=[4.0, math.inf])
    b = FakePort("b", log, again=[4.0])
    loop.schedule(1.0, a, 0)
    loop.schedule(2.0, b, 0)
    loop.run(10.0)
    # a asked for 4.0 at time 1, before b did at time 2: a runs first at 4; then a is idle
    assert log == [(1.0, "a"), (2.0, "b"), (4.0, "a"), (4.0, "b")]
    assert loop.events == 4 and (a.own_wake, b.own_wake) == (math.inf, math.inf)
    assert not a.running and len(loop) == 0


def test_no_re_arming_when_an_early_wake_up_will_look_first():
    e = env()
    loop = PortLoop(e)
    log = []
    a = FakePort("a", log, again=[5.0])
    a.early_at = 3.0  # an early wake-up is due before the time the step asks for
    loop.schedule(1.0, a, 0)
    loop.schedule(3.0, a, EARLY)
    loop.run(10.0)
    assert log == [(1.0, "a"), (3.0, "a!")] and a.own_wake == math.inf


def test_a_replaced_wake_up_is_skipped():
    e = env()
    loop = PortLoop(e)
    log = []
    a = FakePort("a", log)
    loop.schedule(4.0, a, a.gen)
    a.gen += 1  # re-armed (a port changing state)
    loop.schedule(2.0, a, a.gen)
    loop.run(10.0)
    assert log == [(2.0, "a")]


def test_a_port_is_an_object_of_its_own_not_a_salabim_component():
    import ibfabric

    sim = ibfabric.Simulation("irregular16", overrides={"**.traffic": "uniform", "**.load": "0.2"}, seed=1)
    assert not any(isinstance(tx, salabim.Component) for tx in sim.ports)
    assert len(sim.portloop) == len(sim.ports)  # every port looks once at time 0
    s = sim.run("20us")
    assert s["conservation_ok"] and s["packets_delivered"] > 0
    assert sim.events > 10 * (sim.portloop.calls_run + sim.watchdog.events)  # the port wake-ups are most of them


class Reader(salabim.Component):
    """A salabim component that logs the loop's event count at the given times."""

    def setup(self, times, loop, seen):
        self.times = times
        self.loop = loop
        self.seen = seen

    def process(self):
        for t in self.times:
            yield self.hold(till=t)
            self.seen.append((self.env.now(), self.loop.events))


def test_the_loop_counts_own_and_early_wake_ups_but_not_replaced_ones_and_salabim_sees_the_count():
    e = env()
    loop = PortLoop(e)
    log, seen = [], []
    a = FakePort("a", log, again=[4.0])
    b = FakePort("b", log)
    c = FakePort("c", log)
    loop.schedule(1.0, a, 0)
    loop.schedule(2.0, c, 0)
    c.gen = 1  # c was re-armed: its entry at 2.0 is a replaced wake-up
    loop.schedule(3.0, b, EARLY)
    Reader(env=e, times=[0.5, 3.5, 6.0], loop=loop, seen=seen)
    loop.run(10.0)
    assert log == [(1.0, "a"), (3.0, "b!"), (4.0, "a")]
    assert seen == [(0.5, 0), (3.5, 2), (6.0, 3)] and loop.events == 3
    loop.run(20.0)  # a second run goes on counting from there
    assert loop.events == 3


def test_the_count_is_kept_when_a_step_raises():
    e = env()
    loop = PortLoop(e)

    class Failing(FakePort):
        def step(self, now):
            raise RuntimeError("boom")

    a = FakePort("a", [])
    loop.schedule(1.0, a, 0)
    loop.schedule(2.0, Failing("f", []), 0)
    try:
        loop.run(10.0)
    except RuntimeError:
        pass
    assert loop.events == 2  # a's wake-up, and f's, which raised
