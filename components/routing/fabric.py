"""The routing view of a subnet: nodes, ports, links and LIDs as arrays.

Routing engines, LID assignment, table checks and exporters work on a
:class:`FabricGraph`, never on simulation objects, so they run without a
simulation and are easy to test on literal topologies::

    g = FabricGraph(
        [NodeSpec("sw1", True, 4, lid=1), NodeSpec("h1", False, 1, lid=2)],
        [Link(0, 1, 1, 1)],
    )

Nodes are switches and channel adapters (CAs).  Ports are numbered as in
InfiniBand, from 1; port 0 of a switch is its management port, which owns the
switch's LID.  Every LID holder is an *endpoint*: port 0 of each switch and
each connected CA port, each with a base LID and an LMC (it owns LIDs
``lid .. lid + 2**lmc - 1``).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import attrs
import numpy as np

from ibfabric.errors import ConfigError, TopologyError

from . import validate
from .validate import MAX_UNICAST_LID

if TYPE_CHECKING:
    import networkx as nx  # imported where used: a simulation run never needs it

__all__ = ["Link", "NodeSpec", "FabricGraph", "MAX_UNICAST_LID", "node_spec", "moved_lids_message"]


def _frozen_dict(m: Mapping | None) -> dict:
    return dict(m or {})


@attrs.frozen
class NodeSpec:
    """A node of the fabric.

    ``lid`` is the LID of a switch's port 0 or of a CA's first connected port
    (0 = not assigned yet); ``port_lids`` gives the LIDs of a CA's other
    ports.  ``guid`` 0 means "derive one from the name".  ``where`` is the
    place the node is declared (``'file:line:col'``), put in front of error
    messages; it is not part of the value.  The fields are checked at
    construction (:func:`ibfabric.components.routing.validate.check_node`): a bad one
    raises ConfigError.
    """

    name: str
    is_switch: bool
    num_ports: int
    lid: int = 0
    lmc: int = 0
    guid: int = 0
    port_lids: Mapping[int, int] = attrs.field(factory=dict, converter=_frozen_dict, hash=False)
    desc: str = ""
    where: str = attrs.field(default="", eq=False, repr=False)

    def __attrs_post_init__(self) -> None:
        validate.check_node(self)


@attrs.frozen
class Link:
    """A link between port ``port_a`` of node ``a`` and port ``port_b`` of node ``b``.

    ``width`` and ``speed`` are as in ibnetdiscover (``'4x'``, ``'QDR'``);
    ``rate`` is the data rate in bit/s (0 = unknown); ``where`` the place it
    is declared, for error messages.  Links are checked by the FabricGraph
    they join (:func:`ibfabric.components.routing.validate.check_links`).
    """

    a: int
    port_a: int
    b: int
    port_b: int
    width: str = "4x"
    speed: str = "QDR"
    rate: float = 0.0
    where: str = attrs.field(default="", eq=False, repr=False)


def _guid_from_name(name: str) -> int:
    import zlib

    h = zlib.crc32(name.encode()) | (zlib.adler32(name.encode()) << 32)
    return (0x0002C9 << 40) | (h & 0xFFFFFFFFFF)


class FabricGraph:
    """Nodes, ports and LIDs of a subnet, as numpy arrays.

    Parameters
    ----------
    nodes : sequence of NodeSpec
    links : sequence of Link
        Each port may carry at most one link; port 0 of a switch none.
    sm_node : int, optional
        Index of the node the subnet manager runs on (default: the first
        CA, or node 0 if there is none).
    name : str, optional
        The network's name (``FabricGraph.from_network`` sets it).

    Raises
    ------
    TopologyError
        For an invalid subnet, before anything is sized from it: a link to
        a missing node or port, a port with two links, a node cabled to
        itself, two ports sharing a LID, two nodes sharing a GUID (see
        :mod:`ibfabric.components.routing.validate`).
    ConfigError
        For a link's unknown width or speed or bad data rate.

    Attributes
    ----------
    nodes : list of NodeSpec
    links : list of Link
    is_switch : ndarray of bool, shape (n,)
    num_ports : ndarray of int, shape (n,)
    peer_node, peer_port : ndarray of int, shape (n, P + 1)
        The node and port at the other end of each port's link, -1 if none
        (``P`` is the largest port count).
    switches : ndarray of int
        Node indices of the switches, in node order; ``switch_row[node]`` is
        a switch's position in it (-1 for CAs).  Forwarding tables have one
        row per switch in this order.
    ep_node, ep_port, ep_lid, ep_lmc : ndarray of int
        The endpoints (LID holders), switches' port 0 first in node order,
        then CA ports in node and port order.  ``ep_lid`` is 0 where no LID
        is assigned yet.
    lid_owner : ndarray of int, shape (max_lid + 1,)
        Endpoint owning each LID (through LMC ranges), -1 if none.
    """

    def __init__(self, nodes: Sequence[NodeSpec], links: Sequence[Link], *, sm_node: int | None = None, name: str = ""):
        self.nodes = list(nodes)
        self.links = list(links)
        self.name = name
        for nd in self.nodes:
            if not isinstance(nd, NodeSpec):
                raise TypeError(f"nodes must be NodeSpec values (got {type(nd).__name__})")
        validate.check_links(self.nodes, self.links)
        n = len(self.nodes)
        self.is_switch = np.array([nd.is_switch for nd in self.nodes], dtype=bool)
        self.num_ports = np.array([nd.num_ports for nd in self.nodes], dtype=np.int64)
        width = int(self.num_ports.max()) + 1 if n else 1
        self.peer_node = np.full((n, width), -1, dtype=np.int64)
        self.peer_port = np.full((n, width), -1, dtype=np.int64)
        self.port_rate = np.zeros((n, width), dtype=float)
        for ln in self.links:
            for x, px, y, py in ((ln.a, ln.port_a, ln.b, ln.port_b), (ln.b, ln.port_b, ln.a, ln.port_a)):
                self.peer_node[x, px] = y
                self.peer_port[x, px] = py
                self.port_rate[x, px] = ln.rate
        self.switches = np.flatnonzero(self.is_switch)
        self.switch_row = np.full(n, -1, dtype=np.int64)
        self.switch_row[self.switches] = np.arange(len(self.switches))
        self.cas = np.flatnonzero(~self.is_switch)
        if sm_node is None:
            sm_node = int(self.cas[0]) if len(self.cas) else 0
        if not 0 <= sm_node < max(n, 1):
            raise TopologyError(f"the subnet manager's node {sm_node} is not a node of the fabric")
        self.sm_node = sm_node
        self._build_endpoints()
        validate.check_guids(self)

    # ------------------------------------------------------------------ LIDs

    def _build_endpoints(self) -> None:
        nodes, ports, lids, lmcs = [], [], [], []
        for i in self.switches:
            nd = self.nodes[i]
            nodes.append(i), ports.append(0), lids.append(nd.lid), lmcs.append(nd.lmc)
        for i in self.cas:
            nd = self.nodes[i]
            connected = [p for p in range(1, nd.num_ports + 1) if self.peer_node[i, p] >= 0]
            for k, p in enumerate(connected):
                lid = nd.lid if k == 0 else nd.port_lids.get(p, 0)
                if k == 0 and nd.port_lids.get(p):
                    lid = nd.port_lids[p]
                nodes.append(i), ports.append(p), lids.append(lid), lmcs.append(nd.lmc)
        self.ep_node = np.array(nodes, dtype=np.int64)
        self.ep_port = np.array(ports, dtype=np.int64)
        self.ep_lid = np.array(lids, dtype=np.int64)
        self.ep_lmc = np.array(lmcs, dtype=np.int64)
        self.lid_owner = validate.lid_owners(self)
        self.max_lid = len(self.lid_owner) - 1

    @property
    def lids_complete(self) -> bool:
        """True when every endpoint has a LID."""
        return bool((self.ep_lid > 0).all())

    def endpoint_name(self, e: int) -> str:
        """Endpoint *e* as messages name it: the switch's name, or ``'<CA name> port <port>'``."""
        node = self.nodes[int(self.ep_node[e])]
        return node.name if node.is_switch else f"{node.name} port {int(self.ep_port[e])}"

    def endpoint_of(self, node: int, port: int | None = None) -> int:
        """Endpoint index of ``(node, port)``: port is ignored for switches, and
        None means a channel adapter's first connected port."""
        if self.is_switch[node]:
            port = 0
        elif port is None:
            ports = self.ports(node)
            if not ports:
                raise KeyError(f"{self.nodes[node].name} has no connected port")
            port = ports[0]
        index = self.__dict__.get("_ep_index")
        if index is None:
            index = self._ep_index = {(int(n), int(p)): e for e, (n, p) in enumerate(zip(self.ep_node, self.ep_port))}
        e = index.get((node, port))
        hit = [] if e is None else [e]
        if not len(hit):
            raise KeyError(f"{self.nodes[node].name} port {port} has no LID (it is not connected)")
        return int(hit[0])

    def lid_of(self, node: int, port: int | None = None) -> int:
        """The LID of ``(node, port)`` (0 if it has none yet); *port* as in :meth:`endpoint_of`.

        Raises
        ------
        KeyError
            As :meth:`endpoint_of`.
        """
        return int(self.ep_lid[self.endpoint_of(node, port)])

    def with_lids(self, lmc: int = 0) -> "FabricGraph":
        """A copy in which every endpoint without a LID has one, as a subnet manager assigns them.

        Endpoints are visited breadth-first from the subnet manager's node
        (ports in increasing order); each gets the lowest free LID that is a
        multiple of ``2**lmc`` (CA ports without an LMC of their own get
        *lmc*; switches keep theirs).  Existing LIDs are kept.
        """
        problem = validate.lmc_problem(lmc)
        if problem:
            raise ConfigError(problem)
        if self.lids_complete:
            return self
        order = self.bfs_order(self.sm_node)
        ep_lid = self.ep_lid.copy()
        ep_lmc = self.ep_lmc.copy()
        used = np.zeros(MAX_UNICAST_LID + 2, dtype=bool)
        used[0] = True
        for e in np.flatnonzero(ep_lid > 0):
            used[ep_lid[e] : ep_lid[e] + (1 << ep_lmc[e])] = True
        by_node: dict[int, list[int]] = {}
        for e in range(len(ep_lid)):
            by_node.setdefault(int(self.ep_node[e]), []).append(e)
        cursor = 1  # every LID below it is taken: the scans stay linear overall
        for node in order:
            for e in by_node.get(node, []):
                if ep_lid[e]:
                    continue
                if not self.is_switch[node] and ep_lmc[e] == 0:
                    ep_lmc[e] = lmc
                step = 1 << int(ep_lmc[e])
                lid = max(step, -(-cursor // step) * step)
                while used[lid : lid + step].any():
                    lid += step
                if lid + step - 1 > MAX_UNICAST_LID:
                    raise TopologyError(f"no unicast LIDs left to assign: the fabric needs more than the "
                                        f"{MAX_UNICAST_LID} LIDs 1..0xBFFF (LMC {int(ep_lmc[e])})")
                used[lid : lid + step] = True
                ep_lid[e] = lid
                while cursor <= MAX_UNICAST_LID and used[cursor]:
                    cursor += 1
        return self._with_endpoint_lids(ep_lid, ep_lmc)

    def _with_endpoint_lids(self, ep_lid: np.ndarray, ep_lmc: np.ndarray) -> "FabricGraph":
        """A copy whose endpoints have these LIDs and LMCs (a CA's LMC: its first endpoint's)."""
        by_node: dict[int, list[int]] = {}
        for e in range(len(ep_lid)):
            by_node.setdefault(int(self.ep_node[e]), []).append(e)
        nodes = []
        for i, nd in enumerate(self.nodes):
            eps = by_node.get(i, [])
            if not eps:
                nodes.append(nd)
                continue
            first = eps[0]
            extra = {int(self.ep_port[e]): int(ep_lid[e]) for e in eps[1:]}
            nodes.append(attrs.evolve(nd, lid=int(ep_lid[first]), lmc=int(ep_lmc[first]), port_lids=extra))
        return FabricGraph(nodes, self.links, sm_node=self.sm_node, name=self.name)

    def with_lmc(self, lmc: int) -> tuple["FabricGraph", list[tuple[int, int, int]]]:
        """A copy in which every CA port owns ``2**lmc`` aligned LIDs, as a subnet manager whose LMC
        is *lmc* makes it, and the LIDs it moved to get there.

        A real fabric's LIDs (an ibnetdiscover dump, a NED file) were given with
        some other LMC, usually 0: consecutive ports hold consecutive LIDs, so few
        of them can grow into a block of ``2**lmc``.  As OpenSM does when its LMC
        is raised, a CA port keeps its LID when the block ``lid .. lid + 2**lmc - 1``
        is aligned (a multiple of ``2**lmc``) and no LID of it belongs to a port
        kept before (switches first, then CA ports breadth-first from the subnet
        manager's node, ports in increasing order); a CA port with a larger LMC of
        its own keeps its range.  The other CA ports are given new blocks, as
        :meth:`with_lids` gives missing LIDs (the lowest free aligned block, in
        the same order); switches keep their LIDs.  With *lmc* 0 nothing moves.

        Returns
        -------
        fabric : FabricGraph
            Every endpoint with a LID.
        moved : list of (int, int, int)
            ``(endpoint, old LID, new LID)`` of every CA port whose LID changed.

        Raises
        ------
        ConfigError
            If *lmc* is not in 0..7.
        TopologyError
            If the unicast LIDs run out.

        Examples
        --------
        >>> g = FabricGraph([NodeSpec("s", True, 3, lid=1), NodeSpec("a", False, 1, lid=2),
        ...                  NodeSpec("b", False, 1, lid=3)], [Link(0, 1, 1, 1), Link(0, 2, 2, 1)], sm_node=1)
        >>> g2, moved = g.with_lmc(1)
        >>> moved  # b's LID 3 is in a's block 2..3: b moves to the next free block
        [(2, 3, 4)]
        >>> g2.ep_lid.tolist(), g2.ep_lmc.tolist()
        ([1, 2, 4], [0, 1, 1])
        """
        problem = validate.lmc_problem(lmc)
        if problem:
            raise ConfigError(problem)
        if lmc == 0:
            return self.with_lids(0), []
        step = 1 << lmc
        ep_lid, ep_lmc = self.ep_lid.copy(), self.ep_lmc.copy()
        used = np.zeros(MAX_UNICAST_LID + 2, dtype=bool)
        for e in np.flatnonzero((ep_lid > 0) & self.is_switch[self.ep_node]).tolist():
            used[ep_lid[e] : ep_lid[e] + (1 << int(ep_lmc[e]))] = True
        by_node: dict[int, list[int]] = {}
        for e in np.flatnonzero(~self.is_switch[self.ep_node]).tolist():
            by_node.setdefault(int(self.ep_node[e]), []).append(e)
        moved: list[tuple[int, int]] = []
        for node in self.bfs_order(self.sm_node):
            for e in by_node.get(node, []):
                lid, own = int(ep_lid[e]), int(ep_lmc[e])
                if own < lmc:
                    ep_lmc[e] = lmc
                if not lid:
                    continue  # with_lids gives it a block
                size = 1 << int(ep_lmc[e])
                if (own >= lmc or lid % step == 0) and lid + size - 1 <= MAX_UNICAST_LID and not used[lid : lid + size].any():
                    used[lid : lid + size] = True
                else:
                    moved.append((e, lid))
                    ep_lid[e] = 0
        # a CA's ports share its LMC: the node takes its first port's
        for eps in by_node.values():
            ep_lmc[eps] = ep_lmc[eps[0]]
        fabric = self._with_endpoint_lids(ep_lid, ep_lmc).with_lids(lmc)
        return fabric, [(e, old, int(fabric.ep_lid[e])) for e, old in moved]

    # ------------------------------------------------------------ structure

    def bfs_order(self, start: int) -> list[int]:
        """Nodes in breadth-first order from *start* (ports in increasing order); unreachable nodes last."""
        n = len(self.nodes)
        seen = np.zeros(n, dtype=bool)
        order: list[int] = []
        for root in [start] + list(range(n)):
            if seen[root]:
                continue
            seen[root] = True
            q = deque([root])
            while q:
                x = q.popleft()
                order.append(x)
                for p in range(1, int(self.num_ports[x]) + 1):
                    y = int(self.peer_node[x, p])
                    if y >= 0 and not seen[y]:
                        seen[y] = True
                        q.append(y)
        return order

    def ports(self, node: int) -> list[int]:
        """Connected ports of *node*, in increasing order."""
        return [int(p) for p in np.flatnonzero(self.peer_node[node] >= 0)]

    def attachment(self, e: int) -> tuple[int, int]:
        """The switch port an endpoint is reached through: ``(switch node, port)``.

        A switch endpoint is reached at its own port 0.  A CA port yields the
        switch and port at the other end of its link, or ``(-1, -1)`` when
        that is another CA (a back-to-back link).
        """
        node, port = int(self.ep_node[e]), int(self.ep_port[e])
        if self.is_switch[node]:
            return node, 0
        peer = int(self.peer_node[node, port])
        if peer < 0 or not self.is_switch[peer]:
            return -1, -1
        return peer, int(self.peer_port[node, port])

    def attachments(self) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`attachment` of every endpoint at once: arrays ``(switch node, port)``."""
        e_node, e_port = self.ep_node, self.ep_port
        is_sw = self.is_switch[e_node]
        pn = self.peer_node[e_node, e_port]
        peer_sw = (pn >= 0) & self.is_switch[np.where(pn >= 0, pn, 0)]
        node = np.where(is_sw, e_node, np.where(peer_sw, pn, -1))
        port = np.where(is_sw, 0, np.where(peer_sw, self.peer_port[e_node, e_port], -1))
        return node, port

    def switch_adjacency(self) -> np.ndarray:
        """``A[i, j]`` = number of links between switch rows i and j."""
        s = len(self.switches)
        a = np.zeros((s, s), dtype=np.int64)
        for ln in self.links:
            ra, rb = self.switch_row[ln.a], self.switch_row[ln.b]
            if ra >= 0 and rb >= 0 and ra != rb:
                a[ra, rb] += 1
                a[rb, ra] += 1
        return a

    def switch_hops(self) -> np.ndarray:
        """Hop counts between switches (rows and columns in switch order); -1 if unreachable.

        Breadth-first search from every switch at once: each level is one
        boolean matrix product, so the cost is O(diameter * S^2 / word)
        array work rather than per-node Python loops.
        """
        adj = self.switch_adjacency() > 0
        s = adj.shape[0]
        dist = np.full((s, s), -1, dtype=np.int64)
        if s == 0:
            return dist
        frontier = np.eye(s, dtype=bool)
        reached = frontier.copy()
        dist[frontier] = 0
        level = 0
        adj_f = adj.astype(np.float32)
        while frontier.any():
            level += 1
            nxt = (frontier.astype(np.float32) @ adj_f) > 0
            nxt &= ~reached
            dist[nxt] = level
            reached |= nxt
            frontier = nxt
        return dist

    def switch_diameter(self, budget: float = 2e8) -> tuple[bool, int | None, bool]:
        """Whether the switches are connected, and the diameter of the switch graph in hops.

        Parameters
        ----------
        budget : float
            The most word operations (64 searches each) the exact diameter
            may cost, about 1 s per 10**8 here (a 64 x 64 torus costs 6e7,
            an irregular fabric of 10,000 switches about as much); above it
            the diameter is bounded from below instead.

        Returns
        -------
        connected : bool
            True when every switch reaches every other (True without switches).
        diameter : int or None
            The largest switch-to-switch hop count; None when not connected.
        exact : bool
            False when the exact diameter would cost more than *budget*: the
            diameter is then the lower bound of a double sweep (a search
            from the switch farthest from switch 0), exact on trees.

        Notes
        -----
        Memory stays O(switches + links) whatever the size, unlike
        :meth:`switch_hops`: breadth-first searches run from 64 sources per
        machine word, each level one gather and one ``bitwise_or.reduceat``
        over the links (at most about 64 MB of work arrays).  The exact
        diameter costs ``S/64 * 2L * D`` word operations for S switches, L
        switch links and diameter D; the bound two single searches.
        """
        s = len(self.switches)
        if s <= 1:
            return True, (0 if s else None), True
        src, dst = [], []
        for ln in self.links:
            ra, rb = int(self.switch_row[ln.a]), int(self.switch_row[ln.b])
            if ra >= 0 and rb >= 0:
                src += [ra, rb]
                dst += [rb, ra]
        src_a, dst_a = np.array(src, dtype=np.int64), np.array(dst, dtype=np.int64)
        order = np.argsort(dst_a, kind="stable")
        src_a, dst_a = src_a[order], dst_a[order]
        targets, starts = np.unique(dst_a, return_index=True)
        one = np.uint64(1)

        def bits(words: np.ndarray, b: int) -> np.ndarray:
            return np.unpackbits(words.astype("<u8").view(np.uint8), bitorder="little")[:b].astype(bool)

        def eccentricities(sources: np.ndarray) -> np.ndarray:
            """Hop eccentricity of each source switch row (-1 where it does not reach every switch)."""
            b = len(sources)
            w = (b + 63) // 64
            idx = np.arange(b)
            reached = np.zeros((s, w), dtype=np.uint64)
            reached[sources, idx // 64] = one << (idx % 64).astype(np.uint64)
            frontier = reached.copy()
            ecc = np.zeros(b, dtype=np.int64)
            level = 0
            while len(targets):
                level += 1
                nxt = np.zeros_like(reached)
                nxt[targets] = np.bitwise_or.reduceat(frontier[src_a], starts, axis=0)
                nxt &= ~reached
                grew = bits(np.bitwise_or.reduce(nxt, axis=0), b)
                if not grew.any():
                    break
                ecc[grew] = level
                reached |= nxt
                frontier = nxt
            ecc[~bits(np.bitwise_and.reduce(reached, axis=0), b)] = -1
            return ecc

        first = eccentricities(np.array([0]))
        if first[0] < 0:
            return False, None, True
        far = eccentricities(np.array([self._farthest(0, src_a, dst_a)]))[0]
        if -(-s // 64) * max(len(src_a), 1) * far > budget:
            return True, int(far), False
        words = max(1, min(-(-s // 64), (64 << 20) // (8 * (len(src_a) + 3 * s))))
        diameter = 0
        for lo in range(0, s, 64 * words):
            diameter = max(diameter, int(eccentricities(np.arange(lo, min(s, lo + 64 * words))).max()))
        return True, diameter, True

    def _farthest(self, start: int, src: np.ndarray, dst: np.ndarray) -> int:
        """A switch row at the largest hop distance from switch row *start* (links ``src -> dst``)."""
        s = len(self.switches)
        dist = np.full(s, -1, dtype=np.int64)
        dist[start] = 0
        frontier = np.array([start])
        level = 0
        while len(frontier):
            level += 1
            mask = np.zeros(s, dtype=bool)
            mask[frontier] = True
            nb = dst[mask[src]]
            nb = np.unique(nb[dist[nb] < 0])
            dist[nb] = level
            frontier = nb
        return int(np.argmax(dist))

    def to_networkx(self) -> nx.MultiGraph:
        """A MultiGraph: node attributes ``name``, ``is_switch``, ``lid``; edge attributes ``ports`` ({node: port})."""
        import networkx as nx

        g = nx.MultiGraph()
        for i, nd in enumerate(self.nodes):
            g.add_node(i, name=nd.name, is_switch=nd.is_switch, lid=nd.lid)
        for ln in self.links:
            g.add_edge(ln.a, ln.b, ports={ln.a: ln.port_a, ln.b: ln.port_b} if ln.a != ln.b else {ln.a: ln.port_a})
        return g

    def index(self, name: str) -> int:
        """Node index by name."""
        for i, nd in enumerate(self.nodes):
            if nd.name == name:
                return i
        raise KeyError(f"no node named '{name}'")

    def guid(self, node: int) -> int:
        """The node GUID of *node*: its declared one, or one derived from its name (Mellanox OUI
        ``0x0002c9`` and 40 bits hashed from the name), the same on every run.
        """
        nd = self.nodes[node]
        return nd.guid or _guid_from_name(nd.name)

    # ------------------------------------------------------------ builders

    @classmethod
    def from_network(
        cls,
        net,
        *,
        is_switch: Callable[[object], bool] | None = None,
    ) -> "FabricGraph":
        """The fabric of an elaborated network.

        Nodes are the simple modules with a ``port`` gate vector, in
        pre-order; links are the connections between their ``port`` gates.
        *is_switch* tells switches apart (default: type
        ``ibfabric.components.Switch``).  The subnet manager's node is taken
        from a SubnetManager module's ``node`` parameter.
        """
        from ..rates import link_rate

        if is_switch is None:
            is_switch = lambda m: m.type_name == "ibfabric.components.Switch"  # noqa: E731
        mods = [m for m in net.simple_modules() if m.gate("port") is not None]
        index = {m.path: i for i, m in enumerate(mods)}
        nodes = []
        for m in mods:
            where = str(m.location) if m.location is not None else ""
            p = {k: v.value for k, v in m.params.items()}
            problem = validate.negative_problem(p)
            if problem is not None:  # what the built node would refuse (its delays)
                raise ConfigError(validate.located(where, f"{m.path}: {problem}"))
            num_ports = p.get("numPorts", (m.gate("port").size or 1) - 1)
            nodes.append(node_spec(m.path, bool(is_switch(m)), num_ports, p.get("lid", 0), p.get("lmc", 0), p, where=where))
        links = []
        for c in net.flat_connections():
            cp = {k: v.value for k, v in c.channel.params.items()} if c.channel is not None else {}
            problem = validate.negative_problem(cp)
            if problem is not None:  # what the built channel would refuse (ibfabric.components.link)
                where = str(c.location) if c.location is not None else ""
                raise ConfigError(validate.located(where, f"{c.src}.channel: {problem}"))
            if c.src.path in index and c.dst.path in index and c.src.gate == "port" and c.dst.gate == "port":
                width, speed = cp.get("width", "4x"), cp.get("speed", "QDR")
                data_rate = cp.get("dataRate", 0) or 0  # as the Link channel: it overrides width x speed
                if not isinstance(data_rate, (int, float)) or isinstance(data_rate, bool):
                    rate = data_rate  # a mistake check_links reports with its place
                elif data_rate != 0:
                    rate = float(data_rate)
                else:
                    rate = link_rate(width, speed) if validate.link_problem(width, speed) is None else 0.0
                links.append(
                    Link(index[c.src.path], c.src.index, index[c.dst.path], c.dst.index, width=width, speed=speed,
                         rate=rate, where=str(c.location) if c.location is not None else "")
                )
        sm = None
        for m in net.simple_modules():
            if m.type_name.endswith("SubnetManager") and "node" in m.params:
                where = str(m.params["node"].value)
                if where:
                    matches = [i for i, mm in enumerate(mods) if mm.path == where or mm.path.endswith("." + where)]
                    if not matches:
                        at = f"{m.location}: " if m.location is not None else ""
                        raise ConfigError(f"{at}{m.path}: node '{where}' is not a node of the network")
                    sm = matches[0]
        return cls(nodes, links, sm_node=sm, name=net.name)


def node_spec(name: str, is_switch: bool, num_ports, lid, lmc, params: Mapping[str, Any], *, where: str = "") -> NodeSpec:
    """A NodeSpec completed from a node's parameters: ``guid`` (hexadecimal),
    ``portLids`` (``'port:lid ...'``) and ``nodeDesc``.  A malformed value
    raises ConfigError naming the node (and *where* it is declared)."""
    for what, value in (("'numPorts'", num_ports), ("'lid'", lid), ("'lmc'", lmc)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
            raise ConfigError(validate.located(where, f"{name}: {what} must be an integer (got {value!r})"))
    guid_text = str(params.get("guid", ""))
    try:
        guid = validate.parse_guid(guid_text)
    except ValueError as exc:
        raise ConfigError(validate.located(where, f"{name}: {exc}")) from None
    lids_text = str(params.get("portLids", ""))
    try:
        port_lids = _parse_port_lids(lids_text)
    except ValueError:
        raise ConfigError(validate.located(where, f"{name}: 'portLids' must be 'port:lid ...' (got {lids_text[:60]!r})")) from None
    return NodeSpec(name=name, is_switch=is_switch, num_ports=int(num_ports), lid=int(lid), lmc=int(lmc), guid=guid,
                    port_lids=port_lids, desc=str(params.get("nodeDesc", "")), where=where)


def _parse_port_lids(text: str) -> dict[int, int]:
    """``'2:147 3:150'`` -> {2: 147, 3: 150}."""
    out: dict[int, int] = {}
    for item in text.replace(",", " ").split():
        port, _, lid = item.partition(":")
        out[int(port)] = int(lid, 0)
    return out


def moved_lids_message(fabric: FabricGraph, moved: Sequence[tuple[int, int, int]], lmc: int, shown: int = 3) -> str:
    """One line saying which LIDs :meth:`FabricGraph.with_lmc` moved (the first *shown* of them).

    >>> g = FabricGraph([NodeSpec("s", True, 3, lid=1), NodeSpec("a", False, 1, lid=2),
    ...                  NodeSpec("b", False, 1, lid=3)], [Link(0, 1, 1, 1), Link(0, 2, 2, 1)], sm_node=1)
    >>> moved_lids_message(*g.with_lmc(1), 1)
    'LMC 1 gives every CA port 2 aligned LIDs: the LIDs of 1 of 2 CA ports were reassigned (b port 1: 3 -> 4)'
    """
    cas = int((~fabric.is_switch[fabric.ep_node]).sum())
    examples = ", ".join(f"{fabric.endpoint_name(e)}: {old} -> {new}" for e, old, new in moved[:shown])
    more = ", ..." if len(moved) > shown else ""
    return (f"LMC {lmc} gives every CA port {1 << lmc} aligned LIDs: the LIDs of {len(moved)} of {cas} CA ports"
            f" were reassigned ({examples}{more})")
