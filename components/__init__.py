"""The InfiniBand components: switches, channel adapters, links, the subnet manager and their data path.

Each simple-module type is a NED declaration (``ib.ned``) paired with a
Python class (:class:`~ibfabric.components.switch.Switch`,
:class:`~ibfabric.components.hca.HCA`, :class:`~ibfabric.components.link.Link`,
:class:`~ibfabric.components.sm.subnet_manager.SubnetManager`), registered by the
built-in plugin :mod:`ibfabric.components.plugin`.

The modules of this package are the core every node shares: packets
(:mod:`~ibfabric.components.packet`), ports and their states
(:mod:`~ibfabric.components.port`, :mod:`~ibfabric.components.portstate`), links and
rates (:mod:`~ibfabric.components.link`, :mod:`~ibfabric.components.rates`), the IB
node base class (:mod:`~ibfabric.components.node`), the port event loop
(:mod:`~ibfabric.components.eventloop`) and failures
(:mod:`~ibfabric.components.failures`).  The rest is by family, a subpackage each:

- :mod:`~ibfabric.components.switch`: the switch and its stages;
- :mod:`~ibfabric.components.hca`: the channel adapter, its ports' send and receive
  sides, its traffic sources and workloads;
- :mod:`~ibfabric.components.routing`: the routing view that engines, checks and the
  subnet manager share (:class:`~ibfabric.components.routing.fabric.FabricGraph`,
  :class:`~ibfabric.components.routing.tables.ForwardingTables`, route checks, OpenSM
  formats, multicast tables, validation);
- :mod:`~ibfabric.components.qos`: QoS policy, admission and CBR connections, and the
  bandwidth given to multicast;
- :mod:`~ibfabric.components.sm`: the subnet manager, static and dynamic.
"""
