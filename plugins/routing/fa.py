"""The ``fa`` routing engine: fully adaptive minimal routing over up*/down* escape paths.

Martínez, Flich, Robles, López, Duato, "Supporting Fully Adaptive Routing
in InfiniBand Networks", IPDPS 2003, §3-4.  Each destination port has a
range of ``2^LMC`` LIDs.  In every switch's table, entry ``d`` (the base
LID) holds the up*/down* route (the *escape* option, what deterministic
packets use: DLID least significant bit 0) and the other entries of the
range hold *adaptive* options: output ports on minimal paths to the
destination, at most ``options - 1`` of them besides the escape port
(``options`` distinct ports in all; 2 in the paper's main results).
Switches with ``optionBits`` equal to the LMC read the whole range for
DLIDs whose LSB is 1 (see :mod:`ibfabric.components.options`).

Deadlock freedom (Duato's condition for virtual cut-through): the escape
sub-network, entry ``d`` of every range, is up*/down* and its channel
dependency graph is acyclic; an escape option is always offered and
always usable (an adaptive option only when the next buffer's adaptive
part has room).  :func:`escape_tables` gives that sub-network, which
``ibfabric routes --check`` checks for such tables.  Preference for
minimal paths rules out livelock: adaptive options are all minimal.
"""

from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from ibfabric.components.routing.fabric import FabricGraph
from ibfabric.components.routing.tables import NO_PORT, ForwardingTables
from ibfabric.errors import ConfigError
from ibfabric.plugins.manager import hookimpl

from . import updn
from ._common import SwitchView, parse_options, record_work, search_work

__all__ = ["compute", "escape_tables", "non_minimal_options", "option_counts"]


def _positive(value: Any) -> int:
    n = int(value)
    if not 1 <= n <= 128:
        raise ValueError(f"must be an integer from 1 to 128 (got {value!r})")
    return n


def compute(fabric: FabricGraph, options: Mapping[str, Any] | None = None,
            rng: np.random.Generator | None = None) -> ForwardingTables:
    """FA tables: up*/down* in entry ``d`` of each LID range, minimal adaptive ports in the others.

    Parameters
    ----------
    fabric : FabricGraph
        With LIDs assigned; every endpoint that should get adaptive options
        needs an LMC with ``2^LMC >= options`` (the subnet manager's ``lmc``).
    options : dict of str
        ``options``: distinct output ports per (switch, destination), the
        escape port included (default 2); ``root``: the up*/down* root, as
        for ``updn``.
    rng : numpy.random.Generator
        Unused (deterministic).

    Returns
    -------
    ForwardingTables
        ``info``: ``options``, ``escape_engine`` ("updn"), the updn info,
        and ``option_counts`` (see :func:`option_counts`).

    Raises
    ------
    ConfigError
        If a CA port's LID range is too small for the options asked for.

    Examples
    --------
    A ring of four switches with a host each: towards the opposite host,
    both ways round are minimal, so those pairs get two options; towards a
    neighbour's host, one (Martínez et al. 2003, Table 2 counts these).

    >>> from ibfabric.components.routing.fabric import FabricGraph, NodeSpec, Link
    >>> sw = [NodeSpec(f"s{i}", True, 3, lid=i + 1) for i in range(4)]
    >>> hosts = [NodeSpec(f"h{i}", False, 1, lid=8 + 2 * i, lmc=1) for i in range(4)]
    >>> links = [Link(i, 1, (i + 1) % 4, 2) for i in range(4)] + [Link(i, 3, 4 + i, 1) for i in range(4)]
    >>> t = compute(FabricGraph(sw + hosts, links), {"root": "s0"})
    >>> {k: round(v, 4) for k, v in t.info["option_counts"].items()}
    {1: 0.6667, 2: 0.3333}
    >>> t.lft[0, 12:14].tolist()  # s0 towards h2: escape port 2 (via s3, balanced by updn), adaptive port 1
    [2, 1]

    Notes
    -----
    Adaptive entries: at switch ``s`` towards destination switch ``t``, the
    ports to switches one hop closer to ``t``; the escape port is not
    repeated; if there are more than ``options - 1`` such ports, a rotation
    by destination index picks which, so load spreads over them.  The range
    entries after ``d`` cycle through the chosen ports; with none, every
    entry repeats the escape port (one option).

    References
    ----------
    .. [1] J. C. Martínez, J. Flich, A. Robles, P. López, J. Duato,
       "Supporting Fully Adaptive Routing in InfiniBand Networks", IPDPS 2003.
    .. [2] J. Duato, "A Necessary and Sufficient Condition for Deadlock-Free
       Routing in Cut-Through and Store-and-Forward Networks", IEEE TPDS 7(8), 1996.
    """
    opts = parse_options("fa", options, {"options": (2, _positive), "root": (None, str)})
    n_opt = opts["options"]
    esc = updn.compute(fabric, {} if opts["root"] is None else {"root": opts["root"]}, rng)
    view = SwitchView(fabric)
    hops = fabric.switch_hops()
    S = view.S
    lft = esc.lft.copy()
    need = (n_opt - 1).bit_length()
    degree = (view.nbr >= 0).sum(axis=1).tolist()
    relax = entries = 0
    for e in range(len(fabric.ep_node)):
        base = int(fabric.ep_lid[e])
        size = 1 << int(fabric.ep_lmc[e])
        a = int(view.ep_row[e])
        if a < 0 or base <= 0:
            continue
        if n_opt > 1 and size < n_opt and not fabric.is_switch[int(fabric.ep_node[e])]:
            raise ConfigError(f"routing engine 'fa': {fabric.endpoint_name(e)} has LMC {int(fabric.ep_lmc[e])}"
                              f" ({size} LIDs) but {n_opt} routing options need LMC >= {need}"
                              f" (set the subnet manager's 'lmc')")
        for s in range(S):
            escape = int(esc.lft[s, base])
            if escape == NO_PORT:
                continue
            entries += size
            if s == a or size == 1:
                lft[s, base:base + size] = escape
                continue
            relax += degree[s]
            nb = view.nbr[s]
            d = hops[s, a]
            minimal = [p for p in np.flatnonzero(nb >= 0).tolist() if hops[nb[p], a] == d - 1 and p != escape]
            if len(minimal) > n_opt - 1:
                k = e % len(minimal)
                minimal = (minimal[k:] + minimal[:k])[:n_opt - 1]
            row = [escape] + [minimal[i % len(minimal)] if minimal else escape for i in range(size - 1)]
            lft[s, base:base + size] = row
    info = dict(esc.info)
    info.update({"options": n_opt, "escape_engine": "updn"})
    t = ForwardingTables(fabric, lft, engine="fa", info=info)
    t.info["option_counts"] = option_counts(t)
    # work: the escape tables (updn), the all-pairs hop searches, the ports
    # examined for minimal options and the range entries written, and the
    # option statistics (one check per switch and adapter)
    n_ca = int(np.count_nonzero(~fabric.is_switch[fabric.ep_node]))
    record_work(t.info, esc.info["work"], search_work(hops >= 0, np.asarray(degree)),
                {"relaxations": relax, "entries": entries, "checks": S * n_ca})
    return t


