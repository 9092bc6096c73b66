"""Bugs the stage-combination property (test_stage_combinations.py) found, each as its smallest run."""

from __future__ import annotations

import pytest

from ibfabric.components.packet import Packet
from ibfabric.simulation import Simulation
from ibfabric.testing import STAR_NED

from .hang import hang_guard

# four switches in a ring, two hosts on each (h[i] and h[i+4] on sw[i]): two minimal paths from sw[0]
# to sw[2], so FA routing gives the hosts of sw[0] two options towards the hosts of sw[2]
SQUARE = """
network square
{
    submodules:
        sw[4]: Switch { numPorts = 4; }
        h[8]: HCA;
    connections:
        for i=0..3 {
            sw[i].port[1] <--> Link <--> sw[(i+1) % 4].port[2];
            h[i].port[1] <--> Link <--> sw[i].port[3];
            h[i+4].port[1] <--> Link <--> sw[i].port[4];
        }
}
"""


def burst(sim, sources, dst, n, dlid_offset=1):
    """At time 0, each host of *sources* queues *n* 282-byte packets to host *dst* (DLID offset 1: adaptive)."""
    hosts = sim.hosts

    def go():
        for src in sources:
            a, b = hosts[src], hosts[dst]
            for _ in range(n):
                a.send_packet(Packet.make(a.lid, b.lid + dlid_offset, 282, src=src, dst=dst, msg=sim.next_message_id()))

    sim.call_at(0.0, go)


class TestOptionsWithOutputBuffers:
    def test_a_candidate_waiting_for_credits_downstream_sleeps_until_they_come(self):
        # FA routing, output buffers: an adaptive packet at sw[0] whose options both lack credits downstream
        # (the 320 B input buffers of sw[1] and sw[3] hold one packet each) while their output buffers have
        # room used to have its port look again at once, at the same time, for ever; it waits for the
        # credit returns instead, and a return pokes the port
        sim = Simulation(SQUARE, overrides={"**.routing": "fa", "**.sm.lmc": "1", "**.optionBits": "1",
                                            "**.mtu": "256B", "**.vlBufferSize": "320B",
                                            "**.outputBufferSize": "320B", "**.inputQueues": "fifo"}, check=True)
        burst(sim, (0, 4, 3), 2, 4)
        with hang_guard(seconds=30):
            s = sim.run("20us")
        assert s["packets_delivered"] == 12 and s["conservation_ok"] and s["packets_dropped"] == 0


class TestKimPathsAtLookup:
    def test_a_path_option_chosen_at_lookup_needs_no_escape_space(self):
        # Kim's multipath (optionsWhen = "slid") chosen at lookup, into switches whose VL buffers have an
        # escape part: the path options are none of them adaptive, yet a packet that took path option 1
        # was marked as on an adaptive option (its index), and needed the escape reserve downstream on
        # top of its own credits (10 of sw[3]'s 10 credits: an empty buffer) to cross
        sim = Simulation(SQUARE, overrides={"**.routing": "multipath", "**.routingOptions": "bits=1",
                                            "**.sm.lmc": "2", "**.optionBits": "2", "**.optionsWhen": "slid",
                                            "**.selectAt": "lookup", "**.mtu": "256B", "**.vlBufferSize": "640B",
                                            "**.escapeBufferSize": "320B", "**.inputQueues": "fifo"})
        sim.run("1ns")
        a, b = sim.hosts[0], sim.hosts[2]
        rx = sim.module("sw[0]").rx[3]  # from a
        options = rx.routes[b.lid][2].options.options  # (the SlidRoute's OptionSet)
        assert [(o.index, o.adaptive) for o in options] == [(0, False), (1, False)]
        for o in options:
            p = Packet.make(a.lid + 1, b.lid, 282, src=0, dst=2)  # SLID LSB 1: any path
            p.paths = o.pmask  # ... on which only this option goes on
            p.head_at, p.tail_at = sim.now, sim.now + 282
            rx.receive(p, sim.now)
            assert p.out_port is o.tx and o.tx.escape_reserve == 5
            assert p.opt == 0 and o.tx.ways(p) == [(o.tx, 0, p.credits)]


