"""The installed packages' ``ibfabric`` entry points, read again only when an installation changed.

Reading them with :mod:`importlib.metadata`, as ``pluggy`` does, costs every
process about 15 ms (importing it, with :mod:`email`, :mod:`zipfile` and
:mod:`csv`, and reading the ``entry_points.txt`` of every installed
distribution), more in a large environment.  :func:`entry_points` keeps what
it found in the cache directory (:func:`ibfabric._cachedir.cache_dir`),
under a fingerprint of everything importlib.metadata reads: each entry of
``sys.path`` (made absolute), and in each directory the names of its
``*.dist-info`` and ``*.egg-info`` entries (an unpacked egg's ``EGG-INFO``)
with the times and sizes of their ``entry_points.txt`` and ``METADATA``
(or ``PKG-INFO``) files (a zip file on the path: its time and size).  An
install, an uninstall, an edit of an ``entry_points.txt`` or another
``sys.path`` changes the fingerprint, and the entry points are read again.
Without a cache directory, or with a finder of distributions on
``sys.meta_path`` other than the standard one (or the ``importlib_metadata``
backport's, which replaces it when imported), they are always read.
"""

from __future__ import annotations

import os
import sys

__all__ = ["entry_points", "load"]

#: Environments (fingerprints) the file keeps: past it, the one written first goes.
MAX_ENVIRONMENTS = 8
#: Reads of importlib.metadata and answers from the file in this process (tests read them).
stats = {"read": 0, "kept": 0}


def entry_points(group: str) -> list[tuple[str, str, str, str]]:
    """``(name, value, distribution, version)`` of every entry point of *group*, in the order
    importlib.metadata gives them (distributions in ``sys.path`` order; one that two
    distributions declare is there twice, as pluggy would see it)."""
    fingerprint = _fingerprint(group)
    path = _file() if fingerprint is not None else None
    kept = {}
    if path is not None:
        from ibfabric._cachedir import read_marshal

        kept = read_marshal(path)
        found = kept.get(fingerprint)
        if type(found) is list and all(type(e) is list and len(e) == 4 and all(type(x) is str for x in e)
                                       for e in found):
            stats["kept"] += 1
            return [tuple(e) for e in found]
    found = _read(group)
    stats["read"] += 1
    if path is not None:
        _save(path, kept, fingerprint, found)
    return found


def load(value: str):
    """The object an entry point's *value* names (``module``, ``module:attr.attr``), as
    :meth:`importlib.metadata.EntryPoint.load` finds it."""
    import importlib
    import re

    match = re.match(r"(?P<module>[\w.]+)\s*(:\s*(?P<attr>[\w.]+)\s*)?((?P<extras>\[.*\])\s*)?$", value)
    if match is None:
        raise ValueError(f"not an entry point: {value!r}")
    obj = importlib.import_module(match.group("module"))
    for attr in filter(None, (match.group("attr") or "").split(".")):
        obj = getattr(obj, attr)
    return obj


def _read(group: str) -> list[tuple[str, str, str, str]]:
    import importlib.metadata

    found = []
    for dist in importlib.metadata.distributions():
        eps = [ep for ep in dist.entry_points if ep.group == group]
        if eps:
            name, version = dist.metadata["Name"], dist.version
            found += [(ep.name, ep.value, name, version) for ep in eps]
    return found


def _fingerprint(group: str) -> str | None:
    """What decides importlib.metadata's answer, as one string; None if it cannot be told."""
    if not all(_reads_sys_path(f) for f in sys.meta_path if hasattr(f, "find_distributions")):
        return None
    parts = [group, sys.implementation.cache_tag or ""]
    for entry in sys.path:
        if not isinstance(entry, str):  # (a bytes or other entry: not told here; importlib.metadata reads)
            return None
        root = os.path.abspath(entry or ".")
        parts.append(root)
        try:
            names = os.listdir(root)
        except NotADirectoryError:
            try:
                st = os.stat(root)
            except OSError:
                continue
            parts.append(f"\tfile {st.st_mtime_ns} {st.st_size}")
            continue
        except OSError:
            continue
        egg = root.lower().endswith(".egg")  # an unpacked egg: its EGG-INFO, as importlib.metadata reads it
        for name in names:
            low = name.lower()
            if low.endswith((".dist-info", ".egg-info")) or (egg and low == "egg-info"):
                parts.append(f"\t{name} {_stamp(os.path.join(root, name))}")
    return "\n".join(parts)


def _stamp(info: str) -> str:
    """When and how big the files of metadata directory *info* that the entry points come from are."""
    out = []
    for name in ("entry_points.txt", "METADATA", "PKG-INFO"):
        try:
            st = os.stat(os.path.join(info, name))
        except OSError:
            out.append("-")
        else:
            out.append(f"{st.st_mtime_ns}/{st.st_ctime_ns}/{st.st_size}")
    return " ".join(out)


def _reads_sys_path(finder) -> bool:
    """Whether *finder* finds distributions as the fingerprint sees them: the standard path finder,
    or the ``importlib_metadata`` backport's, which takes its place when imported (dask imports it)."""
    from importlib.machinery import PathFinder

    cls = finder if isinstance(finder, type) else type(finder)
    return finder is PathFinder or (cls.__module__, cls.__qualname__) == ("importlib_metadata", "MetadataPathFinder")


def _file() -> str | None:
    from ibfabric._cachedir import cache_dir

    base = cache_dir()
    return None if base is None else os.path.join(base, "entry-points.marshal")


def _save(path: str, kept: dict, fingerprint: str, found: list) -> None:
    from ibfabric._cachedir import write_marshal

    kept = {k: v for k, v in kept.items() if type(k) is str and k != fingerprint}
    kept[fingerprint] = [list(e) for e in found]
    write_marshal(path, dict(list(kept.items())[-MAX_ENVIRONMENTS:]))
