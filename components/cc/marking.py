"""The switch side of congestion control: FECN marking, a watcher of each output port (DESIGN §3).

IBA 1.2.1 Annex A10 (Switch Congestion Setting): a port VL is *congested*
when the packets waiting for it pass ``threshold``, and a congested port
VL marks the unicast packets it sends with FECN -- one in ``marking_rate + 1`` of
those eligible (at least ``packet_size`` credits) -- when it is the *root*
of the congestion, or when its bit in ``victim_mask`` says that a victim
port marks too.  A port that runs out of credits is a victim, never a
root; its bit in ``credit_mask`` has it mark on *credit starvation*, with
its own threshold (CS_Threshold).  A Switch Port Congestion Setting element
replaces, for its port, the threshold, packet size and marking rate
(Control_Type 0) or turns on and sets its credit-starvation marking
(Control_Type 1) (:meth:`~.settings.CCSettings.port_rule`).

What this model takes for each (the architecture leaves them to the
implementation):

- **the queue** of output port VL *vl* is the credits of the packets
  routed to it in the read points offered to it
  (:attr:`~ibfabric.components.port.TxPort.cands`: the whole of a virtual
  output queue, the packets of a FIFO routed here, not those behind its
  head bound elsewhere), plus its output VL buffer if it has one (what an
  input-buffered switch's per-output counters see); it is congested from ``(16 - threshold)/16`` of one input VL buffer
  on (:meth:`~.settings.CCSettings.limit_credits`; threshold 0 never marks);
- **the root**: a port VL whose downstream buffer holds less than half its
  size (:meth:`held <ibfabric.components.switch.rx.SwitchRx.held>` by the
  receiver as the packet starts) has credits: what limits it is its own
  link, it is the root of the congestion.  One whose downstream buffer is
  half full or more is held back by flow control, a victim of congestion
  further on: it marks only if ``victim_mask`` has its port.  (A channel
  adapter consumes at line rate and holds nothing: a port to a host is
  always a root.)
- **credit starvation**: a victim port VL whose downstream buffer, once the
  packet it launches is in, has no room for another packet of that size:
  it cannot send the next one until credits come back.  With its
  ``credit_mask`` bit (or a Control_Type 1 element) it marks the packets
  congestion marking left unmarked while its queue is at least the
  ``cs_threshold`` fraction of a buffer (the same scale as ``threshold``),
  one in its ``marking_rate + 1``; ``starved_marks`` counts them apart.
  The architecture's CS_ReturnDelay (a delay of credit returns) is read
  and kept, not modelled.

:class:`Marker` is a switch's watcher: :meth:`Marker.wrap` replaces the
``launch`` of each of its output ports by one that looks at the queue and
marks, then launches.  A switch without congestion control has no marker:
its ports launch as before, with no test for it; a port without
credit-starvation marking has no test for that either
(:meth:`SwitchTx.bind <ibfabric.components.switch.tx.SwitchTx.bind>`).
The FECN bit is membership of the packet in the fabric's set of marked
packets (:attr:`CongestionControl.marked <.manager.CongestionControl.marked>`),
so a packet of a run without congestion control carries no field for it.
"""

from __future__ import annotations

from ..packet import VL15

__all__ = ["Marker", "queued_credits"]

#: the first multicast LID: multicast packets are not marked (a CNP answers one source's unicast flow)
MULTICAST = 0xC000


def queued_credits(tx, vl: int) -> int:
    """The credits waiting for output port *tx* on VL *vl* (the module docstring's queue)."""
    q = 0
    for c in tx.cands[vl]:
        for p in c.q:
            if p.out_port is tx:
                q += p.credits
    if tx.obuf is not None:
        q += tx.oqueued[vl]
    return q


