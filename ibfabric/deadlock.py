"""Deadlock detection: a cycle of full buffers, each waiting for the next to drain.

The :class:`Watchdog` looks every ``deadlock_interval`` of simulated time
(``Simulation(deadlock_interval=...)``) and raises
:class:`~ibfabric.errors.DeadlockError` with the cycle it found.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import salabim

from ibfabric.components.port import pending_returns
from ibfabric.components.portstate import PortState
from ibfabric.errors import DeadlockError

INF = float("inf")
ACTIVE = PortState.ACTIVE

if TYPE_CHECKING:  # pragma: no cover
    from ibfabric.simulation import Simulation

__all__ = ["Watchdog", "find_deadlock"]


class Watchdog(salabim.Component):
    """Looks for a cycle of credit-starved buffers every ``interval`` ns."""

    def __init__(self, sim: "Simulation", interval: float):
        self.sim = sim
        self.interval = interval
        self.events = 0
        super().__init__(env=sim.env, name="ibfabric.watchdog")

    def process(self):
        """The salabim process: every ``interval`` ns, count a look and run :func:`find_deadlock`.

        Raises
        ------
        ~ibfabric.errors.DeadlockError
            When a cycle is found; its message is the time and the cycle,
            ``at T ns: a -> b -> ... -> a``.
        """
        while True:
            yield self.hold(self.interval)
            self.events += 1
            cycle = find_deadlock(self.sim)
            if cycle:
                raise DeadlockError(
                    f"at {self.env.now():.0f} ns: " + " -> ".join(cycle) + " -> " + cycle[0], cycle, self.env.now()
                )

def find_deadlock(sim: "Simulation") -> list[str] | None:
    """A cycle of buffers, each full and waiting for the next to drain, or None.

    It asks the stages (DESIGN §3): each input buffer organisation for its
    read points (a buffer is blocked when the packet at every one of them
    is), each output port for what a packet crossing into it waits for
    (the next switch's input buffer when it lacks credits with none on
    their way back, or its own output VL buffer when that is full with
    nothing leaving), and the replication engines for their heads and
    buffers.  A head packet with routing options waits for *every* option
    (it could take whichever drains first); a head that a lifetime will
    discard waits for nothing; multicast heads and the engines' buffers
    (extra and central buffers) wait as their engine says (``waits``/
    ``nodes``, :mod:`ibfabric.plugins.replication`): on any of their
    outputs (asynchronous, central buffer), or, in lock step, while any of
    them is blocked (synchronous).  The deadlocked set is the largest set
    of blocked buffers each of which waits only on members, and the cycle
    reported runs inside it.
    """
    from ibfabric.components.switch import SwitchRx

    now = sim.now
    nxt: dict[object, object] = {}
    names: dict[object, str] = {}
    needs_all: set = set()  # nodes blocked while any of their waits is (synchronous multicast: lock step)

    def credit_starved(tx, vl, need) -> bool:
        rq = tx.returns[vl]  # flat: [time, credits, ...] in time order
        avail = tx.credits[vl] + pending_returns(rq, now)
        return avail < need and not (rq and rq[-2] > now)

    def starved(tx, vl, need):
        """What a packet needing *need* credits to cross into port *tx* on VL *vl* waits for, or None."""
        if tx.state != ACTIVE:  # a port not Active discards what is routed to it: nothing waits for it
            return None
        if tx.obuf is not None:
            gone = tx.on_link
            leaving = gone is not None and gone[1] == vl
            if leaving or tx.ofree[vl] >= need:
                return None
            return ("out", id(tx), vl)
        if isinstance(tx.peer_rx, SwitchRx) and credit_starved(tx, vl, need):
            return ("in", id(tx.peer_rx.bufs[vl]))
        return None

    for node in sim.ib_nodes:
        if not node.is_switch:
            continue
        for tx in node.tx.values():
            if tx.obuf is None or not isinstance(tx.peer_rx, SwitchRx):
                continue
            for vl, q in enumerate(tx.obuf):
                if q and credit_starved(tx, vl, q[0].credits):
                    key = ("out", id(tx), vl)
                    nxt[key] = [("in", id(tx.peer_rx.bufs[vl]))]
                    names[key] = f"{tx.name_} out VL{vl}"
        eng = node.replicator
        if eng is not None and not eng.source_copies:  # multicast: the engine's own buffers
            for key, name, waits, all_ in eng.nodes(now, starved):
                nxt[key] = waits
                names[key] = name
                if all_:
                    needs_all.add(key)
        watcher = node.plan.lifetimes
        for rx in node.rx.values():
            for buf in rx.bufs:
                reads = buf.reads()
                if not reads:
                    continue
                waits: list | None = []
                all_ = False
                for c in reads:
                    if watcher is not None and watcher.frees(c):
                        waits = None  # a head that will expire frees the buffer
                        break
                    p = c.q[0]
                    if getattr(p.out_port, "mcast", False):  # a multicast head: its engine says
                        h = eng.heads.get(c)
                        w, a = eng.waits(h, now, starved) if h is not None else (None, False)
                        all_ = all_ or a
                    else:
                        w = _waits_of(p, now, starved)
                    if w is None:
                        waits = None
                        break
                    waits += w
                if waits:
                    key = ("in", id(buf))
                    names[key] = buf.name
                    nxt[key] = waits
                    if all_:
                        needs_all.add(key)
    # the deadlocked set: blocked buffers all of whose ways out lead to blocked buffers (greatest fixed point)
    blocked = set(nxt)
    changed = True
    while changed:
        changed = False
        for k in list(blocked):
            free = (w not in blocked for w in nxt[k])
            if all(free) if k in needs_all else any(free):
                blocked.discard(k)
                changed = True
    if not blocked:
        return None
    # report one cycle inside it (every member has a way on inside the set)
    cur = min(blocked, key=lambda k: names[k])
    seen: list = []
    pos: dict = {}
    while cur not in pos:
        pos[cur] = len(seen)
        seen.append(cur)
        cur = min((w for w in nxt[cur] if w in blocked), key=lambda k: names[k])
    return [names[k] for k in seen[pos[cur]:]]


def _waits_of(p, now: float, starved) -> list | None:
    """What the packet *p*, at a read point of an input buffer, waits for: the buffers it needs space in
    (any one of them would do: a packet with routing options waits for every option), or None if it is
    not blocked."""
    if p.ready_at > now:
        return None
    waits = []
    for tx, vl, need in p.out_port.ways(p):
        w = starved(tx, vl, need)
        if w is None:
            return None
        waits.append(w)
    return waits or None
