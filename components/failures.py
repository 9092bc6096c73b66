"""Link and node failures, and restores, in the data path (DESIGN §3: port state is state).

Every transmitter has a ``state`` (:mod:`.portstate`); this module moves
both ends of a link together and says what a failure loses.  A port's
state changes its wake-up (:meth:`TxPort.set_state <ibfabric.components.port.TxPort.set_state>`),
never its class, and live packets pay nothing for it:

- a **Down** switch port discards every packet that reaches the head of a
  read point committed to it, once its routing is done (``ready_at``),
  with reason ``port-down``, returning its credits upstream as a packet
  that left would; an Init/Armed one does the same with data packets and
  sends VL15 ones (:mod:`.switch.inactive`, which also says what becomes of
  packets with routing options and of multicast copies);
- a **Down** HCA port sends nothing: its send queues and VL buffers stay as
  they are (a real HCA keeps its send queues while its port is down; a
  reliable transport would retry later), the traffic source stops creating
  messages until the port is back (those due meanwhile are created when it
  is, at their own times, up to the usual backlog), and an Init/Armed HCA
  port sends VL15 packets only.

What a failure loses (``summary["drops_by_reason"]``):

- ``link-down``: the packets on the link, i.e. sent before the failure with
  their tail not arrived: they are taken out of the far end's input buffer
  (whatever its organisation), or out of the delivery log of the host they
  were reaching (known by their traffic endpoint ``dst``, which traffic
  sources set; a scripted packet without it is not recalled).  A packet that
  the far switch had already started forwarding (virtual cut-through: its
  head left before its tail arrived) is not recalled: the model committed it.
- ``port-down``: the packets in the output buffers of a port that fails
  (switches with ``outputBufferSize > 0``), and later every head routed to a
  port that is not Active (stale routes until a subnet manager recomputes),
  and the multicast copies owed to such a port.
- ``node-down``: the packets stored in the input (and output) buffers of a
  node that fails, and in its replication engine; their credits are void
  with the links.

Credits: a Down port's credits are meaningless; when it comes back, link
training gives it the credits of the receiver's free space (what its buffers
do not hold), as after a link comes up, and forgets the returns in flight.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .portstate import LINK_DOWN, NODE_DOWN, PortState

if TYPE_CHECKING:  # pragma: no cover
    from .port import TxPort

__all__ = ["set_state", "fail_link", "fail_node", "bring_up", "link_ends"]

DOWN, INIT, ARMED, ACTIVE = PortState.DOWN, PortState.INIT, PortState.ARMED, PortState.ACTIVE


def set_state(tx: "TxPort", state: PortState, now: float) -> None:
    """Put port *tx* in *state* at *now* (:meth:`TxPort.set_state <ibfabric.components.port.TxPort.set_state>`)."""
    tx.set_state(state, now)


def link_ends(node, port: int) -> tuple:
    """The two transmitters of the link at *node*'s *port*: ``(node's, the peer's)``."""
    peer, pp, _link = node.links[port]
    return node.tx[port], peer.tx[pp]


def _lose_on_wire(tx, now: float) -> int:
    """Take the packets *tx* sent whose tail has not arrived out of the receiver; return how many."""
    sim = tx.node.sim
    rx = tx.peer_rx
    lost = 0
    if rx.node.is_switch:
        for buf in rx.organisations():
            for p in buf.arriving(now):
                buf.remove(p)
                sim.drop(p, LINK_DOWN, rx.node)
                lost += 1
    elif rx.port == rx.node.first_port:
        host = sim.traffic_index(rx.node)
        if host is not None:
            n = sim.stats.lose_deliveries(now, host)
            if n:
                sim.stats.dropped[LINK_DOWN] += n
                lost += n
    return lost


def fail_link(ends, now: float) -> int:
    """Both ends of a link go Down at *now*; return the packets lost (on the wire, in output buffers)."""
    lost = 0
    for tx in ends:
        if tx.state == DOWN:
            continue
        lost += _lose_on_wire(tx, now)
        held = tx.held_packets()
        tx.cut(now)
        tx.set_state(DOWN, now)  # (a switch port discards its output buffers as it leaves Active)
        lost += held - tx.held_packets()
    return lost


def fail_node(node, now: float) -> int:
    """Every link of *node* fails, and the packets stored in its buffers are lost; return how many."""
    lost = 0
    for port in node.tx:
        lost += fail_link(link_ends(node, port), now)
    if node.is_switch:
        sim = node.sim
        for tx in node.tx.values():
            for c in tx.cands:
                c.clear()
            tx.mcands.clear()
            lost += tx.flush_output(now, NODE_DOWN)
        for rx in node.rx.values():
            for buf in rx.organisations():
                for p in buf.clear():
                    sim.drop(p, NODE_DOWN, node)
                    lost += 1
        if node.replicator is not None and not node.replicator.source_copies:
            lost += node.replicator.flush(now, NODE_DOWN)
    return lost


def bring_up(ends, now: float, activate: bool = True) -> None:
    """The ends of a link come up after training: Init, then Active at once if *activate* (no
    subnet manager to arm them: the static one's routes are already installed)."""
    for tx in ends:
        tx.set_state(ACTIVE if activate else INIT, now)

