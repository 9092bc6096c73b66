"""The plugin contract: hooks, registries, per-simulation managers, a real third-party package."""

from __future__ import annotations

import inspect
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ibfabric import hookimpl
from ibfabric.errors import PluginError
from ibfabric.plugins import ROLES, PluginSet, Registry, UnknownName
from ibfabric.plugins import hookspecs
from ibfabric.simulation import Simulation

DEMO = Path(__file__).parent.parent / "data" / "demo_plugin"
STAR = """
import demo.*;
network star
{
    submodules:
        sw: Switch { numPorts = 4; }
        h[4]: HCA;
        counter: DeliveryCounter;
    connections:
        for i=0..3 { h[i].port[1] <--> Link <--> sw.port[i+1]; }
}
"""


class TestHookSpecs:
    def spec_functions(self):
        return [f for name, f in inspect.getmembers(hookspecs, inspect.isfunction) if name.startswith("ibfabric_")]

    def test_every_hook_is_documented(self):
        for f in self.spec_functions():
            doc = inspect.getdoc(f) or ""
            assert len(doc.splitlines()) > 2, f.__name__
            for arg in inspect.signature(f).parameters:
                assert f":param {arg}:" in doc, (f.__name__, arg)
            assert ":returns:" in doc, f.__name__

    def test_every_contribution_hook_has_a_role(self):
        hooks = {f.__name__ for f in self.spec_functions() if f.__name__.startswith("ibfabric_register_")}
        assert hooks == {h for h, _ in ROLES.values()}

    def test_observer_hooks_are_called(self):
        calls = []

        class Observer:
            @hookimpl
            def ibfabric_simulation_built(self, simulation):
                calls.append(("built", simulation.network.name))

            @hookimpl
            def ibfabric_run_finished(self, simulation, summary):
                calls.append(("finished", summary["packets_delivered"]))
                summary["observed"] = True

        sim = Simulation("network tiny { submodules: a: HCA; b: HCA; connections: a.port[1] <--> Link <--> b.port[1]; }",
                         plugins=[Observer()])
        s = sim.run("1us")
        assert calls == [("built", "tiny"), ("finished", 0)]
        assert s["observed"] is True


class TestRegistry:
    def test_duplicate_names_are_rejected(self):
        r = Registry("VL arbiter")
        r.add("x", object(), plugin="one")
        with pytest.raises(PluginError, match="registered twice .*'one'.*'two'"):
            r.add("x", object(), plugin="two")

    def test_unknown_name_lists_the_valid_ones(self):
        plugins = PluginSet.load()
        with pytest.raises(UnknownName, match=r"unknown VL arbiter 'wrr' \(valid: iba-vlarb, round-robin"):
            plugins.vl_arbiters["wrr"]

    def test_builtins_come_from_entry_points(self):
        plugins = PluginSet.load()
        assert plugins.routing_engines.get("minhop").plugin == "minhop"
        assert plugins.vl_arbiters.get("iba-vlarb").plugin == "arbiters"
        assert plugins.distribution("arbiters").startswith("ibfabric==")

    def test_block_removes_a_plugin(self):
        plugins = PluginSet.load(block=["traffic"])
        assert "uniform" not in plugins.traffic_patterns

    def test_a_plugin_that_raises_is_named(self):
        class Broken:
            @hookimpl
            def ibfabric_register_vl_arbiters(self, register):
                raise RuntimeError("boom")

        with pytest.raises(PluginError, match="raised in ibfabric_register_vl_arbiters: RuntimeError: boom"):
            PluginSet.load(plugins=[Broken()])

    def test_a_plugin_with_an_unknown_hook_is_refused(self):
        class Typo:
            @hookimpl
            def ibfabric_register_vl_arbitres(self, register):
                pass

        with pytest.raises(PluginError, match="invalid"):
            PluginSet.load(plugins=[Typo()])

    def test_unknown_plugin_name_in_a_topology(self):
        with pytest.raises(Exception, match="unknown VL arbiter 'fifo' \\(valid:"):
            Simulation("network t { submodules: a: HCA { arbiter = \"fifo\"; } b: HCA;"
                       " connections: a.port[1] <--> Link <--> b.port[1]; }")


