"""QoS in the data path: filled tables guarantee bandwidth, CBR sources, metrics, set-up errors, link dataRate."""

from __future__ import annotations

import re
import types
from pathlib import Path

import numpy as np
import pytest

from ibfabric import hookimpl
from ibfabric.components.packet import Packet
from ibfabric.components.qos import Rejection
from ibfabric.components.qos.cbr import QosNetwork
from ibfabric.errors import ConfigError, PluginError
from ibfabric.simulation import Simulation

STAR = """
// four hosts on one switch, links of 2.5 Gb/s of data (the paper's 1x)
network star
{
    submodules:
        sw: Switch { numPorts = 4; }
        h[4]: HCA;
    connections:
        for i=0..3 {
            h[i].port[1] <--> Link { width = "1x"; speed = "SDR"; dataRate = 2.5Gbps; } <--> sw.port[i+1];
        }
}
"""
QOS = {"**.numVLs": "10", "**.mtu": "256B"}
RATE = 2.5e9
#: T_frame at 2.5 Gb/s: a saturated port serves each VL's entries once per pass over the table, and a
#: pass is at most a frame, so a connection's packets may wait that long; the window spans many passes.
#: Traffic (floods too) stops at STOP; END leaves time for what is queued to drain.
FRAME = 3_342_336.0
WARMUP, STOP, END = 4_000_000.0, 16_000_000.0, 16_300_000.0
#: CBR connections (src, dst, SL, bit/s) into h3: 1.65 Gb/s, 66 % of its link
CONNS = [(0, 3, 3, 1.0e9), (0, 3, 2, 50e6), (1, 3, 3, 0.6e9)]


def star(floods=None, seed=1, **kw):
    """The star with QoS set up; ``floods`` maps a host to the SL it floods h3 with (load 1.0)."""
    ov = dict(QOS)
    for h, sl in (floods or {}).items():
        ov.update({f"**.h[{h}].traffic": "hot-spot", f"**.h[{h}].trafficOptions": '"fraction=1 hotspot=3"',
                   f"**.h[{h}].load": "1.0", f"**.h[{h}].sl": str(sl)})
    sim = Simulation(STAR, overrides=ov, seed=seed, warmup=WARMUP, **kw)
    return sim, QosNetwork(sim)


def run(floods=None, flat=False, seed=1, **kw):
    sim, qos = star(floods, seed, **kw)
    for src, dst, sl, bw in CONNS:
        assert not hasattr(qos.connect(src, dst, bw, sl=sl), "reason")
    if flat:  # the same traffic with every VL at weight 64: no reservation
        for tx in sim.ports:
            tx.arbiter.set_tables((), tuple((vl, 64) for vl in range(10)), 0)
    qos.start_traffic(stop=STOP)
    s = sim.run(END)
    return sim, s


def share_of_h3(sim, sl):
    """Fraction of h3's link that packets of *sl* delivered in the window used (floods stay backlogged
    after STOP, so they are counted when they arrive, not when they were created)."""
    log = sim.stats.arrays()
    m = (log["sl"] == sl) & (log["dst"] == 3) & (log["delivered_at"] >= WARMUP) & (log["delivered_at"] <= STOP)
    return log["size"][m].sum() * 8e9 / (STOP - WARMUP) / RATE


