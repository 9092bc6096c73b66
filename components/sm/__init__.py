"""The subnet manager (DESIGN §3), static and in motion.

- :mod:`~ibfabric.components.sm.subnet_manager`: the ``SubnetManager`` module type: LID
  assignment, routing through the routing plugin and table installation at time 0 (the static
  subnet manager); with ``dynamic = true`` it keeps a dynamic one after this set-up;
- :mod:`~ibfabric.components.sm.cost`: the computation-time model of routing (counted work times a
  per-engine cost);
- :mod:`~ibfabric.components.sm.smp`: SMPs, VL15 packets carrying a MAD payload;
- :mod:`~ibfabric.components.sm.agent`: the subnet management agent of every switch and channel adapter;
- :mod:`~ibfabric.components.sm.manager`: the dynamic SM itself: sweeps, traps, assimilation timeline;
- :mod:`~ibfabric.components.sm.report`: what the dynamic SM reports: its summary sections, the
  assimilation timeline as text.

docs/subnet-manager.md describes the whole.
"""