def escape_tables(tables: ForwardingTables) -> ForwardingTables:
    """The escape sub-network: every LID of each endpoint's range routed like its base LID (entry ``d``)."""
    g = tables.fabric
    lft = tables.lft.copy()
    for e in range(len(g.ep_node)):
        base = int(g.ep_lid[e])
        size = 1 << int(g.ep_lmc[e])
        if base > 0 and size > 1:
            lft[:, base:base + size] = lft[:, [base]]
    return ForwardingTables(g, lft, tables.default_port.copy(), engine=f"{tables.engine} (escape)",
                            info=dict(tables.info))


def option_counts(tables: ForwardingTables) -> dict[int, float]:
    """Share of (switch, destination CA port) pairs by number of distinct ports in the destination's
    LID range (Martínez et al. 2003, Table 2); pairs where the switch is the destination's own are left out."""
    g = tables.fabric
    view = SwitchView(g)
    counts: dict[int, int] = {}
    total = 0
    for e in range(len(g.ep_node)):
        if g.is_switch[int(g.ep_node[e])]:
            continue
        base = int(g.ep_lid[e])
        size = 1 << int(g.ep_lmc[e])
        a = int(view.ep_row[e])
        block = tables.lft[:, base:base + size]
        for s in range(view.S):
            if s == a:
                continue
            ports = set(block[s].tolist()) - {NO_PORT}
            if ports:
                counts[len(ports)] = counts.get(len(ports), 0) + 1
                total += 1
    return {k: counts[k] / total for k in sorted(counts)} if total else {}


def non_minimal_options(tables: ForwardingTables) -> list[str]:
    """The adaptive entries (range entries after ``d``) that do not lead one hop closer to the
    destination, as ``"switch: LID n -> port p"`` (empty when every option is minimal)."""
    g = tables.fabric
    view = SwitchView(g)
    hops = g.switch_hops()
    out = []
    for e in range(len(g.ep_node)):
        base = int(g.ep_lid[e])
        size = 1 << int(g.ep_lmc[e])
        a = int(view.ep_row[e])
        if a < 0 or base <= 0 or size == 1:
            continue
        for s in range(view.S):
            if s == a:
                continue
            for lid in range(base + 1, base + size):
                port = int(tables.lft[s, lid])
                nb = int(view.nbr[s, port]) if port != NO_PORT and port < view.P else -1
                if nb < 0 or hops[nb, a] != hops[s, a] - 1:
                    out.append(f"{g.nodes[int(g.switches[s])].name}: LID {lid} -> port {port}")
    return out


@hookimpl
def ibfabric_register_routing_engines(register):
    register("fa", compute, description="fully adaptive minimal routing over up*/down* escape paths (options=N, root=)")
