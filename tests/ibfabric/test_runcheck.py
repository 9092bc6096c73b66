"""Every run of an experiment is checked before anything runs (issue 35): sweep, sweep --dry-run and
saturation stop at the first run that would not build, with the experiment file's line and column."""

from __future__ import annotations

import pytest

from ibfabric.cli import main
from ibfabric.experiment import Experiment
from ibfabric.runspec import ExperimentError, RunSpec

HEAD = '[experiment]\nname = "x"\ntopology = "bermudez2006_fig1"\ntime = "20us"\n\n[parameters]\n'


def write(tmp_path, text: str) -> str:
    path = tmp_path / "exp.toml"
    path.write_text(text)
    return str(path)


def one_error(capsys, *argv) -> str:
    code = main(list(argv))
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and err.startswith("ibfabric: error: "), err
    return err.removeprefix("ibfabric: error: ").rstrip("\n")


def check(tmp_path, text: str) -> str:
    exp = Experiment.from_file(write(tmp_path, text))
    with pytest.raises(ExperimentError) as info:
        exp.check()
    return str(info.value).replace(str(tmp_path / "exp.toml"), "exp.toml")


class TestCommands:
    @pytest.mark.parametrize("command", [["sweep", "--dry-run"], ["sweep"], ["saturation"]])
    def test_a_misspelt_path_stops_everything(self, tmp_path, capsys, command):
        path = write(tmp_path, HEAD + '"**.trafic" = "uniform"\n"**.load" = "${load}"\n\n[iterations]\nload = [0.1, 0.2]\n'
                     '\n[saturation]\nvariable = "load"\nlow = 0.1\nhigh = 0.5\n')
        out = tmp_path / "out"
        msg = one_error(capsys, command[0], path, "--out", str(out), *command[1:])
        assert msg == (f"{path}:7:1: override '**.trafic' matches no parameter of network 'bermudez2006_fig1';"
                       " did you mean '**.traffic'?")
        assert not out.exists()

    def test_an_unknown_engine_in_an_iteration_list(self, tmp_path, capsys):
        path = write(tmp_path, HEAD + '"**.routing" = "${routing}"\n\n[iterations]\nrouting = ["updn", "upnd"]\n')
        msg = one_error(capsys, "sweep", path, "--dry-run", "--out", str(tmp_path / "out"))
        assert msg.startswith(f"{path}:10:11: unknown routing engine 'upnd'; did you mean 'updn'? (valid: ")
        assert msg.endswith(" (for '**.routing', with $routing=upnd)")

    def test_a_good_file_lists_its_runs(self, tmp_path, capsys):
        path = write(tmp_path, HEAD + '"**.routing" = "${routing}"\n\n[iterations]\nrouting = ["updn", "minhop"]\n')
        assert main(["sweep", path, "--dry-run", "--out", str(tmp_path / "out")]) == 0
        assert capsys.readouterr().out.count(": to run") == 2


