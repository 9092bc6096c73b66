"""Routing options (Martínez et al. 2003 §4; DESIGN §3): range lookup, the LSB rule, the credit rule,
split VL buffers with a second read point, selection at lookup or arbitration time, in-order delivery."""

from __future__ import annotations

from collections import deque

import numpy as np
import pytest

from ibfabric.components.portstate import PortState
from ibfabric.components.switch.inbuf import EscapeRead
from ibfabric.components.switch.options import Option, OptionSet
from ibfabric.components.packet import Packet
from ibfabric.components.port import pending_returns
from ibfabric.errors import ConfigError
from ibfabric.simulation import Simulation

FA = {"**.routing": "fa", "**.sm.lmc": "1", "**.optionBits": "1", "**.mtu": "256B", "**.traffic": "uniform",
      "**.escapeBufferSize": "2048B"}


def fa_sim(adaptive="1", load="0.3", check=True, **over):
    # specific patterns first: the first matching assignment wins
    ov = dict(over)
    for k, v in {**FA, "**.adaptive": adaptive, "**.load": load}.items():
        ov.setdefault(k, v)
    return Simulation("irregular16", overrides=ov, seed=1, warmup="5us", check=check)


class TestLookup:
    def test_an_adaptive_dlid_gets_every_port_of_its_range(self):
        sim = fa_sim()
        sim.run("1ns")
        fabric, lft = sim.tables.fabric, sim.tables.lft
        seen = 0
        for row, node in enumerate(fabric.switches.tolist()):
            sw = sim.ib_nodes[node]
            rx = next(iter(sw.rx.values()))
            for e in range(len(fabric.ep_node)):
                base = int(fabric.ep_lid[e])
                if fabric.ep_lmc[e] == 0:
                    continue
                ports = list(dict.fromkeys(int(x) for x in lft[row, base:base + 2]))
                det = rx.routes[base]
                assert det[1] is sw.tx[ports[0]] or (ports[0] == 0 and det[1] is None)  # LSB 0: entry d only
                adaptive = rx.routes[base + 1][1]
                if len(ports) > 1:
                    assert isinstance(adaptive, OptionSet)
                    assert [o.tx.port for o in adaptive.options] == ports
                    assert [o.index for o in adaptive.options] == [0, 1]  # entry d is the escape option
                    seen += 1
                else:
                    assert not isinstance(adaptive, OptionSet)
        assert seen > 100

    @pytest.mark.parametrize("adaptive", ["0", "1"])
    def test_lsb_0_packets_never_leave_the_escape_path(self, adaptive):
        sim = fa_sim(adaptive=adaptive, check=False)
        sim.run("30us")
        t = sim.tables
        g = t.fabric
        att = g.attachments()[0]
        host_ep = sim._host_eps
        log = sim.stats.arrays()
        src_sw = g.switch_row[att[host_ep[log["src"]]]]
        # links on the escape (up*/down*) route: the source's link + the route from its switch
        escape = t.info["distance"][src_sw, g.ep_lid[host_ep[log["dst"]]]] + 1
        assert len(log["hops"]) > 1000
        if adaptive == "0":
            assert (log["hops"] == escape).all()
        else:  # adaptive packets take minimal options where up*/down* is longer
            assert (log["hops"] < escape).sum() > 50


class _Tx:
    """A stand-in output port for the credit rule."""

    state = PortState.ACTIVE
    obuf = None  # straight to the link

    def __init__(self, port, credits, reserve=0, busy_until=0.0, nvl=1):
        self.port, self.nvl, self.escape_reserve, self.busy_until = port, nvl, reserve, busy_until
        self.credits = [credits] * nvl
        self.returns = [[] for _ in range(nvl)]  # flat [time, credits, ...] as TxPort keeps them
        self.name_ = f"port{port}"

    def free_at(self):
        return self.busy_until

    def downstream_free(self, vl, now):
        return self.credits[vl] + pending_returns(self.returns[vl], now)


class _Node:
    path = "sw"
    selector = None


