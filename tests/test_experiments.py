"""The experiment files build the networks their papers describe."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def load_script(name: str):
    spec = importlib.util.spec_from_file_location(name, ROOT / "experiments" / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def exp():
    return load_script("alfaro2001")


class TestAlfaro2001:
    @pytest.mark.parametrize("topology", ["irregular", "hypercube", "mesh"])
    def test_the_papers_network_model(self, exp, topology):
        # §5.1: 16 switches of 8 ports with 4 hosts each, 2.5 Gb/s links, 4-packet buffers per VL,
        # crossbar at twice the link rate, 20 ns arbitration, 11 VLs (10 data VLs and VL15)
        cfg = exp.load_config()
        sim = exp.build(cfg, topology, 256)  # an override that matched nothing would raise here
        switches = [n for n in sim.ib_nodes if n.is_switch]
        assert len(switches) == 16 and len(sim.hosts) == 64
        assert all(int(s.params["numPorts"]) == 8 and len(s.links) <= 8 for s in switches)
        assert all(sum(1 for p, (peer, _, _) in s.links.items() if not peer.is_switch) == 4 for s in switches)
        assert {ch.rate for ch in sim.channels} == {2.5e9}
        sw = switches[0]
        assert (sw.speedup, sw.arbitration_delay, sw.num_vls) == (2.0, 20.0, 10)
        assert sw.vl_buffer // 256 == sw.out_buffer // 256 == sim.hosts[0].vl_buffer // 256 == 4
        assert sim.tables.engine == "updn"
        big = exp.build(cfg, topology, 4096)
        assert big.ib_nodes[0].vl_buffer // 4096 == 4

    def test_admission_on_the_irregular_network(self, exp):
        from ibfabric.components.qos import Admission, establish
        from ibfabric.kernel import module_rng

        cfg = exp.load_config()
        sim = exp.build(cfg, "irregular", 256)
        adm = Admission(sim.tables, sim.plugins.arbitration_policies["alfaro2001"](cfg["admission"]["options"]))
        est = establish(adm, 256, module_rng(sim.seed, "qos:establish"), retries=cfg["admission"]["retries"])
        assert est.established == 256 and est.accepted == {0: 64, 1: 64, 2: 64, 3: 64}

    def test_report_of_a_results_file(self, exp):
        res = {"wall_s": 1.0, "jobs_in_parallel": 1, "jobs": [
            {"kind": "table2", "topology": "mesh", "size": 256, "wall_s": 1.0,
             "rows": [{"tried": t, "established": min(t, 2400), "requested_load": 0.7} for t in exp.PAPER_TABLE2["tried"]]},
        ]}
        text = exp.report(res)
        assert "| 3072 | 2400 / 2518 |" in text
