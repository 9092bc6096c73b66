"""Experiment files with a workload: [experiment] workload, placement, ideal (issue 34)."""

from __future__ import annotations

import pytest

from ibfabric.experiment import Experiment, ExperimentError
from ibfabric.sweep import execute

TEXT = '''
[experiment]
name = "wl"
topology = "bermudez2006_fig1"
time = "5ms"
workload = "${wl}"
placement = "random"
ideal = true

[parameters]
"**.routing" = "updn"
"**.traffic" = '""'

[iterations]
wl = ["allreduce-ring:size=8KiB,ranks=4", "halo:size=1KiB,ranks=6"]
'''


def test_the_runs_carry_the_workload_and_their_ids_differ():
    runs = Experiment.from_text(TEXT).runs()
    assert [dict(r.workload)["spec"] for r in runs] == ["allreduce-ring:size=8KiB,ranks=4", "halo:size=1KiB,ranks=6"]
    assert runs[0].config()["workload"] == {"ideal": True, "placement": "random",
                                            "spec": "allreduce-ring:size=8KiB,ranks=4"}
    assert runs[0].run_id != runs[1].run_id


def test_a_run_without_a_workload_keeps_its_id():
    plain = TEXT.replace('workload = "${wl}"\n', "").replace('placement = "random"\n', "").replace("ideal = true\n", "")
    run = Experiment.from_text(plain).runs()[0]
    assert run.workload == () and "workload" not in run.config()


def test_a_sweep_run_stops_when_the_workload_completes():
    run = Experiment.from_text(TEXT).runs()[0]
    out = execute(run)
    assert out.status == "ok", out.record["error"]
    import json

    w = json.loads(out.files["summary.json"])["workload"]
    assert w["complete"] and w["slowdown"] >= 1.0
    assert json.loads(out.files["summary.json"])["sim_time_ns"] == w["end_ns"]


def test_a_goal_file_relative_to_the_experiment(tmp_path):
    (tmp_path / "x.goal").write_text("num_ranks 2\nrank 0 {\nl1: send 10b to 1\n}\nrank 1 {\nl1: recv 10b from 0\n}\n")
    exp = tmp_path / "e.toml"
    exp.write_text(TEXT.replace('"${wl}"', '"x.goal"').replace("[iterations]\n", "").split("wl = [")[0])
    run = Experiment.from_file(exp).runs()[0]
    assert dict(run.workload)["spec"] == str(tmp_path / "x.goal")
    assert "sha256" in run.config()["workload"]
    assert execute(run).status == "ok"


def test_ideal_must_be_a_boolean():
    with pytest.raises(ExperimentError, match="'ideal' must be true or false"):
        Experiment.from_text(TEXT.replace("ideal = true", 'ideal = "yes"'))
