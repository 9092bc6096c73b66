"""A third-party ibfabric plugin: one implementation for every role.

It imports nothing from ibfabric but ``hookimpl`` and the public classes a
plugin author builds on, exactly as an outside package would.
"""

from collections import deque

import numpy as np

from ibfabric import Module, hookimpl
from ibfabric.components.tables import NO_PORT, ForwardingTables
from ibfabric.plugins.droppers import Dropper
from ibfabric.plugins.traffic import TrafficPattern


def lowest_port_bfs(fabric, options, rng):
    """Min-hop routes found by a plain BFS per destination, ties to the lowest port."""
    lft = np.full((len(fabric.switches), fabric.max_lid + 1), NO_PORT, dtype=np.uint8)
    for e in range(len(fabric.ep_lid)):
        lids = range(int(fabric.ep_lid[e]), int(fabric.ep_lid[e]) + (1 << int(fabric.ep_lmc[e])))
        node = int(fabric.ep_node[e])
        dist = {node: 0}
        via = {}
        q = deque([node])
        while q:
            x = q.popleft()
            for p in fabric.ports(x):
                y = int(fabric.peer_node[x, p])
                if y not in dist and fabric.is_switch[y]:
                    dist[y] = dist[x] + 1
                    q.append(y)
        for s in fabric.switches:
            s = int(s)
            if s == node:
                best = 0
            elif s in dist:
                best = min(p for p in fabric.ports(s) if dist.get(int(fabric.peer_node[s, p]), 1 << 30) == dist[s] - 1)
            else:
                continue
            for lid in lids:
                lft[fabric.switch_row[s], lid] = best
    return ForwardingTables(fabric, lft, engine="demo-bfs")


class StrictPriority:
    """The lowest ready VL always goes first."""

    def __init__(self, config):
        self.num_vls = config.num_vls

    def select(self, ready):
        for vl, p in enumerate(ready):
            if p is not None:
                return vl
        raise ValueError("nothing ready")


class Neighbour(TrafficPattern):
    """Every host sends to the next one."""

    name = "neighbour"

    def destinations(self, src, rng, n):
        return np.full(n, (src + 1) % self.num_hosts)


class RandomEarlyDrop(Dropper):
    """Drops each arriving packet with probability p (option p, default 0.05)."""

    def __init__(self, options, rng):
        self.p = float(options.get("p", "0.05"))
        self.rng = rng

    def on_arrival(self, packet, buffer, now):
        return bool(self.rng.random() < self.p)


class CopyEverywhere:
    """A replication engine stand-in that lists every port of a group."""

    def __init__(self, config=None):
        self.config = config


class FirstPath:
    """A path selector that takes the first offered port."""

    def __init__(self, config=None):
        self.config = config

    def choose(self, ports):
        return ports[0]


class FlatShare:
    """An arbitration policy: admit while a link has bandwidth left; every class VL at weight 32."""

    def __init__(self, options=None):
        self.options = dict(options or {})

    def new_port(self, rate, classes, name=""):
        return FlatPort(rate, classes)


class FlatPort:
    def __init__(self, rate, classes):
        self.rate = rate
        self.vls = sorted(set(classes.sl2vl))
        self.held = {}

    def check(self, demand):
        left = self.rate - sum(self.held.values())
        return None if demand.bandwidth <= left else f"bandwidth: {left:g} bit/s left"

    def reserve(self, demand):
        self.held[demand.conn] = demand.bandwidth

    def release(self, conn):
        self.held.pop(conn, None)

    def tables(self):
        return (), tuple((vl, 32) for vl in self.vls), 0

    def reserved(self):
        return float(sum(self.held.values()))


class DeliveryCounter(Module):
    """Counts packets delivered in the whole network through the packetReceived signal."""

    def initialize(self, stage):
        self.count = 0
        self.sim.signals.subscribe("packetReceived", self._on_delivery)

    def _on_delivery(self, module, signal, value, time):
        self.count += 1

    def finish(self):
        self.final = self.count


NED = """
package demo;

simple DeliveryCounter
{
    parameters:
        string label = "counter";
}
"""


@hookimpl
def ibfabric_register_routing_engines(register):
    register("demo-bfs", lowest_port_bfs, description="BFS min-hop, lowest port")


@hookimpl
def ibfabric_register_vl_arbiters(register):
    register("strict-priority", StrictPriority, description="lowest VL first")


@hookimpl
def ibfabric_register_traffic_patterns(register):
    register("neighbour", Neighbour, description="host i sends to host i+1")


@hookimpl
def ibfabric_register_packet_droppers(register):
    register("random-early", RandomEarlyDrop, description="drop with probability p")


@hookimpl
def ibfabric_register_replication_engines(register):
    register("copy-everywhere", CopyEverywhere)


@hookimpl
def ibfabric_register_path_selectors(register):
    register("first-path", FirstPath)


@hookimpl
def ibfabric_register_module_types(register):
    register("demo.DeliveryCounter", DeliveryCounter, ned=NED)


@hookimpl
def ibfabric_register_arbitration_policies(register):
    register("flat-share", FlatShare, description="bandwidth admission, equal weights")
