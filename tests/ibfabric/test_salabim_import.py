"""ibfabric._salabim_import: salabim imported without urllib.request and with its aliases'
code kept between processes, and the same salabim as a plain ``import salabim``."""

from __future__ import annotations

import builtins
import json
import os
import subprocess
import sys
import textwrap
import types

import pytest

from ibfabric import _salabim_import
from tests.ibfabric.test_attrs_cache import SHAPE

#: Reports everything salabim's Environment holds (the aliases set_environment_aliases made:
#: the shape of each generated function, the name of each other object), and what was imported.
PROBE = SHAPE + textwrap.dedent(
    """
    import json, sys
    if sys.argv[1] == "ibfabric":
        import ibfabric.simulation
        from ibfabric import _salabim_import
        stats = dict(_salabim_import.stats)
    else:
        stats = None
    import salabim

    def describe(v):
        v = getattr(v, "__func__", v)  # a staticmethod's function
        code = getattr(v, "__code__", None)
        if code is not None and code.co_filename == "<string>":
            return ["generated", shape(code), repr(v.__defaults__), v.__doc__ == getattr(salabim, v.__name__).__doc__]
        name = getattr(v, "__qualname__", None)
        return [type(v).__name__, f"{getattr(v, '__module__', '')}.{name}" if name else repr(v)]

    env = {k: describe(v) for k, v in sorted(vars(salabim.Environment).items()) if k != "__dict__"}
    imported = sorted(m for m in ("urllib.request", "http.client", "ssl") if m in sys.modules)
    from urllib import request as via_from  # the package's attribute (the stand-in, if any)
    urlopen = salabim.salabim.urllib.request.urlopen
    import urllib.request
    print(json.dumps({"stats": stats, "env": env, "imported": imported, "exec": exec is __builtins__.exec,
                      "urlopen": urlopen is urllib.request.urlopen and via_from.urlopen is urlopen,
                      "finder": any(type(f).__module__ == "ibfabric._salabim_import" for f in sys.meta_path)}))
    """
)


def probe(mode: str, cache_dir: str) -> dict:
    env = {**os.environ, "IBFABRIC_CACHE_DIR": cache_dir}
    proc = subprocess.run([sys.executable, "-c", PROBE, mode], capture_output=True, text=True, timeout=300, env=env)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def kept_file(cache) -> list:
    return sorted(cache.glob("salabim-aliases-*.marshal"))


class TestAcrossProcesses:
    def test_the_same_salabim_without_urllib_request_and_compiled_once(self, tmp_path):
        cache = tmp_path / "cache"
        plain = probe("plain", str(cache))
        first = probe("ibfabric", str(cache))
        second = probe("ibfabric", str(cache))
        assert plain["stats"] is None and plain["imported"] == ["http.client", "ssl", "urllib.request"]
        assert len(plain["env"]) > 150 and sum(v[0] == "generated" for v in plain["env"].values()) > 10
        for run in (first, second):
            assert run["env"] == plain["env"]  # every alias, generated code included
            assert run["imported"] == []  # until something used it
            assert run["urlopen"] and run["exec"] and not run["finder"]
        assert first["stats"]["kept"] == 0 and first["stats"]["compiled"] > 150 and first["stats"]["deferred"]
        assert second["stats"] == {"kept": first["stats"]["compiled"], "compiled": 0, "deferred": True}
        assert len(kept_file(cache)) == 1 and not list(cache.glob(".tmp-*"))

    def test_a_damaged_file_is_ignored_and_replaced(self, tmp_path):
        cache = tmp_path / "cache"
        first = probe("ibfabric", str(cache))
        (path,) = kept_file(cache)
        path.write_bytes(b"\x00 not marshal")
        again = probe("ibfabric", str(cache))
        assert again["stats"]["compiled"] == first["stats"]["compiled"] and again["env"] == first["env"]
        assert probe("ibfabric", str(cache))["stats"]["compiled"] == 0

    def test_nothing_is_written_without_a_cache_directory(self, tmp_path, monkeypatch):
        monkeypatch.setenv("HOME", str(tmp_path))
        monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
        run = probe("ibfabric", "")
        assert run["stats"] == {"kept": 0, "compiled": 0, "deferred": True} and run["imported"] == []
        assert list(tmp_path.rglob("salabim-aliases-*")) == []

    def test_salabim_imported_first_is_left_alone(self, tmp_path):
        code = ("import sys, salabim, ibfabric; from ibfabric import _salabim_import as m; "
                "print(m.stats, any(type(f).__name__ == '_Finder' for f in sys.meta_path))")
        env = {**os.environ, "IBFABRIC_CACHE_DIR": str(tmp_path)}
        proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, env=env)
        assert proc.stdout.split() == ["{'kept':", "0,", "'compiled':", "0,", "'deferred':", "False}", "False"]


