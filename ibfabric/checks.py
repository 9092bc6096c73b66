"""Run-level checks: what a simulation refuses to build, and what it warns about.

A :class:`~ibfabric.simulation.Simulation` calls :func:`check_built` once it
is built, and the summary calls :func:`result_warnings`.  A warning is one
line, given through :meth:`Simulation.warn <ibfabric.simulation.Simulation.warn>`:
it is kept in ``sim.warnings`` and in ``summary.json`` under ``"warnings"``,
and issued as an :class:`IbfabricWarning` (the command line prints it as
``ibfabric: warning: ...`` on stderr).

Errors
    A traffic source's ``load`` above :data:`MAX_LOAD`.

Warnings
    - A fabric that is not connected (a gate left unconnected in a compound
      module can cut a switch off): the nodes outside its largest connected
      part, the first :data:`SHOWN_NODES` of them named, get no routes.
    - Routes with a cycle in their channel dependency graph (as ``ibfabric
      routes --check`` reports it): the network may deadlock.  Every
      endpoint pair is walked up to :data:`ROUTE_CHECK_PAIRS` pairs; above
      that, the routes from evenly spaced sources only (a cycle found is
      real; none found is no proof).
    - Hosts given a ``load`` but no ``traffic`` pattern: they send nothing
      (the Python API's and experiment files' default is no traffic).
    - A traffic pattern that leaves some sources idle (``bit-reversal`` on a
      number of hosts that is not a power of two): the offered load is then
      lower than the configured one.
    - An empty measurement window (the run ends at or before the warm-up).
    - A saturated fabric (see :mod:`ibfabric.measure`); a failed packet
      conservation check.
    - A run that ends while the dynamic subnet manager is still assimilating
      a change: how long it has been at it, what it is doing, when a
      computation under way ends, and a longer ``--time`` to try.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from ibfabric.errors import ConfigError

if TYPE_CHECKING:  # pragma: no cover
    from ibfabric.simulation import Simulation

__all__ = ["IbfabricWarning", "MAX_LOAD", "NO_TRAFFIC", "ROUTE_CHECK_PAIRS", "SHOWN_NODES", "check_built",
           "result_warnings"]

#: The highest offered load a traffic source accepts, a multiple of its link's data rate.  Past 1 a
#: source is overloaded: the surplus only waits at the source, and the summary's exact count of the
#: messages waiting there costs time in proportion to it.  10 leaves room for overload experiments.
MAX_LOAD = 10.0

#: Endpoint pairs walked to look for a channel-dependency cycle before sampling sources instead
#: (about 0.2 s of numpy work; walking them all is quadratic in the endpoints).
ROUTE_CHECK_PAIRS = 1 << 18

#: Nodes a warning about a fabric that is not connected names (then "...").
SHOWN_NODES = 5


class IbfabricWarning(UserWarning):
    """Something in a simulation looks wrong but runs (see :mod:`ibfabric.checks`)."""


def check_built(sim: Simulation) -> None:
    """The checks of a built simulation: loads (errors), routes and traffic patterns (warnings).

    Raises
    ------
    ConfigError
        If a traffic source's load exceeds :data:`MAX_LOAD`.
    """
    _check_loads(sim)
    _check_no_traffic(sim)
    _check_connected(sim)
    _check_traffic(sim)
    _check_routes(sim)


def _sources(sim: Simulation):
    """``(hca, transmitter)`` of every traffic endpoint configured to send."""
    for h in sim.hosts:
        if getattr(h, "traffic", "") and h.first_port in h.tx:
            yield h, h.tx[h.first_port]


def _check_loads(sim: Simulation) -> None:
    for h, _ in _sources(sim):
        if not h.load <= MAX_LOAD:
            raise ConfigError(
                f"{h.path}: 'load' must be at most {MAX_LOAD:g} (got {h.load:g}): past 1 a source is overloaded"
                " and the surplus only waits at the source"
            )


#: The start of the warning for hosts that have a load but no traffic pattern (the saturation search stops on it).
NO_TRAFFIC = "no traffic:"


def _check_no_traffic(sim: Simulation) -> None:
    """Warn when hosts have a load but no traffic pattern: they inject nothing, whatever the load."""
    idle = [h for h in sim.hosts if getattr(h, "load", 0) > 0 and not getattr(h, "traffic", "")]
    if idle:
        loads = sorted({h.load for h in idle})
        shown = f"{loads[0]:g}" if len(loads) == 1 else f"{loads[0]:g}..{loads[-1]:g}"
        sim.warn(f"{NO_TRAFFIC} {len(idle)} of {len(sim.hosts)} hosts have a load ({shown}) but no traffic pattern"
                 " ('traffic' is \"\"), so they send nothing; set '**.traffic', e.g. \"uniform\"")


def _check_connected(sim: Simulation) -> None:
    """Warn when the IB nodes are not all linked together, naming those outside the largest part."""
    nodes = sim.ib_nodes
    index = {id(n): i for i, n in enumerate(nodes)}
    part = [-1] * len(nodes)
    sizes = []
    for start in range(len(nodes)):
        if part[start] >= 0:
            continue
        k = len(sizes)
        part[start], stack, size = k, [start], 0
        while stack:
            x = stack.pop()
            size += 1
            for peer, _, _ in nodes[x].links.values():
                y = index[id(peer)]
                if part[y] < 0:
                    part[y] = k
                    stack.append(y)
        sizes.append(size)
    if len(sizes) <= 1:
        return
    main = max(range(len(sizes)), key=lambda k: sizes[k])  # the largest part (the first of equal ones)
    cut = [n for i, n in enumerate(nodes) if part[i] != main]
    names = ", ".join(n.path.partition(".")[2] or n.path for n in cut[:SHOWN_NODES])
    more = f", ... ({len(cut)} in all)" if len(cut) > SHOWN_NODES else ""
    sim.warn(f"the fabric is not connected: {len(cut)} of {len(nodes)} InfiniBand nodes cannot reach the others"
             f" ({names}{more}); no route leads to them from the rest (a gate left unconnected?)")


def _check_traffic(sim: Simulation) -> None:
    """Warn when a pattern leaves sources idle (``active(src)`` False: they get no traffic source)."""
    groups: dict[tuple[str, str], list] = {}
    for h, tx in _sources(sim):
        key = (h.traffic, str(h.params["trafficOptions"]))
        g = groups.setdefault(key, [0, 0, 0.0, 0.0, set()])
        weight = h.load * tx.link.rate
        g[0] += 1
        g[2] += weight
        if tx.source is not None:
            g[1] += 1
            g[3] += weight
        g[4].add(h.load)
    for (name, options), (n, active, configured, offered, loads) in groups.items():
        if active == n or configured <= 0:
            continue
        reason = getattr(sim.traffic_pattern(name, options), "idle_reason", "the pattern gives them no destination")
        ratio = offered / configured
        text = (f"traffic '{name}': {n - active} of {n} sources send nothing ({reason}), so the offered load is"
                f" {ratio:.0%} of the configured one")
        if len(loads) == 1:
            load = loads.pop()
            text += f" (about {load * ratio:.3g} instead of {load:g})"
        sim.warn(text)


def _check_routes(sim: Simulation) -> None:
    """Warn when the installed routes have a channel-dependency cycle (sampled on large fabrics)."""
    tables = sim.tables
    if tables is None:
        return
    from ibfabric.components.routing.routecheck import cdg_cycle, describe_channel, route_walk

    fabric = tables.fabric
    ne = len(fabric.ep_lid)
    if ne < 2:
        return
    sources = None
    if ne * (ne - 1) > ROUTE_CHECK_PAIRS:
        sources = np.unique(np.linspace(0, ne - 1, max(16, ROUTE_CHECK_PAIRS // ne)).astype(np.int64))
    vl, num_vls = tables.vl_function()  # virtual layers (dfsssp, lash): one dependency graph per VL
    walk = route_walk(tables, sources, vl=vl, num_vls=num_vls)
    cycle = cdg_cycle(walk["deps"], len(walk["channels"]) * num_vls)
    if cycle:
        names = [describe_channel(fabric, walk["channels"], c, num_vls) for c in cycle[:4]]
        shown = " -> ".join(names) + (" -> ..." if len(cycle) > 4 else f" -> {names[0]}")
        sim.warn(f"routing '{tables.engine or '(unnamed)'}' has a channel-dependency cycle ({shown}):"
                 " the network may deadlock")


def result_warnings(sim: Simulation, summary: dict[str, Any]) -> list[str]:
    """The warnings a run's results call for: empty window, saturation, failed conservation (the features'
    own, such as the dynamic subnet manager still recovering, come with their summary sections)."""
    out = []
    if summary["window_ns"] <= 0:
        out.append(f"the measurement window is empty: the simulation is at {sim.now:g} ns, not after the warm-up"
                   f" ({sim.warmup:g} ns); nothing was measured")
    if summary["saturated"] and not summary["deadlock"]:
        out.append("the source backlog grew through the measurement window: the fabric is saturated at this load"
                   " (accepted load is the throughput it sustains)")
    if not summary["conservation_ok"]:
        out.append("packet conservation check failed: injected != delivered + dropped + in flight")
    return out
