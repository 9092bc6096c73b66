"""Port states in the data path: link and node failures, restores (DESIGN §3).

Live packets pay nothing for this module.  A transmitter that leaves the
Active state changes class to an *inactive* subclass of its own class (as
multicast-capable ports do, :func:`ibfabric.components.multicast.install_mft`)
and its process restarts, so that the new class's ``step`` runs:

- a **Down** switch port discards every packet that reaches the head of an
  input VL routed to it, once its routing is done (``ready_at``), with reason
  ``port-down``, returning its credits upstream as a packet that left would;
  an Init/Armed one does the same with data packets and sends VL15 ones;
- a **Down** HCA port sends nothing: its send queues and VL buffers stay as
  they are (a real HCA keeps its send queues while its port is down; a
  reliable transport would retry later), the traffic source stops creating
  messages until the port is back (those due meanwhile are created when it
  is, at their own times, up to the usual backlog), and an Init/Armed HCA
  port sends VL15 packets only.

Nothing is ever blocked by a dead port, so the deadlock watchdog never sees
one (:mod:`ibfabric.deadlock` skips heads routed to an inactive port).

What a failure loses (``summary["drops_by_reason"]``):

- ``link-down``: the packets on the link, i.e. sent before the failure with
  their tail not arrived: they are taken out of the far end's input buffer,
  or out of the delivery log of the host they were reaching (known by their
  traffic endpoint ``dst``, which traffic sources set; a scripted packet
  without it is not recalled).  A packet that
  the far switch had already started forwarding (virtual cut-through: its
  head left before its tail arrived) is not recalled: the model committed it.
- ``port-down``: the packets in the output buffers of a port that fails
  (switches with ``outputBufferSize > 0``), and later every head routed to a
  port that is not Active (stale routes until a subnet manager recomputes).
- ``node-down``: the packets stored in the input (and output) buffers of a
  node that fails; their credits are void with the links.

Credits: a Down port's credits are meaningless; when it comes back, link
training gives it the credits of the receiver's free space (what its buffers
do not hold), as after a link comes up, and forgets the returns in flight.

Not supported yet (a :class:`~ibfabric.errors.ConfigError` names them):
failing a port of a switch with routing options, split escape buffers or
lifetime droppers, and fabrics with multicast groups.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ibfabric.errors import ConfigError

from .packet import VL15
from .port import INF, return_credits
from .portstate import LINK_DOWN, NODE_DOWN, PORT_DOWN, PortState

if TYPE_CHECKING:  # pragma: no cover
    from .port import TxPort

__all__ = ["set_state", "fail_link", "fail_node", "bring_up", "check_supported", "link_ends"]

DOWN, INIT, ARMED, ACTIVE = PortState.DOWN, PortState.INIT, PortState.ARMED, PortState.ACTIVE
_CLASSES: dict[tuple[type, bool], type] = {}


# ------------------------------------------------------------------ heads and queues


def _queues(rx):
    """Every FIFO of a switch input port: its data VL buffers (or their virtual output queues), then VL15."""
    for b in rx.bufs:
        voqs = getattr(b, "voqs", None)
        if voqs is None:
            yield b
        else:
            yield from (v for v in voqs if v is not None)
    yield rx.vl15


def _withdraw(buf, p) -> None:
    """Take *buf*, whose head is *p*, out of the candidates of *p*'s output port."""
    op = p.out_port
    c = op.mcands if p.out_vl == VL15 else op.cands[p.out_vl]
    if buf in c:
        c.remove(buf)


def _offer(buf, now: float) -> None:
    """The new head of *buf* becomes a candidate of its output port, which looks when it may cross."""
    n = buf.q[0]
    op = n.out_port
    (op.mcands if n.out_vl == VL15 else op.cands[n.out_vl]).append(buf)
    t = n.ready_at
    xf = buf.rx.xbar_free
    op.poke(max(t, xf, now))


def discard_head(buf, now: float, reason: str) -> None:
    """Discard the head packet of *buf* (no longer a candidate of any port) at *now*; its space is
    freed as its tail arrives and its credits go back upstream a wire delay later."""
    q = buf.q
    p = q.popleft()
    rx = buf.rx
    buf.occ -= p.credits
    if buf.vl != VL15:
        t = p.tail_at if p.tail_at > now else now
        return_credits(rx.upstream, buf.vl, t + rx.delay, p.credits)
    rx.sim.drop(p, reason, rx.node)
    if q:
        _offer(buf, now)


