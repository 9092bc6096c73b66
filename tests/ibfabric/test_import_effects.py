"""Importing ibfabric, or its pytest plugin (``ibfabric.testing``, which pytest imports in every
session of an environment where ibfabric is installed), changes nothing outside ibfabric and
writes no file (docs/performance.md, "What importing ibfabric does")."""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys
import textwrap

import pytest

#: Runs in a fresh interpreter.  FIRST says what it imports before ibfabric: "ibfabric" (nothing:
#: ibfabric's import is the one that imports salabim and attrs) or "dependencies" (salabim and
#: attrs first, so that their namespaces can be compared with what they hold afterwards).  Prints
#: what changed, as JSON.
PROBE = textwrap.dedent(
    """
    import builtins, json, sys, types

    FIRST = {first!r}

    def callables(module):
        # every function, class and module of a namespace (the things a patch replaces)
        return {{k: v for k, v in vars(module).items() if callable(v) or isinstance(v, types.ModuleType)}}

    def changed(before, module):
        now = vars(module)
        return sorted(k for k, v in before.items() if now.get(k, None) is not v)

    builtins_before = dict(vars(builtins))
    meta_path_before = list(sys.meta_path)
    urllib_request_before = sys.modules.get("urllib.request")
    spaces = {{}}
    if FIRST == "dependencies":
        import attr._make, salabim.salabim
        spaces = {{"attr._make": callables(attr._make), "salabim.salabim": callables(salabim.salabim)}}

    found = {{}}

    def check(stage):
        found[stage] = {{
            "builtins": changed(builtins_before, builtins) + sorted(set(vars(builtins)) - set(builtins_before)),
            "sys.meta_path": [repr(f) for f in sys.meta_path if not any(f is g for g in meta_path_before)]
                             + [repr(f) for f in meta_path_before if not any(f is g for g in sys.meta_path)],
        }}
        for name, before in spaces.items():
            found[stage][name] = changed(before, sys.modules[name])

    import ibfabric.testing
    check("import ibfabric.testing")
    import ibfabric
    check("import ibfabric")
    sim = ibfabric.Simulation(
        "network tiny {{ submodules: a: HCA; b: HCA; connections: a.port[1] <--> Link <--> b.port[1]; }}",
        overrides={{"**.traffic": "uniform", "**.load": "0.3"}}, seed=1)
    assert sim.run("2us")["packets_delivered"] > 0
    check("build and run")

    # what urllib.request is before this process imports it itself (salabim imports it), then after
    seen = getattr(sys.modules.get("urllib"), "request", None)
    import urllib, urllib.request
    real = sys.modules["urllib.request"]
    found["urllib.request"] = {{
        "exactly a module": type(real) is types.ModuleType and type(urllib.request) is types.ModuleType,
        "the same module": urllib.request is real and seen in (None, real)
                           and urllib_request_before in (None, real),
        "the standard library's file": (real.__file__ or "").replace("\\\\", "/").endswith("urllib/request.py"),
        "has urlopen": "urlopen" in vars(real),
    }}
    print(json.dumps(found))
    """
)


@functools.lru_cache(maxsize=None)
def probe(first: str) -> dict:
    proc = subprocess.run([sys.executable, "-c", PROBE.format(first=first)], capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


class TestNothingOutsideIbfabricChanges:
    @pytest.mark.parametrize("first", ["ibfabric", "dependencies"])
    def test_builtins_import_machinery_salabim_and_attrs_are_as_they_were(self, first):
        found = probe(first)
        stages = ("import ibfabric.testing", "import ibfabric", "build and run")
        nothing = {"builtins": [], "sys.meta_path": []}
        if first == "dependencies":
            nothing.update({"attr._make": [], "salabim.salabim": []})
        assert {stage: found[stage] for stage in stages} == {stage: nothing for stage in stages}

    @pytest.mark.parametrize("first", ["ibfabric", "dependencies"])
    def test_urllib_request_is_the_real_module(self, first):
        found = probe(first)
        assert found["urllib.request"] == dict.fromkeys(
            ["exactly a module", "the same module", "the standard library's file", "has urlopen"], True)


IMPORTS = "import ibfabric.testing, ibfabric; print(ibfabric.__version__)"


class TestImportWritesNothing:
    @pytest.mark.parametrize("where", ["IBFABRIC_CACHE_DIR", "XDG_CACHE_HOME", "HOME"])
    def test_no_file_in_the_cache_places(self, where, tmp_path):
        place = tmp_path / "empty"
        place.mkdir()
        env = {k: v for k, v in os.environ.items() if k not in ("IBFABRIC_CACHE_DIR", "XDG_CACHE_HOME")}
        env[where] = str(place)
        if where != "HOME":
            env["HOME"] = str(tmp_path / "home-not-used")  # (made by nobody: a write there fails the test too)
        proc = subprocess.run([sys.executable, "-c", IMPORTS], capture_output=True, text=True, timeout=300, env=env)
        assert proc.returncode == 0, proc.stderr[-3000:]
        written = [os.path.relpath(os.path.join(root, name), tmp_path)
                   for root, dirs, files in os.walk(tmp_path) for name in dirs + files]
        assert written == ["empty"]

    def test_a_build_may_keep_its_parse(self, tmp_path):
        """(What the test above does not forbid: building a simulation keeps the parsed NED files.)"""
        env = {**os.environ, "IBFABRIC_CACHE_DIR": str(tmp_path)}
        code = IMPORTS + "\nibfabric.Simulation('irregular16', seed=1)"
        proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, env=env)
        assert proc.returncode == 0, proc.stderr[-3000:]
        assert list(tmp_path.glob("ned-ast-*"))
