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

__all__ = ["detect_format", "load_network", "load_fabric", "read_topology_text", "shipped", "SHIPPED"]

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


def read_topology_text(source) -> tuple[str, str, Path | None]:
    """``(ned_text, filename, directory)`` for a path or NED text (ibnetdiscover converted)."""
    from .ibnetdiscover import ibnetdiscover_to_ned

    if isinstance(source, os.PathLike) or (isinstance(source, str) and "\n" not in source and "{" not in source):
        path = Path(source)
        if not path.exists() and str(source) in SHIPPED:
            path = shipped(str(source))
        if not path.is_file():
            raise ConfigError(f"{source}: no such file")
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            raise TopologyError(f"{source}: not a text file") from None
        filename, directory = str(source), path.parent
    else:
        text, filename, directory = str(source), "<string>", None
    if detect_format(text) == "ibnetdiscover":
        text = ibnetdiscover_to_ned(text, filename)
    return text, filename, directory


def load_network(source, *, network: str | None = None, library=None, overrides=None):
    """Elaborate a topology (path, NED text or ibnetdiscover text) into an ElaboratedNetwork.

    Raises
    ------
    NedError
        For syntax or semantic errors (``file:line:col: message``).
    TopologyError, ConfigError
        For unreadable files or malformed ibnetdiscover dumps.
    """
    from ibfabric.ned_like import TypeLibrary, elaborate

    text, filename, directory = read_topology_text(source)
    lib = library if library is not None else TypeLibrary.default()
    if directory is not None:
        lib = lib.copy()
        for extra in sorted(directory.glob("*.ned")):
            if str(extra) != str(Path(filename)) and extra.resolve() != Path(filename).resolve():
                try:
                    lib.add_file(extra)
                except Exception:
                    pass  # a broken neighbour file only matters if it is imported
    return elaborate(text, network=network, library=lib, overrides=overrides, filename=filename)


def load_fabric(source, **kw):
    """The :class:`~ibfabric.components.fabric.FabricGraph` of a topology, with LIDs as the topology gives them.

    Call ``.with_lids()`` on the result to assign the missing ones as a
    subnet manager would.
    """
    from ibfabric.components.fabric import FabricGraph

    net = load_network(source, **kw)
    return FabricGraph.from_network(net)
