"""The up*/down* directed graph shared by updn, FERa, PIRa, DR and hybrid routing.

A breadth-first spanning tree from the root switch gives every switch a
level (its distance from the root).  Each switch-to-switch link is *up* in
the direction of the lower level; between two switches of the same level it
is up towards the lower node GUID (OpenSM's updn rule: "bigger GUID ==
UP direction" from the bigger one).  Links to channel adapters are down
from the switch.  The directed graph is acyclic with the root as its only
sink, so routes that never take an up link after a down link are
deadlock-free (Schroeder et al. 1991; Bermúdez et al. 2006, §2.2, Fig. 4).

Every search here works on all switches at once: a breadth-first frontier
is a boolean vector, and one step of the search is a gather over the
(switch, port) neighbour array.
"""

from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from ibfabric.components.routing.fabric import FabricGraph
from ibfabric.errors import ConfigError

from ._common import SwitchView, default_root, resolve_switch

__all__ = ["UpDown", "updown_for", "root_node", "center_switch"]


class UpDown:
    """Levels and link directions of the up*/down* graph rooted at switch row *root*.

    *level* overrides the breadth-first levels from the root (``dnup`` ranks
    switches by their distance from the channel adapters instead); links
    still go up towards the lower level, then the lower GUID.

    Attributes
    ----------
    level : ndarray of int, shape (S,)
        Distance from the root, -1 for switches the root does not reach.
    up : ndarray of bool, shape (S, P)
        True where port p of switch x is the lower end of a link going up.
    nbr : ndarray of int, shape (S, P)
        ``view.nbr`` restricted to switches the root reaches.
    degree : ndarray of int, shape (S,)
        Connected switch ports of each switch in the graph.
    graph_work : dict
        The work of building the graph (``_common.WORK_KEYS``): every
        reached switch visited, every port examined once.
    """

    def __init__(self, view: SwitchView, root: int, level: np.ndarray | None = None):
        self.view = view
        self.root = root
        self._down: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        S = view.S
        nbr = view.nbr
        nbv = nbr >= 0
        nbc = np.where(nbv, nbr, 0)
        if level is None:
            level = np.full(S, -1, dtype=np.int64)
            level[root] = 0
            frontier = np.zeros(S, dtype=bool)
            frontier[root] = True
            k = 0
            while frontier.any():
                k += 1
                new = (nbv & frontier[nbc]).any(axis=1) & (level < 0)
                level[new] = k
                frontier = new
        self.level = np.asarray(level, dtype=np.int64)
        level = self.level
        reach = level >= 0
        ok = nbv & reach[nbc] & reach[:, None]
        self.nbr = np.where(ok, nbr, -1)
        self._nbv = ok
        self._nbc = np.where(ok, nbr, 0)
        guid = np.array([view.fabric.guid(int(n)) for n in view.fabric.switches], dtype=np.uint64)
        lv_n = level[self._nbc]
        lower = (lv_n < level[:, None]) | ((lv_n == level[:, None]) & (guid[self._nbc] < guid[:, None]))
        self.up = ok & lower
        self.down = ok & ~lower
        self.degree = ok.sum(axis=1)
        self.graph_work = {"visits": int(np.count_nonzero(reach)), "relaxations": int(nbv.sum())}

    # ------------------------------------------------------------ searches

    def down_distances(self, a: int) -> tuple[np.ndarray, np.ndarray]:
        """Length of the shortest down-only route from every switch to switch *a*.

        Returns ``(dist, port)`` (fresh arrays; the search runs once per *a*):
        -1 where no down-only route exists; *port* is the lowest down port on
        a shortest such route.
        """
        hit = self._down.get(a)
        if hit is None:
            hit = self._down[a] = self._down_search(a)
        return hit[0].copy(), hit[1].copy()

    def _down_search(self, a: int) -> tuple[np.ndarray, np.ndarray]:
        S = self.view.S
        dist = np.full(S, -1, dtype=np.int64)
        port = np.full(S, -1, dtype=np.int64)
        if self.level[a] < 0:
            return dist, port
        dist[a] = 0
        frontier = np.zeros(S, dtype=bool)
        frontier[a] = True
        k = 0
        while frontier.any():
            cand = self.down & frontier[self._nbc] & (dist < 0)[:, None]
            new = cand.any(axis=1)
            if not new.any():
                break
            k += 1
            dist[new] = k
            port[new] = cand[new].argmax(axis=1)
            frontier = new
        return dist, port

    def fera(self, a: int) -> tuple[np.ndarray, np.ndarray]:
        """FERa's routes to switch *a* (Bermúdez et al. 2006, §2.3).

        A switch with any down-only route uses its shortest down-only route
        (even if an up route is shorter); every other switch takes the up
        port leading to the nearest already-routed switch.  Ties go to the
        lowest port.  Returns ``(port, dist)`` per switch (-1: no route).
        """
        dist, port = self.down_distances(a)
        if dist[a] < 0:
            return port, dist
        k = 0
        while k <= dist.max():
            at_k = dist == k
            cand = self.up & at_k[self._nbc] & (dist < 0)[:, None]
            new = cand.any(axis=1)
            if new.any():
                dist[new] = k + 1
                port[new] = cand[new].argmax(axis=1)
            k += 1
        return port, dist

    def legal_distances(self, a: int) -> tuple[np.ndarray, np.ndarray]:
        """Shortest up*/down* route lengths to switch *a*, per switch, in both states.

        Returns ``(down, any)``: ``down[x]`` is the shortest down-only route
        from x (a packet that has already gone down), ``any[x]`` the shortest
        legal route (one that has not); -1 where none exists.
        """
        down, _ = self.down_distances(a)
        anyd = down.copy()
        if down[a] < 0:
            return down, anyd
        big = np.iinfo(np.int64).max
        cur = np.where(anyd >= 0, anyd, big)
        k = 0
        while k <= cur[cur < big].max():
            at_k = cur == k
            cand = (self.up & at_k[self._nbc]).any(axis=1) & (cur > k + 1)
            cur[cand] = k + 1
            k += 1
        anyd = np.where(cur < big, cur, -1)
        return down, anyd

    def updn_allowed(self, a: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Consistent shortest legal next hops towards switch *a* (the updn engine).

        A breadth-first search backwards from *a*, layer by layer, over two
        states: a switch whose route is down-only may be entered by a down
        link; a switch whose route starts with an up link may only be
        entered by an up link.  A switch first reached in layer k gets every
        port that reaches layer k-1 legally; if some of them are down ports
        it keeps only those (its route becomes down-only, which keeps it
        usable by the switches above it).  Every switch's chosen port is then
        legal for every packet that can arrive at it.

        Returns ``(allowed (S, P) bool, dist (S,), down_only (S,) bool)``.
        """
        S, P = self.view.S, self.view.P
        allowed = np.zeros((S, P), dtype=bool)
        dist = np.full(S, -1, dtype=np.int64)
        down_only = np.zeros(S, dtype=bool)
        if self.level[a] < 0:
            return allowed, dist, down_only
        dist[a] = 0
        down_only[a] = True
        frontier = np.zeros(S, dtype=bool)
        frontier[a] = True
        k = 0
        nbc = self._nbc
        while frontier.any():
            cand = self._nbv & frontier[nbc] & (dist < 0)[:, None] & (self.up | down_only[nbc])
            new = cand.any(axis=1)
            if not new.any():
                break
            k += 1
            down_c = cand & self.down
            has_down = down_c.any(axis=1)
            allowed[new] = np.where(has_down[new, None], down_c[new], cand[new])
            dist[new] = k
            down_only[new] = has_down[new]
            frontier = new
        return allowed, dist, down_only


def updown_for(fabric: FabricGraph, view: SwitchView, root_option: Any) -> UpDown:
    """The up*/down* graph for an engine's ``root`` option (None = nearest the subnet manager,
    ``center`` = :func:`center_switch`)."""
    return UpDown(view, int(fabric.switch_row[root_node(fabric, root_option)]))


def root_node(fabric: FabricGraph, root_option: Any) -> int:
    """Node index of the root an engine's ``root`` option names: a LID or node name, ``center``
    (:func:`center_switch`), or None / "" for the switch nearest the subnet manager."""
    if root_option in (None, ""):
        return default_root(fabric)
    if str(root_option).strip() == "center":
        return center_switch(fabric)
    return resolve_switch(fabric, root_option)


def center_switch(fabric: FabricGraph) -> int:
    """Node index of the switch with the smallest sum of switch hops to every switch it reaches, ties to
    the lowest node index (a root that keeps up*/down* paths short; Schroeder et al. leave the root open)."""
    if not len(fabric.switches):
        raise ConfigError("the fabric has no switch")
    hops = fabric.switch_hops()
    reach = (hops >= 0).sum(axis=1)
    total = np.where(hops >= 0, hops, 0).sum(axis=1)
    # the largest component first, then the shortest total distance, then the switch order
    row = min(range(len(total)), key=lambda r: (-int(reach[r]), int(total[r]), int(fabric.switches[r])))
    return int(fabric.switches[row])


def root_info(fabric: FabricGraph, ud: UpDown) -> Mapping[str, Any]:
    from ibfabric.components.routing.opensm import short_names

    node = int(fabric.switches[ud.root])
    return {"root": short_names(fabric)[node], "root_lid": fabric.lid_of(node), "level": ud.level.copy()}
