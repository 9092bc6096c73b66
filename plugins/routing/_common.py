"""Shared machinery of the built-in routing engines.

Engines see a fabric at switch level: ``SwitchView`` gives, for every switch
row and port, the switch row at the other end (``nbr``, -1 for none or a CA)
and, for every LID, the switch row and port through which the LID's owner is
reached (``att_row``, ``att_port``; port 0 for a switch's own LIDs).  Most
engines decide one set of *allowed* output ports per destination switch and
then assign ports LID by LID with :func:`assign_balanced`, which balances
exactly like OpenSM's minhop: per switch, the allowed port that already
carries the fewest destination LIDs, ties to the lowest port.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from ibfabric.components.routing.fabric import FabricGraph
from ibfabric.components.routing.tables import NO_PORT
from ibfabric.errors import ConfigError, did_you_mean

__all__ = [
    "SwitchView",
    "assign_balanced",
    "parse_options",
    "resolve_switch",
    "default_root",
    "expand_switch_ports",
    "WORK_KEYS",
    "new_work",
    "record_work",
    "search_work",
]

#: Cost added to ports already used by another LID of the same endpoint (LMC spreading).
_SPREAD = 1 << 40


class SwitchView:
    """Switch-level arrays of a fabric (rows in :attr:`FabricGraph.switches` order).

    Attributes
    ----------
    nbr : ndarray of int, shape (S, P)
        Switch row at the other end of each port, -1 if the port is
        unconnected, leads to a CA, or is port 0.
    att_row, att_port : ndarray of int, shape (max_lid + 1,)
        Switch row and port through which each LID is delivered (port 0 for
        a switch's own LIDs); -1 for LIDs nobody owns or owners that no
        switch reaches.
    lid_ep : ndarray of int
        The endpoint owning each LID (``fabric.lid_owner``).
    """

    def __init__(self, fabric: FabricGraph):
        if not fabric.lids_complete:
            raise ConfigError("the fabric has endpoints without LIDs; assign them first (FabricGraph.with_lids)")
        self.fabric = fabric
        sw = fabric.switches
        self.S = len(sw)
        peer = fabric.peer_node[sw]
        self.P = peer.shape[1]
        ok = peer >= 0
        rows = np.where(ok, fabric.switch_row[np.where(ok, peer, 0)], -1)
        rows[:, 0] = -1
        self.nbr = rows
        # attachment of every endpoint
        att_node, ep_port = fabric.attachments()
        ep_row = np.where(att_node >= 0, fabric.switch_row[np.where(att_node >= 0, att_node, 0)], -1)
        self.ep_row, self.ep_att_port = ep_row, ep_port
        owner = fabric.lid_owner
        self.lid_ep = owner
        valid = owner >= 0
        self.att_row = np.where(valid, ep_row[np.where(valid, owner, 0)], -1)
        self.att_port = np.where(valid, ep_port[np.where(valid, owner, 0)], -1)

    def lids(self) -> np.ndarray:
        """LIDs that have an owner reached through a switch, in increasing order."""
        return np.flatnonzero(self.att_row >= 0)

    def lowest_port_to(self, row: int, other: int) -> int:
        """Lowest port of switch *row* leading to switch *other* (-1 if not adjacent)."""
        hit = np.flatnonzero(self.nbr[row] == other)
        return int(hit[0]) if len(hit) else -1


def assign_balanced(
    view: SwitchView,
    allowed: Callable[[int], np.ndarray],
    work: dict[str, int] | None = None,
) -> np.ndarray:
    """Output ports for every LID, balanced over the allowed ports as OpenSM's minhop does.

    ``allowed(a)`` gives, for destination switch row *a*, an (S, P) boolean
    array of the ports each switch may use.  LIDs are processed in increasing
    order; each switch picks, among its allowed ports, the one that already
    carries the fewest LIDs (ties to the lowest port), preferring ports not
    yet used by another LID of the same endpoint (LMC > 0).  The switch the
    LID is attached to gets the attachment port.  Returns the explicit LFT
    (``NO_PORT`` where no port is allowed).  With *work*, adds to it per LID
    the ports every routing switch examines (``relaxations``: all its
    connected switch ports, as OpenSM's per-port search does) and the
    entries written.
    """
    S, P = view.S, view.P
    lft = np.full((S, view.fabric.max_lid + 1), NO_PORT, dtype=np.uint8)
    counts = np.zeros((S, P), dtype=np.int64)
    used = np.zeros((S, P), dtype=np.int64)
    rows = np.arange(S)
    cache: dict[int, tuple[np.ndarray, np.ndarray]] = {}
    last_ep = -1
    for lid in view.lids():
        a = int(view.att_row[lid])
        ep = int(view.lid_ep[lid])
        if ep != last_ep:
            used[:] = 0
            last_ep = ep
        hit = cache.get(a)
        if hit is None:
            mask = allowed(a)
            hit = (mask, mask.any(axis=1))
            cache[a] = hit
        mask, has = hit
        cost = np.where(mask, counts + used * _SPREAD, np.iinfo(np.int64).max)
        port = cost.argmin(axis=1)
        r = rows[has]
        p = port[has]
        lft[r, lid] = p
        counts[r, p] += 1
        used[r, p] = 1
        lft[a, lid] = view.att_port[lid]
    if work is not None:
        # counted from the result, in three array operations: every entry written
        # is one LID at one switch; every routing switch (all but the LID's own,
        # which has no allowed port towards itself) examined all its ports
        written = lft != NO_PORT
        degree = (view.nbr >= 0).sum(axis=1)
        own = view.att_row[view.lids()]
        work["relaxations"] = work.get("relaxations", 0) + int(degree @ written.sum(axis=1) - degree[own].sum())
        work["entries"] = work.get("entries", 0) + int(np.count_nonzero(written))
    return lft


# ---------------------------------------------------------------- work counters

#: The elementary operations every engine counts (``tables.info["work"]``):
#: ``visits`` search states expanded (a switch reached by a breadth-first or
#: Dijkstra search towards one destination, a node PIRa explores, a hop of
#: DR's two-state walk); ``relaxations`` links or ports examined from an
#: expanded state; ``entries`` forwarding-table entries computed or written;
#: ``checks`` consistency checks (channel dependencies examined for cycles,
#: a route compared with a destination's names).  Each is O(1) in a
#: sequential implementation such as the paper's, so ``work_total`` is their
#: plain sum; see docs/routing.md, "Computation time".
WORK_KEYS = ("visits", "relaxations", "entries", "checks")


def new_work() -> dict[str, int]:
    """A zeroed work counter (``WORK_KEYS``)."""
    return dict.fromkeys(WORK_KEYS, 0)


def record_work(info: dict, *parts: Mapping[str, int]) -> dict:
    """Store the sum of the work counters *parts* as ``info["work"]`` and ``info["work_total"]``; returns *info*."""
    work = new_work()
    for part in parts:
        for k, v in part.items():
            work[k] += int(v)
    info["work"] = work
    info["work_total"] = sum(work.values())
    return info


def search_work(reached: np.ndarray, degree: np.ndarray) -> dict[str, int]:
    """Work of one breadth-first search per column of *reached* (S x D booleans: switch reached for destination).

    A sequential search expands every switch it reaches once (a visit) and
    examines each of its connected ports once (a relaxation); *degree* is
    the number of connected switch ports per switch row.
    """
    reached = np.asarray(reached, dtype=bool)
    per_switch = reached.sum(axis=1) if reached.ndim == 2 else reached
    return {"visits": int(np.count_nonzero(reached)), "relaxations": int(degree @ per_switch)}


def expand_switch_ports(view: SwitchView, to_switch: np.ndarray) -> np.ndarray:
    """LFT from a per-destination-switch table: ``to_switch[x, a]`` is the port switch x uses towards switch a.

    Every LID attached to switch *a* gets column *a*, except at *a* itself,
    which gets the attachment port.  Entries < 0 become NO_PORT.
    """
    lft = np.full((view.S, view.fabric.max_lid + 1), NO_PORT, dtype=np.uint8)
    lids = view.lids()
    if not len(lids):
        return lft
    cols = to_switch[:, view.att_row[lids]]
    lft[:, lids] = np.where(cols >= 0, cols, NO_PORT).astype(np.uint8)
    lft[view.att_row[lids], lids] = view.att_port[lids]
    return lft


# ---------------------------------------------------------------- options


def parse_options(engine: str, options: Mapping[str, Any] | None, spec: Mapping[str, tuple[Any, Callable[[Any], Any]]]) -> dict[str, Any]:
    """Check *options* against *spec* (``name -> (default, converter)``) and convert them.

    Raises ConfigError naming the valid options for an unknown one, or the
    converter's message for a bad value.
    """
    options = dict(options or {})
    unknown = sorted(set(options) - set(spec))
    if unknown:
        valid = ", ".join(sorted(spec)) or "none"
        raise ConfigError(f"unknown option '{unknown[0]}' for routing engine '{engine}'{did_you_mean(unknown[0], spec)}"
                          f" (valid: {valid})")
    out: dict[str, Any] = {}
    for name, (default, convert) in spec.items():
        if name in options:
            try:
                out[name] = convert(options[name])
            except (ValueError, TypeError) as exc:
                raise ConfigError(f"routing engine '{engine}': option '{name}': {exc}") from None
        else:
            out[name] = default
    return out


def choice(*values: str) -> Callable[[Any], str]:
    """A converter accepting one of *values*."""

    def convert(v: Any) -> str:
        s = str(v)
        if s not in values:
            raise ValueError(f"must be one of ({', '.join(values)}) (got {s!r})")
        return s

    return convert


def resolve_switch(fabric: FabricGraph, value: Any, what: str = "root") -> int:
    """Node index of a switch given as a LID (digits) or a node name."""
    text = str(value).strip()
    node = -1
    if text.isdigit():
        if len(text) > 6:  # no LID has more digits (and int() refuses past 4300 of them)
            raise ConfigError(f"{what} '{text[:20]}{'...' if len(text) > 20 else ''}': no endpoint has that LID")
        lid = int(text)
        if 0 < lid <= fabric.max_lid and fabric.lid_owner[lid] >= 0:
            node = int(fabric.ep_node[fabric.lid_owner[lid]])
        else:
            raise ConfigError(f"{what} '{text}': no endpoint has LID {lid}")
    else:
        try:
            node = fabric.index(text)
        except KeyError:
            # module paths of elaborated networks: 'net.sw1' answers to 'sw1'
            hits = [i for i, nd in enumerate(fabric.nodes) if nd.name.endswith("." + text)]
            if len(hits) != 1:
                why = "no node has that name" if not hits else f"{len(hits)} nodes have that name"
                raise ConfigError(f"{what} '{text}': {why}") from None
            node = hits[0]
    if not fabric.is_switch[node]:
        raise ConfigError(f"{what} '{text}' is {fabric.nodes[node].name}, which is not a switch")
    return node


def default_root(fabric: FabricGraph) -> int:
    """The switch nearest the subnet manager's node (breadth-first, ports in increasing order)."""
    if not len(fabric.switches):
        raise ConfigError("the fabric has no switch")
    for node in fabric.bfs_order(fabric.sm_node):
        if fabric.is_switch[node]:
            return int(node)
    return int(fabric.switches[0])  # pragma: no cover - switches exist, bfs_order lists every node
