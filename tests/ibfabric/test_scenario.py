"""The scenario API and files (ibfabric/scenario.py): scheduling, logging, set_traffic, run_until,
[[events]] in scenario and experiment files, one-line errors, determinism."""

from __future__ import annotations

import json

import pytest

import ibfabric
from ibfabric.cli import main
from ibfabric.errors import ConfigError
from ibfabric.experiment import Experiment, ExperimentError
from ibfabric.scenario import Event, scenario_from_text
from ibfabric.simulation import Simulation
from ibfabric.topologies.generators import irregular, to_ned

SMALL = to_ned(irregular(6, links_per_switch=3, hosts_per_switch=2, seed=2, width="1x", speed="SDR"), name="small")
TRAFFIC = {"**.traffic": "uniform", "**.load": "0.3", "**.mtu": "256B"}

SCENARIO = """
[[events]]
at = "5us"
action = "fail-link"
target = ["sw0", "sw2"]

[[events]]
at = "8us"
action = "fail-node"
target = "sw3"

[[events]]
at = "12us"
action = "set-traffic"
target = "h{0..2}_*"
load = 0.6

[[events]]
at = "15us"
action = "restore-link"
target = "sw0.port[1]"
training = "1us"

[[events]]
at = "18us"
action = "restore-node"
target = "sw3"
"""


def small(**kw) -> Simulation:
    return Simulation(SMALL, overrides=TRAFFIC, seed=4, **kw)


def by_api(sim: Simulation) -> None:
    sim.fail_link("sw0", "sw2", at="5us")
    sim.fail_node("sw3", at="8us")
    sim.set_traffic("h{0..2}_*", at="12us", load=0.6)
    sim.restore_link("sw0.port[1]", at="15us", training="1us")
    sim.restore_node("sw3", at="18us")


def comparable(s: dict) -> dict:
    return {k: v for k, v in s.items() if k not in ("wall_s", "events_per_s", "packet_hops_per_s", "routing_time_s")}


class TestScenarioApi:
    def test_the_log_records_every_action_in_time_order(self):
        sim = small()
        by_api(sim)
        s = sim.run("25us")
        log = s["scenario"]
        assert [(e["time_ns"], e["action"]) for e in log] == [
            (5000.0, "fail-link"), (8000.0, "fail-node"), (12000.0, "set-traffic"), (15000.0, "restore-link"),
            (16000.0, "link-up"), (18000.0, "restore-node")]
        assert log[0]["target"] == "sw0.port[1]<->sw2.port[2]" and log[0]["result"] == "down"
        assert log[2]["result"] == "load 0.6 on 6 host(s)"
        assert all(set(e) >= {"time_ns", "action", "target", "result"} for e in log)
        assert s["conservation_ok"] and s["drops_by_reason"]["port-down"] > 0
        json.dumps(s)  # summary.json takes it

    def test_same_seed_same_scenario_same_summary(self):
        out = []
        for _ in range(2):
            sim = small()
            by_api(sim)
            out.append(comparable(sim.run("25us")))
        assert out[0] == out[1]

    def test_a_file_and_the_api_give_the_same_run(self, tmp_path):
        path = tmp_path / "scenario.toml"
        path.write_text(SCENARIO)
        a = small()
        by_api(a)
        b = small()
        from ibfabric.scenario import load_scenario

        b.apply_events(load_scenario(path))
        assert comparable(a.run("25us")) == comparable(b.run("25us"))

    @pytest.mark.parametrize("call, message", [
        (lambda s: s.fail_link("sw0", "sw9"), "no node 'sw9'"),
        (lambda s: s.fail_link("sw0", "sw5"), "no link joins sw0 and sw5"),
        (lambda s: s.fail_link("sw0.port[9]"), r"sw0.port\[9\] is not connected"),
        (lambda s: s.fail_node("sm"), "not a switch or channel adapter"),
        (lambda s: s.fail_node("sw0", at="-1us"), "bad time"),
        (lambda s: s.set_traffic("nobody*", load=0.1), "no traffic host matches"),
        (lambda s: s.set_traffic("**", pattern="nonsense"), "nonsense"),
        (lambda s: s.set_traffic("**"), "needs a load or a pattern"),
    ])
    def test_targets_are_checked_when_scheduled(self, call, message):
        with pytest.raises(ConfigError, match=message):
            call(small())

    def test_observers_hear_each_action(self):
        from ibfabric import hookimpl

        heard = []

        class Observer:
            @hookimpl
            def ibfabric_scenario_event(self, simulation, event):
                heard.append((simulation.now, event["action"], event["result"]))

        sim = Simulation(SMALL, overrides=TRAFFIC, plugins=[Observer()])
        sim.fail_node("sw3", at="2us")
        sim.restore_node("sw3", at="4us")
        sim.run("5us")
        assert heard == [(2000.0, "fail-node", "down"), (4000.0, "restore-node", "active")]

    def test_parallel_links_need_a_port(self):
        ned = """network two {
            submodules: a: Switch { numPorts = 4; } b: Switch { numPorts = 4; } h: HCA; g: HCA;
            connections: a.port[1] <--> Link <--> b.port[1]; a.port[2] <--> Link <--> b.port[2];
                         h.port[1] <--> Link <--> a.port[3]; g.port[1] <--> Link <--> b.port[3]; }"""
        sim = Simulation(ned)
        with pytest.raises(ConfigError, match=r"joined by 2 links \(ports 1, 2 of a\): name the port"):
            sim.fail_link("a", "b")
        sim.fail_link("a.port[2]", "b")  # fine


