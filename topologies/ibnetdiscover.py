"""Import ``ibnetdiscover`` output, the topology file users dump from a real cluster.

The importer keeps node GUIDs and descriptions, LIDs and LMCs, port numbers
and each link's width and speed, and writes the fabric as NED-like text (one
``network`` of ``Switch`` and ``HCA`` submodules, one ``Link`` connection per
cable, and a ``SubnetManager``)::

    text = ibnetdiscover_to_ned(open("cluster.topo").read(), "cluster.topo")

Submodule names come from the node descriptions, by default: the part an
administrator calls the node by (``"stage114 mlx4_0"`` becomes
``stage114_mlx4_0``, ``"MF0;ib5:SX6036/U1"`` ``ib5_SX6036``,
``"MT25408 ConnectX Mellanox Technologies"`` ``ConnectX``), and where
several nodes share one, each of them gets a short GUID suffix
(``ConnectX_49cd``, ``ConnectX_49ce``).  ``names="guid"`` or
``names="lid"`` names them ``sw_<guid>``/``ca_<guid>`` or
``sw_lid<lid>``/``ca_lid<lid>`` instead
(:func:`node_names`; ``ibfabric topo show|convert --names``).  The full
description and the GUID are always kept, as the ``nodeDesc`` and ``guid``
parameters.  ``docs/ibnetdiscover.md`` is the user's guide.

Routers (``Rt`` nodes) are imported as channel adapters (``HCA``): ibfabric
models no routers, and a router is an end of the subnet, as an adapter is.
A port line without a link speed (``4xQDR``) is taken as 4x QDR.

Every error is a :class:`~ibfabric.errors.TopologyError` at the dump's own
``file:line:col``, whether the line does not parse or the subnet it
describes is invalid (:mod:`ibfabric.components.routing.validate`: LIDs 1..0xBFFF
and unique, LMC 0..7, 64-bit unique non-zero GUIDs, no node cabled to
itself, known widths and speeds).  :func:`dump_fabric` checks a parsed dump;
:func:`ibnetdiscover_to_ned` does it before writing anything.
"""

from __future__ import annotations

import re
from pathlib import Path

import attrs

from ibfabric.components.rates import LANE_SIGNALLING, WIDTHS
from ibfabric.components.routing import validate
from ibfabric.errors import ConfigError, TopologyError
from ibfabric.topologies import DUMP_SUFFIXES  # (kept there: detect_format reads it without this module)

__all__ = [
    "IBNetNode",
    "IBNetLink",
    "DUMP_SUFFIXES",
    "NAMINGS",
    "looks_like_ibnetdiscover",
    "not_a_dump",
    "parse_ibnetdiscover",
    "dump_fabric",
    "ibnetdiscover_to_ned",
    "ned_with_lines",
    "node_names",
    "readable",
]

_NODE = re.compile(r'^(Switch|Ca|Rt)\s+(\d+)\s+"([^"]+)"\s*(?:#\s*"((?:[^"\\]|\\.)*)"(.*))?$')
_PORT = re.compile(
    r'^\[(\d+)\](?:\(([0-9a-fA-F]+)\))?\s+"([^"]+)"\[(\d+)\](?:\(([0-9a-fA-F]+)\))?\s*(?:#\s*(.*))?$'
)
_LID = re.compile(r"\blid\s+(\d+)")
_LMC = re.compile(r"\blmc\s+(\d+)")
_SWITCH_LID = re.compile(r"port 0 lid (\d+) lmc (\d+)")
_SPEED = re.compile(r"(?<![\w.])([1-9]\d{0,2}x)([A-Za-z][A-Za-z0-9]*)(?![\w.])")
_QUOTED = re.compile(r'"(?:[^"\\]|\\.)*"')
_IGNORED = ("vendid=", "devid=", "sysimgguid=", "switchguid=", "caguid=", "rtguid=")
_EXAMPLE = "'Switch 36 \"S-0002c90200439f8a\" # \"desc\" port 0 lid 1 lmc 0' or 'Ca 2 \"H-...\" # \"desc\"'"


