"""The multicast data path (issue 10): MFTs in switches, multicast heads and copies, per-group
accounting, conservation counting copies, and the replication engines' behaviour."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ibfabric.components.packet import Packet
from ibfabric.errors import ConfigError, DeadlockError, PluginError
from ibfabric.simulation import Simulation

from .conftest import STAR

ENGINES = ["asynchronous", "synchronous", "central-buffer", "replicated-unicast"]
SWITCH_ENGINES = ENGINES[:3]

TREE = """
// a root switch with two leaf switches; h0, h1 on sw1, h2, h3 on sw2, h4 on the root
network tree
{
    submodules:
        sw[3]: Switch { numPorts = 4; }
        h[5]: HCA;
    connections:
        sw[0].port[1] <--> Link { width = "1x"; speed = "SDR"; length = 2m; } <--> sw[1].port[3];
        sw[0].port[2] <--> Link { width = "1x"; speed = "SDR"; length = 3m; } <--> sw[2].port[3];
        h[4].port[1] <--> Link { width = "1x"; speed = "SDR"; length = 1m; } <--> sw[0].port[3];
        h[0].port[1] <--> Link { width = "1x"; speed = "SDR"; length = 1m; } <--> sw[1].port[1];
        h[1].port[1] <--> Link { width = "1x"; speed = "SDR"; length = 4m; } <--> sw[1].port[2];
        h[2].port[1] <--> Link { width = "1x"; speed = "SDR"; length = 1m; } <--> sw[2].port[1];
        h[3].port[1] <--> Link { width = "1x"; speed = "SDR"; length = 2m; } <--> sw[2].port[2];
}
"""


TWO = """
// two switches, two hosts each: h0, h1 on sw0, h2, h3 on sw1
network two
{
    submodules:
        sw[2]: Switch { numPorts = 3; }
        h[4]: HCA;
    connections:
        sw[0].port[3] <--> Link { width = "1x"; speed = "SDR"; length = 1m; } <--> sw[1].port[3];
        h[0].port[1] <--> Link { width = "1x"; speed = "SDR"; length = 1m; } <--> sw[0].port[1];
        h[1].port[1] <--> Link { width = "1x"; speed = "SDR"; length = 1m; } <--> sw[0].port[2];
        h[2].port[1] <--> Link { width = "1x"; speed = "SDR"; length = 1m; } <--> sw[1].port[1];
        h[3].port[1] <--> Link { width = "1x"; speed = "SDR"; length = 1m; } <--> sw[1].port[2];
}
"""


def star(engine, groups="g: 0 1 2 senders=0", **over):
    ov = {"**.multicastGroups": groups, "**.replication": engine}
    ov.update(over)
    return Simulation(STAR, overrides=ov, check=True)


def mcast_at(sim, t, host, group, size):
    sim.call_at(t, lambda: sim.hosts[host].send_multicast(group, size))


def unicast_at(sim, t, src, dst, size):
    a, b = sim.hosts[src], sim.hosts[dst]
    sim.call_at(t, lambda: a.send_packet(Packet.make(a.lid, b.lid, size, src=src, dst=dst,
                                                    msg=sim.next_message_id())))


def arrivals(sim):
    """{(msg, dst): delivery time} of every delivery."""
    log = sim.stats.arrays()
    return {(int(m), int(d)): float(t) for m, d, t in zip(log["msg"], log["dst"], log["delivered_at"])}


class TestInstall:
    def test_switches_hold_the_mfts_of_the_subnet_manager(self):
        sim = Simulation(TREE, overrides={"**.multicastGroups": "g: 0 1 2 3 4 senders=*"})
        mft = sim.tables.mft
        for node, entries in mft.entries().items():
            sw = sim.ib_nodes[node]
            assert sw.mft == entries and sw.replicator.name == "asynchronous"
            assert all(tx.engine is sw.replicator for tx in sw.tx.values())  # the ports' multicast stage
            for port, routes in sw.mroutes.items():
                for mlid, route in routes.items():
                    assert sorted(tx.port for tx, _ in route.outs) == sorted(p for p in entries[mlid] if p != port)

    def test_without_groups_switches_stay_plain(self):
        sim = Simulation(TREE)
        for sw in (n for n in sim.ib_nodes if n.is_switch):
            assert sw.replicator is None and sw.mft == {}
            assert all(tx.engine is None for tx in sw.tx.values())
        assert sim.multicast is None and "multicast" not in sim.run("1us")

    @pytest.mark.parametrize("engine", SWITCH_ENGINES)
    def test_unicast_runs_the_same_with_groups_declared(self, engine):
        # the same switches (groups declared make inputQueues = "auto" choose FIFOs: TestQueues)
        ov = {"**.traffic": "uniform", "**.load": "0.6", "**.routing": "updn", "**.inputQueues": "fifo"}
        plain = Simulation(TREE, overrides=ov, check=True).run("40us")
        ov.update({"**.multicastGroups": "g: 0 2 4 senders=*", "**.replication": engine})
        with_groups = Simulation(TREE, overrides=ov, check=True).run("40us")
        for key in ("packets_delivered", "events", "packet_hops", "latency_ns", "packets_in_flight"):
            assert plain[key] == with_groups[key], key


class TestLatency:
    """Zero load: each member gets its copy d1 + routingDelay + arbitrationDelay + L tau + d2 after
    the send (STAR: 1 m cables, 5 ns; 1x SDR, 4 ns a byte; 100 + 20 ns through the switch)."""

    @pytest.mark.parametrize("engine", SWITCH_ENGINES)
    def test_every_member_at_the_unicast_latency(self, engine):
        sim = star(engine)
        d = sim.hosts[0].tx[1].link.delay
        mcast_at(sim, 0.0, 0, "g", 256)
        s = sim.run("5us")
        expected = d + 120 + 256 * 4 + d
        g = s["multicast"]["groups"]["g"]
        assert g["packets"] == g["complete"] == 1 and g["member_deliveries"] == 2 and g["duplicates"] == 0
        assert g["latency_ns"]["max"] == pytest.approx(expected)
        assert g["member_latency_ns"]["mean"] == pytest.approx(expected)
        assert g["member_network_latency_ns"]["mean"] == pytest.approx(expected)  # sent as created: no queueing
        assert s["multicast"]["copies"] == 1 and s["packets_delivered"] == 2 and s["conservation_ok"]

    def test_replicated_unicast_sends_the_copies_one_after_the_other(self):
        sim = star("replicated-unicast")
        d = sim.hosts[0].tx[1].link.delay
        mcast_at(sim, 0.0, 0, "g", 256)
        s = sim.run("5us")
        first = d + 120 + 256 * 4 + d
        g = s["multicast"]["groups"]["g"]
        assert g["latency_ns"]["max"] == pytest.approx(first + 256 * 4)
        assert g["member_latency_ns"]["mean"] == pytest.approx(first + 128 * 4)
        # the second copy waits at the source for the first: its network latency is the first's
        assert g["member_network_latency_ns"]["mean"] == pytest.approx(first)
        assert g["member_network_latency_ns"]["count"] == 2
        assert s["packets_injected"] == 2 and s["multicast"]["copies"] == 0 and s["conservation_ok"]


def _port_busy_scenario(engine):
    """h3 keeps the port to h2 busy with a 2048 B packet; h0 then sends a multicast packet M to h1, h2
    and right behind it a unicast packet U to h3 (same input VL, one FIFO)."""
    sim = star(engine, **{"**.inputQueues": '"fifo"'})
    unicast_at(sim, 0.0, 3, 2, 2048)
    mcast_at(sim, 10.0, 0, "g", 256)
    unicast_at(sim, 11.0, 0, 3, 256)
    sim.run("30us")
    log = sim.stats.arrays()
    at = {}
    for m, d, t in zip(log["msg"], log["dst"], log["delivered_at"]):
        at.setdefault((int(m), int(d)), float(t))
    msgs = sorted({m for m, _ in at})
    big, mc, u = msgs
    return sim, at[(mc, 1)], at[(mc, 2)], at[(u, 3)], at[(big, 2)]


class TestEngines:
    def test_asynchronous_copies_leave_independently(self):
        sim, to_h1, to_h2, u, big = _port_busy_scenario("asynchronous")
        d = sim.hosts[0].tx[1].link.delay
        assert to_h1 == pytest.approx(10 + d + 120 + 1024 + d)  # its port was free
        assert to_h2 > big  # after the big packet
        # the first copy moved the packet into the extra buffer: the input VL went on
        assert u < to_h2

    def test_synchronous_copies_leave_together(self):
        sim, to_h1, to_h2, u, big = _port_busy_scenario("synchronous")
        assert to_h1 == to_h2 > big
        assert u > to_h1  # U waited behind M in the input VL

    def test_with_virtual_output_queues_unicast_does_not_wait_behind_a_multicast_packet(self):
        sim = star("synchronous", **{"**.inputQueues": '"voq"'})
        unicast_at(sim, 0.0, 3, 2, 2048)
        mcast_at(sim, 10.0, 0, "g", 256)
        unicast_at(sim, 11.0, 0, 3, 256)
        sim.run("30us")
        log = sim.stats.arrays()
        at = {(int(m), int(d)): float(t) for m, d, t in zip(log["msg"], log["dst"], log["delivered_at"])}
        big, mc, u = sorted({m for m, _ in at})
        assert at[(u, 3)] < at[(mc, 1)] == at[(mc, 2)]  # U goes its way while M waits in the multicast queue

    def test_synchronous_reservation_keeps_unicast_off_a_held_port(self):
        # M holds the port to h1 while it waits for the port to h2; U2 (h3 -> h1) arrives meanwhile
        sim = star("synchronous")
        unicast_at(sim, 0.0, 3, 2, 2048)
        mcast_at(sim, 10.0, 0, "g", 256)
        unicast_at(sim, 400.0, 1, 3, 64)  # unrelated port: not held
        unicast_at(sim, 500.0, 2, 1, 256)
        sim.run("30us")
        at = arrivals(sim)
        msgs = sorted({m for m, _ in at})
        mc, other, u2 = msgs[1], msgs[2], msgs[3]
        assert at[(u2, 1)] > at[(mc, 1)]
        assert at[(other, 3)] < at[(mc, 1)]

    @pytest.mark.parametrize("priority", ["fcfs", "rr"])
    def test_synchronous_priority_between_multicast_packets(self, priority):
        # the port to h1 is busy; Ma (h3, port 4) reaches the switch before Mb (h0, port 1) and both
        # want h1 and h2: FCFS serves Ma first, round robin (from input port 1 on) Mb
        sim = star("synchronous", "g: 1 2 senders=0,3", **{"**.replicationOptions": f"priority={priority}"})
        unicast_at(sim, 0.0, 2, 1, 2048)
        mcast_at(sim, 100.0, 3, "g", 256)
        mcast_at(sim, 300.0, 0, "g", 256)
        sim.run("30us")
        at = arrivals(sim)
        _, ma, mb = sorted({m for m, _ in at})
        first, second = (ma, mb) if priority == "fcfs" else (mb, ma)
        assert at[(first, 1)] < at[(second, 1)] and at[(first, 2)] < at[(second, 2)]
        assert sim.summary()["conservation_ok"]

    def test_synchronous_priority_option_is_checked(self):
        with pytest.raises(ConfigError, match="'priority' must be fcfs or rr"):
            star("synchronous", **{"**.replicationOptions": "priority=lifo"}).run("1us")

    @staticmethod
    def priority_run(engine: str):
        """The port to h1 is busy (a 2048-byte packet from h2); a unicast packet U (h3 -> h1) waits
        there before multicast M's copy does: (simulation, arrivals, big, U, M)."""
        sim = star(engine)
        unicast_at(sim, 0.0, 2, 1, 2048)
        unicast_at(sim, 100.0, 3, 1, 256)
        mcast_at(sim, 300.0, 0, "g", 256)
        sim.run("30us")
        at = arrivals(sim)
        return (sim, at, *sorted({m for m, _ in at}))

    def test_central_buffer_copies_go_before_unicast(self):
        sim, at, big, u, mc = self.priority_run("central-buffer")
        assert at[(big, 1)] < at[(mc, 1)] < at[(u, 1)]
        assert sim.summary()["conservation_ok"]

    def test_asynchronous_gives_the_same_priority(self):
        _, at, big, u, mc = self.priority_run("asynchronous")
        assert at[(mc, 1)] < at[(u, 1)]

    @pytest.mark.parametrize("quota", ["shared", "auto"])
    def test_central_buffer_shares_per_output_port_avoid_a_deadlock(self, quota):
        # each switch multicasts to the other's hosts through a small central buffer: shared, both
        # buffers fill with copies for the inter-switch link while the heads behind them wait for
        # space in the other buffer; with a share per output port the heads for local ports go on
        sim = Simulation(TWO, check=True, overrides={
            "**.multicastGroups": "ga: 1 2 3 senders=0; gb: 0 1 3 senders=2", "**.mtu": "256B",
            "**.replication": "central-buffer", "**.replicationOptions": f"size=1024 quota={quota}"})

        def start():
            for _ in range(100):
                sim.hosts[0].send_multicast("ga", 256)
                sim.hosts[2].send_multicast("gb", 256)

        sim.call_at(0.0, start)
        if quota == "shared":
            with pytest.raises(DeadlockError, match="sw.0. central buffer -> two.sw.1..port.3. VL0 -> two.sw.1. central"):
                sim.run("1ms")
            return
        s = sim.run("1ms")
        groups = s["multicast"]["groups"]
        assert groups["ga"]["complete"] == groups["gb"]["complete"] == 100
        assert s["conservation_ok"] and sim.module("sw[0]").replicator.qcap == 1024 // 3 // 64

    @pytest.mark.parametrize("fifo", ["port", "vl"])
    def test_central_buffer_fifo_per_port_or_per_vl(self, fifo):
        # sw0's VL0 credits towards sw1 run out (h1's packets to h2 queue behind h3's at sw1's port to h2);
        # M0 (VL0) then M1 (VL1) from h0 to h3 queue for sw0's port 3: one FIFO per port holds M1 behind
        # M0, one per VL lets it pass
        sim = Simulation(TWO, check=True, overrides={
            "**.multicastGroups": "g: 3 senders=0", "**.numVLs": "2", "**.sw[*].vlBufferSize": "1024B",
            "**.mtu": "256B", "**.replication": "central-buffer", "**.replicationOptions": f"fifo={fifo}"})
        for i in range(20):
            unicast_at(sim, float(i), 3, 2, 256)
        for i in range(8):
            unicast_at(sim, 10.0 + i, 1, 2, 256)
        sim.call_at(8000.0, lambda: sim.hosts[0].send_multicast("g", 256, sl=0))
        sim.call_at(8100.0, lambda: sim.hosts[0].send_multicast("g", 256, sl=1))
        s = sim.run("60us")
        at = arrivals(sim)
        m0, m1 = sorted(m for m, d in at if d == 3)
        assert (at[(m0, 3)] < at[(m1, 3)]) == (fifo == "port")
        assert s["conservation_ok"] and s["multicast"]["groups"]["g"]["complete"] == 2

    def test_central_buffer_fifo_option_is_checked(self):
        with pytest.raises(ConfigError, match="'fifo' must be port or vl"):
            star("central-buffer", **{"**.replicationOptions": "fifo=sl"}).run("1us")

    def test_central_buffer_frees_the_input_vl_at_the_move(self):
        sim, to_h1, to_h2, u, big = _port_busy_scenario("central-buffer")
        assert u < to_h2 and to_h1 < to_h2

    def test_central_buffer_holds_a_packet_until_its_last_copy(self):
        sim = star("central-buffer")
        unicast_at(sim, 0.0, 3, 2, 2048)
        mcast_at(sim, 10.0, 0, "g", 256)
        sim.run("1000ns")  # M is in the central buffer, its copy to h2 waits
        eng = sim.module("sw").replicator
        assert eng.held() == 1 and eng.used == 4
        s = sim.summary()
        assert s["packets_in_flight"] >= 1 and s["conservation_ok"]
        sim.run("10us")
        assert eng.held() == 0 and eng.used == 0


