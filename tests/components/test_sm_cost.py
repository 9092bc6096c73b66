"""The subnet manager's computation-time model (components/sm/cost.py; issue 12)."""

import numpy as np
import pytest

from ibfabric.components.sm import cost
from ibfabric.components.sm.cost import STEP_NS, STEP_NS_BY_ENGINE, compute_time_ns
from ibfabric.errors import ConfigError
from ibfabric.plugins import PluginSet
from ibfabric.topologies.generators import bermudez2006_fig1, irregular

PAPER_SIZES = [8, 16, 24, 32, 48, 64]  # Bermúdez et al. 2006, §4.1


@pytest.fixture(scope="module")
def engines():
    return PluginSet.load().routing_engines


def _irregular(switches, lmc=0, seed=1):
    from bench.routing import sequential_lids

    return sequential_lids(irregular(switches, links_per_switch=3, hosts_per_switch=1, num_ports=4, seed=seed), lmc)


class TestComputeTimeNs:
    def test_work_times_step(self, engines):
        t = engines["fera"](bermudez2006_fig1(), {}, None)
        assert compute_time_ns(t, step_ns=250.0) == t.info["work_total"] * 250
        assert compute_time_ns(t) == round(t.info["work_total"] * STEP_NS_BY_ENGINE["fera"])
        assert compute_time_ns(t, per_engine=False) == round(t.info["work_total"] * STEP_NS)

    def test_uncalibrated_engine_takes_the_global_step(self, engines):
        from bench.routing import sequential_lids
        from ibfabric.topologies.generators import fat_tree

        t = engines["ftree"](sequential_lids(fat_tree(4, 2)), {}, None)
        assert "ftree" not in STEP_NS_BY_ENGINE
        assert compute_time_ns(t) == round(t.info["work_total"] * STEP_NS)

    def test_measured(self, engines):
        t = engines["pira"](bermudez2006_fig1(), {}, None)
        assert compute_time_ns(t, "measured", measured_s=0.0123) == 12_300_000

    def test_deterministic(self, engines):
        a = compute_time_ns(engines["dr"](_irregular(16, 3), {}, None))
        b = compute_time_ns(engines["dr"](_irregular(16, 3), {}, None))
        assert a == b and isinstance(a, int)

    @pytest.mark.parametrize("kw, match", [
        ({"model": "guess"}, "must be one of \\(ops, work, measured\\)"),
        ({"model": "measured"}, "needs the engine's measured CPU time"),
        ({"step_ns": -1.0}, "'step_ns' must be >= 0"),
        ({"phase": "second"}, "'phase' must be one of"),
    ])
    def test_errors(self, engines, kw, match):
        t = engines["pira"](bermudez2006_fig1(), {}, None)
        with pytest.raises(ConfigError, match=match):
            compute_time_ns(t, **kw)

    def test_phase_needs_a_hybrid(self, engines):
        with pytest.raises(ConfigError, match="only hybrid"):
            compute_time_ns(engines["pira"](bermudez2006_fig1(), {}, None), phase="final")

    def test_tables_without_work(self, engines):
        t = engines["pira"](bermudez2006_fig1(), {}, None)
        del t.info["work_total"]
        with pytest.raises(ConfigError, match="smComputeTime = measured"):
            compute_time_ns(t)


class TestPaperOrder:
    """Bermúdez et al. 2006, Figs. 10-11: DR slowest, then FERa, PIRa shortest; a hybrid's first phase is PIRa's."""

    @pytest.mark.parametrize("switches", PAPER_SIZES)
    def test_pira_fera_dr(self, engines, switches):
        g0, g3 = _irregular(switches), _irregular(switches, 3)
        rng = np.random.default_rng(1)
        pira = compute_time_ns(engines["pira"](g0, {}, rng))
        fera = compute_time_ns(engines["fera"](g0, {}, None))
        dr = compute_time_ns(engines["dr"](g3, {}, None))
        assert pira < fera < dr
        # the same order with one global cost per step
        w = {e: engines[e](g, {}, np.random.default_rng(1)).info["work_total"] for e, g in (("pira", g0), ("fera", g0), ("dr", g3))}
        assert w["pira"] < w["fera"] < w["dr"]

    @pytest.mark.parametrize("final", ["fera", "dr"])
    def test_hybrid_first_phase_is_pira(self, engines, final):
        g = _irregular(32, 3)
        h = engines["hybrid"](g, {"final": final}, np.random.default_rng(5))
        p = engines["pira"](g, {}, np.random.default_rng(5))
        f = engines[final](g, {}, None)
        assert compute_time_ns(h, phase="provisional") == compute_time_ns(p)
        assert compute_time_ns(h, phase="provisional") < compute_time_ns(h, phase="final")
        assert compute_time_ns(h) == sum(compute_time_ns(h, phase=ph) for ph in ("provisional", "final", "coexistence"))
        # the second phase is the final engine's work without the shared up*/down* graph
        assert compute_time_ns(h, phase="final") <= compute_time_ns(f)

    def test_module_documents_its_calibration(self):
        doc = cost.__doc__
        assert "python -m bench.calibrate_sm_cost" in doc and "2026-11-22" in doc


