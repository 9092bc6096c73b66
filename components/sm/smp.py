"""Subnet management packets (SMPs): VL15 packets carrying a MAD.

An SMP is an ordinary :class:`~ibfabric.components.packet.Packet` on VL15
(:class:`SmpPacket` adds one slot, ``smp``, for its payload): it travels
the real data path -- the VL15 input buffers, VL15 priority on every output
port, no credits -- and is lost like any packet on a dead link or port.
The payload, an :class:`Smp`, is a Python object (the 256-byte MAD is only
its size on the wire).

Two kinds of routing (IBA vol. 1 §14.2.2):

- **directed route** (DLID :data:`PERMISSIVE_LID`): the SMP names the
  output port to take at every hop (``path``; ``path[0]`` is the SM's own
  port), a hop pointer, and collects the input port of every hop
  (``rpath``); the response goes back along ``rpath`` reversed.  At a switch
  its DLID is past every forwarding table, so it reaches the no-route branch
  of :meth:`SwitchRx.receive <ibfabric.components.switch.SwitchRx.receive>`,
  which hands it to the switch's agent.  Channel adapters never forward one.
- **LID-routed**: a normal DLID, looked up in the forwarding tables (traps
  to the SM, the SM's TrapRepress back).
"""

from __future__ import annotations

from typing import Any

import attrs

from ..packet import VL15, Packet, credits_for

__all__ = ["Smp", "SmpPacket", "PERMISSIVE_LID", "MAD_BYTES", "GET", "SET", "GET_RESP", "TRAP", "TRAP_REPRESS",
           "NODE_INFO", "PORT_INFO", "LFT", "RFT", "SWITCH_INFO", "NOTICE", "LFT_BLOCK", "RFT_BLOCK", "smp_packet"]

#: The DLID of directed-route SMPs.
PERMISSIVE_LID = 0xFFFF
#: Wire size of an SMP (a 256-byte MAD; its few header bytes are left out).
MAD_BYTES = 256
#: Entries per SubnSet(LinearForwardingTable) block.
LFT_BLOCK = 64
#: (LID, port) entries per SubnSet(RandomForwardingTable) block.
RFT_BLOCK = 16

# methods (IBA Table 27-1 names)
GET, SET, GET_RESP, TRAP, TRAP_REPRESS = "SubnGet", "SubnSet", "SubnGetResp", "SubnTrap", "SubnTrapRepress"
# attributes
NODE_INFO, PORT_INFO, LFT, NOTICE = "NodeInfo", "PortInfo", "LinearForwardingTable", "Notice"
RFT, SWITCH_INFO = "RandomForwardingTable", "SwitchInfo"


@attrs.define(eq=False)
class Smp:
    """The MAD of one SMP.

    ``method``/``attr``/``modifier`` as in IBA (modifier: the port of a
    PortInfo, the block of a LinearForwardingTable); ``tid`` the
    transaction id; ``data`` what a Set carries or a response returns.
    Directed route: ``path`` (output port per hop), ``hop`` (the hop
    pointer: next entry of ``path`` outbound, nodes left inbound),
    ``rpath`` (the input port at every hop), ``returning`` (the direction
    bit).  LID-routed SMPs have an empty ``path`` and ``lid_routed`` set.
    """

    method: str
    attr: str
    modifier: int = 0
    tid: int = 0
    data: Any = None
    path: tuple[int, ...] = ()
    hop: int = 0
    rpath: list[int] = attrs.field(factory=list)
    returning: bool = False
    lid_routed: bool = False


@attrs.define(slots=True, eq=False, repr=False)
class SmpPacket(Packet):
    """A VL15 packet with its MAD (:class:`Smp`) in ``smp``."""

    smp: Any = None

    def __repr__(self) -> str:
        s = self.smp
        return f"<SmpPacket {s.method}({s.attr}, {s.modifier}) tid={s.tid} {self.slid}->{self.dlid}>"


def smp_packet(smp: Smp, slid: int, dlid: int, now: float) -> SmpPacket:
    """A fresh SMP packet for *smp* (one per hop an agent originates)."""
    return SmpPacket(slid, dlid, 0, MAD_BYTES, credits_for(MAD_BYTES), created=now, vl=VL15, smp=smp)
