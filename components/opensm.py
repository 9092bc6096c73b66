"""OpenSM's ``opensm-lfts.dump`` format: write forwarding tables, read them back.

OpenSM (3.3.x, ``osm_dump.c`` ``dump_ucast_lfts``) writes, per switch in
GUID order::

    Unicast lids [0-15] of switch Lid 1 guid 0x0002c90000000001 ('sw1'):
    0x0001 000 # Switch portguid 0x0002c90000000001: 'sw1'
    0x0004 003 # Channel Adapter portguid 0x0002c90000000105: 'h4'
    15 lids dumped

one line per LID that has a port.  The same text is what OpenSM's ``file``
routing engine (``opensm -R file -U FILE``, ``osm_ucast_file.c``) loads: it
reads the switch GUID after ``guid 0x`` on each ``Unicast lids`` line and,
on each ``0x`` line, the LID (hex), the port (decimal) and optionally the
port GUID after ``portguid 0x``; lines starting with ``#`` are comments.
:func:`write_lfts` writes exactly that (default ports expanded, since
OpenSM knows only linear tables); :func:`read_lfts` reads it onto a
:class:`FabricGraph`, matching switches by GUID, else by LID, else by name.
"""

from __future__ import annotations

import re
from os import PathLike
from pathlib import Path

import numpy as np

from ibfabric.errors import ConfigError

from .fabric import FabricGraph
from .tables import NO_PORT, ForwardingTables

__all__ = ["write_lfts", "read_lfts", "parse_lfts", "dump_lids", "port_guid", "short_names", "with_dump_identity"]

_HEADER = re.compile(
    r"^Unicast lids \[(0x[0-9a-fA-F]+|\d+)-(0x[0-9a-fA-F]+|\d+)\] of switch"
    r"(?: Lid (\d+))? guid 0x([0-9a-fA-F]+)(?:\s+\('(.*)'\))?:?\s*$"
)
_ENTRY = re.compile(r"^0x([0-9a-fA-F]+)\s+(\d+)(?:\s+#(.*))?$")
_FOOTER = re.compile(r"^\d+ lids dumped$")
_DESC = re.compile(r"portguid 0x([0-9a-fA-F]+): '(.*)'\s*$")


def port_guid(fabric: FabricGraph, e: int) -> int:
    """The port GUID of endpoint *e*: a switch's node GUID, a CA's node GUID + port number (as ibsim assigns them)."""
    node = int(fabric.ep_node[e])
    g = fabric.guid(node)
    return g if fabric.is_switch[node] else g + int(fabric.ep_port[e])


def short_names(fabric: FabricGraph) -> list[str]:
    """Node names without the network's name when every node path starts with it (``'fig1.sw1'`` -> ``'sw1'``)."""
    names = [nd.name for nd in fabric.nodes]
    heads = {n.split(".", 1)[0] for n in names}
    if len(heads) == 1 and all("." in n for n in names):
        return [n.split(".", 1)[1] for n in names]
    return names


def _descs(fabric: FabricGraph) -> list[str]:
    return [nd.desc or short for nd, short in zip(fabric.nodes, short_names(fabric))]


def write_lfts(tables: ForwardingTables) -> str:
    """The tables as OpenSM's ``opensm-lfts.dump`` text (loadable by ``opensm -R file -U``)."""
    g = tables.fabric
    exp = tables.expanded()
    top = g.max_lid
    desc = _descs(g)
    owner_line = {}
    for lid in np.flatnonzero(g.lid_owner >= 0).tolist():
        e = int(g.lid_owner[lid])
        node = int(g.ep_node[e])
        kind = "Switch" if g.is_switch[node] else "Channel Adapter"
        owner_line[lid] = f"{kind} portguid 0x{port_guid(g, e):016x}: '{desc[node]}'"
    out = []
    for r in sorted(range(len(g.switches)), key=lambda r: g.guid(int(g.switches[r]))):
        node = int(g.switches[r])
        out.append(f"Unicast lids [0-{top}] of switch Lid {g.lid_of(node)} guid 0x{g.guid(node):016x} ('{desc[node]}'):")
        ports = exp[r]
        for lid in np.flatnonzero(ports != NO_PORT).tolist():
            out.append(f"0x{lid:04x} {int(ports[lid]):03d} # {owner_line.get(lid, 'unknown node and type')}")
        out.append(f"{top} lids dumped")
    return "\n".join(out) + "\n"