class TestGuarantees:
    def test_reserved_bandwidth_under_a_best_effort_flood(self):
        sim, s = run({2: 8})
        for c in s["qos"]["per_connection"]:
            # every packet created in the window arrived (a CBR count is within one IAT of the window's
            # length), none later than a frame after it was created: the backlog did not grow
            assert c["delivered_over_requested"] >= 1 - c["iat_ns"] / (STOP - WARMUP), c
            assert c["delay_max_iat"] * c["iat_ns"] < FRAME, c
        assert 0.32 < share_of_h3(sim, 8) < 0.345  # BE gets what is left
        assert s["conservation_ok"]

    def test_without_the_tables_the_flood_takes_its_round_robin_share(self):
        sim, s = run({2: 8}, flat=True)
        sl3 = s["qos"]["per_sl"]["3"]
        # VL3 competes with VL8 (and VL2) at equal weight: about half the link for 1.6 Gb/s of requests,
        # so its backlog grows and much of what it sent in the window has not arrived by the end
        assert sl3["delivered"]["fraction_of_link"] < 0.85 * sl3["requested_fraction_of_link"]
        assert share_of_h3(sim, 8) > 0.45

    def test_challenged_traffic_gets_the_leftover(self):
        # CH has weight 1 (one packet per table pass) but nothing else wants the rest of the link
        sim, s = run({1: 9})
        assert min(c["delivered_over_requested"] for c in s["qos"]["per_connection"]) > 0.99
        assert 0.32 < share_of_h3(sim, 9) < 0.345

    def test_best_effort_beats_challenged(self):
        sim, s = run({1: 9, 2: 8})
        be, ch = share_of_h3(sim, 8), share_of_h3(sim, 9)
        assert 0.32 < be + ch < 0.345
        assert 0 < ch < be / 100  # one 256-byte CH packet per pass over 3264 units of BE entries
        assert min(c["delivered_over_requested"] for c in s["qos"]["per_connection"]) > 0.99

    def test_credit_invariant_and_conservation(self):
        sim, s = run({1: 9, 2: 8}, check=True)
        assert s["conservation_ok"] and s["packets_dropped"] == 0


class TestCbr:
    def test_packets_every_iat_from_a_random_phase(self):
        sim, qos = star()
        c = qos.connect(0, 3, 64e6, sl=2)  # IAT = 2048 bits / 64 Mb/s = 32 us
        qos.start_traffic(start=10_000.0)
        src = qos.sources[0]
        phase = src.phase[0]
        assert 10_000.0 <= phase < 42_000.0 and c.iat == 32_000.0
        due = phase + 32_000.0 * np.arange(200)
        due = due[due <= 5_000_000.0]
        # before it ran, every packet due by 5 ms is pending; bytes count those created in the window
        assert src.pending(5_000_000.0) == (len(due), 256 * int((due >= WARMUP).sum()))
        sim.run(5_000_000.0)
        assert src.pending(5_000_000.0) == (0, 0) and src.sent == len(due)
        log = sim.stats.arrays()
        assert np.array_equal(log["created"], due[: len(log["created"])])
        assert len(due) - len(log["created"]) <= 1  # the last one may still be on its way
        assert set(log["flow"]) == {c.id}

    def test_accounting(self):
        sim, qos = star()
        assert isinstance(qos.connect(0, 3, 2e9, sl=3), Rejection)  # 13056 slots: one more than 80 %
        qos.connect(0, 3, 1.5e9, sl=3)
        qos.start_traffic()
        s = sim.run(WARMUP + 500_000.0)
        assert s["packets_generated"] == s["packets_injected"] + s["packets_queued_at_source"]
        assert s["offered_load"] == pytest.approx(1.5 / 2.5 / 4, rel=0.01)  # of the 4 hosts' links
        assert s["qos"]["delivered"]["fraction_of_link"] == pytest.approx(0.15, rel=0.01)

    def test_same_seed_same_run(self):
        outs = []
        for seed in (5, 5, 6):
            sim, s = run({2: 8}, seed=seed)
            outs.append((s["qos"], sim.stats.arrays()["created"]))
        assert outs[0][0] == outs[1][0] and np.array_equal(outs[0][1], outs[1][1])
        assert not np.array_equal(outs[0][1][:50], outs[2][1][:50])

    def test_packets_follow_the_admitted_paths(self):
        # every output port sends exactly the packets of the connections admitted through it
        sim = Simulation("topologies/bermudez2006_fig1.ned", overrides={"**.numVLs": "10"}, seed=2, warmup=0)
        qos = QosNetwork(sim)
        est = qos.establish(24, retries=20)
        qos.start_traffic(stop=200_000.0)
        sim.run(300_000.0)
        log = sim.stats.arrays()
        per_conn = {cid: int((log["flow"] == cid).sum()) for cid in qos.admission.connections}
        expected = {}
        for cid, hops in qos.admission.paths_of.items():
            for node, port in hops:
                name = sim.ib_nodes[node].tx[port].name_
                expected[name] = expected.get(name, 0) + per_conn[cid]
        assert est.established == 24 and sum(per_conn.values()) > 100
        assert {tx.name_: tx.sent for tx in sim.ports if tx.sent} == {k: v for k, v in expected.items() if v}

    def test_merged_with_pattern_traffic_on_one_host(self):
        sim, s = run({0: 8})  # h0 has CBR connections and a BE flood
        assert min(c["delivered_over_requested"] for c in s["qos"]["per_connection"]) > 0.99
        assert share_of_h3(sim, 8) > 0.3

    def test_a_merged_flood_stays_lazy(self):
        # h0's best-effort flood (load 1.0 into a link the CBR connections also use) is held back by its
        # send queue, not materialised: the queue stays bounded and the backlog is still counted
        from ibfabric.components.hca.sources import BACKLOG

        sim, qos = star({0: 8}, check=True)
        for src, dst, sl, bw in CONNS:
            qos.connect(src, dst, bw, sl=sl)
        qos.start_traffic(stop=1_000_000.0)
        tx = sim.module("h[0]").tx[1]
        seen = []
        for k in range(1, 20):
            sim.call_at(k * 50_000.0, lambda: seen.append(tx.queued))
        s = sim.run(1_000_000.0)
        assert max(seen) <= BACKLOG + len(CONNS) and s["packets_queued_at_source"] > 500
        assert s["conservation_ok"]


