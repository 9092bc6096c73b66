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
:class:`FabricGraph`, matching switches by GUID as OpenSM does, and rejects
what OpenSM's subnet would not hold (unknown GUIDs, LID 0 or multicast
LIDs, ports the switch lacks, another node's LID sent to port 0), each at
its ``file:line:col``.
"""

from __future__ import annotations

import re
from os import PathLike

import numpy as np

from ibfabric.errors import ConfigError

from . import validate
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
    """The switches of a dump: ``{"guid", "lid", "desc", "line", "entries": {lid: (port, line)}, "names": {lid: desc}}``
    (and ``"cols": {lid: (lid column, port column)}``, ``"col"``, ``"guid_col"`` for messages).

    Raises ConfigError ``name:line:col: ...`` for a line that is not part of
    the format, LID 0 or a LID outside the unicast range, a port above 254,
    or a LID listed twice for one switch.
    """
    switches: list[dict] = []
    cur: dict | None = None
    for ln, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        lead = len(raw) - len(raw.lstrip()) + 1
        if not line or line.startswith("#") or _FOOTER.match(line):
            continue
        m = _HEADER.match(line)
        if m:
            lid = int(m.group(3)) if m.group(3) and len(m.group(3)) <= 30 else None
            if m.group(3) and (lid is None or validate.lid_problem(lid) or lid == 0):
                raise ConfigError(f"{name}:{ln}:{m.start(3) + lead}: switch LID {m.group(3)[:20]} is not a unicast LID 1..0xBFFF")
            cur = {"guid": int(m.group(4), 16), "lid": lid, "desc": m.group(5), "line": ln, "col": lead,
                   "guid_col": m.start(4) + lead - 2, "entries": {}, "names": {}, "cols": {}}  # fmt: skip
            switches.append(cur)
            continue
        if line.startswith("Multicast mlids"):
            raise ConfigError(f"{name}:{ln}:{lead}: this is a multicast dump; expected unicast tables (opensm-lfts.dump)")
        m = _ENTRY.match(line)
        if m:
            if cur is None:
                raise ConfigError(f"{name}:{ln}:{lead}: table entry before any 'Unicast lids ... of switch' line")
            lid_col, port_col = m.start(1) + lead - 2, m.start(2) + lead
            digits = m.group(1).lstrip("0")
            if len(digits) > 8 or len(m.group(2).lstrip("0")) > 8:
                raise ConfigError(f"{name}:{ln}:{lid_col}: {line[:40]!r}: number far too large")
            lid, port = int(m.group(1), 16), int(m.group(2))
            if lid == 0:
                raise ConfigError(f"{name}:{ln}:{lid_col}: LID 0 is reserved; a table has no entry for it")
            if lid > validate.MAX_UNICAST_LID:
                raise ConfigError(f"{name}:{ln}:{lid_col}: LID 0x{lid:04x} is not a unicast LID (1..0xBFFF); "
                                  f"multicast LIDs belong in a multicast dump")
            if port > validate.MAX_PORTS:
                raise ConfigError(f"{name}:{ln}:{port_col}: port {port} is not a valid port number (0..254)")
            if lid in cur["entries"]:
                first = cur["entries"][lid][1]
                raise ConfigError(f"{name}:{ln}:{lid_col}: LID {lid} appears twice in the table of switch guid "
                                  f"0x{cur['guid']:016x} (first at line {first})")
            cur["entries"][lid] = (port, ln)
            cur["cols"][lid] = (lid_col, port_col)
            d = _DESC.search(m.group(3) or "")
            if d:
                cur["names"][lid] = d.group(2)
            continue
        raise ConfigError(f"{name}:{ln}:{lead}: cannot parse {line[:60]!r} (expected 'Unicast lids ...' or '0xLID PORT # ...')")
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

    Switches are matched to *fabric* by node GUID, as OpenSM's ``file``
    engine does; the dump's LIDs must be the fabric's.  Switches of the
    fabric absent from the dump keep empty tables (``info["missing"]`` lists
    them).

    Raises
    ------
    ConfigError
        ``file:line:col: ...`` for a line that does not parse (see
        :func:`parse_lfts`), a switch GUID the fabric does not have (the
        error names it), a switch listed twice, a header LID that is not the
        switch's, a LID beyond the fabric's highest, a port the switch does
        not have, or a LID sent to port 0 that is not the switch's own (port
        0 is the switch itself: it would absorb the packets), and for a file
        that is not UTF-8 text.
    """
    name = str(source)
    if text is None:
        text = validate.read_text(source, ConfigError)
    by_guid = {fabric.guid(int(n)): int(n) for n in fabric.switches}
    lft = np.full((len(fabric.switches), fabric.max_lid + 1), NO_PORT, dtype=np.uint8)
    seen: dict[int, int] = {}
    for sw in parse_lfts(text, name):
        node = by_guid.get(sw["guid"])
        where = f"{name}:{sw['line']}:{sw['guid_col']}"
        if node is None:
            desc = f" ('{sw['desc']}')" if sw["desc"] is not None else ""
            hint = ""
            if sw["lid"] is not None and 0 < sw["lid"] <= fabric.max_lid and fabric.lid_owner[sw["lid"]] >= 0:
                e = int(fabric.lid_owner[sw["lid"]])
                hint = (f"; LID {sw['lid']} is {fabric.endpoint_name(e)}, GUID 0x{port_guid(fabric, e):016x}"
                        f" (the dump must come from this fabric)")
            raise ConfigError(f"{where}: switch guid 0x{sw['guid']:016x}{desc} is not in the fabric "
                              f"(switches are matched by GUID){hint}")
        r = int(fabric.switch_row[node])
        if r in seen:
            raise ConfigError(f"{where}: switch guid 0x{sw['guid']:016x} has a second table (the first at line {seen[r]})")
        seen[r] = sw["line"]
        nd = fabric.nodes[node]
        own_lo = fabric.lid_of(node)
        own = range(own_lo, own_lo + (1 << int(nd.lmc)))
        if sw["lid"] is not None and sw["lid"] != own_lo:
            raise ConfigError(f"{name}:{sw['line']}:{sw['col']}: switch guid 0x{sw['guid']:016x} ({nd.name}) has LID "
                              f"{sw['lid']} in the dump but {own_lo} in the fabric (the dump's LIDs must be the fabric's)")
        for lid, (port, ln) in sw["entries"].items():
            col, port_col = sw["cols"].get(lid, (1, 1))
            if lid > fabric.max_lid:
                raise ConfigError(f"{name}:{ln}:{col}: LID {lid} is beyond the fabric's highest LID ({fabric.max_lid})")
            if port > nd.num_ports:
                raise ConfigError(f"{name}:{ln}:{port_col}: {nd.name} has no port {port}")
            if port == 0 and lid not in own:
                owner = int(fabric.lid_owner[lid])
                whose = f" ({fabric.endpoint_name(owner)})" if owner >= 0 else " (a LID no port has)"
                raise ConfigError(f"{name}:{ln}:{col}: LID {lid}{whose} is sent to port 0 of {nd.name}; port 0 is the "
                                  f"switch itself, only its own LID{'s' if len(own) > 1 else ''} {own.start}"
                                  f"{f'..{own.stop - 1}' if len(own) > 1 else ''} may go there")
            lft[r, lid] = port
    missing = [fabric.nodes[int(fabric.switches[r])].name for r in range(len(fabric.switches)) if r not in seen]
    return ForwardingTables(fabric, lft, engine="file", info={"source": name, "missing": missing})
