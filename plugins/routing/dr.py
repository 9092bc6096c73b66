"""The ``dr`` routing engine: Destination Renaming (López et al. 2001; Bermúdez et al. 2006, §2.4)."""

from __future__ import annotations

import math
from typing import Any, Mapping

import numpy as np

from ibfabric.components.routing.fabric import FabricGraph
from ibfabric.components.routing.opensm import short_names
from ibfabric.components.routing.routecheck import endpoint_label
from ibfabric.components.routing.tables import ForwardingTables
from ibfabric.errors import ConfigError
from ibfabric.plugins.manager import hookimpl

from ._common import SwitchView, new_work, parse_options, record_work
from ._updown import UpDown, root_info, updown_for
from .fera import fera_tables

__all__ = ["compute", "dr_tables"]


class _Router:
    """Shortest legal up*/down* paths that know the input port (what Autonet or Myrinet could use)."""

    def __init__(self, view: SwitchView, ud: UpDown):
        self.ud = ud
        self.work = new_work()
        self.dist: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        self.ports = []  # per switch: [(port, neighbour, is_up)]
        for x in range(view.S):
            ps = np.flatnonzero(ud.nbr[x] >= 0)
            self.ports.append([(int(p), int(ud.nbr[x, p]), bool(ud.up[x, p])) for p in ps])

    def path(self, x: int, a: int, prefer: np.ndarray) -> list[tuple[int, int]] | None:
        """(switch, port) hops of a shortest legal route from switch *x* (not gone down yet) to switch *a*.

        Among equally short next hops, the port *prefer* holds for the
        switch (the destination's current entry) wins, then the lowest port.
        """
        if a not in self.dist:
            self.dist[a] = self.ud.legal_distances(a)
        down, anyd = self.dist[a]
        if anyd[x] < 0:
            return None
        hops: list[tuple[int, int]] = []
        went_down = False
        relax = 0  # ports examined along the walk (a local int: this loop is DR's hot path)
        while x != a:
            best, best_key = None, None
            ports = self.ports[x]
            relax += len(ports)
            for p, y, up in ports:
                if up:
                    if went_down or anyd[y] < 0:
                        continue
                    cost = anyd[y]
                else:
                    if down[y] < 0:
                        continue
                    cost = down[y]
                key = (cost, p != prefer[x], p)
                if best_key is None or key < best_key:
                    best, best_key = (p, y, up), key
            p, y, up = best
            hops.append((x, p))
            went_down = went_down or not up
            x = y
        work = self.work
        work["visits"] += len(hops)
        work["relaxations"] += relax
        return hops

    def search_work(self) -> dict[str, int]:
        """Work of the two-state searches done so far: every (switch, state) reached is one visit.

        Counted once at the end, over all destinations at once (per search
        it would cost DR a few percent of its time).
        """
        if not self.dist:
            return {}
        reached = np.array(list(self.dist.values())) >= 0  # (destinations, 2 states, S)
        return {"visits": int(np.count_nonzero(reached)), "relaxations": int(reached.sum(axis=(0, 1)) @ self.ud.degree)}


def dr_tables(fabric: FabricGraph, view: SwitchView, ud: UpDown) -> ForwardingTables:
    """DR tables on an existing up*/down* graph (used by ``hybrid`` too)."""
    base = fera_tables(fabric, view, ud)
    router = _Router(view, ud)
    ne = len(fabric.ep_lid)
    is_ca = ~fabric.is_switch[fabric.ep_node]
    routed = view.ep_row >= 0
    hosts = np.flatnonzero(is_ca & routed)
    hosts = hosts[np.argsort(fabric.ep_lid[hosts], kind="stable")]
    switches = np.flatnonzero(~is_ca)
    offset = np.zeros((ne, ne), dtype=np.int64)
    names: dict[int, list[np.ndarray]] = {}
    checks = 0  # (switch, name) entries a route is compared with, plus names scanned for a switch source
    for d in hosts.tolist():
        a, pd = int(view.ep_row[d]), int(view.ep_att_port[d])
        fresh = np.full(view.S, -1, dtype=np.int64)
        fresh[a] = pd
        variants = [fresh]
        for s in hosts.tolist() + switches.tolist():
            if s == d:
                continue
            if not is_ca[s]:
                x = int(view.ep_row[s])
                have = [v for v, var in enumerate(variants) if var[x] >= 0]
                checks += len(variants)
                if have:  # a switch on a renamed route: the rest of that route is legal for it
                    offset[s, d] = have[0]
                    continue
            x = int(view.ep_row[s])
            hops = router.path(x, a, variants[0])
            if hops is None:
                continue
            rows = np.array([h[0] for h in hops] + [a], dtype=np.int64)
            ports = np.array([h[1] for h in hops] + [pd], dtype=np.int64)
            for v, var in enumerate(variants):
                checks += len(rows)
                cur = var[rows]
                if ((cur < 0) | (cur == ports)).all():
                    break
            else:
                variants.append(np.full(view.S, -1, dtype=np.int64))
                v = len(variants) - 1
            variants[v][rows] = ports
            offset[s, d] = v
        names[d] = variants
    # every host's LMC range must hold its names
    worst = max(names.items(), key=lambda kv: len(kv[1]), default=None)
    need = max((math.ceil(math.log2(len(v))) for v in names.values()), default=0)
    short = [d for d, v in names.items() if (1 << int(fabric.ep_lmc[d])) < len(v)]
    if short:
        d = short[0]
        raise ConfigError(
            f"dr needs LMC >= {need}; set the subnet manager's lmc to {need} "
            f"({endpoint_label(fabric, d)} needs {len(names[d])} LIDs, it has {1 << int(fabric.ep_lmc[d])})"
        )
    lft = base.lft.copy()
    entries = 0
    for d, variants in names.items():
        entries += view.S << int(fabric.ep_lmc[d])
        lo = int(fabric.ep_lid[d])
        fill = base.lft[:, lo].astype(np.int64)
        for o in range(1 << int(fabric.ep_lmc[d])):
            var = variants[o] if o < len(variants) else variants[0]
            lft[:, lo + o] = np.where(var >= 0, var, fill).astype(np.uint8)
    info = dict(root_info(fabric, ud))
    shorts = short_names(fabric)
    info["names"] = {endpoint_label(fabric, d, shorts): len(v) for d, v in names.items()}
    info["lmc_required"] = need
    info["renamed"] = sum(1 for v in names.values() if len(v) > 1)
    if worst is not None:
        info["most_names"] = (endpoint_label(fabric, worst[0], shorts), len(worst[1]))
    # work: FERa's (the base tables, up*/down* graph included), the searches
    # and walks, the name checks and the host columns written
    searches = router.search_work()
    names_work = {"checks": checks, "entries": entries}
    record_work(info, base.info["work"], router.work, searches, names_work)
    info["work_parts"] = {"fera": dict(base.info["work"]), "searches": dict(searches), "walks": dict(router.work),
                          "names": names_work}
    return ForwardingTables(fabric, lft, engine="dr", info=info, path_offset=offset)


