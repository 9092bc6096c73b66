"""The built-in multicast routing engines: ``source-based`` (Kim et al. 2007) and ``shared``.

Both take the unicast :class:`~ibfabric.components.routing.tables.ForwardingTables`
and the declared groups and return
:class:`~ibfabric.components.routing.mfts.MulticastTables` (see
``ibfabric_register_multicast_routing`` in :mod:`ibfabric.plugins.hookspecs`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from ibfabric.components.routing.fabric import FabricGraph
from ibfabric.components.routing.tables import ForwardingTables
from ibfabric.errors import ConfigError, did_you_mean
from ibfabric.plugins.manager import hookimpl

from ._common import resolve_switch

if TYPE_CHECKING:  # (imported where used: a run without multicast loads this plugin, not them)
    from ibfabric.components.routing.mfts import MulticastTables
    from ibfabric.components.routing.mgroups import MulticastGroup

__all__ = ["center_switch", "shared", "source_based"]


def source_based(tables: ForwardingTables, groups: Sequence[MulticastGroup], options: Mapping[str, Any] | None = None,
                 rng: np.random.Generator | None = None) -> MulticastTables:
    """One distribution tree per (group, sender), from the unicast routes: Kim et al.'s choice.

    Parameters
    ----------
    tables : ForwardingTables
        The unicast tables; each tree follows their routes from its sender.
    groups : sequence of MulticastGroup
    options : dict of str
        None are accepted.
    rng : numpy.random.Generator
        Unused (the engine is deterministic).

    Returns
    -------
    MulticastTables
        A group owns one MLID per sender, a block from its MLID
        (:func:`~ibfabric.components.routing.mgroups.assign_mlids` with
        ``per_sender=True``): the *i*-th sender's packets carry ``mlid + i``,
        and that MLID's masks are the tree of that sender
        (:func:`~ibfabric.components.routing.mtrees.source_tree`).

    Raises
    ------
    ConfigError
        For any option, MLID blocks that overlap, or unicast routes that do
        not deliver from a sender to a member.

    Examples
    --------
    Three switches in a row, one host on each; every host sends to the group:

    >>> from ibfabric.components.routing.fabric import FabricGraph, NodeSpec, Link
    >>> from ibfabric.components.routing.mgroups import declare_groups
    >>> from ibfabric.plugins.routing import minhop
    >>> g = FabricGraph([NodeSpec(f"s{i}", True, 3) for i in range(3)] + [NodeSpec(f"h{i}", False, 1) for i in range(3)],
    ...                 [Link(0, 1, 1, 1), Link(1, 2, 2, 1)] + [Link(3 + i, 1, i, 3) for i in range(3)]).with_lids()
    >>> t = source_based(minhop.compute(g), declare_groups("g: h0 h1 h2", g))
    >>> t.groups[0].sender_mlids == (0xC000, 0xC001, 0xC002)
    True
    >>> t.switch_entries(1)   # s1: h0's packets go right and down, h1's both ways, h2's left and down
    {49152: (2, 3), 49153: (1, 2), 49154: (1, 3)}

    Notes
    -----
    IBA gives a switch one port mask per MLID, so a per-source tree needs
    an MLID of its own: with *G* groups of *N* senders every switch has
    ``G x N`` MFT entries, the paper's "3 x 15 entries" for three groups
    and 15 nodes (§5.2).  Cost: one walk of the unicast routes per sender
    over all members at once (see ``source_tree``).

    References
    ----------
    .. [1] E. J. Kim, K. H. Yum, C. R. Das, M. Yousif, J. Duato, "Exploring
       IBA Design Space for Improved Performance", IEEE TPDS 18(4), 2007,
       §3.6 and §5.2.
    """
    from ibfabric.components.routing.mfts import MulticastTables
    from ibfabric.components.routing.mgroups import assign_mlids
    from ibfabric.components.routing.mtrees import source_tree

    _options(options, ())
    groups = assign_mlids(groups, per_sender=True)
    mft = MulticastTables(tables.fabric, groups=groups, engine="source-based")
    exp = tables.expanded()
    for grp in groups:
        for src, mlid in zip(grp.sender_eps, grp.sender_mlids):
            try:
                mask = source_tree(tables, src, grp.member_eps, expanded=exp)
            except ConfigError as exc:
                raise ConfigError(f"group '{grp.name}': {exc}") from None
            if mask.any():
                mft.masks[mlid] = mask
    return mft


def shared(tables: ForwardingTables, groups: Sequence[MulticastGroup], options: Mapping[str, Any] | None = None,
           rng: np.random.Generator | None = None) -> MulticastTables:
    """One tree per group, shared by all its senders, as OpenSM builds multicast trees.

    Parameters
    ----------
    tables : ForwardingTables
        Only their fabric is used: the tree does not follow the unicast routes.
    groups : sequence of MulticastGroup
    options : dict of str
        ``root``: the switch every tree grows from (a name or a LID);
        default: each group's :func:`center_switch`.
    rng : numpy.random.Generator
        Unused (the engine is deterministic).

    Returns
    -------
    MulticastTables
        One MLID per group, which every sender's packets carry.

    Raises
    ------
    ConfigError
        For an unknown option or root, or a group the root cannot reach.

    Examples
    --------
    >>> from ibfabric.components.routing.fabric import FabricGraph, NodeSpec, Link
    >>> from ibfabric.components.routing.mgroups import declare_groups
    >>> from ibfabric.plugins.routing import minhop
    >>> g = FabricGraph([NodeSpec(f"s{i}", True, 3) for i in range(3)] + [NodeSpec(f"h{i}", False, 1) for i in range(3)],
    ...                 [Link(0, 1, 1, 1), Link(1, 2, 2, 1)] + [Link(3 + i, 1, i, 3) for i in range(3)]).with_lids()
    >>> t = shared(minhop.compute(g), declare_groups("g: h0 h2", g))
    >>> t.groups[0].sender_mlids, t.switch_entries(1)   # s1 only passes packets through
    ((49152, 49152), {49152: (1, 2)})

    Notes
    -----
    The tree is the breadth-first tree of the switches from the root
    (ports in increasing order), pruned to the branches that lead to a
    member or a sender; tree links are in the masks at both ends, so a
    packet climbs from its sender and spreads down every other branch
    (:func:`~ibfabric.components.routing.mfts.shared_tree`).  A sender that is not
    a member keeps its switch in the tree, without its own port in the
    mask.  Cost per group: one breadth-first search per switch of the
    group to find the centre, and one from the root.

    References
    ----------
    .. [1] OpenSM, ``osm_mcast_mgr.c`` (``mcast_mgr_build_spanning_tree``,
       ``mcast_mgr_find_optimal_switch``).
    """
    from ibfabric.components.routing.mfts import MulticastTables, shared_tree
    from ibfabric.components.routing.mgroups import assign_mlids

    opts = _options(options, ("root",))
    fabric = tables.fabric
    root = resolve_switch(fabric, opts["root"], "root") if "root" in opts else None
    groups = assign_mlids(groups, per_sender=False)
    mft = MulticastTables(fabric, groups=groups, engine="shared")
    for grp in groups:
        r = root if root is not None else center_switch(fabric, [*grp.member_eps, *grp.sender_eps])
        try:
            shared_tree(mft, grp.mlid, list(grp.member_eps), r, senders=list(grp.sender_eps))
        except ValueError as exc:
            raise ConfigError(f"group '{grp.name}': {exc}") from None
    return mft


def center_switch(fabric: FabricGraph, endpoints: Sequence[int]) -> int:
    """The switch with the fewest hops in total to the switches of *endpoints* (each endpoint
    counted once; ties to the lowest node index), as OpenSM picks a multicast tree's root.
    Switches that do not reach them all are never chosen."""
    att_node, _ = fabric.attachments()
    rows = fabric.switch_row
    count: dict[int, int] = {}
    for e in endpoints:
        r = int(rows[att_node[e]])
        count[r] = count.get(r, 0) + 1
    peer = fabric.peer_node[fabric.switches]
    nbr = np.where(peer >= 0, rows[np.where(peer >= 0, peer, 0)], -1)
    nbr[:, 0] = -1
    S = len(fabric.switches)
    total = np.zeros(S, dtype=np.int64)
    reach = np.ones(S, dtype=bool)
    for r, k in sorted(count.items()):
        dist = np.full(S, -1, dtype=np.int64)
        dist[r] = 0
        frontier = np.array([r])
        level = 0
        while len(frontier):
            level += 1
            nb = np.unique(nbr[frontier].ravel())
            nb = nb[(nb >= 0)]
            nb = nb[dist[nb] < 0]
            dist[nb] = level
            frontier = nb
        reach &= dist >= 0
        total += k * dist
    total[~reach] = np.iinfo(np.int64).max
    return int(fabric.switches[int(np.argmin(total))])


def _options(options: Mapping[str, Any] | None, valid: tuple[str, ...]) -> dict[str, str]:
    options = dict(options or {})
    unknown = sorted(set(options) - set(valid))
    if unknown:
        raise ConfigError(f"unknown option '{unknown[0]}'{did_you_mean(unknown[0], valid)} (valid: {', '.join(valid) or 'none'})")
    return {k: str(v) for k, v in options.items()}


@hookimpl
def ibfabric_register_multicast_routing(register):
    register("source-based", source_based,
             description="one tree per (group, sender) along the unicast routes, an MLID each (Kim et al. 2007)")
    register("shared", shared, description="one tree per group from a central switch, one MLID (like OpenSM)")