def _can_build_offline() -> bool:
    """Whether this environment's setuptools can build a wheel by itself (else pip fetches one)."""
    try:
        import setuptools
    except ImportError:
        return False
    major = int(setuptools.__version__.split(".")[0])
    if major >= 71:
        return True
    try:
        import wheel  # noqa: F401
    except ImportError:
        return False
    return major >= 61


@pytest.fixture(scope="module")
def demo_site(tmp_path_factory):
    """The demo plugin package pip-installed into a directory of its own."""
    target = tmp_path_factory.mktemp("site")
    cmd = [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target", str(target), str(DEMO)]
    if _can_build_offline():
        cmd.insert(4, "--no-build-isolation")
    proc = subprocess.run(cmd, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return target


class TestThirdPartyPackage:
    def test_listed_by_the_cli(self, demo_site):
        env = dict(os.environ, PYTHONPATH=str(demo_site))
        out = subprocess.run([sys.executable, "-m", "ibfabric", "plugins"], env=env, check=True,
                             capture_output=True, text=True).stdout
        for name in ("demo-bfs", "strict-priority", "neighbour", "random-early", "copy-everywhere",
                     "first-path", "flat-share", "demo.DeliveryCounter", "ibfabric-demo-plugin==1.0.0"):
            assert name in out, name

    def test_usable_without_changing_ibfabric(self, demo_site, monkeypatch):
        monkeypatch.syspath_prepend(str(demo_site))
        sim = Simulation(
            STAR,
            overrides={"**.routing": "demo-bfs", "**.arbiter": "strict-priority", "**.traffic": "neighbour",
                       "**.load": "0.5", "**.dropper": "random-early", "**.dropperOptions": '"p=0.1"'},
            seed=2,
        )
        s = sim.run("100us")
        assert s["routing"] == "demo-bfs"
        assert s["packets_dropped"] == s["drops_by_reason"]["dropper"] > 0
        assert s["conservation_ok"]
        assert sim.module("counter").final == s["packets_delivered"] > 0
        assert sim.plugins.routing_engines.get("demo-bfs").plugin == "demo"
        assert sim.plugins.distribution("demo") == "ibfabric-demo-plugin==1.0.0"

    def test_blocked_by_name(self, demo_site, monkeypatch):
        monkeypatch.syspath_prepend(str(demo_site))
        assert "demo-bfs" in PluginSet.load().routing_engines
        assert "demo-bfs" not in PluginSet.load(block=["demo"]).routing_engines


class TestPluginFailuresAtRunTime:
    """A plugin's own bug is reported as one line naming it, not as a traceback."""

    def _broken(self, hook, exc=ZeroDivisionError("division by zero")):
        def factory(*args, **kwargs):
            raise exc

        class Broken:
            pass

        def impl(self, register):
            register("broken", factory)

        setattr(Broken, hook, hookimpl(impl))
        return Broken()

    @pytest.mark.parametrize("hook, override, role", [
        ("ibfabric_register_routing_engines", "**.routing", "routing engine"),
        ("ibfabric_register_vl_arbiters", "**.arbiter", "VL arbiter"),
        ("ibfabric_register_packet_droppers", "**.dropper", "packet dropper"),
        ("ibfabric_register_traffic_patterns", "**.traffic", "traffic pattern"),
    ])
    def test_factory_exception_names_the_plugin(self, hook, override, role):
        text = ("network t { submodules: s: Switch { numPorts = 2; } a: HCA; b: HCA;"
                " connections: a.port[1] <--> Link <--> s.port[1]; b.port[1] <--> Link <--> s.port[2]; }")
        with pytest.raises(PluginError, match=rf"{role} 'broken' \(plugin 'Broken-0'\) raised ZeroDivisionError: division by zero"):
            Simulation(text, overrides={override: "broken", "**.load": "0.1", **({} if override == "**.traffic" else {"**.traffic": "uniform"})},
                       plugins=[self._broken(hook)])