@attrs.define
class IBNetNode:
    """One node of an ibnetdiscover dump (``line``/``col``: where its ``Switch``/``Ca``/``Rt`` line starts)."""

    ident: str  # "S-f452..." / "H-0002..."
    kind: str  # "Switch", "Ca" or "Rt"
    num_ports: int
    desc: str
    guid: str  # lower-case hexadecimal, as in the dump
    lid: int = 0
    lmc: int = 0
    port_lids: dict[int, int] = attrs.field(factory=dict)
    line: int = 0
    col: int = 1


@attrs.frozen
class IBNetLink:
    """One cable: port ``port_a`` of node ``a`` to ``port_b`` of ``b`` (node idents), where the dump first shows it."""

    a: str
    port_a: int
    b: str
    port_b: int
    width: str
    speed: str
    line: int = 0
    col: int = 1


def looks_like_ibnetdiscover(text: str) -> bool:
    """True if *text* reads like ibnetdiscover output (a ``Switch``/``Ca`` node line or its banner)."""
    for line in text.splitlines()[:400]:
        s = line.strip()
        if s.startswith("# Topology file: generated") and "ibnetdiscover" in s:
            return True
        if _NODE.match(s):
            return True
    return False


def not_a_dump(text: str, filename: str) -> TopologyError:
    """The error for a file that claims to be a dump (by its name) and is not, at its first content line."""
    for no, raw in enumerate(text.splitlines(), 1):
        s = raw.strip()
        if s and not s.startswith(("#", "//")):
            col = len(raw) - len(raw.lstrip()) + 1
            return TopologyError(f"{filename}:{no}:{col}: not an ibnetdiscover dump (expected 'Switch'/'Ca' lines "
                                 f"such as {_EXAMPLE}; got {s[:40]!r})")
    return TopologyError(f"{filename}:1:1: not an ibnetdiscover dump (no 'Switch'/'Ca' lines; the file is empty)")


def _int(digits: str, where: str, what: str) -> int:
    """A decimal field; TopologyError for one too long to be a number of this format."""
    if len(digits) > 30:
        raise TopologyError(f"{where}: {what} {digits[:12]}... ({len(digits)} digits) is far too large")
    return int(digits)


