"""``ibfabric qos`` and ``ibfabric run --traffic cbr``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ibfabric.cli import main

FIG1 = str(Path(__file__).resolve().parents[2] / "topologies" / "bermudez2006_fig1.ned")


def run(capsys, *argv):
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


class TestQosCommand:
    @pytest.mark.parametrize("rate, ms", [("2.5Gbps", "3.342336"), ("1x", "3.342336"), ("4x", "0.835584"),
                                          ("12x", "0.278528"), ("30Gbps", "0.278528")])
    def test_frame(self, capsys, rate, ms):
        code, out, _ = run(capsys, "qos", "frame", "--link-rate", rate)
        assert code == 0
        assert f"T_frame          {ms} ms" in out
        assert "slots per frame  16320" in out

    def test_slots(self, capsys):
        code, out, _ = run(capsys, "qos", "slots", "--bandwidth", "64Mbps", "--link", "1x")
        assert code == 0
        assert out.splitlines()[0] == "N_slots          418"
        assert "ceil(417.792)" in out and "DB SL 2" in out

    def test_slots_on_4x(self, capsys):
        code, out, _ = run(capsys, "qos", "slots", "--bandwidth", "300Mbps", "--link", "4x")
        assert out.splitlines()[0] == "N_slots          490"  # ceil(489.6)

    def test_classes(self, capsys):
        code, out, _ = run(capsys, "qos", "classes")
        assert code == 0 and "DBTS" in out and "VL15" in out

    @pytest.mark.parametrize("argv, msg", [
        (["qos", "slots", "--bandwidth", "fast"], "bad bandwidth 'fast'"),
        (["qos", "frame", "--link", "2x"], "bad link rate '2x'"),
    ])
    def test_errors_are_one_line(self, capsys, argv, msg):
        code, out, err = run(capsys, *argv)
        assert code == 2 and msg in err and len(err.strip().splitlines()) == 1


class TestRunCbr:
    def test_admission_traffic_and_report(self, capsys, tmp_path):
        code, out, err = run(capsys, "run", FIG1, "--traffic", "cbr", "--connections", "24", "--packet-size", "256",
                             "--time", "200us", "--warmup", "20us", "--retries", "50", "--out", str(tmp_path))
        assert code == 0, err
        assert "QoS: policy alfaro2001, 24 connections established of 24 requested" in out
        assert "B/cycle/host" in out and "utilisation: host interfaces" in out
        s = json.loads((tmp_path / "summary.json").read_text())
        q = s["qos"]
        assert q["admission"]["established"] == 24
        assert {sl: r["established"] for sl, r in q["admission"]["per_sl"].items()} == {"0": 6, "1": 6, "2": 6, "3": 6}
        assert set(q["per_sl"]["3"]) >= {"delivered", "delay_under", "jitter", "best", "worst"}
        assert len(q["per_connection"]) == 24
        assert q["utilisation"]["host_interfaces"]["count"] == 7
        assert s["conservation_ok"]

    def test_plateau_and_be_share(self, capsys):
        code, out, err = run(capsys, "run", FIG1, "--traffic", "cbr", "--connections", "5000", "--retries", "20",
                             "--be-share", "0.5", "--time", "20us", "--json")
        s = json.loads(out)
        adm = s["qos"]["admission"]
        assert code == 0 and adm["established"] < 5000 and adm["exhausted_sl"] is not None
        assert s["qos"]["options"]["be_share"] == 0.5

    @pytest.mark.parametrize("argv, msg", [
        (["--connections", "5"], "--connections only applies to --traffic cbr"),
        (["--traffic", "cbr", "--load", "0.5"], "--load does not apply to --traffic cbr"),
        (["--traffic", "cbr", "--be-share", "1.5"], "'be_share' must be in 0..1"),
        (["--traffic", "cbr", "--qos-policy", "wfq"], "unknown arbitration policy 'wfq'"),
        (["--traffic", "cbr", "--set", "**.numVLs=4"], "set '**.numVLs = 10'"),
    ])
    def test_errors(self, capsys, argv, msg):
        code, out, err = run(capsys, "run", FIG1, "--time", "12us", *argv)
        errors = [line for line in err.splitlines() if not line.startswith("ibfabric: warning: ")]  # minhop's cycle
        assert code == 2 and msg in err and len(errors) == 1
