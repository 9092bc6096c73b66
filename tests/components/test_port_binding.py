"""What a port binds to itself (SwitchTx.bind, TxPort.bind): only what its stages and state need, and it
unbinds only what it bound (components/port.py, TxPort.is_bound)."""

from __future__ import annotations

import pytest

from ibfabric.components.portstate import PortState
from ibfabric.components.switch.tx import _BOUND, SwitchTx
from ibfabric.simulation import Simulation
from ibfabric.testing import STAR_NED

from .test_stage_regressions import SQUARE


@pytest.fixture
def deletions(monkeypatch):
    """Every attribute name deleted from a switch output port while the test runs."""
    seen: list[str] = []

    def record(self, name):
        seen.append(name)
        object.__delattr__(self, name)

    monkeypatch.setattr(SwitchTx, "__delattr__", record)
    return seen


def switch_ports(sim):
    return [tx for node in sim.ib_nodes if node.is_switch for tx in node.tx.values()]


class TestPlainPort:
    def test_holds_no_method_of_its_own_and_deletes_nothing(self, deletions):
        sim = Simulation(STAR_NED, overrides={"**.load": "0.3"})
        sim.run("5us")
        ports = switch_ports(sim)
        for tx in ports:
            tx.bind()
            assert tx.bound == ()
            assert not any(tx.is_bound(name) for name in _BOUND)
            assert type(tx).step is SwitchTx._step_direct
        # deleting a name the instance never held would enter it in the class's shared instance keys
        # (CPython 3.11: the class's own method of that name then runs unspecialised on every port)
        assert deletions == []

    def test_a_port_that_fails_and_recovers_unbinds_exactly_what_it_bound(self, deletions):
        sim = Simulation(STAR_NED, overrides={"**.load": "0.3"})
        sim.run("2us")
        tx = switch_ports(sim)[0]
        tx.set_state(PortState.DOWN, sim.now)
        assert tx.bound == ("step",)
        assert tx.step == tx._step_inactive
        assert deletions == []
        tx.set_state(PortState.INIT, sim.now)
        tx.set_state(PortState.ACTIVE, sim.now)
        assert tx.bound == ()
        assert not tx.is_bound("step")
        assert deletions == ["step", "step"]  # (Down -> Init rebinds the inactive step, Init -> Active removes it)


class TestStagesBindTheirMethods:
    def test_output_buffers(self, deletions):
        sim = Simulation(STAR_NED, overrides={"**.load": "0.3", "**.outputBufferSize": "4096B"})
        sim.run("2us")
        for tx in switch_ports(sim):
            assert set(tx.bound) == {"step", "send", "accept", "room_time"}
            before = list(deletions)
            tx.bind()
            assert deletions[len(before):] == list(tx.bound)  # a rebind removes and binds the same names

    def test_routing_options_at_arbitration_with_output_buffers(self):
        sim = Simulation(SQUARE, overrides={"**.routing": "fa", "**.sm.lmc": "1", "**.optionBits": "1",
                                            "**.selectAt": "arbitration", "**.escapeBufferSize": "320B",
                                            "**.outputBufferSize": "320B", "**.inputQueues": "fifo",
                                            "**.mtu": "256B"})
        sim.run("1us")
        for tx in switch_ports(sim):
            assert {"step", "send", "accept", "room_time", "pick", "next_transfer"} <= set(tx.bound)
