"""Traffic sources: lazy with any number of SLs, bounded at the source, same messages and statistics."""

from __future__ import annotations

import copy
import json
import types
from collections import deque

import numpy as np
import pytest

from ibfabric.components import hca as hca_module
from ibfabric.components.hca.sources import BACKLOG, MergedSource, SLSource, SplitSource, TrafficSource
from ibfabric.simulation import Simulation

from .conftest import CHAIN, STAR

#: wall-clock entries of a summary
WALL = ("wall_s", "events_per_s", "packet_hops_per_s", "routing_time_s")


def four_sls(topology=STAR, check=False, **overrides):
    """A run where every host floods with messages of SLs 0..3 (1x SDR links: 0.25 B/ns)."""
    ov = {"**.traffic": "uniform", "**.load": "3.0", "**.sl": '"0..3"', "**.numVLs": "4", "**.mtu": "256B",
          "**.packetSize": "256B"}
    ov.update(overrides)
    return Simulation(topology, overrides=ov, seed=7, warmup="0us", check=check)


def eagerly(monkeypatch):
    """Make HCAs of several SLs create every message on time, as they did before SplitSource."""
    monkeypatch.setattr(hca_module, "SplitSource", TrafficSource)


def timeless(summary):
    """*summary* without its wall-clock entries."""
    return {k: v for k, v in summary.items() if k not in WALL}


def copies(source: SplitSource, lazy: bool):
    """A fresh eager TrafficSource and SplitSource of the same HCA and draws, on a stand-in transmitter."""
    part = source.parts[0]
    hca = part.hca
    tx = types.SimpleNamespace(link=part.tx.link, sendq=[deque() for _ in range(16)], queued=0)
    made = []
    for cls in (TrafficSource, SplitSource):
        s = cls(hca, tx, part.pattern, part.src, part.dlids, copy.deepcopy(hca.rng))
        s.lazy = lazy if cls is SplitSource else False
        made.append(s)
    return tx, made


class TestSplitSource:
    @pytest.mark.parametrize("arrival", ["poisson", "constant"])
    def test_the_sl_sources_create_the_messages_one_source_would(self, arrival):
        # the same stream of draws: the same times, destinations and SLs, in each SL's order
        sim = four_sls(CHAIN, **{"**.arrival": arrival, "**.sl": '"0,2,2,5"', "**.messageSize": "600B"})
        src = sim.module("a").tx[1].source
        assert isinstance(src, SplitSource) and all(isinstance(p, SLSource) for p in src.parts)
        assert [p.sl for p in src.parts] == [0, 2, 5]
        tx, (eager, split) = copies(src, lazy=False)
        eager.materialize(1_000_000.0)
        by_sl = {sl: [(p.created, p.dst, p.seq, p.size) for p in tx.sendq[sl]] for sl in (0, 2, 5)}
        assert sum(map(len, by_sl.values())) == tx.queued > 1000
        for q in tx.sendq:
            q.clear()
        split.materialize(1_000_000.0)
        assert {sl: [(p.created, p.dst, p.seq, p.size) for p in tx.sendq[sl]] for sl in (0, 2, 5)} == by_sl
        assert split.messages == eager.messages
        assert split.next_time == eager.next_time
        # SL 2 is listed twice: it gets half the messages
        assert len(by_sl[2]) == pytest.approx(len(by_sl[0]) * 2, rel=0.2)

    def test_pending_counts_the_messages_not_created(self):
        sim = four_sls(CHAIN, **{"**.messageSize": "600B"})
        sim.stats.window = 50_000.0
        tx, (eager, split) = copies(sim.module("a").tx[1].source, lazy=True)
        assert eager.pending(300_000.0) == split.pending(300_000.0)
        packets, nbytes = split.pending(300_000.0)
        state = [(p.next_time, p._i, p.rng.bit_generator.state) for p in split.parts]
        split.materialize(300_000.0)  # held back: BACKLOG packets per SL
        assert all(len(tx.sendq[p.sl]) < p.limit + len(p.packet_sizes) for p in split.parts)
        rest = split.pending(300_000.0)
        assert tx.queued + rest[0] == packets
        assert split.pending(300_000.0) == rest  # pending() leaves the state as it was
        assert state != [(p.next_time, p._i, p.rng.bit_generator.state) for p in split.parts]
        assert 0 < nbytes < packets // 3 * split.parts[0].wire_bytes

    def test_expected_backlog_follows_the_per_sl_rates(self):
        sim = four_sls(CHAIN)
        split = sim.module("a").tx[1].source
        exact = split.pending(2_000_000.0)[0]
        assert split.pending_estimate(2_000_000.0) == pytest.approx(exact, rel=0.03)

    def test_each_sl_offers_its_share_of_the_load(self):
        # thinning: SL s of k offers load / k; a long horizon, counted without running
        sim = four_sls(CHAIN, **{"**.load": "0.8"})
        split = sim.module("a").tx[1].source
        horizon = 200_000_000.0  # 200 ms: 39,000 messages per SL, 0.5 % noise
        rate = 0.25  # bytes per ns
        loads = [p.pending(horizon)[1] / (horizon * rate) for p in split.parts]
        assert loads == pytest.approx([0.2] * 4, rel=0.02)
        assert sum(loads) == pytest.approx(0.8, rel=0.01)

    def test_stays_lazy_when_merged(self):
        # MergedSource (CBR connections beside pattern traffic) keeps every source's laziness and
        # looks past a held-back one (tests/components/test_qos_sim.py runs it)
        sim = four_sls(CHAIN)
        split = sim.module("a").tx[1].source
        merged = MergedSource(split)
        assert split.lazy and all(p.lazy for p in split.parts)
        assert merged.next_time == split.next_time
        now = split.next_time
        assert merged.next_after(now) == split.next_after(now)