class TestCentralBufferWithOutputBuffers:
    def test_a_copy_from_the_central_buffer_takes_its_crossing_time(self):
        # a 64-byte packet from h[0] waits in the central buffer for port 3's crossbar output, busy with a
        # copy of h[1]'s 282-byte packet until that packet's tail has arrived (1x SDR: 4 ns per byte); its
        # copy then crossed "by" the time its data was in the central buffer, long past, and the port asked
        # to look again in the past (the audit's AssertionError; the clock would run backwards without it)
        sim = Simulation(STAR_NED, check=True, overrides={
            "**.mtu": "256B", "**.outputBufferSize": "640B", "**.multicastGroups": "a: 0 1 2 3",
            "**.replication": "central-buffer"})
        sim.call_at(0.0, lambda: sim.hosts[1].send_multicast("a", 282))
        sim.call_at(700.0, lambda: sim.hosts[0].send_multicast("a", 64))
        s = sim.run("5us")
        a = s["multicast"]["groups"]["a"]
        assert a["complete"] == a["packets"] == 2 and a["member_deliveries"] == 6 and s["conservation_ok"]


TWO = """
// two switches, two hosts each: h[0], h[1] on sw[0] (ports 1, 2), h[2], h[3] on sw[1]; sw[0].port[3] <-> sw[1].port[3]
network two
{
    submodules:
        sw[2]: Switch { numPorts = 3; }
        h[4]: HCA;
    connections:
        sw[0].port[3] <--> Link { width = "1x"; speed = "SDR"; length = 1m; } <--> sw[1].port[3];
        for i=0..1 {
            h[i].port[1] <--> Link { width = "1x"; speed = "SDR"; length = 1m; } <--> sw[0].port[i+1];
            h[i+2].port[1] <--> Link { width = "1x"; speed = "SDR"; length = 1m; } <--> sw[1].port[i+1];
        }
}
"""


def unicast_at(sim, t, src, dst, size):
    a, b = sim.hosts[src], sim.hosts[dst]
    sim.call_at(t, lambda: a.send_packet(Packet.make(a.lid, b.lid, size, src=src, dst=dst, msg=sim.next_message_id())))


