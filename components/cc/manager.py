"""Congestion control of one fabric, set up by the subnet manager as OpenSM's cc manager does it.

:func:`configure` (the ``SubnetManager``'s init stage 2, when
``congestionControl`` or its ``ccConfig`` file turns it on) gives every
switch a FECN :class:`~.marking.Marker` (a stage of its output side: its
ports re-bind) and every HCA port a :class:`~.source.Throttle` (its
``try_send``), and listens to deliveries:

- a data packet delivered with FECN is answered by a **CNP** to its source
  (IBA A10: unreliable traffic, which the traffic sources send, gets a
  congestion notification packet; reliable traffic would carry the BECN on
  its ACK, which ibfabric's sources do not send): a packet of the HCA's
  ``headerSize`` bytes, on the SL of the marked packet (so on the VL that
  SL maps to at every hop), sent from the destination's port when the
  marked packet's tail arrives, through the send queue, arbitration,
  credits and switches as any packet;
- a CNP delivered is a BECN for the flow it answers: its source's CCTI
  rises (:meth:`~.source.Throttle.becn`) when the CNP's tail arrives.

The counts (FECN marked, FECN delivered, CNPs sent and delivered, BECNs)
and the flows' state go to the summary's ``congestion_control`` section
(:meth:`CongestionControl.summary`); each HCA emits its new CCTI on the
signal ``ccti`` at each BECN, so ``sim.record("ccti", "vector")`` records
the CCTI over time.  The per-flow measurement that classifies victims and
contributors is :mod:`~.flows`, which runs with congestion control off too.
"""

from __future__ import annotations

from ibfabric.errors import ConfigError

from ..packet import Packet, credits_for
from .marking import Marker
from .settings import CCSettings, from_params, read_opensm
from .source import Throttle

__all__ = ["CongestionControl", "configure", "settings_of"]


def settings_of(sm) -> CCSettings:
    """The settings of the subnet manager module *sm*: its parameters, then its ``ccConfig`` file."""
    s = from_params(sm.params)
    path = str(sm.params["ccConfig"]).strip()
    if path:
        s = read_opensm(path, s)
    return s


def configure(sm) -> "CongestionControl | None":
    """Set up congestion control for the simulation of *sm* if its settings turn it on, and the per-flow
    measurement (:mod:`~.flows`) if it is on or a traffic pattern names contributors; return it."""
    from .flows import attach_flows

    s = settings_of(sm)
    attach_flows(sm.sim, force=s.enabled)
    if not s.enabled:
        return None
    cc = CongestionControl(sm.sim, s)
    cc.attach()
    return cc