@st.composite
def workloads(draw):
    n = draw(st.integers(1, 15))
    sends = [(draw(st.floats(0, 5000)), draw(st.sampled_from([0, 1, 3, 4])), draw(st.sampled_from(["a", "b"])),
              draw(st.sampled_from([64, 256, 1000]))) for _ in range(n)]
    return sends, draw(st.sampled_from(["0.2", "0.5", "0.9"])), draw(st.integers(1, 1000))


@pytest.mark.parametrize("engine", ENGINES)
@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(work=workloads())
def test_each_member_gets_each_packet_exactly_once(engine, work):
    """Random multicast sends over random unicast load (updn, no deadlock): every member of the
    group but the sender gets each packet once; credits (check=True) and conservation hold."""
    sends, load, seed = work
    sim = Simulation(TREE, overrides={
        "**.multicastGroups": "a: 0 1 2 3 4 senders=0,1,3,4; b: 1 3 4 senders=1,3,4 ",
        "**.replication": engine, "**.routing": "updn", "**.traffic": "uniform", "**.load": load,
        "**.numVLs": "2", "**.sl": "0,1"}, seed=seed, check=True, deadlock_interval="2us")
    sim.traffic_stop = 5000.0
    sizes = {"a": 5, "b": 3}
    expected = {"a": 0, "b": 0}
    for t, host, group, size in sends:
        if host == 0 and group == "b":
            group = "a"
        mcast_at(sim, t, host, group, size)
        expected[group] += sizes[group] - 1
    s = sim.run("400us")
    m = s["multicast"]["groups"]
    for name in ("a", "b"):
        assert m[name]["duplicates"] == 0
        assert m[name]["complete"] == m[name]["packets"]
        assert m[name]["member_deliveries"] == expected[name]
    assert s["conservation_ok"] and s["packets_dropped"] == 0 and s["packets_in_flight"] == 0
    assert s["packets_delivered"] == s["packets_injected"] + s["multicast"]["copies"]


