"""Virtual layers: routes spread over SLs so that every layer's channel dependency graph is acyclic.

Shared by ``dfsssp`` and ``lash``.  Destination-based tables make the
route from a switch to a destination the same for every source on that
switch, so the unit of assignment is a *route* (source switch x, target
t), where a target is a column of a switch-level table (a LID for
``dfsssp``, a destination switch for ``lash``).  A route's dependencies
are the pairs of consecutive switch-to-switch channels it takes; channels
to and from channel adapters cannot close a cycle and are left out.
A packet keeps its SL, and every port maps SL to VL alike, so the
channels of layer v form their own dependency graph: the routing is
deadlock-free when every layer's graph is acyclic (Dally and Seitz).
"""

from __future__ import annotations

import numpy as np

from ._common import SwitchView

__all__ = ["Routes", "break_cycles", "balance", "flag"]


def flag(value) -> bool:
    """An option converter accepting true/false (also 1/0, yes/no, on/off)."""
    text = str(value).strip().lower()
    if text in ("1", "true", "yes", "on"):
        return True
    if text in ("0", "false", "no", "off"):
        return False
    raise ValueError(f"must be true or false (got {value!r})")


class Routes:
    """The switch-level routes of a table ``tab[x, t]`` (port of switch row x towards target t) and their dependencies.

    Attributes
    ----------
    T : int
        Number of targets; route ``u = x * T + t``.
    edges : ndarray, shape (E, 2)
        The distinct dependencies, as (channel, channel) ids.
    dep_route, dep_edge : ndarray, shape (D,)
        One entry per (route, dependency), sorted by route.
    """

    def __init__(self, view: SwitchView, tab: np.ndarray, chunk: int = 1 << 21):
        S, T = tab.shape
        self.S, self.T = S, T
        nbr = view.nbr
        chan = np.full(nbr.shape, -1, dtype=np.int64)
        ok = nbr >= 0
        chan[ok] = np.arange(int(ok.sum()))
        self.channels = np.argwhere(ok)
        C = max(len(self.channels), 1)
        tab = tab.astype(np.int64)
        routes, codes = [], []
        per = max(1, chunk // max(T, 1))
        for lo in range(0, S, per):
            xs = np.arange(lo, min(S, lo + per))
            u = (xs[:, None] * T + np.arange(T)[None, :]).ravel()
            cur = np.repeat(xs, T)
            t = np.tile(np.arange(T), len(xs))
            prev = np.full(len(u), -1, dtype=np.int64)
            for _ in range(S + 1):
                p = tab[cur, t]
                valid = (p >= 0) & (p < nbr.shape[1])
                nxt = np.where(valid, nbr[cur, np.where(valid, p, 0)], -1)
                go = nxt >= 0
                if not go.any():
                    break
                u, cur, t, prev, p, nxt = u[go], cur[go], t[go], prev[go], p[go], nxt[go]
                c = chan[cur, p]
                has = prev >= 0
                routes.append(u[has])
                codes.append(prev[has] * C + c[has])
                prev, cur = c, nxt
        route = np.concatenate(routes) if routes else np.zeros(0, dtype=np.int64)
        code = np.concatenate(codes) if codes else np.zeros(0, dtype=np.int64)
        order = np.argsort(route, kind="stable")
        self.dep_route = route[order]
        uniq, inv = np.unique(code[order], return_inverse=True)
        self.dep_edge = inv.astype(np.int64)
        self.edges = np.stack(np.divmod(uniq, C), axis=1) if len(uniq) else np.zeros((0, 2), dtype=np.int64)
        self._by_edge = np.argsort(self.dep_edge, kind="stable")
        self._edge_start = np.searchsorted(self.dep_edge[self._by_edge], np.arange(len(uniq) + 1))
        self._route_start = np.searchsorted(self.dep_route, np.arange(S * T + 1))

    @property
    def E(self) -> int:
        return len(self.edges)

    def routes_of_edge(self, e: int) -> np.ndarray:
        """Routes that induce dependency *e*."""
        return self.dep_route[self._by_edge[self._edge_start[e] : self._edge_start[e + 1]]]

    def deps_of(self, routes: np.ndarray) -> np.ndarray:
        """Indices (into ``dep_route``/``dep_edge``) of the dependencies of *routes*."""
        lo, hi = self._route_start[routes], self._route_start[routes + 1]
        n = hi - lo
        if not n.sum():
            return np.zeros(0, dtype=np.int64)
        starts = np.repeat(lo - np.concatenate(([0], np.cumsum(n)[:-1])), n)
        return starts + np.arange(int(n.sum()))

    def layer_counts(self, layer: np.ndarray, weight: np.ndarray, v: int) -> np.ndarray:
        """Weighted number of routes of layer *v* inducing each dependency."""
        mask = layer.ravel()[self.dep_route] == v
        return np.bincount(self.dep_edge[mask], weights=weight.ravel()[self.dep_route[mask]], minlength=self.E)


def _core(edges: np.ndarray, alive: np.ndarray, n: int) -> np.ndarray:
    """The dependencies left after peeling those on no cycle (Kahn's algorithm, all at once per round)."""
    a, b = edges[:, 0], edges[:, 1]
    alive = alive.copy()
    while True:
        indeg = np.bincount(b[alive], minlength=n)
        has_out = np.bincount(a[alive], minlength=n) > 0
        drop = alive & ((indeg[a] == 0) | ~has_out[b])
        if not drop.any():
            return alive
        alive &= ~drop


def _find_cycle(succ: dict[int, set[int]], done: set[int]) -> list[int] | None:
    """A cycle of the graph *succ* as a list of nodes, or None; depth-first, nodes in increasing order.

    *done* collects nodes proven to be on no cycle; edges are only ever
    removed between calls, so they stay proven and later searches skip them.
    """
    for root in sorted(succ):
        if root in done:
            continue
        path, pos = [root], {root: 0}
        stack = [iter(sorted(succ[root]))]
        while stack:
            y = next(stack[-1], None)
            if y is None:
                stack.pop()
                w = path.pop()
                del pos[w]
                done.add(w)
                continue
            if y in done or y not in succ[path[-1]]:
                continue
            if y in pos:
                return path[pos[y]:]
            pos[y] = len(path)
            path.append(y)
            stack.append(iter(sorted(succ.get(y, ()))))
    return None


def break_cycles(routes: Routes, weight: np.ndarray, layers: int, work: dict | None = None) -> tuple[np.ndarray, int]:
    """DFSSSP's layering: all routes start in layer 0; while layer v's graph has a cycle, the
    routes inducing the cycle's weakest dependency (fewest source-destination pairs) move to v + 1.

    *weight* (S, T) counts the source-destination pairs of each route.  Returns
    ``(layer (S, T) uint8, layers needed)``; raises ValueError naming the count when
    *layers* do not suffice.  With *work*, adds to ``work["checks"]`` the
    dependencies examined: every dependency once per layer (the acyclic core),
    the dependencies of every cycle found and of every route moved.
    """
    checks = 0
    layer = np.zeros((routes.S, routes.T), dtype=np.uint8)
    flat = layer.ravel()
    n = max(len(routes.channels), 1)
    counts = routes.layer_counts(layer, weight, 0)
    w_flat = weight.ravel()
    v = 0
    while True:
        core = _core(routes.edges, counts > 0, n)
        checks += routes.E
        if not core.any():
            if work is not None:
                work["checks"] = work.get("checks", 0) + checks
            return layer, v + 1
        if v + 1 >= layers:
            raise ValueError(f"{layers} layers do not suffice to break every cycle of the channel dependency graph")
        nxt = np.zeros(routes.E)
        ids = np.flatnonzero(core)
        succ: dict[int, set[int]] = {}
        edge_id: dict[tuple[int, int], int] = {}
        for i, (a, b) in zip(ids.tolist(), routes.edges[ids].tolist()):
            succ.setdefault(a, set()).add(b)
            edge_id[a, b] = i
        done: set[int] = set()
        while True:
            cyc = _find_cycle(succ, done)
            if cyc is None:
                break
            e = min((edge_id[a, b] for a, b in zip(cyc, cyc[1:] + cyc[:1])), key=lambda i: (counts[i], i))
            r = routes.routes_of_edge(e)
            r = r[flat[r] == v]
            flat[r] = v + 1
            d = routes.deps_of(r)
            checks += len(cyc) + len(d)
            de = routes.dep_edge[d]
            dw = w_flat[routes.dep_route[d]]
            np.subtract.at(counts, de, dw)
            np.add.at(nxt, de, dw)
            for i in np.unique(de).tolist():
                if counts[i] <= 0 and core[i]:
                    a, b = routes.edges[i].tolist()
                    succ[a].discard(b)
        counts = nxt
        v += 1


def balance(layer: np.ndarray, weight: np.ndarray, needed: int, available: int) -> np.ndarray:
    """Spread the routes of *needed* layers over *available* SLs (OpenSM dfsssp's balancing).

    Each spare SL goes to the layer with the most pairs per SL so far; a
    layer given k SLs deals its routes round-robin over them (any subset of
    an acyclic layer is acyclic).  Returns the SL of every route.
    """
    per = np.bincount(layer.ravel(), weights=weight.ravel(), minlength=needed)[:needed]
    split = np.ones(needed, dtype=np.int64)
    for _ in range(max(0, available - needed)):
        split[int(np.argmax(per / split))] += 1
    first = np.concatenate(([0], np.cumsum(split)[:-1]))
    out = np.zeros_like(layer)
    flat_l, flat_o = layer.ravel(), out.ravel()
    for v in range(needed):
        idx = np.flatnonzero(flat_l == v)
        flat_o[idx] = first[v] + np.arange(len(idx)) % split[v]
    return out