class TestOpsModel:
    """``model="ops"``: one cost per counted operation for every engine, so times compare as operation counts."""

    def test_one_cost_for_every_engine(self, engines):
        g0, g3 = _irregular(16), _irregular(16, 3)
        ts = [engines["pira"](g0, {}, np.random.default_rng(1)), engines["fera"](g0, {}, None), engines["dr"](g3, {}, None)]
        for t in ts:
            assert compute_time_ns(t, "ops") == round(t.info["work_total"] * cost.OP_NS)
            assert compute_time_ns(t, "ops", step_ns=10.0) == t.info["work_total"] * 10
        p, f, d = (compute_time_ns(t, "ops") for t in ts)
        w = [t.info["work_total"] for t in ts]
        assert f / p == pytest.approx(w[1] / w[0], rel=1e-6) and d / p == pytest.approx(w[2] / w[0], rel=1e-6)
        # the per-engine calibration (CPU time) gives other ratios: it folds in our code's speed
        assert compute_time_ns(ts[1]) / compute_time_ns(ts[0]) != pytest.approx(f / p, rel=0.01)

    def test_hybrid_phases_at_the_same_cost(self, engines):
        h = engines["hybrid"](_irregular(16), {"final": "fera"}, np.random.default_rng(5))
        phases = h.info["work_phases"]
        for ph in ("provisional", "final", "coexistence"):
            assert compute_time_ns(h, "ops", phase=ph) == round(phases[ph] * cost.OP_NS)
        assert compute_time_ns(h, "ops") == round(h.info["work_total"] * cost.OP_NS)


class TestOperationCountsByHand:
    """The counted operations on lines of 2 and 3 switches, one host each (docs/routing.md, "Computation time").

    The up*/down* graph costs S visits and one relaxation per switch-to-switch port (2 per link), for every engine.
    """

    @staticmethod
    def _line(n, lmc=0):
        from ibfabric.topologies.generators import mesh

        return mesh((n, 1), hosts_per_switch=1, width="1x", speed="SDR").with_lids(lmc=lmc)

    def test_fera(self, engines):
        # graph: 2 visits, 2 relaxations; one search per destination switch, each reaches both
        # switches (4 visits) and examines their one switch port (4); an entry per (switch, LID): 2 x 4
        assert engines["fera"](self._line(2), {}, None).info["work"] == \
            {"visits": 2 + 4, "relaxations": 2 + 4, "entries": 8, "checks": 0}
        # 3 switches: graph 3 + 4; 3 searches x 3 switches, ports (1 + 2 + 1) x 3; 3 switches x 6 LIDs
        assert engines["fera"](self._line(3), {}, None).info["work"] == \
            {"visits": 3 + 9, "relaxations": 4 + 12, "entries": 18, "checks": 0}

    def test_pira(self, engines):
        # explored in LID order: sw0, h0, sw1, h1 (4 visits); PREV + KIDS of each: 2 + 1 + 2 + 1;
        # interactions with the switches explored before (and itself, for a switch): 1, 1, 2, 2
        t = engines["pira"](self._line(2), {}, np.random.default_rng(1))
        assert t.info["order"] == ["sw0_0", "h0_0_0 port 1", "sw1_0", "h1_0_0 port 1"]
        assert t.info["work"] == {"visits": 2 + 4, "relaxations": 2 + 6, "entries": 6, "checks": 0}
        # 3 switches, order sw0, h0, sw1, sw2, h1, h2: interactions 1 + 1 + 2 + 3 + 3 + 3; every link twice (5 links)
        t = engines["pira"](self._line(3), {}, np.random.default_rng(1))
        assert t.info["work"] == {"visits": 3 + 6, "relaxations": 4 + 10, "entries": 13, "checks": 0}

    def test_dr_checks_and_entries(self, engines):
        # LMC 1: FERa's entries are 2 switches x (2 switch LIDs + 2 x 2 host LIDs) = 12, and DR writes
        # both LIDs of each host at both switches (8).  Checks, per destination host: the other host's
        # route (2 switches compared), then each switch source against the one name (1 + 1): 4, twice.
        t = engines["dr"](self._line(2, lmc=1), {}, None)
        assert t.info["work"]["entries"] == 12 + 8 and t.info["work"]["checks"] == 8
        fera = engines["fera"](self._line(2, lmc=1), {}, None).info["work"]
        assert t.info["work"]["visits"] > fera["visits"] and t.info["work"]["relaxations"] > fera["relaxations"]

    def test_dr_work_parts_sum_to_the_total(self, engines):
        t = engines["dr"](_irregular(16, 1), {}, None)
        parts = t.info["work_parts"]
        assert set(parts) == {"fera", "searches", "walks", "names"}
        assert sum(sum(p.values()) for p in parts.values()) == t.info["work_total"]
        assert parts["fera"] == engines["fera"](_irregular(16, 1), {}, None).info["work"]
