"""ibfabric's private cache directory (start-up caches: docs/performance.md, "Caches").

Kept in a module of its own, with nothing but :mod:`os` to import, because
the first user of it runs while ``import ibfabric`` is still going on
(:mod:`ibfabric._attrs`).
"""

from __future__ import annotations

import os

__all__ = ["cache_dir"]


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
