"""ibfabric: an OMNeT++-style InfiniBand fabric simulator in pure Python.

The public API::

    import ibfabric
    sim = ibfabric.load("fabric.ned", overrides={"**.load": "0.3"}, seed=1)
    summary = sim.run("100us")

Plugins import only ``from ibfabric import hookimpl``.
"""

from __future__ import annotations

from typing import Any

from ibfabric.errors import ConfigError, DeadlockError, IbfabricError, PluginError, TopologyError
from ibfabric.plugins.manager import hookimpl

__version__ = "0.1.0"

__all__ = [
    "Channel",
    "ConfigError",
    "DeadlockError",
    "IbfabricError",
    "Module",
    "PluginError",
    "Simulation",
    "TopologyError",
    "hookimpl",
    "load",
]

_LAZY = {
    "Simulation": ("ibfabric.simulation", "Simulation"),
    "load": ("ibfabric.simulation", "load"),
    "Module": ("ibfabric.kernel", "Module"),
    "Channel": ("ibfabric.kernel", "Channel"),
    "Message": ("ibfabric.kernel", "Message"),
}


def __getattr__(name: str) -> Any:
    # The kernel pulls in salabim; keep `from ibfabric import hookimpl` light.
    if name in _LAZY:
        import importlib

        mod, attr = _LAZY[name]
        value = getattr(importlib.import_module(mod), attr)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'ibfabric' has no attribute '{name}'")
