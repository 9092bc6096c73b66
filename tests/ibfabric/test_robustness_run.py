"""Run-level robustness: durations, loads, parameter levels, QoS slots, plugin failures and warnings.

Every user mistake is one line, ``ibfabric: error: ...``, with exit status 2;
everything that looks wrong but runs is one line, ``ibfabric: warning: ...``,
on stderr and in ``summary["warnings"]``.
"""

from __future__ import annotations

import json
import time
import warnings

import numpy as np
import pytest

from ibfabric import hookimpl
from ibfabric.checks import MAX_LOAD, IbfabricWarning
from ibfabric.cli import main
from ibfabric.errors import ConfigError, PluginError
from ibfabric.ned_like import OverrideSet
from ibfabric.plugins.manager import PluginSet
from ibfabric.simulation import Simulation, parse_time

# four hosts on one switch, links of 2 Gb/s of data
STAR = """
network star
{
    parameters:
        **.load = 0.5;
    submodules:
        sw: Switch { numPorts = 4; }
        h[4]: HCA;
    connections:
        for i=0..3 { h[i].port[1] <--> Link { width = "1x"; speed = "SDR"; } <--> sw.port[i+1]; }
}
"""

# the same with two data VLs and traffic on SLs 0 and 1, so that ports arbitrate
STAR2VL = """
network star2
{
    parameters:
        **.numVLs = 2;
        **.sl = "0..1";
    submodules:
        sw: Switch { numPorts = 4; }
        h[4]: HCA;
    connections:
        for i=0..3 { h[i].port[1] <--> Link <--> sw.port[i+1]; }
}
"""


