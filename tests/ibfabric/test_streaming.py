"""Bounded memory on long runs: the delivery log is folded into streaming statistics
that give the same results (exact counts and means, quantiles within ALPHA)."""

from __future__ import annotations

import numpy as np
import pytest

import ibfabric
from ibfabric.measure import ALPHA, LatencyStats


def run(log_limit, **over):
    sim = ibfabric.load("irregular16", overrides={"**.traffic": "uniform", "**.load": "0.2", "**.sl": '"0..1"',
                                                  "**.numVLs": "2", "**.routing": "updn", **over},
                        seed=4, warmup="20us", log_limit=log_limit)
    return sim, sim.run("150us")


class TestFolding:
    def test_folded_run_gives_the_same_summary(self):
        full_sim, full = run(None)
        sim, folded = run(5000)
        assert sim.stats.folded_delivered > 0 and len(sim.stats.created) < 10_000
        assert full["latency_quantiles"] == "exact" and "folded" in folded["latency_quantiles"]
        for key in ("packets_delivered", "packets_injected", "accepted_packets", "packets_in_flight",
                    "conservation_ok", "saturated"):
            assert folded[key] == full[key], key
        for key in ("accepted_load", "offered_load", "mean_hops"):
            assert folded[key] == pytest.approx(full[key], rel=1e-12), key
        for block in ("latency_ns", "network_latency_ns"):
            a, b = full[block], folded[block]
            assert (a["count"], a["min"], a["max"]) == (b["count"], b["min"], b["max"])
            assert b["mean"] == pytest.approx(a["mean"], rel=1e-12)
            for q in ("p50", "p99"):
                assert b[q] == pytest.approx(a[q], rel=2 * ALPHA), (block, q)
        assert folded["by_sl"].keys() == full["by_sl"].keys()
        for sl in full["by_sl"]:
            assert folded["by_sl"][sl]["packets"] == full["by_sl"][sl]["packets"]
            assert folded["by_sl"][sl]["accepted_load"] == pytest.approx(full["by_sl"][sl]["accepted_load"])
        assert folded["accepted_load_per_destination"] == pytest.approx(full["accepted_load_per_destination"])

    def test_keep_log(self):
        from ibfabric.stats import PacketStats

        st = PacketStats(0.0, 10)
        st.keep_log()  # for analyses of the raw log that cannot fold
        assert st.log_limit is None and st._fold_at > 1e18

    def test_bad_limit(self):
        with pytest.raises(ibfabric.ConfigError, match="log_limit"):
            run(0)


class TestLatencyStats:
    def test_quantiles_within_alpha(self):
        rng = np.random.default_rng(1)
        values = rng.lognormal(8, 1.5, 20_000)
        exact = LatencyStats(values)
        half = LatencyStats(values[:10_000]).fold().merge(LatencyStats(values[10_000:]))
        assert half.values is None and half.count == 20_000
        for q in (0.01, 0.5, 0.9, 0.99, 0.999):
            true = np.quantile(values, q, method="lower"), np.quantile(values, q, method="higher")
            got = half.quantile(q)
            assert true[0] * (1 - ALPHA) <= got <= true[1] * (1 + ALPHA), q
        assert half.summary()["mean"] == pytest.approx(exact.summary()["mean"])
        assert (half.lo, half.hi) == (exact.lo, exact.hi)

    def test_empty(self):
        assert LatencyStats().summary()["count"] == 0
        assert LatencyStats().fold().merge(LatencyStats()).summary()["mean"] is None
