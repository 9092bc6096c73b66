""""Did you mean": one helper (ibfabric.errors.did_you_mean) for every unknown name (issue 35)."""

from __future__ import annotations

from pathlib import Path

import pytest

import ibfabric
from ibfabric.cli import main
from ibfabric.errors import ConfigError, IbfabricError, PluginError, closest, did_you_mean

ROOT = Path(__file__).resolve().parents[2]


def one_error(capsys, *argv) -> str:
    """The message of a command that must fail with one line on stderr and status 2."""
    try:
        code = main(list(argv))
    except SystemExit as exc:  # argparse
        code = exc.code
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1, err
    return err.split(": error: ", 1)[1].rstrip("\n")


class TestHelper:
    def test_closest_ignores_case(self):
        assert closest("Hca", ["HCA", "Switch"]) == "HCA"
        assert closest("numVls", ["numVLs", "mtu"]) == "numVLs"
        assert closest("zzz", ["mtu"]) is None and closest(5, ["mtu"]) is None
        assert did_you_mean("upnd", ["updn"]) == "; did you mean 'updn'?"
        assert did_you_mean("numVls", ["numVLs"], written="**.{}=2") == "; did you mean '**.numVLs=2'?"

    def test_no_other_suggestion_code(self):
        # every "unknown X" error uses the helper: no second copy of the difflib call
        offenders = []
        for folder in ("ibfabric", "components", "plugins", "ned_like", "topologies"):
            for path in (ROOT / folder).rglob("*.py"):
                if path.name != "errors.py" and "get_close_matches" in path.read_text():
                    offenders.append(str(path.relative_to(ROOT)))
        assert offenders == []


class TestEverywhere:
    def test_parameter_of_an_override(self, capsys):
        assert one_error(capsys, "run", "--set", "**.numVls=2", "--time", "1us", "--warmup", "0us") == (
            "override '**.numVls' matches no parameter of network 'irregular16'; did you mean '**.numVLs'?")
        with pytest.raises(ConfigError, match=r"did you mean '\*\*\.load'\?"):
            ibfabric.load("irregular16", overrides={"**.lod": "0.2"})

    def test_module_type(self, tmp_path):
        (tmp_path / "a.ned").write_text("network a { submodules: h: Hca; }\n")
        with pytest.raises(IbfabricError, match=r"unknown type 'Hca'; did you mean 'HCA'\?$"):
            ibfabric.load(str(tmp_path / "a.ned"))

    def test_plugin_names(self, capsys):
        assert one_error(capsys, "run", "--routing", "upnd", "--time", "1us", "--warmup", "0us").startswith(
            "unknown routing engine 'upnd'; did you mean 'updn'? (valid: ")
        with pytest.raises(PluginError, match=r"unknown VL arbiter 'round-robbin'; did you mean 'round-robin'\?"):
            ibfabric.load("irregular16", overrides={"**.arbiter": '"round-robbin"'})

    def test_cli_choices(self, capsys):
        assert one_error(capsys, "run", "--arrival", "poison") == (
            "argument --arrival: invalid choice: 'poison'; did you mean 'poisson'? (choose from 'poisson', 'constant')")
        assert one_error(capsys, "swep").startswith("argument COMMAND: invalid choice: 'swep'; did you mean 'sweep'?")

    def test_experiment_keys(self):
        from ibfabric.experiment import Experiment

        with pytest.raises(ConfigError, match=r"unknown key 'reapeat' in \[experiment\]; did you mean 'repeat'\?"):
            Experiment.from_text('[experiment]\nname = "x"\ntopology = "irregular16"\ntime = "1us"\nreapeat = 2\n')


class TestSetWithoutPath:
    def test_a_parameter_name_needs_its_path(self, capsys):
        # 'routingDelay=100ns' was taken as an option of the routing engine (issue 35)
        assert one_error(capsys, "run", "--set", "routingDelay=100ns", "--time", "1us", "--warmup", "0us") == (
            "--set routingDelay=100ns: a module parameter is set by path: did you mean '**.routingDelay=100ns'?"
            " (a bare KEY=VALUE is a routing-engine option, e.g. 'root=1')")

    def test_a_value_with_a_unit_needs_a_path(self, capsys):
        assert "did you mean '**.delai=5us'?" in one_error(capsys, "run", "--set", "delai=5us", "--time", "1us",
                                                            "--warmup", "0us")

    def test_a_routing_option_still_works(self, capsys):
        assert main(["run", "--set", "root=sw1", "--time", "2us", "--warmup", "0us", "--no-progress"]) == 0
        capsys.readouterr()
