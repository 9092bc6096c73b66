"""The named scenarios of ``python -m bench.kernel``: each runs in a child and reports, or reports why not."""

from __future__ import annotations

import json

from bench import kernel

FIELDS = {
    "packet_hops_per_s", "us_per_hop", "events_per_hop", "peak_rss_mb", "build_s", "startup_s",
    "salabim_hold_events_per_s", "events_per_s", "wall_s", "packet_hops_vs_salabim_hold", "accepted_load",
}


def test_the_scenarios_of_the_issue_are_named():
    assert set(kernel.SCENARIOS) == {
        "irregular16-load0.1", "switch8-omnetpp-ib-load0.5", "switch8-omnetpp-ib-load0.9",
        "fattree512-load0.3", "fattree4096-load0.3", "fattree32768-load0.3",
    }
    assert [n for n, sc in kernel.SCENARIOS.items() if sc.get("big")] == ["fattree32768-load0.3"]


def test_a_scenario_runs_in_a_child_and_prints_one_json_line(capsys):
    assert kernel.main(["--scenario", "switch8-omnetpp-ib-load0.5", "--time", "5us"]) == 0
    (line,) = capsys.readouterr().out.strip().splitlines()
    rec = json.loads(line)
    assert "error" not in rec, rec
    assert FIELDS <= set(rec)
    assert rec["scenario"] == "switch8-omnetpp-ib-load0.5" and rec["hosts"] == 8 and rec["packet_hops"] > 0
    assert 0 < rec["build_s"] < rec["startup_s"] <= rec["process_s"]
    assert rec["allocator"] == "pymalloc"


def test_huge_pages_run_the_child_on_glibcs_allocator(capsys):
    from ibfabric._hugepages import unavailable

    assert kernel.main(["--scenario", "switch8-omnetpp-ib-load0.5", "--time", "5us", "--huge-pages"]) == 0
    rec = json.loads(capsys.readouterr().out.strip())
    assert "error" not in rec, rec
    assert rec["allocator"] == "malloc" and (unavailable() is not None or rec["anon_huge_pages_mb"] is not None)


def test_a_failing_child_is_a_json_line_with_an_error(capsys):
    assert kernel.main(["--scenario", "irregular16-load0.1", "--timeout", "0.01"]) == 0
    rec = json.loads(capsys.readouterr().out)
    assert rec["scenario"] == "irregular16-load0.1" and rec["error"].startswith("timed out")
    rec = kernel.run_child("irregular16-load0.1", "not-a-time", None, 600)
    assert rec["error"] and rec["returncode"] != 0


def test_memlat_prints_one_json_line_per_run(capsys):
    from bench import memlat

    assert memlat.main(["--sizes-mb", "0.25", "1", "--steps", "2000"]) == 0
    rec = json.loads(capsys.readouterr().out)
    assert rec["benchmark"] == "memlat" and set(rec["ns_per_load"]) == {"0.25", "1"}
    assert min(rec["extra_ns"].values()) == 0 and rec["salabim_hold_events_per_s"] > 0


def test_memlat_chases_one_cycle_through_every_slot():
    from bench import memlat

    nxt = memlat.cycle(1000, seed=3)
    p, seen = 0, set()
    for _ in range(1000):
        seen.add(p)
        p = int(nxt[p])
    assert p == 0 and len(seen) == 1000  # back at the start after visiting every slot once


CALLGRIND = """\
# callgrind format
version: 1
creator: callgrind-3.19.0
positions: line
events: Ir Dr Dw I1mr D1mr D1mw ILmr DLmr DLmw
fl=(1) ceval.c
fn=(1) _PyEval_EvalFrameDefault
10 100 40 20 0 6 2 0 3 1
+2 50 10 5 0 2 0 0 1 0
cfl=(2) heapq.c
cfn=(2) siftup
calls=4 20
12 9999 9999 9999 0 9999 9999 0 9999 9999
fl=(2)
fn=(2)
20 30 12 6 0 4 1 0 2 2
fn=(1)
* 20 0 0 0 0 0 0 0 0
"""


def test_coldlines_counts_each_functions_own_misses_per_hop(tmp_path):
    from bench import coldlines

    path = tmp_path / "callgrind.out"
    path.write_text(CALLGRIND)
    events, costs = coldlines.self_costs(str(path))
    assert events[:5] == ["Ir", "Dr", "Dw", "I1mr", "D1mr"]
    # the call's inclusive line (9999) is the callee's cost already counted as its own: not added
    assert costs["_PyEval_EvalFrameDefault"] == [170, 50, 25, 0, 8, 2, 0, 4, 1]
    assert costs["siftup"] == [30, 12, 6, 0, 4, 1, 0, 2, 2]
    rec = coldlines.summarize(str(path), hops=2)
    assert rec["per_hop"] == {"Ir": 100.0, "D1mr": 6.0, "D1mw": 1.5, "DLmr": 3.0, "DLmw": 1.5, "cold_lines": 4.5}
    assert [f["function"] for f in rec["functions"]] == ["_PyEval_EvalFrameDefault", "siftup"]
    assert rec["functions"][1] == {"function": "siftup", "cold_lines_per_hop": 2.0, "instructions_per_hop": 15.0}


def test_coldlines_window_is_the_scenarios_own_run_between_two_times():
    from bench import coldlines
    from bench.kernel import SCENARIOS, topology_of
    from ibfabric.configs import overrides
    from ibfabric.simulation import Simulation

    name = "switch8-omnetpp-ib-load0.5"
    start, end = coldlines.WINDOWS[name]
    hops = coldlines.run_window(name, start, end)
    sc = SCENARIOS[name]
    sim = Simulation(topology_of(sc, ""), overrides=sc["overrides"], optional_overrides=dict(overrides(sc["config"])),
                     seed=1, warmup=sc["warmup"])
    a = sim.run(start)["packet_hops"]
    assert hops == sim.run(end)["packet_hops"] - a > 20_000


def test_coldlines_without_valgrind_is_a_json_line_with_an_error(capsys, monkeypatch):
    from bench import coldlines

    monkeypatch.setattr(coldlines.shutil, "which", lambda name: None)
    assert coldlines.main(["--scenario", "fattree512-load0.3"]) == 0
    rec = json.loads(capsys.readouterr().out)
    assert rec["scenario"] == "fattree512-load0.3" and rec["error"].startswith("valgrind is not installed")