class TestBoundedBacklog:
    @pytest.mark.parametrize("vls", ["1", "4"])
    def test_overloaded_sources_hold_at_most_backlog_per_sl(self, vls, monkeypatch):
        sim = four_sls(**{"**.numVLs": vls})
        txs = [h.tx[h.first_port] for h in sim.hosts]
        per_vl = 4096 // 256  # packets a VL send buffer holds
        assert all(isinstance(tx.source, SplitSource) for tx in txs)
        assert all(p.limit == BACKLOG for tx in txs for p in tx.source.parts)
        worst = [0, 0]

        def sample():
            for tx in txs:
                worst[0] = max(worst[0], tx.queued)
                worst[1] = max(worst[1], tx.queued_packets())

        for k in range(1, 60):
            sim.call_at(k * 5_000.0, sample)
        s = sim.run("300us")
        assert worst[0] <= 4 * BACKLOG
        assert worst[1] <= 4 * BACKLOG + int(vls) * per_vl
        # the whole backlog is counted, the messages not created included ...
        assert s["packets_queued_at_source"] == s["packets_generated"] - s["packets_injected"]
        assert s["packets_queued_at_source"] > 2 * 4 * BACKLOG * len(txs)
        # ... and is what creating every message on time would have given
        eagerly(monkeypatch)
        eager = four_sls(**{"**.numVLs": vls})
        assert isinstance(eager.hosts[0].tx[1].source, TrafficSource)
        e = eager.run("300us")
        for key in ("packets_generated", "offered_load", "offered_bytes_per_ns_per_host"):
            assert s[key] == e[key]
        assert max(h.tx[h.first_port].queued for h in eager.hosts) > 4 * BACKLOG

    def test_offered_load_per_sl_and_in_total(self):
        sim = four_sls(**{"**.load": "0.8"})
        s = sim.run("1ms")
        now = sim.now
        rate = 0.25  # bytes per ns
        offered = np.zeros(4)
        for h in sim.hosts:
            for part in h.tx[h.first_port].source.parts:
                offered[part.sl] += part.messages * part.wire_bytes + part.pending(now)[1]
        offered /= now * rate * len(sim.hosts)
        assert offered.sum() == pytest.approx(s["offered_load"], rel=1e-12)
        assert s["offered_load"] == pytest.approx(0.8, rel=0.05)  # 3,100 messages: 1.8 % noise
        assert offered == pytest.approx([0.2] * 4, rel=0.1)  # 780 each: 3.6 %


class TestMultiSLRuns:
    def test_higher_priority_sls_wait_less(self):
        # a floods b on one VL; the send queues are served SL 3 first: SLs 3, 2 and 1 offer
        # 0.3 each and get through, SL 0 gets what is left of the link
        sim = Simulation(CHAIN, overrides={
            "**.a.traffic": "uniform", "**.b.traffic": '""', "**.load": "1.2", "**.sl": '"0..3"',
            "**.a.slPriority": '"3 2 1 0"', "**.mtu": "256B", "**.packetSize": "256B",
        }, seed=2, warmup="100us")
        s = sim.run("1ms")
        lat = {int(k): v["latency_ns"]["mean"] for k, v in s["by_sl"].items()}
        assert lat[3] < lat[2] < lat[1] < lat[0]
        assert lat[0] > 5 * lat[3]
        accepted = [2 * s["by_sl"][str(sl)]["accepted_load"] for sl in range(4)]  # of a's link (one of two)
        assert accepted[1:] == pytest.approx([0.3] * 3, rel=0.15)
        assert accepted[0] < 0.15
        assert max(p.limit for p in sim.module("a").tx[1].source.parts) == BACKLOG
        assert sim.module("a").tx[1].queued <= 4 * BACKLOG

    @pytest.mark.parametrize("vls, arrival", [("2", "poisson"), ("4", "constant"), ("1", "poisson")])
    def test_conservation_and_audit(self, vls, arrival):
        # check=True: the credit invariant at every transmission, and no port sleeping
        # while it could send (a missed wake-up) after any decision
        sim = four_sls(STAR, check=True, **{"**.numVLs": vls, "**.arrival": arrival,
                                                         "**.messageSize": "600B"})
        s = sim.run("100us")
        assert s["conservation_ok"]
        # sources were held back: some messages due are not created yet
        assert s["packets_queued_at_source"] > sum(h.tx[h.first_port].queued_packets() for h in sim.hosts)

    def test_light_load_matches_creating_every_message_on_time(self, monkeypatch):
        # below saturation nothing is held back: the same run, event for event
        over = {"**.load": "0.2", "**.numVLs": "2"}
        lazy = timeless(four_sls(STAR, **over).run("200us"))
        eagerly(monkeypatch)
        assert timeless(four_sls(STAR, **over).run("200us")) == lazy

    def test_same_seed_same_summary(self):
        runs = [json.dumps(timeless(four_sls(STAR, **{"**.numVLs": "2"}).run("100us")), sort_keys=True)
                for _ in range(2)]
        assert runs[0] == runs[1]
