"""The built-in routing engines, each an ordinary plugin, and the helpers they share.

An engine module registers its engine (or engines) through
``ibfabric_register_routing_engines`` and is listed in the ``ibfabric``
entry-point group of ``pyproject.toml``.  An engine is a function
``compute(fabric, options, rng)`` of a
:class:`~ibfabric.components.routing.fabric.FabricGraph` that returns
:class:`~ibfabric.components.routing.tables.ForwardingTables`; docs/routing.md
describes each one.  ``metrics``, ``pathbits`` and ``pathtables`` are shared
helpers, not engines.
"""
