"""The data path's port machinery: VL buffers, credits and transmitters.

Cost model (DESIGN §5): one event source per *transmitting port*, never
per packet; its wake-ups go on the data path's own event list, run in
salabim's order beside salabim's (:mod:`.eventloop`).  A transmitter runs
one event per packet it sends (the wake-up at which it picks the packet)
and sleeps otherwise:

- **idle** (passive) when it has nothing that could become sendable by
  itself; whoever makes a packet sendable *pokes* it with the time that
  packet becomes eligible;
- **waiting** (scheduled) until a known time: the end of the current
  transmission, the moment a candidate's routing is done, the arrival of
  returned credits, or its source's next packet.  A poke for an earlier
  time is served by an early wake-up instead of moving the port's own
  (which would mean finding its entry in the heap), and
  the design keeps such pokes rare: deliveries carry future timestamps
  (``head_at``, ``ready_at``, credit-return times) instead of extra events.

A packet is handed to the next input buffer the moment its first bit leaves
(with ``head_at``/``tail_at`` set to when its first and last bits arrive),
which is exact for credit-based virtual cut-through: the sender already owns
the buffer space, and the receiver cannot forward the packet before
``ready_at``.
"""

from __future__ import annotations

import math
from collections import deque
from typing import TYPE_CHECKING

from .eventloop import EARLY
from .packet import VL15
from .portstate import PortState

if TYPE_CHECKING:  # pragma: no cover
    from .link import Link
    from .packet import Packet

__all__ = ["TxPort", "return_credits", "insert_return", "pending_returns", "one_ready", "SEVERAL", "INF"]

INF = math.inf
#: What :meth:`TxPort.ready_heads` (and the switch's own look) returns when more than one VL is ready.
SEVERAL = 1 << 8


def one_ready(arbiter):
    """``pick_one(ready, vl)``: the arbiter's choice when VL *vl* alone is ready.

    Its class's ``select_one`` if it has one (the built-ins: a table look-up
    instead of a walk); else its ``select(ready)``.  A third-party arbiter
    wrapped in :class:`~ibfabric.plugins.arbiters.CheckedArbiter` always goes
    through its checked ``select``.
    """
    if getattr(type(arbiter), "select_one", None) is not None:
        return arbiter.select_one
    return lambda ready, vl: arbiter.select(ready)


def return_credits(up: "TxPort", vl: int, time: float, credits: int) -> None:
    """Schedule *credits* of VL *vl* to reach transmitter *up* at *time*.

    Returns reach a transmitter in time order per VL except for packets a
    switch consumes itself, which are inserted in order.
    """
    rq = up.returns[vl]
    if rq and rq[-2] > time:
        insert_return(rq, time, credits)
    else:
        rq.append(time)
        rq.append(credits)
    if up.wants[vl]:
        up.poke(time)


def insert_return(rq: list, time: float, credits: int) -> None:
    """Put the return (*time*, *credits*) into the flat list *rq* of one VL's returns
    (``[time, credits, time, credits, ...]``), keeping it in time order: after every
    return with an earlier time, before every later one (where times are equal, the
    place among them does not change when or how many credits arrive)."""
    i = len(rq)
    while i and (rq[i - 2] > time or (rq[i - 2] == time and rq[i - 1] > credits)):
        i -= 2
    rq[i:i] = (time, credits)


def pending_returns(rq: list, by: float = INF) -> int:
    """The credits in the flat list *rq* of one VL's returns that arrive by time *by* (all by default)."""
    return sum(rq[i + 1] for i in range(0, len(rq), 2) if rq[i] <= by)


