"""IBA port states and the discard reasons of failures (IBA vol. 1 §7.2, PortInfo.PortState).

Every transmitter (:class:`~ibfabric.components.port.TxPort`) has a
``state``; both ends of a link move together in this layer (a link fails or
comes back as a whole).  What each state lets through:

============  ==========================================================
``DOWN``      nothing: the link is dead (physically down or failed)
``INIT``      VL15 (subnet management) only; data packets are discarded
``ARMED``     VL15 only, as in ``INIT`` (IBA: the port is ready to go Active)
``ACTIVE``    everything (the default of every connected port from time 0)
============  ==========================================================

A run without failures keeps every port ``ACTIVE`` and pays nothing for the
mechanism: the state is a class attribute of the transmitter, and a port
that leaves ``ACTIVE`` changes class (:mod:`ibfabric.components.failures`),
so live packets never test it.
"""

from __future__ import annotations

from enum import IntEnum

__all__ = ["PortState", "DROP_REASONS", "PORT_DOWN", "LINK_DOWN", "NODE_DOWN", "ASSIMILATION"]


class PortState(IntEnum):
    """``PortInfo.PortState`` values of the IBA specification (0 is "no state change")."""

    DOWN = 1
    INIT = 2
    ARMED = 3
    ACTIVE = 4

    @property
    def label(self) -> str:
        """The state as IBA writes it: ``Active``, ``Down``..."""
        return self.name.capitalize()


#: A packet at the head of its input VL, routed to an output port that is not Active (data
#: packets; VL15 ones too when the port is Down), or queued in the output buffer of a port that fails.
PORT_DOWN = "port-down"
#: A packet on a link when it fails: being serialised or propagating (its tail had not arrived).
LINK_DOWN = "link-down"
#: A packet stored in an input (or output) buffer of a node when the node fails.
NODE_DOWN = "node-down"
#: Reserved for the dynamic subnet manager: discarded while it reprograms forwarding tables.
ASSIMILATION = "assimilation"

#: Every reason ``summary["drops_by_reason"]`` may show, with what it means.
DROP_REASONS = {
    "no-route": "the forwarding table has no entry for the DLID (port 255)",
    "sl2vl-drop": "the SL-to-VL table maps the packet's SL to no data VL of the output port",
    "vl15-full": "a VL15 packet found the VL15 input buffer full (IBA allows the drop)",
    "dropper": "the switch's packet dropper (a plugin) discarded it on arrival",
    "misrouted": "it reached a channel adapter that does not own its DLID",
    PORT_DOWN: "routed to an output port that is not Active, or in its output buffer when it failed",
    LINK_DOWN: "on a link when the link failed (being serialised or propagating)",
    NODE_DOWN: "stored in a buffer of a node when the node failed",
    ASSIMILATION: "discarded while the subnet manager reprograms the forwarding tables (dynamic SM)",
    "smp-lost": "a subnet management packet (VL15) lost in the data path (dynamic SM; its reasons: summary"
                "['subnet_manager']['smps_lost_by_reason'])",
}
