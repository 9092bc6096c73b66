"""Measurement: accepted throughput past saturation, latency in the window, saturation,
per-SL and per-class breakdowns, and the result files of a run."""

from __future__ import annotations

import csv
import io
import json

import pytest

import ibfabric
from ibfabric.measure import flatten
from ibfabric.results import read_result_set, result_files, write_result_set, write_results
from ibfabric.simulation import Simulation

# four leaf switches of 8 hosts, each with a single uplink to a root switch (1x SDR links)
TREE32 = """
network tree32
{
    submodules:
        root: Switch { numPorts = 4; }
        leaf[4]: Switch { numPorts = 9; }
        h[32]: HCA;
    connections:
        for i=0..3 {
            leaf[i].port[9] <--> Link { width = "1x"; speed = "SDR"; } <--> root.port[i+1];
        }
        for i=0..31 {
            h[i].port[1] <--> Link { width = "1x"; speed = "SDR"; } <--> leaf[int(i/8)].port[i%8+1];
        }
}
"""
#: Uniform traffic: 24 of each host's 31 destinations are behind the uplink its 8 hosts share,
#: and a host's packets leave in order, so a host sustains at most 31 / (8 x 24) of its link.
BOTTLENECK = 31 / (8 * 24)


def tree(load: float, seed: int = 1) -> Simulation:
    # output buffers and a crossbar at twice link speed: the uplink, not head-of-line blocking in the
    # switches, limits; FIFO inputs, so that a leaf's input buffer holds a host's packets in order
    # (with virtual output queues its local packets would pass the ones waiting for the uplink)
    return Simulation(TREE32, overrides={
        "**.traffic": "uniform", "**.load": str(load), "**.mtu": "256B", "**.outputBufferSize": "4KiB",
        "**.crossbarSpeedup": "2", "**.routing": "minhop", "**.inputQueues": "fifo"}, seed=seed, warmup="200us")


class TestAcceptedThroughput:
    @pytest.mark.parametrize("load", [0.3, 0.5])
    def test_saturated_fabric_accepts_the_analytic_bottleneck(self, load):
        s = tree(load).run("1ms")
        assert s["saturated"]
        assert s["offered_load"] == pytest.approx(load, rel=0.03)
        assert s["accepted_load"] == pytest.approx(BOTTLENECK, rel=0.03)
        # latency is over packets delivered in the window: there are many, whatever their age
        assert s["latency_ns"]["count"] == s["accepted_packets"] > 1000
        assert s["conservation_ok"]

    def test_below_saturation_accepted_follows_offered(self):
        s = tree(0.1).run("1ms")
        assert not s["saturated"]
        assert s["accepted_load"] == pytest.approx(s["offered_load"], rel=0.02)
        assert s["packets_queued_at_source"] < 32

    def test_accepted_counts_deliveries_in_the_window_whatever_their_creation(self):
        sim = tree(0.5)
        s = sim.run("1ms")
        log = sim.stats.arrays()
        inside = (log["delivered_at"] >= 200_000) & (log["delivered_at"] <= 1_000_000)
        assert s["accepted_packets"] == inside.sum()
        assert (log["created"][inside] < 200_000).any()  # old packets count too
        capacity = 32 * (2e9 / 8e9) * 800_000  # 1x SDR carries 2 Gb/s of data
        assert s["accepted_load"] == pytest.approx(log["size"][inside].sum() / capacity)
        per = s["accepted_load_per_destination"]
        assert per["min"] <= s["accepted_load"] <= per["max"]
        assert per["mean"] == pytest.approx(s["accepted_load"])

    def test_a_continued_run_extends_the_window(self):
        sim = tree(0.5)
        sim.run("600us")
        s = sim.run("1ms")
        assert s["window_ns"] == 800_000
        assert s["saturated"]
        assert len(s["source_backlog"]["samples"]) >= 9


