"""Import ``ibnetdiscover`` output, the topology file users dump from a real cluster.

The importer keeps node GUIDs and descriptions, LIDs and LMCs, port numbers
and each link's width and speed, and writes the fabric as NED-like text (one
``network`` of ``Switch`` and ``HCA`` submodules, one ``Link`` connection per
cable, and a ``SubnetManager``)::

    text = ibnetdiscover_to_ned(open("cluster.topo").read(), "cluster.topo")

Module names come from the node descriptions (``"stage114 mlx4_0"`` becomes
``stage114_mlx4_0``), made unique with the GUID where two nodes share one.
A malformed line raises :class:`~ibfabric.errors.TopologyError` with
``file:line: message``.
"""

from __future__ import annotations

import re
from pathlib import Path

import attrs

from ibfabric.components.rates import LANE_SIGNALLING, WIDTHS
from ibfabric.errors import TopologyError

__all__ = ["IBNetNode", "looks_like_ibnetdiscover", "parse_ibnetdiscover", "ibnetdiscover_to_ned"]

_NODE = re.compile(r'^(Switch|Ca|Rt)\s+(\d+)\s+"([^"]+)"\s*(?:#\s*"((?:[^"\\]|\\.)*)"(.*))?$')
_PORT = re.compile(
    r'^\[(\d+)\](?:\(([0-9a-fA-F]+)\))?\s+"([^"]+)"\[(\d+)\](?:\(([0-9a-fA-F]+)\))?\s*(?:#\s*(.*))?$'
)
_LID = re.compile(r"\blid\s+(\d+)")
_LMC = re.compile(r"\blmc\s+(\d+)")
_SPEED = re.compile(r"\b(\d+x)(SDR|DDR|QDR|FDR10|FDR|EDR|HDR|NDR)\b")
_IGNORED = ("vendid=", "devid=", "sysimgguid=", "switchguid=", "caguid=", "rtguid=")


@attrs.define
class IBNetNode:
    """One node of an ibnetdiscover dump."""

    ident: str  # "S-f452..." / "H-0002..."
    kind: str  # "Switch", "Ca" or "Rt"
    num_ports: int
    desc: str
    guid: str
    lid: int = 0
    lmc: int = 0
    port_lids: dict[int, int] = attrs.field(factory=dict)
    line: int = 0


def looks_like_ibnetdiscover(text: str) -> bool:
    """True if *text* reads like ibnetdiscover output (a ``Switch``/``Ca`` node line or its banner)."""
    for line in text.splitlines()[:400]:
        s = line.strip()
        if s.startswith("# Topology file: generated") and "ibnetdiscover" in s:
            return True
        if _NODE.match(s):
            return True
    return False


