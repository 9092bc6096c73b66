"""Multicast forwarding tables (MFTs) and OpenSM's ``opensm-mfts.dump`` format.

An IBA switch forwards a packet whose DLID is a multicast LID (MLID,
``0xC000``-``0xFFFE``; ``0xFFFF`` is the permissive LID) to every port of the
MLID's *port mask*: the MFT holds one mask per MLID.  A
:class:`MulticastTables` keeps the masks of every switch of a fabric.

OpenSM (3.3.x, ``osm_dump.c`` ``dump_mcast_routes``) writes them, per switch
that has an entry, as::

    Switch 0x0002c90000000001
    LID    : Out Port(s)
    0xC000 : 0x001  0x003
    0xC001 : 0x002

:func:`write_mfts` writes exactly that; :func:`read_mfts` reads it onto a
:class:`~ibfabric.components.routing.fabric.FabricGraph`, matching switches by GUID,
and rejects what a subnet would not hold (unknown GUIDs, MLIDs outside the
multicast range, ports the switch lacks, an MLID or a port listed twice),
each at its ``file:line:col``.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Iterable, Sequence
from os import PathLike

import numpy as np

from ibfabric.errors import ConfigError

from . import validate
from .fabric import FabricGraph

__all__ = ["MCAST_LID_START", "MCAST_LID_END", "MulticastTables", "check_multicast", "flood", "parse_mfts",
           "read_mfts", "shared_tree", "write_mfts"]

#: The multicast LID range (IBA 1.2 §4.1.1; 0xFFFF is the permissive LID, not a group).
MCAST_LID_START = 0xC000
MCAST_LID_END = 0xFFFE

_SWITCH = re.compile(r"^Switch 0x([0-9a-fA-F]+)\s*$")
_TITLE = re.compile(r"^LID\s*:\s*Out Port\(s\)\s*$")
_ENTRY = re.compile(r"^0x([0-9a-fA-F]+)\s*:(.*)$")
_PORT = re.compile(r"0x([0-9a-fA-F]+)|(\S+)")


class MulticastTables:
    """The MFT of every switch of *fabric*: per MLID, a port mask per switch.

    ``masks[mlid]`` is a boolean array of shape ``(switches, width)``, rows
    in :attr:`FabricGraph.switches` order, ``width`` one more than the
    highest port number of any switch; port 0 is the switch itself.

    ``groups`` are the multicast groups the masks serve
    (:class:`~ibfabric.components.routing.mgroups.MulticastGroup`, with their MLIDs)
    and ``engine`` the multicast routing engine that built them; a dump read
    back has neither.  Equality compares the masks only.
    """

    def __init__(self, fabric: FabricGraph, masks: dict[int, np.ndarray] | None = None, *, groups: Sequence = (),
                 engine: str = ""):
        self.fabric = fabric
        self.groups: tuple = tuple(groups)
        self.engine = engine
        self.width = max((fabric.nodes[int(n)].num_ports for n in fabric.switches), default=0) + 1
        self.masks: dict[int, np.ndarray] = {}
        for mlid, m in (masks or {}).items():
            m = np.asarray(m, dtype=bool)
            if m.shape != (len(fabric.switches), self.width):
                raise ValueError(f"the mask of MLID 0x{mlid:04X} must have shape {(len(fabric.switches), self.width)}")
            self.masks[_check_mlid(mlid)] = m.copy()

    __hash__ = None  # mutable

    def __len__(self) -> int:
        return len(self.masks)

    def __eq__(self, other) -> bool:
        if not isinstance(other, MulticastTables):
            return NotImplemented
        a = {k: v for k, v in self.masks.items() if v.any()}
        b = {k: v for k, v in other.masks.items() if v.any()}
        return a.keys() == b.keys() and all(np.array_equal(a[k], b[k]) for k in a)

    @property
    def mlids(self) -> list[int]:
        """The MLIDs with at least one port on some switch, ascending."""
        return sorted(k for k, v in self.masks.items() if v.any())

    def _row(self, switch_node: int) -> int:
        r = int(self.fabric.switch_row[switch_node])
        if r < 0:
            raise ValueError(f"{self.fabric.nodes[switch_node].name} is not a switch")
        return r

    def set(self, switch_node: int, mlid: int, ports: Iterable[int]) -> None:
        """Set the port mask of *mlid* on one switch (replacing what it had)."""
        r = self._row(switch_node)
        nd = self.fabric.nodes[switch_node]
        mask = self.masks.get(_check_mlid(mlid))
        if mask is None:
            mask = self.masks[mlid] = np.zeros((len(self.fabric.switches), self.width), dtype=bool)
        mask[r] = False
        for p in ports:
            if not 0 <= p <= nd.num_ports:
                raise ValueError(f"{nd.name} has no port {p}")
            mask[r, p] = True

    def ports(self, switch_node: int, mlid: int) -> list[int]:
        """The ports of *mlid*'s mask on one switch (empty if it has none)."""
        m = self.masks.get(mlid)
        return [] if m is None else np.flatnonzero(m[self._row(switch_node)]).tolist()

    def entries(self) -> dict[int, dict[int, tuple[int, ...]]]:
        """Every switch's MFT as the data path uses it: switch node -> {MLID: output ports}.

        Output ports exclude port 0 (the switch itself); MLIDs whose mask has
        no other port on a switch are left out, and so are switches without
        entries.  One pass over the MLIDs, whatever the number of switches.
        """
        out: dict[int, dict[int, tuple[int, ...]]] = {}
        switches = self.fabric.switches.tolist()
        for mlid in sorted(self.masks):
            rows, ports = np.nonzero(self.masks[mlid][:, 1:])
            for r, p in zip(rows.tolist(), (ports + 1).tolist()):
                out.setdefault(switches[r], {}).setdefault(mlid, []).append(p)
        return {sw: {m: tuple(p) for m, p in e.items()} for sw, e in out.items()}

    def switch_entries(self, switch_node: int) -> dict[int, tuple[int, ...]]:
        """One switch's MFT: {MLID: output ports}, port 0 excluded (see :meth:`entries`)."""
        r = self._row(switch_node)
        out = {}
        for mlid in sorted(self.masks):
            ports = np.flatnonzero(self.masks[mlid][r, 1:])
            if len(ports):
                out[mlid] = tuple((ports + 1).tolist())
        return out

    def group(self, name: str):
        """The group called *name* (KeyError listing the groups if none is)."""
        for g in self.groups:
            if g.name == name:
                return g
        raise KeyError(f"no multicast group '{name}' (groups: {', '.join(g.name for g in self.groups) or 'none'})")

    def group_of(self, mlid: int):
        """The group whose packets carry *mlid* (None if no group uses it)."""
        index = self.__dict__.get("_by_mlid")
        if index is None or index[0] is not self.groups:
            index = self._by_mlid = (self.groups, {m: g for g in self.groups for m in g.sender_mlids})
        return index[1].get(mlid)

    def copy(self) -> "MulticastTables":
        """A copy with its own masks, which can change without changing these (fabric and groups shared)."""
        return MulticastTables(self.fabric, self.masks, groups=self.groups, engine=self.engine)


