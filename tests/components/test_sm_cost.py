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
        ({"model": "guess"}, "must be one of \\(work, measured\\)"),
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
