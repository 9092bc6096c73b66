"""What fuzzing the newer readers found (issue 35), each a clear ibfabric error at the call or at the file
position, before anything runs.  (Bad values that every run of an experiment refuses are in test_runcheck.py.)"""

from __future__ import annotations

import os
import time

import pytest

import ibfabric
import ibfabric.configs
from ibfabric.cli import main
from ibfabric.errors import ConfigError, IbfabricError
from ibfabric.experiment import Experiment
from ibfabric.scenario import Event, scenario_from_text

DEEP = "[" * 5000 + "]" * 5000


def one_error(capsys, *argv) -> str:
    t0 = time.perf_counter()
    code = main(list(argv))
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and err.startswith("ibfabric: error: "), err
    assert time.perf_counter() - t0 < 10
    return err.removeprefix("ibfabric: error: ").rstrip("\n")


class TestFiles:
    def test_deeply_nested_values(self, tmp_path):
        with pytest.raises(ConfigError, match=r"^s.toml:1:10: values nested too deeply$"):
            scenario_from_text(f"events = {DEEP}\n", "s.toml")
        with pytest.raises(ConfigError, match=r"^e.toml:2:5: values nested too deeply$"):
            Experiment.from_text(f"# deep\nx = {DEEP}\n", "e.toml")
        (tmp_path / "c.toml").write_text(f"config = {DEEP}\n")
        with pytest.raises(ConfigError, match=r"c.toml:1:10: values nested too deeply$"):
            ibfabric.configs.get(f"{tmp_path / 'c.toml'}:a")

    @pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="needs /dev/zero")
    def test_an_endless_file_is_refused(self, tmp_path, capsys):
        exp = tmp_path / "z.toml"
        exp.write_text('[experiment]\nname = "z"\ntopology = "irregular16"\ntime = "1us"\nconfig = "/dev/zero"\n')
        assert one_error(capsys, "sweep", str(exp), "--dry-run") == (
            f"{exp}:5:10: /dev/zero: larger than 16 MiB: not a file ibfabric reads (is it the right one?)")
        for argv in (["run", "--scenario", "/dev/zero"], ["run", "--config", "/dev/zero"], ["sweep", "/dev/zero"]):
            assert "/dev/zero: larger than 16 MiB" in one_error(capsys, *argv)

    def test_a_scenario_load_is_capped_as_on_the_command_line(self):
        text = '[[events]]\nat = "1us"\naction = "set-traffic"\nload = 1e9\n'
        with pytest.raises(ConfigError, match=r"^s.toml:4:8: 'load' must be a number in \[0, 10\] \(got 1000000000.0\)"):
            scenario_from_text(text, "s.toml")
        sim = ibfabric.load("bermudez2006_fig1")
        with pytest.raises(ConfigError, match=r"the load must be a number in \[0, 10\]"):
            sim.set_traffic("**", load=1e9, pattern="uniform")

    def test_an_empty_table_is_not_a_value(self, tmp_path, capsys):
        (tmp_path / "c.toml").write_text('[config.a]\n[config.a.parameters]\n"**.mtu" = {}\n')
        assert one_error(capsys, "run", "--config", f"{tmp_path / 'c.toml'}:a") == (
            f"{tmp_path / 'c.toml'}:3:12: config 'a': parameter '**.mtu' must be a value or"
            ' { value = ..., source = "..." }')
        with pytest.raises(ConfigError, match=r"^e.toml:6:12: '\*\*.mtu' must be a string, number or boolean \(got a table\)"):
            Experiment.from_text('[experiment]\nname = "x"\ntopology = "irregular16"\ntime = "1us"\n'
                                 '[parameters]\n"**.mtu" = {}\n', "e.toml")

    def test_an_empty_config_name(self, capsys):
        assert one_error(capsys, "run", "--config", "") == "a configuration name must be a non-empty string (got '')"

    def test_a_scenario_without_events(self, tmp_path, capsys):
        (tmp_path / "s.toml").write_text("events = []\n")
        assert one_error(capsys, "run", "--scenario", str(tmp_path / "s.toml")) == (
            f"{tmp_path / 's.toml'}:1:10: no [[events]] entries")

    def test_topo_show_refuses_what_run_refuses(self, tmp_path, capsys):
        for i, (switch, line, message) in enumerate([
            ("", "h[0].port[1] <--> Link { length = -5m; } <--> sw.port[1];",
             "n.h[0].port[1].channel: 'length' must be >= 0 (got -5.0m)"),
            ("", "h[0].port[1] <--> DelayChannel { delay = -1ns; } <--> sw.port[1];",
             "n.h[0].port[1].channel: 'delay' must be >= 0 (got -1.0ns)"),
            (" routingDelay = -5ns;", "h[0].port[1] <--> Link <--> sw.port[1];",
             "n.sw: 'routingDelay' must be >= 0 (got -5.0ns)"),
        ]):
            ned = tmp_path / f"n{i}.ned"
            ned.write_text(f"network n {{\n  submodules:\n    sw: Switch {{ numPorts = 2;{switch} }}\n    h[2]: HCA;\n"
                           f"  connections:\n    {line}\n    h[1].port[1] <--> Link <--> sw.port[2];\n}}\n")
            shown = one_error(capsys, "topo", "show", str(ned))
            assert shown.endswith(message), shown
            assert one_error(capsys, "run", str(ned), "--time", "2us", "--warmup", "0us") == shown