class CongestionControl:
    """The congestion control of one simulation (see the module docstring).

    ``marked``: the packets carrying FECN; ``cnps``: the CNPs on their way.
    """

    def __init__(self, sim, settings: CCSettings):
        self.sim = sim
        self.settings = settings
        self.marked: set = set()
        self.cnps: set = set()
        self.markers: list[Marker] = []
        #: the throttle of each HCA port, by (HCA path, port)
        self.throttles: dict[tuple[str, int], Throttle] = {}
        self.fecn_delivered = 0
        self.cnps_sent = 0
        self.becns = 0

    def attach(self) -> None:
        """Give the switches their markers and the HCA ports their throttles; listen to deliveries."""
        sim = self.sim
        for node in sim.ib_nodes:
            if node.is_switch:
                m = Marker(node, self.settings, self.marked)
                self.markers.append(m)
                node.plan.add_watcher(m)
            elif hasattr(node, "send_packet"):
                for port, tx in node.tx.items():
                    th = Throttle(tx, self.settings, self.cnps)
                    self.throttles[(node.path, port)] = th
                    th.attach()
        self.check_port_settings()
        sim.delivery_listeners.append(self.delivered)
        sim.add_summary_section("congestion_control", self.summary)

    def check_port_settings(self) -> None:
        """A Switch Port Congestion Setting element for no port of any switch is an error at its place."""
        for e in self.settings.ports:
            if not any(e.matches(m.switch.name, m.switch.path, port) for m in self.markers for port in m.switch.tx):
                what = "any port" if e.port < 0 else f"port {e.port}"
                raise ConfigError(f"{e.where}: no switch matching {e.switch!r} has {what}")

    def throttle_of(self, hca) -> Throttle:
        """The throttle of *hca*'s first port."""
        return self.throttles[(hca.path, hca.first_port)]

    # ------------------------------------------------------------ destination and source

    def delivered(self, p, t: float, node) -> None:
        """A delivery listener: answer FECN with a CNP, take a CNP's BECN (module docstring)."""
        if p in self.cnps:
            self.cnps.remove(p)
            self.marked.discard(p)  # a CNP is never answered
            if (getattr(node, "path", None), getattr(node, "first_port", None)) in self.throttles:
                self.sim.call_at(t, self.becn, p, node)
        elif p in self.marked:
            self.marked.remove(p)
            self.fecn_delivered += 1
            if hasattr(node, "send_packet"):  # (a third-party host type that cannot send does not answer)
                self.sim.call_at(t, self.send_cnp, p, node)

    def send_cnp(self, p, node) -> None:
        """Send the CNP that answers *p*, marked with FECN and delivered to *node* (now)."""
        size = max(getattr(node, "header_size", 26), 1)
        cnp = Packet(p.dlid, p.slid, p.sl, size, credits_for(size), p.dst, p.src, cls=3)
        self.cnps.add(cnp)
        self.cnps_sent += 1
        node.send_packet(cnp)

    def becn(self, cnp, node) -> None:
        """The CNP *cnp* reached *node* (now): raise the CCTI of the flow it answers."""
        th = self.throttle_of(node)
        flow = cnp.sl if th.per_sl else cnp.src
        c = th.becn(flow, cnp.sl, self.sim.now)
        self.becns += 1
        node.emit("ccti", c)

    # ------------------------------------------------------------ summary

    def marks(self) -> int:
        """Packets marked with FECN by all switches."""
        return sum(m.total() for m in self.markers)

    def summary(self) -> dict:
        """The ``congestion_control`` section of the run's summary."""
        now = self.sim.now
        s = self.settings
        flows = []
        for (path, _port), th in self.throttles.items():
            for flow in sorted(th.ccti):
                flows.append(th.index(flow, th.flow_sl[flow], now))
        ports = {}
        for m in self.markers:
            for (port, vl), n in sorted(m.marks.items()):
                ports[f"{m.switch.path}.port[{port}] VL{vl}"] = n
        top = dict(sorted(ports.items(), key=lambda kv: -kv[1])[:10])
        return {"congestion_control": {
            "settings": {"threshold": s.threshold, "marking_rate": s.marking_rate, "packet_size": s.packet_size,
                         "victim_mask": hex(s.victim_mask), "credit_mask": hex(s.credit_mask),
                         "cs_threshold": s.cs_threshold, "port_settings": len(s.ports),
                         "ccti_increase": s.ca[0].ccti_increase, "ccti_timer": s.ca[0].ccti_timer,
                         "ccti_min": s.ca[0].ccti_min, "ccti_limit": s.ccti_limit,
                         "per_sl": s.per_sl, "ird_unit_ns": s.ird_unit},
            "fecn_marked": self.marks(),
            "fecn_marked_starved": sum(sum(m.starved_marks.values()) for m in self.markers),
            "fecn_delivered": self.fecn_delivered,
            "cnp_sent": self.cnps_sent,
            "becn_received": self.becns,
            "marking_ports": top,
            "flows_throttled": sum(1 for c in flows if c > 0),
            "ccti_max": max((th.max_ccti for th in self.throttles.values()), default=0),
            "ccti_mean_at_end": (sum(flows) / len(flows)) if flows else 0.0,
        }}
