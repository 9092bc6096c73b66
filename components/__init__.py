"""The InfiniBand components: switches, channel adapters, links, the subnet manager and their data path.

Each simple-module type is a NED declaration (``ib.ned``) paired with a
Python class (:class:`~ibfabric.components.switch.Switch`,
:class:`~ibfabric.components.hca.HCA`, :class:`~ibfabric.components.link.Link`,
:class:`~ibfabric.components.sm.subnet_manager.SubnetManager`), registered by the
built-in plugin :mod:`ibfabric.components.plugin`.  The routing view of a
subnet is :class:`~ibfabric.components.routing.fabric.FabricGraph`; the tables a
routing engine fills are :class:`~ibfabric.components.routing.tables.ForwardingTables`.
"""
