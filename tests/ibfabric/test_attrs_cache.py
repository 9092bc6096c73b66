"""ibfabric._attrs: the methods attrs writes for ibfabric's classes are compiled once, and the
classes made from the kept code are the ones attrs makes."""

from __future__ import annotations

import json
import marshal
import os
import subprocess
import sys
import textwrap

import attrs

from ibfabric import _attrs

#: ``shape(c)``: what decides the behaviour of code object (or constant) *c*, as JSON.
SHAPE = textwrap.dedent(
    """
    import types

    def shape(c):
        if isinstance(c, types.CodeType):
            return [c.co_code.hex(), [shape(x) for x in c.co_consts], c.co_names, c.co_varnames,
                    c.co_freevars, c.co_cellvars, c.co_flags, c.co_argcount, c.co_kwonlyargcount,
                    c.co_filename, c.co_name, c.co_firstlineno]
        if isinstance(c, (tuple, frozenset)):
            return [type(c).__name__, [shape(x) for x in c]]
        return repr(c)
    """
)

#: Imports the modules a run uses and reports, per attrs-generated function of every ibfabric
#: class, what decides its behaviour (positions in the source aside), with the cache's counters.
PROBE = SHAPE + textwrap.dedent(
    """
    import json, sys
    import ibfabric.simulation, ibfabric.ned_like, ibfabric.components.qos
    from ibfabric import _attrs

    out = {}
    for name, mod in sorted(sys.modules.items()):
        if not name.startswith("ibfabric"):
            continue
        for cls in list(vars(mod).values()):
            if isinstance(cls, type) and cls.__module__ == name and hasattr(cls, "__attrs_attrs__"):
                for meth, f in sorted(vars(cls).items()):
                    code = getattr(f, "__code__", None)
                    if code is not None and code.co_filename.startswith("<attrs generated"):
                        out[f"{name}.{cls.__qualname__}.{meth}"] = shape(code)
    print(json.dumps({"stats": _attrs.stats, "methods": out}))
    """
)


def probe(cache_dir: str, hashseed: str = "7") -> dict:
    env = {**os.environ, "IBFABRIC_CACHE_DIR": cache_dir, "PYTHONHASHSEED": hashseed}
    proc = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=300, env=env)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def kept_file(cache) -> list:
    return sorted(cache.glob("attrs-code-*.marshal"))


class TestAcrossProcesses:
    def test_second_process_compiles_nothing_and_gets_the_same_methods(self, tmp_path):
        cache = tmp_path / "cache"
        plain = probe("")  # no cache directory: attrs compiles every class itself
        first = probe(str(cache))
        second = probe(str(cache))
        assert plain["stats"] == {"kept": 0, "compiled": 0} and first["stats"]["kept"] == 0
        assert first["stats"]["compiled"] >= 50
        assert second["stats"] == {"kept": first["stats"]["compiled"], "compiled": 0}
        assert len(plain["methods"]) >= 100
        # __hash__ of a hashable class mixes in a per-process salt: put back, it is the same constant
        assert any(k.endswith(".__hash__") for k in plain["methods"])
        assert second["methods"] == first["methods"] == plain["methods"]
        assert len(kept_file(cache)) == 1
        assert not list(cache.glob(".tmp-*"))

    def test_kept_code_serves_another_hash_seed(self, tmp_path):
        cache = tmp_path / "cache"
        probe(str(cache), hashseed="1")
        other = probe(str(cache), hashseed="2")
        assert other["stats"]["compiled"] == 0
        assert other["methods"] == probe("", hashseed="2")["methods"]

    def test_a_damaged_file_is_ignored_and_replaced(self, tmp_path):
        cache = tmp_path / "cache"
        probe(str(cache))
        (path,) = kept_file(cache)
        path.write_bytes(b"\x00not marshal")
        again = probe(str(cache))
        assert again["stats"]["kept"] == 0 and again["stats"]["compiled"] >= 50
        assert again["methods"] == probe("")["methods"]
        assert isinstance(marshal.loads(path.read_bytes()), dict)

    def test_nothing_is_written_without_a_cache_directory(self, tmp_path, monkeypatch):
        monkeypatch.setenv("HOME", str(tmp_path))
        monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
        probe("")
        assert list(tmp_path.rglob("attrs-code-*")) == []


class TestInProcess:
    def test_installed_once(self):
        import attr._make as make

        before = make._compile_and_eval
        _attrs.install()
        assert make._compile_and_eval is before
        assert before._ibfabric_cached and before.__wrapped__ is not before

    def test_other_packages_classes_are_compiled_by_attrs(self):
        stats = dict(_attrs.stats)

        @attrs.frozen
        class Elsewhere:
            a: int
            b: str = "x"

        assert _attrs.stats == stats
        assert Elsewhere(1) == Elsewhere(1) and hash(Elsewhere(1)) == hash(Elsewhere(1))
        assert repr(Elsewhere(2, "y")).endswith("Elsewhere(a=2, b='y')")

    def test_save_keeps_the_file_bounded(self, tmp_path, monkeypatch):
        path = tmp_path / "attrs-code-test.marshal"
        old = {(f"<attrs generated methods ibfabric.old{i}>", f"x = {i}"): compile(f"x = {i}", "o", "exec")
               for i in range(5)}
        path.write_bytes(marshal.dumps(old))
        mine = ("<attrs generated methods ibfabric.mine>", "y = 1")
        monkeypatch.setattr(_attrs, "_path", str(path))
        monkeypatch.setattr(_attrs, "_new", {mine: compile("y = 1", "m", "exec")})
        monkeypatch.setattr(_attrs, "_used", {mine})
        monkeypatch.setattr(_attrs, "MAX_ENTRIES", 10)
        _attrs.save()
        assert set(marshal.loads(path.read_bytes())) == set(old) | {mine}
        monkeypatch.setattr(_attrs, "_new", {mine: compile("y = 1", "m", "exec")})
        monkeypatch.setattr(_attrs, "MAX_ENTRIES", 3)
        _attrs.save()  # over the bound: what this process used, then the entries written last
        kept = marshal.loads(path.read_bytes())
        assert list(kept) == [k for k in old if k[0].endswith(("old3>", "old4>"))] + [mine]
        monkeypatch.setattr(_attrs, "MAX_ENTRIES", 1)
        monkeypatch.setattr(_attrs, "_new", {mine: compile("y = 1", "m", "exec")})
        _attrs.save()
        assert list(marshal.loads(path.read_bytes())) == [mine]
        assert not list(tmp_path.glob(".tmp-*"))