class TestValues:
    """Values every run refuses are refused before, at their place in the experiment file (not in a .ned file)."""

    @pytest.mark.parametrize("line, col, message", [
        ('"**.mtu" = "0B"', 12, "bermudez2006_fig1.h4: 'mtu' must be one of (256, 512, 1024, 2048, 4096) (got 0)"),
        ('"**.speed" = "XDR"', 14, "'speed' must be one of (SDR, DDR, QDR, FDR10, FDR, EDR, HDR, NDR) (got 'XDR')"),
        ('"**.packetSize" = "0B"', 19, "bermudez2006_fig1.h4: 'packetSize' must be an integer in 1..1048576 (got 0)"),
        ('"**.routingDelay" = "100"', 21, "parameter 'routingDelay' expects a time (like 1ns), got 100"),
        ('"**.load" = "1e9"\n"**.traffic" = "uniform"', 13, "'load' must be at most 10 (got 1e+09)"),
    ])
    def test_a_bad_value(self, tmp_path, line, col, message):
        msg = check(tmp_path, HEAD + line + "\n")
        assert msg.startswith(f"exp.toml:7:{col}: ") and message in msg and ".ned" not in msg, msg

    def test_an_unknown_arbiter_in_an_iteration_list(self, tmp_path):
        msg = check(tmp_path, HEAD + '"**.arbiter" = "${arb}"\n"**.load" = "${load}"\n\n[iterations]\n'
                    'load = [0.1, 0.2]\narb = ["iba-vlarb", "round-robbin"]\n')
        assert msg.startswith("exp.toml:12:7: unknown VL arbiter 'round-robbin'; did you mean 'round-robin'?")
        assert msg.endswith("(for '**.arbiter', with $arb=round-robbin)")

    def test_a_value_written_inside_a_string_names_the_run(self, tmp_path):
        msg = check(tmp_path, HEAD + '"**.mtu" = "${m}"\n\n[iterations]\nm = ["256B", "512"]\n')
        assert msg == ("exp.toml:10:5: parameter 'mtu' expects a data size (like 1B), got 512 (for bermudez2006_fig1.h4.mtu)"
                       " (for '**.mtu', with $m=512)")
        msg = check(tmp_path, HEAD + '"**.routingDelay" = "1${u}"\n\n[iterations]\nu = ["ns", "B"]\n')
        assert msg.startswith("exp.toml:7:21: parameter 'routingDelay' expects a time") and msg.endswith("(with $u=B)")

    def test_an_event_target(self, tmp_path):
        msg = check(tmp_path, HEAD + '"**.load" = "0.1"\n\n[[events]]\nat = "5us"\naction = "fail-node"\ntarget = "sw999"\n')
        assert msg == "exp.toml:12:10: no node 'sw999' in network 'bermudez2006_fig1'"
        msg = check(tmp_path, HEAD + '\n[iterations]\nsw = ["sw1", "sw999"]\n\n[[events]]\nat = "5us"\n'
                    'action = "fail-node"\ntarget = "${sw}"\n')
        assert msg == "exp.toml:14:10: no node 'sw999' in network 'bermudez2006_fig1' (with $sw=sw999)"

    def test_a_generated_topology_is_not_a_place(self, tmp_path):
        text = HEAD.replace('"bermudez2006_fig1"', '{ generator = "mesh", dims = [2, 2] }') + '"**.mtu" = "0B"\n'
        msg = check(tmp_path, text)
        assert msg.startswith("exp.toml:7:12: ") and "<string>" not in msg and "'mtu' must be one of" in msg

    def test_a_broken_topology_file_keeps_its_place(self, tmp_path):
        (tmp_path / "t.ned").write_text("network t { submodules: h: Hca; }\n")
        msg = check(tmp_path, HEAD.replace('"bermudez2006_fig1"', '"t.ned"') + '"**.load" = "0.1"\n')
        assert msg == f"exp.toml:3:12: {tmp_path / 't.ned'}:1:28: unknown type 'Hca'; did you mean 'HCA'?"


class TestCost:
    def test_a_thousand_runs_build_once_per_topology_and_elaborate_once_per_value(self, tmp_path, monkeypatch):
        import ibfabric.topologies

        built, elaborated = [], []
        real_build, real_load = RunSpec.simulation, ibfabric.topologies.load_network
        monkeypatch.setattr(RunSpec, "simulation", lambda self: built.append(self) or real_build(self))
        monkeypatch.setattr(ibfabric.topologies, "load_network", lambda *a, **k: elaborated.append(a) or real_load(*a, **k))
        exp = Experiment.from_file(write(tmp_path, HEAD.replace('time = "20us"', 'time = "20us"\nrepeat = 50') +
                                         '"**.traffic" = "uniform"\n"**.load" = "${load}"\n"**.routing" = "${r}"\n'
                                         '\n[iterations]\nload = "0.1..1 step 0.1"\nr = ["updn", "minhop"]\n'))
        assert len(exp) == 1000
        exp.check()
        assert len(built) == 1 and len(elaborated) == 1 + 1 + 9  # the build's, then a run per new value
        exp.check()  # what was checked is not checked again
        assert len(built) == 1 and len(elaborated) == 11

    def test_another_seed_of_a_generated_fabric_is_not_built_again(self, tmp_path, monkeypatch):
        built = []
        real = RunSpec.simulation
        monkeypatch.setattr(RunSpec, "simulation", lambda self: built.append(self) or real(self))
        topo = '{ generator = "irregular", switches = 8, links_per_switch = 3, hosts_per_switch = 1, seed = "${topo}" }'
        exp = Experiment.from_file(write(tmp_path, HEAD.replace('"bermudez2006_fig1"', topo) +
                                         '\n[iterations]\ntopo = "1..20"\n'))
        exp.check()
        assert len(built) == 1