@pytest.fixture(scope="module")
def sim():
    return ibfabric.load("bermudez2006_fig1", overrides={"**.traffic": "uniform", "**.load": "0.1"})


class TestApiArguments:
    """A wrong argument type is an IbfabricError at the call, not a TypeError or AttributeError (later)."""

    @pytest.mark.parametrize("call, message", [
        (lambda sim: sim.call_at("1us", None), "call_at's function must be callable (got None)"),
        (lambda sim: sim.run_until("x", "5us"), "run_until's condition must be callable (got 'x')"),
        (lambda sim: sim.set_traffic("**", load=0.2, options=5), "set_traffic's options must be a string or None (got 5)"),
        (lambda sim: sim.apply_events([5]), "apply_events takes a list of ibfabric.scenario.Event (got 5 in it)"),
        (lambda sim: sim.apply_events(5), "apply_events takes a list of ibfabric.scenario.Event (got 5)"),
        (lambda sim: sim.record("packetReceived", modules="["), "record's modules: bad pattern '['"),
        (lambda sim: sim.find(5), "find must be a string (got 5)"),
        (lambda sim: sim.traffic_pattern("uniform", 5), "the traffic options must be a string (got 5)"),
        (lambda sim: sim.run("1us", progress=5), "progress must be True, False or a callable (got 5)"),
    ])
    def test_simulation_methods(self, sim, call, message):
        with pytest.raises(IbfabricError) as info:
            call(sim)
        assert str(info.value).startswith(message), str(info.value)

    @pytest.mark.parametrize("kwargs, message", [
        ({"overrides": 5}, "overrides must be a mapping {pattern: value} or (pattern, value) pairs (got 5)"),
        ({"optional_overrides": "**.load=1"}, "optional_overrides must be a mapping"),
        ({"network": 5}, "network must be a string or None (got 5)"),
        ({"block": "traffic"}, "block must be a list (got 'traffic')"),
        ({"plugins": 5}, "plugins must be a list of plugin objects (got 5)"),
        ({"limits": 5}, "limits must be an ibfabric.ned_like.Limits (got 5)"),
    ])
    def test_simulation_arguments(self, kwargs, message):
        with pytest.raises(ConfigError) as info:
            ibfabric.load("bermudez2006_fig1", **kwargs)
        assert str(info.value).startswith(message), str(info.value)
        with pytest.raises(ConfigError, match="the topology must be a file path"):
            ibfabric.load(5)

    def test_experiment_text(self):
        with pytest.raises(ConfigError, match="Experiment.from_text takes the text and file name as strings"):
            Experiment.from_text(5)
        with pytest.raises(ConfigError, match="Experiment.from_file takes a path"):
            Experiment.from_file(5)

    def test_send_multicast_size(self):
        sim = ibfabric.load("bermudez2006_fig1", overrides={"**.multicastGroups": '"g: 0 1 2 senders=*"'})
        for size in ("x", 0, 2.5, True):
            with pytest.raises(ConfigError, match=r"send_multicast's size must be a positive number of bytes"):
                sim.hosts[0].send_multicast("g", size)

    def test_qos_options(self):
        from ibfabric.components.qos.cbr import QosNetwork

        sim = ibfabric.load("irregular16", overrides={"**.numVLs": "10", "**.dataRate": "2.5Gbps", "**.mtu": "256B"})
        with pytest.raises(ConfigError, match=r"QosNetwork's options must be a mapping \{name: value\} \(got 5\)"):
            QosNetwork(sim, options=5)

    def test_events_built_by_hand_still_apply(self, sim):
        sim.apply_events(e for e in [Event(1000.0, "fail-node", "sw2")])