def shared_tree(tables: MulticastTables, mlid: int, members: Sequence[int], root: int | None = None, *,
                senders: Sequence[int] = ()) -> None:
    """Set the masks of *mlid* to one tree shared by every sender: the breadth-first tree of the
    switches from *root* (default: the switch of the first member), pruned to the branches that
    lead to a member; *members* are endpoint indices (CA ports or switches).  The switches of
    *senders* that are not members (IBA's send-only members) stay in the tree without their
    port in the mask, so that their packets enter it."""
    g = tables.fabric
    att_node, att_port = g.attachments()
    leaves = {int(att_node[e]) for e in members}
    member_set = {int(e) for e in members}
    send_only = [int(e) for e in senders if int(e) not in member_set]
    if -1 in leaves or any(att_node[e] < 0 for e in send_only):
        raise ValueError("a member is not attached to a switch")
    if not leaves:
        return
    root = min(leaves) if root is None else root
    parent: dict[int, tuple[int, int]] = {root: (-1, -1)}  # switch -> (parent switch, port of the parent)
    q = deque([root])
    while q:
        x = q.popleft()
        for p in range(1, int(g.num_ports[x]) + 1):
            y = int(g.peer_node[x, p])
            if y >= 0 and g.is_switch[y] and y not in parent:
                parent[y] = (x, p)
                q.append(y)
    ports: dict[int, set[int]] = {}
    for e in [*members, *send_only]:
        sw = int(att_node[e])
        if sw not in parent:
            raise ValueError(f"{g.endpoint_name(int(e))} is not connected to the tree's root")
        ports.setdefault(sw, set())
        if int(e) in member_set:
            ports[sw].add(int(att_port[e]))
        while parent[sw][0] >= 0:
            up, up_port = parent[sw]
            ports[up] = ports.get(up, set()) | {up_port}
            ports.setdefault(sw, set()).add(int(g.peer_port[up, up_port]))
            sw = up
    for sw in g.switches.tolist():
        tables.set(sw, mlid, sorted(ports.get(sw, ())))


