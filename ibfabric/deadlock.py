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

    A head packet with routing options waits for *every* option's buffer
    (it could take whichever drains first); the deadlocked set is the
    largest set of blocked buffers each of which waits only on members,
    and the cycle reported runs inside it.  Multicast heads and the
    buffers of replication engines (extra and central buffers) wait as
    their engine says (``waits``/``nodes``, :mod:`ibfabric.plugins.replication`):
    on any of their outputs' buffers (asynchronous, central buffer), or, in
    lock step, while any of them is blocked (synchronous).

    Edges: an input buffer whose head packet is ready waits for the
    output buffer it goes to when that is full with no space on its way
    back, or for the next switch's input buffer when the packet lacks
    credits and none are on their way back; an output buffer's head waits
    likewise for credits.
    """
    from ibfabric.components.switch import SwitchRx

    now = sim.now
    nxt: dict[object, object] = {}
    names: dict[object, str] = {}
    needs_all: set = set()  # nodes blocked while any of their waits is (synchronous multicast: lock step)

    def credit_starved(op, vl, p, need) -> bool:
        rq = op.returns[vl]  # flat: [time, credits, ...] in time order
        avail = op.credits[vl] + pending_returns(rq, now)
        return avail < need and not (rq and rq[-2] > now)

    def starved(op, vl, need):
        """The downstream input buffer that port *op* waits on for *need* credits of VL *vl*, or None."""
        if isinstance(op.peer_rx, SwitchRx) and credit_starved(op, vl, None, need):
            return ("in", id(op.peer_rx.bufs[vl]))
        return None

    for node in sim.ib_nodes:
        if not node.is_switch:
            continue
        for tx in node.tx.values():
            obuf = getattr(tx, "obuf", None)
            if obuf is None:
                continue
            for vl, ob in enumerate(obuf):
                if ob and isinstance(tx.peer_rx, SwitchRx) and credit_starved(tx, vl, ob[0], ob[0].credits):
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
        for rx in node.rx.values():
            for buf in rx.bufs:
                if not buf.q or buf.hq_expire < INF:  # a head that will expire frees the buffer
                    continue
                if getattr(buf.q[0].out_port, "mcast", False):  # a multicast head: its engine says
                    h = eng.heads.get(buf)
                    waits, all_ = eng.waits(h, now, starved) if h is not None else (None, False)
                    if waits:
                        key = ("in", id(buf))
                        names[key] = buf.name
                        nxt[key] = waits
                        if all_:
                            needs_all.add(key)
                    continue
                if hasattr(buf, "voqs"):  # virtual output queues: the buffer drains if any queue's head can move
                    reads = buf.heads()
                else:
                    reads = [buf.q[0]] if buf.escape is None else [buf.q[0], buf.escape.q[0]]
                waits: list = []
                for p in reads:
                    w = _waits_of(p, now, credit_starved)
                    if w is None:
                        waits = None
                        break
                    waits += w
                if waits:
                    key = ("in", id(buf))
                    names[key] = buf.name
                    nxt[key] = waits
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


def _waits_of(p, now: float, credit_starved) -> list | None:
    """What the packet *p*, at a read point of an input buffer, waits for: the buffers it needs
    space in (any one of them would do), or None if it is not blocked."""
    from ibfabric.components.switch import SwitchRx

    if p.ready_at > now:
        return None
    op, ovl = p.out_port, p.out_vl
    if getattr(op, "state", ACTIVE) != ACTIVE:  # a port not Active discards its heads: nothing waits for it
        return None
    if hasattr(op, "options"):  # routing options: blocked only if every option lacks credits
        waits = []
        for o in op.options:
            vl = o.sl2vl[p.sl]
            if vl >= o.tx.nvl:
                continue
            need = p.credits + (o.tx.escape_reserve if o.adaptive else 0)
            if not (isinstance(o.tx.peer_rx, SwitchRx) and credit_starved(o.tx, vl, p, need)):
                return None
            waits.append(("in", id(o.tx.peer_rx.bufs[vl])))
        return waits or None
    if ovl >= op.nvl:
        return None
    obuf = getattr(op, "obuf", None)
    if obuf is not None:
        used = op.obytes[ovl] - op.freed_by(ovl, now)
        leaving = op.on_link is not None and op.on_link[1] == ovl and op.on_link[0] > now
        return [("out", id(op), ovl)] if used + p.size > op.ocap and not leaving else None
    need = p.credits + (op.escape_reserve if p.opt > 0 else 0)
    if isinstance(op.peer_rx, SwitchRx) and credit_starved(op, ovl, p, need):
        return [("in", id(op.peer_rx.bufs[ovl]))]
    return None
