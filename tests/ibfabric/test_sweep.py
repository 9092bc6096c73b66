"""Sweeps: every run once, resumable after SIGKILL, failures recorded, Dask gives the same table,
and the saturation search."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ibfabric.collect import collect
from ibfabric.experiment import Experiment
from ibfabric.results import read_result_set
from ibfabric.saturation import Search, is_saturated, saturation_search
from ibfabric.sweep import Sweep, execute

from .test_measure import BOTTLENECK, TREE32

EXPERIMENT = """
[experiment]
name = "tree"
topology = "tree32.ned"
time = "{time}"
warmup = "20us"
repeat = 2

[parameters]
"**.traffic" = "uniform"
"**.load" = "${{load}}"
"**.mtu" = "256B"
"**.routing" = "minhop"
"**.outputBufferSize" = "${{obuf}}"
"**.crossbarSpeedup" = "2"
"**.inputQueues" = "fifo"

[iterations]
load = {loads}
obuf = ["0B", "4KiB"]

[saturation]
variable = "load"
low = 0.05
high = 0.5
tolerance = 0.01
max_runs = 8
"""


def experiment(tmp_path: Path, *, time: str = "60us", loads: str = "[0.05, 0.1]") -> Experiment:
    (tmp_path / "tree32.ned").write_text(TREE32)
    path = tmp_path / "tree.toml"
    path.write_text(EXPERIMENT.format(time=time, loads=loads))
    return Experiment.from_file(path)


def group(pgid: int) -> list[int]:
    """The live processes of process group *pgid* (from /proc)."""
    out = []
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                fields = (d / "stat").read_bytes().rpartition(b")")[2].split()
            except OSError:
                continue
            if int(fields[2]) == pgid and fields[0] not in (b"Z", b"X"):
                out.append(int(d.name))
    return out


def run_dirs(out: Path) -> list[Path]:
    return sorted(p for p in (out / "runs").iterdir())


class TestSweep:
    def test_every_run_once_then_nothing(self, tmp_path):
        exp = experiment(tmp_path)
        sweep = Sweep(exp, tmp_path / "out")
        report = sweep.run(jobs=2)
        assert (report.total, report.done, report.failed, report.skipped) == (8, 8, 0, 0)
        dirs = run_dirs(tmp_path / "out")
        assert [d.name for d in dirs] == sorted(s.run_id for s in exp.runs())
        for d in dirs:
            files = read_result_set(d)
            assert set(files) == {"run.json", "summary.json", "scalars.csv", "results.sca"}
            rec = json.loads(files["run.json"])
            assert rec["status"] == "ok" and rec["run_id"] == d.name
        again = sweep.run(jobs=2)
        assert (again.done, again.skipped) == (0, 8)

    def test_a_failing_run_is_recorded_and_the_sweep_goes_on(self, tmp_path):
        # each value builds next to the first run's (Experiment.check passes); mtu 4096B next to
        # 4KiB buffers does not: those runs fail when they run
        experiment(tmp_path)
        text = (tmp_path / "tree.toml").read_text().replace('"**.mtu" = "256B"', '"**.mtu" = "${mtu}"\n'
                                                              '"**.vlBufferSize" = "${buf}"')
        text = text.replace('obuf = ["0B", "4KiB"]', 'obuf = ["0B"]\nmtu = ["256B", "4096B"]\nbuf = ["8KiB", "4KiB"]')
        exp = Experiment.from_text(text.replace("[0.05, 0.1]", "[0.1]"), str(tmp_path / "tree.toml"), base_dir=tmp_path)
        report = Sweep(exp, tmp_path / "out").run(jobs=1)
        assert (report.done, report.failed) == (8, 2)
        table = collect(tmp_path / "out")
        assert len(table.failures) == 2
        assert all("vlBufferSize" in f.error for f in table.failures)
        assert {(f.vars["mtu"], f.vars["buf"]) for f in table.failures} == {("4096B", "4KiB")}
        # retried on request only
        assert Sweep(exp, tmp_path / "out").run().done == 0
        assert Sweep(exp, tmp_path / "out").run(retry_failed=True).done == 2

    def test_same_seed_same_results_in_another_process(self, tmp_path):
        exp = experiment(tmp_path)
        spec = exp.runs()[0]
        here = json.loads(execute(spec).files["summary.json"])
        Sweep(exp, tmp_path / "out").run([spec], jobs=1)
        there = json.loads((tmp_path / "out" / "runs" / spec.run_id / "summary.json").read_text())
        for key in ("wall_s", "events_per_s", "packet_hops_per_s", "routing_time_s"):
            here.pop(key, None), there.pop(key, None)
        assert here == there

    def test_killed_sweep_resumes_with_nothing_lost_or_run_twice(self, tmp_path):
        experiment(tmp_path, time="150us", loads="[0.05, 0.1, 0.15]")
        out = tmp_path / "out"
        cmd = [sys.executable, "-m", "ibfabric", "sweep", str(tmp_path / "tree.toml"), "--out", str(out),
               "--jobs", "2", "--no-progress"]
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:  # kill the whole process group once some runs are done
            if (out / "runs").exists() and len([p for p in (out / "runs").iterdir() if not p.name.startswith(".")]) >= 3:
                break
            time.sleep(0.05)
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        before = {p.name for p in (out / "runs").iterdir() if not p.name.startswith(".")}
        assert 3 <= len(before) < 12
        for name in before:  # what is there is complete
            assert read_result_set(out / "runs" / name) is not None
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        assert f"{12 - len(before)} run now" in done.stderr and f"{len(before)} already done" in done.stderr
        after = [p.name for p in (out / "runs").iterdir()]
        assert sorted(after) == sorted(s.run_id for s in Experiment.from_file(tmp_path / "tree.toml").runs())

    def test_sigkill_of_the_sweep_alone_leaves_no_process_behind(self, tmp_path):
        # kill -9 of the sweep only (not its process group): its run processes, the fork server and
        # the resource tracker must go too, not wait forever on a pipe (issue 35)
        if not os.path.isdir("/proc/self"):
            pytest.skip("needs /proc to find the sweep's processes")
        experiment(tmp_path, time="5ms", loads="[0.05, 0.1, 0.15]")
        cmd = [sys.executable, "-m", "ibfabric", "sweep", str(tmp_path / "tree.toml"), "--out",
               str(tmp_path / "out"), "--jobs", "2", "--no-progress"]
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        try:
            deadline = time.monotonic() + 120
            while len(group(proc.pid)) < 5 and time.monotonic() < deadline:  # sweep, tracker, server, 2 runs
                time.sleep(0.05)
            assert len(group(proc.pid)) >= 5, "the sweep did not start its runs"
            proc.kill()
            proc.wait()
            deadline = time.monotonic() + 15
            while group(proc.pid) and time.monotonic() < deadline:
                time.sleep(0.1)
            assert group(proc.pid) == []
        finally:
            for pid in group(proc.pid):
                os.kill(pid, signal.SIGKILL)

    def test_dask_local_gives_the_same_table_as_local_processes(self, tmp_path):
        pytest.importorskip("dask.distributed")
        exp = experiment(tmp_path)
        Sweep(exp, tmp_path / "local").run(jobs=2)
        Sweep(exp, tmp_path / "dask").run(jobs=2, dask="local")
        a = collect(tmp_path / "local").to_csv()
        b = collect(tmp_path / "dask").to_csv()
        assert a == b and a.count("\n") > 8 * 50


class TestVersions:
    """Results carry the versions that made them; a sweep reruns a run other versions made (issue 35)."""

    def test_every_result_file_records_them(self, tmp_path):
        from ibfabric.versions import versions

        exp = experiment(tmp_path, time="30us")
        spec = exp.runs()[0]
        Sweep(exp, tmp_path / "out").run([spec])
        files = read_result_set(tmp_path / "out" / "runs" / spec.run_id)
        mine = versions()
        assert json.loads(files["run.json"])["versions"] == mine
        assert json.loads(files["summary.json"])["versions"] == mine
        sca = files["results.sca"].splitlines()
        plugins = " ".join(f"{n}=={v}" for n, v in mine["plugins"].items())
        assert f"attr ibfabric-version {mine['ibfabric']}" in sca
        assert (f"attr plugins {plugins}" if plugins else 'attr plugins ""') in sca
        assert "versions" not in json.dumps(spec.config())  # the run id hashes the configuration only

    def test_plugin_distributions_are_listed_by_name(self):
        from ibfabric import __version__
        from ibfabric.versions import versions

        class Plugins:  # a plugin set with ibfabric's own plugin and a third party's
            class pm:
                list_name_plugin = staticmethod(lambda: [("traffic", None), ("zdemo", None), ("demo", None), ("x", None)])

            def distribution(self, name):
                return {"traffic": "ibfabric==0.1.0", "zdemo": "z-plugins==2", "demo": "ibfabric-demo==1.2"}.get(name)

        assert versions(Plugins()) == {"ibfabric": __version__, "plugins": {"ibfabric-demo": "1.2", "z-plugins": "2"}}

    def test_a_run_made_with_other_versions_is_stale(self, tmp_path, capsys):
        from ibfabric.cli import main
        from ibfabric.results import write_result_set

        exp = experiment(tmp_path, time="30us")
        spec = exp.runs()[0]
        sweep = Sweep(exp, tmp_path / "out")
        sweep.run([spec])
        run_dir = tmp_path / "out" / "runs" / spec.run_id
        files = read_result_set(run_dir)
        record = json.loads(files["run.json"])
        record["versions"] = {"ibfabric": "0.0.1", "plugins": {"ibfabric-old": "1.0"}}
        write_result_set(run_dir, {**files, "run.json": json.dumps(record)})
        assert sweep.status(spec.run_id)[1].startswith("made with ibfabric 0.0.1 (now ")

        assert main(["sweep", str(tmp_path / "tree.toml"), "--out", str(tmp_path / "out"), "--dry-run"]) == 0
        line = capsys.readouterr().out.splitlines()[0]
        assert line.endswith("ok, stale: made with ibfabric 0.0.1 (now 0.1.0), made with plugin ibfabric-old 1.0"
                             " (now not installed); to run again"), line

        kept = sweep.run([spec], reuse_stale=True)
        assert (kept.done, kept.skipped, kept.kept_stale) == (0, 1, 1)
        assert sweep.record(spec.run_id)["versions"]["ibfabric"] == "0.0.1"
        again = sweep.run([spec])
        assert (again.done, again.stale) == (1, 1)
        assert sweep.status(spec.run_id) == ("ok", None)


def fake(offered, accepted, saturated=False):
    return {"offered_load": offered, "accepted_load": accepted, "saturated": saturated, "deadlock": None}


class TestSearch:
    def test_bisects_to_the_tolerance(self):
        s = Search({"r": "a"}, 0, 0.05, 0.5, 0.01, 12, 0.95)
        knee = 0.161
        loads = []
        while (load := s.next_load()) is not None:
            loads.append(load)
            s.add(load, fake(load, min(load, knee), load > knee), f"id{load}")
        assert loads[:3] == [0.5, 0.05, 0.275]
        res = s.result()
        assert res["status"] == "ok"
        assert res["saturation_load_low"] < knee < res["saturation_load_high"]
        assert res["saturation_load_high"] - res["saturation_load_low"] <= 0.01 + 1e-12
        assert res["throughput"] == knee

    def test_accepted_at_saturation_is_the_highest_unsaturated_probe(self):
        # a permutation: past its knee (0.2) the flows off the saturated link keep growing, so the largest
        # accepted load (at high) lies far past the saturation point
        s = Search({}, 0, 0.05, 0.5, 0.01, 12, 0.95)
        while (load := s.next_load()) is not None:
            s.add(load, fake(load, load if load <= 0.2 else 0.2 + 0.5 * (load - 0.2), load > 0.2), f"id{load}")
        res = s.result()
        assert res["throughput"] == pytest.approx(0.35)  # at high = 0.5
        assert res["accepted_at_saturation"] == res["saturation_load_low"] <= 0.2
        assert res["accepted_at_saturation"] > 0.19
        s = Search({}, 0, 0.05, 0.5, 0.01, 8, 0.95)  # saturated at low: no unsaturated probe
        s.add(s.next_load(), fake(0.5, 0.01, True), "x")
        s.add(s.next_load(), fake(0.05, 0.01, True), "y")
        assert s.result()["accepted_at_saturation"] is None

    def test_bounded(self):
        s = Search({}, 0, 0.05, 0.5, 0.0001, 4, 0.95)
        while (load := s.next_load()) is not None:
            s.add(load, fake(load, min(load, 0.2), load > 0.2), "x")
        assert s.result()["status"] == "max_runs reached" and s.result()["probes"] == 4

    def test_not_saturated_at_high_and_saturated_at_low(self):
        s = Search({}, 0, 0.05, 0.5, 0.01, 8, 0.95)
        s.add(s.next_load(), fake(0.5, 0.5), "x")
        assert s.next_load() is None and s.result()["status"] == "not saturated at high"
        s = Search({}, 0, 0.05, 0.5, 0.01, 8, 0.95)
        s.add(s.next_load(), fake(0.5, 0.01, True), "x")
        s.add(s.next_load(), fake(0.05, 0.01, True), "y")
        assert s.next_load() is None and s.result()["status"] == "saturated at low"

    def test_criterion(self):
        assert is_saturated(fake(0.5, 0.46), 0.95)  # accepted stopped following offered
        assert not is_saturated(fake(0.5, 0.48), 0.95)
        assert is_saturated({**fake(0.1, 0.1), "deadlock": {"time_ns": 1}}, 0.95)
        assert is_saturated(None, 0.95)

    def test_finds_the_analytic_bottleneck(self, tmp_path):
        exp = experiment(tmp_path, time="600us", loads="[0.1]")
        exp = Experiment.from_text((tmp_path / "tree.toml").read_text().replace("repeat = 2", "repeat = 1")
                                   .replace('obuf = ["0B", "4KiB"]', 'obuf = ["4KiB"]'),
                                   str(tmp_path / "tree.toml"), base_dir=tmp_path)
        (res,) = saturation_search(Sweep(exp, tmp_path / "out"), jobs=2)
        assert res["status"] in ("ok", "max_runs reached")
        assert res["throughput"] == pytest.approx(BOTTLENECK, rel=0.03)
        assert res["saturation_load_low"] <= BOTTLENECK * 1.03


class TestCommands:
    def test_dry_run_then_sweep_then_results(self, tmp_path, capsys):
        from ibfabric.cli import main

        experiment(tmp_path)
        exp, out = str(tmp_path / "tree.toml"), str(tmp_path / "out")
        assert main(["sweep", exp, "--out", out, "--dry-run"]) == 0
        lines = capsys.readouterr().out.splitlines()
        assert len(lines) == 8 and all(line.endswith(": to run") for line in lines)
        assert "$load=0.05, $obuf=0B" in lines[0]
        assert main(["sweep", exp, "--out", out, "--jobs", "2", "--no-progress"]) == 0
        err = capsys.readouterr().err
        assert "8 runs: 8 run now (0 failed, 0 deadlocked), 0 already done" in err
        assert err.count("] ok ") == 8
        assert main(["results", out, "--aggregate", "-o", str(tmp_path / "agg.csv")]) == 0
        assert (tmp_path / "agg.csv").read_text().startswith("experiment,load,obuf,statistic,n,mean,std")

    def test_bad_experiment_is_one_located_line(self, tmp_path, capsys):
        from ibfabric.cli import main

        bad = tmp_path / "bad.toml"
        bad.write_text('[experiment]\nname = "x"\ntopology = "irregular16"\ntime = "1ms"\n\n'
                       '[parameters]\n"**.load" = "${lod}"\n\n[iterations]\nload = [0.1]\n')
        assert main(["sweep", str(bad), "--out", str(tmp_path / "o")]) == 2
        err = capsys.readouterr().err.strip()
        assert err.startswith(f"ibfabric: error: {bad}:7:") and "lod" in err and "\n" not in err
        assert not (tmp_path / "o").exists()

    def test_no_saturation_table(self, tmp_path, capsys):
        from ibfabric.cli import main

        experiment(tmp_path)
        text = (tmp_path / "tree.toml").read_text()
        (tmp_path / "tree.toml").write_text(text[: text.index("[saturation]")])
        assert main(["saturation", str(tmp_path / "tree.toml"), "--out", str(tmp_path / "o")]) == 2
        assert "no [saturation] table" in capsys.readouterr().err


class TestNoTraffic:
    """A load without a traffic pattern sends nothing: the run warns, a saturation search stops (issue 35)."""

    TEXT = ('[experiment]\nname = "quiet"\ntopology = "bermudez2006_fig1"\ntime = "20us"\n\n[parameters]\n'
            '"**.load" = "${load}"\n\n[iterations]\nload = [0.1, 0.2]\n\n'
            '[saturation]\nvariable = "load"\nlow = 0.05\nhigh = 0.9\n')

    def test_the_run_warns(self):
        import ibfabric
        from ibfabric.checks import IbfabricWarning

        with pytest.warns(IbfabricWarning, match=r"^no traffic: 7 of 7 hosts have a load \(0.2\) but no traffic"):
            sim = ibfabric.load("bermudez2006_fig1", overrides={"**.load": "0.2"})
        summary = sim.run("5us")
        assert summary["packets_generated"] == 0
        assert any(w.startswith("no traffic:") and "set '**.traffic'" in w for w in summary["warnings"])

    def test_no_warning_without_a_load_or_with_traffic(self, recwarn):
        import ibfabric

        ibfabric.load("bermudez2006_fig1")
        ibfabric.load("bermudez2006_fig1", overrides={"**.load": "0.2", "**.traffic": "uniform"})
        assert not [w for w in recwarn if "no traffic" in str(w.message)]

    def test_a_saturation_search_stops_naming_the_cause(self, tmp_path, capsys):
        from ibfabric.cli import main

        (tmp_path / "quiet.toml").write_text(self.TEXT)
        assert main(["saturation", str(tmp_path / "quiet.toml"), "--out", str(tmp_path / "out")]) == 2
        err = capsys.readouterr().err.strip().splitlines()[-1]
        assert err.startswith(f"ibfabric: error: {tmp_path / 'quiet.toml'}: saturation search stopped: the probe at"
                              " load = 0.9 ($load=0.9) generated no packet: no traffic: 7 of 7 hosts have a load"), err

    def test_the_cli_default_load_goes_with_its_default_traffic(self, capsys):
        from ibfabric.cli import main

        assert main(["run", "--traffic", "none", "--time", "2us", "--warmup", "0us", "--no-progress"]) == 0
        assert "no traffic" not in capsys.readouterr().err
        assert main(["run", "--traffic", "none", "--load", "0.3", "--time", "2us", "--warmup", "0us",
                     "--no-progress"]) == 0
        assert "ibfabric: warning: no traffic: 64 of 64 hosts have a load (0.3)" in capsys.readouterr().err