def parse_ibnetdiscover(text: str, filename: str = "<ibnetdiscover>"):
    """Parse a dump into ``(nodes, links, initiator)``.

    ``nodes`` are :class:`IBNetNode`, ``links`` :class:`IBNetLink` (one per
    cable, in the order the dump first shows them); ``initiator`` is the
    node id ibnetdiscover ran from, if the dump says.  Each field is checked
    as it is read (port numbers, LIDs, LMCs, GUIDs, widths and speeds);
    :func:`dump_fabric` checks the subnet as a whole.

    Raises
    ------
    TopologyError
        ``file:line:col: message`` for the first bad line or field.
    """
    nodes: dict[str, IBNetNode] = {}
    order: list[str] = []
    seen_links: dict[tuple, IBNetLink] = {}
    port_used: dict[tuple[str, int], tuple] = {}
    current: IBNetNode | None = None
    initiator = None
    for no, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line:
            continue
        lead = len(raw) - len(raw.lstrip())

        def at(m: re.Match | None = None, group: int = 0, offset: int = 0, _no=no, _lead=lead) -> str:
            col = (m.start(group) if m is not None else 0) + offset + _lead + 1
            return f"{filename}:{_no}:{col}"

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
            try:
                validate.parse_guid(guid, "the GUID")
            except ValueError as exc:
                start = m.start(3) + (len(ident) - len(guid))
                raise TopologyError(f"{filename}:{no}:{start + lead + 1}: node \"{ident}\": {exc}") from None
            num_ports = _int(nports, at(m, 2), "port count")
            node = IBNetNode(ident, kind, num_ports, (desc or "").replace('\\"', '"'), guid.lower(), line=no, col=lead + 1)
            if ident in nodes:
                raise TopologyError(f"{at()}: node {ident} appears twice (first at line {nodes[ident].line})")
            problem = validate.ports_problem(num_ports, "the port count")
            if problem:
                raise TopologyError(f"{at(m, 2)}: node {ident}: {problem}")
            if kind == "Switch" and rest:
                lm = _SWITCH_LID.search(rest)
                if lm:
                    node.lmc = _int(lm.group(2), at(m, 5, lm.start(2)), "LMC")
                    problem = validate.lmc_problem(node.lmc, "the LMC")
                    if problem:
                        raise TopologyError(f"{at(m, 5, lm.start(2))}: {ident}: {problem}")
                    node.lid = _int(lm.group(1), at(m, 5, lm.start(1)), "LID")
                    problem = validate.lid_problem(node.lid, "the LID", lmc=node.lmc)
                    if problem:
                        raise TopologyError(f"{at(m, 5, lm.start(1))}: {ident}: {problem}")
            nodes[ident] = node
            order.append(ident)
            current = node
            continue
        m = _PORT.match(line)
        if m:
            if current is None:
                raise TopologyError(f"{at()}: port line before any Switch or Ca line")
            port_s, _pguid, peer, peer_port_s, _peer_pguid, comment = m.groups()
            port = _int(port_s, at(m, 1), "port")
            peer_port = _int(peer_port_s, at(m, 4), "port")
            comment = comment or ""
            cstart = m.start(6) if m.group(6) is not None else len(line)
            if not 1 <= port <= current.num_ports:
                raise TopologyError(f"{at(m, 1)}: {current.ident} has no port {port} (it has {current.num_ports})")
            if not 1 <= peer_port <= validate.MAX_PORTS:
                raise TopologyError(f"{at(m, 4)}: port {peer_port} of {peer} is not a port a cable can join (1..254)")
            # the link's width and speed: the token such as 4xQDR outside the quoted descriptions
            bare = _QUOTED.sub(lambda q: " " * len(q.group()), comment)
            sp = _SPEED.search(bare)
            width, speed = (sp.group(1), sp.group(2)) if sp else ("4x", "QDR")
            if sp and (width not in WIDTHS or speed not in LANE_SIGNALLING):
                problem = validate.link_problem(width, speed)
                where = f"{filename}:{no}:{cstart + sp.start() + lead + 1}"
                raise TopologyError(f"{where}: unknown link width/speed '{width}{speed}': {problem}")
            if current.kind != "Switch":
                own = comment.split('"')[0]
                lmc = _LMC.search(own)
                if lmc:
                    where = f"{filename}:{no}:{cstart + lmc.start(1) + lead + 1}"
                    current.lmc = _int(lmc.group(1), where, "LMC")
                    problem = validate.lmc_problem(current.lmc, "the LMC")
                    if problem:
                        raise TopologyError(f"{where}: {current.ident} port {port}: {problem}")
                lm = _LID.search(own)
                if lm:
                    where = f"{filename}:{no}:{cstart + lm.start(1) + lead + 1}"
                    lid = _int(lm.group(1), where, "LID")
                    problem = validate.lid_problem(lid, "the LID", lmc=current.lmc)
                    if problem:
                        raise TopologyError(f"{where}: {current.ident} port {port}: {problem}")
                    if lid:
                        current.port_lids[port] = lid
            key = tuple(sorted([(current.ident, port), (peer, peer_port)]))
            if key in seen_links:
                prev = seen_links[key]
                if (prev.width, prev.speed) != (width, speed):
                    raise TopologyError(
                        f"{at()}: link {current.ident}[{port}] - {peer}[{peer_port}] is {width}{speed}"
                        f" here but {prev.width}{prev.speed} at line {prev.line}"
                    )
                continue
            for end in key:
                other = port_used.get(end, key)
                if other != key:
                    first = seen_links[other].line
                    raise TopologyError(f"{at()}: port {end[1]} of {end[0]} has two links (the other at line {first})")
                port_used[end] = key
            seen_links[key] = IBNetLink(current.ident, port, peer, peer_port, width, speed, no, lead + 1)
            continue
        raise TopologyError(f"{at()}: cannot read this line as ibnetdiscover output: {line[:60]!r}")
    if not nodes:
        raise TopologyError(f"{filename}:1:1: no Switch or Ca nodes found (not an ibnetdiscover dump? expected lines "
                            f"such as {_EXAMPLE})")
    links = list(seen_links.values())
    for ln in links:
        for ident in (ln.a, ln.b):
            if ident not in nodes:
                raise TopologyError(f"{filename}:{ln.line}:{ln.col}: link to {ident}, which the dump never describes")
    ordered = [nodes[i] for i in order]
    first_port: dict[str, int] = {}
    for ln in links:
        for ident, port in ((ln.a, ln.port_a), (ln.b, ln.port_b)):
            first_port[ident] = min(port, first_port.get(ident, port))
    for n in ordered:
        if n.kind != "Switch":  # a CA's LID is that of its first connected port, as in FabricGraph
            n.lid = n.port_lids.get(first_port.get(n.ident, 0), 0)
    init = None
    if initiator:
        for n in ordered:
            if n.guid.lstrip("0") == initiator.lstrip("0") and n.kind != "Switch":
                init = n.ident
    return ordered, links, init