def _discard_ready(tx, now: float, vl15_too: bool) -> float:
    """Discard the candidate heads of *tx* whose routing is done; return when the next one will be."""
    lists = list(tx.cands) + ([tx.mcands] if vl15_too else [])
    nxt = INF
    again = True
    while again:  # a discarded head's successor may be routed here too, to a list already seen
        again = False
        nxt = INF
        for c in lists:
            i = 0
            while i < len(c):
                buf = c[i]
                t = buf.q[0].ready_at
                xf = buf.rx.xbar_free  # the time its port was told to look (as for a crossing)
                if xf > t:
                    t = xf
                if t <= now:
                    del c[i]
                    discard_head(buf, now, PORT_DOWN)
                    again = True
                else:
                    if t < nxt:
                        nxt = t
                    i += 1
    return nxt


# ------------------------------------------------------------------ inactive ports


class _InactiveSwitchTx:
    """Mixin over a switch transmitter class: the port is Down (``vl15_ok`` False) or Init/Armed."""

    vl15_ok = False
    active_class: type

    def step(self, now: float) -> float:
        nxt = _discard_ready(self, now, not self.vl15_ok)
        if self.vl15_ok and self.mcands:
            free = max(self.busy_until, getattr(self, "link_free", 0.0))
            if now < free:
                t = free
            else:
                end, t = self._try_vl15(now)
                if end is not None:
                    self.busy_until = end
                    if hasattr(self, "link_free"):
                        self.link_free = end
                    t = end
            if t < nxt:
                nxt = t
        return nxt

    def has_work(self) -> bool:
        return bool(self.mcands) or any(self.cands)

    def held_packets(self) -> int:
        return 0  # output buffers are flushed when the port leaves Active

    def sendable(self, now: float) -> bool:
        for c in self.cands:
            if any(max(b.q[0].ready_at, b.rx.xbar_free) <= now for b in c):
                return True  # a head to discard
        if self.mcands:
            if not self.vl15_ok:
                return any(max(b.q[0].ready_at, b.rx.xbar_free) <= now for b in self.mcands)
            if max(self.busy_until, getattr(self, "link_free", 0.0)) <= now:
                return any(max(b.q[0].ready_at, b.rx.xbar_free) <= now for b in self.mcands)
        return False


class _InactiveHcaTx:
    """Mixin over an HCA transmitter class: the port is Down (sends nothing) or Init/Armed (VL15 only)."""

    vl15_ok = False
    active_class: type

    def step(self, now: float) -> float:
        if not (self.vl15_ok and self.mgmt):
            return INF
        if now < self.busy_until:
            return self.busy_until
        end = self._launch(self.mgmt.popleft(), VL15, now)
        self.busy_until = end
        return end

    def has_work(self) -> bool:
        return bool(self.vl15_ok and self.mgmt)

    def sendable(self, now: float) -> bool:
        return bool(self.vl15_ok and self.mgmt) and self.busy_until <= now


def _inactive_class(base: type, vl15_ok: bool) -> type:
    from .hca import HcaTx

    key = (base, vl15_ok)
    cls = _CLASSES.get(key)
    if cls is None:
        mixin = _InactiveHcaTx if issubclass(base, HcaTx) else _InactiveSwitchTx
        prefix = "Init" if vl15_ok else "Down"
        cls = _CLASSES[key] = type(prefix + base.__name__, (mixin, base),
                                   {"vl15_ok": vl15_ok, "active_class": base, "__module__": __name__})
    return cls


def set_state(tx: "TxPort", state: PortState, now: float) -> None:
    """Put port *tx* in *state*; leaving Down, its credits are those of the receiver's free space
    (link training).  It is re-armed at *now* so that its new class's ``step`` runs."""
    state = PortState(state)
    old = tx.state
    if state == old:
        return
    base = getattr(type(tx), "active_class", type(tx))
    tx.__class__ = base if state == ACTIVE else _inactive_class(base, state != DOWN)
    tx.state = state
    if old == DOWN:
        _train(tx)
    tx.rearm(now)
    if tx.node.sma is not None:  # a dynamic subnet manager's agent: traps (components/sm/agent.py)
        tx.node.sma.port_changed(tx.port, old, state, now)


