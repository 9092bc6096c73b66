"""The plugin contract: hooks, registries, per-simulation managers, a real third-party package."""

from __future__ import annotations

import inspect
import os
import re
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

    @staticmethod
    def numpy_sections(doc: str) -> dict[str, list[str]]:
        """NumPy docstring sections (``Parameters``, ``Returns``...) -> their lines."""
        lines = doc.splitlines()
        out: dict[str, list[str]] = {"": []}
        current = ""
        for i, line in enumerate(lines):
            if i + 1 < len(lines) and lines[i + 1].strip() and set(lines[i + 1].strip()) == {"-"} and line.strip():
                current = line.strip()
                out[current] = []
            elif not (line.strip() and set(line.strip()) == {"-"}):
                out[current].append(line)
        return out

    def test_every_hook_is_documented(self):
        for f in self.spec_functions():
            doc = inspect.getdoc(f) or ""
            sections = self.numpy_sections(doc)
            assert len([x for x in sections[""] if x.strip()]) >= 1, f"{f.__name__}: no summary"
            params = sections.get("Parameters")
            assert params, f"{f.__name__}: no NumPy 'Parameters' section"
            described: dict[str, list[str]] = {}
            for line in params:
                m = re.match(r"(\w+) : \S", line)
                if m:
                    name = m.group(1)
                    described[name] = []
                elif line.startswith("    ") and described:
                    described[name].append(line.strip())
            assert list(described) == list(inspect.signature(f).parameters), (
                f"{f.__name__}: 'Parameters' names {list(described)}, the hook takes"
                f" {list(inspect.signature(f).parameters)}")
            for name, text in described.items():
                assert " ".join(text).strip(), f"{f.__name__}: parameter '{name}' has no description"
            assert "Returns" in sections, f"{f.__name__}: no NumPy 'Returns' section"

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
        names = plugins.vl_arbiters.names()  # the built-ins and whatever other plugins are installed
        assert {"iba-vlarb", "round-robin"} <= set(names)
        with pytest.raises(UnknownName) as info:
            plugins.vl_arbiters["wrr"]
        assert str(info.value) == f"unknown VL arbiter 'wrr' (valid: {', '.join(names)})"

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


class TestThirdPartyPackage:
    def test_listed_by_the_cli(self, demo_site):
        env = dict(os.environ, PYTHONPATH=str(demo_site))
        out = subprocess.run([sys.executable, "-m", "ibfabric", "plugins"], env=env, check=True,
                             capture_output=True, text=True).stdout
        for name in ("demo-bfs", "strict-priority", "lottery", "neighbour", "random-early", "from-input",
                     "credit-lottery", "flat-share", "demo.DeliveryCounter", "ibfabric-demo-plugin==1.0.0"):
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

    def test_one_that_cannot_be_imported_is_named(self, tmp_path, monkeypatch):
        info = tmp_path / "broken_routing-0.3.dist-info"
        info.mkdir()
        (info / "METADATA").write_text("Metadata-Version: 2.1\nName: broken-routing\nVersion: 0.3\n")
        (info / "entry_points.txt").write_text("[ibfabric]\nbroken = ibfabric_no_such_module\n")
        monkeypatch.syspath_prepend(str(tmp_path))
        with pytest.raises(PluginError, match=r"^cannot load ibfabric plugin 'broken' \(broken-routing 0\.3\): "
                                              r"ModuleNotFoundError: No module named 'ibfabric_no_such_module'$"):
            PluginSet.load()
        assert "minhop" in PluginSet.load(block=["broken"]).routing_engines

    def test_an_installed_plugin_passed_again_is_loaded_once(self, demo_site, monkeypatch):
        monkeypatch.syspath_prepend(str(demo_site))
        import ibfabric_demo

        plugins = PluginSet.load(plugins=[ibfabric_demo])  # was: "cannot register plugin 'ibfabric_demo'"
        assert plugins.pm.get_name(ibfabric_demo) == "demo"  # registered once, under its entry point's name
        assert plugins.routing_engines.get("demo-bfs").plugin == "demo"

    def test_its_own_tests_pass_with_the_exported_fixtures(self, demo_site, tmp_path):
        """The demo package's tests use only ibfabric's fixtures, which pytest finds through
        ibfabric's ``pytest11`` entry point (the tests have no conftest.py)."""
        env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
        env["PYTHONPATH"] = str(demo_site)  # the installed package, not the source tree
        cmd = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", str(DEMO / "tests")]
        proc = subprocess.run(cmd, env=env, cwd=tmp_path, capture_output=True, text=True)
        assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
        counts = dict((word, int(n)) for n, word in re.findall(r"(\d+) (passed|failed|errors?|skipped)", proc.stdout))
        assert counts.get("passed", 0) > 0 and set(counts) == {"passed"}, proc.stdout[-2000:]
        # without ibfabric's plugin the same tests cannot find their fixtures
        blocked = subprocess.run(cmd + ["-p", "no:ibfabric", "-x"], env=env, cwd=tmp_path, capture_output=True, text=True)
        assert blocked.returncode != 0 and "fixture 'small_fabric' not found" in blocked.stdout, blocked.stdout[-2000:]


#: ibfabric's tests that look at the names registered for a role: none may assume that no other plugin is
#: installed (they assert that the built-ins are there, or build what they expect from the registry).
NAME_LISTING_TESTS = [
    "tests/plugins/test_manager.py::TestRegistry::test_unknown_name_lists_the_valid_ones",
    "tests/ibfabric/test_cli.py::TestErrors::test_one_line_errors",
    "tests/ibfabric/test_cli.py::TestErrors::test_unknown_arbiter_lists_every_registered_one",
    "tests/ibfabric/test_cli.py::TestPluginsAndTopo::test_plugins_lists_roles_and_origins",
    "tests/plugins/test_multicast_routing.py::TestPluginRole::test_listed_with_the_other_roles",
    "tests/components/test_multicast_groups.py::TestSubnetManager::test_errors_are_located_at_the_subnet_manager",
    "tests/components/test_qos_sim.py::TestSetUp::test_unknown_policy_lists_the_valid_ones",
    "tests/plugins/routing/test_engines.py::TestRegistry::test_unknown_engine_lists_the_valid_ones",
    "tests/plugins/test_selectors.py::TestSelectors::test_registered",
    "tests/test_docs.py::test_the_built_in_patterns_are_found",
]


class TestOtherPluginsInstalled:
    def test_the_extra_plugin_registers_a_name_for_every_role(self, extra_site, monkeypatch):
        monkeypatch.syspath_prepend(str(extra_site))
        plugins = PluginSet.load()
        for attr in ROLES:
            names = getattr(plugins, attr).names()
            assert names[0].startswith("aaa") and names[-1].startswith("zzz"), (attr, names)
        assert plugins.distribution("extra-names") == "ibfabric-extra-names==1.0"

    def test_ibfabric_tests_that_list_names_still_pass(self, extra_site):
        """Installing a third-party plugin must not break ibfabric's own test suite (issue 35, item 4):
        the tests that look at a role's names run with a plugin installed that registers a name
        before and after the built-ins' in every role."""
        root = Path(__file__).resolve().parents[2]
        env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
        env["PYTHONPATH"] = os.pathsep.join([str(extra_site), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
        cmd = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "-rfE", *NAME_LISTING_TESTS]
        proc = subprocess.run(cmd, env=env, cwd=root, capture_output=True, text=True)
        assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]


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