def dump_fabric(nodes: list[IBNetNode], links: list[IBNetLink], filename: str = "<ibnetdiscover>"):
    """The :class:`~ibfabric.components.routing.fabric.FabricGraph` of a parsed dump, checked as every fabric is.

    Node names are ``ident "desc"``; nodes and links carry the dump's
    ``file:line:col``, so a duplicate LID or GUID, a node cabled to itself or
    a port a node does not have is reported where the dump says it.
    """
    from ibfabric.components.rates import link_rate
    from ibfabric.components.routing.fabric import FabricGraph, Link, NodeSpec

    index = {n.ident: i for i, n in enumerate(nodes)}
    specs = [
        NodeSpec(f'{n.ident} "{n.desc}"' if n.desc else n.ident, n.kind == "Switch", n.num_ports, lid=n.lid, lmc=n.lmc,
                 guid=int(n.guid, 16), port_lids=n.port_lids if n.kind != "Switch" else {}, desc=n.desc,
                 where=f"{filename}:{n.line}:{n.col}")
        for n in nodes
    ]  # fmt: skip
    cables = [
        Link(index[ln.a], ln.port_a, index[ln.b], ln.port_b, ln.width, ln.speed, link_rate(ln.width, ln.speed),
             where=f"{filename}:{ln.line}:{ln.col}")
        for ln in links
    ]
    return FabricGraph(specs, cables)


#: How :func:`ned_with_lines` names the submodules: by node description, by GUID or by LID.
NAMINGS = ("desc", "guid", "lid")

# words of the NED language a submodule name must not be (the connections would not parse)
_KEYWORDS = frozenset(
    "allowunconnected bool channel channelinterface connections const default double exists extends false for "
    "gates if import index inf inout input int like module moduleinterface nan network nullptr output package "
    "parameters parent property simple sizeof string submodules this true typename types undefined volatile xml "
    "xmldoc sm".split()
)
# vendor boilerplate of node descriptions: the vendor's name and Mellanox part numbers (MT25408, MT4099...)
_VENDOR = re.compile(r"\b(?:Mellanox Technologies|Mellanox|Voltaire|QLogic Corporation|QLogic|Intel Corporation)\b")
_PART = re.compile(r"\bMT\d{4,5}\b")
# a managed switch's description: "MF0;<host>:<model>/U1"
_MANAGED = re.compile(r"^MF\d+;([^:;]+):([^/;]+)(?:/U\d+)?$")
# a fully qualified host name as the first word: "node042.cluster.example.org HCA-1"
_FQDN = re.compile(r"^([A-Za-z][A-Za-z0-9-]*)\.[A-Za-z][A-Za-z0-9.-]*(?=\s|$)")
_PREFIX = {"Switch": "sw", "Ca": "ca", "Rt": "rt"}


