"""The ``file`` routing engine: forwarding tables loaded from an OpenSM ``opensm-lfts.dump``."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

import numpy as np

from ibfabric.components.routing.fabric import FabricGraph
from ibfabric.components.routing.opensm import read_lfts
from ibfabric.components.routing.tables import NO_PORT, ForwardingTables
from ibfabric.errors import ConfigError
from ibfabric.plugins.manager import hookimpl

from ._common import parse_options, record_work

__all__ = ["compute"]


def compute(fabric: FabricGraph, options: Mapping[str, Any] | None = None, rng: np.random.Generator | None = None) -> ForwardingTables:
    """Tables read from a dump file, as OpenSM's ``-R file -U FILE`` does.

    Parameters
    ----------
    fabric : FabricGraph
        The fabric, with every LID assigned (the dump's LIDs must be the fabric's).
    options : dict of str
        ``path``: the ``opensm-lfts.dump`` file (required).
    rng : numpy.random.Generator
        Unused.

    Returns
    -------
    ForwardingTables
        Linear tables; ``info["source"]`` is the path, ``info["missing"]``
        the switches the file has no table for.

    Raises
    ------
    ConfigError
        Without ``path``, for an unknown option, a missing file, a file that
        is not UTF-8 text, or a line that does not parse or does not fit the
        fabric (``FILE:LINE:COL: ...``, see
        :func:`ibfabric.components.routing.opensm.read_lfts`).

    Examples
    --------
    Tables survive a round trip through the OpenSM format:

    >>> import tempfile, os
    >>> from ibfabric.components.routing.fabric import FabricGraph, NodeSpec, Link
    >>> from ibfabric.components.routing.opensm import write_lfts
    >>> from ibfabric.plugins.routing import minhop
    >>> g = FabricGraph([NodeSpec("s1", True, 2, lid=1), NodeSpec("h", False, 1, lid=2)], [Link(1, 1, 0, 2)])
    >>> path = os.path.join(tempfile.mkdtemp(), "opensm-lfts.dump")
    >>> _ = open(path, "w").write(write_lfts(minhop.compute(g, {})))
    >>> compute(g, {"path": path}).lft.tolist()
    [[255, 0, 2]]

    Notes
    -----
    Switches are matched by node GUID, as OpenSM matches them; a GUID the
    fabric does not have is an error, as are a header LID that is not the
    switch's, LID 0, multicast LIDs, ports the switch lacks, and a LID sent
    to port 0 that is not the switch's own (the switch would absorb those
    packets).  Beyond that, entries are taken as they are (no check that
    they route anything: run ``ibfabric routes --check`` for that).  Linear
    time in the file's size.

    References
    ----------
    .. [1] OpenSM, ``osm_ucast_file.c`` (the ``file`` routing engine) and
       ``osm_dump.c`` (``dump_ucast_lfts``).
    """
    opts = parse_options("file", options, {"path": (None, str)})
    if not opts["path"]:
        raise ConfigError("routing engine 'file' needs the option path=FILE (an opensm-lfts.dump)")
    path = Path(opts["path"])
    if not path.is_file():
        raise ConfigError(f"routing engine 'file': {path}: no such file")
    tables = read_lfts(path, fabric)
    # work: reading the table, one entry per (switch, LID) line of the dump and one visit per switch block
    record_work(tables.info, {"visits": tables.lft.shape[0], "entries": np.count_nonzero(tables.lft != NO_PORT)})
    return tables


@hookimpl
def ibfabric_register_routing_engines(register):
    register("file", compute, description="tables loaded from an OpenSM opensm-lfts.dump (option path=FILE)")
