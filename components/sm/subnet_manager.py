"""The subnet manager (static version).

At time 0 (init stage 2) it reads the subnet from the built network, gives a
LID to every port that has none (breadth-first from the node it runs on;
with ``lmc`` above 0 it also moves the LIDs that do not give a CA port
``2**lmc`` aligned LIDs, as OpenSM does),
runs the routing-engine plugin named by its ``routing`` parameter and
installs the resulting forwarding tables in every switch.  With multicast
groups declared (``multicastGroups``), the multicast-routing plugin named by
``multicastRouting`` then builds their multicast forwarding tables, published
as ``sim.tables.mft`` (:mod:`ibfabric.components.routing.mtrees`).  Discovery with
directed-route SMPs, sweeps and change assimilation belong to the dynamic
subnet manager: with ``dynamic = true`` the module keeps one
(:mod:`ibfabric.components.sm`, docs/subnet-manager.md) after this set-up.
"""

from __future__ import annotations

import time

import numpy as np

from ibfabric.errors import ConfigError, IbfabricError, PluginError
from ibfabric.kernel import Module

from ..node import STAGE_SUBNET, IBNode, parse_options
from ..routing.fabric import FabricGraph, Link, moved_lids_message, node_spec
from ..routing.tables import NO_PORT, ForwardingTables

__all__ = ["SubnetManager", "fabric_of"]


def fabric_of(nodes: list[IBNode], sm_node: int | None = None) -> FabricGraph:
    """The routing view of built IB nodes (in the given order), checked as every fabric is
    (:mod:`ibfabric.components.routing.validate`); errors carry the place each node or link is declared."""
    index = {id(n): i for i, n in enumerate(nodes)}
    specs = []
    links = []
    for i, n in enumerate(nodes):
        loc = n.spec.location
        specs.append(node_spec(n.path, n.is_switch, int(n.params["numPorts"]), n.lid, n.lmc, n.params,
                               where=str(loc) if loc is not None else ""))
        gates = n.gate_vector("port")
        for port, (peer, pp, link) in n.links.items():
            j = index[id(peer)]
            if (i, port) < (j, pp):
                gloc = gates[port].location
                links.append(Link(i, port, j, pp, width=link.width, speed=link.speed, rate=link.rate,
                                  where=str(gloc) if gloc is not None else ""))
    return FabricGraph(specs, links, sm_node=sm_node)