def compute(fabric: FabricGraph, options: Mapping[str, Any] | None = None, rng: np.random.Generator | None = None) -> ForwardingTables:
    """Destination Renaming: shortest legal up*/down* routes between hosts, made IBA-consistent by extra DLIDs.

    Parameters
    ----------
    fabric : FabricGraph
        The fabric, with every LID assigned.  Channel adapters need an LMC
        large enough for the names DR gives them (see Raises).
    options : dict of str
        ``root``: root switch of the up*/down* graph (LID or node name;
        default the switch nearest the subnet manager).
    rng : numpy.random.Generator
        Unused (the engine is deterministic).

    Returns
    -------
    ForwardingTables
        Linear tables with every LID of every LMC range filled, and
        ``path_offset[src, dst]``: which of the destination's LIDs a source
        uses.  ``info``: ``names`` (LIDs used per host), ``lmc_required``,
        ``renamed`` (hosts needing more than one LID), plus the up*/down*
        root and levels and the operation counts ``work``/``work_total``
        (docs/routing.md, "Computation time"), split in ``work_parts``:
        ``fera`` (the base tables and the up*/down* graph), ``searches``
        (the two-state searches), ``walks`` (every hop of every host-pair
        route and the ports it examines) and ``names`` (the name checks and
        the host columns written).

    Raises
    ------
    ConfigError
        For an unknown option, or when a host needs more LIDs than its LMC
        range has: ``dr needs LMC >= k; set the subnet manager's lmc to k``.
        The engine does not reassign LIDs itself.

    Examples
    --------
    An 8-switch random fabric in which one host needs a second name: with
    LMC 0 the engine says which ``lmc`` to set; with LMC 1 every source
    gets a DLID whose route is legal.

    >>> from ibfabric.topologies.generators import irregular
    >>> g = irregular(8, links_per_switch=4, hosts_per_switch=1, seed=42)
    >>> compute(g.with_lids(lmc=0), {})
    Traceback (most recent call last):
    ...
    ibfabric.errors.ConfigError: dr needs LMC >= 1; set the subnet manager's lmc to 1 (h2_0 port 1 needs 2 LIDs, it has 1)
    >>> t = compute(g.with_lids(lmc=1), {})
    >>> t.info["renamed"], t.info["names"]["h2_0 port 1"], int(t.path_offset.max())
    (1, 2, 1)

    Notes
    -----
    For every destination host (in LID order) every source host's route is
    a shortest legal up*/down* route computed *with* the input port known
    (a two-state search: up allowed / already gone down).  Routes are
    checked one after another against the entries this destination already
    has in each of its names (DLIDs): the first name whose entries agree
    with the route at every switch takes it; if none does the destination
    gets a new name.  A packet carrying name v therefore follows exactly the
    route assigned to v, which is legal, so the tables are deadlock-free.
    As the paper says, DR handles only host-to-host routes: routes to
    switches are FERa's; a switch as a source uses a name whose route
    already passes through it (a suffix of a legal route) or, if there is
    none, gets its own route like a host.  Entries no route uses are filled
    from FERa's table, which keeps every name loop-free.  Cost: one
    O(diameter * ports) walk per host pair in Python plus O(path) checks
    per existing name -- far more than FERa, as the paper reports (Fig. 10).

    References
    ----------
    .. [1] P. López, J. Flich, J. Duato, "Deadlock-Free Routing in
       InfiniBand through Destination Renaming", Proc. ICPP 2001.
    .. [2] A. Bermúdez, R. Casado, F. J. Quiles, J. Duato, "Fast Routing
       Computation on InfiniBand Networks", IEEE TPDS 17(3), 2006, §2.4,
       Figs. 5 and 7.
    """
    opts = parse_options("dr", options, {"root": (None, str)})
    view = SwitchView(fabric)
    ud = updown_for(fabric, view, opts["root"])
    return dr_tables(fabric, view, ud)


@hookimpl
def ibfabric_register_routing_engines(register):
    register("dr", compute, description="Destination Renaming: extra DLIDs per host via LMC (Bermúdez et al. 2006, §2.4)")