class TestCreditRule:
    """With C credits and C_E reserved for escape, an adaptive option needs more than C_E + the packet."""

    def options(self, esc_credits, ad_credits, reserve=8):
        ident = list(range(16))
        return OptionSet(_Node(), [Option(_Tx(1, esc_credits, reserve), ident, 0),
                                   Option(_Tx(2, ad_credits, reserve), ident, 1)])

    @pytest.mark.parametrize("esc, ad, usable", [
        (16, 16, [1, 2]),   # empty 16-credit buffers, 8 reserved: adaptive has 8 free, the packet needs 4
        (16, 12, [1, 2]),   # adaptive 12 - 8 = 4 >= 4
        (16, 11, [1]),      # adaptive 11 - 8 = 3 < 4: only escape
        (4, 11, [1]),       # escape needs only the packet's 4
        (3, 11, []),        # nothing fits
        (3, 16, [2]),
    ])
    def test_hand_computed_states(self, esc, ad, usable):
        p = Packet.make(1, 3, 256)  # 4 credits
        got = self.options(esc, ad).eligible(p, 0.0)
        assert [o.tx.port for o, _vl, _free in got] == usable
        free = {o.tx.port: f for o, _vl, f in got}
        if 2 in free:
            assert free[2] == ad - 8

    def test_returns_on_their_way_count_once_arrived(self):
        os_ = self.options(0, 16)
        os_.options[0].tx.returns[0].extend((50.0, 4))
        p = Packet.make(1, 3, 256)
        assert [o.tx.port for o, *_ in os_.eligible(p, 49.0)] == [2]
        assert [o.tx.port for o, *_ in os_.eligible(p, 50.0)] == [1, 2]

    def test_a_busy_link_is_not_an_option_now(self):
        os_ = self.options(16, 16)
        os_.options[1].tx.busy_until = 10.0
        assert [o.tx.port for o, *_ in os_.eligible(Packet.make(1, 3, 256), 5.0)] == [1]


class TestSplitBuffer:
    """The second read point: the first packet in the escape part, or the first deterministic packet."""

    def buffer(self, packets, cap=8):
        class _Buf:
            pass

        sim = fa_sim()
        sim.run("1ns")
        sw = sim.ib_nodes[int(sim.tables.fabric.switches[0])]
        real = next(iter(sw.rx.values())).bufs[0]
        real.q = deque(packets)
        real.adaptive_cap = cap
        real.escape = None
        return real, sw

    def packet(self, sw, dlid_lsb, credits=4):
        tx = next(iter(sw.tx.values()))
        p = Packet.make(1, 2 + dlid_lsb, 64 * credits)
        p.out_port, p.out_vl = tx, 0
        return p

    def test_a_packet_moves_from_the_escape_part_into_the_adaptive_part(self):
        real, sw = self.buffer([])
        a, b, c = (self.packet(sw, 1) for _ in range(3))
        real.q.extend([a, b, c])  # offsets 0, 4, 8: c is in the escape part (adaptive part 8 credits)
        real.refresh(0.0)
        assert isinstance(real.escape, EscapeRead) and real.escape.q[0] is c
        tx = a.out_port
        assert real.escape in tx.cands[0]
        real.q.popleft()  # a leaves: c now starts at offset 4, in the adaptive part
        real.refresh(0.0)
        assert real.escape is None and all(not isinstance(x, EscapeRead) for x in tx.cands[0])

    def test_the_first_deterministic_packet_goes_before_the_escape_part(self):
        real, sw = self.buffer([])
        a, d, b, c = self.packet(sw, 1), self.packet(sw, 0), self.packet(sw, 1), self.packet(sw, 1)
        real.q.extend([a, d, b, c])  # d (LSB 0) at offset 4, in the adaptive part
        real.refresh(0.0)
        assert real.escape.q[0] is d
        real.q.clear()
        real.q.extend([d, a, b, c])  # a deterministic head: nothing may pass it
        real.refresh(0.0)
        assert real.escape is None


