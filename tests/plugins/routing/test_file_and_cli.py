"""The ``file`` engine and the ``ibfabric routes`` command."""

import json

import numpy as np
import pytest
from routing_cases import random_fabric

from ibfabric.cli import main
from ibfabric.components.routing.fabric import FabricGraph, Link, NodeSpec
from ibfabric.components.routing.opensm import write_lfts
from ibfabric.errors import ConfigError
from ibfabric.plugins.routing import file as file_engine
from ibfabric.plugins.routing import fera, pira


class TestFile:
    @pytest.mark.parametrize("engine", [fera, pira])
    def test_round_trip_through_the_opensm_format(self, tmp_path, engine):
        g = random_fabric(12, 4, 2, 1, lmc=1)
        t = engine.compute(g, {}, np.random.default_rng(1))
        path = tmp_path / "opensm-lfts.dump"
        path.write_text(write_lfts(t))
        back = file_engine.compute(g, {"path": str(path)})
        assert np.array_equal(back.lft, t.expanded())  # default ports come back expanded
        assert back.info["missing"] == []

    def test_needs_a_path(self, fig1):
        with pytest.raises(ConfigError, match="needs the option path=FILE"):
            file_engine.compute(fig1, {})
        with pytest.raises(ConfigError, match="nosuch.dump: no such file"):
            file_engine.compute(fig1, {"path": "nosuch.dump"})

    def test_parse_error_names_file_and_line(self, fig1, tmp_path):
        path = tmp_path / "bad.dump"
        path.write_text("Unicast lids [0-15] of switch Lid 1 guid 0x0000000000000001 ('sw1'):\n0x0001 000 # ok\nbogus line\n")
        with pytest.raises(ConfigError, match=r"bad.dump:3:1: cannot parse 'bogus line'"):
            file_engine.compute(fig1, {"path": str(path)})


@pytest.fixture
def use_fabric(monkeypatch):
    """Make ``ibfabric routes`` load the given FabricGraph whatever the topology argument."""
    import ibfabric.topologies

    def use(fabric):
        monkeypatch.setattr(ibfabric.topologies, "load_fabric", lambda path, **kw: fabric)

    return use


def tiny():
    # s1 (LID 1) - s2 (LID 2), host a (LID 3) on s1 port 2, host b (LID 4) on s2 port 2
    return FabricGraph(
        [NodeSpec("s1", True, 2, lid=1), NodeSpec("s2", True, 2, lid=2), NodeSpec("a", False, 1, lid=3), NodeSpec("b", False, 1, lid=4)],
        [Link(0, 1, 1, 1), Link(2, 1, 0, 2), Link(3, 1, 1, 2)],
        sm_node=2,
    )


class TestRoutesCommand:
    def test_json_format_exact(self, use_fabric, capsys):
        use_fabric(tiny())
        assert main(["routes", "tiny.ned", "--routing", "pira", "--set", "father=lowest-port", "--format", "json"]) == 0
        assert json.loads(capsys.readouterr().out) == {
            "engine": "pira",
            "switches": [
                {"lid": 1, "name": "s1", "default_port": None, "entries": {"1": 0, "2": 1, "3": 2, "4": 1}},
                {"lid": 2, "name": "s2", "default_port": 1, "entries": {"2": 0, "4": 2}},
            ],
        }

    def test_opensm_format_to_file(self, use_fabric, tmp_path, capsys):
        use_fabric(tiny())
        out = tmp_path / "lfts.dump"
        assert main(["routes", "tiny.ned", "--routing", "minhop", "-o", str(out)]) == 0
        text = out.read_text()
        assert text.startswith("Unicast lids [0-4] of switch Lid ")
        assert "0x0003 002 # Channel Adapter portguid" in text and text.count("4 lids dumped") == 2
        assert capsys.readouterr().out == ""

    def test_check_passes_for_updn_and_fails_for_minhop_on_fig1(self, use_fabric, fig1, capsys):
        use_fabric(fig1)
        assert main(["routes", "fig1.ned", "--routing", "updn", "--set", "root=1", "--check"]) == 0
        out = capsys.readouterr().out
        assert "unreachable:          0" in out and "acyclic (deadlock-free)" in out
        assert main(["routes", "fig1.ned", "--routing", "minhop", "--check"]) == 1
        assert "CYCLE: " in capsys.readouterr().out

    def test_user_errors_are_one_line(self, use_fabric, fig1, capsys):
        use_fabric(fig1)
        assert main(["routes", "fig1.ned", "--routing", "fera", "--set", "father=x"]) == 2
        assert capsys.readouterr().err == "ibfabric: error: unknown option 'father' for routing engine 'fera' (valid: root)\n"
        assert main(["routes", "fig1.ned", "--routing", "nosuch"]) == 2
        assert "unknown routing engine 'nosuch'" in capsys.readouterr().err
        assert main(["routes", "fig1.ned", "--set", "root"]) == 2
        assert "expected KEY=VALUE" in capsys.readouterr().err
        assert main(["routes", "fig1.ned", "--routing", "dr", "--lmc", "9"]) == 2
        assert "'lmc' must be between 0 and 7" in capsys.readouterr().err

    def test_dr_with_lmc(self, use_fabric, capsys):
        from ibfabric.topologies.generators import irregular

        use_fabric(irregular(8, links_per_switch=4, hosts_per_switch=1, seed=42))
        assert main(["routes", "x.ned", "--routing", "dr"]) == 2
        assert "set the subnet manager's lmc to 1" in capsys.readouterr().err
        assert main(["routes", "x.ned", "--routing", "dr", "--lmc", "1", "--check"]) == 0