def parse_ibnetdiscover(text: str, filename: str = "<ibnetdiscover>"):
    """Parse a dump into ``(nodes, links, initiator)``.

    ``links`` are ``(node id, port, node id, port, width, speed)`` tuples, one
    per cable; ``initiator`` is the node id ibnetdiscover ran from, if the
    dump says.
    """
    nodes: dict[str, IBNetNode] = {}
    order: list[str] = []
    seen_links: dict[tuple, tuple] = {}
    port_used: dict[tuple[str, int], tuple] = {}
    current: IBNetNode | None = None
    initiator = None
    for no, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line:
            continue
        if line.startswith("#"):
            m = re.match(r"#\s*Initiated from node\s+([0-9a-fA-F]+)", line)
            if m:
                initiator = m.group(1).lower()
            continue
        if line.startswith(_IGNORED):
            continue
        m = _NODE.match(line)
        if m:
            kind, nports, ident, desc, rest = m.groups()
            guid = ident.split("-", 1)[1] if "-" in ident else ident
            node = IBNetNode(ident, kind, int(nports), (desc or "").replace('\\"', '"'), guid.lower(), line=no)
            rest = rest or ""
            if kind == "Switch":
                lm = re.search(r"port 0 lid (\d+) lmc (\d+)", rest)
                if lm:
                    node.lid, node.lmc = int(lm.group(1)), int(lm.group(2))
            if ident in nodes:
                raise TopologyError(f"{filename}:{no}: node {ident} appears twice")
            if node.num_ports < 1 or node.num_ports > 254:
                raise TopologyError(f"{filename}:{no}: node {ident} has {node.num_ports} ports (must be 1..254)")
            nodes[ident] = node
            order.append(ident)
            current = node
            continue
        m = _PORT.match(line)
        if m:
            if current is None:
                raise TopologyError(f"{filename}:{no}: port line before any Switch or Ca line")
            port, _pguid, peer, peer_port, _peer_pguid, comment = m.groups()
            port, peer_port = int(port), int(peer_port)
            comment = comment or ""
            if not 1 <= port <= current.num_ports:
                raise TopologyError(f"{filename}:{no}: {current.ident} has no port {port} (it has {current.num_ports})")
            sp = _SPEED.search(comment)
            width, speed = (sp.group(1), sp.group(2)) if sp else ("4x", "QDR")
            if width not in WIDTHS or speed not in LANE_SIGNALLING:
                raise TopologyError(f"{filename}:{no}: unknown link width/speed '{width}{speed}'")
            if current.kind != "Switch":
                own = comment.split('"')[0]
                lm = _LID.search(own)
                if lm:
                    lid = int(lm.group(1))
                    if not current.lid:
                        current.lid = lid
                        first = port
                        current.port_lids[first] = lid
                    else:
                        current.port_lids[port] = lid
                lmc = _LMC.search(own)
                if lmc:
                    current.lmc = int(lmc.group(1))
            key = tuple(sorted([(current.ident, port), (peer, peer_port)]))
            if key in seen_links:
                prev = seen_links[key]
                if prev[2:] != (width, speed):
                    raise TopologyError(
                        f"{filename}:{no}: link {current.ident}[{port}] - {peer}[{peer_port}] is {width}{speed}"
                        f" here but {prev[2]}{prev[3]} at line {prev[1]}"
                    )
                continue
            for end in key:
                if port_used.get(end, key) != key:
                    raise TopologyError(f"{filename}:{no}: port {end[1]} of {end[0]} has two links")
                port_used[end] = key
            seen_links[key] = ((current.ident, port, peer, peer_port), no, width, speed)
            continue
        raise TopologyError(f"{filename}:{no}: cannot read this line as ibnetdiscover output: {line[:60]!r}")
    if not nodes:
        raise TopologyError(f"{filename}:1: no Switch or Ca nodes found")
    links = []
    for key, ((a, pa, b, pb), no, width, speed) in seen_links.items():
        for ident in (a, b):
            if ident not in nodes:
                raise TopologyError(f"{filename}:{no}: link to {ident}, which the dump never describes")
        links.append((a, pa, b, pb, width, speed))
    ordered = [nodes[i] for i in order]
    init = None
    if initiator:
        for n in ordered:
            if n.guid.lstrip("0") == initiator.lstrip("0") and n.kind != "Switch":
                init = n.ident
    return ordered, links, init


def _ident(desc: str, fallback: str) -> str:
    name = re.sub(r"[^A-Za-z0-9_]+", "_", desc).strip("_")
    if not name:
        name = fallback
    if not (name[0].isalpha() or name[0] == "_"):
        name = "n_" + name
    return name


def ibnetdiscover_to_ned(text: str, filename: str = "<ibnetdiscover>", network: str | None = None) -> str:
    """NED-like text for an ibnetdiscover dump (see the module docstring)."""
    nodes, links, initiator = parse_ibnetdiscover(text, filename)
    names: dict[str, str] = {}
    used: set[str] = {"sm"}
    for n in nodes:
        base = _ident(n.desc, ("sw_" if n.kind == "Switch" else "ca_") + n.guid)
        name = base
        if name in used:
            name = f"{base}_{n.guid}"
        k = 2
        while name in used:
            name = f"{base}_{n.guid}_{k}"
            k += 1
        used.add(name)
        names[n.ident] = name
    net = network or _ident(Path(filename).stem if filename and not filename.startswith("<") else "fabric", "fabric")
    out = [
        f"// Imported by ibfabric from ibnetdiscover output {Path(filename).name}.",
        "// Node GUIDs, descriptions, LIDs, port numbers and link widths/speeds are the dump's.",
        f"network {net}",
        "{",
        "    submodules:",
    ]
    for n in nodes:
        typ = "Switch" if n.kind == "Switch" else "HCA"
        params = [f"numPorts = {n.num_ports};"]
        if n.lid:
            params.append(f"lid = {n.lid};")
        if n.lmc:
            params.append(f"lmc = {n.lmc};")
        extra = {p: lid for p, lid in n.port_lids.items() if lid != n.lid}
        if extra and typ == "HCA":
            params.append('portLids = "' + " ".join(f"{p}:{lid}" for p, lid in sorted(extra.items())) + '";')
        params.append(f'guid = "{n.guid}";')
        desc = n.desc.replace("\\", "\\\\").replace('"', '\\"')
        params.append(f'nodeDesc = "{desc}";')
        out.append(f"        {names[n.ident]}: {typ} {{ {' '.join(params)} }}")
    sm_node = f' node = "{names[initiator]}";' if initiator else ""
    out.append(f"        sm: SubnetManager {{{sm_node} }}")
    out.append("    connections:")
    for a, pa, b, pb, width, speed in links:
        out.append(
            f'        {names[a]}.port[{pa}] <--> Link {{ width = "{width}"; speed = "{speed}"; }} <--> {names[b]}.port[{pb}];'
        )
    out.append("}")
    return "\n".join(out) + "\n"