class TestRuns:
    @pytest.mark.parametrize("selector, at", [("max-credit", "arbitration"), ("random", "arbitration"),
                                              ("lfu", "arbitration"), ("shortest", "arbitration"),
                                              ("first", "arbitration"), ("max-credit", "lookup")])
    def test_every_selector_runs_with_audits_and_conserves_packets(self, selector, at):
        # audited at every event (check=True): 10 us, about 2700 packets delivered, is enough
        s = fa_sim(**{"**.pathSelector": f'"{selector}"', "**.selectAt": f'"{at}"'}).run("10us")
        assert s["conservation_ok"] and s["packets_dropped"] == 0 and s["packets_delivered"] > 1000

    @pytest.mark.parametrize("at", ["arbitration", "lookup"])
    def test_options_work_with_output_buffers(self, at):
        # Martinez's switch: 1 KB input buffers split into adaptive and escape parts, 1 KB output buffers
        s = fa_sim(**{"**.outputBufferSize": "1024B", "**.selectAt": f'"{at}"'}).run("20us")
        assert s["conservation_ok"] and s["packets_dropped"] == 0 and s["packets_delivered"] > 1000

    def test_deterministic_packets_arrive_in_order_under_adaptive_load(self):
        # h0_0 and h5_1 send deterministically, everyone else adaptively, into a loaded fabric
        sim = fa_sim(adaptive="1", load="0.25", check=False,
                     **{"**.h0_0.adaptive": "0", "**.h5_1.adaptive": "0"})
        sim.run("60us")
        log = sim.stats.arrays()
        names = [h.path.split(".")[-1] for h in sim.hosts]
        for host in ("h0_0", "h5_1"):
            src = names.index(host)
            mine = log["src"] == src
            assert mine.sum() > 100
            for dst in np.unique(log["dst"][mine]).tolist():
                m = mine & (log["dst"] == dst)
                order = np.argsort(log["delivered_at"][m], kind="stable")
                assert (np.diff(log["created"][m][order]) >= 0).all(), (host, dst)

    def test_adaptive_traffic_accepts_more_than_deterministic(self):
        det = fa_sim(adaptive="0", load="0.5", check=False).run("60us")
        ada = fa_sim(adaptive="1", load="0.5", check=False).run("60us")
        assert ada["accepted_load"] > 1.3 * det["accepted_load"]

    def test_same_seed_same_results(self):
        a = fa_sim(adaptive="0.5", check=False, **{"**.pathSelector": '"random"'}).run("20us")
        b = fa_sim(adaptive="0.5", check=False, **{"**.pathSelector": '"random"'}).run("20us")
        assert a["latency_ns"] == b["latency_ns"] and a["packets_delivered"] == b["packets_delivered"]


MARTINEZ_BUFFERS = {"**.vlBufferSize": "1024B", "**.escapeBufferSize": "512B", "**.outputBufferSize": "1024B"}


class TestSplitOutputBuffer:
    """``outputEscapeBufferSize`` (Martínez §5.1: "the adaptive and escape queues implemented on each buffer"):
    an adaptive option needs its packet to fit the output VL buffer's adaptive part, the escape option only
    the buffer."""

    def option_set(self, **over):
        sim = fa_sim(**MARTINEZ_BUFFERS, **{"**.outputEscapeBufferSize": "512B"}, **over)
        sim.run("1ns")
        for sw in (n for n in sim.ib_nodes if n.is_switch):
            for route in next(iter(sw.rx.values())).routes:
                if route is not None and isinstance(route[1], OptionSet) and len(route[1].options) == 2:
                    return route[1]
        raise AssertionError("no two-option DLID on irregular16")

    @pytest.mark.parametrize("esc_free, ad_free, usable", [
        (16, 16, [0, 1]),  # empty 16-credit output buffers, 8 kept for escape: the 4-credit packet fits either
        (16, 12, [0, 1]),  # 12 free - 8 kept >= 4
        (16, 11, [0]),     # 11 - 8 < 4: the adaptive part is full, only the escape option
        (4, 11, [0]),      # the escape option's packet may fill the buffer's escape part
        (3, 12, [1]),      # the escape output buffer has no room
    ])
    def test_hand_computed_states(self, esc_free, ad_free, usable):
        os_ = self.option_set()
        esc, ad = os_.options
        assert (esc.adaptive, ad.adaptive) == (False, True)
        for o, free in ((esc, esc_free), (ad, ad_free)):
            assert o.tx.oreserve == 8 and o.tx.ocap == 16
            assert o.tx.downstream_free(0, 0.0) - o.tx.escape_reserve >= 4  # downstream takes either
            o.tx.ofree[0] = free
        got = os_.eligible(Packet.make(1, 3, 256), 0.0)
        assert [os_.options.index(o) for o, _vl, _free in got] == usable
        assert os_.ways(Packet.make(1, 3, 256)) == [(esc.tx, 0, 4), (ad.tx, 0, 12)]

    def test_escape_traffic_is_not_affected(self):
        # deterministic packets all take the escape option, which may fill the whole output buffer
        runs = [fa_sim(adaptive="0", load="0.6", check=False, **MARTINEZ_BUFFERS, **extra).run("20us")
                for extra in ({}, {"**.outputEscapeBufferSize": "704B"})]
        assert runs[0]["packets_delivered"] == runs[1]["packets_delivered"] > 1000
        assert runs[0]["latency_ns"] == runs[1]["latency_ns"]

    def test_equal_adaptive_parts_are_implied_by_the_downstream_rule(self):
        # the paper's switch: 512 B adaptive parts at the output and downstream.  An adaptive packet crosses
        # only if the downstream VL will keep C_E free beyond it and the packets queued before it, and a
        # packet on the link holds its downstream credits until after it has left the output buffer: so the
        # adaptive packets in an output buffer never exceed the downstream's adaptive part, and a split of the
        # same size changes nothing
        runs = [fa_sim(adaptive="1", load="0.9", check=False, **MARTINEZ_BUFFERS, **extra).run("10us")
                for extra in ({}, {"**.outputEscapeBufferSize": "512B"})]
        assert runs[0]["packets_delivered"] == runs[1]["packets_delivered"] > 1000
        assert runs[0]["latency_ns"] == runs[1]["latency_ns"]

    def test_a_smaller_adaptive_part_runs_audited_and_holds_adaptive_packets_back(self):
        # 320 B adaptive part at the output: one 282 B adaptive packet at a time (downstream: 512 B);
        # audited at every event (check=True): credits, buffers and conservation
        split = {"**.outputEscapeBufferSize": "704B"}
        s = fa_sim(adaptive="1", load="0.9", **MARTINEZ_BUFFERS, **split).run("10us")
        assert s["conservation_ok"] and s["packets_dropped"] == 0 and s["packets_delivered"] > 1000
        whole = fa_sim(adaptive="1", load="0.9", check=False, **MARTINEZ_BUFFERS).run("10us")
        assert whole["latency_ns"] != s["latency_ns"]