def _ident(desc: str, fallback: str) -> str:
    """*desc* as a NED identifier (runs of other characters become ``_``), or *fallback* if nothing is left."""
    name = re.sub(r"[^A-Za-z0-9_]+", "_", desc).strip("_")
    if not name:
        name = fallback
    if not (name[0].isalpha() or name[0] == "_"):
        name = "n_" + name
    return name


def readable(desc: str) -> str:
    """The part of a node description a cluster administrator calls the node by, as a NED identifier ('' if none).

    The host name and device of an adapter (``"node042 HCA-1"`` becomes
    ``node042_HCA_1``, ``"stage114 mlx4_0"`` ``stage114_mlx4_0``, a fully
    qualified host name is cut to its first label), the host name and model
    of a managed switch (``"MF0;ib5:SX6036/U1"`` becomes ``ib5_SX6036``),
    and the product name of the vendor's default descriptions without the
    vendor and part number (``"MT25408 ConnectX Mellanox Technologies"``
    becomes ``ConnectX``, ``"Infiniscale-IV Mellanox Technologies"``
    ``Infiniscale_IV``).  A description that is nothing but boilerplate is
    kept whole.

    >>> readable("MT25408 ConnectX Mellanox Technologies"), readable("MF0;ib5:SX6036/U1")
    ('ConnectX', 'ib5_SX6036')
    >>> readable("node042.cluster.example.org HCA-1")
    'node042_HCA_1'
    """
    text = desc.strip()
    m = _MANAGED.match(text)
    if m:
        text = f"{m.group(1)} {m.group(2)}"
    text = _FQDN.sub(r"\1", text)
    short = _PART.sub(" ", _VENDOR.sub(" ", text))
    name = re.sub(r"[^A-Za-z0-9_]+", "_", short).strip("_")
    if not name:
        name = re.sub(r"[^A-Za-z0-9_]+", "_", text).strip("_")
    if name and not (name[0].isalpha() or name[0] == "_"):
        name = "n_" + name
    if name in _KEYWORDS:
        name += "_node"
    return name


def node_names(nodes: list[IBNetNode], names: str = "desc") -> dict[str, str]:
    """Submodule names of a dump's nodes (``{ident: name}``): unique NED identifiers.

    Parameters
    ----------
    nodes : list of IBNetNode
    names : {'desc', 'guid', 'lid'}
        ``desc`` (default): the readable part of the node description
        (:func:`readable`); where several nodes share it, *every* one of them
        (the first too) gets ``_`` and the last hex digits of its GUID, as
        few as tell them apart (4, 6, 8... up to all 16), leaving out
        ``0000`` groups that end all their GUIDs: ``0002c90300001dd0`` and
        ``001e0bffff4cafc0`` give ``ConnectX_1dd0`` and ``ConnectX_afc0``,
        ``003048c749cd0000`` and ``003048c749ce0000`` give ``ConnectX_49cd``
        and ``ConnectX_49ce``.  A node without a description is named as
        with ``guid``.
        ``guid``: ``sw_``, ``ca_`` or ``rt_`` (switch, channel adapter,
        router) and the 16 hex digits of the node GUID, as ibnetdiscover
        prints it: ``sw_f4521403001165a0``.
        ``lid``: the kind and the LID, ``sw_lid128``, ``ca_lid105`` (a
        channel adapter's LID is that of its first connected port); a node
        the dump gives no LID is named by GUID.

    Raises
    ------
    ConfigError
        For another *names*, listing the valid ones.
    """
    if names not in NAMINGS:
        raise ConfigError(f"'names' must be one of {', '.join(NAMINGS)} (got {names!r})")

    def by_guid(n: IBNetNode) -> str:
        return f"{_PREFIX.get(n.kind, 'ca')}_{n.guid}"

    if names == "guid":
        return {n.ident: by_guid(n) for n in nodes}
    if names == "lid":
        return {n.ident: f"{_PREFIX.get(n.kind, 'ca')}_lid{n.lid}" if n.lid else by_guid(n) for n in nodes}
    base = {n.ident: readable(n.desc) or by_guid(n) for n in nodes}
    groups: dict[str, list[IBNetNode]] = {}
    for n in nodes:
        groups.setdefault(base[n.ident], []).append(n)
    out = {n.ident: base[n.ident] for n in nodes if len(groups[base[n.ident]]) == 1}
    taken = set(out.values())
    for b, members in groups.items():
        if len(members) == 1:
            continue
        guids = [n.guid.zfill(16) for n in members]
        while all(g.endswith("0000") and len(g) > 4 for g in guids):  # 003048c749cd0000: the tail says nothing
            guids = [g[:-4] for g in guids]
        for k in (4, 6, 8, 10, 12, 14, 16):
            cand = [f"{b}_{g[-k:]}" for g in guids]
            if len(set(cand)) == len(cand) and not taken.intersection(cand):
                break
        for n, c in zip(members, cand):
            name, i = c, 2
            while name in taken:  # only when another description reads like this one with its suffix
                name, i = f"{c}_{i}", i + 1
            out[n.ident] = name
            taken.add(name)
    return {n.ident: out[n.ident] for n in nodes}  # in the dump's order