class TestSetTraffic:
    def test_a_higher_load_mid_run_is_measurably_offered(self):
        base, more = small(warmup="10us"), small(warmup="10us")
        more.set_traffic("**", at="10us", load=0.9)
        a, b = base.run("40us"), more.run("40us")
        assert a["offered_load"] == pytest.approx(0.3, abs=0.08)
        assert b["offered_load"] == pytest.approx(0.9, abs=0.15)

    def test_load_zero_stops_and_a_pattern_restarts(self):
        sim = small()
        sim.set_traffic("**", at="5us", load=0)
        sim.set_traffic("**", at="20us", load=0.3, pattern="bit-reversal")
        sim.run("30us")
        created = sim.stats.arrays()["created"]
        assert not ((created > 5000) & (created < 20000)).any() and (created >= 20000).any()


class TestRunUntil:
    def test_stops_when_the_condition_holds(self):
        sim = small()
        s = sim.run_until(lambda sim: sim.stats.injected >= 200, "1ms", every="100ns")
        assert s["stopped_by_condition"] and s["packets_injected"] >= 200
        assert sim.now < 1e6 and s["sim_time_ns"] == sim.now
        assert sim.now % 100 == 0  # at a check
        s2 = sim.run(sim.now + 1000)  # the run goes on from there, without the old check
        assert s2["sim_time_ns"] == pytest.approx(sim.now)

    def test_runs_to_the_limit_otherwise(self):
        sim = small()
        s = sim.run_until(lambda sim: False, "20us")
        assert not s["stopped_by_condition"] and sim.now == 20000.0

    def test_after_a_failure(self):
        sim = small()
        sim.fail_node("sw3", at="5us")
        s = sim.run_until(lambda sim: sim.stats.dropped["port-down"] >= 10, "1ms")
        assert s["stopped_by_condition"] and s["drops_by_reason"]["port-down"] >= 10 and sim.now < 1e6


