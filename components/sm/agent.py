"""Subnet management agents (SMAs): one in every switch and channel adapter.

An agent takes in the SMPs that reach its node (directed-route SMPs at the
no-route branch of a switch's receive side, LID-routed ones addressed to
the node, every VL15 packet at a channel adapter), handles them one at a
time, each ``smaDelay`` after the previous one or its tail's arrival,
whichever is later, and then forwards a directed-route SMP that has hops
left, or processes it (Get -> GetResp; Set -> applied, then GetResp) and
sends the response back along the reverse path.

A switch agent originates VL15 packets through a virtual management port
(port 0): one VL15 buffer per output port, whose head is a VL15 candidate
of that port's transmitter exactly as an input buffer's head is (see
:mod:`ibfabric.components.switch.inbuf`), so data packets never see it.
A channel adapter's agent sends through its port's management queue.

Accounting: an SMP the agent takes in is a packet consumed at its node (a
local delivery, like anything a switch consumes); one it sends is a new
packet injected.  Packet conservation therefore holds with SMPs in flight.

Traps: a switch agent whose port goes Down, or comes up (Init) after
link training, sends a LID-routed SubnTrap(Notice) to the SM and repeats
it every ``smpTimeout`` (at most ``smpRetries`` times) until the SM
answers with a SubnTrapRepress.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..packet import VL15
from ..switch.inbuf import Vl15Buffer
from ..portstate import NODE_DOWN, PortState
from ..routing.tables import NO_PORT
from .smp import (GET_RESP, LFT, LFT_BLOCK, NODE_INFO, NOTICE, PERMISSIVE_LID, PORT_INFO, RFT, SET, SWITCH_INFO,
                  TRAP, TRAP_REPRESS, Smp, smp_packet)

if TYPE_CHECKING:  # pragma: no cover
    from .manager import DynamicSM

__all__ = ["Agent", "SwitchAgent", "HcaAgent"]

DOWN, INIT, ACTIVE = PortState.DOWN, PortState.INIT, PortState.ACTIVE


class _MgmtRx:
    """The switch's management port seen as an input: what a read point's ``take`` and the failure layer
    read of an input port (:mod:`ibfabric.components.switch.inbuf`)."""

    __slots__ = ("node", "sim", "port", "xbar_free", "xbar_bt", "xsetup", "delay", "upstream")

    def __init__(self, node, xbar_bt: float):
        self.node = node
        self.sim = node.sim
        self.port = 0
        self.xbar_free = 0.0
        self.xbar_bt = xbar_bt
        self.xsetup = node.crossbar_setup
        self.delay = 0.0
        self.upstream = None


class Agent:
    """What switch and channel-adapter agents share: intake, processing delay, attributes."""

    def __init__(self, node, sm: "DynamicSM", guid: int, lids: dict[int, tuple[int, int]]):
        self.node = node
        self.sim = node.sim
        self.sm = sm
        self.guid = guid
        #: the LID and LMC of each LID holder (port 0 of a switch, ports of a CA) as the agent knows them
        self.lids = dict(lids)
        self.busy_until = 0.0
        self.taken = 0

    # ------------------------------------------------------------ intake

    def alive(self) -> bool:
        """Whether the agent's node is up (a failed node's agent ignores every SMP)."""
        return self.node not in self.sim.failed_nodes

    def receive(self, p, in_port: int, now: float) -> None:
        """Take in the VL15 packet *p* that arrived on *in_port* (called by the data path)."""
        sim = self.sim
        sim.stats.local.append(p.tail_at)  # consumed here (a local delivery)
        smp = getattr(p, "smp", None)
        if smp is None or not self.alive():
            return
        self.taken += 1
        start = p.tail_at if p.tail_at > self.busy_until else self.busy_until
        done = self.busy_until = start + self.sm.sma_delay
        sim.call_at(done, self._handle, smp, in_port, p.slid)

    def _handle(self, smp: Smp, in_port: int, slid: int) -> None:
        if not self.alive():
            return
        now = self.sim.now
        if smp.lid_routed:
            self.lid_routed(smp, slid, now)
            return
        if smp.returning:
            if smp.hop == 0:
                self.at_manager(smp)
                return
            smp.hop -= 1
            self.send_out(smp, smp.rpath[smp.hop], now)
            return
        smp.rpath.append(in_port)
        if smp.hop < len(smp.path):
            out = smp.path[smp.hop]
            smp.hop += 1
            self.forward(smp, out, now)
            return
        self.respond(smp, in_port, now)

    def respond(self, smp: Smp, in_port: int | None, now: float) -> None:
        """Process the request *smp* (this node is its destination) and send the response back."""
        smp.data = self.process(smp, in_port, now)
        smp.method = GET_RESP
        smp.returning = True
        if not smp.rpath:  # the SM's own node: no wire
            self.at_manager(smp)
            return
        smp.hop = len(smp.rpath) - 1
        self.send_out(smp, smp.rpath[-1], now)

    def process(self, smp: Smp, in_port: int | None, now: float) -> dict:
        """The data of the response to *smp*, which arrived on *in_port* (None: from the SM's own node).

        NodeInfo is answered; PortInfo is answered after a ``SubnSet`` is applied
        (:meth:`set_port`); a switch installs the LFT and RFT blocks and the
        default port that are set.  Anything else is answered
        ``{"status": "unsupported"}``.
        """
        if smp.attr == NODE_INFO:
            return {"guid": self.guid, "is_switch": self.node.is_switch, "num_ports": int(self.node.params["numPorts"]),
                    "local_port": in_port, "name": self.node.path}
        if smp.attr == PORT_INFO:
            if smp.method == SET:
                self.set_port(smp.modifier, smp.data, now)
            return self.port_info(smp.modifier)
        if smp.attr == LFT and smp.method == SET and self.node.is_switch:
            self.node.install_lft_block(smp.modifier, smp.data, LFT_BLOCK)
            return {"block": smp.modifier}
        if smp.attr == RFT and smp.method == SET and self.node.is_switch:
            self.node.install_rft_block(smp.modifier, smp.data)
            return {"block": smp.modifier}
        if smp.attr == SWITCH_INFO and smp.method == SET and self.node.is_switch:
            self.node.set_default_port(smp.data["default_port"], smp.data["top"])
            return dict(smp.data)
        return {"status": "unsupported"}

    def port_info(self, port: int) -> dict:
        """The PortInfo of *port* as a dict: ``port``, ``lid``, ``lmc``, ``state`` and, for a
        port with a link, its ``width``, ``speed`` and ``rate``.
        """
        node = self.node
        tx = node.tx.get(port) if port else None
        lid, lmc = self.lids.get(0 if node.is_switch else port, (0, 0))
        state = tx.state if tx is not None else DOWN if port else ACTIVE  # port 0: the switch itself
        out = {"port": port, "lid": lid, "lmc": lmc, "state": state}
        if tx is not None:
            link = tx.link
            out.update(width=link.width, speed=link.speed, rate=link.rate)
        return out

    def set_port(self, port: int, data: dict, now: float) -> None:
        """Apply a PortInfo ``SubnSet`` of *port*: its LID and LMC (the switch's for a switch)
        and its state; the SM cannot bring a port whose link is down back up.
        """
        from ..failures import set_state

        node = self.node
        if "lid" in data:
            holder = 0 if node.is_switch else port
            self.lids[holder] = (int(data["lid"]), int(data.get("lmc", 0)))
            if node.is_switch:
                node.lid, node.lmc = self.lids[0]
            else:
                node.set_port_lids({**getattr(node, "port_lids", {}), port: self.lids[port]})
        state = data.get("state")
        tx = node.tx.get(port)
        if state is not None and tx is not None and tx.state != DOWN:  # the SM cannot bring up a dead link
            set_state(tx, PortState(state), now)

    # ------------------------------------------------------------ sending

    def forward(self, smp: Smp, port: int, now: float) -> None:
        """Send the outbound directed-route *smp* on (switches only)."""
        self.sm.lose(smp, "bad-path")  # a channel adapter never forwards a directed-route SMP

    def send_out(self, smp: Smp, port: int, now: float) -> None:
        """Send *smp* out of *port* at *now* (on the wire, VL15).

        Raises
        ------
        NotImplementedError
            In this base class; the switch and CA agents implement it.
        """
        raise NotImplementedError

    def at_manager(self, smp: Smp) -> None:
        """A returning SMP reached the end of its path here, which is not the SM: it is lost (``bad-path``)."""
        self.sm.lose(smp, "bad-path")

    def lid_routed(self, smp: Smp, slid: int, now: float) -> None:
        """A LID-routed SMP from *slid* reached this node: nothing to do in this base class."""
        pass

    def port_changed(self, port: int, old: PortState, new: PortState, now: float) -> None:
        """A port of this node changed state (called by :meth:`TxPort.set_state <ibfabric.components.port.TxPort.set_state>`)."""
        self.sm.note_change(self.node, port, old, new, now)


class SwitchAgent(Agent):
    """The agent of a switch (see the module docstring)."""

    def __init__(self, node, sm, guid, lids):
        super().__init__(node, sm, guid, lids)
        xbar_bt = next((rx.xbar_bt for rx in node.rx.values()), 0.0)
        self.mrx = _MgmtRx(node, xbar_bt)
        self.bufs: dict[int, Vl15Buffer] = {}
        self.traps: dict[int, list] = {}  # port -> [tid, tries left, timer handle]

    def buffers(self):
        """The management port's VL15 buffers (for packet counts)."""
        return self.bufs.values()

    def forward(self, smp, port, now):
        self.send_out(smp, port, now)

    def send_out(self, smp: Smp, port: int, now: float, dlid: int = PERMISSIVE_LID) -> None:
        """Originate a packet carrying *smp* on output *port* through the management port."""
        node = self.node
        tx = node.tx.get(port)
        if tx is None:
            self.sm.lose(smp, "bad-path")
            return
        p = smp_packet(smp, self.lids.get(0, (0, 0))[0], dlid, now)
        buf = self.bufs.get(port)
        if buf is None:
            buf = self.bufs[port] = Vl15Buffer(self.mrx, VL15, 1 << 30)
        p.out_port = tx
        p.out_vl = VL15
        p.head_at = p.tail_at = p.ready_at = now
        self.sim.stats.injected += 1
        q = buf.q
        q.append(p)
        buf.occ += p.credits
        if len(q) == 1:
            tx.mcands.append(buf)
            xf = self.mrx.xbar_free
            tx.poke(xf if xf > now else now)

    def lid_routed(self, smp, slid, now):
        """A ``SubnTrapRepress`` for a pending trap of this switch stops its resending."""
        if smp.method == TRAP_REPRESS:
            entry = self.traps.get(smp.modifier)
            if entry is not None and entry[0] == smp.tid:
                if entry[2] is not None:
                    entry[2].cancel()
                del self.traps[smp.modifier]

    # ------------------------------------------------------------ traps

    def port_changed(self, port, old, new, now):
        super().port_changed(port, old, new, now)
        if not self.alive():
            self._flush(now)
            return
        if new == DOWN or (old == DOWN and new == INIT):
            old_trap = self.traps.pop(port, None)
            if old_trap is not None and old_trap[2] is not None:
                old_trap[2].cancel()
            entry = self.traps[port] = [self.sm.next_tid(), self.sm.smp_retries, None]
            self.sim.call_at(now + self.sm.sma_delay, self._trap, port, entry)

    def _trap(self, port: int, entry: list) -> None:
        if self.traps.get(port) is not entry or not self.alive():
            return
        now = self.sim.now
        sm_lid = self.sm.lid
        lft = self.node.lft_ports
        out = lft[sm_lid] if 0 < sm_lid < len(lft) else NO_PORT
        smp = Smp(TRAP, NOTICE, port, entry[0], data={"guid": self.guid, "port": port,
                                                      "state": int(self.port_info(port)["state"])},
                  lid_routed=True)
        self.sm.smps_sent += 1
        if out in (0, NO_PORT) or out not in self.node.tx:
            self.sm.lose(smp, "no-route")
        else:
            self.send_out(smp, out, now, dlid=sm_lid)
        if entry[1] > 0:
            entry[1] -= 1
            entry[2] = self.sim.call_at(now + self.sm.smp_timeout, self._trap, port, entry)
        else:
            entry[2] = None

    def _flush(self, now: float) -> None:
        """The node failed: what waits in the management port is lost, its traps stop."""
        for buf in self.bufs.values():
            q = buf.q
            if q:
                c = q[0].out_port.mcands
                if buf in c:
                    c.remove(buf)
            while q:
                self.sim.drop(q.popleft(), NODE_DOWN, self.node)
            buf.occ = 0
        for entry in self.traps.values():
            if entry[2] is not None:
                entry[2].cancel()
        self.traps.clear()


class HcaAgent(Agent):
    """The agent of a channel adapter; on the SM's node it also hands responses and traps to the SM."""

    def send_out(self, smp, port, now, dlid=PERMISSIVE_LID):
        tx = self.node.tx.get(port)
        if tx is None:
            self.sm.lose(smp, "bad-path")
            return
        tx.enqueue(smp_packet(smp, self.lids.get(port, (0, 0))[0], dlid, now))

    def at_manager(self, smp):
        """A returning SMP reached its first hop: the SM takes the response if it runs on this
        node; elsewhere the SMP is lost (``bad-path``).
        """
        if self.node is self.sm.host:
            self.sm.on_response(smp)
        else:
            self.sm.lose(smp, "bad-path")

    def lid_routed(self, smp, slid, now):
        """A trap reaching the SM's own node is handed to the SM."""
        if self.node is self.sm.host and smp.method == TRAP:
            self.sm.on_trap(smp, slid)