def ibnetdiscover_to_ned(text: str, filename: str = "<ibnetdiscover>", network: str | None = None,
                         names: str = "desc") -> str:
    """NED-like text for an ibnetdiscover dump (see the module docstring); TopologyError at the dump's place.

    *names* chooses the submodule names (:func:`node_names`): ``desc``, ``guid`` or ``lid``.
    """
    return ned_with_lines(text, filename, network, names)[0]


def ned_with_lines(text: str, filename: str = "<ibnetdiscover>", network: str | None = None,
                   names: str = "desc") -> tuple[str, dict[int, tuple[int, int]]]:
    """``(ned text, {ned line: (dump line, dump column)})``: the dump as NED, and where each
    submodule and connection line of the NED text comes from in the dump.

    The dump is parsed and checked (:func:`dump_fabric`) first, so the NED
    text describes a valid subnet.  *names* chooses the submodule names
    (:func:`node_names`); every node keeps its GUID and full description as
    the ``guid`` and ``nodeDesc`` parameters whatever its name.
    """
    if names not in NAMINGS:  # before reading the dump: a bad option is the caller's mistake
        node_names([], names)
    nodes, links, initiator = parse_ibnetdiscover(text, filename)
    dump_fabric(nodes, links, filename)
    name_of = node_names(nodes, names)
    net = network or _ident(Path(filename).stem if filename and not filename.startswith("<") else "fabric", "fabric")
    out = [
        f"// Imported by ibfabric from ibnetdiscover output {Path(filename).name}.",
        "// Node GUIDs, descriptions, LIDs, port numbers and link widths/speeds are the dump's.",
        f"network {net}",
        "{",
        "    submodules:",
    ]
    lines: dict[int, tuple[int, int]] = {}
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
        out.append(f"        {name_of[n.ident]}: {typ} {{ {' '.join(params)} }}")
        lines[len(out)] = (n.line, n.col)
    sm_node = f' node = "{name_of[initiator]}";' if initiator else ""
    out.append(f"        sm: SubnetManager {{{sm_node} }}")
    out.append("    connections:")
    for ln in links:
        out.append(
            f'        {name_of[ln.a]}.port[{ln.port_a}] <--> Link {{ width = "{ln.width}"; speed = "{ln.speed}"; }}'
            f" <--> {name_of[ln.b]}.port[{ln.port_b}];"
        )
        lines[len(out)] = (ln.line, ln.col)
    out.append("}")
    return "\n".join(out) + "\n", lines
