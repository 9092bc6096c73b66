"""Hook specifications of ibfabric, in the order a simulation calls them.

A plugin is a module (or object) with functions decorated by
``ibfabric.hookimpl`` whose names are the hooks below.  It reaches ibfabric
through an entry point in the ``ibfabric`` group of its ``pyproject.toml``::

    [project.entry-points.ibfabric]
    myrouting = "myrouting"

or, for one experiment, through ``Simulation(..., plugins=[module])``.
Built-in implementations are loaded the same way.

Contribution hooks receive a ``register`` callback and call it once per
implementation they provide; the registries reject duplicate names.  They are
called once, when a simulation (or the CLI) builds its plugin manager.
Observer hooks are called rarely (once per network built, once per run); no
hook is ever called per packet: the objects that contribution hooks register
are asked, at build time, for the strategy objects that the data path calls
directly.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

import pluggy

if TYPE_CHECKING:  # pragma: no cover
    from ibfabric.simulation import Simulation

hookspec = pluggy.HookspecMarker("ibfabric")

__all__ = ["hookspec"]


# -------------------------------------------------------------------------
# Registration: called once when a plugin manager is built
# -------------------------------------------------------------------------


@hookspec
def ibfabric_register_module_types(register: Callable[..., None]) -> None:
    """Register simple-module types: a NED declaration and its Python class.

    Called when a simulation builds its type library, before any topology
    file is elaborated.

    Parameters
    ----------
    register : callable
        ``register(name, cls, ned=source)``: ``name`` is the qualified type name the NED source
        declares (``'mypkg.Probe'``), ``cls`` a subclass of :class:`ibfabric.Module` (or of
        :class:`ibfabric.Channel` for a channel type) and ``ned`` the NED text declaring it.
        One ``ned`` text may declare several types; pass it with each of them.

    Returns
    -------
    None
    """


@hookspec
def ibfabric_register_routing_engines(register: Callable[..., None]) -> None:
    """Register routing engines, which the subnet manager runs.

    Parameters
    ----------
    register : callable
        ``register(name, compute, description='')``. ``compute(fabric, options, rng)`` receives
        a :class:`ibfabric.components.routing.fabric.FabricGraph`, a dict of string options (from the
        subnet manager's ``routingOptions``) and a ``numpy.random.Generator``, and returns
        :class:`ibfabric.components.routing.tables.ForwardingTables`.

    Returns
    -------
    None
    """


@hookspec
def ibfabric_register_multicast_routing(register: Callable[..., None]) -> None:
    """Register multicast routing engines, which build the multicast forwarding tables of declared groups.

    Called once per plugin manager; the subnet manager runs the engine its
    ``multicastRouting`` parameter names, after the unicast routing engine,
    only when groups are declared (``multicastGroups``).

    Parameters
    ----------
    register : callable
        ``register(name, compute, description='')``. ``compute(tables, groups, options, rng)``
        receives the unicast :class:`ibfabric.components.routing.tables.ForwardingTables`, a tuple of
        :class:`ibfabric.components.routing.mgroups.MulticastGroup` (members, senders, MLID if
        declared), a dict of string options (the subnet manager's ``multicastOptions``) and a
        ``numpy.random.Generator``; it returns :class:`ibfabric.components.routing.mfts.MulticastTables`
        whose ``groups`` are the same groups with their MLIDs assigned
        (:func:`ibfabric.components.routing.mgroups.assign_mlids`).

    Returns
    -------
    None
    """


@hookspec
def ibfabric_register_vl_arbiters(register: Callable[..., None]) -> None:
    """Register VL arbiters, which choose the VL an output port sends next.

    Parameters
    ----------
    register : callable
        ``register(name, factory, description='')``. ``factory(config)`` receives an
        :class:`ibfabric.plugins.arbiters.ArbiterConfig` for one port (its VLArbitrationTables,
        its path and, as ``config.rng``, the port's own ``numpy.random.Generator`` derived from
        the run's seed) and returns an object with a method ``select(ready) -> int``: ``ready``
        is a list indexed by data VL holding the packet that VL would send now (None if it has
        none it may send); ``select`` returns the chosen VL and accounts for that packet being
        sent.  An arbiter whose choice is always VL 0 when a port has a single data VL, with no
        state a user could observe, may set ``single_vl_trivial = True`` so that such ports skip
        the call.

    Returns
    -------
    None
    """


@hookspec
def ibfabric_register_packet_droppers(register: Callable[..., None]) -> None:
    """Register packet droppers, which may discard packets in switch buffers.

    Parameters
    ----------
    register : callable
        ``register(name, factory, description='')``. ``factory(options, rng)`` receives a dict
        of string options (the switch's ``dropperOptions``) and a ``numpy.random.Generator`` and
        returns a :class:`ibfabric.plugins.droppers.Dropper`: its
        ``on_arrival(packet, buffer, now)`` may discard an arriving packet, and with
        ``lifetimes = True`` its ``expiry(packet, buffer, head_since)`` gives the time a packet
        that reached the head of its VL queue is discarded (HLL, SLL).

    Returns
    -------
    None
    """


@hookspec
def ibfabric_register_replication_engines(register: Callable[..., None]) -> None:
    """Register multicast replication engines.

    Parameters
    ----------
    register : callable
        ``register(name, factory, description='')``. ``factory(options, rng)`` receives a dict
        of string options (the switch's ``replicationOptions``) and a ``numpy.random.Generator``
        and returns the engine one switch uses to send the copies of a multicast packet to the
        ports of its MFT entry: an :class:`ibfabric.plugins.replication.ReplicationEngine`
        (``attach``, ``register``, ``serve``, ``sendable``, ``held``, ``waits``, ``nodes``; see
        ``docs/plugins.md``), or one with ``source_copies = True``, for which the source HCA
        sends unicast copies instead.  Built only for switches with multicast entries.

    Returns
    -------
    None
    """


@hookspec
def ibfabric_register_path_selectors(register: Callable[..., None]) -> None:
    """Register path selectors, which pick one of several routes to a destination.

    Parameters
    ----------
    register : callable
        ``register(name, factory, description='')``; the factory builds the object that chooses
        among the output ports a multipath forwarding table offers.

    Returns
    -------
    None
    """


@hookspec
def ibfabric_register_traffic_patterns(register: Callable[..., None]) -> None:
    """Register traffic patterns, which choose the destinations of generated traffic.

    Parameters
    ----------
    register : callable
        ``register(name, factory, description='')``. ``factory(num_hosts, options, rng)``
        receives the number of traffic endpoints, a dict of string options (the HCAs'
        ``trafficOptions``) and the pattern's own ``numpy.random.Generator``, and returns a
        :class:`ibfabric.plugins.traffic.TrafficPattern` (the options it takes in
        ``option_names``; the built-in patterns and their options are described in
        ``docs/traffic.md``).  Registered with ``host_names=True``, the factory is also
        given ``host_names=``, the endpoints' module paths in endpoint order, so that its
        options may name hosts (:func:`ibfabric.plugins.traffic.host_index`).

    Returns
    -------
    None
    """


@hookspec
def ibfabric_register_arbitration_policies(register: Callable[..., None]) -> None:
    """Register arbitration policies, which fill the VLArbitrationTables of output ports as connections are admitted.

    Used by QoS runs (:class:`ibfabric.components.qos.cbr.QosNetwork`): when a
    connection with a bandwidth requirement is requested, every output port
    on its path asks its policy's table state whether it fits; it is
    established only if all agree, and the tables they compute are installed
    in the ports' ``iba-vlarb`` arbiters.

    Parameters
    ----------
    register : callable
        ``register(name, factory, description='')``. ``factory(options)`` receives a dict of
        options (strings from the command line, or values from Python) and returns a policy
        object with a method ``new_port(rate, classes, name)``: *rate* is the port's link rate
        in bit/s, *classes* a :class:`ibfabric.components.qos.ClassMap`, *name* the port's name
        for messages; it returns the port's table state, an object with the methods of
        :class:`ibfabric.components.qos.PortTable` (``check``, ``reserve``, ``release``,
        ``tables``, ``reserved``).

    Returns
    -------
    None
    """


@hookspec
def ibfabric_register_workloads(register: Callable[..., None]) -> None:
    """Register workloads: application traffic as rank programs (collectives, exchanges).

    Called once per plugin manager; ``ibfabric run --workload NAME:size=...,reps=...``
    and :func:`ibfabric.plugins.workloads.build_schedule` use them.

    Parameters
    ----------
    register : callable
        ``register(name, build, description='')``. ``build(b, size, options)`` appends one
        repetition of the workload to ``b``, an :class:`ibfabric.components.hca.schedule.ScheduleBuilder`
        of ``b.num_ranks`` ranks (operations ``b.send``, ``b.recv``, ``b.calc``; a rank's first
        operations require ``b.entry[rank]``; tags from ``b.tag_base`` on), for a message size of
        ``size`` bytes and a dict of string ``options``, whose names ``build.option_names`` lists.

    Returns
    -------
    None
    """


# -------------------------------------------------------------------------
# Observation: called rarely, never per packet
# -------------------------------------------------------------------------


@hookspec
def ibfabric_simulation_built(simulation: "Simulation") -> None:
    """Called once the network is built and initialised, before time 0 runs.

    Plugins may subscribe to signals or schedule scripted events here.

    Parameters
    ----------
    simulation : ibfabric.Simulation
        The simulation, built and initialised, at time 0 before any event has run.

    Returns
    -------
    None
    """


@hookspec
def ibfabric_scenario_event(simulation: "Simulation", event: dict[str, Any]) -> None:
    """Called when a scenario action happens: a link or node fails or comes back, traffic changes
    (:mod:`ibfabric.scenario`), after the data path has applied it.

    A subnet manager or an observer may react here (schedule more events, record the time).

    Parameters
    ----------
    simulation : ibfabric.Simulation
        The simulation the action happened in (``simulation.now`` is its time).
    event : dict
        The entry added to ``simulation.scenario_log``: ``time_ns``, ``action`` (``fail-link``,
        ``restore-link``, ``link-up``, ``fail-node``, ``restore-node``, ``node-up``,
        ``set-traffic``), ``target``, ``result``, and ``lost`` for failures.

    Returns
    -------
    None
    """


@hookspec
def ibfabric_run_finished(simulation: "Simulation", summary: dict[str, Any]) -> None:
    """Called after a run ends and the modules' ``finish()`` have run.

    Parameters
    ----------
    simulation : ibfabric.Simulation
        The simulation whose run ended.
    summary : dict
        The run's summary as a dict (the content of ``summary.json``); plugins may add keys to
        it.

    Returns
    -------
    None
    """