class TestSetUp:
    def test_sl2vl_and_tables_installed_everywhere(self):
        sim, qos = star()
        sw = sim.module("sw")
        assert all(rx.sl2vl_out[o] == list(qos.classes.sl2vl) for rx in sw.rx.values() for o in sw.tx)
        assert all(sim.module(f"h[{i}]").tx[1].sl2vl == list(qos.classes.sl2vl) for i in range(4))
        arb = sw.tx[4].arbiter
        assert sorted({vl for vl, _ in arb.low}) == [8, 9] and arb.high == []
        qos.connect(0, 3, 100e6, sl=3)
        assert sum(w for vl, w in arb.low if vl == 3) == 653
        assert sum(w for vl, w in sw.tx[2].arbiter.low if vl == 3) == 0  # not on the path

    def test_too_few_vls(self):
        sim = Simulation(STAR, overrides={"**.mtu": "256B"})
        with pytest.raises(ConfigError, match=r"use 10 data VLs but the link has 1 \(set '\*\*.numVLs = 10'\)"):
            QosNetwork(sim)

    def test_needs_the_iba_arbiter(self):
        sim = Simulation(STAR, overrides={**QOS, "**.arbiter": "round-robin"})
        with pytest.raises(ConfigError, match="needs the 'iba-vlarb' arbiter"):
            QosNetwork(sim)

    def test_unknown_policy_lists_the_valid_ones(self):
        sim = Simulation(STAR, overrides=QOS)
        names = sim.plugins.arbitration_policies.names()  # the built-in and other plugins' policies
        assert "alfaro2001" in names
        with pytest.raises(PluginError, match=rf"unknown arbitration policy 'wfq' \(valid: {re.escape(', '.join(names))}\)"):
            QosNetwork(sim, policy="wfq")

    def test_packets_must_fit_the_buffers(self):
        sim, qos = star()
        qos.connect(0, 3, 1e6, sl=1, packet_size=8192)
        with pytest.raises(ConfigError, match=r"vlBufferSize \(4096B\) cannot hold the connections' 8192B packets"):
            qos.start_traffic()

    def test_a_third_party_policy(self):
        class Half:
            """Admits up to half of each link, every class VL at weight 10."""

            def __init__(self, options):
                pass

            def new_port(self, rate, classes, name):
                return HalfPort(rate)

        class HalfPort:
            def __init__(self, rate):
                self.rate, self.held = rate, 0.0

            def check(self, d):
                return None if self.held + d.bandwidth <= self.rate / 2 else "bandwidth: half used"

            def reserve(self, d):
                self.held += d.bandwidth

            def release(self, conn):
                pass

            def tables(self):
                return (), tuple((vl, 10) for vl in range(10)), 0

            def reserved(self):
                return self.held

        class plugin:
            @staticmethod
            @hookimpl
            def ibfabric_register_arbitration_policies(register):
                register("half", Half)

        sim = Simulation(STAR, overrides=QOS, plugins=[plugin])
        qos = QosNetwork(sim, policy="half")
        assert not hasattr(qos.connect(0, 3, 1.2e9), "reason")
        assert qos.connect(1, 3, 0.1e9).reason == "bandwidth: half used"
        assert sim.module("sw").tx[4].arbiter.low == [(vl, 10) for vl in range(10)]


