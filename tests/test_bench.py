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


def test_a_failing_child_is_a_json_line_with_an_error(capsys):
    assert kernel.main(["--scenario", "irregular16-load0.1", "--timeout", "0.01"]) == 0
    rec = json.loads(capsys.readouterr().out)
    assert rec["scenario"] == "irregular16-load0.1" and rec["error"].startswith("timed out")
    rec = kernel.run_child("irregular16-load0.1", "not-a-time", None, 600)
    assert rec["error"] and rec["returncode"] != 0
