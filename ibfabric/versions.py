"""Which software made a result: ibfabric's version and those of the plugin distributions installed.

Every result set records them (``summary.json`` and ``run.json`` under
``"versions"``, ``results.sca`` as the run attributes ``ibfabric-version``
and ``plugins``), and a sweep reruns a finished run that other versions
made (:meth:`ibfabric.sweep.Sweep.pending`).  A run's id does not hash them:
it names a configuration, whatever ran it.

Examples
--------
>>> v = versions()
>>> sorted(v), v["ibfabric"] == __import__("ibfabric").__version__
(['ibfabric', 'plugins'], True)
>>> changed({"ibfabric": "0.0.9", "plugins": {}}, {"ibfabric": "0.1.0", "plugins": {"demo": "1.0"}})
'made with ibfabric 0.0.9 (now 0.1.0), without plugin demo (now 1.0)'
"""

from __future__ import annotations

import functools
from importlib import metadata
from typing import Any

__all__ = ["changed", "versions"]


def versions() -> dict[str, Any]:
    """``{"ibfabric": version, "plugins": {distribution: version, ...}}`` of this process.

    The plugins are the distributions other than ibfabric that provide
    entry points of the ``ibfabric`` group (read with :mod:`importlib.metadata`),
    sorted by name; a copy, so the caller may change it.
    """
    ibfabric, plugins = _versions()
    return {"ibfabric": ibfabric, "plugins": dict(plugins)}


@functools.lru_cache(maxsize=1)
def _versions() -> tuple[str, tuple[tuple[str, str], ...]]:
    from ibfabric import __version__

    plugins: dict[str, str] = {}
    for ep in metadata.entry_points(group="ibfabric"):
        dist = getattr(ep, "dist", None)
        name = getattr(dist, "name", None) if dist is not None else None
        if name and _normal(name) != "ibfabric":
            plugins[name] = dist.version
    return __version__, tuple(sorted(plugins.items()))


def _normal(name: str) -> str:
    return name.lower().replace("_", "-").replace(".", "-")


def changed(recorded: Any, current: dict[str, Any] | None = None) -> str | None:
    """What differs between the *recorded* versions of a result and *current* ones (default: this
    process's), as a phrase (``made with ibfabric 0.0.9 (now 0.1.0)``); None when they are the same."""
    current = versions() if current is None else current
    if not isinstance(recorded, dict):
        return "made before results recorded their versions"
    diffs = []
    if recorded.get("ibfabric") != current["ibfabric"]:
        diffs.append(f"made with ibfabric {recorded.get('ibfabric')} (now {current['ibfabric']})")
    old = recorded.get("plugins") if isinstance(recorded.get("plugins"), dict) else {}
    new = current["plugins"]
    for name in sorted(set(old) | set(new)):
        if name not in new:
            diffs.append(f"made with plugin {name} {old[name]} (now not installed)")
        elif name not in old:
            diffs.append(f"without plugin {name} (now {new[name]})")
        elif old[name] != new[name]:
            diffs.append(f"made with plugin {name} {old[name]} (now {new[name]})")
    if diffs and not diffs[0].startswith("made"):
        diffs[0] = "made " + diffs[0]
    return ", ".join(diffs) or None