def hosts_on_switches(n: int, per_switch: int = 8) -> str:
    """*n* hosts, *per_switch* to a switch, the switches in a line."""
    k = -(-n // per_switch)
    lines = [f"network line{n}", "{", "    submodules:", f"        sw[{k}]: Switch {{ numPorts = {per_switch + 2}; }}",
             f"        h[{n}]: HCA;", "    connections:"]
    lines += [f"        h[{i}].port[1] <--> sw[{i // per_switch}].port[{i % per_switch + 1}];" for i in range(n)]
    lines += [f"        sw[{j}].port[{per_switch + 1}] <--> sw[{j + 1}].port[{per_switch + 2}];" for j in range(k - 1)]
    return "\n".join(lines + ["}"]) + "\n"


def cli(capsys, *argv):
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def one_error(capsys, *argv) -> str:
    """Run the CLI expecting a user error: exit 2, one line on stderr; return the message."""
    t0 = time.perf_counter()
    code, _, err = cli(capsys, *argv)
    assert code == 2, err
    assert err.endswith("\n") and err.count("\n") == 1, err
    assert err.startswith("ibfabric: error: "), err
    assert time.perf_counter() - t0 < 10, "an error must come before the simulation, not after it"
    return err[len("ibfabric: error: "):].strip()


def warning_lines(err: str) -> list[str]:
    lines = [line for line in err.splitlines() if line.startswith("ibfabric: warning: ")]
    return [line[len("ibfabric: warning: "):] for line in lines]


@pytest.fixture
def star_file(tmp_path):
    path = tmp_path / "star.ned"
    path.write_text(STAR)
    return str(path)


class TestDurations:
    def test_bare_number_on_the_command_line_asks_for_a_unit(self, capsys):
        assert one_error(capsys, "run", "--time", "10") == "--time 10: '10' has no unit: a duration needs one, e.g. \"10ns\" or \"10us\""
        assert one_error(capsys, "run", "--warmup", "5").startswith("--warmup 5: '5' has no unit")

    def test_infinite_and_absurd_durations(self, capsys):
        assert one_error(capsys, "run", "--time", "1e400s") == "--time 1e400s: not a finite duration"
        assert "longer than 1000s" in one_error(capsys, "run", "--time", "2000s")
        assert "negative" in one_error(capsys, "run", "--warmup=-1us")
        assert "expected a time" in one_error(capsys, "run", "--time", "5GB")

    def test_time_at_or_before_the_warmup(self, capsys):
        for t in ("5us", "10us"):
            msg = one_error(capsys, "run", "--time", t, "--warmup", "10us")
            assert msg.startswith("--time must be after --warmup"), msg

    def test_api_numbers_are_ns_and_must_be_finite(self):
        assert parse_time(10) == 10.0 and parse_time("10us") == 10000.0
        for bad in (float("inf"), float("nan"), "1e400s", -1, 10**400):
            with pytest.raises(ConfigError, match="finite|negative"):
                parse_time(bad, "run time")
        sim = Simulation(STAR, overrides={"**.traffic": "uniform"})
        with pytest.raises(ConfigError, match="bad run time '1e400s': not a finite duration"):
            sim.run("1e400s")
        with pytest.raises(ConfigError, match="bad warmup"):
            Simulation(STAR, warmup=float("inf"))


class TestLoad:
    def test_huge_load_is_rejected_at_once(self, capsys):
        msg = one_error(capsys, "run", "--load", "1e5")
        assert msg == f"--load must be in (0, {MAX_LOAD:g}] (got 100000): 1 is the link's data rate, more is overload"
        for bad in ("0", "-0.1", "nan", "inf"):
            assert one_error(capsys, "run", f"--load={bad}").startswith("--load must be in (0, 10]")

    def test_huge_load_in_a_topology_file(self):
        with pytest.raises(ConfigError, match=r"star\.h\[0\]: 'load' must be at most 10 \(got 100000\)"):
            Simulation(STAR, overrides={"**.traffic": "uniform", "**.load": "1e5"})

    def test_overload_at_the_bound_stays_fast(self):
        sim = Simulation(STAR, overrides={"**.traffic": "uniform", "**.load": str(MAX_LOAD)}, warmup="5us")
        t0 = time.perf_counter()
        s = sim.run("50us")
        assert time.perf_counter() - t0 < 10
        assert s["offered_load"] == pytest.approx(MAX_LOAD, rel=0.1) and s["saturated"]


class TestParameterLevels:
    """--set beats the options given, which beat the topology file, which beats the CLI's defaults."""

    def load_of(self, **kw):
        sim = Simulation(STAR, **kw)
        return {h.load for h in sim.hosts}

    def test_file_beats_defaults_and_options_beat_the_file(self):
        assert self.load_of(defaults={"**.load": "0.1"}) == {0.5}
        assert self.load_of(optional_overrides={"**.load": "0.3"}, defaults={"**.load": "0.1"}) == {0.3}
        assert self.load_of(overrides={"**.load": "0.2"}, optional_overrides={"**.load": "0.3"}) == {0.2}
        # a default where the file says nothing; default(...) in the file still wins over it
        no_load = STAR.replace("**.load = 0.5;", "")
        sim = Simulation(no_load, defaults={"**.load": "0.1", "**.nothing": "1"})
        assert {h.load for h in sim.hosts} == {0.1}
        sim = Simulation(STAR.replace("0.5", "default(0.4)"), defaults={"**.load": "0.1"})
        assert {h.load for h in sim.hosts} == {0.4}
        assert ("**.load", "0.1") not in sim.parameters_set()

    def test_override_set_defaults(self):
        o = OverrideSet({"**.a": "1"}, defaults={"**.b": "2", "**.c": "3"})
        assert o.find("n.b") is None and o.find_default("n.b") == ("**.b", "2")
        assert o.find_default("n.a") is None and o.find("n.a") == ("**.a", "1")
        assert o.used() == [("**.a", "1"), ("**.b", "2")]
        assert o.unused() == []  # defaults may match nothing

    def _constant_run(self, capsys, *argv):
        code, out, err = cli(capsys, "run", *argv, "--arrival", "constant", "--time", "60us", "--warmup", "5us",
                             "--json", "--no-progress")
        assert code == 0, err
        return json.loads(out)

    def test_cli_load_file_and_flag(self, capsys, star_file):
        # constant arrivals: the offered load is the configured one to within a message per host
        assert self._constant_run(capsys, star_file)["offered_load"] == pytest.approx(0.5, rel=0.03)
        assert self._constant_run(capsys, star_file, "--load", "0.3")["offered_load"] == pytest.approx(0.3, rel=0.03)

    def test_default_scenario_is_unchanged(self, capsys, tmp_path):
        code, _, err = cli(capsys, "run", "--time", "15us", "--out", str(tmp_path), "--no-progress")
        assert code == 0, err
        params = [line.split(" ", 2)[1:] for line in (tmp_path / "results.sca").read_text().splitlines()
                  if line.startswith("param ")]
        # (irregular16 itself sets routing = "updn", the default of --routing: the file's value is used)
        assert params == [["**.traffic", "uniform"], ["**.load", "0.1"], ["**.packetSize", "256B"]]
        s = json.loads((tmp_path / "summary.json").read_text())
        assert s["routing"] == "updn" and s["warnings"] == []


class TestQosSlots:
    def test_bandwidth_above_the_link_rate(self, capsys):
        msg = one_error(capsys, "qos", "slots", "--bandwidth", "10Gbps", "--link", "1x")
        assert msg == ("--bandwidth 10Gbps exceeds the data rate of a 1x link (2.5 Gb/s): a connection can reserve"
                       " at most every slot of the frame")
        assert one_error(capsys, "qos", "slots", "--bandwidth", "1e400Gbps") == "--bandwidth 1e400Gbps: not a finite rate"

    def test_the_whole_link_is_allowed(self, capsys):
        code, out, _ = cli(capsys, "qos", "slots", "--bandwidth", "2.5Gbps", "--link", "1x")
        assert code == 0 and "100.0000% of the link" in out


class TestTrafficWarning:
    def test_bit_reversal_on_89_hosts(self, capsys, tmp_path):
        path = tmp_path / "line89.ned"
        path.write_text(hosts_on_switches(89))
        code, out, err = cli(capsys, "run", str(path), "--traffic", "bit-reversal", "--time", "12us", "--warmup",
                             "2us", "--json", "--no-progress")
        assert code == 0, err
        expected = ("traffic 'bit-reversal': 37 of 89 sources send nothing (their image is themselves, or no endpoint"
                    " when the number of endpoints is not a power of two), so the offered load is 58% of the"
                    " configured one (about 0.0584 instead of 0.1)")
        assert expected in warning_lines(err)
        assert expected in json.loads(out)["warnings"]

    def test_patterns_that_keep_the_load_say_nothing(self):
        for pattern in ("uniform", "hot-spot"):
            sim = Simulation(STAR, overrides={"**.traffic": pattern})
            assert sim.warnings == []


class TestRoutingCycle:
    def test_minhop_on_an_irregular_fabric(self, capsys):
        code, _, err = cli(capsys, "run", "--routing", "minhop", "--time", "12us", "--warmup", "2us", "--no-progress")
        assert code == 0, err
        (line,) = [w for w in warning_lines(err) if w.startswith("routing")]
        assert line.startswith("routing 'minhop' has a channel-dependency cycle (sw")
        assert line.endswith("): the network may deadlock")

    def test_updn_is_acyclic(self):
        from ibfabric.simulation import load

        assert load("irregular16", overrides={"**.routing": "updn"}).warnings == []

    def test_large_fabrics_walk_a_sample_of_sources(self, monkeypatch):
        import ibfabric.checks as checks
        from ibfabric.components.routing import routecheck

        seen = []
        walk = routecheck.route_walk

        def spy(tables, sources=None, **kw):
            seen.append(sources)
            return walk(tables, sources, **kw)

        monkeypatch.setattr(routecheck, "route_walk", spy)
        monkeypatch.setattr(checks, "ROUTE_CHECK_PAIRS", 100)
        from ibfabric.simulation import load

        sim = load("irregular16", overrides={"**.routing": "minhop"})
        assert seen and seen[0] is not None and len(seen[0]) == 16
        assert any("channel-dependency cycle" in w for w in sim.warnings)  # found in the sample too


class TestNotConnected:
    DANGLING = """
module Pod
{
    gates:
        inout up;
    submodules:
        s: Switch { numPorts = 4; }
        h[2]: HCA;
    connections allowunconnected:
        s.port[1] <--> up;
        for i=0..1 { h[i].port[1] <--> Link <--> s.port[i+2]; }
}

network dangle
{
    submodules:
        top: Switch { numPorts = 4; }
        p[2]: Pod;
        sm: SubnetManager;
    connections allowunconnected:
        top.port[1] <--> Link <--> p[0].up;
}
"""
    MESSAGE = ("the fabric is not connected: 3 of 7 InfiniBand nodes cannot reach the others (p[1].s, p[1].h[0],"
               " p[1].h[1]); no route leads to them from the rest (a gate left unconnected?)")

    def test_a_dangling_compound_gate_is_named(self, capsys, tmp_path):
        # p[1].up leads nowhere: p[1]'s switch and hosts are cut off from the rest (topo show: "connected: no")
        path = tmp_path / "dangle.ned"
        path.write_text(self.DANGLING)
        code, out, err = cli(capsys, "run", str(path), "--time", "12us", "--warmup", "2us", "--json", "--no-progress")
        assert code == 0, err
        assert self.MESSAGE in warning_lines(err) and self.MESSAGE in json.loads(out)["warnings"]

    def test_only_the_first_nodes_are_named(self):
        text = self.DANGLING.replace("p[2]: Pod;", "p[4]: Pod;")
        with pytest.warns(IbfabricWarning, match=r"not connected: 9 of 13 InfiniBand nodes cannot reach the others"
                                                 r" \(p\[1\].s, p\[1\].h\[0\], p\[1\].h\[1\], p\[2\].s,"
                                                 r" p\[2\].h\[0\], \.\.\. \(9 in all\)\)"):
            Simulation(text)

    def test_a_connected_fabric_says_nothing(self):
        assert not [w for w in Simulation(STAR).warnings if "not connected" in w]


class TestWarnings:
    def test_empty_window_in_the_api(self):
        sim = Simulation(STAR, overrides={"**.traffic": "uniform"}, warmup="10us")
        with pytest.warns(IbfabricWarning, match="the measurement window is empty"):
            s = sim.run("5us")
        assert s["warnings"] == [
            "the measurement window is empty: the simulation is at 5000 ns, not after the warm-up (10000 ns); nothing was"
            " measured"
        ]

    def test_saturation_goes_through_warn(self, capsys, star_file, tmp_path):
        code, out, err = cli(capsys, "run", star_file, "--load", "3", "--time", "40us", "--warmup", "5us",
                             "--out", str(tmp_path), "--no-progress")
        assert code == 0, err
        lines = warning_lines(err)
        assert len(lines) == len(err.splitlines()) == 1  # one line each, nothing else
        assert lines[0].startswith("the source backlog grew through the measurement window: the fabric is saturated")
        assert json.loads((tmp_path / "summary.json").read_text())["warnings"] == lines

    def test_warn_collects_once(self):
        sim = Simulation(STAR, overrides={"**.traffic": "uniform"})
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            sim.warn("something odd")
            sim.warn("something odd")
        assert sim.warnings == ["something odd"]
        assert [str(w.message) for w in caught] == ["something odd"]
        assert sim.summary()["warnings"][0] == "something odd"


# ------------------------------------------------------------------ plugin failures


class BadVL:
    """Chooses a VL that does not exist."""

    def __init__(self, config):
        pass

    def select(self, ready):
        return 7


class Raiser:
    """Raises inside select()."""

    def __init__(self, config):
        pass

    def select(self, ready):
        return [][1]


class NumpyLowest:
    """Lowest ready VL, as a numpy integer (a valid answer)."""

    def __init__(self, config):
        pass

    def select(self, ready):
        return np.int64(next(vl for vl, p in enumerate(ready) if p is not None))


class ExplodingDropper:
    def __init__(self, options, rng):
        pass

    def on_arrival(self, packet, buffer, now):
        return 1 / 0


class Everywhere:
    """A pattern whose destinations are not endpoints."""

    def __init__(self, num_hosts, options, rng):
        self.num_hosts = num_hosts

    def destinations(self, src, rng, n):
        return np.full(n, self.num_hosts + 5)


class Plugin:
    @hookimpl
    def ibfabric_register_vl_arbiters(self, register):
        register("bad-vl", BadVL)
        register("raiser", Raiser)
        register("numpy-lowest", NumpyLowest)

    @hookimpl
    def ibfabric_register_packet_droppers(self, register):
        register("exploding", ExplodingDropper)

    @hookimpl
    def ibfabric_register_traffic_patterns(self, register):
        register("everywhere", Everywhere)


class BrokenObserver:
    @hookimpl
    def ibfabric_simulation_built(self, simulation):
        raise KeyError("no such thing")


def plugin(obj, name):
    obj.__name__ = name
    return obj


def simulate(overrides, *plugins):
    sim = Simulation(STAR2VL, overrides={"**.traffic": "uniform", "**.load": "0.4", **overrides}, plugins=plugins)
    return sim.run("20us")


class TestPluginErrors:
    def test_arbiter_returning_an_invalid_vl(self):
        with pytest.raises(PluginError) as info:
            simulate({"**.arbiter": "bad-vl"}, plugin(Plugin(), "robust"))
        msg = str(info.value)
        assert "\n" not in msg
        assert msg.startswith("star2.h[")
        assert "VL arbiter 'bad-vl' (plugin 'robust'): select() returned 7, not one of the VLs with a packet ready" in msg

    def test_arbiter_raising(self):
        with pytest.raises(PluginError, match=r"VL arbiter 'raiser' \(plugin 'robust'\) raised IndexError in select\(\):"
                                              " list index out of range"):
            simulate({"**.arbiter": "raiser"}, plugin(Plugin(), "robust"))

    def test_a_valid_third_party_arbiter_runs(self):
        s = simulate({"**.arbiter": "numpy-lowest"}, plugin(Plugin(), "robust"))
        assert s["packets_delivered"] > 0 and s["conservation_ok"]

    def test_builtin_arbiters_are_not_wrapped(self):
        from ibfabric.plugins.arbiters import IBAVLArbiter

        sim = Simulation(STAR2VL)
        assert all(type(tx.arbiter) is IBAVLArbiter for tx in sim.ports)

    def test_strategy_method_raising_is_blamed_on_its_plugin(self):
        with pytest.raises(PluginError, match=r"^packet dropper 'exploding' \(plugin 'robust'\) raised"
                                              r" ZeroDivisionError in ExplodingDropper.on_arrival: division by zero$"):
            simulate({"**.dropper": "exploding"}, plugin(Plugin(), "robust"))

    def test_pattern_with_invalid_destinations(self):
        with pytest.raises(PluginError, match=r"traffic pattern 'everywhere' \(plugin 'robust'\): destinations\(\)"
                                              r" returned 9 for source 0, not an endpoint index 0..3"):
            simulate({"**.traffic": "everywhere"}, plugin(Plugin(), "robust"))

    def test_hook_raising_at_build(self):
        with pytest.raises(PluginError, match=r"^plugin 'observer' raised KeyError in"
                                              r" BrokenObserver.ibfabric_simulation_built: 'no such thing'$"):
            Simulation(STAR2VL, plugins=[plugin(BrokenObserver(), "observer")])

    def test_on_the_command_line(self, capsys, monkeypatch):
        load = PluginSet.load

        def with_plugin(plugins=(), block=(), **kw):
            return load(plugins=[*plugins, plugin(Plugin(), "robust")], block=block, **kw)

        monkeypatch.setattr(PluginSet, "load", with_plugin)
        msg = one_error(capsys, "run", "--arbiter", "bad-vl", "--set", "**.numVLs=2", "--set", "**.sl=0..1",
                        "--time", "12us", "--warmup", "2us", "--no-progress")
        assert "VL arbiter 'bad-vl' (plugin 'robust'): select() returned 7" in msg


class TestRoutingOptions:
    def test_a_huge_root_lid_is_one_line(self, capsys):
        msg = one_error(capsys, "routes", "irregular16", "--routing", "updn", "--set", "root=" + "9" * 5000)
        assert msg == "root '99999999999999999999...': no endpoint has that LID"
