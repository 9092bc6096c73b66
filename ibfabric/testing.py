"""ibfabric's test fixtures, as a pytest plugin for plugin authors (and ibfabric's own tests).

Installing ibfabric registers this module with pytest (the ``pytest11``
entry point ``ibfabric``), so the tests of a plugin package use these
fixtures without a ``conftest.py``::

    import numpy as np
    from my_plugin.routing import my_engine

    def test_my_engine_delivers_everything(small_fabric, table_walker):
        tables = my_engine(small_fabric, {}, np.random.default_rng(0))
        table_walker.assert_delivers(tables)

    def test_my_arbiter_runs(run_ibfabric):
        import my_plugin
        summary = run_ibfabric("star", plugins=[my_plugin], overrides={"**.arbiter": "mine"})
        assert summary["conservation_ok"]

Fixtures
--------
``fabric_chain``, ``fabric_star``, ``fabric_irregular16``, ``fabric_fat_tree``
    Small :class:`~ibfabric.components.routing.fabric.FabricGraph` objects with every
    LID assigned (:func:`small_fabric_graph`).
``small_fabric``
    Each of the four in turn (a parametrized fixture: a test using it runs
    four times).
``make_simulation``
    :func:`build_simulation`: a :class:`~ibfabric.Simulation` of a small
    topology by name, with extra plugins and overrides.
``run_ibfabric``
    :func:`run_simulation`: build, run for a short simulated time, return
    the summary.
``table_walker``
    A :class:`TableWalker`: follow forwarding tables hop by hop
    (:func:`trace_route`) and check reachability, loops and deadlock
    freedom (:func:`~ibfabric.components.routing.routecheck.check_routes`).

The functions behind the fixtures are importable too
(``from ibfabric.testing import trace_route``).  Nothing heavy is imported
until a fixture or function is used, so loading the plugin costs every
pytest run of the environment nothing noticeable.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:  # pragma: no cover
    from ibfabric.components.routing.fabric import FabricGraph
    from ibfabric.components.routing.routecheck import RouteReport
    from ibfabric.components.routing.tables import ForwardingTables
    from ibfabric.simulation import Simulation

__all__ = [
    "CHAIN_NED",
    "STAR_NED",
    "SMALL_TOPOLOGIES",
    "TableWalker",
    "assert_deadlock_free",
    "assert_delivers",
    "build_simulation",
    "run_simulation",
    "small_fabric_graph",
    "small_topology",
    "trace_route",
]

CHAIN_NED = """
// host a -> n switches in a line -> host b, all links 1x SDR (4 ns per byte)
network chain
{
    parameters:
        int n = 1;
        double la @unit(m) = 2m;
        double lb @unit(m) = 7m;
    submodules:
        sw[n]: Switch { numPorts = 4; }
        a: HCA;
        b: HCA;
    connections:
        a.port[1] <--> Link { width = "1x"; speed = "SDR"; length = la; } <--> sw[0].port[1];
        for i=0..n-2 {
            sw[i].port[2] <--> Link { width = "1x"; speed = "SDR"; length = 3m; } <--> sw[i+1].port[1];
        }
        sw[n-1].port[2] <--> Link { width = "1x"; speed = "SDR"; length = lb; } <--> b.port[1];
}
"""
"""NED text of a chain: host ``a``, ``n`` switches in a line (parameter ``n``, default 1), host ``b``."""

STAR_NED = """
// k hosts on one switch
network star
{
    parameters:
        int k = 4;
    submodules:
        sw: Switch { numPorts = k; }
        h[k]: HCA;
    connections:
        for i=0..k-1 {
            h[i].port[1] <--> Link { width = "1x"; speed = "SDR"; length = 1m; } <--> sw.port[i+1];
        }
}
"""
"""NED text of a star: ``k`` hosts (parameter ``k``, default 4) on one switch."""

#: The small topologies the fixtures know by name, with what they are.
SMALL_TOPOLOGIES = {
    "chain": "hosts a and b at the ends of a line of 3 switches (CHAIN_NED with n = 3), 1x SDR",
    "star": "4 hosts on one switch (STAR_NED), 1x SDR",
    "irregular16": "the shipped irregular fabric: 16 switches of 8 ports, 4 hosts each, up*/down* routing",
    "fat-tree": "a 2-ary 3-tree: 12 switches of 4 ports, 8 hosts, 4x QDR, up*/down* routing",
}

_CHAIN_SWITCHES = 3


def small_topology(name: str) -> str | os.PathLike:
    """The topology of a small fabric by name, as :class:`~ibfabric.Simulation` takes it.

    Parameters
    ----------
    name : str
        One of :data:`SMALL_TOPOLOGIES`: ``'chain'``, ``'star'``,
        ``'irregular16'``, ``'fat-tree'``.

    Returns
    -------
    str or os.PathLike
        NED text, or the path of the shipped ``irregular16.ned``.  The chain's
        text has its ``n`` set to 3.

    Raises
    ------
    ConfigError
        For an unknown name (the message lists the valid ones).

    Examples
    --------
    >>> "network star" in small_topology("star")
    True
    """
    from ibfabric.errors import ConfigError, did_you_mean

    if name == "chain":
        return CHAIN_NED.replace("int n = 1;", f"int n = {_CHAIN_SWITCHES};")
    if name == "star":
        return STAR_NED
    if name == "irregular16":
        from ibfabric.topologies import shipped

        return shipped("irregular16")
    if name == "fat-tree":
        from ibfabric.topologies.generators import fat_tree, to_ned

        return to_ned(fat_tree(2, 3), "fattree")
    raise ConfigError(f"no small topology '{name}'{did_you_mean(name, SMALL_TOPOLOGIES)} (valid: {', '.join(SMALL_TOPOLOGIES)})")


def small_fabric_graph(name: str, lmc: int = 0) -> FabricGraph:
    """The routing view of a small fabric, every LID assigned as the subnet manager would.

    Parameters
    ----------
    name : str
        One of :data:`SMALL_TOPOLOGIES`.
    lmc : int
        The LMC given to channel adapter ports (``2**lmc`` LIDs each), as the
        subnet manager's ``lmc`` parameter does.

    Returns
    -------
    FabricGraph
        Nodes in the order a :class:`~ibfabric.Simulation` of the same
        topology has them (``sim.ib_nodes``), LIDs as its subnet manager
        assigns them.

    Examples
    --------
    >>> g = small_fabric_graph("star")
    >>> len(g.switches), len(g.cas), g.max_lid
    (1, 4, 5)
    """
    from ibfabric.topologies import load_fabric

    return load_fabric(small_topology(name)).with_lids(lmc=lmc)


def build_simulation(
    topology: str | os.PathLike = "star",
    *,
    plugins: Iterable[Any] = (),
    overrides: Mapping[str, str] | None = None,
    seed: int = 1,
    check: bool = True,
    **kwargs: Any,
) -> Simulation:
    """A :class:`~ibfabric.Simulation` of a small topology, with extra plugins.

    Parameters
    ----------
    topology : str or os.PathLike
        A name of :data:`SMALL_TOPOLOGIES`, or anything
        :class:`~ibfabric.Simulation` takes (NED text, a file, a shipped
        topology's name).
    plugins : iterable
        Plugin objects for this simulation only (your plugin module), as
        ``Simulation(plugins=...)``: nothing needs to be installed.
    overrides : mapping of str to str, optional
        Parameter overrides by wildcard path (``{"**.arbiter": "mine"}``).
    seed : int
        The run's seed.
    check : bool
        Verify the credit invariant at every transmission (default True:
        slower, and what a plugin's tests want).
    **kwargs
        Passed to :class:`~ibfabric.Simulation` (``warmup``, ``block``...).

    Returns
    -------
    Simulation
        Built and initialised (the subnet manager has routed), not run.

    Raises
    ------
    ConfigError, PluginError
        As the simulation raises them, for bad parameters or a plugin's bug.
    """
    from ibfabric.simulation import Simulation

    source = small_topology(topology) if isinstance(topology, str) and topology in SMALL_TOPOLOGIES else topology
    return Simulation(source, plugins=plugins, overrides=overrides, seed=seed, check=check, **kwargs)


def run_simulation(
    topology: str | os.PathLike = "star",
    until: float | str = "20us",
    *,
    plugins: Iterable[Any] = (),
    overrides: Mapping[str, str] | None = None,
    seed: int = 1,
    check: bool = True,
    **kwargs: Any,
) -> dict[str, Any]:
    """Build a simulation (:func:`build_simulation`), run it for *until* and return its summary.

    Parameters
    ----------
    topology, plugins, overrides, seed, check, **kwargs
        As :func:`build_simulation`.
    until : float or str
        Simulated time to run (``'20us'``, or ns).

    Returns
    -------
    dict
        The summary (what ``summary.json`` holds: ``packets_delivered``,
        ``conservation_ok``, ``routing``, ``drops_by_reason``...; see
        ``docs/measurements.md``).

    Raises
    ------
    DeadlockError
        If the network deadlocks.
    ConfigError, PluginError
        As :func:`build_simulation`, or a plugin's bug at run time.
    """
    return build_simulation(topology, plugins=plugins, overrides=overrides, seed=seed, check=check, **kwargs).run(until)


def trace_route(tables: ForwardingTables, src: int, dst: int) -> list[tuple[int, int]]:
    """The path a packet takes through *tables*, hop by hop.

    Parameters
    ----------
    tables : ForwardingTables
    src, dst : int
        Endpoint indices (``fabric.ep_lid[e]`` is endpoint e's base LID): the
        packet leaves endpoint *src* for the DLID ``tables.dlid(src, dst)``.

    Returns
    -------
    list of (int, int)
        ``(switch node, output port)`` for every switch the packet crosses,
        in order; the last port is 0 when *dst* is that switch itself.  Empty
        for a channel adapter cabled straight to *dst*.

    Raises
    ------
    AssertionError
        If the packet cannot get there: a switch has no entry for the DLID
        (``NO_PORT``), an entry leads to an unconnected port or to the wrong
        node, or the packet visits a switch twice with that DLID (a loop).

    Examples
    --------
    >>> import numpy as np
    >>> from ibfabric.components.routing.tables import NO_PORT, ForwardingTables
    >>> g = small_fabric_graph("star")      # sw (LID 2) and h[0..3] (LIDs 1, 3, 4, 5)
    >>> lft = np.full((1, g.max_lid + 1), NO_PORT, dtype=np.uint8)
    >>> lft[0, [1, 2, 3, 4, 5]] = [1, 0, 2, 3, 4]
    >>> trace_route(ForwardingTables(g, lft), g.endpoint_of(1), g.endpoint_of(2))
    [(0, 2)]
    """
    from ibfabric.components.routing.tables import NO_PORT

    g = tables.fabric
    dlid = tables.dlid(src, dst)
    target = (int(g.ep_node[dst]), int(g.ep_port[dst]))
    node, port = int(g.ep_node[src]), int(g.ep_port[src])
    name = g.endpoint_name
    path: list[tuple[int, int]] = []
    if not g.is_switch[node]:  # a channel adapter sends on its own link first
        node, port = int(g.peer_node[node, port]), int(g.peer_port[node, port])
        assert node >= 0, f"{name(src)} is not connected"
    seen = set()
    while g.is_switch[node]:
        assert node not in seen, f"loop from {name(src)} to {name(dst)} (DLID {dlid}): {path}"
        seen.add(node)
        out = tables.port(node, dlid)
        assert out != NO_PORT, f"{g.nodes[node].name} has no entry for DLID {dlid} ({name(src)} -> {name(dst)})"
        path.append((node, out))
        if out == 0:
            assert target == (node, 0), f"{g.nodes[node].name} keeps DLID {dlid}, which is {name(dst)}'s"
            return path
        nxt = int(g.peer_node[node, out])
        assert nxt >= 0, f"{g.nodes[node].name} sends DLID {dlid} to port {out}, which is not connected"
        node, port = nxt, int(g.peer_port[node, out])
    assert (node, port) == target, f"DLID {dlid} from {name(src)} arrives at {g.nodes[node].name} port {port}, not {name(dst)}"
    return path


def assert_delivers(tables: ForwardingTables) -> RouteReport:
    """Check that *tables* deliver every endpoint pair, without loops.

    Every (source, destination) pair of endpoints (switches' port 0 and CA
    ports) is walked through the tables at once
    (:func:`~ibfabric.components.routing.routecheck.check_routes`).

    Returns
    -------
    RouteReport
        The report, for further checks (``mean_hops``, ``max_link_load``...).

    Raises
    ------
    AssertionError
        If a pair is not delivered or loops; the message is the report's
        summary, naming an example pair.
    """
    from ibfabric.components.routing.routecheck import check_routes

    report = check_routes(tables)
    assert len(report.unreachable) == 0, report.summary(tables.fabric)
    assert len(report.loops) == 0, report.summary(tables.fabric)
    return report


def assert_deadlock_free(tables: ForwardingTables) -> RouteReport:
    """:func:`assert_delivers`, and the channel dependency graph of the routes is acyclic.

    Routes over virtual layers (``path_sl`` with ``sl2vl``) are checked per
    (link, VL) channel.

    Raises
    ------
    AssertionError
        If a pair is not delivered or loops, or the CDG has a cycle (the
        message names its channels).
    """
    from ibfabric.components.routing.routecheck import check_routes

    vl, num_vls = tables.vl_function()
    report = check_routes(tables, vl=vl, num_vls=num_vls)
    assert len(report.unreachable) == 0 and len(report.loops) == 0, report.summary(tables.fabric)
    assert not report.cycle, report.summary(tables.fabric)
    return report


class TableWalker:
    """Checks of forwarding tables, as the ``table_walker`` fixture gives them.

    Methods
    -------
    path(tables, src, dst)
        :func:`trace_route`: ``[(switch node, port), ...]``.
    assert_delivers(tables)
        :func:`assert_delivers`: every pair reaches, no loops.
    assert_deadlock_free(tables)
        :func:`assert_deadlock_free`: and the CDG is acyclic.
    """

    path = staticmethod(trace_route)
    assert_delivers = staticmethod(assert_delivers)
    assert_deadlock_free = staticmethod(assert_deadlock_free)


# ---------------------------------------------------------------- fixtures


@pytest.fixture
def fabric_chain() -> FabricGraph:
    """Hosts ``a`` and ``b`` at the ends of a line of 3 switches (:func:`small_fabric_graph` ``'chain'``)."""
    return small_fabric_graph("chain")


@pytest.fixture
def fabric_star() -> FabricGraph:
    """Four hosts on one switch (:func:`small_fabric_graph` ``'star'``)."""
    return small_fabric_graph("star")


@pytest.fixture
def fabric_irregular16() -> FabricGraph:
    """The shipped irregular fabric of 16 switches and 64 hosts (:func:`small_fabric_graph` ``'irregular16'``)."""
    return small_fabric_graph("irregular16")


@pytest.fixture
def fabric_fat_tree() -> FabricGraph:
    """A 2-ary 3-tree: 12 switches, 8 hosts (:func:`small_fabric_graph` ``'fat-tree'``)."""
    return small_fabric_graph("fat-tree")


@pytest.fixture(params=list(SMALL_TOPOLOGIES))
def small_fabric(request) -> FabricGraph:
    """Each small fabric in turn: chain, star, irregular16, fat-tree (the test runs once per fabric)."""
    return small_fabric_graph(request.param)


@pytest.fixture
def make_simulation():
    """:func:`build_simulation`: ``make_simulation("star", plugins=[mod], overrides={...})`` -> Simulation."""
    return build_simulation


@pytest.fixture
def run_ibfabric():
    """:func:`run_simulation`: ``run_ibfabric("star", "20us", plugins=[mod], overrides={...})`` -> summary."""
    return run_simulation


@pytest.fixture
def table_walker() -> TableWalker:
    """A :class:`TableWalker`: ``path``, ``assert_delivers``, ``assert_deadlock_free`` of forwarding tables."""
    return TableWalker()
