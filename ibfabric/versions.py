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
from typing import Any

__all__ = ["changed", "versions"]


def versions(plugins=None) -> dict[str, Any]:
    """``{"ibfabric": version, "plugins": {distribution: version, ...}}``, sorted by name.

    The plugins are the distributions other than ibfabric whose ``ibfabric`` entry points *plugins* (a
    :class:`~ibfabric.plugins.PluginSet`; default: the one every simulation loads) loaded, as
    :mod:`importlib.metadata` gives them (read through the plugin manager's kept list of entry
    points, so a run does not import importlib.metadata).  A new dict, the caller may change it.
    """
    from ibfabric import __version__

    if plugins is None:
        plugins = _default_plugins()
    found: dict[str, str] = {}
    for name, _ in plugins.pm.list_name_plugin():
        dist, _, version = (plugins.distribution(name) or "").partition("==")
        if dist and _normal(dist) != "ibfabric":
            found[dist] = version
    return {"ibfabric": __version__, "plugins": dict(sorted(found.items()))}


@functools.lru_cache(maxsize=1)
def _default_plugins():
    from ibfabric.plugins import PluginSet

    return PluginSet.load()


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
