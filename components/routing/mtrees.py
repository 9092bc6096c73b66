"""Multicast distribution trees from unicast routes, checks of groups' tables, and the SM's multicast step.

:func:`source_tree` builds the tree of one (group, source) pair from the
unicast forwarding tables, as Kim et al. (2007, §3.6) build their
source-based trees; :func:`check_groups` follows every sender's packets
through the MFTs; :func:`route_groups` is what the subnet manager and
``ibfabric routes`` run: declared groups -> multicast routing engine ->
checked :class:`~ibfabric.components.routing.mfts.MulticastTables`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ibfabric.errors import ConfigError, PluginError

from .fabric import FabricGraph
from .mfts import MCAST_LID_END, MCAST_LID_START, MulticastTables, flood
from .mgroups import MulticastGroup, declare_groups
from .opensm import short_names
from .tables import NO_PORT, ForwardingTables

__all__ = ["check_groups", "declaration_of", "mentions_multicast", "route_groups", "source_tree"]


def source_tree(tables: ForwardingTables, source: int, members: Sequence[int], *,
                expanded: np.ndarray | None = None) -> np.ndarray:
    """The port masks of the distribution tree of packets from endpoint *source* to *members*.

    Parameters
    ----------
    tables : ForwardingTables
        Unicast tables; the tree follows their routes.
    source : int
        The sending endpoint (a CA port attached to a switch).
    members : sequence of int
        Receiving endpoints; *source* itself is skipped if listed.
    expanded : ndarray, optional
        ``tables.expanded()``, when the caller builds many trees.

    Returns
    -------
    ndarray of bool, shape (switches, width)
        The masks of one MLID (``width`` that of
        :class:`~ibfabric.components.routing.mfts.MulticastTables`): every member's
        port on its switch, and on each switch of the tree the ports to its
        children.  The source's own port is never in it.

    Raises
    ------
    ConfigError
        If the unicast routes from *source* do not deliver to a member (no
        entry, a port leading elsewhere, a forwarding loop).

    Examples
    --------
    A chain s1 - s2 with a host on each switch and one more on s2:

    >>> from ibfabric.components.routing.fabric import FabricGraph, NodeSpec, Link
    >>> from ibfabric.plugins.routing import minhop
    >>> g = FabricGraph([NodeSpec("s1", True, 2), NodeSpec("s2", True, 3), NodeSpec("a", False, 1),
    ...                  NodeSpec("b", False, 1), NodeSpec("c", False, 1)],
    ...                 [Link(0, 1, 1, 1), Link(2, 1, 0, 2), Link(3, 1, 1, 2), Link(4, 1, 1, 3)]).with_lids()
    >>> a, b, c = (g.endpoint_of(n) for n in (2, 3, 4))
    >>> m = source_tree(minhop.compute(g), a, [b, c])
    >>> [m[r].nonzero()[0].tolist() for r in range(2)]   # s1 forwards on port 1, s2 to b and c
    [[1], [2, 3]]

    Notes
    -----
    The union of the unicast paths from one source is not always a tree:
    destination-based routes to two members may part and meet again, and a
    switch reached along two paths would forward two copies.  Each switch
    therefore takes its parent from the path that reaches it in the fewest
    hops (ties: the member with the lowest endpoint index), the edges of
    the other paths into it are dropped, and branches that then lead to no
    member are pruned.  Every tree edge is an edge of a unicast path, a
    member is never farther from the source than its unicast route, and
    when the paths do form a tree (any routing on a tree topology) the
    tree is exactly their union.  All members' paths are walked at once,
    one numpy step per hop: O(hops * members) array work plus O(switches)
    to prune.

    References
    ----------
    .. [1] E. J. Kim, K. H. Yum, C. R. Das, M. Yousif, J. Duato, "Exploring
       IBA Design Space for Improved Performance", IEEE TPDS 18(4), 2007,
       §3.6 (source-based distribution trees) and §5.2.
    """
    g = tables.fabric
    exp = tables.expanded() if expanded is None else expanded
    att_node, att_port = g.attachments()
    rows = g.switch_row
    S = len(g.switches)
    width = MulticastTables(g).width
    mask = np.zeros((S, width), dtype=bool)
    dst = np.array([int(m) for m in members if int(m) != int(source)], dtype=np.int64)
    if not len(dst):
        return mask
    if att_node[source] < 0 or (att_node[dst] < 0).any():
        raise ConfigError("a multicast source or member is not attached to a switch")
    root = int(rows[att_node[source]])
    dlid = np.asarray(tables.dlids(int(source), dst), dtype=np.int64)
    d_row, d_port = rows[att_node[dst]], att_port[dst]
    peer = g.peer_node[g.switches]
    nbr = np.where(peer >= 0, rows[np.where(peer >= 0, peer, 0)], -1)  # switch row behind each port, -1 if none/CA
    nbr[:, 0] = -1
    # (pair, hop, switch reached, previous switch, its port): the walks of every member at once
    recs = [(np.arange(len(dst)), np.zeros(len(dst), dtype=np.int64), np.full(len(dst), root), np.full(len(dst), -1),
             np.full(len(dst), -1))]
    active = np.arange(len(dst))
    cur = np.full(len(dst), root)
    hop = 0
    while len(active):
        c = cur[active]
        port = exp[c, dlid[active]].astype(np.int64)
        done = (c == d_row[active]) & (port == d_port[active])
        active, c, port = active[~done], c[~done], port[~done]
        if not len(active):
            break
        nxt = np.where(port == NO_PORT, -1, nbr[c, np.where(port == NO_PORT, 0, port)])
        hop += 1
        if (nxt < 0).any() or hop >= S:  # S moves visit S + 1 switches: one twice
            bad = int(np.flatnonzero(nxt < 0)[0]) if (nxt < 0).any() else 0
            raise ConfigError(_undelivered(g, tables, int(source), int(dst[active[bad]]), int(c[bad]),
                                           int(port[bad]), looped=not (nxt < 0).any()))
        cur[active] = nxt
        recs.append((active, np.full(len(active), hop), nxt, c, port))
    pair, hops, sw, prev, pport = (np.concatenate(x) for x in zip(*recs))
    order = np.lexsort((dst[pair], hops, sw))
    first = order[np.r_[True, sw[order][1:] != sw[order][:-1]]]
    parent = {int(s): (int(p), int(q)) for s, p, q in zip(sw[first], prev[first], pport[first])}
    kept: set[int] = set()
    for r, p in zip(d_row.tolist(), d_port.tolist()):
        mask[r, p] = True
        while r not in kept and r != root:
            kept.add(r)
            up, up_port = parent[r]
            mask[up, up_port] = True
            r = up
    return mask


def _undelivered(g: FabricGraph, tables: ForwardingTables, src: int, dst: int, row: int, port: int,
                 looped: bool) -> str:
    names = short_names(g)
    sw = names[int(g.switches[row])]
    a, b = names[int(g.ep_node[src])], names[int(g.ep_node[dst])]
    lid = tables.dlid(src, dst)
    if looped:
        why = f"they loop (through {sw})"
    elif port == NO_PORT:
        why = f"{sw} has no entry for LID {lid}"
    else:
        y = int(g.peer_node[g.switches[row], port])
        why = f"{sw} sends LID {lid} to port {port}, which leads {'nowhere' if y < 0 else 'to ' + names[y]}"
    return f"the unicast routes from {a} do not deliver to {b}: {why}"


def check_groups(mft: MulticastTables) -> list[str]:
    """What is wrong with the MFTs of declared groups: one line per problem, empty if none.

    For every group and every sender, one packet with the sender's MLID is
    followed from the sender's switch port (:func:`~ibfabric.components.routing.mfts.flood`):
    it must reach every other member exactly once, reach no other host
    (the sender included), and reach no switch twice (a loop or two
    paths).  Masks must not hold ports that lead nowhere, an MLID must
    serve one group only, and MLIDs with entries must belong to a group.
    """
    g = mft.fabric
    names = short_names(g)
    att_node, att_port = g.attachments()
    problems: list[str] = []
    owner: dict[int, str] = {}
    for grp in mft.groups:
        for mlid in grp.mlids:
            if owner.setdefault(mlid, grp.name) != grp.name:
                problems.append(f"MLID 0x{mlid:04X} serves two groups ('{owner[mlid]}' and '{grp.name}')")
    for mlid in mft.mlids:
        if mlid not in owner:
            problems.append(f"MLID 0x{mlid:04X} has entries but belongs to no group")
        rows, ports = np.nonzero(mft.masks[mlid][:, 1:])
        for r, p in zip(rows.tolist(), (ports + 1).tolist()):
            sw = int(g.switches[r])
            if g.peer_node[sw, p] < 0:
                problems.append(f"MLID 0x{mlid:04X}: {names[sw]} port {p} is in the mask but leads nowhere")

    def host(e: int) -> str:
        return names[int(g.ep_node[e])]

    def listing(eps: list[int]) -> str:
        return ", ".join(host(e) for e in eps[:5]) + (" ..." if len(eps) > 5 else "")

    empty = np.zeros((len(g.switches), mft.width), dtype=bool)
    for grp in mft.groups:
        if len(grp.sender_mlids) != len(grp.sender_eps):
            problems.append(f"group '{grp.name}': its senders have no MLIDs")
            continue
        expected = set(grp.member_eps)
        for s, mlid in zip(grp.sender_eps, grp.sender_mlids):
            got, loop = flood(g, mft.masks.get(mlid, empty), int(att_node[s]), int(att_port[s]))
            at = f"group '{grp.name}' (MLID 0x{mlid:04X}) from {host(s)}"
            if loop is not None:
                problems.append(f"{at}: packets reach {names[loop]} twice (a loop or two paths)")
                continue
            missed = [e for e in grp.member_eps if e != s and not got.get(e)]
            twice = [e for e, n in got.items() if n > 1 and e in expected]
            strangers = sorted(e for e in got if e not in expected or e == s)
            if missed:
                problems.append(f"{at}: members not reached: {listing(missed)}")
            if twice:
                problems.append(f"{at}: members reached more than once: {listing(twice)}")
            if strangers:
                problems.append(f"{at}: packets reach non-members: {listing(strangers)}")
    return problems


def route_groups(tables: ForwardingTables, groups: str | Sequence[MulticastGroup], engine: str, options: str,
                 plugins, rng: np.random.Generator | None = None, *, owner: str = "") -> MulticastTables | None:
    """The MFTs of declared groups, built by the multicast routing engine *engine*, or None without groups.

    Parameters
    ----------
    tables : ForwardingTables
        The unicast tables (their fabric has every LID).
    groups : str or sequence of MulticastGroup
        A ``multicastGroups`` text (:mod:`ibfabric.components.routing.mgroups`) or resolved groups.
    engine, options : str
        The engine's name and its ``"key=value ..."`` options.
    plugins : PluginSet
        Where the engine is registered (role ``multicast_routing_engines``).
    owner : str
        Put in front of error messages (the subnet manager's path).

    Raises
    ------
    ConfigError
        For a bad declaration or option, or an unknown engine (listing the valid ones).
    PluginError
        When the engine returns something other than tables for the groups it was given.
    """
    from ..node import parse_options

    at = f"{owner}: " if owner else ""
    if isinstance(groups, str):
        if not groups.strip():
            return None
        try:
            groups = declare_groups(groups, tables.fabric)
        except ConfigError as exc:
            raise ConfigError(f"{at}{exc}") from None
    groups = tuple(groups)
    if not groups:
        return None
    reg = plugins.multicast_routing_engines.get(engine)
    opts = parse_options(options, owner or "multicast routing", "multicastOptions")
    try:
        mft = reg.create(tables, groups, opts, rng if rng is not None else np.random.default_rng(0))
        _check_result(mft, tables.fabric, groups, engine)
    except ConfigError as exc:
        raise ConfigError(f"{at}multicast routing engine '{engine}': {exc}") from None
    except PluginError as exc:  # it names the engine and its plugin
        raise PluginError(f"{at}{exc}") from None
    if not mft.engine:
        mft.engine = engine
    return mft


def _check_result(mft: Any, fabric: FabricGraph, groups: tuple[MulticastGroup, ...], engine: str) -> None:
    def fail(why: str) -> PluginError:
        return PluginError(f"multicast routing engine '{engine}' {why}")

    if not isinstance(mft, MulticastTables):
        raise fail(f"returned {type(mft).__name__}, not MulticastTables")
    if mft.fabric is not fabric:
        raise fail("returned tables of another fabric")
    got = [(x.name, x.member_eps, x.sender_eps) for x in mft.groups]
    if got != [(x.name, x.member_eps, x.sender_eps) for x in groups]:
        raise fail("returned tables whose groups are not the ones it was given")
    used: dict[int, str] = {}
    for x in mft.groups:
        if len(x.sender_mlids) != len(x.sender_eps):
            raise fail(f"gave group '{x.name}' {len(x.sender_mlids)} sender MLIDs for {len(x.sender_eps)} senders")
        for m in set(x.sender_mlids):
            if not MCAST_LID_START <= m <= MCAST_LID_END:
                raise fail(f"gave group '{x.name}' the MLID {m:#x}, outside 0xC000..0xFFFE")
            if used.setdefault(m, x.name) != x.name:
                raise fail(f"gave MLID 0x{m:04X} to two groups ('{used[m]}' and '{x.name}')")


def declaration_of(net) -> dict[str, Any]:
    """The multicast parameters of an elaborated network's subnet manager: ``{"groups",
    "routing", "options", "owner"}`` (the defaults when the network, or *net*, is None, has no
    subnet manager)."""
    for m in net.simple_modules() if net is not None else ():
        if m.type_name.endswith("SubnetManager") and "multicastGroups" in m.params:
            p = m.params
            loc = f"{m.location}: " if m.location is not None else ""
            return {"groups": str(p["multicastGroups"].value), "routing": str(p["multicastRouting"].value),
                    "options": str(p["multicastOptions"].value), "owner": f"{loc}{m.path}"}
    return {"groups": "", "routing": "source-based", "options": "", "owner": ""}


def mentions_multicast(topology) -> bool:
    """Whether a topology's NED source could set multicast parameters: the word ``multicast`` in
    the file (or NED text), or in the other ``.ned`` files of its directory, which elaboration
    reads for types.  ``ibfabric routes`` elaborates a network a second time, for its subnet
    manager's groups, only then: routing a topology without groups costs what it did."""
    from pathlib import Path

    from ibfabric.topologies import SHIPPED, shipped

    text = str(topology)
    path = Path(text)
    if not path.is_file() and text in SHIPPED:
        path = shipped(text)
    if not path.is_file():
        return "multicast" in text
    files = [path, *(p for p in sorted(path.parent.glob("*.ned")) if p != path)]
    return any(b"multicast" in f.read_bytes() for f in files if f.is_file())
