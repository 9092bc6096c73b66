"""ibfabric's private cache directory (start-up caches: docs/performance.md, "Caches").

Kept in a module of its own, with nothing but :mod:`os` and :mod:`marshal`
to import, because its first users run while ``import ibfabric`` is still
going on (:mod:`ibfabric._salabim_import`).
"""

from __future__ import annotations

import marshal
import os

__all__ = ["cache_dir", "future_flags", "read_marshal", "write_marshal", "write_private"]


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


def read_marshal(path: str) -> dict:
    """The dict a code cache file holds; empty if it is missing, damaged or of another interpreter."""
    try:
        with open(path, "rb") as f:
            kept = marshal.loads(f.read())  # (marshal.load reads a file in small pieces: 10x slower)
    except Exception:
        return {}
    return kept if type(kept) is dict else {}


def write_marshal(path: str, kept: dict) -> None:
    """Write *kept* to the code cache file *path* atomically; errors are ignored (it is only a cache)."""
    write_private(path, marshal.dumps(kept))


def write_private(path: str, data: bytes) -> None:
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


def future_flags() -> int:
    """The compiler flags of every ``__future__`` feature (what ``compile`` inherits from a caller)."""
    import __future__

    flags = 0
    for name in __future__.all_feature_names:
        flags |= getattr(__future__, name).compiler_flag
    return flags