def _train(tx) -> None:
    """Link training: full credits for what the receiver does not hold, no returns in flight."""
    rx = tx.peer_rx
    for vl in range(tx.nvl):
        tx.credits[vl] = tx.capacity[vl] - rx.held(vl)
        tx.returns[vl].clear()


# ------------------------------------------------------------------ failures


def check_supported(node) -> None:
    """Raise ConfigError if a port of *node* cannot fail in this model (see the module docstring)."""
    sim = node.sim
    if sim.multicast is not None:
        raise ConfigError("link and node failures are not supported yet on fabrics with multicast groups")
    if node.is_switch and (node.option_bits or node.escape_buffer or node.lifetimes):
        what = "lifetime droppers" if node.lifetimes else "routing options or escape buffers"
        raise ConfigError(f"{node.path}: link and node failures are not supported yet on switches with {what}")


def link_ends(node, port: int) -> tuple:
    """The two transmitters of the link at *node*'s *port*: ``(node's, the peer's)``."""
    peer, pp, _link = node.links[port]
    return node.tx[port], peer.tx[pp]


def _cut(tx, now: float) -> None:
    """The transmission in progress on *tx*'s link stops at *now* (utilisation counts up to now)."""
    if tx.last_end > now:
        cut = tx.last_end - max(now, tx.last_start, tx.window)
        if cut > 0:
            tx.busy -= cut
        tx.last_end = now
    if tx.busy_until > now:
        tx.busy_until = now
    if getattr(tx, "link_free", 0.0) > now:
        tx.link_free = now


def _lose_on_wire(tx, now: float) -> int:
    """Take the packets *tx* sent whose tail has not arrived out of the receiver; return how many."""
    sim = tx.node.sim
    rx = tx.peer_rx
    lost = 0
    if rx.node.is_switch:
        for buf in _queues(rx):
            q = buf.q
            k = len(q) - 1
            while k >= 0:  # the packets still arriving are the last ones of each FIFO
                p = q[k]
                if p.tail_at > now:
                    if k == 0:
                        _withdraw(buf, p)
                        q.popleft()
                        buf.occ -= p.credits
                        if q:
                            _offer(buf, now)
                    else:
                        del q[k]
                        buf.occ -= p.credits
                    sim.drop(p, LINK_DOWN, rx.node)
                    lost += 1
                k -= 1
    elif rx.port == rx.node.first_port:
        host = sim.traffic_index(rx.node)
        if host is not None:
            n = sim.stats.lose_deliveries(now, host)
            if n:
                sim.stats.dropped[LINK_DOWN] += n
                lost += n
    return lost


def _flush_output(tx, now: float, reason: str) -> int:
    """Discard what waits in the output buffers of *tx* (output-buffered switch ports)."""
    obuf = getattr(tx, "obuf", None)
    if obuf is None:
        return 0
    sim = tx.node.sim
    n = 0
    for vl, q in enumerate(obuf):
        while q:
            sim.drop(q.popleft(), reason, tx.node)
            n += 1
        tx.obytes[vl] = 0
    tx.on_link = None
    return n


def fail_link(ends, now: float) -> int:
    """Both ends of a link go Down at *now*; return the packets lost (on the wire, in output buffers)."""
    lost = 0
    for tx in ends:
        if tx.state == DOWN:
            continue
        lost += _lose_on_wire(tx, now)
        lost += _flush_output(tx, now, PORT_DOWN)
        _cut(tx, now)
        set_state(tx, DOWN, now)
    return lost


def fail_node(node, now: float) -> int:
    """Every link of *node* fails, and the packets stored in its buffers are lost; return how many."""
    lost = 0
    for port in node.tx:
        lost += fail_link(link_ends(node, port), now)
    if node.is_switch:
        sim = node.sim
        for rx in node.rx.values():
            for buf in _queues(rx):
                q = buf.q
                while q:
                    p = q.popleft()
                    sim.drop(p, NODE_DOWN, node)
                    lost += 1
                buf.occ = 0
        for tx in node.tx.values():
            for c in tx.cands:
                c.clear()
            tx.mcands.clear()
            lost += _flush_output(tx, now, NODE_DOWN)
    return lost


def bring_up(ends, now: float, activate: bool = True) -> None:
    """The ends of a link come up after training: Init, then Active at once if *activate* (no
    subnet manager to arm them: the static one's routes are already installed)."""
    for tx in ends:
        set_state(tx, ACTIVE if activate else INIT, now)
