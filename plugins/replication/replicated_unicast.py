"""The ``replicated-unicast`` replication engine: multicast with no switch support (Kim et al. 2007, §5.2).

No switch support: the source HCA sends one unicast copy to each member
(``HCA.send_multicast``).  A fabric-wide choice: every switch with
multicast entries must name it.
"""

from __future__ import annotations

from .base import ReplicationEngine

__all__ = ["ReplicatedUnicast"]


class ReplicatedUnicast(ReplicationEngine):
    """No switch support: the source sends one unicast copy per member (module docstring)."""

    name = "replicated-unicast"
    source_copies = True
