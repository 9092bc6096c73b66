"""Multicast replication engines: how a switch sends the copies of a multicast packet.

A switch with multicast forwarding-table entries builds one engine
(``replication`` parameter, options from ``replicationOptions``) and its
output ports ask it before they serve unicast packets
(:mod:`ibfabric.components.switch.multicast`).  Kim et al. 2007 §3.6.1 and §5.2
compare four schemes; all four are here, a module each:

``asynchronous`` (the default; :mod:`~ibfabric.plugins.replication.asynchronous`)
    Copies leave independently, each as soon as its output port is free and
    has the credits, the others from a one-packet extra buffer of the input
    port.
``synchronous`` (:mod:`~ibfabric.plugins.replication.synchronous`)
    A ready multicast packet reserves every output port it needs, and its
    copies start together, in lock step.
``central-buffer`` (:mod:`~ibfabric.plugins.replication.central_buffer`)
    A ready multicast packet moves into a central buffer, one copy queued in
    the multicast FIFO of each output port.
``replicated-unicast`` (:mod:`~ibfabric.plugins.replication.replicated_unicast`)
    No switch support: the source HCA sends one unicast copy to each member.

Every switch engine serves multicast copies before unicast packets (§5.2:
"we give multicast traffic higher priority over unicast traffic in
reserving the output VLs") and outside the VL arbiter, unless a bandwidth
policy puts multicast on VLs of its own (:mod:`ibfabric.components.qos.mcastbw`):
then ``asynchronous`` and ``central-buffer`` offer their copies to the VL
arbiter (``offers``/``send_offer``), and ``synchronous``, whose lock step
needs priority, works only where the ports have output buffers (its lock
step is then at the crossbar; the links arbitrate).

The engines work with either output side of a port (straight to the link,
or output VL buffers): what they use of a port is its multicast state
(``mq``, ``mfifo``, ``owner``) and ``has_room``, ``room_time``,
``room_at``, ``accept``, ``free_at``, ``poke`` (:mod:`ibfabric.components.switch.tx`).
The engine API (``attach``, ``register``, ``unregister``, ``serve``,
``sendable``, ``held``, ``port_left``, ``flush``, ``waits``, ``nodes``) is
described in ``docs/plugins.md``; its base class, :class:`ReplicationEngine`
(:mod:`~ibfabric.plugins.replication.base`), is what an engine of another
plugin subclasses: ``from ibfabric.plugins.replication import ReplicationEngine``.

This module registers the four as the built-in plugin ``replication``.
"""

from __future__ import annotations

from ibfabric.plugins.manager import hookimpl

from .asynchronous import Asynchronous
from .base import ReplicationEngine
from .central_buffer import CentralBuffer
from .replicated_unicast import ReplicatedUnicast
from .synchronous import Synchronous

__all__ = ["ReplicationEngine", "Asynchronous", "Synchronous", "CentralBuffer", "ReplicatedUnicast"]


@hookimpl
def ibfabric_register_replication_engines(register) -> None:
    register("asynchronous", Asynchronous,
             description="copies leave independently; one-packet extra buffer per input port (Kim et al.)")
    register("synchronous", Synchronous,
             description="lock-step copies after reserving every output, FCFS among multicast packets")
    register("central-buffer", CentralBuffer,
             description="a multicast FIFO per output in a central buffer of size= bytes, before unicast")
    register("replicated-unicast", ReplicatedUnicast,
             description="no switch support: the source sends a unicast copy to each member")
