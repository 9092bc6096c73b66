"""ibfabric.plugins._entrypoints: the ibfabric entry points, kept between processes, are the ones
importlib.metadata finds, and are read again whenever an installation changes."""

from __future__ import annotations

import importlib.metadata
import os
import sys

import pluggy
import pytest

from ibfabric._cachedir import read_marshal, write_marshal
from ibfabric.plugins import _entrypoints as ep
from ibfabric.plugins import hookspecs
from ibfabric.plugins.manager import PluginSet


def metadata_says(group: str = "ibfabric") -> list[tuple[str, str, str, str]]:
    return [(e.name, e.value, d.metadata["Name"], d.version)
            for d in importlib.metadata.distributions() for e in d.entry_points if e.group == group]


def fake_dist(site, name: str, entries: str, version: str = "1.0"):
    """A distribution *name* installed in directory *site*, with *entries* as its ibfabric entry points."""
    info = site / f"{name}-{version}.dist-info"
    info.mkdir(parents=True, exist_ok=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
    (info / "entry_points.txt").write_text(f"[ibfabric]\n{entries}\n")
    return info / "entry_points.txt"


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("IBFABRIC_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(ep, "stats", {"read": 0, "kept": 0})
    return tmp_path / "cache"


class TestKept:
    def test_the_same_entry_points_read_once(self, cache):
        first = ep.entry_points("ibfabric")
        again = ep.entry_points("ibfabric")
        assert first == again == metadata_says()
        assert ("traffic", "ibfabric.plugins.traffic", "ibfabric", importlib.metadata.version("ibfabric")) in first
        assert ep.stats == {"read": 1, "kept": 1}
        assert [p.name for p in cache.iterdir()] == ["entry-points.marshal"]

    def test_another_path_an_install_and_an_edit_are_read_again(self, cache, tmp_path, monkeypatch):
        ep.entry_points("ibfabric")
        site = tmp_path / "site"
        site.mkdir()
        monkeypatch.syspath_prepend(str(site))
        assert ep.entry_points("ibfabric") == metadata_says()  # another sys.path
        txt = fake_dist(site, "demo_x", "xx = demo_x.plugin")
        got = ep.entry_points("ibfabric")
        assert got[0] == ("xx", "demo_x.plugin", "demo_x", "1.0") and got == metadata_says()
        txt.write_text("[ibfabric]\nyy = demo_x.other:thing\n")
        os.utime(txt, ns=(txt.stat().st_atime_ns, txt.stat().st_mtime_ns + 1_000_000))
        got = ep.entry_points("ibfabric")
        assert got[0] == ("yy", "demo_x.other:thing", "demo_x", "1.0") and got == metadata_says()
        assert ep.stats == {"read": 4, "kept": 0}
        assert ep.entry_points("ibfabric") == got and ep.stats["kept"] == 1

    def test_an_unpacked_eggs_entry_points_are_watched_too(self, cache, tmp_path, monkeypatch):
        info = tmp_path / "demo_egg-1.0.egg" / "EGG-INFO"
        info.mkdir(parents=True)
        (info / "PKG-INFO").write_text("Metadata-Version: 1.1\nName: demo_egg\nVersion: 1.0\n")
        (info / "entry_points.txt").write_text("[ibfabric]\nold = demo_egg.old\n")
        monkeypatch.syspath_prepend(str(info.parent))
        assert ("old", "demo_egg.old", "demo_egg", "1.0") in ep.entry_points("ibfabric")
        (info / "entry_points.txt").write_text("[ibfabric]\nnew = demo_egg.new\n")
        got = ep.entry_points("ibfabric")
        assert ("new", "demo_egg.new", "demo_egg", "1.0") in got and got == metadata_says()

    def test_another_finder_of_distributions_is_always_asked(self, cache, monkeypatch):
        class Finder:
            def find_spec(self, *a):
                return None

            def find_distributions(self, context=None):
                return iter(())

        monkeypatch.setattr(sys, "meta_path", [*sys.meta_path, Finder()])
        ep.entry_points("ibfabric")
        ep.entry_points("ibfabric")
        assert ep.stats == {"read": 2, "kept": 0} and not cache.exists()

    def test_a_path_entry_that_is_not_a_string_is_not_fingerprinted(self, monkeypatch):
        monkeypatch.setattr(sys, "path", [*sys.path, b"/nowhere"])
        assert ep._fingerprint("ibfabric") is None  # (then always read)

    def test_the_importlib_metadata_backport_keeps_them_kept(self, cache, monkeypatch):
        # importing the backport (dask does) puts its own path finder in the standard one's place
        backport = pytest.importorskip("importlib_metadata")
        monkeypatch.setattr(sys, "meta_path", list(sys.meta_path))
        if not any(type(f) is backport.MetadataPathFinder for f in sys.meta_path):
            sys.meta_path.append(backport.MetadataPathFinder())
        first = ep.entry_points("ibfabric")
        assert ep.entry_points("ibfabric") == first == metadata_says() and ep.stats == {"read": 1, "kept": 1}

    def test_a_damaged_file_is_read_again_and_replaced(self, cache):
        first = ep.entry_points("ibfabric")
        (cache / "entry-points.marshal").write_bytes(b"\x00damaged")
        assert ep.entry_points("ibfabric") == first and ep.entry_points("ibfabric") == first
        assert ep.stats == {"read": 2, "kept": 1}

    def test_an_entry_of_another_shape_is_read_again(self, cache):
        first = ep.entry_points("ibfabric")
        (fingerprint,) = read_marshal(str(cache / "entry-points.marshal"))
        write_marshal(str(cache / "entry-points.marshal"), {fingerprint: [["traffic", "x"]]})
        assert ep.entry_points("ibfabric") == first and ep.stats == {"read": 2, "kept": 0}

    def test_without_a_cache_directory_nothing_is_written(self, tmp_path, monkeypatch):
        monkeypatch.setenv("IBFABRIC_CACHE_DIR", "")
        monkeypatch.setattr(ep, "stats", {"read": 0, "kept": 0})
        assert ep.entry_points("ibfabric") == ep.entry_points("ibfabric") == metadata_says()
        assert ep.stats == {"read": 2, "kept": 0}

    def test_the_file_keeps_a_bounded_number_of_environments(self, cache, tmp_path, monkeypatch):
        monkeypatch.setattr(ep, "MAX_ENVIRONMENTS", 3)
        for i in range(5):
            monkeypatch.setattr(sys, "path", [str(tmp_path / f"env{i}"), *sys.path])
            ep.entry_points("ibfabric")
        kept = read_marshal(str(cache / "entry-points.marshal"))
        assert len(kept) == 3 and all(f"env{i}" in k for k, i in zip(kept, (2, 3, 4)))


@pytest.mark.parametrize("value", ["os", "os.path:join", "ibfabric.plugins.manager:PluginSet.load",
                                   "ibfabric.plugins.traffic [extra]", "os.path : join"])
def test_load_finds_what_importlib_metadata_finds(value):
    expected = importlib.metadata.EntryPoint(name="n", value=value, group="ibfabric").load()
    assert ep.load(value) == expected  # (a bound method is made anew: equal, not the same)


def test_load_refuses_what_is_not_an_entry_point():
    with pytest.raises(ValueError, match="not an entry point"):
        ep.load("os path")


def test_plugins_are_the_ones_pluggy_loads(cache):
    pm = pluggy.PluginManager("ibfabric")
    pm.add_hookspecs(hookspecs)
    pm.load_setuptools_entrypoints("ibfabric")
    for _ in range(2):  # read, then kept
        ours = PluginSet.load().pm
        assert ours.list_name_plugin() == pm.list_name_plugin()
    assert ep.stats == {"read": 1, "kept": 1}
