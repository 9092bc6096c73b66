"""Topologies: shipped ``.ned`` files, importers of real fabric dumps, generators.

:func:`load_network` reads any topology input ibfabric understands and
returns the elaborated network; the format is detected by content, so a
``.ned`` file and an ibnetdiscover dump are passed the same way::

    net = load_network("cluster.topo")        # ibnetdiscover output
    net = load_network("cluster.topo", names="lid")   # its nodes named sw_lid1, ca_lid8...
    net = load_network("topologies/irregular16.ned")
    fabric = load_fabric("cluster.topo")      # the routing view (FabricGraph)

:func:`shipped` gives the path of a topology shipped with ibfabric by name.
"""

from __future__ import annotations

import os
from importlib import resources
from pathlib import Path

import attrs

from ibfabric.errors import ConfigError, TopologyError

#: File name endings that say "this is an ibnetdiscover dump" (the content must then agree).
DUMP_SUFFIXES = (".ibnetdiscover", ".ibnd")

__all__ = ["detect_format", "check_network", "load_network", "load_fabric", "no_ib_nodes", "shipped", "SHIPPED"]

#: Topologies shipped in this package (name -> file name).
SHIPPED = {
    "bermudez2006_fig1": "bermudez2006_fig1.ned",
    "irregular16": "irregular16.ned",
    "kim2007_15": "kim2007_15.ned",
    "kim2007_15h1": "kim2007_15h1.ned",
    "kim2007_30": "kim2007_30.ned",
}


def shipped(name: str) -> Path:
    """Path of a shipped topology (``'irregular16'``)."""
    if name not in SHIPPED:
        raise ConfigError(f"no shipped topology '{name}' (valid: {', '.join(sorted(SHIPPED))})")
    return Path(str(resources.files("ibfabric.topologies").joinpath(SHIPPED[name])))


def detect_format(text: str, filename: str | None = None) -> str:
    """``'ibnetdiscover'`` or ``'ned'``, by content; a file named ``*.ibnetdiscover``/``*.ibnd``
    whose content is not a dump raises TopologyError (``not an ibnetdiscover dump``) at its first line."""
    if not _may_be_a_dump(text) and (filename is None or not filename.lower().endswith(DUMP_SUFFIXES)):
        return "ned"  # (without importing the dump reader: about 3 ms)
    from .ibnetdiscover import looks_like_ibnetdiscover, not_a_dump

    if looks_like_ibnetdiscover(text):
        return "ibnetdiscover"
    if filename is not None and filename.lower().endswith(DUMP_SUFFIXES):
        raise not_a_dump(text, filename)
    return "ned"


def _may_be_a_dump(text: str) -> bool:
    """False if :func:`~ibfabric.topologies.ibnetdiscover.looks_like_ibnetdiscover` is sure to be:
    none of the lines it reads starts as a node line or the banner."""
    return any(line.lstrip().startswith(("Switch", "Ca", "Rt", "# Topology file")) for line in text.splitlines()[:400])


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


def _load(source, *, network=None, library=None, overrides=None, limits=None, names=None):
    """``(network, fabric)``: the elaborated network and its checked FabricGraph (None without IB nodes)."""
    from ibfabric.ned_like import elaborate

    path, text = _resolve(source)
    filename = "<string>"
    if path is not None:
        from ibfabric.components.routing.validate import read_text

        text = read_text(path)
        filename = str(source)
    kind = detect_format(text, filename if path is not None else None)
    if names is not None and kind != "ibnetdiscover":
        raise ConfigError(f"{filename}: choosing node names (names={names!r}) applies to ibnetdiscover dumps;"
                          " a NED file names its own submodules")
    if kind == "ibnetdiscover":
        net = _from_dump(text, filename, names=names or "desc", network=network, library=library,
                         overrides=overrides, limits=limits)
    elif path is not None:
        net = elaborate(path, network=network, library=library, overrides=overrides, limits=limits)
    else:
        net = elaborate(text, network=network, library=library, overrides=overrides, filename=filename, limits=limits)
    return net, check_network(net)


