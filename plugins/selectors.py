"""Path selectors: which of a packet's routing options a switch takes.

A switch with routing options (``optionBits > 0``, see
:mod:`ibfabric.components.options`) builds one selector (``pathSelector``,
options from ``pathSelectorOptions``) and asks it whenever more than one
option could take a packet.  The selector gets the candidates as
``(option, vl, free)`` triples: ``option.index`` is 0 for the escape (or
deterministic) option and > 0 for adaptive ones, ``option.tx`` the output
port's transmitter, ``vl`` the VL the packet would use there and ``free``
the credits that VL has for it (beyond the escape reserve for an adaptive
option).  It returns the position of its choice; :meth:`PathSelector.chosen`
is then told what was taken.

Built in:

``first``
    The lowest option index: escape first (deterministic behaviour).
``random``
    Uniformly at random (Martínez et al. 2003 §4.3, static selection).
``max-credit``
    The most free credits downstream (Kim et al. 2007 §3.4 Max-Credit;
    Martínez §4.3 selection by port status); ties to the lowest index.
``adaptive-first``
    An adaptive option whenever one can take the packet (the most free
    credits among them, ties to the lowest index); the escape option only
    when none can (Duato's methodology as Martínez et al. 2003 §3 gives it:
    a packet "first tries to reserve an adaptive queue.  If all of the
    suitable outgoing adaptive queues are busy, then an escape queue is
    selected").
``lfu``
    Least frequently used (Kim §3.4, after Vaidya et al.): one use counter
    per output VL of the switch, counting the packets this selector sent
    there; the option whose counter is lowest, ties to the lowest index.
``lfu-port``
    Least frequently used output *port*: every packet the port has sent
    counts, of every VL and traffic class, whoever routed it; the option
    whose port has sent the fewest, ties to the lowest index.  The reading
    of Kim §5.1's reason why LFU helps real time and control: "LFU tries to
    select the least frequently used path that other higher priority
    traffic ... does not use" (``lfu`` counts only what it chose itself).
``shortest``
    The fewest switch hops from the option's next node to the destination
    (Kim: real-time traffic takes the shortest path); ties to the lowest index.
"""

from __future__ import annotations

from ibfabric.errors import ConfigError
from ibfabric.plugins.manager import hookimpl

__all__ = ["PathSelector", "First", "RandomSelector", "MaxCredit", "AdaptiveFirst", "LeastFrequentlyUsed",
           "LeastFrequentlyUsedPort", "Shortest"]


class PathSelector:
    """Base class: takes no options, chooses the first candidate."""

    def __init__(self, options: dict[str, str] | None = None, rng=None):
        if options:
            raise ConfigError(f"path selector '{self.name}' takes no options (got {', '.join(options)})")
        self.rng = rng

    name = "first"
    #: the same candidates give the same choice without changing the selector (audits may ask again)
    deterministic = True

    def select(self, packet, cands: list, now: float) -> int:
        """Position in *cands* of the option to take."""
        return 0

    def chosen(self, option, vl: int) -> None:
        """*option* was taken on *vl* (for selectors that keep statistics)."""


class First(PathSelector):
    """``first``: the lowest option index, the escape option first (deterministic)."""
    name = "first"

    def select(self, packet, cands, now):
        best = 0
        for k in range(1, len(cands)):
            if cands[k][0].index < cands[best][0].index:
                best = k
        return best


class RandomSelector(PathSelector):
    """``random``: a candidate drawn uniformly with the selector's Generator."""
    name = "random"
    deterministic = False

    def select(self, packet, cands, now):
        return int(self.rng.integers(len(cands)))


class MaxCredit(PathSelector):
    """``max-credit``: the most free credits downstream; ties to the lowest option index."""
    name = "max-credit"

    def select(self, packet, cands, now):
        best = 0
        for k in range(1, len(cands)):
            f, b = cands[k], cands[best]
            if f[2] > b[2] or (f[2] == b[2] and f[0].index < b[0].index):
                best = k
        return best