def parse_lfts(text: str, name: str = "<string>") -> list[dict]:
    """The switches of a dump: ``{"guid", "lid", "desc", "line", "entries": {lid: (port, line)}, "names": {lid: desc}}``.

    Raises ConfigError ``name:line: ...`` for a line that is not part of the format.
    """
    switches: list[dict] = []
    cur: dict | None = None
    for ln, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#") or _FOOTER.match(line):
            continue
        m = _HEADER.match(line)
        if m:
            cur = {"guid": int(m.group(4), 16), "lid": int(m.group(3)) if m.group(3) else None,
                   "desc": m.group(5), "line": ln, "entries": {}, "names": {}}  # fmt: skip
            switches.append(cur)
            continue
        if line.startswith("Multicast mlids"):
            raise ConfigError(f"{name}:{ln}: this is a multicast dump; expected unicast tables (opensm-lfts.dump)")
        m = _ENTRY.match(line)
        if m:
            if cur is None:
                raise ConfigError(f"{name}:{ln}: table entry before any 'Unicast lids ... of switch' line")
            lid, port = int(m.group(1), 16), int(m.group(2))
            if port > 254:
                raise ConfigError(f"{name}:{ln}: port {port} is not a valid port number")
            cur["entries"][lid] = (port, ln)
            d = _DESC.search(m.group(3) or "")
            if d:
                cur["names"][lid] = d.group(2)
            continue
        raise ConfigError(f"{name}:{ln}: cannot parse {line[:60]!r} (expected 'Unicast lids ...' or '0xLID PORT # ...')")
    return switches


def dump_lids(text: str) -> dict[str, int]:
    """Node description -> base LID, from the comments of a dump (the lowest LID seen for each name)."""
    out: dict[str, int] = {}
    for sw in parse_lfts(text):
        for lid, desc in sw["names"].items():
            if desc not in out or lid < out[desc]:
                out[desc] = lid
        if sw["desc"] is not None and sw["lid"] is not None:
            out.setdefault(sw["desc"], sw["lid"])
    return out


def with_dump_identity(fabric: FabricGraph, text: str) -> FabricGraph:
    """A copy of *fabric* with the LIDs, LMCs and node GUIDs a dump shows (nodes matched by description/name).

    A subnet manager assigns LIDs (and a simulator like ibsim GUIDs) its own
    way; this makes ibfabric's view of the fabric agree with the dump so
    tables can be compared entry by entry.  Only single-port CAs and
    switches are supported (a CA's node GUID is its port GUID - its port).
    """
    import attrs

    guids: dict[str, int] = {}
    lids: dict[str, list[int]] = {}
    for line in text.splitlines():
        m = _ENTRY.match(line.strip())
        d = _DESC.search(m.group(3) or "") if m else None
        if d:
            lids.setdefault(d.group(2), []).append(int(m.group(1), 16))
            guids[d.group(2)] = int(d.group(1), 16)
    shorts = short_names(fabric)
    nodes = []
    for i, nd in enumerate(fabric.nodes):
        key = nd.desc or shorts[i]
        if key not in lids:
            raise ConfigError(f"the dump has no LID for node '{key}'")
        ls = sorted(set(lids[key]))
        lmc = (len(ls) - 1).bit_length()
        port = 0 if nd.is_switch else fabric.ports(i)[0]
        nodes.append(attrs.evolve(nd, lid=ls[0], lmc=lmc, guid=guids[key] - port))
    return FabricGraph(nodes, fabric.links, sm_node=fabric.sm_node)


def read_lfts(source: str | PathLike, fabric: FabricGraph, *, text: str | None = None) -> ForwardingTables:
    """Forwarding tables from an ``opensm-lfts.dump`` file (or *text*, with *source* naming it in errors).

    Switches are matched to *fabric* by GUID, else by the header's LID, else
    by description or node name.  Switches of the fabric absent from the
    dump keep empty tables (``info["missing"]`` lists them).
    """
    name = str(source)
    if text is None:
        text = Path(source).read_text()
    by_guid = {fabric.guid(int(n)): int(n) for n in fabric.switches}
    by_name = {}
    shorts = short_names(fabric)
    for n in fabric.switches.tolist():
        for key in (fabric.nodes[n].name, shorts[n], fabric.nodes[n].desc):
            if key:
                by_name.setdefault(key, n)
    lft = np.full((len(fabric.switches), fabric.max_lid + 1), NO_PORT, dtype=np.uint8)
    seen = set()
    for sw in parse_lfts(text, name):
        node = by_guid.get(sw["guid"])
        if node is None and sw["lid"] is not None and 0 < sw["lid"] <= fabric.max_lid and fabric.lid_owner[sw["lid"]] >= 0:
            cand = int(fabric.ep_node[fabric.lid_owner[sw["lid"]]])
            node = cand if fabric.is_switch[cand] else None
        if node is None and sw["desc"] is not None:
            node = by_name.get(sw["desc"])
        if node is None:
            raise ConfigError(f"{name}:{sw['line']}: switch guid 0x{sw['guid']:016x} ('{sw['desc']}') is not in the fabric")
        r = int(fabric.switch_row[node])
        seen.add(r)
        for lid, (port, ln) in sw["entries"].items():
            if lid > fabric.max_lid:
                raise ConfigError(f"{name}:{ln}: LID {lid} is beyond the fabric's highest LID ({fabric.max_lid})")
            if port > fabric.nodes[node].num_ports:
                raise ConfigError(f"{name}:{ln}: {fabric.nodes[node].name} has no port {port}")
            lft[r, lid] = port
    missing = [fabric.nodes[int(fabric.switches[r])].name for r in range(len(fabric.switches)) if r not in seen]
    return ForwardingTables(fabric, lft, engine="file", info={"source": name, "missing": missing})