def _from_dump(text: str, filename: str, names: str = "desc", **kw):
    """Elaborate an ibnetdiscover dump; every location (of modules, connections and errors) is the dump's."""
    from ibfabric.ned_like import NedError, elaborate
    from ibfabric.ned_like.model import ElaboratedNetwork, Location

    from .ibnetdiscover import ned_with_lines

    ned, lines = ned_with_lines(text, filename, names=names)

    def move(loc):
        if loc is None or loc.file != filename or loc.line not in lines:
            return loc
        line, col = lines[loc.line]
        return Location(filename, line, col)

    try:
        net = elaborate(ned, filename=filename, **kw)
    except NedError as exc:
        raise NedError(exc.message, move(exc.location)) from None

    def relocate(m):
        conns = tuple(attrs.evolve(c, location=move(c.location)) for c in m.connections)
        subs = tuple(relocate(x) for x in m.submodules)
        return attrs.evolve(m, location=move(m.location), submodules=subs, connections=conns)

    return ElaboratedNetwork(root=relocate(net.root), source=net.source)


def check_network(net):
    """The checked :class:`~ibfabric.components.routing.fabric.FabricGraph` of an elaborated network, or None
    if it has no switches or channel adapters.

    This is where every command and the Python API meet the subnet checks of
    :mod:`ibfabric.components.routing.validate`: :func:`load_network` calls it, so
    ``topo show``, ``topo convert``, ``routes``, ``run``, :func:`ibfabric.load`
    and :func:`load_fabric` stop at the same first error, before building
    anything.

    Raises
    ------
    TopologyError, ConfigError
        ``file:line:col: ...`` at the node or connection that is wrong.
    """
    from ibfabric.components.routing.fabric import FabricGraph

    ib = ("ibfabric.components.Switch", "ibfabric.components.HCA")
    if not any(m.type_name in ib for m in net.simple_modules()):
        return None
    return FabricGraph.from_network(net)


def load_network(source, *, network: str | None = None, library=None, overrides=None, limits=None,
                 names: str | None = None):
    """Elaborate a topology (path, NED text or ibnetdiscover text) into an ElaboratedNetwork.

    A ``.ned`` file is elaborated in place, so the other ``.ned`` files of
    its directory provide the types it imports.  The subnet is checked
    (:func:`check_network`) before the network is returned.  *limits* are
    the :class:`~ibfabric.ned_like.Limits` of the elaboration (default: from
    the ``IBFABRIC_MAX_*`` environment variables).  *names* (``'desc'``,
    the default, ``'guid'`` or ``'lid'``) names the nodes of an ibnetdiscover
    dump (:func:`~ibfabric.topologies.ibnetdiscover.node_names`); it is an
    error for a NED topology.

    Raises
    ------
    NedError
        For syntax or semantic errors (``file:line:col: message``), and for
        networks beyond the limits.
    TopologyError, ConfigError
        For unreadable files, malformed ibnetdiscover dumps (at the dump's
        ``file:line:col``) and invalid subnets (duplicate LIDs or GUIDs,
        LIDs outside 1..0xBFFF, nodes cabled to themselves...).
    """
    return _load(source, network=network, library=library, overrides=overrides, limits=limits, names=names)[0]


def load_fabric(source, **kw):
    """The :class:`~ibfabric.components.routing.fabric.FabricGraph` of a topology, with LIDs as the topology gives them.

    Call ``.with_lids()`` on the result to assign the missing ones as a
    subnet manager would.  Raises as :func:`load_network` does.
    """
    net, fabric = _load(source, **kw)
    if fabric is None:  # IB nodes of plugin types only: nodes are the modules with port gates
        from ibfabric.components.routing.fabric import FabricGraph

        fabric = FabricGraph.from_network(net)
    if not len(fabric.nodes):
        raise no_ib_nodes(net)
    return fabric


def no_ib_nodes(net) -> TopologyError:
    """The error for a network with no switch or channel adapter: nothing to route or simulate."""
    where = f"{net.root.location}: " if net.root.location is not None else ""
    return TopologyError(f"{where}network '{net.name}' has no InfiniBand nodes (no Switch or HCA)")
