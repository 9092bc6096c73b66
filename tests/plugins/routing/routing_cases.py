"""Topologies and checks shared by the routing-engine tests."""

from __future__ import annotations

import numpy as np

from ibfabric.components.routing.fabric import FabricGraph, Link, NodeSpec
from ibfabric.testing import assert_delivers  # noqa: F401  (every endpoint pair delivered, no loops)
from ibfabric.topologies.generators import irregular

#: (switches, links per switch, hosts per switch, seed) of small random irregular fabrics.
RANDOM_CASES = [(s, d, h, seed) for s, d, h in [(6, 3, 1), (8, 3, 2), (12, 4, 1), (16, 4, 1), (24, 5, 1)] for seed in range(6)]


def random_fabric(switches: int, links: int, hosts: int, seed: int, lmc: int = 0) -> FabricGraph:
    return irregular(switches, links_per_switch=links, hosts_per_switch=hosts, seed=seed).with_lids(lmc=lmc)


def node_of_lid(g: FabricGraph, lid: int) -> int:
    return int(g.ep_node[g.lid_owner[lid]])


def chain_fabric() -> FabricGraph:
    """The situation of Bermúdez et al. 2006, Fig. 5, in five switches.

    Root r (LID 1) has four children b, c, e, d (LIDs 2-5, GUID = LID), which
    are also chained b-c-e-d.  Equal-level links are up towards the lower
    GUID, so the chain points down from b to d: b reaches d down the chain
    in 3 hops, or up through r in 2.
    """
    nodes = [NodeSpec("r", True, 4, lid=1, guid=1)] + [
        NodeSpec(n, True, 3, lid=i, guid=i) for i, n in [(2, "b"), (3, "c"), (4, "e"), (5, "d")]
    ]
    links = [
        Link(0, 1, 1, 1), Link(0, 2, 2, 1), Link(0, 3, 3, 1), Link(0, 4, 4, 1),  # r - b, c, e, d
        Link(1, 2, 2, 2), Link(2, 3, 3, 2), Link(3, 3, 4, 2),  # b - c - e - d
    ]  # fmt: skip
    return FabricGraph(nodes, links)


def rng(seed: int = 0) -> np.random.Generator:
    return np.random.default_rng(seed)
