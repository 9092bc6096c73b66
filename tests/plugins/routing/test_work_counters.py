"""Work counters of the routing engines (``tables.info["work"]``, issue 12: computation time)."""

import numpy as np
import pytest

from ibfabric.components.routing.opensm import write_lfts
from ibfabric.plugins import PluginSet
from ibfabric.plugins.routing._common import WORK_KEYS, SwitchView
from ibfabric.topologies.generators import fat_tree, irregular

# engine label -> (engine, options, LMC its fabric needs)
IRREGULAR = {
    "pira": ("pira", {}, 0),
    "pira-lowest": ("pira", {"father": "lowest-port"}, 0),
    "fera": ("fera", {}, 0),
    "dr": ("dr", {}, 3),
    "hybrid+fera": ("hybrid", {"final": "fera"}, 0),
    "hybrid+dr": ("hybrid", {"final": "dr"}, 3),
    "updn": ("updn", {}, 0),
    "updn-tree": ("updn-tree", {}, 0),
    "minhop": ("minhop", {}, 0),
    "spf": ("spf", {}, 0),
    "sssp": ("sssp", {}, 0),
    "dfsssp": ("dfsssp", {}, 0),
    "lash": ("lash", {}, 0),
    "dor": ("dor", {}, 0),
    "fa": ("fa", {}, 1),
    "multipath": ("multipath", {"bits": "1"}, 2),
}
FATTREE = {"ftree": ("ftree", {}, 0), "dnup": ("dnup", {}, 0)}


@pytest.fixture(scope="module")
def engines():
    return PluginSet.load().routing_engines


def _irregular(switches, lmc=0, seed=1):
    from bench.routing import sequential_lids

    return sequential_lids(irregular(switches, links_per_switch=3, hosts_per_switch=1, num_ports=4, seed=seed), lmc)


def _run(engines, spec, fabric):
    engine, opts, _ = spec
    return engines[engine](fabric, dict(opts), np.random.default_rng(7))


def _fattree(k, n):
    from bench.routing import sequential_lids

    return sequential_lids(fat_tree(k, n))


class TestWorkCounters:
    @pytest.mark.parametrize("label", sorted(IRREGULAR))
    def test_counts_are_ints_and_sum(self, engines, label):
        spec = IRREGULAR[label]
        t = _run(engines, spec, _irregular(12, spec[2]))
        work = t.info["work"]
        assert tuple(work) == WORK_KEYS
        assert all(type(v) is int and v >= 0 for v in work.values())
        assert t.info["work_total"] == sum(work.values()) > 0

    @pytest.mark.parametrize("label", sorted(IRREGULAR))
    def test_identical_across_runs(self, engines, label):
        spec = IRREGULAR[label]
        a = _run(engines, spec, _irregular(12, spec[2]))
        b = _run(engines, spec, _irregular(12, spec[2]))  # a freshly built fabric, same arguments
        assert a.info["work"] == b.info["work"]
        assert a.info["work_total"] == b.info["work_total"]

    @pytest.mark.parametrize("label", sorted(IRREGULAR))
    def test_grows_with_fabric_size(self, engines, label):
        spec = IRREGULAR[label]
        sizes = (8, 10, 12) if label == "multipath" else (8, 16, 32)  # multipath's tables grow fast with the cycles
        totals = [_run(engines, spec, _irregular(s, spec[2])).info["work_total"] for s in sizes]
        assert totals[0] < totals[1] < totals[2]

    @pytest.mark.parametrize("label", sorted(FATTREE))
    def test_fat_tree_engines(self, engines, label):
        spec = FATTREE[label]
        small, big = (_run(engines, spec, _fattree(4, n)) for n in (2, 3))
        again = _run(engines, spec, _fattree(4, 2))
        assert small.info["work"] == again.info["work"]
        assert small.info["work_total"] == sum(small.info["work"].values())
        assert small.info["work_total"] < big.info["work_total"]

    def test_file_counts_the_entries_read(self, engines, tmp_path):
        g = _irregular(8)
        t = engines["minhop"](g, {}, None)
        path = tmp_path / "lfts.dump"
        path.write_text(write_lfts(t))
        back = engines["file"](g, {"path": str(path)}, None)
        assert back.info["work"]["entries"] == int(np.count_nonzero(t.expanded() != 255))
        assert back.info["work"]["visits"] == len(g.switches)

    def test_pira_counts_the_papers_interactions(self, engines):
        # PIRa explores every node once and interacts with every switch explored
        # before it (Bermúdez et al. 2006, §3.2: n(n-1)/2 interactions among n
        # switches; channel adapters interact with the switches only)
        g = _irregular(16)
        t = engines["pira"](g, {}, np.random.default_rng(1))
        S, n = len(g.switches), len(g.switches) + len(g.cas)
        assert t.info["work"]["visits"] - S == n  # graph build visits S switches, then n explorations
        assert S * (S + 1) // 2 <= t.info["work"]["entries"] <= S * (S + 1) // 2 + len(g.cas) * S

    def test_hybrid_phases(self, engines):
        g = _irregular(16)
        rng = np.random.default_rng(3)
        h = engines["hybrid"](g, {"final": "fera"}, rng)
        p = engines["pira"](g, {}, np.random.default_rng(3))
        f = engines["fera"](g, {}, None)
        ph = h.info["work_phases"]
        assert ph["provisional"] == p.info["work_total"]  # the first phase is PIRa's work exactly
        # the second phase is FERa's work but for the shared up*/down* graph (counted in the first)
        graph = len(g.switches) + int((SwitchView(g).nbr >= 0).sum())
        assert ph["final"] == f.info["work_total"] - graph
        assert h.info["work_total"] == sum(ph.values())
