"""Smoke tests of the reproduction scripts: Alfaro et al. 2001 (a short delay run), omnetpp_ib (issue 31)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def experiment_script(name: str):
    """experiments/<name>.py imported as a module (the experiments are scripts, not a package)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(name, ROOT / "experiments" / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_alfaro2001_delay_run(tmp_path):
    out = tmp_path / "res.json"
    proc = subprocess.run(
        [sys.executable, str(ROOT / "experiments" / "alfaro2001.py"), "--quick", "--only", "delay",
         "--topology", "irregular", "--packet-size", "256", "--jobs", "1", "--out", str(out)],
        capture_output=True, text=True, timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    (job,) = json.loads(out.read_text())["jobs"]
    assert job["kind"] == "delay" and job["conservation_ok"]
    assert 0 < job["established"] <= job["tried"]
    # Figs. 8-9: the two lowest-bandwidth SLs see delays far below their inter-arrival time
    for sl in ("0", "1"):
        assert job["per_sl"][sl]["packets"] > 0
        assert job["per_sl"][sl]["delay_under"]["IAT/32"] == 1.0
    assert "Figs. 8-9" in proc.stdout


def test_omnetpp_ib_quick(tmp_path):
    """experiments/omnetpp_ib.py --quick: the comparison's runs and two variants, 50 us each (issue 31)."""
    out = tmp_path / "omnetpp_ib.json"
    proc = subprocess.run([sys.executable, str(ROOT / "experiments" / "omnetpp_ib.py"), "--quick", "--out", str(out)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    runs = json.loads(out.read_text())["runs"]
    assert {r["variant"] for r in runs.values()} == {"config", "fifo", "min-gap"} and len(runs) == 6
    for r in runs.values():
        # the delivery log gives the summary's own figures; a source never queues with gaps of a packet time
        assert r["latency"]["mean"] == pytest.approx(r["summary_latency"]["mean"])
        assert r["network"]["p99"] == pytest.approx(r["summary_network"]["p99"])
        if r["variant"] == "min-gap":
            assert r["source_wait"]["max"] == pytest.approx(0.0, abs=1e-6)
    assert "The comparison" in proc.stdout and "947 / 2,397" in proc.stdout


def test_omnetpp_ib_readme_tables():
    """--report --readme: the comparison (differences of 5.0 % or more as rounded in bold), the variants (paired by seed
    only where a variant carries config's load) and the latency definitions at the model's loads."""
    mod = experiment_script("omnetpp_ib")

    def stats(mean, p99):
        return {"mean": mean, "p99": p99}

    def run(variant, load, window, rep, mean, p99, accepted):
        return {"variant": variant, "load": load, "window": window, "repetition": rep, "accepted_load": accepted,
                "latency": stats(mean, p99), "network": stats(mean - 10, p99 - 10), "source_wait": stats(4, 60),
                "model_def_2": stats(mean - 60, p99 - 60), "model_def_5": stats(mean - 50, p99 - 50), "wall_s": 1.0}

    runs = [run("config", 0.1, w, r, 370.4 + r, 447.0, 0.1) for w in ("2ms", "5ms") for r in (0, 1)]
    runs += [run("config", 0.3, "5ms", 0, 390.0, 529.0, 0.3)]
    runs += [run("fifo", 0.1, "2ms", r, 371.0, 450.0 + 2 * r, 0.1) for r in (0, 1)]
    runs += [run("min-gap-nominal", 0.1, "2ms", r, 367.0, 424.0, 0.08) for r in (0, 1)]
    text = mod.readme_tables({"runs": {str(i): r for i, r in enumerate(runs)}})
    comparison, variants, definitions = (t.split("\n") for t in text.split("\n\n"))
    assert comparison[0].startswith("| load | model mean / p99 | latency mean, 5 ms | p99, 5 ms | p99, 2 ms |")
    # mean 370.9 against 390: -4.9 % (plain); p99 447 against 471: -5.1 % (bold)
    assert comparison[2] == ("| 0.1 | 390 / 471 | 371 (370-371) -4.9 % | 447 (447-447) **-5.1 %** | 447 (447-447) -5.1 % "
                             "| 361 -7.5 % | 437 -7.2 % |")
    assert comparison[3] == "| 0.3 | | 390 (390-390) | 529 (529-529) | - | 380 | 519 |"
    assert variants[2] == "| `config` (wrr, 4,992 B) | 371 / 447 | 361 / 437 | |"
    assert variants[3] == "| `fifo` arbiter | 371 / 451 | 361 / 441 | +4 (+3..+5), +4 (+3..+5) |"
    assert variants[4] == ("| the same, mean gap 64 ns / load (the model's app: offers 0.080 at \"0.1\") | 367 / 424 "
                           "| 357 / 414 | |")
    assert definitions[2:] == ["| 0.1 | 390 / 471 | 371 / 447 | 361 / 437 | 297 / 373 | 311 / 387 | 321 / 397 | 4 / 60 |"]


def test_omnetpp_ib_port_overflows_by_the_models_rules(tmp_path):
    """experiments/omnetpp_ib_port.py: a 5-flit FIFO overflows at 0.9 when VSWDelay follows the grant, never when
    the pipeline counts against its room (issue 31)."""
    out = tmp_path / "port.json"
    proc = subprocess.run([sys.executable, str(ROOT / "experiments" / "omnetpp_ib_port.py"), "--loads", "0.9",
                           "--sizes", "5", "--time-us", "200", "--seeds", "1", "--out", str(out)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    rows = {r["rules"]: r for r in json.loads(out.read_text())["rows"]}
    assert rows["model"]["overflows_per_ms"] > 0 and rows["counted"]["overflows_per_ms"] == 0

def test_congestion_control_quick_run():
    proc = subprocess.run([sys.executable, str(ROOT / "experiments" / "congestion_control.py"), "--quick"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    rows = [line for line in proc.stdout.splitlines() if line.startswith("| two-switch") or line.startswith("| fattree")]
    assert len(rows) == 4  # each fabric with congestion control off and on
    # the two-switch victim gains with congestion control even in this short run
    off, on = (float(r.split("|")[3]) for r in rows[:2])
    assert on > 1.5 * off


def test_alfaro2001_admission_rows_from_the_largest_run_equal_fresh_runs():
    # Tables 2-4: a row is min(tried, E), E the largest run's count, because the same seed draws the same requests
    mod = experiment_script("alfaro2001")
    cfg = mod.load_config()
    cfg["widths"]["1x"]["tried"] = [1000, 2400, 3000]
    derived = mod.table2_job(cfg, "mesh", 256, "1x")
    fresh = mod.table2_job(cfg, "mesh", 256, "1x", fresh=True)
    assert set(derived["modes"]) == {"strict", "bandwidth"}
    for mode, rows in derived["modes"].items():
        assert [r["established"] for r in rows] == [r["established"] for r in fresh["modes"][mode]]
    strict, bw = (derived["modes"][m][-1]["established"] for m in ("strict", "bandwidth"))
    assert 2400 > strict and strict < bw < 3000  # the 64 entries bind before the bandwidth does
    assert set(derived["modes"]["bandwidth"][-1]["rejections"]) == {"bandwidth"}


def test_alfaro2001_summary_and_bad_retries():
    script = str(ROOT / "experiments" / "alfaro2001.py")
    proc = subprocess.run([sys.executable, script, "--summary"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    # Tables 2-4 from the committed results, each admission beside the paper's count
    for row in ("| 2 (1x) | 3072 | strict | 2339 / 2623", "| 3 (4x) | 12000 | bandwidth |", "| 4 (12x) | 35000 | strict |"):
        assert row in proc.stdout
    bad = subprocess.run([sys.executable, script, "--retries", "0", "--only", "table2"], capture_output=True, text=True,
                         timeout=120)
    assert bad.returncode != 0 and "--retries must be >= 1" in bad.stderr


def test_alfaro2001_readings_of_appendix_a():
    """The readings --variants runs (issue 32): what each changes, and the rounding loss it reports."""
    mod = experiment_script("alfaro2001_readings")
    cfg = mod.base.load_config()
    cfg["widths"]["1x"]["tried"] = [400]  # below the plateau: every connection is established
    rows = {v: mod.variants_job(cfg, "mesh", "1x", v)["row"] for v in ("main", "rounding-none", "host-links-100")}
    assert all(r["established"] == 400 for r in rows.values())
    sl0 = rows["main"]["slots"]["per_sl"]["0"]
    # every SL 0 connection (8-64 kb/s, under one slot of 153 kb/s) takes one slot: the loss is 1 - B/B_link x 16320
    assert sl0["slots_per_connection"] == 1.0
    assert sl0["rounding_loss_slots_per_connection"] == pytest.approx(1 - sl0["mean_bandwidth_bps"] / 2.5e9 * 16320)
    main, exact = rows["main"]["slots"], rows["rounding-none"]["slots"]
    assert main["host_rounding_loss_share_of_frame"] > 0 and exact["host_rounding_loss_share_of_frame"] == 0
    assert main["host_connection_slots_mean"] - main["host_exact_slots_mean"] == pytest.approx(
        main["host_rounding_loss_share_of_frame"] * 16320)
    # the same requests, whatever the reading of the slots or of the host links, while nothing is refused
    assert main["mean_bandwidth_per_connection_bps"] == exact["mean_bandwidth_per_connection_bps"] \
        == rows["host-links-100"]["slots"]["mean_bandwidth_per_connection_bps"]
    # host links without BE's 3264 slots (BE keeps one unit, as with be_share 0 everywhere)
    free = {v: rows[v]["tables"]["host_free_slots_mean"] for v in ("main", "host-links-100")}
    assert free["host-links-100"] - free["main"] == 3264 - 1
    assert mod.base.sl_ranges("scaled", 10e9)[3] == (256e6, 1200e6)
    assert mod.base.sl_ranges("sl2-1.55", 10e9)[2] == (1.55e6, 64e6)
    bad = subprocess.run([sys.executable, str(ROOT / "experiments" / "alfaro2001.py"), "--rounding", "none"],
                         capture_output=True, text=True, timeout=120)
    assert bad.returncode != 0 and "add --only table2" in bad.stderr


def kim2007_readings():
    return experiment_script("kim2007_readings")


def test_kim2007_readings_factors():
    """The injection-rate readings of experiments/kim2007_readings.py, computed from kim2007_15 (issue 32)."""
    f = kim2007_readings().factors("kim2007_15")
    # SPF's busiest link carries 42 of the 15 x 14 routes: 3.0 x a host's rate; the sparsest cut is a balanced
    # 2-link cut (7 | 8 switches): 2 x 14 / (7 x 8) = 0.5
    assert f == {"host": 1.0, "spf": 1 / 3, "cut": 0.5, "bisection": 0.5, "bytens": 4 / 15, "vl": 1 / 16,
                 "cut15": 0.5}
    # cut15 carries Figs. 7-8's absolute rate to Fig. 9's 30-switch network, whatever that network's own cut
    assert kim2007_readings().factors("kim2007_30")["cut15"] == 0.5


def test_kim2007_readings_factors_table(capsys):
    """factors --table: the README's table, each reading's factor on both fabrics and what 100 % is, with the
    figures behind the text computed (SPF's busiest link, the sparsest cuts)."""
    mod = kim2007_readings()
    bound, links, side, n = mod.sparsest("kim2007_15")
    assert (bound, links, n) == (0.5, 2, 15) and side in (7, 8)  # 2 x 14 / (7 x 8)
    assert mod.main(["factors", "--table"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "| reading | 100 % is | f on kim2007_15 | f on kim2007_30 |"
    assert [r.split(" | ")[0].strip("| ") for r in out[2:]] == ["host", "spf", "cut", "bytens", "vl"]
    assert "3.0 x a host's rate (42 of the 15 x 14 routes) | 0.3333 | 0.1381 |" in out[3]
    assert "a balanced 2-link cut, so this is also the bisection reading) | 0.5 | 0.2578 |" in out[4]


class TestBermudez2006Described:
    """experiments/bermudez2006_ops.py: PIRa and FERa counted as the paper describes them (Fig. 10, issue 32)."""

    @staticmethod
    def _mod():
        return experiment_script("bermudez2006_ops")

    @staticmethod
    def _line(n):
        from ibfabric.topologies.generators import mesh

        return mesh((n, 1), hosts_per_switch=1, width="1x", speed="SDR").with_lids(lmc=0)

    def test_by_hand_on_lines(self):
        import numpy as np

        from ibfabric.plugins import PluginSet

        ops, engines = self._mod(), PluginSet.load().routing_engines
        for n, want_fera, want_pira in [
            # 2 switches, 4 nodes, 3 links (6 port ends): graph 2 visits + 2 relaxations; a flood per node, each
            # reaching all 4 nodes and examining all 6 port ends; an entry per (switch, LID): 2 x 4.
            # PIRa: 4 nodes, 4 x 3 / 2 = 6 interactions (the engine's count too: 1 + 1 + 2 + 2)
            (2, {"visits": 2 + 16, "relaxations": 2 + 24, "entries": 8, "checks": 0}, 6),
            # 3 switches, 6 nodes, 5 links: graph 3 + 4; 6 floods x 6 nodes, 6 x 10 port ends; 3 x 6 entries.
            # PIRa: 6 x 5 / 2 = 15 interactions (the engine counts 13: only the switches explored before)
            (3, {"visits": 3 + 36, "relaxations": 4 + 60, "entries": 18, "checks": 0}, 15),
        ]:
            g = self._line(n)
            fera = engines["fera"](g, {}, None)
            tables, work = ops.fera_described(g, fera.info["level"])
            assert work == want_fera
            assert all(fera.port(x, lid) == p for (x, lid), p in tables.items()) and len(tables) == fera.info["work"]["entries"]
            pira = engines["pira"](g, {}, np.random.default_rng(1))
            assert ops.pira_described(pira) == dict(pira.info["work"], entries=want_pira)

    def test_fig1_the_papers_counts_and_the_engines_tables(self):
        import numpy as np

        from ibfabric.plugins import PluginSet
        from ibfabric.topologies.generators import bermudez2006_fig1

        ops, engines = self._mod(), PluginSet.load().routing_engines
        g = bermudez2006_fig1()
        fera = engines["fera"](g, {}, None)
        tables, work = ops.fera_described(g, fera.info["level"])
        # Fig. 6: 15 destinations, 120 entries (15 per switch), the engine's tables; 15 floods of 15 nodes
        # and of the 32 port ends of the 16 links (9 switch-to-switch, 7 hosts), after the graph (8, 18)
        assert work == {"visits": 8 + 15 * 15, "relaxations": 18 + 15 * 32, "entries": 120, "checks": 0}
        assert all(fera.port(x, lid) == p for (x, lid), p in tables.items())
        # §3.2: n(n-1)/2 = 105 interactions on the 15 nodes
        assert ops.pira_described(engines["pira"](g, {}, np.random.default_rng(1)))["entries"] == 105


def test_bermudez2006_dr_reduced_subnets():
    """experiments/bermudez2006_dr.py: the subnet the SM sees after a failure (the paper's Fig. 1 subnet)."""
    mod = experiment_script("bermudez2006_dr")  # it puts experiments/ on sys.path for bermudez2006.py
    from ibfabric.topologies.generators import bermudez2006_fig1

    g = bermudez2006_fig1().with_lids(lmc=1)
    names = lambda f: sorted(f.nodes[i].name.rpartition(".")[2] for i in range(len(f.nodes)))  # noqa: E731
    # sw2 fails: it and its host h7 (cut off) are gone, its 4 links with them; LIDs and the SM's node are kept
    r = mod.reduced(g, "fail-node", "sw2")
    assert names(r) == sorted(set(names(g)) - {"sw2", "h7"}) and len(r.links) == len(g.links) - 4
    assert r.nodes[r.sm_node].name == g.nodes[g.sm_node].name
    assert {r.nodes[i].name: r.lid_of(i) for i in range(len(r.nodes))} == \
        {g.nodes[i].name: g.lid_of(i) for i in range(len(g.nodes)) if g.nodes[i].name in set(names(r))}
    # the link sw1-sw2 fails: every node is still reached (through sw3 and sw6), one link fewer
    r = mod.reduced(g, "fail-link", "sw1.port[1]")
    assert names(r) == names(g) and len(r.links) == len(g.links) - 1
    with pytest.raises(ValueError, match="'action' must be 'fail-node' or 'fail-link'"):
        mod.reduced(g, "fail-port", "sw1")
    # on the whole subnet DR renames no host and its tables are FERa's
    c = mod.compare(g)
    assert c["dr"]["renamed"] == 0 and c["differing_entries"] == 0 and c["dr"]["mean_hops"] == c["fera"]["mean_hops"]


def test_kim2007_fig10_files_are_the_generators():
    """Fig. 10's experiment files: the groups drawn by seed 2007 (2, 4 and 2 of the 15 hosts, every host a
    sender), the cut reading's loads, and the four engines or policies (issue 32)."""
    import tomllib

    mod = kim2007_readings()
    groups = mod.multicast_groups(15)
    assert groups == "g1: 3 12 senders=*; g2: 1 6 9 10 senders=*; g3: 2 5 senders=*"
    for name, key, values in (("kim2007_paper_fig10_cut", "engine", list(mod.ENGINES)),
                              ("kim2007_paper_fig10f_cut", "policy", list(mod.POLICIES))):
        exp = tomllib.loads((ROOT / "experiments" / f"{name}.toml").read_text())
        assert exp["experiment"]["topology"] == "kim2007_15" and exp["experiment"]["config"] == "kim2007-traffic"
        assert exp["parameters"]["**.multicastGroups"] == groups
        assert exp["parameters"]["**.routing"] == "spf"
        it = exp["iterations"]
        assert it[key] == values
        for load, offered, rt, be in zip(it["load"], it["offered"], it["rtload"], it["beload"]):
            assert offered == pytest.approx(0.5 * load) and rt == pytest.approx(0.7 * offered)
            assert be == pytest.approx(0.3 * offered)


def test_kim2007_multicast_cells():
    """mtable's figures: group latencies pooled by count; unicast real time = the class less the members' copies."""
    run = {"multicast_groups_g1_latency_count": "1", "multicast_groups_g1_latency_mean": "100",
           "multicast_groups_g2_latency_count": "3", "multicast_groups_g2_latency_mean": "300",
           "multicast_groups_g1_member_latency_count": "2", "multicast_groups_g1_member_latency_mean": "90",
           "multicast_groups_g2_member_latency_count": "2", "multicast_groups_g2_member_latency_mean": "110",
           "multicast_groups_g1_packets": "4", "multicast_groups_g1_complete": "3",
           "multicast_groups_g2_packets": "6", "multicast_groups_g2_complete": "6",
           "real_time_latency_count": "10", "real_time_latency_mean": "70",
           "sl4_latency_count": "5", "sl4_latency_mean": "40", "sl5_latency_count": "1", "sl5_latency_mean": "100"}
    c = kim2007_readings().multicast_cells(run)
    assert c["multicast"] == (100 + 900) / 4 and c["member"] == 100
    assert c["unicast"] == (700 - 400) / 6  # 10 real-time deliveries, 4 of them members' copies
    assert c["unicast SLs"] == 50 and c["complete"] == 0.9


def test_kim2007_reductions_per_repetition(monkeypatch, capsys):
    """Each repetition's schemes are reduced against SPF of the same repetition (the same seed)."""
    mod = kim2007_readings()
    runs = [{"load": "0.5", "repetition": rep, "scheme": scheme, "status": "ok", "real_time_latency_mean": str(x)}
            for rep, scheme, x in (("0", "spf", 200), ("0", "mp+lfu+drop", 100), ("1", "spf", 400),
                                   ("1", "mp+lfu+drop", 100))]
    monkeypatch.setattr(mod, "rows", lambda directory, committed=False: runs)
    mod.reductions("unused")
    out = capsys.readouterr().out
    assert "| 0.5 | mp+lfu+drop | - | (none missed) | +50 % | - | - |" in out
    assert "| 0.5 | mp+lfu+drop (rep 1) | - | (none missed) | +75 % | - | - |" in out


def test_kim2007_versus_pairs_by_seed(monkeypatch, capsys):
    """versus: scheme B against scheme A on each seed, both means, and on how many seeds B is lower."""
    mod = kim2007_readings()
    runs = [{"load": "0.5", "repetition": rep, "scheme": scheme, "status": "ok", "real_time_latency_mean": str(rt),
             "control_latency_mean": "", "best_effort_latency_mean": str(be)}  # in ns, as the summaries have them
            for rep, scheme, rt, be in (("0", "a", 100e3, 10e3), ("0", "b", 90e3, 12e3), ("1", "a", 200e3, 10e3),
                                        ("1", "b", 220e3, 9e3), ("2", "a", 50e3, 10e3))]  # rep 2 has no b: not paired
    monkeypatch.setattr(mod, "rows", lambda directory, committed=False: runs)
    mod.versus("unused", "a", "b")
    out = capsys.readouterr().out.splitlines()
    assert out[-1] == ("| 0.5 | 2 | 150.0 / 155.0 | - | 10.0 / 10.5 | -10 +10 % (lower on 1 of 2) | - "
                       "| +20 -10 % (lower on 1 of 2) |")


def test_kim2007_seedwise_pairs_by_seed(monkeypatch, capsys):
    """seedwise: every scheme's reductions against SPF of the same seed (fabric) side by side and their mean, SPF
    read from another directory; a figure neither run has is "-", a reduction that rounds to 0 has no sign."""
    mod = kim2007_readings()
    runs = {"a": [{"load": "0.6", "repetition": rep, "scheme": "spf+drop", "status": "ok", "realtime_dmp": dmp,
                   "real_time_latency_mean": rt} for rep, dmp, rt in (("0", "0.016", "99.7"), ("1", "0.0", "300"))],
            "b": [{"load": "0.6", "repetition": rep, "scheme": "spf", "status": "ok", "realtime_dmp": dmp,
                   "real_time_latency_mean": rt} for rep, dmp, rt in (("0", "0.04", "100"), ("1", "0.01", "200"))]}
    monkeypatch.setattr(mod, "rows", lambda directory, committed=False: runs[directory])
    mod.seedwise(["a", "b"])
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "| load | scheme | seeds | DMP | DMT | real time | control | best effort |"
    assert out[2] == ("| 0.6 | spf+drop | 1 / 2 | 60 / 100 % (mean 80) | - / - | 0 / -50 % (mean -25) | - / - "
                      "| - / - |")
    for runs_of in runs.values():  # fabric by fabric (in their order), where the runs have fabrics
        for r, fabric in zip(runs_of, ("7", "3")):
            r["fabric"], r["repetition"] = fabric, "0"
    mod.seedwise(["a", "b"])
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "| load | scheme | fabrics | DMP | DMT | real time | control | best effort |"
    assert out[2] == ("| 0.6 | spf+drop | 3 / 7 | 100 / 60 % (mean 80) | - / - | -50 / 0 % (mean -25) | - / - "
                      "| - / - |")
    runs = {d: [r for r in runs_of if r["fabric"] == "7"] for d, runs_of in runs.items()}  # one fabric: no mean
    mod.seedwise(["a", "b"])
    assert capsys.readouterr().out.splitlines()[2] == "| 0.6 | spf+drop | 7 | 60 % | - | 0 % | - | - |"


def test_kim2007_latency_by_seed(monkeypatch, capsys):
    """latency: one class's mean per scheme seed by seed (us) and each scheme's reduction against SPF of the same
    seed, per experiment and load; a run without the figure is "-"; an unknown class is a one-line error."""
    mod = kim2007_readings()
    runs = {"results/x_fig7": [{"load": "0.5", "repetition": rep, "scheme": scheme, "status": "ok",
                                "control_latency_mean": v}
                               for scheme, rep, v in (("spf", "0", "20000"), ("spf", "1", "10000"),
                                                      ("mp+lfu+drop", "0", "10000"), ("mp+lfu+drop", "1", "12500"),
                                                      ("mp+credit+drop", "0", "9000"), ("mp+credit+drop", "1", ""))]}
    monkeypatch.setattr(mod, "rows", lambda directory, committed=False: runs[directory])
    mod.latency("control", ["results/x_fig7"])
    out = capsys.readouterr().out.splitlines()
    assert out[0] == ("| experiment | load | seeds | control: spf (us) | control: mp+lfu+drop (us) "
                      "| control: mp+credit+drop (us) | reduction: mp+lfu+drop | reduction: mp+credit+drop |")
    assert out[2] == "| x_fig7 | 0.5 | 2 | 20.0 / 10.0 | 10.0 / 12.5 | 9.0 / - | 50 / -25 % | 55 / - % |"
    with pytest.raises(SystemExit, match="latency: no class 'ctrl'"):
        mod.latency("ctrl", ["results/x_fig7"])


def test_kim2007_networks(capsys):
    """networks: the properties measured on the fabric files, the paper's column beside the first; table sizes as
    counts when a fabric has two at most."""
    mod = kim2007_readings()
    assert mod._sizes({1: 30, 2: 60, 3: 60}) == "30 (1 switch), 60 (2)"
    assert mod._sizes({1: 30, 2: 30, 3: 60}) == "30 (2 switches), 60 (1)"
    assert mod._sizes({1: 60, 2: 60}) == "60 (2)"
    assert mod._sizes({1: 15, 2: 30, 3: 960}) == "15-960"
    assert mod.main(["networks"]) == 0
    cells = [[c.strip() for c in r.strip().strip("|").split("|")] for r in capsys.readouterr().out.splitlines()]
    rows = {c[0]: c[1:] for c in cells}
    assert rows[""] == ["kim2007_15", "paper (15-node)", "kim2007_15_29hosts (old)", "kim2007_30", "kim2007_30_58hosts (old)"]
    assert rows["hosts"] == ["15", '"15-node"', "29", "30", "58"]
    assert rows["path bits that name paths (GF(2) rank of Algorithm 2's cycles)"] == ["9", "9", "6", "17", "13"]
    assert rows["bridges"] == ["0", "-", "1 (sw4-sw9)", "0", "4"]
    assert rows["SPF channel dependencies"] == ["acyclic", '"SPF may deadlock"', "cyclic", "acyclic", "cyclic"]
    assert rows["uniform SPF saturation bound (fraction of a host link)"][0] == "0.333"


def test_kim2007_beside(monkeypatch, capsys):
    """beside: Fig. 10's latencies of one sweep's runs beside another's (us, "a / b"), one row per load and policy
    that both ran ok, in the policies' order; a figure a run lacks is "-"."""
    mod = kim2007_readings()

    def run(load, policy, multicast, best_effort, status="ok"):
        return {"load": load, "policy": policy, "status": status, "best_effort_latency_mean": best_effort,
                "multicast_groups_g1_latency_mean": multicast, "multicast_groups_g1_latency_count": "10"}

    runs = {"a": [run("0.5", "linear", "20000", "1000"), run("0.5", "separate", "30000", ""),
                  run("0.6", "separate", "40000", "2000"), run("0.6", "linear", "1", "1", status="deadlock")],
            "b": [run("0.5", "separate", "15000", "1500"), run("0.5", "linear", "25000", "500"),
                  run("0.6", "linear", "9", "9"), run("0.4", "separate", "9", "9")]}
    monkeypatch.setattr(mod, "rows", lambda directory, committed=False: runs[directory])
    mod.beside("a", "b")
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "| load | policy | multicast | member | member from injection | unicast real time | best effort |"
    assert out[2:] == ["| 0.5 | separate | 30.0 / 15.0 | - / - | - / - | - / - | - / 1.5 |",
                       "| 0.5 | linear | 20.0 / 25.0 | - / - | - / - | - / - | 1.0 / 0.5 |"]
    assert mod.main(["beside", "a"]) == 2


def test_kim2007_committed_rows(monkeypatch, tmp_path, capsys):
    """gather keeps a sweep's runs (only what the tables read, each experiment replacing its own, the others
    kept) and the tables print the same from them as from the sweep; the kept keys cover every table's."""
    mod = kim2007_readings()
    for _, key in mod.COLUMNS + mod.MCOLUMNS + mod.REDUCED:
        assert key is None or mod.KEPT.fullmatch(key) or key in (
            "multicast", "member", "member network", "real time", "unicast", "unicast SLs", "complete"), key
    for key in ("multicast_groups_g2_member_network_latency_mean", "sl4_latency_count", "deadlock_ms", "cycle"):
        assert mod.KEPT.fullmatch(key)
    for key in ("sl0_latency_mean", "latency_p99", "realtime_missed_x"):
        assert not mod.KEPT.fullmatch(key)
    sweep = tmp_path / "results" / "kim2007_x"
    run = {"run_id": "r1", "experiment": "kim2007_x", "reading": "cut", "load": "0.6", "scheme": "spf",
           "repetition": "0", "status": "deadlock", "wall_s": "2.5", "accepted_load": "0.25", "deadlock_ms": "1.50",
           "cycle": "sw1.port[2] VL0 -> sw2.port[1] VL0"}
    (sweep / "runs" / "r1").mkdir(parents=True)
    (sweep / "runs" / "r1" / "summary.json").write_text(json.dumps({"versions": {"ibfabric": "9.9"}}))
    committed = tmp_path / "kim2007.json"
    committed.write_text(mod._dump({"paper": "Kim et al. 2007", "experiments": {
        "kim2007_x": {"runs": 7, "wall_s": 1.0, "versions": [], "rows": []},
        "kim2007_other": {"runs": 1, "wall_s": 3.0, "versions": [], "rows": [{"run_id": "o"}]}}}))
    monkeypatch.setattr(mod, "COMMITTED", committed)
    live = mod.rows
    monkeypatch.setattr(mod, "rows", lambda directory, committed=False: (
        live(directory, True) if committed else [run]))
    mod.gather([str(sweep)])
    kept = json.loads(committed.read_text())["experiments"]
    assert kept["kim2007_other"]["rows"] == [{"run_id": "o"}]
    assert kept["kim2007_x"] == {"runs": 1, "wall_s": 2.5, "versions": [{"ibfabric": "9.9"}], "rows": [run]}
    # the file's first line, each experiment's first line, a line a run and its last line, the file's last line
    assert committed.read_text().count("\n") == 1 + 2 * (1 + 1 + 1) + 1
    for table in (mod.table, mod.deadlocks):
        table([str(sweep)])
        from_sweep = capsys.readouterr().out
        table(["elsewhere/kim2007_x"], committed=True)
        assert capsys.readouterr().out == from_sweep
    assert "| kim2007_x | 0.6 | spf | 1.50 | sw1.port[2] VL0 -> sw2.port[1] VL0 |" in from_sweep
    with pytest.raises(SystemExit, match="no rows of kim2007_y"):
        mod.table(["results/kim2007_y"], committed=True)


def test_kim2007_fabrics_have_the_papers_properties():
    """The fabrics of kim2007_paper_fabrics_cut.toml: seed 2007 has kim2007_15's links, the others are other
    fabrics with the paper's properties, and the cut reading offers each the same fraction of a host's link."""
    import tomllib

    from ibfabric.topologies.generators import kim2007_properties

    mod = kim2007_readings()
    exp = tomllib.loads((ROOT / "experiments" / "kim2007_paper_fabrics_cut.toml").read_text())
    it = exp["iterations"]
    assert tuple(it["fabric"]) == mod.FABRICS and it["offered"] == [0.3] * len(mod.FABRICS)
    assert exp["experiment"]["topology"] == {"generator": "kim2007", "switches": 15, "cycles": 9, "seed": "${fabric}"}
    def links(f):  # node names without the network's
        name = lambda i: f.nodes[int(i)].name.rpartition(".")[2]  # noqa: E731
        return sorted(sorted((name(ln.a), name(ln.b))) for ln in f.links)

    assert links(mod.fabric("kim2007_15_s2007")) == links(mod.fabric("kim2007_15"))
    drawn = [links(mod.fabric(f"kim2007_15_s{seed}")) for seed in mod.FABRICS]
    assert all(a != b for i, a in enumerate(drawn) for b in drawn[i + 1:])
    for seed in mod.FABRICS:
        p = kim2007_properties(mod.fabric(f"kim2007_15_s{seed}"))
        assert not p["bridges"] and p["independent"] == 9 and set(p["on_cycles"].values()) <= {1, 2}


def test_kim2007_files_are_what_the_script_writes(monkeypatch, tmp_path):
    """The generated Kim experiment files in experiments/ are byte for byte what kim2007_readings.py writes now."""
    mod = kim2007_readings()
    monkeypatch.setattr(mod, "HERE", tmp_path)
    for make in (mod.seeds, mod.selectors, mod.adaptive, mod.control, mod.deadlock, mod.multicast, mod.fabrics,
                 mod.hllseeds, mod.hllload):
        make("cut")
    written = sorted(tmp_path.glob("*.toml"))
    assert len(written) == 23
    for path in written:
        assert path.read_text() == (ROOT / "experiments" / path.name).read_text(), path.name
    lookup = (tmp_path / "kim2007_paper_lookup_cut.toml").read_text()
    assert '"**.selectAt" = "lookup"' in lookup and "selectAt" not in (tmp_path / "kim2007_paper_adaptive_cut.toml").read_text()


def test_kim2007_vlarb_counts_when_a_weight_decides():
    """experiments/kim2007_vlarb.py's arbiter chooses as iba-vlarb does, and counts a VL held back only when its
    spent weight passes a ready VL over (the one case a larger weight would have sent it)."""
    from types import SimpleNamespace

    from ibfabric.plugins.arbiters import ArbiterConfig, IBAVLArbiter

    mod = experiment_script("kim2007_vlarb")
    cfg = ArbiterConfig(num_vls=10, low=((4, 2), (9, 1)), port="net.sw1.port[2]")  # VL 4: two 64 B units
    counting, plain = mod.CountingArbiter(cfg), IBAVLArbiter(cfg)
    mod.COUNTS.clear()
    mod.MULTICAST_VLS.clear()
    mod.MULTICAST_VLS.add(9)
    pkt = SimpleNamespace(size=64)
    both = [None] * 4 + [pkt] + [None] * 4 + [pkt]
    only4 = [None] * 4 + [pkt] + [None] * 5
    for ready in (both, both, both, both, only4):
        assert counting.select(ready) == plain.select(ready)
    # choices: VL 4, VL 4 (its weight spent), VL 9 with VL 4 ready (held back), VL 4 with VL 9 ready (VL 9's
    # one unit spent: held back), VL 4 alone (not contended)
    assert mod.COUNTS["switch", "unicast real time", "held back by its spent weight"] == 1
    assert mod.COUNTS["switch", "multicast", "held back by its spent weight"] == 1
    assert mod.COUNTS["switch", "unicast real time", "sent"] == 4 and mod.COUNTS["switch", "multicast", "sent"] == 1
    assert mod.COUNTS["switch", "unicast real time", "contended"] == 3


def test_kim2007_sharing_counts_best_effort_passing_real_time():
    """experiments/kim2007_sharing.py's arbiter chooses as iba-vlarb does, counts at switch ports only, and
    counts best effort sent while a real-time VL was ready; `sharing` weights the ports by real time's packets."""
    from collections import Counter
    from types import SimpleNamespace

    from ibfabric.plugins.arbiters import ArbiterConfig, IBAVLArbiter

    mod = experiment_script("kim2007_sharing")
    mod.PORTS.clear()
    cfg = ArbiterConfig(num_vls=6, low=((0, 1), (5, 1)), port="net.sw1.port[2]")  # best effort VL 0, real time 5
    counting, plain = mod.CountingArbiter(cfg), IBAVLArbiter(cfg)
    hca = mod.CountingArbiter(ArbiterConfig(num_vls=6, low=((0, 1), (5, 1)), port="net.h1.port[1]"))
    pkt = SimpleNamespace(size=64)
    both, be, rt = [pkt] + [None] * 4 + [pkt], [pkt] + [None] * 5, [None] * 5 + [pkt]
    for ready in (both, both, both, be, rt):
        assert counting.select(ready) == plain.select(ready)
        hca.select(ready)
    # VL 0 (real time ready), VL 5, VL 0 (real time ready), VL 0 alone, VL 5 alone; the HCA's port not counted
    assert mod.PORTS == {"net.sw1.port[2]": Counter({"best effort": 3, "real time": 2,
                                                      "best effort while real time ready": 2})}
    s = mod.sharing({"a": Counter({"real time": 3, "best effort": 1}), "b": Counter({"real time": 1, "best effort": 3}),
                     "c": Counter({"best effort": 5, "best effort while real time ready": 2})})
    # real time meets 1/4 of best effort on a (3 packets) and 3/4 on b (1 packet): (3 x 0.25 + 0.75) / 4
    assert s == {"real time": 4, "best effort": 9, "passed": 0.5, "share": pytest.approx(0.375)}


def test_kim2007_sharing_control_waits():
    """--control: a control packet's wait at a port, from ready to its first bit on the link, and the part of it the
    link spent sending each class's packets; at the source from its creation; packets created before the window not
    counted; the port's own launch still called."""
    from collections import Counter
    from types import SimpleNamespace

    mod = experiment_script("kim2007_sharing")
    launched = []

    def port(name):
        tx = SimpleNamespace(name_=name, window=5.0)
        tx.launch = lambda p, vl, now, end: launched.append((name, p.cls, now))
        return tx

    waits = Counter()
    sw, hca = port("net.sw1.port[2]"), port("net.h1.port[1]")
    mod.watch_control(sw, waits)
    mod.watch_control(hca, waits)
    pkt = lambda cls, **kw: SimpleNamespace(cls=cls, created=kw.pop("created", 10.0), ready_at=kw.pop("ready_at", 0.0))
    hca.launch(pkt(0), 0, 0.0, 20.0)
    hca.launch(pkt(3, created=10.0), 15, 20.0, 21.0)  # waited 10 behind best effort
    hca.launch(pkt(3, created=1.0), 15, 21.0, 22.0)  # created before the window: not counted
    sw.launch(pkt(0), 0, 0.0, 100.0)
    sw.launch(pkt(2), 5, 100.0, 300.0)
    sw.launch(pkt(3, ready_at=50.0), 15, 300.0, 301.0)  # ready at 50: 50 behind best effort, 200 behind real time
    sw.launch(pkt(3, ready_at=330.0), 15, 340.0, 341.0)  # the link idle: 10 of other waiting
    assert [c for _, c, _ in launched] == [0, 3, 3, 0, 2, 3, 3]
    assert waits == Counter({"packets": 1, "source": 10.0, "source behind best effort": 10.0, "switch": 260.0,
                             "switch behind best effort": 50.0, "switch behind real time": 200.0})
    w = mod.control_waits(waits)
    assert w["switch other"] == 10.0 and w["switch"] == 260.0
    assert mod.control_waits(Counter()) == {"packets": 0}


def test_kim2007_sharing_control_differences():
    """--control's table read back, and the first scheme minus the second run by run (latency from the table's us)."""
    mod = experiment_script("kim2007_sharing")
    table = ["| load | scheme | repetition | control packets | latency (us) | source wait (ns) | switches' wait (ns) "
             "| of it behind best effort | behind real time | behind control | other |", "|---" * 11 + "|",
             "| 0.5 | lfu | 0 | 2,250 | 10.31 | 474 | 8,452 | 1,192 | 4,680 | 9 | 2,571 |",
             "| 0.5 | credit | 0 | 2,250 | 10.00 | 469 | 8,143 | 1,074 | 4,450 | 10 | 2,609 |",
             "| 0.6 | lfu | 1 | 2,250 | 12.00 | 1 | 2 | 3 | 4 | 5 | 6 |"]  # no credit run to pair with
    rows = mod.read_control_table(table)
    assert [(r["load"], r["scheme"], r["repetition"]) for r in rows] == [("0.5", "lfu", 0), ("0.5", "credit", 0),
                                                                        ("0.6", "lfu", 1)]
    assert rows[0]["latency"] == pytest.approx(10310.0) and rows[0]["behind best effort"] == 1192.0
    assert mod.control_differences(rows) == [
        "| load | repetition | lfu minus credit (ns): latency | source wait | switches' wait | behind best effort "
        "| behind real time | behind control | other |", "|---" * 9 + "|", "| 0.5 | 0 | +310 | +5 | +309 | +118 | +230 | -1 | -38 |"]
    assert mod.control_differences(rows[:1]) == []


MARTINEZ_TABLE1 = sorted((ROOT / "experiments").glob("martinez2003_table1*.toml"))


@pytest.mark.parametrize("path", MARTINEZ_TABLE1, ids=lambda p: p.stem)
def test_martinez2003_table1_runs_on_the_papers_switch(path):
    """Every Table 1 search runs on section 5.1's switch: 1 KB input buffers split 512 B / 512 B and 1 KB output buffers
    (but the comparison without them)."""
    from ibfabric.experiment import Experiment

    exp = Experiment.from_file(path)
    point = next(p for p in exp.points(exclude=("load",)) if p["switches"] == min(exp.values("switches")))
    sim = exp.run({**point, "load": 0.1}, 0).simulation()
    sw = next(n for n in sim.ib_nodes if n.is_switch)
    out_buffer = 0 if path.stem == "martinez2003_table1_nobuf" else 1024
    assert (sw.input_queues, sw.vl_buffer, sw.escape_buffer, sw.out_buffer) == ("split", 1024, 512, out_buffer)


def test_martinez2003_table1_report(tmp_path):
    """experiments/martinez2003_table1.py: factors fabric by fabric from the searches' saturation.csv, beside the paper's."""
    res = tmp_path / "results" / "martinez2003_table1"
    res.mkdir(parents=True)
    head = "experiment,size,switches,topo,adaptive,repetition,status,saturation_load_low,saturation_load_high,throughput,probes\n"
    rows = ["martinez2003_table1,32B,8,1,0,0,ok,0.3,0.305,0.30,9", "martinez2003_table1,32B,8,1,1,0,ok,0.45,0.455,0.45,9",
            "martinez2003_table1,32B,8,2,0,0,ok,0.3,0.305,0.25,9", "martinez2003_table1,32B,8,2,1,0,ok,0.5,0.505,0.50,9"]
    (res / "saturation.csv").write_text(head + "\n".join(rows) + "\n")
    # bit-reversal searches on the same fabric: a column of their own, not uniform traffic's
    br = tmp_path / "results" / "martinez2003_table1_br"
    br.mkdir()
    (br / "saturation.csv").write_text(
        "experiment,numbering,switches,topts,size,topo,adaptive,repetition,status,saturation_load_low,"
        "saturation_load_high,throughput,probes\n"
        "martinez2003_table1_br,interleaved,8,x,32B,1,0,0,ok,0.4,0.405,0.40,9\n"
        "martinez2003_table1_br,interleaved,8,x,32B,1,1,0,ok,0.44,0.445,0.44,9\n")
    # a variant (32 bytes of payload) on fabric 1 only: matched with uniform's fabric 1
    gap = tmp_path / "results" / "martinez2003_table1_payload"
    gap.mkdir()
    (gap / "saturation.csv").write_text(
        "experiment,column,size,wire,switches,topo,adaptive,repetition,status,saturation_load_low,"
        "saturation_load_high,throughput,probes\n"
        "martinez2003_table1_payload,\"Unif., payload\",32B,58B,8,1,0,0,ok,0.4,0.405,0.40,9\n"
        "martinez2003_table1_payload,\"Unif., payload\",32B,58B,8,1,1,0,ok,0.5,0.505,0.50,9\n")
    out = tmp_path / "t1.json"
    proc = subprocess.run([sys.executable, str(ROOT / "experiments" / "martinez2003_table1.py"),
                           "--results", str(tmp_path / "results"), "--out", str(out)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    # factors 1.5 and 2.0: min, max, avg 1.75; the paper's 8-switch 32-byte row 1.30 / 1.69 / 1.50; substitute 1.60
    assert "| Unif. | 32B | 8 | 2 | 1.50 | 2.00 | **1.75** | 1.30 | 1.69 | **1.50** | 1.60 | 0.275 / 0.475 |" in proc.stdout
    # Fig. 3's unit: 0.45 of a 0.25 B/ns link, 4 hosts a switch
    assert "| 8 | 0.300 / 0.450 | 0.300 / 0.450 | 0.0750 / 0.1125 |" in proc.stdout
    assert "| interleaved | 8 | 1 | 1.10 | 1.10 | **1.10** | 1.21 | 1.90 | **1.58** | 0.400 / 0.440 |" in proc.stdout
    # factor 1.25 against fabric 1's 1.50: -16.7 %
    assert ("| payload | 32B | 8 | 1 | 0.300 / 0.400 | 0.450 / 0.500 | 1.50 / **1.25** | 1.50 | "
            "-16.7 / -16.7 / -16.7 % |") in proc.stdout
    assert len(json.loads(out.read_text())["searches"]) == 8
    # gathered again with only the bit-reversal searches at hand: the uniform ones stay, br's are replaced
    import shutil

    shutil.rmtree(res)
    proc = subprocess.run([sys.executable, str(ROOT / "experiments" / "martinez2003_table1.py"),
                           "--results", str(tmp_path / "results"), "--out", str(out)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    kept = json.loads(out.read_text())
    assert [s["experiment"] for s in kept["searches"]].count("martinez2003_table1") == 4
    assert len(kept["searches"]) == 8
    assert set(kept["runs"]) == {"martinez2003_table1", "martinez2003_table1_br", "martinez2003_table1_payload"}
    # --only: the named tables and nothing else; an unknown name is a one-line error
    proc = subprocess.run([sys.executable, str(ROOT / "experiments" / "martinez2003_table1.py"), "--out", str(out),
                           "--report", "--only", "numberings,runs"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert [ln for ln in proc.stdout.splitlines() if ln.startswith("### ")] == [
        "### Bit-reversal under three host numberings (32-byte packets)", "### Searches and their simulation time"]
    # the runs table ends with the totals: no run directories here, so no runs
    assert proc.stdout.splitlines()[-1] == "| all: 8 searches, 0 not 'ok' | 0 | 0.0 min |"
    proc = subprocess.run([sys.executable, str(ROOT / "experiments" / "martinez2003_table1.py"), "--out", str(out),
                           "--report", "--only", "uniform,nonesuch"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and "unknown table nonesuch" in proc.stderr.splitlines()[-1]


def test_martinez2003_fig3_saturation_points(tmp_path):
    """experiments/martinez2003_fig3.py: the highest unsaturated accepted load per adaptive share, in the paper's unit."""
    runs = tmp_path / "fig3" / "runs"
    points = [(0.0, 0.1, 0.10, False, 700.0), (0.0, 0.2, 0.19, False, 900.0), (0.0, 0.3, 0.21, True, 5000.0),
              (1.0, 0.1, 0.10, False, 710.0), (1.0, 0.3, 0.30, False, 1200.0), (1.0, 0.4, 0.33, True, 9000.0)]
    for k, (a, load, acc, sat, lat) in enumerate(points):
        d = runs / f"r{k}"
        d.mkdir(parents=True)
        (d / "run.json").write_text(json.dumps({"status": "ok", "vars": {"switches": 8, "adaptive": a, "load": load}}))
        (d / "summary.json").write_text(json.dumps({"accepted_load": acc, "saturated": sat, "latency_ns": {"mean": lat}}))
    proc = subprocess.run([sys.executable, str(ROOT / "experiments" / "martinez2003_fig3.py"), str(tmp_path / "fig3")],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    # 0 %: 0.19 (0.21 saturated); 100 %: 0.30; ratio 1.58; x 1 B/ns per switch (4 hosts x 0.25), 0.25 per host
    assert "| 8 | 0.190 | - | - | - | 0.300 | 1.58 | 0.190 / 0.300 | 0.0475 / 0.0750 | 700-710 ns |" in proc.stdout


def test_martinez2003_table1_roots_table():
    """experiments/martinez2003_table1.py: the factor under every up*/down* root, fabric by fabric."""
    mod = experiment_script("martinez2003_table1")
    # two fabrics of 8 switches; adaptive 0.5 under every root; det 0.25 under sw0, 0.4 under sw3 (fabric 1)
    # or sw5 (fabric 2), 0.2 under the others
    fs = {}
    for k in range(8):
        for t, good in ((1, 3), (2, 5)):
            d = 0.25 if k == 0 else 0.4 if k == good else 0.2
            fs.setdefault((f"Unif., root sw{k}", None, "32B", 8, "200us"), []).append((t, d, 0.5))
    rows = mod.roots_table(fs)
    # worst 0.2, sw0 0.25, best 0.4; factor 2.0 under sw0, 1.25 under the best root, 2.5 the highest
    assert rows[2] == ("| Unif. | 32B | 8 | 2 | 8 | 0.200 / 0.250 / 0.400 | 2.00 | **1.25** | 1.25 | 2.50 | "
                       "1.30 / 1.69 / **1.50** | 1.25 / 1.25 |")
    # a fabric without every root is left out
    fs[("Unif., root sw7", None, "32B", 8, "200us")].pop()
    assert mod.roots_table(fs)[2].startswith("| Unif. | 32B | 8 | 1 | 8 |")
    # bit-reversal's roots: a row of their own, beside the paper's bit-reversal column
    for k in range(8):
        fs[(f"BR, root sw{k}", None, "32B", 8, "200us")] = [(1, 0.5, 0.6)]
    assert mod.roots_table(fs)[3].startswith("| BR | 32B | 8 | 1 | 8 | 0.500 / 0.500 / 0.500 | 1.20 | **1.20** |")


def test_martinez2003_table1_knee_table():
    """The factor read at the saturation point (the highest loads sustained) beside the largest accepted load."""
    mod = experiment_script("martinez2003_table1")
    searches = [{"column": "BR", "numbering": "consecutive", "size": "32B", "switches": 8, "window": "200us",
                 "topo": t, "adaptive": a, "throughput": thr, "saturation_load_low": lo}
                for t in (1, 2) for a, thr, lo in ((0, 0.45, 0.25 * t), (1, 0.54, 0.40 * t))]
    fs, fk = mod.factors(searches), mod.factors(searches, "saturation_load_low")
    assert fk[("BR", "consecutive", "32B", 8, "200us")] == [(1, 0.25, 0.40), (2, 0.5, 0.8)]
    assert mod.knee_table(fs, fk)[2] == ("| BR | 32B | 8 | 2 | 1.20 / 1.20 / **1.20** | 1.60 / 1.60 / **1.60** | "
                                         "1.21 / 1.90 / **1.58** |")


def test_martinez2003_table1_whole_table():
    """Table 1 whole: each cell at the stable window where all its fabrics ran there, else at 200 us; the
    distance to the paper's average and whether ours lies in the paper's range."""
    mod = experiment_script("martinez2003_table1")

    def search(sw, window, topo, adaptive, low):
        return {"column": "BR", "numbering": "consecutive", "size": "32B", "switches": sw, "window": window,
                "topo": topo, "adaptive": adaptive, "throughput": 0.54 if adaptive else 0.45,
                "saturation_load_low": low}

    searches = [search(8, w, t, a, low) for w, ada in (("200us", 0.35), ("400us", 0.4)) for t in (1, 2)
                for a, low in ((0, 0.25), (1, ada))]
    searches += [search(16, "200us", 1, 0, 0.2), search(16, "200us", 1, 1, 0.3)]  # one fabric: too few
    fs, fk = mod.factors(searches), mod.factors(searches, "saturation_load_low")
    rows = mod.whole_table(fs, fk, fabrics=2)
    # 8 switches: both windows have 2 fabrics, the stable one is taken (0.4 / 0.25 = 1.60, not 200 us's 1.40)
    assert rows[2] == ("| BR | 32B | 8 | 400us | 2 | **1.20** | 1.60 / 1.60 / **1.60** | 1.21 / 1.90 / **1.58** "
                       "| +0.02 | yes |")
    assert len(rows) == 3 + 4 and rows[-1] == "| BR | 1 | 0.02 |"


def test_martinez2003_probes(tmp_path, capsys):
    """experiments/martinez2003_probes.py lists a search's probes with the search's own saturation test."""
    mod = experiment_script("martinez2003_probes")
    for i, (adaptive, load, offered, accepted, backlog) in enumerate(
            ((0, 0.3, 0.30, 0.299, False), (0, 0.9, 0.9, 0.45, True), (0, 0.4, 0.40, 0.37, False),
             (1, 0.3, 0.30, 0.30, False))):
        run = tmp_path / "runs" / f"r{i}"
        run.mkdir(parents=True)
        (run / "run.json").write_text(json.dumps({"vars": {"column": "BR", "topo": 3, "adaptive": adaptive, "load": load}}))
        (run / "summary.json").write_text(json.dumps({"offered_load": offered, "accepted_load": accepted,
                                                      "saturated": backlog, "link_utilisation": {"max": 0.5}}))
    assert mod.main([str(tmp_path), "column=BR", "topo=3", "adaptive=0"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "| load | offered | accepted | saturated | max link |"
    # 0.37 of 0.40 offered is below 0.95 of it: saturated although the backlog did not grow
    assert out[2:] == ["| 0.3000 | 0.3000 | 0.2990 | no | 0.500 |", "| 0.4000 | 0.4000 | 0.3700 | yes | 0.500 |",
                       "| 0.9000 | 0.9000 | 0.4500 | yes | 0.500 |"]
    assert mod.main([str(tmp_path), "column=HS"]) == 1


def test_martinez2003_table1_root_payload():
    """The root and the payload reading together: the experiment's roots are the roots best for deterministic
    traffic in the committed every-root searches, and the table sets the four factors side by side."""
    from ibfabric.experiment import Experiment

    mod = experiment_script("martinez2003_table1")
    fs = mod.factors(json.loads(mod.RESULTS.read_text())["searches"])
    exp = Experiment.from_file(ROOT / "experiments" / "martinez2003_table1_root_payload64.toml")
    roots = {p["topo"]: p["root"] for p in exp.points(exclude=("load",))}
    best = mod.best_roots(fs, "Unif.", "256B", 64)
    assert roots == {t: best[t] for t in roots}
    # two switches, one fabric: sw1 gives deterministic traffic more (0.2 against 0.1)
    key = lambda col: (col, None, "256B", 2, mod.DEFAULT_WINDOW)  # noqa: E731
    f = {key("Unif., root sw0"): [(1, 0.1, 0.4)], key("Unif., root sw1"): [(1, 0.2, 0.5)],
         key("Unif., payload"): [(1, 0.1, 0.35)], key(mod.ROOT_PAYLOAD): [(1, 0.2, 0.45)]}
    rows = mod.root_payload_table(f, f, sw=2)
    assert rows[2] == "| 1 | sw1 | 4.00 / 2.50 / 3.50 / 2.25 | 4.00 / 2.50 / 3.50 / 2.25 |"
    assert rows[3] == "| average (1) | | **4.00** / **2.50** / **3.50** / **2.25** | **4.00** / **2.50** / **3.50** / **2.25** |"
    assert mod.root_payload_table({}, {}, sw=2) == []


BEST_ROOT_FILES = [("martinez2003_table1_best_root64", "Unif.", 10), ("martinez2003_table1_best_root64_unif", "Unif.", 10),
                   ("martinez2003_table1_best_root64_6link", "2/6", 3)]


@pytest.mark.parametrize(("name", "base", "fabrics"), BEST_ROOT_FILES, ids=[n for n, _, _ in BEST_ROOT_FILES])
def test_martinez2003_table1_best_root_experiments(name, base, fabrics):
    """The columns under each fabric's best root: the experiments' roots are the roots best for deterministic
    256-byte traffic of their base column (uniform 2/4; 2/6 on the 6-link fabrics) in the committed every-root
    searches."""
    from ibfabric.experiment import Experiment

    mod = experiment_script("martinez2003_table1")
    fs = mod.factors(json.loads(mod.RESULTS.read_text())["searches"])
    exp = Experiment.from_file(ROOT / "experiments" / f"{name}.toml")
    roots = {p["topo"]: p["root"] for p in exp.points(exclude=("load",))}
    assert roots == mod.best_roots(fs, base, "256B", 64)
    assert set(roots) == set(range(1, fabrics + 1))


@pytest.mark.parametrize(("base", "fabrics"), [("Unif.", 10), ("2/6", 3)])
def test_martinez2003_table1_best_root_repeats_the_every_root_searches(base, fabrics):
    """A column with 256 bytes under the best root, searched again by another experiment file, gives the every-root
    searches' throughputs exactly (the same runs: the same seed and parameters)."""
    mod = experiment_script("martinez2003_table1")
    searches = json.loads(mod.RESULTS.read_text())["searches"]
    best = mod.best_roots(mod.factors(searches), base, "256B", 64)
    for measure in ("throughput", "saturation_load_low"):
        fs = mod.factors(searches, measure)
        again = {t: (d, a) for t, d, a in fs[(base + mod.BEST_ROOT, None, "256B", 64, mod.DEFAULT_WINDOW)]}
        roots = mod.every_root(fs, base, "256B", 64)
        assert len(again) == fabrics
        assert again == {t: roots[t][best[t]] for t in again}


def test_martinez2003_table1_best_root_table():
    """A column under the best root beside the same fabrics under sw0 (a fabric without a sw0 search left out), and
    how many fabrics lie in the paper's range each way."""
    mod = experiment_script("martinez2003_table1")
    key = lambda col: (col, None, "256B", 2, mod.DEFAULT_WINDOW)  # noqa: E731
    sw0 = [(1, 0.1, 0.4), (2, 0.1, 0.3)]
    f = {key("3/4"): sw0, key("3/4" + mod.BEST_ROOT): [(1, 0.2, 0.5), (2, 0.2, 0.4), (3, 0.1, 0.1)]}
    mod.PAPER[("3/4", 2)] = ((1.0, 1.5, 1.2), (2.0, 2.5, 2.2))
    try:
        rows = mod.best_root_table(f, f, sw=2)
    finally:
        del mod.PAPER[("3/4", 2)]
    # fabrics 1-2 (3 has no sw0 search): sw0 4.0 and 3.0, best root 2.5 and 2.0
    assert rows[2:] == ["| 3/4 | 256B | 2 | 2 | 3.50 / **2.25** | 2.00 / 2.50 | 3.50 / 2.25 | 2.00 / 2.50 / **2.20** | 0 / 2 |"]
    assert mod.best_root_table({}, {}, sw=2) == []


def test_martinez2003_table1_sizes_table():
    """The factor with 256 bytes over that with 32 bytes: the paper's, ours under sw0, under the best root, and root by
    root where every switch was the root with both sizes."""
    mod = experiment_script("martinez2003_table1")
    w = mod.DEFAULT_WINDOW
    fk = {("Unif.", "consecutive", "32B", 8, w): [(t, 0.1, 0.2) for t in range(1, 11)],   # factor 2.0
          ("Unif.", "consecutive", "256B", 8, w): [(t, 0.1, 0.15) for t in range(1, 11)],  # factor 1.5
          ("Unif." + mod.BEST_ROOT, None, "32B", 8, w): [(1, 0.1, 0.2), (2, 0.1, 0.2)],
          ("Unif." + mod.BEST_ROOT, None, "256B", 8, w): [(1, 0.1, 0.2), (2, 0.1, 0.1)]}   # 2.0 and 1.0 over 2.0
    for k, ratio in enumerate((1.0, 1.0, 1.1, 1.1, 1.3, 1.3, 1.4, 1.4)):  # fabric 1 under every root
        fk[("Unif., root sw%d" % k, None, "32B", 8, w)] = [(1, 0.1, 0.2)]
        fk[("Unif., root sw%d" % k, None, "256B", 8, w)] = [(1, 0.1, 0.2 * ratio)]
    rows = mod.sizes_table(fk)
    # paper 1.37 / 1.50; ours 0.75; best root (2.0 + 1.0) / 2 over 2.0; every root 1.0 .. 1.4, median 1.2
    assert rows[2:] == ["| Unif. | 8 | **0.91** | 10 | **0.75** | 2 | **0.75** | 1 | 1.00 / 1.20 / 1.40 | 1.00 |"]
    assert mod.sizes_table({}) == []


def test_martinez2003_table1_window_table():
    """experiments/martinez2003_table1.py: a longer window against 200 us on the same fabrics; Table 1 at 400 us."""
    mod = experiment_script("martinez2003_table1")
    base = [(t, 0.2, 0.4) for t in range(1, 11)]
    longer = [(t, 0.2, 0.44) for t in range(1, 11)]
    fs = {("Unif.", "consecutive", "32B", 8, "200us"): base, ("Unif.", "consecutive", "32B", 8, "400us"): longer}
    fs[("HS 5%", None, "256B", 16, "200us")] = base
    fs[("HS 5%", None, "256B", 16, "400us")] = [(t, 0.25, 0.4) for t in range(1, 11)]
    rows = mod.window_table(fs)
    assert rows[2:] == ["| Unif. | 32B | 8 | 400us | 10 | 0.2000 / 0.2000 | 0.4000 / 0.4400 | 2.00 / 2.20 | "
                        "+10.0 / +10.0 / +10.0 % |",
                        "| HS 5% | 256B | 16 | 400us | 10 | 0.2000 / 0.2500 | 0.4000 / 0.4000 | 2.00 / 1.60 | "
                        "-20.0 / -20.0 / -20.0 % |"]
    rows = mod.table1(fs, ["Unif."], with_substitute=False, window="400us", fabrics=10)
    assert rows[2] == "| Unif. | 32B | 8 | 10 | 2.20 | 2.20 | **2.20** | 1.30 | 1.69 | **1.50** | 0.200 / 0.440 |"
    assert len(mod.table1(fs, ["Unif."], with_substitute=False, window="400us", fabrics=11)) == 2


# ------------------------------------------------------------------ README's generated tables

FAKE_SCRIPT = '''import sys
print("intro")
print("| a | b |"); print("|---|---|"); print("| x | 1 |"); print("| y | 2 |"); print("| x | 3 |")
print()
print("| c |"); print("|---|"); print("| " + " ".join(sys.argv[1:]) + " |")
'''


def fake_readme(tmp_path, body: str):
    (tmp_path / "fake.py").write_text(FAKE_SCRIPT)
    readme = tmp_path / "README.md"
    readme.write_text(body)
    return readme


def readme_tables_main(readme, *args):
    mod = experiment_script("readme_tables")
    # the fake script lies beside the README: run the commands from there
    mod.HERE = readme.parent / "experiments"
    return mod.main(["--readme", str(readme), *args])


def test_readme_tables_match_their_commands(capsys):
    """Every table of experiments/README.md under a '<!-- table from: ... -->' marker is what its command prints
    from the committed results (Martínez Tables 1-2, Alfaro, congestion control, omnetpp_ib): none hand-edited or
    stale."""
    mod = experiment_script("readme_tables")
    lines = (ROOT / "experiments" / "README.md").read_text().split("\n")
    assert len(mod.markers(lines)) >= 33
    assert mod.main([]) == 0, capsys.readouterr().out
    assert capsys.readouterr().out == ""


def test_readme_tables_rewrite_only_what_differs(tmp_path, capsys):
    body = ("# t\n\n<!-- table from: fake.py p q; rows x -->\n| a | b |\n|---|---|\n| x | 9 |\n\ntext\n\n"
            "<!-- table from: fake.py p q; table 2 -->\n| c |\n|---|\n| p q |\nend\n")
    readme = fake_readme(tmp_path, body)
    assert readme_tables_main(readme) == 1
    out = capsys.readouterr().out
    assert "README.md:4: the table of `fake.py p q` differs" in out
    assert "-| x | 9 |" in out and "+| x | 1 |" in out and "+| x | 3 |" in out
    assert readme.read_text() == body  # a check writes nothing
    assert readme_tables_main(readme, "--write") == 0
    assert readme.read_text() == body.replace("| x | 9 |\n", "| x | 1 |\n| x | 3 |\n")
    assert readme_tables_main(readme) == 0


def test_readme_tables_indented_table_in_a_list_item(tmp_path, capsys):
    """A marker indented inside a list item: its table is found, compared and rewritten with the same indentation."""
    body = "- item\n\n  <!-- table from: fake.py p; table 2 -->\n  | c |\n  |---|\n  | old |\n\nend\n"
    readme = fake_readme(tmp_path, body)
    assert readme_tables_main(readme) == 1
    assert "-  | old |" in capsys.readouterr().out
    assert readme_tables_main(readme, "--write") == 0
    assert readme.read_text() == body.replace("  | old |", "  | p |")
    assert readme_tables_main(readme) == 0


def test_readme_tables_pick():
    mod = experiment_script("readme_tables")
    out = ["x", "| a | b |", "|---|---|", "| x | 1 |", "| y | 2 |", "", "| c |", "|---|", "| z |"]
    assert mod.pick(out, mod.Marker(0, ("s",))) == out[1:5]
    assert mod.pick(out, mod.Marker(0, ("s",), table=2)) == out[6:9]
    assert mod.pick(out, mod.Marker(0, ("s",), rows=("y",))) == ["| a | b |", "|---|---|", "| y | 2 |"]
    with pytest.raises(mod.MarkerError, match=r"^README.md:1:1: s prints 2 table\(s\), not 3$"):
        mod.pick(out, mod.Marker(0, ("s",), table=3))
    with pytest.raises(mod.MarkerError, match=r"^README.md:1:1: no row w in table 1 of s$"):
        mod.pick(out, mod.Marker(0, ("s",), rows=("y", "w")))


def test_readme_tables_finds_every_maximal_run_of_table_lines():
    """tables(): the runs of lines starting "|" -- disjoint, maximal, covering exactly those lines."""
    from hypothesis import given
    from hypothesis import strategies as st

    mod = experiment_script("readme_tables")

    @given(st.lists(st.sampled_from(["| a |", "|---|", "text", "", " | indented", "<!-- x -->"]), max_size=30))
    def check(lines):
        found = mod.tables(lines)
        covered = [i for a, b in found for i in range(a, b)]
        assert covered == [i for i, ln in enumerate(lines) if ln.startswith("|")]
        for a, b in found:
            assert a < b and (a == 0 or not lines[a - 1].startswith("|")) and (b == len(lines) or not lines[b].startswith("|"))

    check()


def test_readme_tables_prose_quoting_a_marker_is_not_one(tmp_path, capsys):
    readme = fake_readme(tmp_path, "see `<!-- table from: fake.py` or `<!-- table from: fake.py -->`\n\n| a |\n")
    assert readme_tables_main(readme) == 0
    assert capsys.readouterr().err == "0 of 0 generated tables match their commands\n"


@pytest.mark.parametrize(("line", "message"), [
    ("<!-- table from: fake.py; table 0 -->", "README.md:1:27: 'table 0': expected 'table N' (N from 1) or 'rows A, B'"),
    ("<!-- table from: fake.py; column 2 -->", "README.md:1:27: 'column 2': expected"),
    ("  <!-- table from: fake.py", "README.md:1:3: a table marker is"),
    ("<!-- table from:  ; table 2 -->", "README.md:1:18: the marker names no command"),
    ("  <!-- table from: fake.py 'open -->", "README.md:1:20: No closing quotation"),
    ("<!-- table from: fake.py -->\n\n| a |", "README.md:2:1: the table of the marker on line 1 must start on the next line"),
    ("  <!-- table from: fake.py -->\n| a |", "README.md:2:3: the table of the marker on line 1 must start on the next "
     "line, indented as the marker"),
    ("<!-- table from: missing.py --report -->\n| a |", "README.md:1:1: missing.py --report exited 2: "),
    ("<!-- table from: fake.py; table 3 -->\n| a |", "README.md:1:1: fake.py prints 2 table(s), not 3"),
])
def test_readme_tables_bad_marker(tmp_path, capsys, line, message):
    readme = fake_readme(tmp_path, line + "\n")
    with pytest.raises(SystemExit) as exc:
        readme_tables_main(readme)
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith(f"readme_tables: {message}") and err.count("\n") == 1