class TestSynchronousReplication:
    def test_a_port_held_for_a_multicast_packet_does_not_spin_on_its_unicast_candidates(self):
        # h[0]'s multicast packet reserves sw[0]'s ports 2 and 3 (lock step) while port 2 is still taking in
        # h[2]'s packet for h[1]; h[1]'s second packet for h[3] becomes a candidate of the held port 3, whose
        # output buffer has room: the port used to look again at once, for ever (a unicast packet may not
        # cross a held port); it waits for the engine instead
        sim = Simulation(TWO, check=True, overrides={"**.mtu": "256B", "**.outputBufferSize": "1024B",
                                                     "**.multicastGroups": "b: 1 2 senders=0",
                                                     "**.replication": "synchronous"})
        unicast_at(sim, 0.0, 2, 1, 282)
        unicast_at(sim, 0.0, 1, 3, 282)
        unicast_at(sim, 0.0, 1, 3, 282)
        sim.call_at(150.0, lambda: sim.hosts[0].send_multicast("b", 64))
        with hang_guard(seconds=30):
            s = sim.run("10us")
        b = s["multicast"]["groups"]["b"]
        assert b["complete"] == 1 and b["member_deliveries"] == 2 and s["packets_delivered"] == 5
        assert s["conservation_ok"]

    @pytest.mark.parametrize("out", ["0B", "1024B"])
    def test_copies_waiting_for_a_port_that_fails_start_at_once(self, out):
        # h[3]'s multicast packet waits (lock step) for sw.port[2], busy sending h[0]'s packet to h[1]; the
        # link fails at 400 ns: the copy for h[1] is dropped and the others may start at once; the ports kept
        # their reservation, were not told, and slept until port 2 would have been free (the audit's
        # AssertionError), the copies arriving 600 ns late without audits
        sim = Simulation(STAR_NED, check=True, overrides={"**.mtu": "256B", "**.outputBufferSize": out,
                                                          "**.multicastGroups": "a: 0 1 2 3",
                                                          "**.replication": "synchronous"})
        unicast_at(sim, 0.0, 0, 1, 282)
        sim.call_at(100.0, lambda: sim.hosts[3].send_multicast("a", 64))
        sim.fail_link("sw.port[2]", at=400)
        s = sim.run("5us")
        assert s["multicast"]["groups"]["a"]["member_deliveries"] == 2
        assert s["drops_by_reason"] == {"link-down": 1, "port-down": 1} and s["conservation_ok"]
        log = sim.stats.arrays()
        assert sorted(log["dst"].tolist()) == [0, 2] and log["delivered_at"].tolist() == [661.0, 661.0]

    def test_a_reservation_is_given_up_when_its_input_starts_a_unicast_crossing(self):
        # with virtual output queues, h[0]'s multicast packet (for h[1], h[2]) reserves ports 2 and 3 and waits
        # for port 2, busy with h[3]'s packet for h[1] until 1253 ns; at 431 ns h[0]'s unicast packet for
        # h[3] crosses from the same input, whose crossbar connection is then busy until its tail is in
        # (1439 ns): the multicast packet is not ready, so it holds nothing (docs/multicast.md), but port 3
        # kept it as its owner and left h[1]'s packet for h[2] waiting until 1253 ns (the audit's
        # AssertionError); it now crosses at once and arrives at 692 ns
        sim = Simulation(STAR_NED, check=True, overrides={"**.mtu": "256B", "**.inputQueues": "voq",
                                                          "**.multicastGroups": "b: 1 2 senders=0",
                                                          "**.replication": "synchronous"})
        unicast_at(sim, 0.0, 3, 1, 282)
        sim.call_at(50.0, lambda: sim.hosts[0].send_multicast("b", 64))
        unicast_at(sim, 50.0, 0, 3, 282)
        unicast_at(sim, 100.0, 1, 2, 64)
        s = sim.run("5us")
        assert s["multicast"]["groups"]["b"]["member_deliveries"] == 2 and s["packets_delivered"] == 5
        log = sim.stats.arrays()
        at = {(s_, d): t for s_, d, t in zip(log["src"].tolist(), log["dst"].tolist(), log["delivered_at"].tolist())}
        assert at[(1, 2)] == 692.0 and at[(0, 1)] == at[(0, 2)] == 1700.0


# five switches in a ring, two hosts on each (h[i], h[i+5] on sw[i]), 4x QDR links
RING5 = """
network ring
{
    submodules:
        sw[5]: Switch { numPorts = 4; }
        h[10]: HCA;
    connections:
        for i=0..4 {
            sw[i].port[1] <--> Link <--> sw[(i+1) % 5].port[2];
            h[i].port[1] <--> Link <--> sw[i].port[3];
            h[i+5].port[1] <--> Link <--> sw[i].port[4];
        }
}
"""


class TestEscapeSplit:
    def test_a_packet_that_ends_in_the_escape_part_is_read_from_there(self):
        # 640 B VL buffers, 320 B of them escape space: 5 + 5 credits, and 256-byte packets of 4 credits.  An
        # adaptive packet fills 4 of the adaptive part's 5 credits; the next one may come only on its escape
        # option and takes credits 4..8, most of it in the escape part -- but the escape read point looked for
        # a packet *starting* in the escape part, so it stayed behind the adaptive head, and with every
        # buffer of the ring so, FA routing deadlocked at once (Duato's escape paths were never usable)
        sim = Simulation(RING5, check=True, deadlock_interval="5us", overrides={
            "**.routing": "fa", "**.sm.lmc": "1", "**.optionBits": "1", "**.adaptive": "1", "**.mtu": "256B",
            "**.vlBufferSize": "640B", "**.escapeBufferSize": "320B", "**.traffic": "uniform", "**.load": "0.9"})
        s = sim.run("20us")
        assert s["deadlock"] is None and s["packets_delivered"] > 900 and s["conservation_ok"]
        for sw in (n for n in sim.ib_nodes if n.is_switch):
            for rx in sw.rx.values():
                buf = rx.bufs[0]
                q = buf.q
                if len(q) > 1 and q[0].dlid & 1 and q[0].credits + q[1].credits > buf.adaptive_cap:
                    assert buf.escape is not None and buf.escape.q[0] is q[1]