def check_multicast(tables: MulticastTables) -> list[str]:
    """What is wrong with the multicast tables: one line per problem, empty if none.

    The members of an MLID are the endpoints whose attachment port is in
    their switch's mask.  From every member, a packet is followed as IBA
    switches forward it (to every port of the mask but the one it arrived
    on): it must reach every other member exactly once, visit no switch
    twice (a loop or a duplicate), and never leave on a port that leads
    nowhere.
    """
    g = tables.fabric
    att_node, att_port = g.attachments()
    problems: list[str] = []
    names = [nd.name for nd in g.nodes]
    for mlid in tables.mlids:
        mask = tables.masks[mlid]
        rows = g.switch_row
        members = [e for e in range(len(g.ep_node))
                   if att_node[e] >= 0 and mask[rows[att_node[e]], att_port[e]]]
        member_set = set(members)
        for r, sw in enumerate(g.switches.tolist()):
            for p in np.flatnonzero(mask[r]).tolist():
                if p and g.peer_node[sw, p] < 0:
                    problems.append(f"MLID 0x{mlid:04X}: {names[sw]} port {p} is in the mask but leads nowhere")
        for src in members:
            got, loop = flood(g, mask, int(att_node[src]), int(att_port[src]))
            who = g.endpoint_name(src)
            if loop is not None:
                problems.append(f"MLID 0x{mlid:04X}: from {who} packets reach {names[loop]} twice (a loop or a"
                                f" duplicate path)")
                continue
            missed = [g.endpoint_name(e) for e in members if e != src and got.get(e, 0) == 0]
            twice = [g.endpoint_name(e) for e, n in got.items() if n > 1 or (e == src) or e not in member_set]
            if missed:
                problems.append(f"MLID 0x{mlid:04X}: from {who} members not reached: {', '.join(missed[:5])}"
                                f"{' ...' if len(missed) > 5 else ''}")
            if twice:
                problems.append(f"MLID 0x{mlid:04X}: from {who} reached more than once: {', '.join(twice[:5])}")
    return problems


def flood(g: FabricGraph, mask: np.ndarray, switch: int, in_port: int) -> tuple[dict[int, int], int | None]:
    """Follow one packet of an MLID whose port masks are *mask* (switch rows x ports) that enters
    *switch* on *in_port*, as IBA switches forward it: to every port of the mask but the one it
    arrived on.  Returns ``(copies, loop)``: how many copies each endpoint receives, and a switch
    the packet reaches twice (a loop or two paths; the walk stops there), or None."""
    rows = g.switch_row
    got: dict[int, int] = {}
    seen: set[int] = set()
    q = deque([(switch, in_port)])
    while q:
        sw, inp = q.popleft()
        if sw in seen:
            return got, sw
        seen.add(sw)
        for p in np.flatnonzero(mask[rows[sw]]).tolist():
            if p == inp:
                continue
            if p == 0:
                e = g.endpoint_of(sw)
                got[e] = got.get(e, 0) + 1
                continue
            y = int(g.peer_node[sw, p])
            if y < 0:
                continue
            if g.is_switch[y]:
                q.append((y, int(g.peer_port[sw, p])))
            else:
                e = g.endpoint_of(y, int(g.peer_port[sw, p]))
                got[e] = got.get(e, 0) + 1
    return got, None


def _check_mlid(mlid: int) -> int:
    if not MCAST_LID_START <= mlid <= MCAST_LID_END:
        raise ValueError(f"0x{mlid:04X} is not a multicast LID (0xC000..0xFFFE)")
    return mlid


def write_mfts(tables: MulticastTables) -> str:
    """The tables as OpenSM's ``opensm-mfts.dump`` text (switches in GUID order, only those with entries)."""
    g = tables.fabric
    mlids = tables.mlids
    out = []
    for r in sorted(range(len(g.switches)), key=lambda r: g.guid(int(g.switches[r]))):
        lines = []
        for mlid in mlids:
            ports = np.flatnonzero(tables.masks[mlid][r]).tolist()
            if ports:
                lines.append(f"0x{mlid:04X} :" + "".join(f" 0x{p:03X} " for p in ports))
        if lines:
            out += ["", f"Switch 0x{g.guid(int(g.switches[r])):016x}", "LID    : Out Port(s)", *lines]
    return "\n".join(out) + "\n"


