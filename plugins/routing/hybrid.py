"""The ``hybrid`` routing engine: provisional PIRa tables, then final FERa or DR tables (Bermúdez et al. 2006, §3.4)."""

from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from ibfabric.components.routing.fabric import FabricGraph
from ibfabric.components.routing.routecheck import cdg_cycle, describe_channel, route_walk
from ibfabric.components.routing.tables import ForwardingTables
from ibfabric.plugins.manager import hookimpl

from ._common import SwitchView, choice, parse_options, record_work
from ._updown import updown_for
from .dr import dr_tables
from .fera import fera_tables
from .pira import FATHERS, _fathers_option, pira_tables

__all__ = ["compute", "coexistence_cycle"]


def coexistence_cycle(first: ForwardingTables, second: ForwardingTables, work: dict | None = None) -> list[str]:
    """A cycle in the union of the two table sets' channel dependency graphs, [] if there is none.

    An empty result means routes of both sets can be in the network at the
    same time without deadlock (every packet follows one set's routes).
    With *work*, adds the check's work to it: every hop of every walked
    route (one table look-up: ``visits``) and every channel dependency fed
    to the cycle check (``checks``).
    """
    a = route_walk(first)
    b = route_walk(second)
    channels = a["channels"]
    cyc = cdg_cycle([a["deps"], b["deps"]], len(channels))
    if work is not None:
        hops = [w["hops"] for w in (a, b)]
        work["visits"] = work.get("visits", 0) + sum(int(h[h > 0].sum()) for h in hops)
        work["checks"] = work.get("checks", 0) + len(a["deps"]) + len(b["deps"])
    return [describe_channel(first.fabric, channels, c) for c in cyc]


def compute(fabric: FabricGraph, options: Mapping[str, Any] | None = None, rng: np.random.Generator | None = None) -> ForwardingTables:
    """Hybrid routing: PIRa's fast provisional tables, then FERa's or DR's final ones.

    Parameters
    ----------
    fabric : FabricGraph
        The fabric, with every LID assigned (with an LMC for ``final=dr``
        when DR renames hosts).
    options : dict
        ``final``: ``fera`` (default) or ``dr``.  ``root``: root switch of
        the shared up*/down* graph (LID or node name).  ``father`` and
        ``fathers``: PIRa's father choice (see ``pira``).
    rng : numpy.random.Generator
        Used by PIRa's ``father=random``.

    Returns
    -------
    ForwardingTables
        The final tables.  ``info["provisional"]`` holds PIRa's tables,
        ``info["coexist"]`` is True when the union of both sets' channel
        dependency graphs is acyclic, ``info["cycle"]`` a cycle otherwise.
        ``info["work"]`` and ``["work_total"]`` count both phases and the
        check, ``info["work_phases"]`` each (``provisional``: PIRa's work
        exactly, ``final``, ``coexistence``; docs/routing.md, "Computation
        time").

    Raises
    ------
    ConfigError
        For an unknown option or value, or (``final=dr``) too small an LMC.

    Examples
    --------
    On the subnet of the paper's Fig. 1:

    >>> from ibfabric.topologies.generators import bermudez2006_fig1
    >>> t = compute(bermudez2006_fig1(), {"final": "fera", "father": "highest-port"})
    >>> t.engine, t.info["provisional"].engine, t.info["coexist"]
    ('hybrid', 'pira', True)
    >>> int(t.info["provisional"].explicit_entries().sum()), int(t.explicit_entries().sum())
    (50, 120)

    Notes
    -----
    After a topology change the subnet manager first distributes PIRa's
    routes, which are computed fastest, and then, without stopping traffic,
    FERa's or DR's better routes.  Both sets are subsets of the routes of
    the same up*/down* graph, so they can coexist without deadlock (§3.4);
    the engine checks it: it walks every pair through both sets and looks
    for a cycle in the union of their channel dependency graphs.  Cost:
    PIRa plus FERa or DR plus two route walks.

    References
    ----------
    .. [1] A. Bermúdez, R. Casado, F. J. Quiles, J. Duato, "Fast Routing
       Computation on InfiniBand Networks", IEEE TPDS 17(3), 2006, §3.4
       and §4.2 (Figs. 10-12, "PIRa + FERa", "PIRa + DR").
    """
    opts = parse_options(
        "hybrid",
        options,
        {
            "final": ("fera", choice("fera", "dr")),
            "root": (None, str),
            "father": ("random", choice(*FATHERS)),
            "fathers": ({}, _fathers_option),
        },
    )
    view = SwitchView(fabric)
    ud = updown_for(fabric, view, opts["root"])
    rng = rng if rng is not None else np.random.default_rng(0)
    provisional = pira_tables(fabric, view, ud, rng, opts["father"], opts["fathers"])
    final = fera_tables(fabric, view, ud) if opts["final"] == "fera" else dr_tables(fabric, view, ud)
    check: dict[str, int] = {}
    cycle = coexistence_cycle(provisional, final, check)
    info = dict(final.info)
    info.update(final_engine=final.engine, provisional=provisional, coexist=not cycle, cycle=cycle)
    # work: both phases (the shared up*/down* graph counted once, in the first) and the check
    second = {k: v - ud.graph_work.get(k, 0) for k, v in final.info["work"].items()}
    record_work(info, provisional.info["work"], second, check)
    info["work_phases"] = {"provisional": provisional.info["work_total"], "final": sum(second.values()),
                           "coexistence": sum(check.values())}
    return ForwardingTables(fabric, final.lft, final.default_port, engine="hybrid", info=info, path_offset=final.path_offset)


@hookimpl
def ibfabric_register_routing_engines(register):
    register("hybrid", compute, description="provisional PIRa tables, then final FERa or DR ones (option final=fera|dr)")