class TestScenarioFiles:
    def test_parse(self):
        events = scenario_from_text(SCENARIO, "s.toml")
        assert events[0] == Event(5000.0, "fail-link", ("sw0", "sw2"))
        assert events[3].training == 1000.0 and events[2].load == 0.6
        assert events[1].where == "s.toml:7:1"

    @pytest.mark.parametrize("text, message", [
        ('[[events]]\nat = "5us"\naction = "fail-lnk"\ntarget = "sw0"\n',
         "s.toml:3:10: unknown action 'fail-lnk'; did you mean 'fail-link'?"),
        ('[[events]]\nat = "5us"\naction = "fail-node"\n', "s.toml:1:1: event 1 ('fail-node') has no 'target'"),
        ('[[events]]\nat = "5us"\naction = "fail-node"\ntarget = "sw0"\n\n[[events]]\naction = "fail-node"\n'
         'target = "sw1"\n', "s.toml:6:1: event 2 has no 'at'"),
        ('[[events]]\nat = "5 parsecs"\naction = "fail-node"\ntarget = "sw0"\n', "s.toml:2:6: bad 'at'"),
        ('[[events]]\nat = "5us"\naction = "fail-node"\ntarget = "sw0"\nload = 3\n',
         "s.toml:5:1: unknown key 'load' for action 'fail-node'"),
        ('[[events]]\nat = "5us"\naction = "fail-link"\ntarget = "sw0"\n', 's.toml:4:10: a link target is'),
        ('[[events]]\nat = "5us"\naction = "fail-link"\ntarget = ["sw0", "sw1", "sw2"]\n',
         's.toml:4:10: a link target'),
        ('[[events]]\nat = "5us"\naction = "set-traffic"\nload = -1\n', "s.toml:4:8: 'load' must be a number in [0, 10]"),
        ('[[events]]\nat = "5us"\naction = "set-traffic"\n', "s.toml:1:1: 'set-traffic' needs 'load' or 'pattern'"),
        ('[experiment]\nname = "x"\n', "s.toml:1:1: unknown key 'experiment'"),
        ('[[events]\n', "s.toml:1:"),
    ])
    def test_bad_entries_give_one_line_errors(self, text, message):
        with pytest.raises(ConfigError) as err:
            scenario_from_text(text, "s.toml")
        assert message in str(err.value) and "\n" not in str(err.value)

    def test_the_shipped_example_runs(self):
        from pathlib import Path

        from ibfabric.scenario import load_scenario

        events = load_scenario(Path(__file__).parents[2] / "experiments" / "scenarios" / "failures.toml")
        sim = ibfabric.load("irregular16",
                            overrides={"**.traffic": "uniform", "**.load": "0.1", "**.packetSize": "256B"})
        sim.apply_events(events)
        s = sim.run("85us")
        assert [e["action"] for e in s["scenario"]] == [
            "fail-link", "fail-node", "restore-link", "link-up", "restore-node", "node-up", "set-traffic"]
        assert s["conservation_ok"] and s["drops_by_reason"]["port-down"] > 0

    def test_an_unknown_node_is_located_at_its_target_when_applied(self):
        events = scenario_from_text('[[events]]\nat = "5us"\naction = "fail-node"\ntarget = "sw99"\n', "s.toml")
        with pytest.raises(ConfigError, match=r"^s.toml:4:10: no node 'sw99'"):
            small().apply_events(events)

    def test_cli_run_scenario(self, tmp_path, capsys):
        ned = tmp_path / "small.ned"
        ned.write_text(SMALL)
        path = tmp_path / "scenario.toml"
        path.write_text(SCENARIO)
        assert main(["run", str(ned), "--traffic", "uniform", "--load", "0.3", "--time", "25us",
                     "--scenario", str(path), "--json", "--no-progress"]) == 0
        s = json.loads(capsys.readouterr().out)
        assert [e["action"] for e in s["scenario"]][:2] == ["fail-link", "fail-node"]
        assert s["drops_by_reason"]["port-down"] > 0

    def test_cli_bad_scenario_is_one_line(self, tmp_path, capsys):
        path = tmp_path / "bad.toml"
        path.write_text('[[events]]\nat = "5us"\naction = "explode"\ntarget = "sw0"\n')
        assert main(["run", "irregular16", "--scenario", str(path), "--no-progress"]) != 0
        err = capsys.readouterr().err.strip()
        assert "bad.toml:3:10: unknown action 'explode'" in err and "Traceback" not in err


class TestExperimentEvents:
    EXP = """
[experiment]
name = "fail"
topology = "{ned}"
time = "20us"

[parameters]
"**.traffic" = "uniform"
"**.load" = "0.3"
"**.mtu" = "256B"

[iterations]
sw = ["sw1", "sw4"]

[[events]]
at = "5us"
action = "fail-node"
target = "${{sw}}"
"""

    def test_a_sweep_iterates_over_targets(self, tmp_path):
        ned = tmp_path / "small.ned"
        ned.write_text(SMALL)
        exp = Experiment.from_text(self.EXP.format(ned=ned), "exp.toml")
        runs = exp.runs()
        assert [r.events[0].target for r in runs] == ["sw1", "sw4"]
        assert runs[0].run_id != runs[1].run_id and runs[0].config()["events"][0]["target"] == "sw1"
        from ibfabric.sweep import execute

        out = execute(runs[1])
        assert out.record["status"] == "ok"
        s = json.loads(out.files["summary.json"])
        assert s["scenario"][0]["target"] == "sw4" and s["conservation_ok"]

    def test_without_events_run_ids_do_not_change(self):
        exp = Experiment.from_text('[experiment]\nname = "x"\ntopology = "irregular16"\ntime = "10us"\n')
        assert "events" not in exp.runs()[0].config()

    def test_bad_event_in_an_experiment(self, tmp_path):
        text = self.EXP.format(ned="irregular16").replace('action = "fail-node"', 'action = "fail-node"\nload = 1')
        with pytest.raises(ExperimentError, match=r"^exp.toml:18:1: unknown key 'load'"):
            Experiment.from_text(text, "exp.toml")

    def test_unknown_variable_in_an_event(self):
        text = self.EXP.format(ned="irregular16").replace("${sw}", "${switch}")
        with pytest.raises(ExperimentError, match="unknown variable"):
            Experiment.from_text(text, "exp.toml")
