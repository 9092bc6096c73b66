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
