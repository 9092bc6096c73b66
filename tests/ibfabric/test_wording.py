"""Counted nouns in what the command line prints ("1 run", not "1 runs"), and the counts of
``sweep --dry-run`` (issue 35, item 9)."""

from __future__ import annotations

import doctest

import pytest

from ibfabric import wording
from ibfabric.cli import main
from ibfabric.components.sm.report import timeline_lines
from ibfabric.wording import counted

ONE_SWITCH = """
network one
{
    submodules:
        sw: Switch { numPorts = 2; }
        a: HCA;
        b: HCA;
        sm: SubnetManager;
    connections:
        a.port[1] <--> Link <--> sw.port[1];
        b.port[1] <--> Link <--> sw.port[2];
}
"""

EXPERIMENT = """
[experiment]
name = "counts"
topology = "one.ned"
time = "12us"
warmup = "2us"

[parameters]
"**.traffic" = "uniform"
"**.load" = "${load}"

[iterations]
load = LOADS
"""


def cli(capsys, *argv):
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_counted():
    assert doctest.testmod(wording).failed == 0
    assert [counted(n, "run") for n in (0, 1, 2)] == ["0 runs", "1 run", "2 runs"]
    assert counted(1, "switch", "switches") == "1 switch"


def test_run_names_one_switch(capsys, tmp_path):
    (tmp_path / "one.ned").write_text(ONE_SWITCH)
    code, out, err = cli(capsys, "run", str(tmp_path / "one.ned"), "--time", "12us", "--warmup", "2us",
                         "--no-progress")
    assert code == 0, err
    assert out.splitlines()[0] == "one: 2 hosts, 1 switch, routing minhop, seed 1"


def test_timeline_counts():
    a = {"trigger": "trap", "engine": "updn", "status": "done", "nodes": 1, "links": 1, "smps": 1, "lft_blocks": 1,
         "rft_blocks": 1, "unreachable": 0, "change_ns": 0.0, "detected_ns": 0.0, "started_ns": 0.0,
         "explored_ns": None, "computed_ns": None, "distributed_ns": None, "active_ns": None, "phase2": None}
    sm = {"node": "h0", "smps_sent": 1, "smp_retries": 0, "smps_lost_by_reason": {}, "traps": 1}
    lines = timeline_lines({"assimilations": [a], "subnet_manager": sm})
    assert lines[0] == "assimilation 1 (trap, updn, done): 1 node, 1 link, 1 SMP, 1 LFT block, 1 RFT block, 0 unreachable"
    assert lines[-1] == "subnet manager on h0: 1 SMP sent, 0 retried, 0 lost, 1 trap"


class TestSweepCounts:
    @pytest.fixture
    def files(self, tmp_path):
        (tmp_path / "one.ned").write_text(ONE_SWITCH)

        def write(loads: str):
            (tmp_path / "counts.toml").write_text(EXPERIMENT.replace("LOADS", loads))
            return str(tmp_path / "counts.toml"), str(tmp_path / "out")

        return write

    def test_one_run_is_one_run(self, capsys, files):
        exp, out = files("[0.1]")
        code, _, err = cli(capsys, "sweep", exp, "--out", out, "--no-progress")
        assert code == 0, err
        assert "1 run: 1 run now (0 failed, 0 deadlocked), 0 already done;" in err
        code, _, err = cli(capsys, "results", out, "-o", out + "/t.csv")
        assert code == 0 and err.splitlines()[-1].startswith("1 run (0 failed), ")

    def test_dry_run_counts_to_do_done_and_other_results(self, capsys, files):
        exp, out = files("[0.1, 0.2]")
        code, stdout, err = cli(capsys, "sweep", exp, "--out", out, "--dry-run")
        assert code == 0 and len(stdout.splitlines()) == 2
        assert err == "2 runs: 2 to do, 0 done\n"
        exp, out = files("[0.1]")
        assert cli(capsys, "sweep", exp, "--out", out, "--no-progress")[0] == 0
        exp, out = files("[0.1, 0.3, 0.4]")  # the file changed: 0.1 is done, 0.3 and 0.4 to do
        code, stdout, err = cli(capsys, "sweep", exp, "--out", out, "--dry-run")
        assert err == "3 runs: 2 to do, 1 done\n"
        exp, out = files("[0.3]")  # 0.1 is no run of the file any more
        code, stdout, err = cli(capsys, "sweep", exp, "--out", out, "--dry-run")
        assert err == (f"1 run: 1 to do, 0 done; {out}/runs also holds 1 other run (saturation probes, or runs of"
                       " an earlier version of the file)\n")
