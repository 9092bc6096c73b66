"""Topologies: shipped ``.ned`` files, importers of real fabric dumps, generators.

:func:`load_network` reads any topology input ibfabric understands and
returns the elaborated network; the format is detected by content, so a
``.ned`` file and an ibnetdiscover dump are passed the same way::

    net = load_network("cluster.topo")        # ibnetdiscover output
    net = load_network("topologies/irregular16.ned")
    fabric = load_fabric("cluster.topo")      # the routing view (FabricGraph)

:func:`shipped` gives the path of a topology shipped with ibfabric by name.
"""

from __future__ import annotations

import os
from importlib import resources
from pathlib import Path

from ibfabric.errors import ConfigError, TopologyError

__all__ = ["detect_format", "load_network", "load_fabric", "shipped", "SHIPPED"]

#: Topologies shipped in this package (name -> file name).
SHIPPED = {
    "bermudez2006_fig1": "bermudez2006_fig1.ned",
    "irregular16": "irregular16.ned",
}


def shipped(name: str) -> Path:
    """Path of a shipped topology (``'irregular16'``)."""
    if name not in SHIPPED:
        raise ConfigError(f"no shipped topology '{name}' (valid: {', '.join(sorted(SHIPPED))})")
    return Path(str(resources.files("ibfabric.topologies").joinpath(SHIPPED[name])))


def detect_format(text: str) -> str:
    """``'ibnetdiscover'`` or ``'ned'``."""
    from .ibnetdiscover import looks_like_ibnetdiscover

    return "ibnetdiscover" if looks_like_ibnetdiscover(text) else "ned"


def _resolve(source) -> tuple[Path | None, str | None]:
    """``(path, None)`` for a file (or shipped name), ``(None, text)`` for NED text."""
    if isinstance(source, os.PathLike) or (isinstance(source, str) and "\n" not in source and "{" not in source):
        path = Path(source)
        if not path.exists() and str(source) in SHIPPED:
            path = shipped(str(source))
        if not path.is_file():
            raise ConfigError(f"{source}: no such file")
        return path, None
    return None, str(source)


def load_network(source, *, network: str | None = None, library=None, overrides=None):
    """Elaborate a topology (path, NED text or ibnetdiscover text) into an ElaboratedNetwork.

    A ``.ned`` file is elaborated in place, so the other ``.ned`` files of
    its directory provide the types it imports.

    Raises
    ------
    NedError
        For syntax or semantic errors (``file:line:col: message``).
    TopologyError, ConfigError
        For unreadable files or malformed ibnetdiscover dumps.
    """
    from ibfabric.ned_like import elaborate

    from .ibnetdiscover import ibnetdiscover_to_ned

    path, text = _resolve(source)
    filename = "<string>"
    if path is not None:
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            raise TopologyError(f"{source}: not a text file") from None
        filename = str(source)
    kind = detect_format(text)
    if kind == "ned" and path is not None:
        return elaborate(path, network=network, library=library, overrides=overrides)
    if kind == "ibnetdiscover":
        text = ibnetdiscover_to_ned(text, filename)
    return elaborate(text, network=network, library=library, overrides=overrides, filename=filename)


def load_fabric(source, **kw):
    """The :class:`~ibfabric.components.fabric.FabricGraph` of a topology, with LIDs as the topology gives them.

    Call ``.with_lids()`` on the result to assign the missing ones as a
    subnet manager would.
    """
    from ibfabric.components.fabric import FabricGraph

    net = load_network(source, **kw)
    return FabricGraph.from_network(net)
