"""The ``spf`` routing engine: shortest path first with a user-chosen link cost."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Mapping

import numpy as np

from ibfabric.components.rates import link_rate
from ibfabric.components.routing.fabric import FabricGraph, Link
from ibfabric.components.routing.tables import ForwardingTables
from ibfabric.errors import ConfigError
from ibfabric.plugins.manager import hookimpl

from ._common import SwitchView, assign_balanced, new_work, parse_options, record_work

__all__ = ["compute", "link_costs", "switch_distances"]


def _cost_option(value: Any) -> Any:
    if callable(value):
        return value
    if value in ("hops", "1/rate"):
        return value
    raise ValueError(f"must be one of (hops, 1/rate) or, from Python, a function of a Link (got {value!r})")


def link_costs(fabric: FabricGraph, view: SwitchView, cost: str | Callable[[Link], float]) -> np.ndarray:
    """Cost of leaving each switch through each port, shape (S, P); inf where no switch is there.

    ``'hops'``: 1 per link.  ``'1/rate'``: the fastest link's data rate over
    this link's (1 for the fastest links).  A callable gets each
    switch-to-switch :class:`~ibfabric.components.routing.fabric.Link` and returns a positive cost.
    """
    w = np.full((view.S, view.P), np.inf)
    rows = fabric.switch_row
    sw_links = [ln for ln in fabric.links if rows[ln.a] >= 0 and rows[ln.b] >= 0 and ln.a != ln.b]
    if cost == "hops":
        vals = [1.0] * len(sw_links)
    elif cost == "1/rate":
        rates = [ln.rate or link_rate(ln.width, ln.speed) for ln in sw_links]
        top = max(rates, default=1.0)
        vals = [top / r for r in rates]
    else:
        vals = [float(cost(ln)) for ln in sw_links]
        bad = [v for v in vals if not (v > 0 and np.isfinite(v))]
        if bad:
            raise ConfigError(f"routing engine 'spf': link costs must be positive and finite (got {bad[0]!r})")
    for ln, v in zip(sw_links, vals):
        w[rows[ln.a], ln.port_a] = v
        w[rows[ln.b], ln.port_b] = v
    return w


def switch_distances(view: SwitchView, w: np.ndarray, work: dict | None = None) -> np.ndarray:
    """All-pairs least costs between switches (inf if unreachable).

    Bellman-Ford relaxation on every pair at once: each round relaxes every
    port of every switch towards every destination with one array operation
    per port number, until nothing changes.  With *work*, adds to it the
    switch rows swept (``visits``) and the (port, destination) relaxations.
    """
    S = view.S
    d = np.full((S, S), np.inf)
    np.fill_diagonal(d, 0.0)
    nbr = view.nbr
    ports = [p for p in range(view.P) if (nbr[:, p] >= 0).any()]
    sweeps = 0
    for _ in range(max(S, 1)):
        sweeps += 1
        changed = False
        for p in ports:
            rows = np.flatnonzero(nbr[:, p] >= 0)
            cand = w[rows, p, None] + d[nbr[rows, p], :]
            better = cand < d[rows]
            if better.any():
                changed = True
                d[rows] = np.where(better, cand, d[rows])
        if not changed:
            break
    if work is not None:  # every sweep relaxes every switch port towards every destination
        work["visits"] = work.get("visits", 0) + sweeps * S
        work["relaxations"] = work.get("relaxations", 0) + sweeps * S * int((nbr >= 0).sum())
    return d


def compute(fabric: FabricGraph, options: Mapping[str, Any] | None = None, rng: np.random.Generator | None = None) -> ForwardingTables:
    """Shortest-path-first tables for a link cost, balanced over equal-cost ports.

    Parameters
    ----------
    fabric : FabricGraph
        The fabric, with every LID assigned.
    options : dict
        ``cost``: ``'hops'`` (default), ``'1/rate'`` (inverse link data
        rate, normalised so the fastest links cost 1) or, when called from
        Python, a function ``cost(link) -> float`` (positive) of each
        switch-to-switch :class:`~ibfabric.components.routing.fabric.Link`.
    rng : numpy.random.Generator
        Unused (the engine is deterministic).

    Returns
    -------
    ForwardingTables
        Linear tables; ``info["cost"]`` is the (S, S) matrix of least costs
        between switches.

    Raises
    ------
    ConfigError
        For an unknown option or cost, or a non-positive link cost.

    Examples
    --------
    A triangle of switches where the direct s1-s3 link is slow (1x SDR):
    with ``cost=1/rate`` s1 reaches s3 through s2.

    >>> from ibfabric.components.routing.fabric import FabricGraph, NodeSpec, Link
    >>> g = FabricGraph(
    ...     [NodeSpec("s1", True, 4, lid=1), NodeSpec("s2", True, 4, lid=2), NodeSpec("s3", True, 4, lid=3)],
    ...     [Link(0, 1, 1, 1, "4x", "QDR"), Link(1, 2, 2, 1, "4x", "QDR"), Link(0, 2, 2, 2, "1x", "SDR")])
    >>> compute(g, {}).port(0, 3), compute(g, {"cost": "1/rate"}).port(0, 3)
    (2, 1)

    Notes
    -----
    Kim et al.'s SPF is Dijkstra's algorithm from every switch with a
    user-specifiable cost.  Here the all-pairs least costs are found by
    Bellman-Ford rounds on all pairs at once (each round is one gather and
    one minimum per port number over an S x S array; rounds <= the most
    links on a least-cost path), O(R * P * S^2) array work.  Candidate
    ports are those on a least-cost path; LIDs are then assigned in
    increasing order to the least-loaded candidate, as in ``minhop``
    (with ``cost=hops`` the tables are exactly minhop's).  Positive costs
    make every next hop strictly nearer the destination, so tables are
    loop-free; they are not deadlock-free in general (Kim §3.1, §3.3).

    References
    ----------
    .. [1] E. J. Kim, K. H. Yum, C. R. Das, M. Yousif, J. Duato, "Exploring
       IBA Design Space for Improved Performance", IEEE TPDS 18(4), 2007,
       §3.1 (Shortest Path First).
    """
    opts = parse_options("spf", options, {"cost": ("hops", _cost_option)})
    view = SwitchView(fabric)
    w = link_costs(fabric, view, opts["cost"])
    work = new_work()
    d = switch_distances(view, w, work)
    nbv = view.nbr >= 0
    nbc = np.where(nbv, view.nbr, 0)

    def allowed(a: int) -> np.ndarray:
        col = d[:, a]
        via = w + col[nbc]
        tol = 1e-9 * np.maximum(col, 1.0)
        return nbv & np.isfinite(via) & (via <= (col + tol)[:, None]) & (col[nbc] < col[:, None])

    lft = assign_balanced(view, allowed, work)
    cost_name = opts["cost"] if isinstance(opts["cost"], str) else getattr(opts["cost"], "__name__", "custom")
    info = record_work({"cost": d, "cost_function": cost_name}, work)
    return ForwardingTables(fabric, lft, engine="spf", info=info)


@hookimpl
def ibfabric_register_routing_engines(register):
    register("spf", compute, description="shortest path first with cost=hops|1/rate (Kim et al. 2007, §3.1)")