class TestLinkDataRate:
    NET = """
    network pair
    {
        submodules:
            a: HCA;
            b: HCA;
        connections:
            a.port[1] <--> Link { width = "1x"; speed = "SDR"; length = 0m; } <--> b.port[1];
    }
    """

    def test_overrides_width_and_speed(self):
        sim = Simulation(self.NET, overrides={"**.dataRate": "2.5Gbps"})
        (link,) = sim.channels
        assert (link.rate, link.byte_time) == (2.5e9, 3.2)
        a, b = sim.module("a"), sim.module("b")
        sim.call_at(0.0, lambda: a.send_packet(Packet.make(a.lid, b.lid, 1000)))
        sim.run("10us")
        assert sim.stats.arrays()["delivered_at"].tolist() == [3200.0]

    def test_default_is_width_times_speed(self):
        (link,) = Simulation(self.NET).channels
        assert (link.rate, link.byte_time) == (2e9, 4.0)

    def test_negative_is_an_error(self):
        with pytest.raises(ConfigError, match="'dataRate' must be >= 0"):
            Simulation(self.NET, overrides={"**.dataRate": "-1bps"})


class TestDocs:
    DOC = Path(__file__).resolve().parents[2] / "docs" / "qos.md"

    def blocks(self):
        return re.findall(r"```python\n(.*?)```", self.DOC.read_text(), re.S)

    def test_the_example_runs(self, monkeypatch, capsys):
        monkeypatch.chdir(self.DOC.parents[1])
        ns = {}
        exec(self.blocks()[0], ns)
        assert ns["est"].established == 300 and ns["summary"]["conservation_ok"]
        assert capsys.readouterr().out.startswith("300 ")

    def test_the_plugin_example_works(self):
        ns = {}
        exec(self.blocks()[1], ns)
        plugin = types.SimpleNamespace(__name__="equal-demo",
                                       ibfabric_register_arbitration_policies=ns["ibfabric_register_arbitration_policies"])
        sim = Simulation(STAR, overrides=QOS, plugins=[plugin])
        qos = QosNetwork(sim, policy="equal")
        assert not hasattr(qos.connect(0, 3, 2.4e9), "reason")
        assert qos.connect(1, 3, 0.2e9).reason == "bandwidth: full"
        assert sim.plugins.arbitration_policies.get("equal").plugin == "equal-demo"


class TestFoldedLog:
    """A QoS run folds its per-connection sums with the log: the same metrics in bounded memory."""

    def test_folded_metrics_equal_the_full_log(self):
        _, full = run({2: 8}, log_limit=None)
        sim, folded = run({2: 8}, log_limit=500)
        assert sim.stats.folded_delivered > 0 and sim.qos.folded is not None
        assert len(sim.stats.created) < 1000  # the log did not keep every delivery
        a, b = full["qos"], folded["qos"]
        assert len(a["per_connection"]) == len(b["per_connection"])
        for x, y in zip(a["per_connection"], b["per_connection"]):
            assert x.keys() == y.keys()
            for k in x:  # sums in another order: the last bits of a float may differ
                if isinstance(x[k], float) and isinstance(y[k], float):
                    assert y[k] == pytest.approx(x[k], rel=1e-12), k
                else:
                    assert y[k] == x[k], k
        for sl, row in a["per_sl"].items():
            other = b["per_sl"][sl]
            for key in ("packets", "jitter_pairs", "jitter", "delay_under", "delivered", "worst", "best"):
                assert other[key] == row[key], (sl, key)
            assert other["delay_mean_iat"] == pytest.approx(row["delay_mean_iat"], rel=1e-12)
            assert other["delay_max_iat"] == row["delay_max_iat"]

    def test_a_deadline_changed_after_folding_is_an_error(self):
        sim, qos = star(log_limit=200)
        qos.connect(0, 3, 1.0e9, sl=3)
        qos.start_traffic(stop=STOP)
        sim.run(6_000_000.0)
        assert qos.folded is not None
        with pytest.raises(ConfigError, match="folded .* deadline 0.5"):
            qos.summary(deadline=0.25)
