"""A routing engine: min-hop routes by breadth-first search, ties to the lowest port."""

from collections import deque

import numpy as np

from ibfabric import ConfigError
from ibfabric.components.routing.tables import NO_PORT, ForwardingTables


def lowest_port_bfs(fabric, options, rng):
    """Min-hop routes found by a breadth-first search per destination; ties go to the lowest port.

    Option ``spread=true`` gives each LID of a destination with LMC > 0 the
    k-th of its switch's equally short ports (k = the LID's offset) instead
    of the lowest one.
    """
    unknown = sorted(set(options) - {"spread"})
    if unknown:
        raise ConfigError(f"routing engine 'demo-bfs' has no option '{unknown[0]}' (valid: spread)")
    spread = options.get("spread", "false")
    if spread not in ("true", "false"):
        raise ConfigError(f"routing engine 'demo-bfs': 'spread' must be true or false (got {spread!r})")
    spread = spread == "true"
    lft = np.full((len(fabric.switches), fabric.max_lid + 1), NO_PORT, dtype=np.uint8)
    for e in range(len(fabric.ep_lid)):
        dest = int(fabric.ep_node[e])
        dist = _hops_to(fabric, dest)
        base, count = int(fabric.ep_lid[e]), 1 << int(fabric.ep_lmc[e])
        for s in fabric.switches.tolist():
            if s not in dist:
                continue  # this switch cannot reach the destination: no entry
            if s == dest:
                best = [0]  # a switch's own LIDs: port 0, its management port
            else:
                best = [p for p in fabric.ports(s) if dist.get(int(fabric.peer_node[s, p])) == dist[s] - 1]
            for k in range(count):
                port = best[k % len(best)] if spread else best[0]
                lft[fabric.switch_row[s], base + k] = port
    return ForwardingTables(fabric, lft, engine="demo-bfs", info={"spread": spread})


def _hops_to(fabric, dest):
    """{node: links to *dest*} for *dest* and every switch that reaches it through switches."""
    dist = {dest: 0}
    queue = deque([dest])
    while queue:
        x = queue.popleft()
        for p in fabric.ports(x):
            y = int(fabric.peer_node[x, p])
            if y not in dist and fabric.is_switch[y]:
                dist[y] = dist[x] + 1
                queue.append(y)
    return dist
