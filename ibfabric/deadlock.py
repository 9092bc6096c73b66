"""Deadlock detection: a cycle of full buffers, each waiting for the next to drain.

The :class:`Watchdog` looks every ``deadlock_interval`` of simulated time
(``Simulation(deadlock_interval=...)``) and raises
:class:`~ibfabric.errors.DeadlockError` with the cycle it found.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import salabim

from ibfabric.errors import DeadlockError

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
        while True:
            yield self.hold(self.interval)
            self.events += 1
            cycle = find_deadlock(self.sim)
            if cycle:
                raise DeadlockError(
                    f"at {self.env._now:.0f} ns: " + " -> ".join(cycle) + " -> " + cycle[0], cycle, self.env._now
                )

def find_deadlock(sim: "Simulation") -> list[str] | None:
    """A cycle of buffers, each full and waiting for the next to drain, or None.

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

    def credit_starved(op, vl, p) -> bool:
        rq = op.returns[vl]
        avail = op.credits[vl] + sum(c for t, c in rq if t <= now)
        return avail < p.credits and not any(t > now for t, _ in rq)

    for node in sim.ib_nodes:
        if not node.is_switch:
            continue
        for tx in node.tx.values():
            obuf = getattr(tx, "obuf", None)
            if obuf is None:
                continue
            for vl, ob in enumerate(obuf):
                if ob and isinstance(tx.peer_rx, SwitchRx) and credit_starved(tx, vl, ob[0]):
                    key = ("out", id(tx), vl)
                    nxt[key] = ("in", id(tx.peer_rx.bufs[vl]))
                    names[key] = f"{tx.name_} out VL{vl}"
        for rx in node.rx.values():
            for buf in rx.bufs:
                if not buf.q:
                    continue
                p = buf.q[0]
                if p.ready_at > now:
                    continue
                op, ovl = p.out_port, p.out_vl
                if ovl >= op.nvl:
                    continue
                key = ("in", id(buf))
                names[key] = buf.name
                obuf = getattr(op, "obuf", None)
                if obuf is not None:
                    used = op.obytes[ovl] - op.freed_by(ovl, now)
                    leaving = op.on_link is not None and op.on_link[1] == ovl and op.on_link[0] > now
                    if used + p.size > op.ocap and not leaving:
                        nxt[key] = ("out", id(op), ovl)
                elif isinstance(op.peer_rx, SwitchRx) and credit_starved(op, ovl, p):
                    nxt[key] = ("in", id(op.peer_rx.bufs[ovl]))
    for start in list(nxt):
        seen: list = []
        pos: dict = {}
        cur = start
        while cur in nxt and cur not in pos:
            pos[cur] = len(seen)
            seen.append(cur)
            cur = nxt[cur]
        if cur in pos:
            return [names[k] for k in seen[pos[cur]:]]
        for k in seen:
            nxt.pop(k, None)
    return None
