"""ibfabric-tree: a routing engine that sends every packet over one spanning tree of the switches."""

from collections import deque

import numpy as np

from ibfabric import ConfigError, hookimpl
from ibfabric.components.routing.tables import NO_PORT, ForwardingTables


def spanning_tree(fabric, options, rng):
    """Route every LID along a breadth-first spanning tree of the switches.

    A tree has no cycle, so the routes' channel dependency graph has none either: deadlock-free
    on any fabric, with one virtual lane, at the price of longer routes and busy links near the
    root.  The root is the switch nearest the subnet manager's node.
    """
    if options:
        raise ConfigError(f"routing engine 'spanning-tree' takes no options (got '{next(iter(options))}')")
    switches = set(fabric.switches.tolist())
    root = next(node for node in fabric.bfs_order(fabric.sm_node) if node in switches)

    # The tree: for every switch, its (port, neighbour switch) pairs that are tree links.
    tree = {root: []}
    queue = deque([root])
    while queue:
        s = queue.popleft()
        for port in fabric.ports(s):
            t = int(fabric.peer_node[s, port])
            if t in switches and t not in tree:
                tree[s].append((port, t))
                tree[t] = [(int(fabric.peer_port[s, port]), s)]
                queue.append(t)

    # One row per switch, one column per LID; NO_PORT where a switch has no entry.
    lft = np.full((len(fabric.switches), fabric.max_lid + 1), NO_PORT, dtype=np.uint8)
    for e in range(len(fabric.ep_lid)):  # every endpoint: switches (port 0) and CA ports
        switch, port = fabric.attachment(e)  # the switch port it is reached through
        if switch not in tree:
            continue
        lids = slice(int(fabric.ep_lid[e]), int(fabric.ep_lid[e]) + (1 << int(fabric.ep_lmc[e])))
        lft[fabric.switch_row[switch], lids] = port
        # Outwards from that switch along the tree: each switch forwards back where it was reached from.
        seen = {switch}
        queue = deque([switch])
        while queue:
            s = queue.popleft()
            for _, t in tree[s]:
                if t not in seen:
                    seen.add(t)
                    lft[fabric.switch_row[t], lids] = next(p for p, u in tree[t] if u == s)
                    queue.append(t)
    return ForwardingTables(fabric, lft, engine="spanning-tree", info={"root": fabric.nodes[root].name})


@hookimpl
def ibfabric_register_routing_engines(register):
    register("spanning-tree", spanning_tree, description="every route on one BFS spanning tree (deadlock-free)")
