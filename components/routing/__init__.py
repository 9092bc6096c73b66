"""The routing view of a subnet: what routing engines, route checks and the subnet manager share.

- :mod:`~ibfabric.components.routing.fabric`: :class:`~ibfabric.components.routing.fabric.FabricGraph`,
  a subnet's nodes, ports, links and LIDs as arrays;
- :mod:`~ibfabric.components.routing.tables`: :class:`~ibfabric.components.routing.tables.ForwardingTables`,
  the tables a routing engine fills;
- :mod:`~ibfabric.components.routing.routecheck`: checks of those tables (reachability, loops,
  path lengths, link load, deadlock freedom);
- :mod:`~ibfabric.components.routing.opensm`: OpenSM's ``opensm-lfts.dump`` format;
- :mod:`~ibfabric.components.routing.mgroups`, :mod:`~ibfabric.components.routing.mfts` and
  :mod:`~ibfabric.components.routing.mtrees`: multicast groups, multicast forwarding tables
  (and OpenSM's ``opensm-mfts.dump``), distribution trees;
- :mod:`~ibfabric.components.routing.validate`: what a valid subnet is, the rules every way into
  ibfabric shares.

The routing engines themselves are plugins (:mod:`ibfabric.plugins.routing`); nothing here
simulates.
"""