class TestSwitchVariants:
    @pytest.mark.parametrize("engine", ENGINES)
    @pytest.mark.parametrize("over", [{"**.outputBufferSize": "4096B"}, {"**.inputQueues": '"voq"'},
                                      {"**.dropper": '"hll"', "**.dropperOptions": '"hv=3"'},
                                      {"**.inputQueues": '"voq"', "**.outputBufferSize": "4096B"}])
    def test_every_switch_replicates(self, engine, over):
        # output buffers, virtual output queues (the multicast queue of each input VL), lifetimes
        sim = star(engine, **over)
        for k in range(3):
            mcast_at(sim, 100.0 * k, 0, "g", 256)
        unicast_at(sim, 0.0, 1, 2, 256)
        s = sim.run("20us")
        assert s["multicast"]["groups"]["g"]["complete"] == 3 and s["conservation_ok"]
        assert s["packets_delivered"] == 3 * 2 + 1


class TestErrors:
    def test_unknown_engine_lists_the_valid_ones(self):
        with pytest.raises(PluginError, match="unknown replication engine 'fanout'.*asynchronous, central-buffer"):
            star("fanout")

    def test_replicated_unicast_is_fabric_wide(self):
        with pytest.raises(ConfigError, match="'replicated-unicast' is a fabric-wide choice"):
            Simulation(TREE, overrides={"**.multicastGroups": "g: 0 2 4", "**.sw[0].replication": "replicated-unicast"})

    def test_central_buffer_must_hold_a_packet(self):
        with pytest.raises(ConfigError, match="central buffer \\(1000B\\) cannot hold a 2074B packet"):
            star("central-buffer", **{"**.replicationOptions": "size=1000"})

    def test_unknown_option(self):
        with pytest.raises(ConfigError, match="'synchronous' has no option 'size' \\(valid: priority\\)"):
            star("synchronous", **{"**.replicationOptions": "size=1000"})

    def test_only_senders_send(self):
        sim = star("asynchronous")
        with pytest.raises(ConfigError, match="host 1 is not a sender of multicast group 'g'"):
            sim.hosts[1].send_multicast("g", 256)
        with pytest.raises(ConfigError, match="no multicast group 'h'"):
            sim.hosts[0].send_multicast("h", 256)
        with pytest.raises(ConfigError, match="no multicast groups are declared"):
            Simulation(STAR).hosts[0].send_multicast("g", 256)

    def test_an_engine_without_the_api(self):
        from ibfabric import hookimpl

        class Plugin:
            @hookimpl
            def ibfabric_register_replication_engines(self, register):
                register("nothing", lambda options, rng: object())

        with pytest.raises(PluginError, match="'nothing'.*lacks register\\(\\), serve\\(\\)"):
            Simulation(STAR, overrides={"**.multicastGroups": "g: 0 1", "**.replication": "nothing"},
                       plugins=[Plugin()])


