"""The command line: the default scenario, result files, and one-line errors."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from ibfabric.cli import main

FIG1 = str(Path(__file__).resolve().parents[2] / "topologies" / "bermudez2006_fig1.ned")
TWO_NODE = str(Path(__file__).resolve().parents[1] / "data" / "ibnetdiscover" / "two_node.ibnetdiscover")
REQUIRED = ("packets_injected", "packets_delivered", "packets_dropped", "packets_in_flight", "latency_ns",
            "offered_load", "accepted_load", "events", "sim_time_ns", "wall_s")


def run(capsys, *argv):
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


class TestRun:
    def test_default_scenario(self, capsys, tmp_path):
        code, out, err = run(capsys, "run", "--time", "20us", "--out", str(tmp_path))
        assert code == 0, err
        assert "irregular16" in out and "accepted load" in out and "latency p99" in out
        s = json.loads((tmp_path / "summary.json").read_text())
        for key in REQUIRED:
            assert key in s
        assert set(s["latency_ns"]) >= {"mean", "p50", "p99", "max"}
        assert s["sim_time_ns"] == 20000.0
        assert s["routing"] == "updn"
        assert (tmp_path / "scalars.csv").exists() and (tmp_path / "results.sca").read_text().startswith("version 2")

    def test_options_reach_the_model(self, capsys):
        code, out, _ = run(capsys, "run", FIG1, "--routing", "updn", "--arbiter", "round-robin", "--traffic",
                           "bit-reversal", "--load", "0.2", "--packet-size", "128", "--time", "30us", "--seed", "4",
                           "--set", "**.routingDelay=50ns", "--json")
        assert code == 0
        s = json.loads(out)
        assert s["routing"] == "updn" and s["seed"] == 4
        assert 0.1 < s["offered_load"] < 0.3
        assert s["conservation_ok"]

    def test_bare_keys_are_routing_options(self, capsys, tmp_path):
        # tables from a real subnet manager (OpenSM's dump format) loaded and simulated
        dump = tmp_path / "lfts.dump"
        assert main(["routes", FIG1, "--routing", "fera", "--set", "root=1", "--output", str(dump)]) == 0
        capsys.readouterr()
        code, out, err = run(capsys, "run", FIG1, "--routing", "file", "--set", f"path={dump}", "--time", "20us",
                             "--json")
        assert code == 0, err
        s = json.loads(out)
        assert s["routing"] == "file" and s["packets_delivered"] > 0
        code, out, _ = run(capsys, "run", FIG1, "--routing", "updn", "--set", "root=sw10", "--time", "20us",
                           "--json")
        assert code == 0 and json.loads(out)["routing"] == "updn"
        code, _, err = run(capsys, "run", FIG1, "--routing", "updn", "--set", "bogus=1", "--time", "20us")
        assert code == 2 and "bogus" in err

    def test_option_values_may_hold_commas(self, capsys):
        # `run` takes the same routing options as `routes`: Fig. 8's fathers give 7 default ports
        code, out, err = run(capsys, "run", FIG1, "--routing", "pira", "--set", "fathers=6:3,10:6", "--time", "20us",
                             "--json")
        assert code == 0, err
        s = json.loads(out)
        assert s["routing"] == "pira" and s["packets_delivered"] > 0

    def test_same_seed_same_numbers(self, capsys):
        outs = []
        for _ in range(2):
            code, out, _ = run(capsys, "run", FIG1, "--time", "20us", "--json")
            s = json.loads(out)
            outs.append({k: v for k, v in s.items() if k not in ("wall_s", "events_per_s", "packet_hops_per_s",
                                                                   "routing_time_s")})
        assert outs[0] == outs[1]

    def test_deadlock_exits_1_and_still_writes_the_summary(self, capsys, tmp_path):
        code, out, err = run(capsys, "run", "irregular16", "--routing", "minhop", "--load", "0.9", "--time", "2ms",
                             "--set", "**.vlBufferSize=2560B", "--set", "**.mtu=256B", "--out", str(tmp_path))
        assert code == 1
        # minhop's routes were suspect from the start: a warning, then the deadlock
        warning, deadlock = err.splitlines()
        assert warning.startswith("ibfabric: warning: routing 'minhop' has a channel-dependency cycle")
        assert deadlock.startswith("ibfabric: deadlock: at ") and " -> " in deadlock
        assert json.loads((tmp_path / "summary.json").read_text())["deadlock"]["cycle"]

    @pytest.mark.parametrize("names, host", [("lid", "ca_lid8"), ("guid", "ca_0002c90300001dd0"), (None, "node1")])
    def test_names_of_a_dump(self, capsys, names, host):
        # the --set pattern names a host as the chosen naming calls it: one that matched nothing would be an error
        argv = ["run", TWO_NODE, "--time", "20us", "--json", "--set", f"**.{host}.load=0.3"]
        code, out, err = run(capsys, *argv, *(["--names", names] if names else []))
        assert code == 0, err
        assert json.loads(out)["packets_delivered"] > 0


class TestErrors:
    @pytest.mark.parametrize(
        "argv, message",
        [
            (["run", "nope.ned"], "ibfabric: error: nope.ned: no such file"),
            (["run", FIG1, "--set", "routingDelay"], "ibfabric: error: --set 'routingDelay': expected PATH=VALUE"),
            (["run", FIG1, "--set", "**.routngDelay=1ns"], "ibfabric: error: override '**.routngDelay' matches no parameter"),
            (["run", FIG1, "--set", "sw3.routingDelay=1ns"], "ibfabric: error: override 'sw3.routingDelay' matches no parameter of network 'bermudez2006_fig1' (patterns match full paths"),
            (["run", FIG1, "--arbiter", "fifo"], "ibfabric: error: unknown VL arbiter 'fifo' (valid: "),
            (["run", FIG1, "--routing", "ospf"], "ibfabric: error: unknown routing engine 'ospf'; did you mean 'spf'? (valid:"),
            (["run", FIG1, "--set", "**.routingDelay=4096B"], "ibfabric: error:"),
            (["run", FIG1, "--time", "soon"], "ibfabric: error: --time soon: 'soon' is not a quantity"),
            (["run", FIG1, "--names", "lid"], f"ibfabric: error: {FIG1}: choosing node names (names='lid') applies"
                                              " to ibnetdiscover dumps"),
        ],
    )
    def test_one_line_errors(self, capsys, argv, message):
        code, out, err = run(capsys, *argv)
        assert code == 2
        assert err.startswith(message), err
        assert len(err.strip().splitlines()) == 1
        assert "Traceback" not in err

    def test_unknown_arbiter_lists_every_registered_one(self, capsys):
        from ibfabric.plugins import PluginSet

        names = PluginSet.load().vl_arbiters.names()  # the built-ins and whatever other plugins are installed
        assert {"iba-vlarb", "round-robin"} <= set(names)
        code, _, err = run(capsys, "run", FIG1, "--arbiter", "fifo")
        assert (code, err) == (2, f"ibfabric: error: unknown VL arbiter 'fifo' (valid: {', '.join(names)})\n")

    @pytest.mark.parametrize("body, where, message", [
        ('a.port[1] <--> Link { width = "3x"; } <--> s.port[1];', "4:9", "'width' must be one of"),
        ("a.port[1] <--> s.port[0];", "4:9", "port[0] is the management port"),
    ])
    def test_semantic_errors_found_while_building_are_located(self, capsys, tmp_path, body, where, message):
        bad = tmp_path / "bad.ned"
        bad.write_text("network n\n{\n    submodules: s: Switch; a: HCA; connections:\n        " + body + "\n}\n")
        code, _, err = run(capsys, "run", str(bad))
        assert code == 2
        assert err.startswith(f"ibfabric: error: {bad}:{where}: ") and message in err

    def test_ned_syntax_error_is_file_line_col(self, capsys, tmp_path):
        bad = tmp_path / "bad.ned"
        bad.write_text("network n\n{\n    submodules:\n        a: HCA\n        b: HCA;\n}\n")
        code, _, err = run(capsys, "run", str(bad))
        assert code == 2
        assert err.startswith(f"ibfabric: error: {bad}:5:9: ")
        assert len(err.strip().splitlines()) == 1


class TestPluginsAndTopo:
    def test_plugins_lists_roles_and_origins(self, capsys):
        code, out, _ = run(capsys, "plugins")
        assert code == 0
        for role in ("routing engines", "VL arbiters", "packet droppers", "traffic patterns", "module types"):
            assert role in out
        for name in ("minhop", "updn", "iba-vlarb", "round-robin", "none", "uniform", "hot-spot", "transpose"):
            assert name in out
        assert "ibfabric==" in out

    def test_topo_show(self, capsys):
        code, out, _ = run(capsys, "topo", "show", FIG1)
        assert code == 0
        assert "switches" in out and " 8 " in out and "diameter" in out

    def test_topo_convert_round_trip(self, capsys, tmp_path):
        from ibfabric.topologies import load_network

        out_file = tmp_path / "fig1.ned"
        code, out, _ = run(capsys, "topo", "convert", FIG1, "-o", str(out_file))
        assert code == 0 and out_file.exists()
        assert load_network(out_file).canonical() == load_network(FIG1).canonical()

    def test_output_into_a_closed_pipe_is_quiet(self, monkeypatch, tmp_path, capsys):
        # `ibfabric routes FILE | head -1`: the reader has gone; stop without a traceback
        class ClosedPipe:
            def __init__(self, fd):
                self.fd = fd

            def write(self, text):
                raise BrokenPipeError(32, "Broken pipe")

            def flush(self):
                pass

            def fileno(self):
                return self.fd

        with open(tmp_path / "stdout", "w") as f:
            monkeypatch.setattr(sys, "stdout", ClosedPipe(f.fileno()))
            assert main(["routes", FIG1, "--routing", "minhop"]) == 141
        assert capsys.readouterr().err == ""

    def test_console_script(self):
        proc = subprocess.run([sys.executable, "-m", "ibfabric", "--version"], capture_output=True, text=True)
        assert proc.returncode == 0 and proc.stdout.startswith("ibfabric ")
