"""The dynamic subnet manager and its agents (DESIGN §3: the subnet manager in motion).

- :mod:`~ibfabric.components.sm.smp`: SMPs, VL15 packets carrying a MAD payload;
- :mod:`~ibfabric.components.sm.agent`: the subnet management agent of every switch and channel adapter;
- :mod:`~ibfabric.components.sm.manager`: the SM itself: sweeps, traps, assimilation timeline.

The static subnet manager (:mod:`ibfabric.components.subnet_manager`) builds it when its
``dynamic`` parameter is true; docs/subnet-manager.md describes the whole.
"""

from .manager import SMP_LOST, DynamicSM, attach
from .smp import MAD_BYTES, PERMISSIVE_LID, Smp, SmpPacket

__all__ = ["DynamicSM", "attach", "SMP_LOST", "Smp", "SmpPacket", "MAD_BYTES", "PERMISSIVE_LID"]
