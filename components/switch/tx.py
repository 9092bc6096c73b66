"""The output port of a switch: crossbar choice, VL arbitration and the output side (DESIGN §3).

Every switch output port is a :class:`SwitchTx`, whatever the switch's
stages; :meth:`SwitchTx.bind` binds, from the switch's plan and the port's
state, the few methods a wake-up runs, so that the per-packet path of a
plain switch runs no test for a feature it does not use:

``step(now)``
    What a wake-up does; returns when to look again (``inf``: when poked).
    By output side: straight to the link (:meth:`SwitchTx._step_direct`),
    or through output VL buffers (:meth:`~.outbuf.OutputBuffers._step_buffered`);
    a port that is not Active steps as :mod:`ibfabric.components.failures`
    says; a lifetime watcher wraps it (:mod:`~ibfabric.components.switch.lifetimes`).
``launch(p, vl, now, end)``
    :meth:`TxPort.launch <ibfabric.components.port.TxPort.launch>`; congestion control's FECN marker
    wraps it (:mod:`ibfabric.components.cc.marking`).
``try_send(now)`` (straight to the link) / ``transfer(now)`` (output buffers)
    The crossbar: the first candidate of each output VL that may cross now
    (``pick``), then, straight to the link, the VL arbiter's choice among
    them; with output buffers, one transfer into its VL's buffer, VLs served
    in turn.  Weighted round robin among the inputs (:mod:`~ibfabric.components.switch.crossbar`) and
    the replication engine (:mod:`~ibfabric.components.switch.multicast`) wrap it.
``pick(vl, now)``
    The first candidate of output VL *vl*, in the crossbar's order, that may
    cross now -- its packet ready, its input's crossbar connection free --
    and fits the room of the output side (``room[vl]``: the credits of the
    downstream buffer, or the free credits of the output VL buffer):
    ``(read point, None)``, or ``(None, when to look again)``.  A packet that
    does not fit does not hold back a smaller one from another input behind
    it.  Routing options at arbitration time bring their own
    (:mod:`~ibfabric.components.switch.options`).
``send(c, p, vl, now)``
    *p*, at read point *c*, crosses and goes on the link on VL *vl*.
``next_transfer(after)`` (output buffers)
    When a candidate could next cross into its output buffer (routing
    options bring their own: a packet may wait for credits downstream).

What the other stages and the replication engines use of an output port,
whatever its side: ``cands`` (per output VL, the read points offered to
it, in the crossbar's order), ``mcands`` (VL15), ``poke(t)``,
``room``/``has_room(vl, need, now)``/``room_time(vl, need, after)``,
``accept(p, vl, now, xend)`` (a packet or copy that crosses into the port:
onto the link, or into its output VL buffer; returns when the port's
crossbar output is free again), ``free_at()`` (when the next crossing may
start), ``downstream_free(vl, now)`` (credits the next buffer will have
for a packet crossing now) and ``state``.
"""

from __future__ import annotations

from ..packet import VL15
from ..port import INF, SEVERAL, TxPort
from ..portstate import PortState
from .inactive import InactiveSide
from .outbuf import OutputBuffers

__all__ = ["SwitchTx"]

ACTIVE = PortState.ACTIVE
#: the methods bind() may put in a port's dictionary
_BOUND = ("step", "try_send", "pick", "send", "after_send", "transfer", "next_transfer", "accept", "room_time")