def aliases_like(window, source: str, flags_from=None):
    """Run *source* with ``window.exec`` from a function named as salabim's, in the window's module."""
    g = window.module.__dict__
    g["_exec"] = window.exec
    exec(compile("def set_environment_aliases(s):\n    _exec(s)\n    return sorted(k for k in locals() if k != 's')\n",
                 "<salabim-like>", "exec", dont_inherit=True), g)  # no __future__ flags, as salabim
    return g["set_environment_aliases"](source)


class TestExec:
    @pytest.fixture
    def window(self, tmp_path, monkeypatch):
        monkeypatch.setattr(_salabim_import, "_file", lambda: str(tmp_path / "kept.marshal"))
        module = types.ModuleType("salabim_like")
        w = _salabim_import._Window(module)
        yield w
        assert builtins.exec is w.real_exec

    def test_source_from_the_aliases_function_is_compiled_once(self, window):
        with window:
            assert builtins.exec is window.caching_exec
            names = aliases_like(window, "def f(x):\n    return x + 1\nEnv = f")
            assert names == ["Env", "f"]  # in the function's locals, as exec puts them
            aliases_like(window, "def f(x):\n    return x + 1\nEnv = f")
        assert _salabim_import.stats["compiled"] == 1 and _salabim_import.stats["kept"] == 1
        kept = _salabim_import.read_marshal(window.path)
        assert list(kept) == [(0, "def f(x):\n    return x + 1\nEnv = f")]
        (code,) = kept.values()
        assert code.co_filename == "<string>" and code == compile(next(iter(kept))[1], "<string>", "exec", dont_inherit=True)

    def test_every_other_exec_is_the_builtins(self, window):
        def outer():
            v = 7

            def inner():
                sink.append(v)  # noqa: F821 - from the globals given to exec

            return inner

        # a caller without `from __future__ import annotations` (this module has it): exec compiles
        # with the caller's flags, not with those of ibfabric._salabim_import (which has it too)
        plain = {}
        exec(compile("def annotated(ex):\n    ns = {}\n    ex('def f(a: int): pass', ns)\n"
                     "    return ns['f'].__annotations__\n", "<plain>", "exec", dont_inherit=True), plain)

        def scenarios(ex) -> list:
            def in_function():
                x = 21  # noqa: F841 - read by the exec'd source, through the caller's locals
                ex("y = x * 2")  # no namespaces: the caller's (a copy of a function's locals)
                return sys._getframe().f_locals.get("y")

            got, loc, seen = {}, {}, []
            ex("z = 1", got)  # globals only: they are the locals too
            ex("w = q", {"q": 5}, loc)
            ex(outer().__code__, {"sink": seen}, closure=(types.CellType(9),))
            return [in_function(), got["z"], "__builtins__" in got, loc, seen, plain["annotated"](ex)]

        with window:
            assert builtins.exec is window.caching_exec
            ours = scenarios(window.exec)
            named = {}
            window.exec("u = 1", globals=named)  # by name, as Python 3.13's exec takes them
        assert ours == scenarios(window.real_exec) and named["u"] == 1
        assert ours[-1] == {"a": int}
        assert _salabim_import.stats["compiled"] == 0 and not os.path.exists(window.path)

    def test_the_builtin_is_back_after_an_error(self, window):
        with pytest.raises(ZeroDivisionError), window:
            raise ZeroDivisionError
        assert not os.path.exists(window.path)


def test_stand_in_imports_urllib_request_when_used(monkeypatch):
    import urllib

    real = sys.modules.get("urllib.request") or __import__("urllib.request").request
    monkeypatch.delitem(sys.modules, "urllib.request")
    stand_in = _salabim_import._Deferred("urllib.request")
    monkeypatch.setitem(sys.modules, "urllib.request", stand_in)
    monkeypatch.setattr(urllib, "request", stand_in)
    assert "urlopen" not in vars(stand_in)
    try:
        assert stand_in.urlopen.__module__ == "urllib.request"
        assert sys.modules["urllib.request"] is not stand_in and urllib.request is sys.modules["urllib.request"]
    finally:
        sys.modules["urllib.request"] = urllib.request = real