#: multicast both ways over the tree's links (seed 3 of a random search): holding the reserved ports
#: while waiting for credits deadlocked here (sw[1] held its port to h1 for a packet waiting for
#: credits towards sw[0], whose input buffer waited for a packet behind that port)
CROSSING = [(3663.8, 1, "b", 2074), (2422.4, 0, "a", 2074), (767.0, 3, "a", 2074), (2556.3, 4, "b", 256),
            (3472.2, 1, "a", 2074), (2685.6, 0, "a", 64), (1205.1, 1, "a", 64), (2379.0, 3, "b", 2074),
            (2912.5, 4, "b", 2074), (389.8, 1, "b", 256), (1031.9, 4, "a", 2074), (2029.0, 3, "b", 2074),
            (2337.0, 3, "b", 1000), (3425.6, 0, "a", 256), (2855.3, 3, "a", 256), (497.7, 3, "b", 2074),
            (1376.3, 4, "a", 64), (80.5, 4, "a", 2074), (176.8, 4, "a", 64)]


def test_synchronous_does_not_deadlock_with_fcfs():
    """Packets reserve ports only while every output has their credits, FCFS among them: all
    delivered, and the watchdog (every 1 us) finds no deadlock with multicast heads waiting."""
    sim = Simulation(TREE, overrides={
        "**.multicastGroups": "a: 0 1 2 3 4 senders=0,1,3,4; b: 1 3 4 senders=1,3,4", "**.replication": "synchronous",
        "**.routing": "updn", "**.traffic": "uniform", "**.load": "0.2", "**.numVLs": "2", "**.sl": "0,1"},
        seed=3, check=True, deadlock_interval="1us")
    sim.traffic_stop = 5000.0
    for t, host, group, size in CROSSING:
        mcast_at(sim, t, host, group, size)
    s = sim.run("1500us")
    groups = s["multicast"]["groups"]
    assert sum(g["packets"] for g in groups.values()) == len(CROSSING)
    assert all(g["complete"] == g["packets"] for g in groups.values())
    assert s["deadlock"] is None and s["packets_in_flight"] == 0 and s["conservation_ok"]