class AdaptiveFirst(PathSelector):
    """``adaptive-first``: the adaptive option with the most free credits; the escape option only if no
    adaptive one is a candidate (ties to the lowest option index)."""
    name = "adaptive-first"

    def select(self, packet, cands, now):
        best, best_key = 0, None
        for k, (o, _vl, free) in enumerate(cands):
            key = (not o.adaptive, -free, o.index)
            if best_key is None or key < best_key:
                best, best_key = k, key
        return best


class LeastFrequentlyUsed(PathSelector):
    """``lfu``: the output VL this selector has sent the fewest packets to; ties to the lowest option index."""
    name = "lfu"

    def __init__(self, options=None, rng=None):
        super().__init__(options, rng)
        self.uses: dict[tuple[int, int], int] = {}

    def select(self, packet, cands, now):
        uses = self.uses
        best, best_key = 0, None
        for k, (o, vl, _free) in enumerate(cands):
            key = (uses.get((o.tx.port, vl), 0), o.index)
            if best_key is None or key < best_key:
                best, best_key = k, key
        return best

    def chosen(self, option, vl):
        """Count one more packet sent on *vl* of *option*'s output port."""
        key = (option.tx.port, vl)
        self.uses[key] = self.uses.get(key, 0) + 1


class LeastFrequentlyUsedPort(PathSelector):
    """``lfu-port``: the output port that has sent the fewest packets (all VLs, all traffic); ties to the lowest
    option index."""
    name = "lfu-port"

    def select(self, packet, cands, now):
        best, best_key = 0, None
        for k, (o, _vl, _free) in enumerate(cands):
            key = (o.tx.sent, o.index)
            if best_key is None or key < best_key:
                best, best_key = k, key
        return best


class Shortest(PathSelector):
    """``shortest``: the fewest links from the option's next node to the destination; ties to the lowest option index."""
    name = "shortest"

    def select(self, packet, cands, now):
        best, best_key = 0, None
        for k, (o, _vl, _free) in enumerate(cands):
            key = (hops_after(o.tx, packet.dlid), o.index)
            if best_key is None or key < best_key:
                best, best_key = k, key
        return best


def hops_after(tx, dlid: int) -> float:
    """Links from the node at the other end of *tx* to the owner of *dlid* (inf if unknown)."""
    sim = tx.node.sim
    cache = getattr(sim, "_hops_cache", None)
    if cache is None or cache[0] is not sim.tables:
        fabric = sim.tables.fabric
        pos = {id(n): i for i, n in enumerate(sim.ib_nodes)}
        cache = sim._hops_cache = (sim.tables, fabric, fabric.switch_hops(), fabric.attachments()[0], pos)
    _tables, fabric, hops, att_node, pos = cache
    if dlid >= len(fabric.lid_owner) or fabric.lid_owner[dlid] < 0:
        return float("inf")
    e = int(fabric.lid_owner[dlid])
    peer = pos[id(tx.peer_rx.node)]
    if not fabric.is_switch[peer]:
        return 0.0 if int(fabric.ep_node[e]) == peer else float("inf")
    dst_sw = int(att_node[e])
    h = int(hops[fabric.switch_row[peer], fabric.switch_row[dst_sw]]) if dst_sw >= 0 else -1
    return float("inf") if h < 0 else h + (0.0 if fabric.is_switch[int(fabric.ep_node[e])] else 1.0)


@hookimpl
def ibfabric_register_path_selectors(register) -> None:
    register("first", First, description="lowest option index: the escape option first")
    register("random", RandomSelector, description="uniformly at random among the options that can take the packet")
    register("max-credit", MaxCredit, description="most free credits downstream (Kim's Max-Credit, Martinez's status)")
    register("adaptive-first", AdaptiveFirst,
             description="an adaptive option whenever one can take the packet (most free credits), else the escape")
    register("lfu", LeastFrequentlyUsed, description="least frequently used output VL (one counter per VL, Kim)")
    register("lfu-port", LeastFrequentlyUsedPort,
             description="the output port that has sent the fewest packets, all VLs and traffic (Kim's reason for LFU)")
    register("shortest", Shortest, description="fewest hops to the destination")