class Marker:
    """The FECN marker of one switch (see the module docstring).

    ``marks[(port, vl)]`` counts the packets each output port VL marked,
    ``eligible[(port, vl)]`` those it could have marked (congested, root or
    victim-marking, large enough), ``starved_marks[(port, vl)]`` the marks
    it made on credit starvation (a subset of ``marks``) and
    ``starved_eligible`` the packets it could have marked so.
    """

    def __init__(self, switch, settings, marked: set):
        self.switch = switch
        self.settings = settings
        self.marked = marked
        self.buffer_credits = switch.vl_buffer // 64
        self.limit = settings.limit_credits(self.buffer_credits)
        self.marks: dict[tuple[int, int], int] = {}
        self.eligible: dict[tuple[int, int], int] = {}
        self.starved_marks: dict[tuple[int, int], int] = {}
        self.starved_eligible: dict[tuple[int, int], int] = {}

    def __repr__(self) -> str:
        return f"<Marker {self.switch.path}>"

    def rule(self, port: int):
        """The :class:`~.settings.PortRule` output port *port* marks with."""
        sw = self.switch
        return self.settings.port_rule(sw.name, sw.path, port)

    def wrap(self, tx) -> None:
        """Have output port *tx* mark the packets it launches while congested (idempotent: it wraps the
        class's ``launch``).  A port without credit-starvation marking gets the launch without its test."""
        launch = type(tx).launch
        marked = self.marked
        r = self.rule(tx.port)
        limit = self.settings.limit_credits(self.buffer_credits, r.threshold)
        rate = r.marking_rate
        min_credits = r.packet_size
        victim = r.victim
        held = tx.peer_rx.held
        capacity = tx.capacity
        half = [c / 2 for c in capacity]
        port = tx.port
        marks = self.marks
        eligible = self.eligible
        skip = [0] * tx.nvl  # eligible packets since the last mark, per VL

        def congested(p, vl: int) -> bool:
            """*p* is eligible at a congested root (or victim-masked) port VL: mark it at the marking rate;
            whether it was marked."""
            key = (port, vl)
            eligible[key] = eligible.get(key, 0) + 1
            if skip[vl] >= rate:
                skip[vl] = 0
                marked.add(p)
                marks[key] = marks.get(key, 0) + 1
                return True
            skip[vl] += 1
            return False

        def mark_launch(p, vl: int, now: float, end: float) -> None:
            if vl != VL15 and p.credits >= min_credits and p.dlid < MULTICAST and queued_credits(tx, vl) >= limit:
                if victim or held(vl) < half[vl]:
                    congested(p, vl)
            launch(tx, p, vl, now, end)

        if not r.starve:
            tx.launch = mark_launch
            return
        cs_limit = self.settings.limit_credits(self.buffer_credits, r.cs_threshold)
        cs_rate = r.cs_marking_rate
        cs_min = r.cs_packet_size
        starved_marks = self.starved_marks
        starved_eligible = self.starved_eligible
        cs_skip = [0] * tx.nvl

        def starve_launch(p, vl: int, now: float, end: float) -> None:
            if vl != VL15 and p.dlid < MULTICAST:
                q = queued_credits(tx, vl)
                h = held(vl)
                done = p.credits >= min_credits and q >= limit and (victim or h < half[vl]) and congested(p, vl)
                # credit-starved: a victim (its downstream buffer half full or more) that has no room there
                # for another packet like this one once this one is in; marks what congestion left unmarked
                if not done and h >= half[vl] and capacity[vl] - h - p.credits < p.credits \
                        and p.credits >= cs_min and q >= cs_limit:
                    key = (port, vl)
                    starved_eligible[key] = starved_eligible.get(key, 0) + 1
                    if cs_skip[vl] >= cs_rate:
                        cs_skip[vl] = 0
                        marked.add(p)
                        marks[key] = marks.get(key, 0) + 1
                        starved_marks[key] = starved_marks.get(key, 0) + 1
                    else:
                        cs_skip[vl] += 1
            launch(tx, p, vl, now, end)

        tx.launch = starve_launch

    def total(self) -> int:
        """Packets this switch marked."""
        return sum(self.marks.values())
