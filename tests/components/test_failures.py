"""Port states and failures in the data path (components/failures.py): what is lost and counted,
conservation and credits through failures, restores, and inactive ports that never block."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ibfabric.components.failures import set_state
from ibfabric.components.packet import VL15, Packet
from ibfabric.components.port import pending_returns
from ibfabric.components.portstate import DROP_REASONS, PortState
from ibfabric.errors import ConfigError
from ibfabric.simulation import Simulation
from ibfabric.topologies.generators import irregular, to_ned

from .conftest import CHAIN, send_at

# a -(2 m)- sw[0] -(3 m)- ... -(7 m)- b, 1x SDR: 4 ns per byte, 5 ns per metre, 120 ns per switch
SMALL = to_ned(irregular(6, links_per_switch=3, hosts_per_switch=2, seed=2, width="1x", speed="SDR"), name="small")


def chain(n=1, **kw):
    return Simulation(CHAIN, overrides={"**.n": str(n)}, check=True, **kw)


def delivered(sim) -> int:
    return sim.summary()["packets_delivered"]


class TestPortState:
    def test_iba_values(self):
        assert [int(s) for s in PortState] == [1, 2, 3, 4] and PortState.ACTIVE.label == "Active"

    def test_every_port_starts_active_with_its_own_class(self):
        sim = chain(2)
        assert all(tx.state == PortState.ACTIVE and "Down" not in type(tx).__name__ for tx in sim.ports)

    def test_reasons_are_documented(self):
        assert {"port-down", "link-down", "node-down", "assimilation", "no-route"} <= set(DROP_REASONS)

    def test_init_port_passes_vl15_and_discards_data(self):
        sim = chain(1)
        sw = sim.module("sw[0]")
        a, b = sim.module("a"), sim.module("b")
        set_state(sw.tx[2], PortState.INIT, 0.0)
        set_state(b.tx[1], PortState.INIT, 0.0)
        sim.call_at(0.0, lambda: a.send_packet(Packet.make(a.lid, b.lid, 256, vl=VL15)))
        send_at(sim, 100.0, "a", "b", 256)
        s = sim.run("20us")
        assert s["packets_delivered"] == 1 and s["drops_by_reason"] == {"port-down": 1}
        assert sim.stats.arrays()["delivered_at"][0] < 5000 and s["conservation_ok"]


class TestLinkFailure:
    def test_packets_routed_to_the_dead_port_are_discarded_never_delivered(self):
        sim = chain(2)
        sim.fail_link("sw[0]", "sw[1]", at="1us")
        for k in range(5):
            send_at(sim, 2000.0 + 1000 * k, "a", "b", 256)
        s = sim.run("20us")
        assert s["drops_by_reason"] == {"port-down": 5}
        assert s["packets_delivered"] == 0 and s["packets_injected"] == 5 and s["conservation_ok"]
        assert s["scenario"] == [{"time_ns": 1000.0, "action": "fail-link", "target": "sw[0].port[2]<->sw[1].port[1]",
                                  "result": "down", "lost": 0}]

    def test_a_packet_on_the_wire_to_a_host_is_lost(self):
        # sent by the switch at 130 ns, 1024 B take 4096 ns: its tail reaches b after 4 us
        sim = chain(1)
        # a host's arriving packets are known by their traffic endpoint (dst), which sources set
        a, b = sim.module("a"), sim.module("b")
        p = Packet.make(a.lid, b.lid, 1024, dst=sim.traffic_index(b))
        sim.call_at(0.0, lambda: a.send_packet(p))
        sim.fail_link("sw[0].port[2]", at="2us")
        s = sim.run("20us")
        assert s["drops_by_reason"] == {"link-down": 1} and s["packets_delivered"] == 0
        assert s["conservation_ok"] and s["scenario"][0]["lost"] == 1

    def test_a_packet_arriving_in_a_switch_buffer_is_lost(self):
        # its head reached the switch at 10 ns, its routing ends at 130 ns: at 50 ns it is still arriving
        sim = chain(1)
        send_at(sim, 0.0, "a", "b", 1024)
        sim.fail_link("a", "sw[0]", at="50ns")
        s = sim.run("20us")
        assert s["drops_by_reason"] == {"link-down": 1} and s["packets_delivered"] == 0
        assert s["packets_in_flight"] == 0 and s["conservation_ok"]
        assert sim.module("sw[0]").rx[1].bufs[0].occ == 0

    def test_a_host_whose_port_is_down_keeps_its_send_queue(self):
        sim = chain(1)
        sim.fail_link("a.port[1]", at="1us")
        send_at(sim, 2000.0, "a", "b", 256)
        s = sim.run("10us")
        assert s["packets_injected"] == 0 and s["packets_queued_at_source"] == 1 and s["packets_dropped"] == 0
        sim.restore_link("a.port[1]", at="12us", training="1us")
        s = sim.run("30us")
        assert s["packets_delivered"] == 1 and s["packets_queued_at_source"] == 0
        assert sim.stats.arrays()["injected_at"][0] == pytest.approx(13000.0)
        assert [e["action"] for e in s["scenario"]] == ["fail-link", "restore-link", "link-up"]

    def test_restore_brings_traffic_back_with_full_credits(self):
        sim = chain(2)
        sim.fail_link("sw[0]", "sw[1]", at="1us")
        sim.restore_link("sw[0]", "sw[1]", at="5us")
        for k in range(10):
            send_at(sim, 2000.0 * k, "a", "b", 256)
        s = sim.run("40us")
        assert s["drops_by_reason"] == {"port-down": 2}  # sent at 2 and 4 us
        assert s["packets_delivered"] == 8 and s["conservation_ok"]
        tx = sim.module("sw[0]").tx[2]
        assert tx.state == PortState.ACTIVE and tx.credits[0] + pending_returns(tx.returns[0]) == tx.capacity[0]

    def test_failing_a_dead_link_again_changes_nothing(self):
        sim = chain(1)
        sim.fail_link("sw[0].port[2]", at="1us")
        sim.fail_link("b", "sw[0]", at="2us")
        s = sim.run("3us")
        assert [e["result"] for e in s["scenario"]] == ["down", "already down"]


class TestNodeFailure:
    def test_a_switch_failure_loses_its_buffers_and_cuts_its_hosts(self):
        sim = Simulation(SMALL, overrides={"**.traffic": "uniform", "**.load": "0.6"}, seed=3, check=True)
        sim.fail_node("sw3", at="20us")
        s = sim.run("40us")
        lost = s["scenario"][0]["lost"]
        assert lost > 0 and lost == s["drops_by_reason"].get("node-down", 0) + s["drops_by_reason"].get("link-down", 0)
        assert s["drops_by_reason"]["port-down"] > 0 and s["conservation_ok"] and s["deadlock"] is None
        assert all(tx.state == PortState.DOWN for tx in sim.module("sw3").tx.values())
        assert not any(len(b.q) for b in sim.module("sw3").buffers())
        # its hosts inject nothing after the failure
        log = sim.stats.arrays()
        hosts = [sim.traffic_index(sim.module(f"h3_{i}")) for i in range(2)]
        late = (log["injected_at"] > 20000) & ((log["src"] == hosts[0]) | (log["src"] == hosts[1]))
        assert not late.any()

    def test_restore_node_delivers_again(self):
        sim = Simulation(SMALL, overrides={"**.traffic": "uniform", "**.load": "0.3"}, seed=3, check=True)
        sim.fail_node("h3_0", at="10us")
        sim.restore_node("h3_0", at="20us", training="500ns")
        sim.restore_link("h3_0.port[1]", at="15us")  # refused: the node is down
        s = sim.run("50us")
        assert [e["result"] for e in s["scenario"]][1] == "refused: node h3_0 is down"
        log = sim.stats.arrays()
        me = sim.traffic_index(sim.module("h3_0"))
        to_me = log["delivered_at"][log["dst"] == me]
        assert ((to_me > 10000) & (to_me < 20500)).sum() == 0 and (to_me > 20500).sum() > 0
        assert s["conservation_ok"]

    def test_a_switch_with_lifetimes_fails_and_comes_back(self):
        sim = Simulation(CHAIN, overrides={"**.dropper": "hll", "**.dropperOptions": "hv=3", "**.traffic": "uniform",
                                           "**.load": "0.5"}, check=True)
        sim.fail_node("sw[0]", at="5us")
        sim.restore_node("sw[0]", at="10us", training="500ns")
        s = sim.run("30us")
        assert s["conservation_ok"] and s["drops_by_reason"].get("node-down", 0) + s["drops_by_reason"].get(
            "link-down", 0) > 0
        assert s["packets_delivered"] > 0


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    variant=st.sampled_from([{}, {"**.outputBufferSize": "1024B"}, {"**.inputQueues": "voq"}, {"**.numVLs": "2"}]),
    actions=st.lists(
        st.tuples(st.sampled_from(["link", "node", "restore"]), st.integers(0, 40), st.floats(500, 25000)),
        min_size=1, max_size=4),
    stop=st.floats(25000, 30000),
)
def test_conservation_and_credits_hold_through_failures(variant, actions, stop):
    """Random failure times and targets on a small irregular fabric: credits (check=True), no false
    deadlock, and injected + copies == delivered + dropped + in flight at the end."""
    sim = Simulation(SMALL, overrides={"**.traffic": "uniform", "**.load": "0.8", "**.mtu": "256B", **variant},
                     seed=5, check=True)
    nodes = sorted((n for n in sim.ib_nodes), key=lambda n: n.path)
    links = [(n, p) for n in nodes if n.is_switch for p in sorted(n.links)]
    for kind, k, t in actions:
        if kind == "link":
            node, port = links[k % len(links)]
            sim.fail_link((sim._rel(node), port), at=t)
        elif kind == "node":
            sim.fail_node(sim._rel(nodes[k % len(nodes)]), at=t)
        else:
            node, port = links[k % len(links)]
            sim.restore_link((sim._rel(node), port), at=t)
            sim.restore_node(sim._rel(nodes[k % len(nodes)]), at=t)
    s = sim.run(stop)
    assert s["conservation_ok"], s["drops_by_reason"]
    assert s["deadlock"] is None
