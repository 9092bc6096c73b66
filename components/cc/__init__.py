"""InfiniBand congestion control (IBA 1.2.1 Annex A10), configured as OpenSM's cc manager does.

- :mod:`~ibfabric.components.cc.settings`: the architecture's attributes
  (Switch Congestion Setting, CA Congestion Setting, Congestion Control
  Table) from the ``SubnetManager``'s parameters or an OpenSM cc file;
- :mod:`~ibfabric.components.cc.marking`: FECN marking at a congested root
  port, a watcher of each switch output port;
- :mod:`~ibfabric.components.cc.source`: each flow's CCT index at the
  source and the inter-packet delay it gives, in the port's own wake-up;
- :mod:`~ibfabric.components.cc.manager`: the set-up, CNPs from the
  destination, BECNs at the source, counts and the summary section;
- :mod:`~ibfabric.components.cc.flows`: per-flow throughput and latency,
  victims and contributors (with congestion control on or off).

Off by default: a run without it builds none of these and runs the data
path as before (docs/congestion-control.md).
"""
