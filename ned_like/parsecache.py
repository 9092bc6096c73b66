"""Parsed NED files kept between processes (docs/performance.md, "Caches").

Parsing the built-in module library and a topology takes about 45 ms of a
small run's 0.3 s start-up; loading the parsed file back takes a tenth of
that.  :func:`~ibfabric.ned_like.parser.parse` looks here first.

An entry is a pickle of the :class:`~ibfabric.ned_like.ast.NedFile`, named by
a hash of the source text, the file name (it is in every location and
message) and everything that decides what a parse gives: the grammar, the
sources of the parser's modules, lark's version (its ``__init__``, read
without importing lark), attrs' package (its ``__init__``'s place, time and
size: an install changes them) and Python's version.  Editing any of them
makes new names, so a stale entry is never read.  A damaged or
unreadable entry is ignored, so the cache can only cost time, never change
a parse.  Entries are written atomically; only sources up to
:data:`MAX_TEXT` characters are kept, and at most :data:`MAX_ENTRIES` of
them (the least recently written go first).

The directory (:func:`cache_dir`), shared with the lark grammar cache, is
private to the user: loading a pickle runs code, so a directory that
another user owns or can write into is not used at all.  It is made when
a text is first parsed: importing ibfabric writes nothing.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import sys

__all__ = ["cache_dir", "load", "store", "MAX_TEXT", "MAX_ENTRIES"]

#: Sources longer than this (characters) are not kept (a generated 32-ary tree is megabytes).
MAX_TEXT = 256 * 1024
#: Entries kept; storing one more removes the oldest.
MAX_ENTRIES = 200

_PREFIX = "ned-ast-"
_fingerprint: str | None = None


def _parser_fingerprint() -> str:
    """A hash of what decides a parse: the grammar, the parser's modules' sources, lark and Python."""
    global _fingerprint
    if _fingerprint is None:
        import importlib.util

        import attr

        from ibfabric import units
        from ibfabric.ned_like import ast, doccomments, errors, expr, fastconn, fastexpr, limits, model, parser, patterns

        h = hashlib.sha256()
        here = os.path.dirname(os.path.abspath(parser.__file__))
        # the transformer's source, read without importing it (it imports lark, which a run served from
        # here does not need), and lark's __init__, which states its version
        lark_init = importlib.util.find_spec("lark").origin
        for path in [os.path.join(here, "ned.lark"), os.path.join(here, "_builder.py"), lark_init] + [
                m.__file__ for m in (ast, doccomments, errors, expr, fastconn, fastexpr, limits, model, parser, patterns,
                                  units)]:
            with open(path, "rb") as f:
                h.update(f.read())
        # attrs, which makes the parsed classes: its package's __init__, by place, time and size (an
        # install rewrites it; attrs.__version__ would import importlib.metadata)
        st = os.stat(attr.__file__)
        h.update(f"attrs {attr.__file__} {st.st_mtime_ns} {st.st_size} python {sys.version}".encode())
        _fingerprint = h.hexdigest()
    return _fingerprint


def cache_dir() -> str | None:
    """ibfabric's private cache directory, made if needed: ``$IBFABRIC_CACHE_DIR`` or
    ``$XDG_CACHE_HOME/ibfabric`` (``~/.cache/ibfabric``); None if it is turned off
    (``IBFABRIC_CACHE_DIR=``, empty) or cannot be used: it must belong to the user and be
    writable by nobody else (an existing shared directory, such as ``/tmp``, is never used:
    loading what it holds runs code)."""
    base = os.environ.get("IBFABRIC_CACHE_DIR")
    if base is None:
        base = os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"),
                            "ibfabric")
    if not base:
        return None
    try:
        os.makedirs(base, mode=0o700, exist_ok=True)
    except OSError:
        return None
    if not os.access(base, os.W_OK | os.X_OK):
        return None
    try:
        st = os.stat(base)
    except OSError:
        return None
    if hasattr(os, "getuid") and (st.st_uid != os.getuid() or st.st_mode & 0o022):
        return None
    return base


def _write_private(path: str, data: bytes) -> None:
    """Write *data* to the cache file *path* atomically: a private temporary file beside it, renamed
    (never half-written); errors are ignored (a cache file is only an optimisation)."""
    import tempfile

    try:
        fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), prefix=".tmp-")
    except OSError:
        return
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException as e:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if not isinstance(e, Exception):
            raise


def _path(text: str, filename: str) -> str | None:
    if len(text) > MAX_TEXT:
        return None
    base = cache_dir()
    if base is None:
        return None
    h = hashlib.sha256(_parser_fingerprint().encode())
    h.update(filename.encode("utf-8", "surrogatepass") + b"\0")
    h.update(text.encode("utf-8", "surrogatepass"))
    return os.path.join(base, f"{_PREFIX}{h.hexdigest()[:32]}.pickle")


def load(text: str, filename: str):
    """The parsed file for *text* named *filename*, or None if it is not kept (or unreadable)."""
    try:
        path = _path(text, filename)
        if path is None:
            return None
        with open(path, "rb") as f:
            kept_text, nedfile = pickle.load(f)
    except Exception:  # missing, damaged, from code that has changed since: parse instead
        return None
    return nedfile if kept_text == text else None


def store(text: str, filename: str, nedfile) -> None:
    """Keep the parse of *text* (atomically; errors are ignored: the cache is only an optimisation)."""
    try:
        path = _path(text, filename)
        if path is None:
            return
        _write_private(path, pickle.dumps((text, nedfile), protocol=pickle.HIGHEST_PROTOCOL))
        _prune(os.path.dirname(path))
    except Exception:
        pass


def _prune(base: str) -> None:
    entries = []
    for e in os.scandir(base):
        if e.name.startswith(_PREFIX):
            try:
                entries.append((e.stat().st_mtime, e.path))
            except OSError:
                pass
    if len(entries) > MAX_ENTRIES:
        entries.sort()
        for _, path in entries[: len(entries) - MAX_ENTRIES]:
            try:
                os.unlink(path)
            except OSError:
                pass