def parse_mfts(text: str, name: str = "<string>") -> list[dict]:
    """The switches of a dump: ``{"guid", "line", "col", "entries": {mlid: (ports, line, cols)}}``,
    ``cols`` the column of the MLID and of each port.

    Raises ConfigError ``name:line:col: ...`` for a line that is not part of
    the format, an MLID outside 0xC000..0xFFFE, a port above 254, or an MLID
    or a port listed twice.
    """
    switches: list[dict] = []
    cur: dict | None = None
    for ln, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        lead = len(raw) - len(raw.lstrip()) + 1
        if not line or line.startswith("#") or _TITLE.match(line):
            continue
        m = _SWITCH.match(line)
        if m:
            if len(m.group(1).lstrip("0")) > 16:
                raise ConfigError(f"{name}:{ln}:{m.start(1) + lead - 2}: switch GUID has more than 64 bits")
            cur = {"guid": int(m.group(1), 16), "line": ln, "col": m.start(1) + lead - 2, "entries": {}}
            switches.append(cur)
            continue
        if line.startswith("Unicast lids"):
            raise ConfigError(f"{name}:{ln}:{lead}: this is a unicast dump; expected multicast tables (opensm-mfts.dump)")
        m = _ENTRY.match(line)
        if not m:
            raise ConfigError(f"{name}:{ln}:{lead}: cannot parse {line[:60]!r} (expected 'Switch 0xGUID' or "
                              f"'0xMLID : 0xPORT ...')")
        if cur is None:
            raise ConfigError(f"{name}:{ln}:{lead}: table entry before any 'Switch 0x...' line")
        col = m.start(1) + lead - 2
        if len(m.group(1).lstrip("0")) > 8:
            raise ConfigError(f"{name}:{ln}:{col}: {line[:40]!r}: number far too large")
        mlid = int(m.group(1), 16)
        if not MCAST_LID_START <= mlid <= MCAST_LID_END:
            raise ConfigError(f"{name}:{ln}:{col}: LID 0x{mlid:04X} is not a multicast LID (0xC000..0xFFFE); "
                              f"unicast LIDs belong in an opensm-lfts.dump")
        if mlid in cur["entries"]:
            raise ConfigError(f"{name}:{ln}:{col}: MLID 0x{mlid:04X} appears twice in the table of switch guid "
                              f"0x{cur['guid']:016x} (first at line {cur['entries'][mlid][1]})")
        ports: list[int] = []
        cols: list[int] = []
        base = m.start(2) + lead
        for pm in _PORT.finditer(m.group(2)):
            pcol = base + pm.start()
            if pm.group(1) is None or len(pm.group(1).lstrip("0")) > 4:
                raise ConfigError(f"{name}:{ln}:{pcol}: {pm.group(0)[:20]!r} is not a port (expected 0x followed by"
                                  f" hex digits, as in 0x001)")
            p = int(pm.group(1), 16)
            if p > validate.MAX_PORTS:
                raise ConfigError(f"{name}:{ln}:{pcol}: port {p} is not a valid port number (0..254)")
            if p in ports:
                raise ConfigError(f"{name}:{ln}:{pcol}: port {p} is listed twice for MLID 0x{mlid:04X}")
            ports.append(p)
            cols.append(pcol)
        cur["entries"][mlid] = (ports, ln, [col, *cols])
    return switches


def read_mfts(source: str | PathLike, fabric: FabricGraph, *, text: str | None = None) -> MulticastTables:
    """Multicast tables from an ``opensm-mfts.dump`` file (or *text*, with *source* naming it in errors).

    Switches are matched to *fabric* by node GUID; switches absent from the
    dump have empty masks.

    Raises
    ------
    ConfigError
        ``file:line:col: ...`` for a line that does not parse (see
        :func:`parse_mfts`), a switch GUID the fabric does not have, a
        switch listed twice, a port the switch does not have, and for a file
        that is not UTF-8 text.
    """
    name = str(source)
    if text is None:
        text = validate.read_text(source, ConfigError)
    by_guid = {fabric.guid(int(n)): int(n) for n in fabric.switches}
    tables = MulticastTables(fabric)
    seen: dict[int, int] = {}
    for sw in parse_mfts(text, name):
        node = by_guid.get(sw["guid"])
        where = f"{name}:{sw['line']}:{sw['col']}"
        if node is None:
            raise ConfigError(f"{where}: switch guid 0x{sw['guid']:016x} is not in the fabric (switches are matched"
                              f" by GUID; the dump must come from this fabric)")
        if node in seen:
            raise ConfigError(f"{where}: switch guid 0x{sw['guid']:016x} has a second table (the first at line"
                              f" {seen[node]})")
        seen[node] = sw["line"]
        nd = fabric.nodes[node]
        for mlid, (ports, ln, cols) in sw["entries"].items():
            for p, c in zip(ports, cols[1:]):
                if p > nd.num_ports:
                    raise ConfigError(f"{name}:{ln}:{c}: {nd.name} has no port {p}")
            tables.set(node, mlid, ports)
    return tables