class TestErrors:
    @pytest.mark.parametrize("over, message", [
        ({"**.escapeBufferSize": "4032B", "**.vlBufferSize": "4096B"}, r"the adaptive part of the 4096B VL buffer \(64B.*cannot hold a 282B packet"),
        ({"**.mtu": "4096B", "**.vlBufferSize": "4096B"}, r"escape part of the 4096B VL buffer \(2048B, escapeBufferSize 2048B\) cannot hold"),
        ({"**.selectAt": '"later"'}, "'selectAt' must be"),
        ({"**.optionBits": "0", "**.adaptive": "0"}, "'escapeBufferSize' .* splits the input buffers for the escape paths"
                                                     " of routing options: it needs 'optionBits' > 0"),
        ({"**.inputQueues": '"voq"'}, r"it needs inputQueues = \"fifo\" \(or \"auto\"\), not \"voq\""),
        ({"**.outputEscapeBufferSize": "512B"}, r"'outputEscapeBufferSize' \(512B\) splits the output VL buffers: it"
                                                " needs 'outputBufferSize' > 0"),
        ({"**.outputBufferSize": "1024B", "**.outputEscapeBufferSize": "1024B"},
         "'outputEscapeBufferSize' \\(1024B\\) leaves no adaptive part of the 1024B output VL buffer"),
        ({"**.outputBufferSize": "1024B", "**.outputEscapeBufferSize": "832B"},
         r"the adaptive part of the 1024B output VL buffer \(192B, outputEscapeBufferSize 832B\) cannot hold a 282B"),
        ({"**.optionBits": "0", "**.adaptive": "0", "**.escapeBufferSize": "0B", "**.outputBufferSize": "1024B",
          "**.outputEscapeBufferSize": "512B"}, "'outputEscapeBufferSize' .* it needs 'optionBits' > 0"),
        ({"**.pathSelector": '"fastest"'}, "fastest"),
        ({"**.sm.lmc": "0"}, "LMC >= 1"),
        ({"**.adaptive": "1.5"}, "'adaptive' must be a fraction"),
    ])
    def test_clear_errors(self, over, message):
        with pytest.raises(Exception, match=message) as err:
            fa_sim(**over).run("1ns")
        assert "\n" not in str(err.value)
        assert isinstance(err.value, (ConfigError,)) or "PluginError" in type(err.value).__name__ \
            or "UnknownName" in type(err.value).__name__
