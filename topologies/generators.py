"""Topology generators: random irregular fabrics, k-ary n-trees, meshes, tori and hypercubes.

Every generator returns a :class:`~ibfabric.components.routing.fabric.FabricGraph`
(LIDs unassigned unless stated); :func:`to_ned` writes any fabric as a
``.ned`` network in the syntax of ``bermudez2006_fig1.ned`` and
:func:`to_ibsim` as an ibsim/ibnetdiscover-style net file::

    >>> g = irregular(8, links_per_switch=3, hosts_per_switch=1, seed=1)
    >>> len(g.switches), len(g.cas), len(g.links)
    (8, 8, 20)
    >>> print(to_ned(hypercube(1), name="cube").splitlines()[0])
    network cube

Random irregular fabrics are built as in the papers' evaluations
(Martínez et al. 2003, §5.1; Bermúdez et al. 2006, §4.1; Alfaro et al.
2001, §5.1): every switch has the same number of ports, the same number of
hosts, at most ``links_per_switch`` links to other switches, neighbouring
switches are joined by exactly one link, and the whole is connected.
:func:`kim2007` builds variants of Kim et al. 2007's (§4): a given number
of independent cycles and a host on every port left free
(``topologies/kim2007_15_29hosts.ned`` and ``kim2007_30_58hosts.ned``);
:func:`kim2007_paper` builds fabrics with all the properties the paper
states (one host per switch, every switch on one or two of Algorithm 2's
cycles, no bridges: ``topologies/kim2007_15.ned`` and ``kim2007_30.ned``).
:func:`bermudez2006` builds Bermúdez et al. 2006's (§4.1): given switch,
host and link counts, a host on every switch with a free port, the other
ports possibly unconnected (``experiments/bermudez2006/irr16h14.ned``,
``irr24h22.ned``).
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping

import numpy as np

from ibfabric.components.routing.fabric import FabricGraph, Link, NodeSpec

__all__ = [
    "irregular",
    "kim2007",
    "kim2007_paper",
    "kim2007_properties",
    "bermudez2006",
    "fat_tree",
    "mesh",
    "torus",
    "hypercube",
    "bermudez2006_fig1",
    "to_ned",
    "to_ibsim",
    "KINDS",
    "LINK_DEFAULTS",
]


def _build(
    switch_names: list[str],
    sw_links: list[tuple[int, int, int, int]],
    hosts: list[tuple[str, int, int]],
    num_ports: int | list[int],
    width: str,
    speed: str,
) -> FabricGraph:
    """Switches, switch-to-switch links ``(a, port_a, b, port_b)`` and hosts ``(name, switch, port)``."""
    from ibfabric.components.rates import link_rate

    rate = link_rate(width, speed)
    ports = num_ports if isinstance(num_ports, list) else [num_ports] * len(switch_names)
    nodes = [NodeSpec(n, True, p) for n, p in zip(switch_names, ports)]
    links = [Link(a, pa, b, pb, width, speed, rate) for a, pa, b, pb in sw_links]
    for name, sw, port in hosts:
        nodes.append(NodeSpec(name, False, 1))
        links.append(Link(len(nodes) - 1, 1, sw, port, width, speed, rate))
    return FabricGraph(nodes, links)


def irregular(
    switches: int,
    *,
    links_per_switch: int = 4,
    hosts_per_switch: int = 4,
    num_ports: int | None = None,
    links: int | None = None,
    seed: int = 0,
    width: str = "4x",
    speed: str = "QDR",
) -> FabricGraph:
    """A random irregular fabric, reproducible from *seed*.

    Parameters
    ----------
    switches : int
        Number of switches (``sw0`` ... ``swN-1``).
    links_per_switch : int
        Most switch-to-switch links a switch has (ports reserved for them).
    hosts_per_switch : int
        Hosts on every switch (``h<switch>_<k>``), on the ports after the
        switch-to-switch ones.
    num_ports : int, optional
        Ports per switch, default ``links_per_switch + hosts_per_switch``.
    links : int, optional
        Number of switch-to-switch links; default as many as the degree bound
        allows (``min(S * links_per_switch // 2, S * (S - 1) // 2)``).
    seed : int
        Seed of the generator; the same arguments give the same fabric.

    Returns
    -------
    FabricGraph

    Raises
    ------
    ValueError
        If the request cannot be met (too few ports, a link count outside
        ``[S - 1, maximum]``, or ``links_per_switch < 2`` with more than two
        switches).

    Notes
    -----
    A random spanning tree first (each new switch joins a random switch
    with a free port), then random links between non-adjacent switches
    with free ports until the link count is reached.  When no such pair is
    left but free ports remain, an existing link (a, b) is replaced by two
    links through the switch(es) with free ports -- (u, a), (u, b) or
    (u, a), (v, b) -- which keeps the fabric connected and the degrees
    bounded; such a link always exists below the maximum, so the requested
    count is always reached.
    """
    S, d = switches, links_per_switch
    if S < 1:
        raise ValueError(f"'switches' must be at least 1 (got {S})")
    if d < 1 and S > 1 or d < 2 and S > 2:
        raise ValueError(f"'links_per_switch' must be at least {2 if S > 2 else 1} for {S} connected switches (got {d})")
    ports = num_ports if num_ports is not None else d + hosts_per_switch
    if ports < d + hosts_per_switch:
        raise ValueError(f"'num_ports' must be at least links_per_switch + hosts_per_switch = {d + hosts_per_switch} (got {ports})")
    most = min(S * d // 2, S * (S - 1) // 2)
    target = most if links is None else links
    if not S - 1 <= target <= most:
        raise ValueError(f"'links' must be between {S - 1} and {most} for {S} switches with {d} links each (got {target})")
    rng = np.random.default_rng(seed)
    adj: list[set[int]] = [set() for _ in range(S)]
    order = rng.permutation(S)
    for k in range(1, S):
        x = int(order[k])
        free = [int(y) for y in order[:k] if len(adj[y]) < d]
        y = free[int(rng.integers(len(free)))]
        adj[x].add(y)
        adj[y].add(x)
    count = S - 1
    while count < target:
        open_ = [x for x in range(S) if len(adj[x]) < d]
        pairs = [(x, y) for i, x in enumerate(open_) for y in open_[i + 1 :] if y not in adj[x]]
        if pairs:
            x, y = pairs[int(rng.integers(len(pairs)))]
            adj[x].add(y)
            adj[y].add(x)
            count += 1
            continue
        _rewire(adj, open_, d, rng)
        count += 1
    edges = sorted((min(x, y), max(x, y)) for x in range(S) for y in adj[x] if x < y)
    perm = rng.permutation(len(edges))
    next_port = [1] * S
    sw_links = []
    for k in perm:
        x, y = edges[int(k)]
        sw_links.append((x, next_port[x], y, next_port[y]))
        next_port[x] += 1
        next_port[y] += 1
    sw_links.sort()
    hosts = [(f"h{s}_{k}", s, d + 1 + k) for s in range(S) for k in range(hosts_per_switch)]
    return _build([f"sw{s}" for s in range(S)], sw_links, hosts, ports, width, speed)


def kim2007(
    switches: int,
    cycles: int,
    *,
    ports: int = 5,
    seed: int = 0,
    width: str = "1x",
    speed: str = "SDR",
) -> FabricGraph:
    """A random irregular fabric with Kim et al. 2007's cycle count and a host on every free port (a variant).

    Only the switch and cycle counts are the paper's: these fabrics have
    more hosts than switches, may have bridges, and put switches on any
    number of Algorithm 2's cycles (``kim2007_15_29hosts.ned``,
    ``kim2007_30_58hosts.ned``, and the Bermúdez et al. 2006 fabrics of
    ``experiments/bermudez2006.py``).  :func:`kim2007_paper` draws fabrics
    with all the properties the paper states.

    Parameters
    ----------
    switches : int
        Number of switches (``sw0`` ... ``swN-1``).
    cycles : int
        Independent cycles of the switch graph, ``|E| - |V| + 1``: the
        fabric has ``switches - 1 + cycles`` switch-to-switch links.
    ports : int
        Ports per switch.  A switch has at most ``ports - 1`` links to
        other switches, so every switch keeps at least one host.
    seed : int
        Seed of the generator; the same arguments give the same fabric.
    width, speed : str
        Link width and speed (default 1x SDR, the paper's 2.5 Gbps links).

    Returns
    -------
    FabricGraph
        ``switches * ports - 2 * (switches - 1 + cycles)`` hosts, named
        ``h<switch>_<k>`` (k counting the switch's free ports upwards).

    Raises
    ------
    ValueError
        If the cycle count does not fit the port budget
        (``0 <= cycles <= min(S * (ports - 1) // 2, S * (S - 1) // 2) - S + 1``)
        or the switches cannot be connected (``ports < 3`` with more than
        two switches).

    Examples
    --------
    >>> g = kim2007(15, 9, seed=2007)
    >>> len(g.switches), len(g.cas), len(g.links) - len(g.cas)
    (15, 29, 23)

    Notes
    -----
    The switch graph is :func:`irregular`'s with ``links_per_switch =
    ports - 1`` and ``links = switches - 1 + cycles`` (a random spanning
    tree with the degree bound, then random links between non-adjacent
    switches with free ports); every port it leaves free gets a host.  The
    cycle count is the number of back edges of any spanning tree
    (Algorithm 1 of the paper), which by its Theorem 2 fixes the number of
    path bits of multipath routing.

    References
    ----------
    .. [1] E. J. Kim, K. H. Yum, C. R. Das, M. Yousif, J. Duato, "Exploring
       IBA Design Space for Improved Performance", IEEE TPDS 18(4), 2007,
       §3.2 (Algorithm 1, Theorem 2), §4 and Table 1, §5.1.
    """
    S = switches
    if S < 1:
        raise ValueError(f"'switches' must be at least 1 (got {S})")
    most = min(S * (ports - 1) // 2, S * (S - 1) // 2) - S + 1
    if not 0 <= cycles <= max(most, 0):
        raise ValueError(f"'cycles' must be between 0 and {max(most, 0)} for {S} switches of {ports} ports (got {cycles})")
    base = irregular(S, links_per_switch=ports - 1, hosts_per_switch=0, num_ports=ports, links=S - 1 + cycles, seed=seed)
    sw_links = [(ln.a, ln.port_a, ln.b, ln.port_b) for ln in base.links]
    free = base.peer_node[:S, 1 : ports + 1] < 0
    hosts = []
    for s in range(S):
        hosts += [(f"h{s}_{k}", s, int(p) + 1) for k, p in enumerate(np.flatnonzero(free[s]))]
    return _build([f"sw{s}" for s in range(S)], sw_links, hosts, ports, width, speed)



def bermudez2006(
    switches: int,
    hosts: int,
    links: int,
    *,
    ports: int = 4,
    seed: int = 0,
    tries: int = 1000,
    width: str = "1x",
    speed: str = "SDR",
) -> FabricGraph:
    """A random irregular subnet as Bermúdez et al. 2006 describe theirs: given switch and host counts, ports left unconnected.

    §4.1: "at least a host connected to each switch, if a port is available.
    Also, not all switch ports are connected"; Fig. 14 gives the counts
    (16 switches and 14 hosts, 24 and 22, 32 and 40, 48 and 64, 64 and 82).
    A switch may use every port for switch links (then it has no host, as
    sw3 of the paper's Fig. 1); every switch with a free port has a host.

    Parameters
    ----------
    switches : int
        Number of switches (``sw0`` ... ``swN-1``).
    hosts : int
        Number of hosts (``h<switch>_<k>``).
    links : int
        Number of switch-to-switch links.
    ports : int
        Ports per switch (the paper's 4).
    seed : int
        Seed of the draws; the same arguments give the same fabric.
    tries : int
        Most switch graphs drawn before giving up.
    width, speed : str
        Link width and speed (default 1x SDR).

    Returns
    -------
    FabricGraph
        ``switches * ports - 2 * links - hosts`` ports unconnected.

    Raises
    ------
    ValueError
        If the counts do not fit (more hosts than free ports, a link count
        outside ``[S - 1, min(S * ports // 2, S * (S - 1) // 2)]``), or no
        draw within *tries* has at most *hosts* switches with a free port.

    Examples
    --------
    >>> g = bermudez2006(16, 14, 24, seed=2022)
    >>> len(g.switches), len(g.cas), len(g.links) - len(g.cas)
    (16, 14, 24)

    Notes
    -----
    Each draw is :func:`irregular`'s switch graph with ``links_per_switch =
    ports`` and *links* links; a draw is kept when the switches with a free
    port are at most *hosts* (with fewer hosts than switches, at least
    ``switches - hosts`` switches must have all their ports linked).  Each
    switch with a free port gets a host on its lowest free port; the
    remaining hosts go to free ports drawn at random without replacement;
    the rest of the ports stay unconnected.
    """
    S = switches
    if S < 1:
        raise ValueError(f"'switches' must be at least 1 (got {S})")
    most = min(S * ports // 2, S * (S - 1) // 2)
    if not S - 1 <= links <= most:
        raise ValueError(f"'links' must be between {S - 1} and {most} for {S} switches of {ports} ports (got {links})")
    if not 1 <= hosts <= S * ports - 2 * links:
        raise ValueError(f"'hosts' must be between 1 and the {S * ports - 2 * links} ports {links} links leave free (got {hosts})")
    if tries < 1:
        raise ValueError(f"'tries' must be at least 1 (got {tries})")
    rng = np.random.default_rng(seed)
    for _ in range(tries):
        base = irregular(S, links_per_switch=ports, hosts_per_switch=0, num_ports=ports, links=links,
                         seed=int(rng.integers(2**32)))
        free = [[p for p in range(1, ports + 1) if base.peer_node[s, p] < 0] for s in range(S)]
        if sum(1 for f in free if f) <= hosts:
            break
    else:
        raise ValueError(f"no draw of {S} switches and {links} links in {tries} has at most {hosts} switches with a"
                         f" free port (try another seed, more tries or more links)")
    placed = {s: [f[0]] for s, f in enumerate(free) if f}
    rest = [(s, p) for s, f in enumerate(free) for p in f[1:]]
    for k in sorted(rng.choice(len(rest), hosts - len(placed), replace=False).tolist()):
        placed[rest[k][0]].append(rest[k][1])
    sw_links = [(ln.a, ln.port_a, ln.b, ln.port_b) for ln in base.links]
    host_list = [(f"h{s}_{k}", s, p) for s in sorted(placed) for k, p in enumerate(sorted(placed[s]))]
    return _build([f"sw{s}" for s in range(S)], sw_links, host_list, ports, width, speed)

#: The blocks :func:`kim2007_paper` joins: name -> (vertices, edges as vertex pairs, vertices on one cycle).
#: A diamond is K4 less an edge: two triangles on the edge (1, 2), whose tips 0 and 3 are on one each.
_KIM_BLOCKS = {
    "triangle": (3, ((0, 1), (1, 2), (2, 0)), (0, 1, 2)),
    "square": (4, ((0, 1), (1, 2), (2, 3), (3, 0)), (0, 1, 2, 3)),
    "diamond": (4, ((0, 1), (0, 2), (1, 2), (1, 3), (2, 3)), (0, 3)),
}


def kim2007_properties(fabric: FabricGraph, root: int | None = None) -> dict:
    """What Kim et al. 2007 state of their networks, measured on *fabric*'s switch graph.

    Parameters
    ----------
    fabric : FabricGraph
    root : int, optional
        Switch (node index) the BFS of Algorithms 1-2 starts from; default
        the lowest switch, as the ``multipath`` engine's default root.

    Returns
    -------
    dict
        ``cycles``: Algorithm 2's cycles (switch indices); ``independent``:
        the rank of their edge sets over GF(2) (all path bits name something
        only when it is ``len(cycles)``); ``on_cycles``: per switch, how many
        of the cycles it lies on; ``table_sizes``: per switch, §3.3's
        multipath table size ``S * 2**on_cycles``; ``bridges``: switch links
        whose removal disconnects switches; ``hosts``: hosts per switch;
        ``ports``: ports per switch.

    Examples
    --------
    >>> p = kim2007_properties(kim2007_paper(15, 9, seed=2007))
    >>> len(p["cycles"]), p["independent"], p["bridges"], sorted(set(p["on_cycles"].values()))
    (9, 9, [], [1, 2])
    >>> p = kim2007_properties(kim2007(15, 9, seed=2007))  # kim2007_15_29hosts.ned
    >>> p["independent"], p["bridges"], max(p["on_cycles"].values())
    (6, [(4, 9)], 6)
    """
    import networkx as nx

    from ibfabric.plugins.routing.pathbits import find_cycles

    sw = [int(s) for s in fabric.switches]
    G = nx.Graph()
    G.add_nodes_from(sw)
    G.add_edges_from((ln.a, ln.b) for ln in fabric.links if fabric.is_switch[ln.a] and fabric.is_switch[ln.b] and ln.a != ln.b)
    cycles = find_cycles(G, root=root if root is not None else min(sw))
    index = {frozenset(e): k for k, e in enumerate(G.edges())}
    basis: list[int] = []
    for c in cycles:
        v = 0
        for x, y in zip(c, c[1:]):
            v ^= 1 << index[frozenset((x, y))]
        for b in basis:
            v = min(v, v ^ b)
        if v:
            basis.append(v)
    on = {s: sum(s in c for c in cycles) for s in sw}
    hosts = {s: 0 for s in sw}
    for ln in fabric.links:
        for a, b in ((ln.a, ln.b), (ln.b, ln.a)):
            if fabric.is_switch[a] and not fabric.is_switch[b]:
                hosts[a] += 1
    return {
        "cycles": cycles,
        "independent": len(basis),
        "on_cycles": on,
        "table_sizes": {s: len(sw) * 2 ** k for s, k in on.items()},
        "bridges": sorted(tuple(sorted(e)) for e in nx.bridges(G)),
        "hosts": hosts,
        "ports": {s: fabric.nodes[s].num_ports for s in sw},
    }


def _kim2007_ok(props: dict, cycles: int) -> bool:
    return (
        len(props["cycles"]) == cycles
        and props["independent"] == cycles
        and all(1 <= k <= 2 for k in props["on_cycles"].values())
        and not props["bridges"]
    )


def kim2007_paper(
    switches: int,
    cycles: int,
    *,
    seed: int = 0,
    tries: int = 1000,
    width: str = "1x",
    speed: str = "SDR",
) -> FabricGraph:
    """A fabric with the properties Kim et al. 2007 state of their networks, drawn until it has them.

    Five-port switches, one host on each (``h<switch>_0``), at most four
    switch-to-switch links per switch, ``switches - 1 + cycles`` of them, no
    bridge (no switch link whose removal disconnects switches), and every
    switch on one or two of the cycles Algorithm 2 finds from a BFS rooted
    at the lowest switch (``sw0``, the ``multipath`` engine's default), so
    that §3.3's table of a switch has ``switches * 2`` or ``switches * 4``
    entries (§5.1: "either 30 (= 15 x 2^1) or 60 (= 15 x 2^2)"); the
    cycles are independent (all ``cycles`` path bits name something: no
    two back edges give the same cycle).

    Parameters
    ----------
    switches : int
        Number of switches (``sw0`` ... ``swN-1``).
    cycles : int
        Independent cycles of the switch graph (§5.1: 9 for 15 switches).
    seed : int
        Seed of the draws; the same arguments give the same fabric.
    tries : int
        Most draws before giving up.
    width, speed : str
        Link width and speed (default 1x SDR, Table 1's 2.5 Gbps links).

    Returns
    -------
    FabricGraph

    Raises
    ------
    ValueError
        If no draw has the properties within *tries*, or the blocks below
        cannot make *switches* switches with *cycles* cycles.

    Examples
    --------
    >>> g = kim2007_paper(15, 9, seed=2007)
    >>> len(g.switches), len(g.cas), len(g.links) - len(g.cas)
    (15, 15, 23)
    >>> sorted(set(kim2007_properties(g)["table_sizes"].values()))
    [30, 60]

    Notes
    -----
    The properties leave little freedom.  With no bridge every switch link
    lies on a cycle of any cycle basis; a switch on at most two of the
    ``C`` cycles bounds their total length by ``2 S``, while each has at
    least 3 links: ``3 C <= 2 S`` (15 switches, 9 cycles: 27 <= 30, nearly
    all triangles; random fabrics of :func:`kim2007` almost never qualify).
    So a draw joins small blocks -- triangles, squares and diamonds (K4
    less an edge: two triangles on a shared edge) -- into a tree of blocks,
    each new block sharing one vertex with one block already placed; a
    shared vertex is one that lies on a single cycle of each of its two
    blocks (a diamond's tips, any vertex of a triangle or a square), and
    is shared once, so it has four switch links and lies on two cycles.
    The numbers of diamonds ``d``, triangles ``t`` and squares ``q`` solve
    ``3 d + 2 t + 3 q = S - 1`` and ``2 d + t + q = C``; each draw picks one
    solution, the order of the blocks, the shared vertices, the switch
    numbering and the ports at random.  A draw is rejected unless Algorithm
    2 (``pathbits.find_cycles``) finds ``C`` independent cycles with every
    switch on one or two of them: in a diamond both back edges can give
    the same triangle, depending on where the BFS enters it.  The paper's
    Fig. 6 is not available; these are fabrics with its stated properties,
    not its network.

    References
    ----------
    .. [1] E. J. Kim, K. H. Yum, C. R. Das, M. Yousif, J. Duato, "Exploring
       IBA Design Space for Improved Performance", IEEE TPDS 18(4), 2007,
       §3.2-3.3 (Algorithms 1-3, table size), §4 and Table 1, §5.1.
    """
    S, C = switches, cycles
    if S < 3:
        raise ValueError(f"'switches' must be at least 3 for a fabric of cycles (got {S})")
    if tries < 1:
        raise ValueError(f"'tries' must be at least 1 (got {tries})")
    mixes = [(d, t, C - 2 * d - t) for d in range(C // 2 + 1) for t in range(C - 2 * d + 1)
             if 3 * d + 2 * t + 3 * (C - 2 * d - t) == S - 1]
    if not mixes:
        raise ValueError(f"no tree of triangles, squares and diamonds has {S} switches and {C} cycles"
                         f" (it needs 3 d + 2 t + 3 q = {S - 1} and 2 d + t + q = {C}; 3 C <= 2 S at least)")
    rng = np.random.default_rng(seed)
    for _ in range(tries):
        fabric = _kim2007_draw(S, mixes[int(rng.integers(len(mixes)))], rng, width, speed)
        if _kim2007_ok(kim2007_properties(fabric), C):
            return fabric
    raise ValueError(f"no fabric of {S} switches with {C} cycles, each switch on one or two of them, in {tries}"
                     f" draws from seed {seed} (try another seed or more tries)")


def _kim2007_draw(S: int, mix: tuple[int, int, int], rng: np.random.Generator, width: str, speed: str) -> FabricGraph:
    """One draw of :func:`kim2007_paper`: a random tree of blocks, numbering and ports."""
    d, t, q = mix
    kinds = ["diamond"] * d + ["triangle"] * t + ["square"] * q
    kinds = [kinds[int(k)] for k in rng.permutation(len(kinds))]
    edges: list[tuple[int, int]] = []
    free: list[int] = []  # vertices that lie on one cycle of their block and are not shared yet
    count = 0
    for n, kind in enumerate(kinds):
        size, block_edges, single = _KIM_BLOCKS[kind]
        ids = list(range(count, count + size))
        if n:
            joint = free.pop(int(rng.integers(len(free))))
            own = single[int(rng.integers(len(single)))]
            ids = [joint if v == own else count + v - (v > own) for v in range(size)]
            free += [ids[v] for v in single if v != own]
            count += size - 1
        else:
            free += [ids[v] for v in single]
            count += size
        edges += [(ids[a], ids[b]) for a, b in block_edges]
    perm = rng.permutation(S)
    edges = sorted((min(int(perm[a]), int(perm[b])), max(int(perm[a]), int(perm[b]))) for a, b in edges)
    ports: list[list[int]] = [[] for _ in range(S)]
    for x, y in edges:
        ports[x].append(y)
        ports[y].append(x)
    port_of = {}
    hosts = []
    for s in range(S):
        order = rng.permutation(5)  # ports 1..5: the switch links and the host, in random order
        for k, peer in enumerate(ports[s]):
            port_of[s, peer] = int(order[k]) + 1
        hosts.append((f"h{s}_0", s, int(order[len(ports[s])]) + 1))
    sw_links = [(x, port_of[x, y], y, port_of[y, x]) for x, y in edges]
    return _build([f"sw{s}" for s in range(S)], sw_links, hosts, 5, width, speed)


def _rewire(adj: list[set[int]], open_: list[int], d: int, rng: np.random.Generator) -> None:
    """Add one link when every pair of switches with free ports is already adjacent."""
    u = next((x for x in open_ if d - len(adj[x]) >= 2), None)
    if u is not None:
        v = u
        cands = [(a, b) for a in range(len(adj)) if a != u and a not in adj[u] for b in adj[a] if b != u and b not in adj[u]]
    else:
        u, v = open_[0], open_[1]
        cands = [(a, b) for a in range(len(adj)) if a not in (u, v) and a not in adj[u] for b in adj[a] if b not in (u, v) and b not in adj[v]]
    a, b = cands[int(rng.integers(len(cands)))]
    adj[a].discard(b)
    adj[b].discard(a)
    adj[u].add(a)
    adj[a].add(u)
    adj[v].add(b)
    adj[b].add(v)


def fat_tree(k: int, n: int, *, width: str = "4x", speed: str = "QDR") -> FabricGraph:
    """A k-ary n-tree: k**n hosts, n * k**(n-1) switches of 2k ports.

    Switch ``s<level>_<w>`` (level 0 at the top, n-1 at the leaves; w the
    (n-1)-digit base-k word) has its down links on ports 1..k and its up
    links on ports k+1..2k; switches <w, l> and <w', l+1> are linked when w
    and w' differ at most in digit l (Petrini and Vanneschi's definition).
    Host ``h<i>`` hangs on leaf switch i // k, port i % k + 1.
    """
    if k < 1 or n < 1:
        raise ValueError(f"'k' and 'n' must be at least 1 (got k={k}, n={n})")
    words = list(itertools.product(range(k), repeat=n - 1))
    index = {w: i for i, w in enumerate(words)}
    per = len(words)
    names = [f"s{lvl}_{''.join(map(str, w)) or '0'}" if k <= 10 else f"s{lvl}_{i}" for lvl in range(n) for i, w in enumerate(words)]
    sw_links = []
    for lvl in range(n - 1):
        for w in words:
            for c in range(k):
                child = w[:lvl] + (c,) + w[lvl + 1 :]
                up, down = lvl * per + index[w], (lvl + 1) * per + index[child]
                sw_links.append((up, c + 1, down, k + 1 + w[lvl]))
    leaves = (n - 1) * per
    hosts = [(f"h{i}", leaves + i // k, i % k + 1) for i in range(k**n)]
    return _build(names, sw_links, hosts, 2 * k, width, speed)


def _grid(dims: tuple[int, ...], wrap: bool, hosts_per_switch: int, width: str, speed: str) -> FabricGraph:
    if not dims or any(x < 1 for x in dims):
        raise ValueError(f"dimensions must be positive (got {'x'.join(map(str, dims))})")
    coords = list(itertools.product(*(range(x) for x in dims)))
    index = {c: i for i, c in enumerate(coords)}
    nd = len(dims)
    sw_links = []
    for c in coords:
        for axis, size in enumerate(dims):
            if c[axis] + 1 < size or (wrap and size > 2):
                other = list(c)
                other[axis] = (c[axis] + 1) % size
                # port 2*axis+1 goes "+", port 2*axis+2 goes "-"
                sw_links.append((index[c], 2 * axis + 1, index[tuple(other)], 2 * axis + 2))
    names = ["sw" + "_".join(map(str, c)) for c in coords]
    hosts = [(f"h{'_'.join(map(str, c))}_{h}", index[c], 2 * nd + 1 + h) for c in coords for h in range(hosts_per_switch)]
    return _build(names, sw_links, hosts, 2 * nd + hosts_per_switch, width, speed)


def mesh(dims: tuple[int, ...] = (4, 4), *, hosts_per_switch: int = 1, width: str = "4x", speed: str = "QDR") -> FabricGraph:
    """A mesh of switches (2D by default); port 2i+1 leads + and 2i+2 - along axis i, hosts follow."""
    return _grid(tuple(dims), False, hosts_per_switch, width, speed)


def torus(dims: tuple[int, ...] = (4, 4), *, hosts_per_switch: int = 1, width: str = "4x", speed: str = "QDR") -> FabricGraph:
    """A torus: a mesh with wrap-around links (none along axes of size 1 or 2, which would double a link)."""
    return _grid(tuple(dims), True, hosts_per_switch, width, speed)


def hypercube(dimension: int, *, hosts_per_switch: int = 1, width: str = "4x", speed: str = "QDR") -> FabricGraph:
    """A binary hypercube of 2**dimension switches; port i+1 crosses dimension i, hosts follow."""
    if dimension < 0:
        raise ValueError(f"'dimension' must be at least 0 (got {dimension})")
    n = 1 << dimension
    sw_links = [(x, i + 1, x ^ (1 << i), i + 1) for x in range(n) for i in range(dimension) if x < x ^ (1 << i)]
    hosts = [(f"h{x}_{h}", x, dimension + 1 + h) for x in range(n) for h in range(hosts_per_switch)]
    return _build([f"sw{x}" for x in range(n)], sw_links, hosts, max(dimension + hosts_per_switch, 1), width, speed)


def bermudez2006_fig1() -> FabricGraph:
    """The subnet of Bermúdez et al. 2006, Fig. 1, as ``topologies/bermudez2006_fig1.ned`` declares it.

    Eight 4-port switches and seven hosts, 1x SDR links, LIDs and port
    numbers of the paper's figures; the subnet manager runs on host h4.
    """
    from ibfabric.components.rates import link_rate

    sw = [1, 2, 3, 5, 6, 8, 9, 10]
    hosts = [4, 7, 11, 12, 13, 14, 15]
    nodes = [NodeSpec(f"sw{lid}", True, 4, lid=lid) for lid in sw] + [NodeSpec(f"h{lid}", False, 1, lid=lid) for lid in hosts]
    ix = {nd.name: i for i, nd in enumerate(nodes)}
    conns = [
        ("sw1", 1, "sw2", 1), ("sw1", 2, "sw3", 1), ("sw1", 3, "h4", 1), ("sw2", 2, "sw5", 2),
        ("sw2", 3, "sw6", 1), ("sw2", 4, "h7", 1), ("sw3", 2, "sw8", 1), ("sw3", 3, "sw9", 1),
        ("sw3", 4, "sw6", 2), ("sw5", 1, "sw10", 1), ("sw5", 3, "h11", 1), ("sw6", 3, "sw10", 2),
        ("sw6", 4, "h12", 1), ("sw8", 2, "h13", 1), ("sw9", 2, "h14", 1), ("sw10", 3, "h15", 1),
    ]  # fmt: skip
    rate = link_rate("1x", "SDR")
    links = [Link(ix[a], pa, ix[b], pb, "1x", "SDR", rate) for a, pa, b, pb in conns]
    return FabricGraph(nodes, links, sm_node=ix["h4"])


# ------------------------------------------------------------------ writers


def to_ned(fabric: FabricGraph, name: str = "generated", *, routing: str = "updn", parameters: Mapping[str, str] | None = None) -> str:
    """The fabric as a ``.ned`` network (Switch, HCA, Link and a SubnetManager on ``fabric.sm_node``).

    Assigned LIDs and LMCs are written as parameters; links carry their
    width and speed where they differ from the ``Link`` defaults
    (:data:`LINK_DEFAULTS`).  The subnet manager's routing engine is *routing*,
    ``updn`` by default: it is deadlock-free on any connected fabric, where
    ``minhop`` is not on any kind these generators make -- irregular
    fabrics, meshes, tori and hypercubes have cyclic channel dependencies
    under min-hop routing, and so do k-ary n-trees, through the routes to
    the switches' own LIDs, which go down and up again (``ibfabric routes
    FILE --routing minhop --check`` shows the cycle on ``fat_tree(2, 3)``).

    *parameters* (pattern -> value, e.g. ``{"**.numVLs": "15"}``) are
    written as the network's ``parameters:`` section, in the given order.
    """
    out = [f"network {name}", "{"]
    if parameters:
        out.append("    parameters:")
        out += [f"        {key} = {value};" for key, value in parameters.items()]
    out.append("    submodules:")
    for nd in fabric.nodes:
        params = [f"numPorts = {nd.num_ports};"] if nd.is_switch or nd.num_ports != 1 else []
        if nd.lid:
            params.append(f"lid = {nd.lid};")
        if nd.lmc:
            params.append(f"lmc = {nd.lmc};")
        if nd.guid:
            params.append(f'guid = "{nd.guid:#x}";')
        body = " { " + " ".join(params) + " }" if params else ";"
        out.append(f"        {nd.name}: {'Switch' if nd.is_switch else 'HCA'}{body}")
    if len(fabric.cas):
        out.append(f'        sm: SubnetManager {{ node = "{fabric.nodes[fabric.sm_node].name}"; routing = "{routing}"; }}')
    out.append("    connections:")
    for ln in fabric.links:
        a, b = fabric.nodes[ln.a].name, fabric.nodes[ln.b].name
        out.append(f"        {a}.port[{ln.port_a}] <--> {_link(ln.width, ln.speed)} <--> {b}.port[{ln.port_b}];")
    out.append("}")
    return "\n".join(out) + "\n"


#: The defaults of the ``Link`` channel's ``width`` and ``speed`` (components/ib.ned), which
#: :func:`to_ned` leaves out of the file.
LINK_DEFAULTS = {"width": "4x", "speed": "QDR"}


def _link(width: str, speed: str) -> str:
    """A ``Link`` with *width* and *speed*, assigning only what differs from the defaults: a big
    fabric's file is then about a third shorter, and it is most of the parse of its build."""
    body = "".join(f'{k} = "{v}"; ' for k, v in (("width", width), ("speed", speed)) if LINK_DEFAULTS[k] != v)
    return f"Link {{ {body}}}" if body else "Link"


def to_ibsim(fabric: FabricGraph) -> str:
    """The fabric as an ibsim net file (the ibnetdiscover-like format ``ibsim -s FILE`` reads).

    One record per node: ``Switch|Hca <ports> "<name>"`` then one
    ``[port] "<peer>"[peer port]`` line per connected port.  ibsim attaches
    the subnet manager to the first node, so the subnet manager's node is
    written first.
    """
    order = [fabric.sm_node] + [i for i in range(len(fabric.nodes)) if i != fabric.sm_node]
    out = []
    for i in order:
        nd = fabric.nodes[i]
        kind = "Switch" if nd.is_switch else "Hca"
        out.append(f'{kind}\t{nd.num_ports} "{nd.name}"')
        for p in fabric.ports(i):
            peer = int(fabric.peer_node[i, p])
            out.append(f'[{p}]\t"{fabric.nodes[peer].name}"[{int(fabric.peer_port[i, p])}]')
        out.append("")
    return "\n".join(out)


#: Generator name -> function: the kinds the ``topo generate`` command offers.
KINDS = {"irregular": irregular, "fattree": fat_tree, "mesh": mesh, "torus": torus, "hypercube": hypercube,
         "kim2007": kim2007_paper}
