"""The ``dor`` routing engine: dimension-order routing by lowest port, as OpenSM's dor."""

from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from ibfabric.components.routing.fabric import FabricGraph
from ibfabric.components.routing.tables import ForwardingTables
from ibfabric.plugins.manager import hookimpl

from ._common import SwitchView, assign_balanced, new_work, parse_options, record_work, search_work

__all__ = ["compute"]


def compute(fabric: FabricGraph, options: Mapping[str, Any] | None = None, rng: np.random.Generator | None = None) -> ForwardingTables:
    """Minimum-hop tables that always take the lowest dimension (port) left to correct.

    Parameters
    ----------
    fabric : FabricGraph
        The fabric, with every LID assigned; deadlock-free when cabled as a
        mesh or hypercube (the same port, or the same pair of ports, along
        each dimension everywhere).
    options : dict of str
        None are accepted.
    rng : numpy.random.Generator
        Unused (the engine is deterministic).

    Returns
    -------
    ForwardingTables
        Linear tables; ``info["hops"]`` holds the switch hop matrix.

    Raises
    ------
    ConfigError
        For any option, or a fabric with unassigned LIDs.

    Examples
    --------
    A 3 x 3 mesh (ports 1/2 go +/- along x, 3/4 along y): from sw0_0 to
    sw2_2, x is corrected first, then y.

    >>> from ibfabric.topologies.generators import mesh
    >>> t = compute(mesh((3, 3)).with_lids(), {})
    >>> g = t.fabric
    >>> lid = g.lid_of(g.index("h2_2_0"))
    >>> [t.port(g.index(s), lid) for s in ("sw0_0", "sw1_0", "sw2_0", "sw2_1")]
    [1, 1, 3, 3]

    Notes
    -----
    OpenSM's DOR is its min-hop engine without port equalisation: among
    the ports on a shortest path it takes the lowest-numbered, so on a
    consistently cabled mesh or hypercube every route corrects dimensions
    in increasing order, and dimension-order routes are deadlock-free
    (Dally and Seitz).  Parallel links to the same neighbour still share
    the routes (least-loaded first, LID by LID).  On a torus the
    wrap-around links close cycles that dimension order alone does not
    break: ``routes --check`` reports them (``lash`` or ``dfsssp`` route
    tori deadlock-free).  Cost: that of ``minhop``.

    References
    ----------
    .. [1] W. J. Dally, C. L. Seitz, "Deadlock-Free Message Routing in
       Multiprocessor Interconnection Networks", IEEE Trans. Computers
       C-36(5), 1987.
    .. [2] OpenSM, ``osm_ucast_mgr.c`` and ``doc/current-routing.txt`` (DOR
       Routing Algorithm).
    """
    parse_options("dor", options, {})
    view = SwitchView(fabric)
    hops = fabric.switch_hops()
    nbr = view.nbr
    nbv = nbr >= 0
    nbc = np.where(nbv, nbr, 0)
    rows = np.arange(view.S)

    def allowed(a: int) -> np.ndarray:
        h = hops[:, a]
        ok = nbv & (h[nbc] == (h - 1)[:, None]) & (h[nbc] >= 0)
        first = np.where(ok.any(axis=1), ok.argmax(axis=1), 0)
        return ok & (nbc == nbc[rows, first][:, None])

    work = new_work()
    lft = assign_balanced(view, allowed, work)
    # work: the all-pairs hop matrix (one breadth-first search per switch), the assignment
    info = record_work({"hops": hops}, search_work(hops >= 0, nbv.sum(axis=1)), work)
    return ForwardingTables(fabric, lft, engine="dor", info=info)


@hookimpl
def ibfabric_register_routing_engines(register):
    register("dor", compute, description="dimension-order routing: lowest shortest-path port first, like OpenSM dor")