class SwitchTx(OutputBuffers, InactiveSide, TxPort):
    """A switch output port (see the module docstring for its bound methods)."""

    # slots, as TxPort's: on a large fabric an instance dictionary is two more cold objects per look
    # (the methods a wake-up runs -- step, try_send, pick, send, after_send, transfer, accept, room_time -- are
    # the class's for a plain port, which then carries no bound-method object: on a large fabric each
    # would be a cold cache line per look; bind() puts the others in the instance's dictionary)
    __slots__ = (
        "room", "chosen",
        "plan", "engine", "mq", "mfifo", "owner", "mprio", "escape_reserve", "xweights", "xptr", "xused",
        "obuf", "ocap", "ofree", "oqueued", "osince", "on_link", "xfree", "rr", "link_free",  # (OutputBuffers')
        "oreserve",  # (last: read on the routing-options path only; the slots before it keep their places)
    )

    def __init__(self, node, port: int, link, nvl: int, arbiter, env, plan):
        super().__init__(node, port, link, nvl, arbiter, env)
        self.plan = plan
        self.chosen: list = [None] * nvl
        #: credits of the next buffer kept for escape-option packets (routing options; 0 without)
        self.escape_reserve = 0
        #: credits of this port's output VL buffers that a packet crossing on an adaptive option may not fill
        self.oreserve = plan.out_reserve
        #: the replication engine, once the switch has multicast entries (:mod:`~ibfabric.components.switch.multicast`)
        self.engine = None
        self.mq: list = []
        self.mfifo = None
        self.owner = None
        #: multicast copies go before unicast packets, outside the VL arbiter (Kim et al. §5.2); False: a
        #: bandwidth policy puts them on VLs of their own, in VL arbitration (:mod:`ibfabric.components.qos.mcastbw`)
        self.mprio = True
        self.init_output(plan.out_credits)
        if plan.wrr:
            from .crossbar import init_wrr

            init_wrr(self, plan.weights)
        self.bind()

    # ------------------------------------------------------------ binding

    def bind(self) -> None:
        """Bind the methods a wake-up runs from the switch's plan and the port's state (module docstring).

        A plain port -- Active, straight to the link, no routing options, FIFO crossbar order, no multicast
        stage, no watcher -- runs the class's own methods; every other choice is bound to the instance."""
        for name in self.bound:  # only what an earlier bind() put there (see TxPort.bound)
            delattr(self, name)
        plan = self.plan
        buffered = self.obuf is not None
        self.room = self.ofree if buffered else self.credits
        if buffered:
            self.step = self._step_buffered
            self.send = self._send_buffered
            self.accept = self._accept_buffered
            self.room_time = self._obuf_room_time
            next_transfer, self.wants = plan.buffered_for(self)
            if plan.options:  # (else the class's own)
                self.next_transfer = next_transfer
        if plan.options:
            self.pick = plan.pick_for(self)
            if not buffered:
                self.after_send = self._after_any
        if plan.wrr:
            from .crossbar import wrap_wrr

            wrap_wrr(self)
        if self.engine is not None:
            from .multicast import wrap_multicast

            wrap_multicast(self)
        if self.state != ACTIVE:
            self.step = self._step_inactive
        for watcher in plan.watchers:  # (Plan.add_watcher)
            watcher.wrap(self)
        self.bound = tuple(name for name in _BOUND if self.is_bound(name))

    # ------------------------------------------------------------ straight to the link

    def _step_direct(self, now: float) -> float:
        """A wake-up of a port straight to the link: send what may go now; when to look again."""
        if now < self.busy_until:
            return self.busy_until  # a wake-up that an early one overtook: the link is still sending
        end = self.try_send(now)
        if end is not None:
            self.busy_until = end
            return self.after_send(end)
        return self.next_t

    def _pick(self, vl: int, now: float):
        """The first candidate of VL *vl* that may cross now and fits the room downstream, or ``(None, when
        to look again)``; a packet that does not fit does not hold back a smaller one behind it."""
        room = self.room[vl]
        nxt = INF
        need = 0
        for c in self.cands[vl]:
            p = c.q[0]
            t = p.ready_at
            xf = c.rx.xbar_free
            if xf > t:
                t = xf
            if t <= now:
                if p.credits <= room:
                    return c, nxt
                if need == 0 or p.credits < need:
                    need = p.credits
            elif t < nxt:
                nxt = t
        if need:
            t = self.room_time(vl, need, now)
            if t < nxt:
                nxt = t
        return None, nxt

    def try_send(self, now: float):
        """VL15 first, then the data VL the arbiter picks among those whose candidate may cross now
        (with one data VL and an arbiter that would always choose it: no VL arbitration)."""
        if not self.single:
            return self._try_vls(now)
        nxt = INF
        if self.mcands:
            end, nxt = self._try_vl15(now)
            if end is not None:
                return end
        c0 = self.cands[0]
        if not c0:
            self.next_t = nxt
            return None
        rq = self.returns[0]
        if rq and rq[0] <= now:
            self.absorb(0, now)
        c, t = self.pick(0, now)
        if c is None:
            self.next_t = t if t < nxt else nxt
            return None
        c0.remove(c)
        return self.send(c, c.q[0], 0, now)

    def _try_vls(self, now: float):
        """:meth:`try_send` with VL arbitration."""
        nxt = INF
        if self.mcands:
            end, nxt = self._try_vl15(now)
            if end is not None:
                return end
        ready = self.ready
        chosen = self.chosen
        returns = self.returns
        cands = self.cands
        pick = self.pick
        one = -1  # the VL ready if it is the only one, SEVERAL if more are
        for vl in range(self.nvl):
            if not cands[vl]:
                ready[vl] = None
                continue
            rq = returns[vl]
            if rq and rq[0] <= now:
                self.absorb(vl, now)
            c, t = pick(vl, now)
            if c is None:
                ready[vl] = None
                if t < nxt:
                    nxt = t
                continue
            ready[vl] = c.q[0]
            chosen[vl] = c
            one = vl if one < 0 else SEVERAL
        if one < 0:
            self.next_t = nxt
            return None
        vl = self.pick_one(ready, one) if one != SEVERAL else self.arbiter.select(ready)
        c = chosen[vl]
        cands[vl].remove(c)
        return self.send(c, c.q[0], vl, now)

    def _send(self, c, p, vl: int, now: float) -> float:
        """*p*, at read point *c*, crosses and goes on the link on VL *vl*; the end of its transmission."""
        xend = c.take(p, now)
        end = now + p.size * self.byte_time
        if xend > end:
            end = xend  # the link cannot send bytes before the crossbar (or the input link) delivers them
        self.launch(p, vl, now, end)
        return end

    def after_send(self, end: float) -> float:
        """When to look again after a transmission that ends at *end*: with one VL and the plain crossbar,
        the first moment one of the candidates could go, never later (a poke cannot bring that forward);
        else at once if anything waits."""
        if self.mcands or not self.single:
            return end if self.mcands or any(self.cands) else INF
        c = self.cands[0]
        if not c:
            return INF
        t_el = INF
        need = 1 << 30
        for buf in c:
            p = buf.q[0]
            t = p.ready_at
            xf = buf.rx.xbar_free
            if xf > t:
                t = xf
            if t < t_el:
                t_el = t
            if p.credits < need:
                need = p.credits
        t = self.credit_time(0, need, end)
        if t_el > t:
            t = t_el
        return t if t > end else end

    def _after_any(self, end: float) -> float:
        return end if self.mcands or any(self.cands) else INF

    def _accept_direct(self, p, vl: int, now: float, xend: float) -> float:
        """Put *p*, whose crossing ends at *xend*, on the link on VL *vl* (a replication engine's copy);
        the end of its transmission."""
        end = now + p.size * self.byte_time
        if xend > end:
            end = xend
        self.launch(p, vl, now, end)
        self.busy_until = end
        return end

    # the plain port's methods (bind() binds others to the instance)
    step = _step_direct
    pick = _pick
    send = _send
    accept = _accept_direct

    room_time = TxPort.credit_time
    transfer = OutputBuffers._transfer
    next_transfer = OutputBuffers._next_transfer

    # ------------------------------------------------------------ VL15

    def _try_vl15(self, now: float):
        """Send a ready VL15 packet straight onto the link: ``(end or None, next time one is ready)``."""
        nxt = INF
        for c in self.mcands:
            p = c.q[0]
            t = p.ready_at
            xf = c.rx.xbar_free
            if xf > t:
                t = xf
            if t <= now:
                self.mcands.remove(c)
                xend = c.take(p, now)
                end = now + p.size * self.byte_time
                if xend > end:
                    end = xend
                self.launch(p, VL15, now, end)
                return end, nxt
            if t < nxt:
                nxt = t
        return None, nxt

    # ------------------------------------------------------------ what the other stages ask

    def has_room(self, vl: int, need: int, now: float) -> bool:
        """Whether *need* credits of room are there on VL *vl* at *now* (taking in the credits returned)."""
        if self.obuf is None:
            rq = self.returns[vl]
            if rq and rq[0] <= now:
                self.absorb(vl, now)
            return need <= self.credits[vl]
        self._leave(now)
        return need <= self.ofree[vl]

    def free_at(self) -> float:
        """When the next crossing into this port may start (its link, or its crossbar output, is free)."""
        return self.busy_until if self.obuf is None else self.xfree

    def downstream_free(self, vl: int, now: float) -> int:
        """Credits the next buffer will have for a packet crossing into this port at *now* (beyond what
        is queued before it in the output buffer)."""
        free = self.credits_at(vl, now)
        if self.obuf is not None:
            free -= self.oqueued[vl]
        return free

    def cut(self, now: float) -> None:
        """The transmission in progress stops at *now* (its link failed)."""
        super().cut(now)
        if self.obuf is not None and self.link_free > now:
            self.link_free = now

    def room_at(self, vl: int, now: float) -> int:
        """The room for a crossing on VL *vl* at *now* (no side effects): credits downstream, counting the
        returns arrived by then, or the free credits of the output VL buffer."""
        if self.obuf is None:
            return self.credits_at(vl, now)
        return self.ofree[vl] + self.freed_by(vl, now)

    def ways(self, p) -> list[tuple]:
        """``[(self, vl, credits needed)]``: where the packet *p*, committed to this port, may go (the
        deadlock finder asks route targets this); an adaptive option's packet needs the escape reserve
        downstream too (with output buffers: the output buffer's own reserve, ``oreserve``)."""
        vl = p.out_vl
        if vl >= self.nvl:
            return []
        return [(self, vl, p.credits + (self.room_reserve() if p.opt > 0 else 0))]

    def room_reserve(self) -> int:
        """Credits of ``room`` a packet on an adaptive option must leave free: the next buffer's escape part
        straight to the link, the output buffer's own (``oreserve``) with output buffers."""
        return self.escape_reserve if self.obuf is None else self.oreserve

    def has_work(self) -> bool:
        """Whether anything waits for this port (without which it sleeps until poked)."""
        return bool(self.mcands or self.mq or self.mfifo) or any(self.cands) or self.held_packets() > 0

    def sendable(self, now: float) -> bool:
        """Whether a packet could start now if the link were free (no side effects; the port audits)."""
        if self.state != ACTIVE:
            return self.inactive_sendable(now)
        if self.engine is not None and (self.obuf is None or self.xfree <= now):
            can, hold = self.engine.sendable(self, now)
            if can:
                return True
            if hold:
                return self.obuf is not None and self.link_sendable(now)
        link_free = self.busy_until if self.obuf is None else self.link_free
        for c in self.mcands:
            if max(c.q[0].ready_at, c.rx.xbar_free) <= now and link_free <= now:
                return True
        if self.obuf is not None:
            return self.link_sendable(now) or (self.xfree <= now and self.plan.sendable(self, now))
        return self.plan.sendable(self, now)

    def cand_sendable(self, vl: int, now: float) -> bool:
        """Whether a candidate of VL *vl* could cross now and fit (the plain crossbar; no side effects)."""
        room = self.room_at(vl, now)
        for c in self.cands[vl]:
            p = c.q[0]
            if max(p.ready_at, c.rx.xbar_free) <= now and p.credits <= room:
                return True
        return False