class TxPort:
    """The transmitter of one port.

    Subclasses implement :meth:`try_send` (pick and launch one packet, or
    say when to look again) and :meth:`has_work`.

    Attributes
    ----------
    node : the IB node module (Switch or HCA)
    port : int
    link : Link
    nvl : int
        Operational data VLs on the link (the smaller count of both ends).
    credits : list of int
        Credits available per data VL at the receiver.
    returns : tuple of list
        Per data VL, the returns of credits on their way back, in time order,
        as one flat list ``[time, credits, time, credits, ...]`` (no object per
        return: :func:`pending_returns` sums them).
    cands : tuple of list
        Per data VL, the sources (input buffers or VL send buffers) whose head
        packet wants this port.
    state : PortState
        IBA port state (:mod:`.portstate`); :meth:`set_state` changes it.
    step : callable
        ``step(now) -> next time``: what the port does at a wake-up; :meth:`bind`
        binds another to the instance for a state other than Active (and, for a
        switch port, for stages other than the plain ones), so that the
        per-packet path tests no state and no feature.
    """

    # the attributes every port has are slots: one compact object per port, not an object and a
    # dictionary of 35 entries (a subclass's own are slots too; the dictionary is for what a third party
    # adds).
    # In the order a packet-hop reads them: first what a poke and a credit return read of a port that
    # may be cold (on a large fabric, most are), then its own wake-up's, then the rest, so that a hop
    # touches three or four of the object's five cache lines rather than all of them.
    __slots__ = (
        "running", "busy_until", "own_wake", "early_at", "returns", "wants",
        "cands", "nvl", "mcands", "gen", "check", "single", "credits", "env",
        "loop", "next_t", "byte_time", "delay", "peer_rx", "window", "busy", "last_end",
        "last_start", "sent", "pick_one", "arbiter", "ready", "node", "port", "link",
        "capacity", "early_wakes", "state", "bound", "__dict__", "__weakref__",
    )

    def __init__(self, node, port: int, link: "Link", nvl: int, arbiter, env):
        self.node = node
        self.env = env
        self.loop = node.sim.portloop
        #: the generation of the port's own wake-up (bumped when it is re-armed: :mod:`.eventloop`)
        self.gen = 0
        self.port = port
        self.link = link
        self.byte_time = link.byte_time
        self.delay = link.delay
        self.nvl = nvl
        self.arbiter = arbiter
        #: the arbiter's choice when exactly one VL is ready: ``pick_one(ready, vl)`` (see :func:`one_ready`)
        self.pick_one = one_ready(arbiter)
        self.peer_rx = None
        self.capacity = [0] * nvl
        self.credits = [0] * nvl
        # (lists, not deques: a few returns are in flight per VL, and an empty deque is 760 bytes; the
        # per-VL lists in a tuple, whose items sit in the object itself: one cache line, where a list's
        # items are a second object, a second cold line of a large fabric at every look)
        self.returns: tuple[list, ...] = tuple([] for _ in range(nvl))
        self.cands: tuple[list, ...] = tuple([] for _ in range(nvl))
        #: per VL, what waits for credits (truthy when something does); a
        #: credit return pokes the port only then
        self.wants: tuple = self.cands
        self.ready: list = [None] * nvl
        #: one data VL and an arbiter that would always choose it: select() may be skipped
        self.single = nvl == 1 and getattr(arbiter, "single_vl_trivial", False)
        self.running = False
        self.own_wake = self.loop.now  # the port looks once when it is made (scheduled below)
        self.early_at = INF
        self.busy_until = 0.0
        self.next_t = INF
        # statistics (the port's wake-ups are counted by its loop: PortLoop.events)
        self.sent = 0
        self.busy = 0.0
        self.window = 0.0
        self.last_start = 0.0
        self.last_end = 0.0
        self.check = node.sim.check
        self.early_wakes = 0
        self.state = PortState.ACTIVE
        #: the methods the instance holds of its own (:meth:`bind`, :meth:`is_bound`)
        self.bound: tuple = ()
        self.mcands: list = []
        self.loop.schedule(self.loop.now, self, 0)

    # ----------------------------------------------------------- wiring

    def connect(self, peer_rx, capacity_credits: list[int]) -> None:
        """Attach the receiving side at the other end and take its buffer sizes as credits."""
        self.peer_rx = peer_rx
        self.capacity = list(capacity_credits)
        self.credits[:] = capacity_credits  # (in place: the port's stages may hold the list)

    @property
    def name_(self) -> str:
        """The port as messages name it: ``<node path>.port[<port>]``."""
        return f"{self.node.path}.port[{self.port}]"

    # ---------------------------------------------------------- process

    # The port's own wake-up (its event on the PortLoop) is run by the loop itself: a step, then the
    # port is due again at the time the step returned, or idle (until poked) when that is INF or an
    # early wake-up will look earlier (PortLoop.run).

    def wake_early(self, now: float) -> None:
        """An early wake-up (see :meth:`wake_by`): a step before the port's own wake-up."""
        if self.early_at <= now:
            self.early_at = INF
        self.wake_by(self.run_step(now))

    def bind(self) -> None:
        """Bind :meth:`step` to what the port does in its state: the class's own while Active,
        :meth:`_step_inactive` otherwise (an attribute of the instance, which the class's method is
        again once it is gone: a port that never leaves Active carries no bound-method object)."""
        if self.state == PortState.ACTIVE:
            if "step" in self.bound:
                del self.step
                self.bound = ()
        else:
            self.step = self._step_inactive
            self.bound = ("step",)

    def is_bound(self, name: str) -> bool:
        """Whether the instance holds its own *name* (bound by :meth:`bind` or a stage's wrapper), not
        the class's method.

        A port remembers the names it holds (:attr:`bound`) and unbinds only those: deleting a
        name the instance never had would still enter it in the class's shared instance keys,
        and CPython 3.11 then stops specialising the calls of the class's method of that name on
        every port of the class (a generic method lookup per call, measured on fattree512)."""
        m = getattr(self, name, None)
        if m is None:
            return False
        return getattr(m, "__self__", None) is not self or getattr(m, "__func__", None) is not getattr(type(self), name, None)

    def set_state(self, state: PortState, now: float) -> None:
        """Put the port in *state* at *now* (IBA PortInfo.PortState; :mod:`.failures` moves both ends of a
        link together).  Leaving Down, its credits are those of the receiver's free space (link
        training); the port is re-armed at *now* so that it looks at once in its new state."""
        state = PortState(state)
        old = self.state
        if state == old:
            return
        self.state = state
        if old == PortState.DOWN:
            self.train()
        self.left_state(old, now)
        self.bind()
        self.rearm(now)
        sma = self.node.sma
        if sma is not None:  # a dynamic subnet manager's agent: traps (components/sm/agent.py)
            sma.port_changed(self.port, old, state, now)

    def left_state(self, old: PortState, now: float) -> None:
        """What the port does as it leaves state *old* for :attr:`state` (a subclass's hook)."""

    def train(self) -> None:
        """Link training: full credits for what the receiver does not hold, no returns in flight."""
        rx = self.peer_rx
        for vl in range(self.nvl):
            self.credits[vl] = self.capacity[vl] - rx.held(vl)
            self.returns[vl].clear()

    def _step_inactive(self, now: float) -> float:
        """The step of a port that is not Active (a subclass's: :mod:`.failures`)."""
        raise NotImplementedError

    def rearm(self, now: float) -> None:
        """Restart the port's wake-ups at *now* (it changed state); a pending own wake-up is dropped, an
        early one stays."""
        self.gen += 1
        self.running = False
        self.own_wake = now
        self.loop.schedule(now, self, self.gen)

    def run_step(self, now: float) -> float:
        """A :meth:`step` with audits: no packet started while the link is busy, and the
        simulation's port audits (the process runs this instead of :meth:`step` in check mode).
        """
        self.running = True
        sent, busy = self.sent, self.busy_until
        t = self.step(now)
        self.running = False
        if self.check:
            if self.sent != sent and now < busy:
                raise AssertionError(f"{self.name_} started a packet at {now} while sending until {busy}")
            if t < now:  # the event list would run it in the past (salabim refused that; the loop does not look)
                raise AssertionError(f"{self.name_} asked to look again at {t}, before now ({now})")
            self.node.sim.audit_ports()
        return t

    def pending_wake(self) -> float:
        """The earliest time this port is due to look again (INF: only when poked)."""
        return self.own_wake if self.own_wake < self.early_at else self.early_at

    def poke(self, t: float) -> None:
        """Something may be sendable from time *t* on: make sure the port looks by then."""
        if self.running:
            return  # it re-evaluates before it sleeps
        if t < self.busy_until:
            t = self.busy_until
        if t >= self.own_wake or t >= self.early_at:
            return  # already due to look by then (the common case: no call below)
        now = self.loop.now
        if t < now:
            t = now
        self.wake_by(t)

    def wake_by(self, t: float) -> None:
        """Make sure the port looks at time *t* at the latest.

        An idle port is scheduled.  A port already scheduled for later is not
        moved (that would mean finding its entry in the heap); an early
        wake-up runs its step at *t* instead, and the port's own, later
        wake-up then finds little or nothing to do.
        """
        if t == INF or self.own_wake <= t or self.early_at <= t:
            return
        if self.own_wake == INF:
            self.own_wake = t
            self.loop.schedule(t, self, self.gen)
        else:
            self.early_at = t
            self.early_wakes += 1
            self.loop.schedule(t, self, EARLY)

    def step(self, now: float) -> float:
        """Do what can be done at *now*; return when to look again (INF: when poked)."""
        if now < self.busy_until:
            # a wake-up that an early one overtook: the link is still sending its packet
            return self.busy_until
        end = self.try_send(now)
        if end is not None:
            self.busy_until = end
            return self.after_send(end)
        return self.next_t

    def after_send(self, end: float) -> float:
        """When to look again after a transmission that ends at *end*.

        Never later than the first moment another packet could go (a poke
        cannot bring that moment forward for packets already queued); a
        subclass may return INF when only a poke can make one sendable.
        """
        return end if self.has_work() else self.idle_wake(end)

    def heads_credit_time(self, queues: list, after: float) -> float:
        """First time from *after* on when the head of one of the per-VL FIFOs *queues* has its credits."""
        best = INF
        for vl, q in enumerate(queues):
            if q:
                t = self.credit_time(vl, q[0].credits, after)
                if t < best:
                    best = t
        return best

    def credit_time(self, vl: int, need: int, end: float) -> float:
        """First time from *end* on when VL *vl* has *need* credits, counting the
        returns on their way; INF if those are not enough."""
        avail = self.credits[vl]
        if avail >= need:
            return end
        rq = self.returns[vl]
        for i in range(1, len(rq), 2):
            avail += rq[i]
            if avail >= need:
                t = rq[i - 1]
                return t if t > end else end
        return INF

    def has_work(self) -> bool:
        """Whether anything waits to be sent (without which the port sleeps until poked)."""
        return any(self.cands)

    def sendable(self, now: float) -> bool:
        """Whether a packet could start now if the link were free (no side effects; for audits)."""
        raise NotImplementedError

    def ready_heads(self, queues: list, now: float) -> tuple[int, float]:
        """Fill ``self.ready`` with the head packet of each VL's FIFO in *queues* that
        has credits now; return (the VL ready if it is the only one, -1 if none is,
        :data:`SEVERAL` if more are; when returning credits would unblock one)."""
        ready = self.ready
        credits = self.credits
        returns = self.returns
        nxt = INF
        one = -1
        for vl in range(self.nvl):
            q = queues[vl]
            if not q:
                ready[vl] = None
                continue
            rq = returns[vl]
            if rq and rq[0] <= now:
                self.absorb(vl, now)
            p = q[0]
            if p.credits <= credits[vl]:
                ready[vl] = p
                one = vl if one < 0 else SEVERAL
            else:
                ready[vl] = None
                if rq and rq[0] < nxt:
                    nxt = rq[0]
        return one, nxt

    def credits_at(self, vl: int, now: float) -> int:
        """The credits of VL *vl* available at *now*, counting the returns arrived by then (no side effects)."""
        return self.credits[vl] + pending_returns(self.returns[vl], now)

    def held_packets(self) -> int:
        """Packets held by the port itself (output buffers), not counting input buffers."""
        return 0

    def idle_wake(self, end: float) -> float:
        """When to look again after a transmission if nothing else is queued."""
        return INF

    def try_send(self, now: float) -> float | None:
        """Pick one packet that can go at *now* and launch it.

        Returns
        -------
        float or None
            The end of the packet's transmission, or None if nothing can start at
            *now*; ``self.next_t`` then says when to look again (INF: when poked).
        """
        raise NotImplementedError

    # ------------------------------------------------------------ launch

    def absorb(self, vl: int, now: float) -> None:
        """Take in the credits of VL *vl* that have arrived by *now*."""
        rq = self.returns[vl]
        n = len(rq)
        i = got = 0
        while i < n and rq[i] <= now:
            got += rq[i + 1]
            i += 2
        if i:
            del rq[:i]
            self.credits[vl] += got
        if self.check:
            self.check_credits(vl)

    def launch(self, p: "Packet", vl: int, now: float, end: float) -> None:
        """Put *p* on the wire on VL *vl* from *now* to *end*, handing it to the receiver."""
        if vl != VL15:
            self.credits[vl] -= p.credits
        w = self.window
        if end > w:
            self.busy += end - (now if now > w else w)
        self.last_start = now
        self.last_end = end
        self.sent += 1
        p.vl = vl
        p.hops += 1
        d = self.delay
        p.head_at = now + d
        p.tail_at = end + d
        self.peer_rx.receive(p, now)
        if self.check and vl != VL15:
            self.check_credits(vl)

    def cut(self, now: float) -> None:
        """The transmission in progress stops at *now* (its link failed; utilisation counts up to now)."""
        if self.last_end > now:
            cut = self.last_end - max(now, self.last_start, self.window)
            if cut > 0:
                self.busy -= cut
            self.last_end = now
        if self.busy_until > now:
            self.busy_until = now

    def busy_time(self, now: float) -> float:
        """Time this port spent transmitting since the measurement window began, up to *now*."""
        b = self.busy
        if self.last_end > now:
            b -= self.last_end - max(now, self.last_start, self.window)
        return max(b, 0.0)

    def check_credits(self, vl: int) -> None:
        """Assert the flow-control invariant of VL *vl* (used when the simulation runs with check=True).

        credits available + credits on their way back + credits held in the
        receiver's buffer == the receiver's buffer size, and none negative.
        """
        c = self.credits[vl]
        pending = pending_returns(self.returns[vl])
        held = self.peer_rx.held(vl)
        cap = self.capacity[vl]
        if c < 0 or c > cap or c + pending + held != cap:
            raise AssertionError(
                f"credit invariant broken at {self.name_} VL{vl}: available {c} + returning {pending}"
                f" + held {held} != buffer {cap}"
            )
