"""Multicast groups: their declaration, their members and senders, and their multicast LIDs.

Groups are declared by the subnet manager's ``multicastGroups`` parameter
(the SM owns multicast groups in IBA: members join through its subnet
administrator), as text::

    multicastGroups = "video: h0_0 h3_1 h9_2 h14_0 senders=h0_0; audio@0xC010: 0..3; 0xC020: *"

* groups are separated by ``;``; each is ``HEAD: MEMBERS [senders=SENDERS]``;
* ``HEAD`` is a name (``video``), a name and an MLID (``audio@0xC010``) or an
  MLID alone (``0xC020``, which is then also the group's name); MLIDs are
  ``0xC000``..``0xFFFE`` (IBA 1.2 §4.1.1), hexadecimal or decimal;
* members and senders are hosts (channel adapters with a connected port),
  separated by spaces or commas: a name (``h0_0``, ``h[3]`` or the full
  module path), a host index (``3``: the index ``ibfabric`` gives traffic
  endpoints, channel adapters in module order), a range of indices
  (``0..3``, both ends included) or ``*`` (every host);
* ``senders=`` starts the list of hosts that send to the group (default:
  every member); a sender need not be a member (IBA's send-only members).

Membership is static: every member joins at time 0, as in Kim et al. (2007,
§3.6).  :func:`parse_groups` checks the text alone (syntax, names, MLIDs,
empty groups); :func:`resolve_groups` finds the hosts in a fabric;
:func:`assign_mlids` gives each group its MLIDs.  Every error is one line.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

import attrs
import numpy as np

from ibfabric.errors import ConfigError

from .fabric import FabricGraph
from .mfts import MCAST_LID_END, MCAST_LID_START
from .opensm import short_names

__all__ = ["GroupSpec", "MulticastGroup", "assign_mlids", "declare_groups", "host_nodes", "parse_groups",
           "resolve_groups"]

_NAME = r"[A-Za-z_][A-Za-z0-9_.\-]*"
_NUMBER = r"0[xX][0-9a-fA-F]+|[0-9]+"
_HEAD = re.compile(rf"^(?:(?P<name>{_NAME})(?:\s*@\s*(?P<mlid>{_NUMBER}))?|(?P<only>{_NUMBER}))$")
_RANGE = re.compile(r"^([0-9]{1,18})\.\.([0-9]{1,18})$")
_WHAT = "multicastGroups"


@attrs.frozen
class GroupSpec:
    """One declared group, before its hosts are looked up: ``members`` and ``senders`` are the
    items as written (names, indices, ``a..b`` ranges, ``*``); ``senders`` None means every member;
    ``mlid`` 0 means "assign one"."""

    name: str
    mlid: int = 0
    members: tuple[str, ...] = ()
    senders: tuple[str, ...] | None = None


@attrs.frozen
class MulticastGroup:
    """A multicast group of a fabric.

    Hosts are host indices (:func:`host_nodes` order, the traffic index of
    ``Simulation.hosts``); endpoints are the fabric's endpoint indices of
    those hosts' first connected ports, what the forwarding tables reach.

    Attributes
    ----------
    name : str
    mlid : int
        The group's MLID (the first of its block when each sender has its
        own); 0 until :func:`assign_mlids`.
    member_hosts, member_eps : tuple of int
        The members, in declaration order.
    sender_hosts, sender_eps : tuple of int
        The hosts that send to the group, in declaration order.
    sender_mlids : tuple of int
        The MLID (DLID) the packets of each sender carry, parallel to
        ``sender_hosts``; empty until MLIDs are assigned.
    """

    name: str
    mlid: int
    member_hosts: tuple[int, ...]
    member_eps: tuple[int, ...]
    sender_hosts: tuple[int, ...]
    sender_eps: tuple[int, ...]
    sender_mlids: tuple[int, ...] = ()

    @property
    def size(self) -> int:
        """Number of members."""
        return len(self.member_hosts)

    @property
    def mlids(self) -> tuple[int, ...]:
        """The distinct MLIDs of the group, ascending."""
        return tuple(sorted(set(self.sender_mlids)))

    def mlid_of(self, host: int) -> int:
        """The MLID the packets *host* sends to the group carry (ValueError if it is not a sender)."""
        try:
            return self.sender_mlids[self.sender_hosts.index(host)]
        except ValueError:
            raise ValueError(f"host {host} is not a sender of multicast group '{self.name}'") from None
        except IndexError:
            raise ValueError(f"multicast group '{self.name}' has no MLIDs yet") from None


def parse_groups(text: str) -> list[GroupSpec]:
    """The groups declared by a ``multicastGroups`` text (empty text: none).

    Raises
    ------
    ConfigError
        One line, ``multicastGroups: ...``, for a group without ``HEAD:``,
        a bad name, an MLID outside 0xC000..0xFFFE, two groups with one
        name or one MLID, a group without members, ``senders=`` without
        hosts or twice, or an empty index range.

    Examples
    --------
    >>> [(g.name, hex(g.mlid), g.members, g.senders) for g in parse_groups("a: h1 h2; b@0xC005: 0..2 senders=h1")]
    [('a', '0x0', ('h1', 'h2'), None), ('b', '0xc005', ('0..2',), ('h1',))]
    """
    specs: list[GroupSpec] = []
    names: dict[str, int] = {}
    mlids: dict[int, str] = {}
    pos = 0
    for chunk in text.split(";"):
        at, pos = pos, pos + len(chunk) + 1
        if not chunk.strip():
            continue
        head, colon, body = chunk.partition(":")
        if not colon:
            raise ConfigError(f"{_WHAT}: character {at + 1 + len(chunk) - len(chunk.lstrip())}: expected 'NAME:', "
                              f"'NAME@MLID:' or 'MLID:' before the members of a group (got {chunk.strip()[:40]!r})")
        m = _HEAD.match(head.strip())
        if not m:
            raise ConfigError(f"{_WHAT}: {head.strip()[:40]!r} is not a group name (a letter or '_', then letters,"
                              f" digits, '_', '.', '-'), NAME@MLID or an MLID")
        name = m["name"] or m["only"]
        mlid_text = m["mlid"] or m["only"]
        mlid = _mlid(mlid_text, name) if mlid_text else 0
        if m["only"]:
            name = f"0x{mlid:04X}"
        if name in names:
            raise ConfigError(f"{_WHAT}: two groups are named '{name}'")
        names[name] = len(specs)
        if mlid:
            if mlid in mlids:
                raise ConfigError(f"{_WHAT}: groups '{mlids[mlid]}' and '{name}' both have MLID 0x{mlid:04X}")
            mlids[mlid] = name
        members, senders = _items(body, name)
        specs.append(GroupSpec(name, mlid, members, senders))
    return specs


def _mlid(text: str, name: str) -> int:
    if len(text.lstrip("0xX")) > 8:
        raise ConfigError(f"{_WHAT}: group '{name}': MLID {text[:20]} is not a multicast LID (0xC000..0xFFFE)")
    mlid = int(text, 0) if not text.isdigit() else int(text)
    if not MCAST_LID_START <= mlid <= MCAST_LID_END:
        raise ConfigError(f"{_WHAT}: group '{name}': MLID 0x{mlid:04X} is not a multicast LID (0xC000..0xFFFE)")
    return mlid


def _items(body: str, name: str) -> tuple[tuple[str, ...], tuple[str, ...] | None]:
    members: list[str] = []
    senders: list[str] | None = None
    for word in body.replace(",", " ").split():
        key, eq, rest = word.partition("=")
        if eq:
            if key != "senders":
                raise ConfigError(f"{_WHAT}: group '{name}': unknown key '{key}=' (the only one is 'senders=')")
            if senders is not None:
                raise ConfigError(f"{_WHAT}: group '{name}': 'senders=' is given twice")
            senders = []
            word = rest
            if not word:
                continue
        r = _RANGE.match(word)
        if r and int(r[1]) > int(r[2]):
            raise ConfigError(f"{_WHAT}: group '{name}': the range {word} is empty (ranges include both ends)")
        (members if senders is None else senders).append(word)
    if not members:
        raise ConfigError(f"{_WHAT}: group '{name}' has no members")
    if senders is not None and not senders:
        raise ConfigError(f"{_WHAT}: group '{name}': 'senders=' lists no host")
    return tuple(members), None if senders is None else tuple(senders)


def host_nodes(fabric: FabricGraph) -> np.ndarray:
    """Node indices of the hosts: channel adapters with a connected port, in node order.

    Position *i* is host index *i*, the traffic index of ``Simulation.hosts``
    (the simulation's fabric lists IB nodes in module order, as it does).
    """
    cas = fabric.cas
    return cas[(fabric.peer_node[cas] >= 0).any(axis=1)] if len(cas) else cas


def resolve_groups(specs: Iterable[GroupSpec], fabric: FabricGraph) -> tuple[MulticastGroup, ...]:
    """The groups of *specs* with their hosts found in *fabric* (MLIDs as declared, else 0).

    Raises
    ------
    ConfigError
        One line naming the group, for an unknown host name, a host index
        out of range, a switch, a host listed twice in one list, or a host
        not attached to a switch.
    """
    hosts = host_nodes(fabric)
    lookup = _HostNames(fabric, hosts)
    att_node, _ = fabric.attachments()
    out = []
    for spec in specs:
        members = lookup.hosts(spec.members, spec.name, "member")
        senders = members if spec.senders is None else lookup.hosts(spec.senders, spec.name, "sender")
        eps = {}
        for h in dict.fromkeys(members + senders):
            e = fabric.endpoint_of(int(hosts[h]))
            if att_node[e] < 0:
                raise ConfigError(f"{_WHAT}: group '{spec.name}': {lookup.name(h)} is not attached to a switch (no"
                                  f" multicast forwarding table can reach it)")
            eps[h] = e
        out.append(MulticastGroup(spec.name, spec.mlid, members, tuple(eps[h] for h in members), senders,
                                  tuple(eps[h] for h in senders)))
    return tuple(out)


def declare_groups(text: str, fabric: FabricGraph) -> tuple[MulticastGroup, ...]:
    """:func:`parse_groups` then :func:`resolve_groups`."""
    return resolve_groups(parse_groups(text), fabric)


class _HostNames:
    """Host lookup by name (full module path, path without the network, or a unique last part) or index."""

    def __init__(self, fabric: FabricGraph, hosts: np.ndarray):
        self.fabric = fabric
        self.hosts_ = hosts
        self.short = short_names(fabric)
        index = {int(n): i for i, n in enumerate(hosts.tolist())}
        self.by_name: dict[str, int] = {}
        for node, nd in enumerate(fabric.nodes):
            for key in (nd.name, self.short[node]):
                self.by_name.setdefault(key, index.get(node, -1 - node))

    def name(self, host: int) -> str:
        return self.short[int(self.hosts_[host])]

    def hosts(self, items: Sequence[str], group: str, role: str) -> tuple[int, ...]:
        n = len(self.hosts_)
        out: dict[int, str] = {}
        for item in items:
            r = _RANGE.match(item)
            if item == "*":
                found = list(range(n))
            elif item.isdigit() or r:
                lo, hi = (r[1], r[2]) if r else (item, item)
                if len(hi) > 9 or int(hi) >= n:
                    raise ConfigError(f"{_WHAT}: group '{group}': host index {hi[:20]} is out of range (the network"
                                      f" has {n} hosts: 0..{n - 1})")
                found = list(range(int(lo), int(hi) + 1))
            else:
                found = [self._by_name(item, group)]
            for h in found:
                if h in out:
                    raise ConfigError(f"{_WHAT}: group '{group}': {self.name(h)} is listed twice as a {role}"
                                      f" ({out[h]!r} and {item!r})")
                out[h] = item
        return tuple(out)

    def _by_name(self, item: str, group: str) -> int:
        h = self.by_name.get(item)
        if h is None:
            hits = {v for k, v in self.by_name.items() if k.endswith("." + item)}
            if len(hits) > 1:
                raise ConfigError(f"{_WHAT}: group '{group}': '{item}' names {len(hits)} nodes; give its full path")
            h = hits.pop() if hits else None
        if h is None:
            n = len(self.hosts_)
            example = f", like '{self.name(0)}'" if n else ""
            raise ConfigError(f"{_WHAT}: group '{group}': unknown host '{item}' (give a host's name{example}, or its"
                              f" index 0..{n - 1})")
        if h < 0:
            node = -1 - h
            what = "a switch" if self.fabric.is_switch[node] else "a channel adapter without a connected port"
            raise ConfigError(f"{_WHAT}: group '{group}': {self.short[node]} is {what}; members and senders are"
                              f" hosts (channel adapters with a connected port)")
        return h


def assign_mlids(groups: Sequence[MulticastGroup], per_sender: bool) -> tuple[MulticastGroup, ...]:
    """Give every group its MLIDs and every sender the MLID its packets carry.

    With *per_sender* (one tree per (group, sender), as source-based
    routing builds), a group owns the block ``mlid .. mlid + senders - 1``
    and its *i*-th sender sends to ``mlid + i``; otherwise a group owns
    ``mlid`` alone and every sender sends to it.  Declared MLIDs start their
    group's block; the other groups get, in declaration order, the lowest
    free block from 0xC000.

    Raises
    ------
    ConfigError
        When two blocks overlap (naming both groups) or the multicast range
        has no room left.
    """
    sizes = [len(g.sender_hosts) if per_sender else 1 for g in groups]
    taken: list[tuple[int, int, str]] = []  # (first, last, group), sorted by first
    for g, n in zip(groups, sizes):
        if g.mlid:
            last = g.mlid + n - 1
            if last > MCAST_LID_END:
                raise ConfigError(f"{_WHAT}: group '{g.name}' needs {n} MLIDs from 0x{g.mlid:04X} (one per sender),"
                                  f" past the last multicast LID 0xFFFE")
            for first, end, other in taken:
                if first <= last and g.mlid <= end:
                    raise ConfigError(f"{_WHAT}: {_block(g.name, g.mlid, last, per_sender)} overlap"
                                      f" {_block(other, first, end, per_sender)}; declare MLIDs further apart")
            taken.append((g.mlid, last, g.name))
    taken.sort()
    out = []
    for g, n in zip(groups, sizes):
        base = g.mlid
        if not base:
            base = MCAST_LID_START
            for first, end, _ in taken:
                if base + n - 1 < first:
                    break
                base = max(base, end + 1)
            if base + n - 1 > MCAST_LID_END:
                raise ConfigError(f"{_WHAT}: no room left for group '{g.name}' ({n} MLIDs): the multicast LIDs"
                                  f" 0xC000..0xFFFE are used up")
            taken.append((base, base + n - 1, g.name))
            taken.sort()
        mlids = tuple(base + i for i in range(n)) if per_sender else (base,) * len(g.sender_hosts)
        out.append(attrs.evolve(g, mlid=base, sender_mlids=mlids))
    return tuple(out)


def _block(name: str, first: int, last: int, per_sender: bool) -> str:
    if first == last:
        return f"the MLID of group '{name}' (0x{first:04X})"
    return f"the MLIDs of group '{name}' (0x{first:04X}..0x{last:04X}, one per sender)"
