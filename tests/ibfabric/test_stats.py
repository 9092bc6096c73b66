"""ibfabric.stats: deliveries held in batches give the log, the folds and the results that a
typed append per delivery gave."""

from __future__ import annotations

import numpy as np
import pytest

import ibfabric
from ibfabric import stats as stats_mod
from ibfabric.components.packet import Packet
from ibfabric.stats import _FIELDS, PacketStats


def packet(i: int) -> Packet:
    return Packet(1, 2 + i % 5, i % 3, 64 + i, 1 + i % 4, i % 7, (i * 3) % 11, created=i * 1.5, msg=i, seq=i % 2,
                  last=bool(i % 2), flow=i % 4, cls=i % 4, injected=i * 1.5 + 0.25, hops=1 + i % 3)


def expected_row(p: Packet, t: float) -> tuple:
    return (p.created, p.injected, t, p.size, p.sl, p.src, p.dst, p.hops, p.flow, p.msg, int(p.last), p.cls)


class TestHeldDeliveries:
    def test_every_reader_sees_every_delivery(self):
        st = PacketStats(0.0, None)
        rows = []
        for i in range(2500):  # two full batches and some held
            p = packet(i)
            st.add_delivery(p, 10.0 + i)
            rows.append(expected_row(p, 10.0 + i))
        assert len(st._held) == 2500 % stats_mod._BATCH
        log = st.arrays()
        assert not st._held
        got = list(zip(*(log[name].tolist() for name in _FIELDS)))
        assert got == [tuple(r) for r in rows]
        assert log["last"].dtype == bool and log["size"].dtype == np.dtype("l")

    @pytest.mark.parametrize("reader", ["delivered", "on_wire_to_hosts"])
    def test_counts_include_held_packets(self, reader):
        st = PacketStats(0.0, None)
        for i in range(10):
            st.add_delivery(packet(i), float(i))
        assert len(st._held) == 10
        n = getattr(st, reader)(4.5)
        assert n == 5  # last bits at 0..4 and at 5..9

    def test_lose_deliveries_sees_held_packets(self):
        st = PacketStats(0.0, None)
        for i in range(20):
            st.add_delivery(packet(i), float(i))
        dst = packet(15).dst
        late_to_dst = sum(1 for i in range(20) if i > 12 and packet(i).dst == dst)
        assert st.lose_deliveries(12.0, dst) == late_to_dst > 0
        assert len(st.arrays()["created"]) == 20 - late_to_dst

    @pytest.mark.parametrize("limit", [1, 7, 1000, 1500])
    def test_folds_come_at_the_same_deliveries(self, limit, monkeypatch):
        """A fold sees exactly the log (and the clock) that it saw when each delivery went to the
        arrays at once (batches of one)."""

        def folds(batch):
            monkeypatch.setattr(stats_mod, "_BATCH", batch)
            st = PacketStats(0.0, limit)
            seen = []
            st.fold_hooks.append(lambda log, now: seen.append((now, len(log["created"]), log["msg"].tolist())))
            clock = [0.0]
            st.clock = lambda: clock[0]
            for i in range(3000):
                clock[0] = i * 0.75  # deliveries complete up to about two thirds of the log
                st.add_delivery(packet(i), i * 1.0)
            log = st.arrays()
            return seen, st.folded_delivered, {k: v.tolist() for k, v in log.items()}

        assert folds(stats_mod._BATCH) == folds(1)


class TestRuns:
    def test_failure_run_and_folded_run_equal_batches_of_one(self, monkeypatch):
        """Whole runs: a dynamic link failure (deliveries lost under it) and a folding log."""

        def run(batch, **kw):
            monkeypatch.setattr(stats_mod, "_BATCH", batch)
            sim = ibfabric.load("irregular16", overrides={"**.traffic": "uniform", "**.load": "0.3"}, seed=2,
                                warmup="5us", **kw)
            if "log_limit" not in kw:
                h = sim.hosts[0]
                sim.fail_link((h.path, h.first_port), at="40.1us")  # a delivery on its wire is lost
            s = sim.run("80us")
            if "log_limit" not in kw:
                assert s["drops_by_reason"]["link-down"] == 1
            return {k: v for k, v in s.items() if not k.endswith("_s")}, \
                {k: v.tolist() for k, v in sim.stats.arrays().items()}

        assert run(stats_mod._BATCH) == run(1)
        assert run(stats_mod._BATCH, log_limit=300) == run(1, log_limit=300)
