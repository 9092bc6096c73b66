"""A switch output port that is not Active (IBA PortInfo.PortState; :mod:`ibfabric.components.failures`).

The port's state is an attribute (``tx.state``); leaving Active its
wake-up is bound to :meth:`InactiveSide._step_inactive` (:meth:`SwitchTx.bind
<ibfabric.components.switch.tx.SwitchTx.bind>`), so live packets never test
it.  What a port that is not Active does:

- a **Down** port discards every packet committed to it that reaches its
  read point, once its routing is done (``ready_at``), with reason
  ``port-down``, returning its credits upstream as a packet that left
  would; an **Init** or **Armed** one does the same with data packets and
  sends VL15 ones;
- a packet with routing options that this port is one of stays offered to
  the other options while one of them is Active (this port just stops
  offering itself), and is discarded here once none is;
- leaving Active, the port discards what waits in its output VL buffers
  (``port-down``) and the replication engine drops the copies it still
  owed the port (:meth:`~ibfabric.plugins.replication.ReplicationEngine.port_left`);
  multicast heads made while it is down leave it out.

Nothing is ever blocked by a port that is not Active, so the deadlock
watchdog never sees one.
"""

from __future__ import annotations

from ..port import INF
from ..portstate import PORT_DOWN, PortState

__all__ = ["InactiveSide"]

DOWN, ACTIVE = PortState.DOWN, PortState.ACTIVE


class InactiveSide:
    """What :class:`~.tx.SwitchTx` does while it is not Active (see the module docstring)."""

    __slots__ = ()

    def left_state(self, old: PortState, now: float) -> None:
        """Leaving Active: discard the output buffers, drop the copies owed to the port."""
        if old == ACTIVE:
            self.flush_output(now, PORT_DOWN)
            if self.engine is not None:
                self.engine.port_left(self, now)
                self.mq.clear()
                if self.mfifo:
                    self.mfifo.clear()
                self.owner = None

    def _step_inactive(self, now: float) -> float:
        vl15_ok = self.state != DOWN
        nxt = self._discard_ready(now, not vl15_ok)
        if vl15_ok and self.mcands:
            link_free = self.busy_until if self.obuf is None else self.link_free
            if now < link_free:
                t = link_free
            else:
                end, t = self._try_vl15(now)
                if end is not None:
                    t = end
                    if self.obuf is None:
                        self.busy_until = end
                    else:
                        self.link_free = end
            if t < nxt:
                nxt = t
        return nxt

    def _discard_ready(self, now: float, vl15_too: bool) -> float:
        """Discard the candidates committed to this port whose routing is done (and stop offering this
        port to packets with other Active options); return when the next one will be ready."""
        lists = list(self.cands) + ([self.mcands] if vl15_too else [])
        again = True
        nxt = INF
        while again:  # a discarded head's successor may be routed here too, to a list already seen
            again = False
            nxt = INF
            for lst in lists:
                i = 0
                while i < len(lst):
                    c = lst[i]
                    p = c.q[0]
                    op = p.out_port
                    if op is not self and op.active(p):
                        del lst[i]  # an options packet that an Active option can take
                        continue
                    t = p.ready_at
                    xf = c.rx.xbar_free  # the time its port was told to look (as for a crossing)
                    if xf > t:
                        t = xf
                    if t <= now:
                        if op is self:
                            del lst[i]
                        else:
                            op.unregister(c)
                        c.discard(now, PORT_DOWN)
                        again = True
                    else:
                        if t < nxt:
                            nxt = t
                        i += 1
        return nxt

    def inactive_sendable(self, now: float) -> bool:
        """Whether the port would do something now (no side effects; the audits)."""
        for lst in self.cands:
            if any(max(c.q[0].ready_at, c.rx.xbar_free) <= now for c in lst):
                return True  # a head to discard
        if self.mcands:
            ready = any(max(c.q[0].ready_at, c.rx.xbar_free) <= now for c in self.mcands)
            link_free = self.busy_until if self.obuf is None else self.link_free
            return ready if self.state == DOWN else ready and link_free <= now
        return False
