"""Start-up: what a run imports, and the grammar cache that keeps building it fast."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

from ibfabric.ned_like import NedError, parse
from ibfabric.ned_like import parser as ned_parser
from ibfabric.topologies import SHIPPED, shipped

#: Never imported by importing ibfabric, building a simulation, running it or `ibfabric run`:
#: plotting, the Dask cluster and tables are optional extras; networkx serves the algorithms
#: of a few routing engines and the topology tools, not a run under the default engine.
HEAVY = ("matplotlib", "dask", "distributed", "pandas", "networkx")


def imported_after(code: str, **env: str) -> dict:
    """Run *code* in a fresh interpreter; {stage: heavy modules loaded} as it reports them."""
    prog = textwrap.dedent(
        f"""
        import json, sys
        HEAVY = {HEAVY!r}
        seen = {{}}
        def stage(name):
            seen[name] = sorted(m for m in sys.modules if m.split(".")[0] in HEAVY)
        """
    ) + textwrap.dedent(code) + "\nprint(json.dumps(seen))\n"
    proc = subprocess.run([sys.executable, "-c", prog], capture_output=True, text=True, timeout=300,
                          env={**os.environ, **env})
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


class TestLazyImports:
    def test_import_build_and_run_import_nothing_heavy(self):
        seen = imported_after(
            """
            import ibfabric
            stage("import")
            sim = ibfabric.Simulation("irregular16", overrides={"**.traffic": "uniform", "**.load": "0.1"}, seed=1)
            stage("build")
            sim.run("5us")
            stage("run")
            """
        )
        assert seen == {"import": [], "build": [], "run": []}

    def test_ibfabric_run_imports_nothing_heavy(self):
        seen = imported_after(
            """
            import contextlib, io
            from ibfabric.cli import main
            with contextlib.redirect_stdout(io.StringIO()):
                assert main(["run", "--time", "20us", "--no-progress"]) == 0
            stage("cli")
            """
        )
        assert seen == {"cli": []}

    def test_a_run_served_by_the_caches_imports_only_what_it_uses(self, tmp_path):
        # the first process parses (lark) and fills the caches; the second finds every file there and
        # reads its one-token values without lark, so it never imports lark (nor the regex module it
        # brings); nor the ibnetdiscover reader (a NED file)
        code = textwrap.dedent(
            """
            import json, sys
            import ibfabric
            sim = ibfabric.Simulation("irregular16", overrides={"**.traffic": "uniform", "**.load": "0.2"}, seed=1)
            s = sim.run("30us")
            names = ("lark", "regex", "ibfabric.topologies.ibnetdiscover")
            print(json.dumps({"loaded": [m for m in names if m in sys.modules], "events": s["events"],
                              "p99": s["latency_ns"]["p99"]}))
            """
        )
        env = {**os.environ, "IBFABRIC_CACHE_DIR": str(tmp_path / "cache")}
        runs = []
        for _ in range(2):
            proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, env=env)
            assert proc.returncode == 0, proc.stderr
            runs.append(json.loads(proc.stdout.strip().splitlines()[-1]))
        assert "lark" in runs[0]["loaded"]  # empty caches: parsed
        assert runs[1] == {"loaded": [], "events": runs[0]["events"], "p99": runs[0]["p99"]} and runs[1]["p99"] > 0


class TestGrammarCache:
    """The analysed NED grammar is kept between processes; a cache can cost time, never change a parse."""

    @pytest.fixture
    def fresh(self, monkeypatch):
        def use(cache_dir: str) -> None:
            monkeypatch.setenv("IBFABRIC_CACHE_DIR", cache_dir)
            ned_parser._lark.cache_clear()

        yield use
        ned_parser._lark.cache_clear()

    @staticmethod
    def results() -> list:
        out = [parse(shipped(name).read_text(), name) for name in SHIPPED]
        for bad in ("network n { submodules: a: ; }", "simple S { parameters: int x = ; }", "network"):
            with pytest.raises(NedError) as e:
                parse(bad)
            out.append(str(e.value))
        return out

    def test_written_then_read_back_with_the_same_results(self, tmp_path, fresh):
        fresh("")  # no cache
        expected = self.results()
        cache = tmp_path / "cache"
        fresh(str(cache))
        assert self.results() == expected  # built, then written
        (written,) = cache.glob("ned-grammar-*")
        assert oct(cache.stat().st_mode & 0o777) == "0o700"
        fresh(str(cache))
        assert self.results() == expected  # read back
        assert list(cache.glob("ned-grammar-*")) == [written]

    def test_a_damaged_file_is_rebuilt(self, tmp_path, fresh):
        fresh(str(tmp_path))
        expected = self.results()
        (written,) = tmp_path.glob("ned-grammar-*")
        data = written.read_bytes()
        written.write_bytes(data[: len(data) // 2])
        fresh(str(tmp_path))
        assert self.results() == expected
        assert len(written.read_bytes()) > len(data) // 2  # written again, whole
        fresh(str(tmp_path))
        assert self.results() == expected

    def test_empty_turns_it_off_and_an_unwritable_place_is_no_error(self, tmp_path, fresh):
        assert ned_parser._grammar_cache("g") is not False or os.environ.get("IBFABRIC_CACHE_DIR") == ""
        fresh("")
        assert ned_parser._grammar_cache("g") is False
        blocker = tmp_path / "file"
        blocker.write_text("")
        fresh(str(blocker / "cache"))  # a directory cannot be made under a file
        assert ned_parser._grammar_cache("g") is False
        assert self.results()


class TestParseCache:
    """Parsed files are kept between processes (ned_like/parsecache.py); a cache never changes a parse."""

    @pytest.fixture
    def cache(self, tmp_path, monkeypatch):
        monkeypatch.setenv("IBFABRIC_CACHE_DIR", str(tmp_path))
        return tmp_path

    def test_kept_and_read_back_equal_to_a_fresh_parse(self, cache, monkeypatch):
        monkeypatch.setenv("IBFABRIC_CACHE_DIR", "")
        expected = [parse(shipped(name).read_text(), name) for name in SHIPPED]
        monkeypatch.setenv("IBFABRIC_CACHE_DIR", str(cache))
        first = [parse(shipped(name).read_text(), name) for name in SHIPPED]
        entries = sorted(cache.glob("ned-ast-*"))
        assert len(entries) == len(SHIPPED)
        assert [parse(shipped(name).read_text(), name) for name in SHIPPED] == first == expected
        assert sorted(cache.glob("ned-ast-*")) == entries  # read, not written again

    def test_the_text_and_the_file_name_are_both_in_the_key(self, cache):
        a = parse("simple A { gates: inout p; }", "a.ned")
        b = parse("simple A { gates: inout p; }", "b.ned")
        c = parse("simple B { gates: inout p; }", "a.ned")
        assert a.types[0].loc.file == "a.ned" and b.types[0].loc.file == "b.ned"
        assert c.types[0].name == "B"
        assert len(list(cache.glob("ned-ast-*"))) == 3
        assert parse("simple A { gates: inout p; }", "b.ned") == b

    def test_a_damaged_or_foreign_entry_is_parsed_again(self, cache):
        src = "simple A { gates: inout p; }"
        expected = parse(src, "a.ned")
        (entry,) = cache.glob("ned-ast-*")
        entry.write_bytes(entry.read_bytes()[:20])
        assert parse(src, "a.ned") == expected
        import pickle

        entry.write_bytes(pickle.dumps(("other text", "not a file")))  # a hash collision, in effect
        assert parse(src, "a.ned") == expected

    def test_errors_are_not_kept_and_big_sources_not_written(self, cache, monkeypatch):
        from ibfabric.ned_like import parsecache

        with pytest.raises(NedError):
            parse("network n { submodules: a: ; }")
        assert list(cache.glob("ned-ast-*")) == []
        monkeypatch.setattr(parsecache, "MAX_TEXT", 10)
        parse("simple A { gates: inout p; }", "a.ned")
        assert list(cache.glob("ned-ast-*")) == []

    def test_at_most_max_entries_are_kept(self, cache, monkeypatch):
        from ibfabric.ned_like import parsecache

        monkeypatch.setattr(parsecache, "MAX_ENTRIES", 3)
        for i in range(6):
            parse(f"simple A{i} {{ gates: inout p; }}", f"a{i}.ned")
        assert len(list(cache.glob("ned-ast-*"))) == 3
        assert not list(cache.glob(".tmp-*"))

    def test_off_when_empty(self, monkeypatch):
        monkeypatch.setenv("IBFABRIC_CACHE_DIR", "")
        from ibfabric.ned_like import parsecache

        assert parsecache.cache_dir() is None
        assert parse("simple A { gates: inout p; }").types[0].name == "A"

    def test_a_directory_others_can_write_into_is_not_used(self, tmp_path, monkeypatch):
        from ibfabric.ned_like import parsecache

        shared = tmp_path / "shared"
        shared.mkdir()
        shared.chmod(0o777)  # as /tmp is: someone else could plant a pickle
        monkeypatch.setenv("IBFABRIC_CACHE_DIR", str(shared))
        assert parsecache.cache_dir() is None
        assert ned_parser._grammar_cache("g") is False
        parse("simple A { gates: inout p; }", "a.ned")
        assert list(shared.iterdir()) == []
        shared.chmod(0o700)
        assert parsecache.cache_dir() == str(shared)