class TestBreakdown:
    def test_per_sl_and_class(self):
        sim = Simulation(TREE32, overrides={"**.traffic": "uniform", "**.load": "0.05", "**.sl": '"0..3"',
                                            "**.numVLs": "4", "**.routing": "minhop"}, seed=3, warmup="20us")
        s = sim.run("300us")
        assert set(s["by_sl"]) == {"0", "1", "2", "3"}
        assert sum(g["packets"] for g in s["by_sl"].values()) == s["accepted_packets"]
        assert sum(g["accepted_load"] for g in s["by_sl"].values()) == pytest.approx(s["accepted_load"])
        assert list(s["by_class"]) == ["best_effort"]
        assert s["by_class"]["best_effort"]["latency_ns"] == s["latency_ns"]
        flat = flatten(s)
        assert flat["sl2_latency_mean"] == s["by_sl"]["2"]["latency_ns"]["mean"]
        assert flat["best_effort_accepted_load"] == s["accepted_load"]
        assert "definitions" in s and "accepted_load" in s["definitions"]


class TestFlatten:
    def test_names(self):
        flat = flatten({"seed": 3, "latency_ns": {"mean": 1.0, "p99": None}, "saturated": True,
                        "by_sl": {"1": {"latency_ns": {"max": 2}}}, "by_class": {"cbr": {"packets": 4}},
                        "source_backlog": {"samples": [1, 2], "growth": 0.5}, "routing": "updn"})
        assert flat == {"latency_mean": 1.0, "saturated": 1.0, "sl1_latency_max": 2.0, "cbr_packets": 4.0,
                        "source_backlog_growth": 0.5}


class TestResultFiles:
    def run(self):
        sim = ibfabric.load("irregular16", overrides={"**.traffic": "uniform", "**.load": "0.1",
                                                      "**.routing": "updn"}, seed=2, warmup="5us")
        return sim, sim.run("30us")

    def test_scalars_csv_holds_every_scalar_tidily(self):
        sim, s = self.run()
        files = result_files(sim, s, {"run_id": "abc", "configname": "loads", "iterationvars": "$load=0.1",
                                      "repetition": 1, "vars": {"load": 0.1}})
        rows = list(csv.reader(io.StringIO(files["scalars.csv"])))
        assert rows[0] == ["run_id", "module", "name", "value"]
        assert {r[0] for r in rows[1:]} == {"abc"}
        names = {(r[1], r[2]) for r in rows[1:]}
        assert ("irregular16", "accepted_load") in names and ("irregular16", "latency_p99") in names
        assert ("irregular16.h0_0", "acceptedLoad") in names
        assert ("irregular16.sw0.port[1]", "utilisation") in names
        assert float(dict(((r[1], r[2]), r[3]) for r in rows[1:])[("irregular16", "accepted_load")]) == \
            s["accepted_load"]
        sca = files["results.sca"].splitlines()
        assert sca[:2] == ["version 2", "run abc"]
        for line in ("attr configname loads", "attr iterationvars $load=0.1", "attr repetition 1",
                     "attr seedset 2", "param **.load 0.1", "param **.routing updn"):
            assert line in sca
        assert json.loads(files["summary.json"])["seed"] == 2

    def test_run_id_hashes_the_configuration(self):
        a = result_files(*self.run())["results.sca"].splitlines()[1]
        b = result_files(*self.run())["results.sca"].splitlines()[1]
        sim = ibfabric.load("irregular16", overrides={"**.traffic": "uniform", "**.load": "0.2",
                                                      "**.routing": "updn"}, seed=2, warmup="5us")
        c = result_files(sim, sim.run("30us"))["results.sca"].splitlines()[1]
        assert a == b != c

    def test_written_as_a_set(self, tmp_path):
        sim, s = self.run()
        out = tmp_path / "r"
        write_results(sim, s, out)
        files = read_result_set(out)
        assert set(files) == {"summary.json", "scalars.csv", "results.sca"}
        assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]
        # rewriting into the existing directory: a reader sees the old set or the new one
        write_result_set(out, {"summary.json": "{}\n"})
        assert read_result_set(out) == {"summary.json": "{}\n"}
        (out / "summary.json").write_text("{\"x\": 1}\n")  # a file changed behind the manifest's back
        assert read_result_set(out) is None

    def test_out_is_a_file(self, tmp_path):
        f = tmp_path / "f"
        f.write_text("")
        with pytest.raises(ibfabric.ConfigError, match="not a directory"):
            write_result_set(f, {"a": "b"})