class SubnetManager(Module):
    """Assigns LIDs, computes routes with the routing plugin and installs them."""

    def num_init_stages(self) -> int:
        return STAGE_SUBNET + 1

    def initialize(self, stage: int) -> None:
        if stage == STAGE_SUBNET:
            tables = self.configure()
            if self.params["dynamic"]:  # the subnet manager in simulated time (components/sm)
                from .manager import attach

                self.dynamic = attach(self, tables, self._declared)
            from ..cc.manager import configure as configure_cc

            #: the fabric's congestion control (:mod:`ibfabric.components.cc`), or None when it is off
            self.cc = configure_cc(self)

    def configure(self) -> ForwardingTables:
        """Assign LIDs, run the routing engine and install its tables in every switch.

        The fabric is the simulation's IB nodes with the SM at the node named by
        the ``node`` parameter; missing LIDs are assigned with the ``lmc``
        parameter, and with ``lmc`` above 0 the LIDs that do not give a CA
        port ``2**lmc`` aligned LIDs are reassigned (a warning says which:
        :meth:`FabricGraph.with_lmc <ibfabric.components.routing.fabric.FabricGraph.with_lmc>`);
        the LIDs are pushed to the nodes; the engine named by ``routing``
        (with ``routingOptions``) computes the forwarding tables, and the
        multicast groups of ``multicastGroups``, if any, are routed into them.

        Returns
        -------
        ForwardingTables
            The installed tables.

        Raises
        ------
        ConfigError
            If the network has no IB nodes or ``node`` names none.
        PluginError
            If the routing engine returns something else than ForwardingTables, or
            routes a switch's own LID away from it.
        """
        sim = self.sim
        nodes = sim.ib_nodes
        if not nodes:
            raise ConfigError(f"{self.path}: the network has no InfiniBand nodes")
        sm_node = self._locate(nodes)
        fabric = self._declared = fabric_of(nodes, sm_node)
        lmc = int(self.params["lmc"])
        try:
            fabric, moved = fabric.with_lmc(lmc)
        except IbfabricError as exc:
            raise type(exc)(f"{self.path}: {exc}") from None
        if moved:  # LIDs from a dump or a NED file, given with a smaller LMC
            sim.warn(f"{self.path}: {moved_lids_message(fabric, moved, lmc)}")
        self._push_lids(nodes, fabric)
        name = str(self.params["routing"])
        reg = sim.plugins.routing_engines.get(name)
        options = parse_options(str(self.params["routingOptions"]), self.path, "routingOptions")
        t0 = time.perf_counter()
        tables = reg.create(fabric, options, self.rng)
        sim.routing_time = time.perf_counter() - t0
        if not isinstance(tables, ForwardingTables):
            raise PluginError(f"routing engine '{name}' returned {type(tables).__name__}, not ForwardingTables")
        groups = str(self.params["multicastGroups"])
        if groups.strip():  # without groups the MFTs stay empty and nothing else is looked at
            from ..routing.mtrees import route_groups

            tables.mft = route_groups(tables, groups, str(self.params["multicastRouting"]),
                                      str(self.params["multicastOptions"]), sim.plugins, self.rng, owner=self.path)
        self.install(tables)
        return tables

    def _locate(self, nodes: list[IBNode]) -> int | None:
        where = str(self.params["node"])
        if not where:
            return None
        for i, n in enumerate(nodes):
            if n.path == where or n.path.endswith("." + where) or n.full_name == where:
                return i
        raise ConfigError(f"{self.path}: 'node' names '{where}', which is not a switch or channel adapter")

    def _push_lids(self, nodes: list[IBNode], fabric: FabricGraph) -> None:
        per_node: dict[int, dict[int, tuple[int, int]]] = {}
        for e in range(len(fabric.ep_lid)):
            per_node.setdefault(int(fabric.ep_node[e]), {})[int(fabric.ep_port[e])] = (
                int(fabric.ep_lid[e]), int(fabric.ep_lmc[e]),
            )
        for i, n in enumerate(nodes):
            lids = per_node.get(i, {})
            if n.is_switch:
                n.lid, n.lmc = lids[0]
            else:
                n.set_port_lids(lids)

    def install(self, tables: ForwardingTables) -> None:
        """Install *tables* in every switch (default ports expanded) and publish them."""
        sim = self.sim
        fabric = tables.fabric
        full = tables.expanded()
        nodes = sim.ib_nodes
        for row, node_index in enumerate(fabric.switches):
            node = nodes[int(node_index)]
            ports = full[row]  # install_lft keeps it as bytes: no Python list of every LID per switch
            own = range(node.lid, node.lid + (1 << node.lmc))
            for lid in own:
                if lid < len(ports) and int(ports[lid]) not in (0, NO_PORT):
                    raise PluginError(f"routing engine '{tables.engine}' routes LID {lid} of {node.path} away from it")
            absorbed = [lid for lid in np.flatnonzero(full[row] == 0).tolist() if lid not in own]
            if absorbed:
                lid = absorbed[0]
                owner = fabric.lid_owner[lid] if lid < len(fabric.lid_owner) else -1
                whose = f" ({fabric.endpoint_name(int(owner))})" if owner >= 0 else ""
                raise PluginError(f"routing engine '{tables.engine}' sends LID {lid}{whose} to port 0 of {node.path}, "
                                  f"which only the switch's own LIDs may use")
            node.install_lft(ports)
        if len(tables.mft):  # multicast groups were declared
            self._install_mfts(tables.mft)
            self._bandwidth(tables)
        sim.tables = tables

    def _bandwidth(self, tables: ForwardingTables) -> None:
        """Apply the multicast bandwidth policy (:mod:`ibfabric.components.qos.mcastbw`)."""
        from ..qos.mcastbw import apply, plan

        opts = parse_options(str(self.params["multicastBandwidthOptions"]), self.path, "multicastBandwidthOptions")
        bw = plan(str(self.params["multicastBandwidth"]), opts, tables.mft.groups, self.sim.hosts, owner=self.path)
        if not bw.priority and tables.path_sl is not None:
            raise ConfigError(f"{self.path}: multicastBandwidth '{bw.policy}' needs SLs of its own, but the routing"
                              f" engine gives every path its SL")
        apply(self.sim, bw, owner=self.path)

    def _install_mfts(self, mft) -> None:
        """Give every switch its MFT (and so its replication engine) and start the multicast accounting."""
        from ibfabric.mstats import MulticastStats

        sim = self.sim
        nodes = sim.ib_nodes
        kinds: dict[bool, object] = {}
        for node_index, entries in mft.entries().items():
            sw = nodes[node_index]
            sw.install_mft(entries)
            if sw.replicator is not None:
                kinds.setdefault(bool(getattr(sw.replicator, "source_copies", False)), sw)
        if len(kinds) > 1:
            a, b = kinds[True], kinds[False]
            raise ConfigError(f"{self.path}: 'replicated-unicast' is a fabric-wide choice: {a.path} uses it but"
                              f" {b.path} uses '{b.replicator.name}' (set '**.replication' on every switch)")
        source_copies = kinds.keys() == {True}
        if mft.groups:
            sim.multicast = MulticastStats(sim, mft.groups, source_copies)
            sim.add_summary_section("multicast", lambda: {"multicast": sim.multicast.summary()})
            if source_copies:
                sim.delivery_listeners.append(sim.multicast.delivered)  # member copies are unicast packets
