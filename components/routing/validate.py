"""What a valid subnet is: the checks every way into ibfabric shares.

One module holds the rules, and every input path reaches them before
anything is sized from the input (a LID table, a port array) or simulated:

* :class:`~ibfabric.components.routing.fabric.NodeSpec` checks its own fields when it
  is built (:func:`check_node`), :class:`~ibfabric.components.routing.fabric.FabricGraph`
  its links, LIDs and GUIDs (:func:`check_links`, :func:`lid_owners`,
  :func:`check_guids`);
* ``.ned`` files and text: :func:`ibfabric.topologies.load_network` builds the
  fabric of what it elaborated (``FabricGraph.from_network``), so
  ``ibfabric topo show/convert``, ``ibfabric routes``, ``ibfabric run``,
  :func:`ibfabric.load` and :func:`~ibfabric.topologies.load_fabric` all
  stop at the same first error, with its ``file:line:col``;
* ibnetdiscover dumps are checked on their own lines: the importer reads
  fields with the scalar rules below and builds a FabricGraph whose nodes and
  links carry the dump's locations;
* built simulations: the IB nodes read their ``lid``/``lmc``/``numPorts``
  with the same rules and the subnet manager builds a FabricGraph;
* OpenSM ``opensm-lfts.dump`` files (:mod:`ibfabric.components.routing.opensm`) use
  the LID rules and :func:`read_text`.

The rules
---------
* LIDs are unicast, 1..0xBFFF (0xC000 and up are multicast; 0 means "not
  assigned yet"); an LMC is 0..7 and ``lid + 2**lmc - 1`` stays unicast; no
  two ports share a LID, LMC ranges included.
* A node has 1..254 ports; links join ports 1..numPorts (port 0 of a switch
  is its management port), a port carries at most one link, and a link
  never joins a node to itself.
* Node GUIDs are 64-bit, non-zero and unique.  Port GUIDs are not modelled:
  they are derived when written (a switch's is its node GUID, a channel
  adapter port's its node GUID + port number, as ibsim assigns them), so a
  channel adapter's node GUID must leave room for its ports below 2**64.
* A link's width is one of ``1x 2x 4x 8x 12x`` and its speed one of
  ``SDR DDR QDR FDR10 FDR EDR HDR NDR``, spelled as ibnetdiscover prints them.

A bad value of one parameter (a LID, an LMC, a GUID, a port count, a
width, speed or data rate) is a :class:`~ibfabric.errors.ConfigError`; a
subnet whose parts do not fit together (two ports with one LID, two nodes
with one GUID, a port with two links, a node cabled to itself, a link to a
port that does not exist) a :class:`~ibfabric.errors.TopologyError`; errors
in dump files are TopologyError (ibnetdiscover) or ConfigError (OpenSM
tables, a routing option).  Every message is one line and starts with
``file:line:col:`` when the input has a place.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from os import PathLike
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ibfabric.errors import ConfigError, TopologyError, utf8_error_at

from ..rates import LANE_SIGNALLING, WIDTHS

if TYPE_CHECKING:  # pragma: no cover
    from .fabric import FabricGraph, Link, NodeSpec

__all__ = [
    "MAX_UNICAST_LID",
    "MAX_LMC",
    "MAX_PORTS",
    "MAX_GUID",
    "lid_problem",
    "lmc_problem",
    "ports_problem",
    "guid_problem",
    "link_problem",
    "negative_problem",
    "parse_guid",
    "check_node",
    "check_links",
    "lid_owners",
    "check_guids",
    "read_text",
    "located",
]

#: The highest unicast LID; 0xC000..0xFFFE are multicast, 0xFFFF is the permissive LID.
MAX_UNICAST_LID = 0xBFFF
#: The highest LID mask control (a port owns up to 2**7 LIDs).
MAX_LMC = 7
#: The most external ports a node has (port numbers are 8-bit, 255 is reserved).
MAX_PORTS = 254
#: The highest GUID (GUIDs are 64-bit).
MAX_GUID = (1 << 64) - 1


def _show(value) -> str:
    """A value for a message, shortened when it is huge (a 400-digit integer stays one short line)."""
    if isinstance(value, str):
        return repr(value) if len(value) <= 24 else f"'{value[:12]}...{value[-4:]}' ({len(value)} characters)"
    text = repr(value)
    return text if len(text) <= 24 else f"{text[:10]}...{text[-6:]} ({len(text)} digits)"


def _is_int(value) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool)


def located(where: str, message: str) -> str:
    """``'where: message'``, or *message* alone when *where* is empty."""
    return f"{where}: {message}" if where else message


# ---------------------------------------------------------------- scalar rules


def lid_problem(lid, what: str = "'lid'", lmc: int = 0) -> str | None:
    """What is wrong with a base LID (0 = not assigned), or None.

    >>> lid_problem(5) is None, lid_problem(0) is None
    (True, True)
    >>> lid_problem(49152)
    "'lid' must be a unicast LID in 1..0xBFFF, or 0 for one the subnet manager assigns (got 49152 = 0xC000, a multicast LID)"
    """
    if not _is_int(lid):
        return f"{what} must be an integer (got {_show(lid)})"
    lid = int(lid)
    if lid == 0:
        return None
    if not 1 <= lid <= MAX_UNICAST_LID:
        kind = ""
        if 0xC000 <= lid <= 0xFFFE:
            kind = f" = 0x{lid:X}, a multicast LID"
        elif lid == 0xFFFF:
            kind = " = 0xFFFF, the permissive LID"
        return f"{what} must be a unicast LID in 1..0xBFFF, or 0 for one the subnet manager assigns (got {_show(lid)}{kind})"
    if _is_int(lmc) and 0 <= lmc <= MAX_LMC and lid + (1 << int(lmc)) - 1 > MAX_UNICAST_LID:
        return f"{what} {lid} with lmc {lmc} owns LIDs up to {lid + (1 << int(lmc)) - 1}, beyond the last unicast LID 0xBFFF"
    return None


def lmc_problem(lmc, what: str = "'lmc'") -> str | None:
    """What is wrong with an LMC, or None (``'lmc' must be in 0..7 (got 8)``)."""
    if not _is_int(lmc) or not 0 <= lmc <= MAX_LMC:
        return f"{what} must be in 0..7 (got {_show(lmc)})"
    return None


def ports_problem(num_ports, what: str = "'numPorts'") -> str | None:
    """What is wrong with a port count, or None (``'numPorts' must be in 1..254 (got 300)``)."""
    if not _is_int(num_ports) or not 1 <= num_ports <= MAX_PORTS:
        return f"{what} must be in 1..254 (got {_show(num_ports)})"
    return None


def guid_problem(guid, what: str = "'guid'") -> str | None:
    """What is wrong with a node GUID given as a number, or None (0 is "derive one from the name")."""
    if not _is_int(guid) or not 0 <= guid <= MAX_GUID:
        return f"{what} must be a non-zero 64-bit number (got {_show(guid)})"
    return None


def parse_guid(text: str, what: str = "'guid'") -> int:
    """A GUID from hexadecimal text (``'0002c903000e0b72'``, ``'0x2c9...'``); '' gives 0 (derived).

    Raises
    ------
    ValueError
        With a message saying what a GUID is, for anything but 1..16
        significant hexadecimal digits with a non-zero value.

    >>> hex(parse_guid("0x0002c903000e0b72"))
    '0x2c903000e0b72'
    >>> parse_guid("-5")
    Traceback (most recent call last):
    ...
    ValueError: 'guid' must be a non-zero 64-bit hexadecimal number such as '0002c903000e0b72' (got '-5')
    """
    s = text.strip()
    if not s:
        return 0
    digits = s[2:] if s[:2].lower() == "0x" else s
    ok = digits and all(c in "0123456789abcdefABCDEF" for c in digits)
    value = int(digits, 16) if ok else -1
    if not 0 < value <= MAX_GUID:
        raise ValueError(f"{what} must be a non-zero 64-bit hexadecimal number such as '0002c903000e0b72' (got {_show(text)})")
    return value


def link_problem(width, speed) -> str | None:
    """What is wrong with a link's width and speed, or None (the valid ones are listed)."""
    if width not in WIDTHS:
        return f"'width' must be one of ({', '.join(WIDTHS)}) (got {_show(width)})"
    if speed not in LANE_SIGNALLING:
        hint = ""
        if isinstance(speed, str) and speed.upper() in LANE_SIGNALLING:
            hint = f"; speeds are upper case: '{speed.upper()}'"
        return f"'speed' must be one of ({', '.join(LANE_SIGNALLING)}) (got {_show(speed)}{hint})"
    return None


#: Parameters of channels and IB nodes that cannot be negative (delays, lengths, rates), and their units
#: as messages show them.
NON_NEGATIVE = {"dataRate": "bps", "length": "m", "propagationDelay": "ns/m", "delay": "ns", "datarate": "bps",
                "routingDelay": "ns", "arbitrationDelay": "ns", "controlInterval": "ns"}


def negative_problem(params) -> str | None:
    """What is wrong with a channel's or a node's parameters (a negative length, delay or rate), or
    None: the rule ``ibfabric topo show`` applies and a built simulation's modules apply too."""
    for name, unit in NON_NEGATIVE.items():
        v = params.get(name)
        if isinstance(v, (int, float)) and not isinstance(v, bool) and v < 0:
            return f"'{name}' must be >= 0 (got {float(v)}{unit})"
    return None


# ---------------------------------------------------------------- the subnet


def check_node(spec: "NodeSpec") -> None:
    """Raise ConfigError if a node's own fields are invalid (its ports, LIDs, LMC, GUID)."""
    problem = (
        ports_problem(spec.num_ports)
        or lmc_problem(spec.lmc)
        or lid_problem(spec.lid, lmc=spec.lmc)
        or guid_problem(spec.guid)
    )
    if problem is None and not spec.is_switch and spec.guid and spec.guid + spec.num_ports > MAX_GUID:
        problem = (f"'guid' 0x{spec.guid:x} leaves no room for its port GUIDs (node GUID + port) below 2**64")
    if problem is None:
        for port, lid in spec.port_lids.items():
            if not _is_int(port) or not 1 <= port <= spec.num_ports:
                problem = f"'portLids' names port {_show(port)}, which is not one of its ports 1..{spec.num_ports}"
            else:
                problem = lid_problem(lid, f"'portLids' LID of port {port}", lmc=spec.lmc)
            if problem:
                break
    if problem:
        raise ConfigError(located(spec.where, f"{spec.name}: {problem}"))


def check_links(nodes: Sequence["NodeSpec"], links: Sequence["Link"]) -> None:
    """Raise TopologyError for a link to a missing node or port, a port with two links or a node
    linked to itself, ConfigError for an unknown width or speed or a bad data rate."""
    n = len(nodes)
    used: dict[tuple[int, int], int] = {}
    for k, ln in enumerate(links):
        ends = ((ln.a, ln.port_a), (ln.b, ln.port_b))
        for x, px in ends:
            if not _is_int(x) or not 0 <= x < n:
                raise TopologyError(located(ln.where, f"link {k} refers to node {_show(x)}, which does not exist"))
        for x, px in ends:
            nd = nodes[x]
            if _is_int(px) and px == 0:
                raise TopologyError(located(ln.where, f"{nd.name}.port[0] is the management port and cannot be connected"))
            if not _is_int(px) or not 1 <= px <= nd.num_ports:
                raise TopologyError(located(ln.where, f"{nd.name} has no port {_show(px)} (it has ports 1..{nd.num_ports})"))
        if ln.a == ln.b:
            nd = nodes[ln.a]
            what = "to itself" if ln.port_a == ln.port_b else f"to its own port {ln.port_b}"
            raise TopologyError(located(ln.where, f"port {ln.port_a} of {nd.name} is cabled {what}; a link must join two nodes"))
        for x, px in ends:
            if (x, px) in used:
                other = links[used[(x, px)]]
                first = f" (first at {other.where})" if other.where else ""
                raise TopologyError(located(ln.where, f"port {px} of {nodes[x].name} has two links{first}"))
            used[(x, px)] = k
        problem = link_problem(ln.width, ln.speed)
        if problem is None and not (isinstance(ln.rate, (int, float)) and not isinstance(ln.rate, bool)):
            problem = f"'dataRate' must be a number of bit/s (got {_show(ln.rate)})"
        elif problem is None and not ln.rate >= 0:
            problem = f"'dataRate' must be >= 0 (got {ln.rate}bps)"
        elif problem is None and not math.isfinite(ln.rate):
            problem = f"'dataRate' must be finite (got {ln.rate}bps)"
        if problem:
            a, b = nodes[ln.a].name, nodes[ln.b].name
            raise ConfigError(located(ln.where, f"link {a}.port[{ln.port_a}] - {b}.port[{ln.port_b}]: {problem}"))


def lid_owners(graph: "FabricGraph") -> np.ndarray:
    """The endpoint owning each LID (``-1`` for none), length ``max LID + 1``; TopologyError if two share one.

    Needs ``ep_node``, ``ep_lid``, ``ep_lmc`` of *graph*, whose LIDs and LMCs
    :func:`check_node` has already bounded, so the array is at most 0xC000 long.
    """
    lids, lmcs = graph.ep_lid, graph.ep_lmc
    top = int((lids + (1 << lmcs) - 1)[lids > 0].max()) if (lids > 0).any() else 0
    if top > MAX_UNICAST_LID:  # only a NodeSpec built around its checks can get here
        e = int(np.argmax(lids + (1 << lmcs) - 1))
        raise TopologyError(f"{graph.endpoint_name(e)}: LID {int(lids[e])} is not a unicast LID (1..0xBFFF)")
    owner = np.full(top + 1, -1, dtype=np.int64)
    for e in np.flatnonzero(lids > 0).tolist():
        lo = int(lids[e])
        hi = lo + (1 << int(lmcs[e]))
        clash = owner[lo:hi]
        if (clash >= 0).any():
            other = int(clash[clash >= 0][0])
            where = graph.nodes[int(graph.ep_node[e])].where
            lid = lo + int(np.argmax(clash >= 0))
            lmc = "" if hi == lo + 1 else f" (its LMC range is {lo}..{hi - 1})"
            ranges = lmcs[[other, e]].any()
            hint = (" (to give ports more LIDs, leave the nodes' 'lmc' and set the subnet manager's: it moves the"
                    " LIDs that leave no room)") if ranges else ""
            raise TopologyError(located(where, f"LID {lid} is used by both {graph.endpoint_name(other)} and "
                                               f"{graph.endpoint_name(e)}{lmc}; LIDs must be unique{hint}"))
        owner[lo:hi] = e
    return owner


def check_guids(graph: "FabricGraph") -> None:
    """Raise TopologyError if two nodes have the same node GUID (given or derived from the name)."""
    seen: dict[int, int] = {}
    for i, nd in enumerate(graph.nodes):
        g = graph.guid(i)
        j = seen.setdefault(g, i)
        if j != i:
            raise TopologyError(located(nd.where, f"{nd.name}: GUID 0x{g:016x} is also the GUID of {graph.nodes[j].name}"
                                                  f"; node GUIDs must be unique"))


# ---------------------------------------------------------------- files


def read_text(path: str | PathLike, error: type = TopologyError) -> str:
    """The UTF-8 text of a file; *error* ``file:line:col: not UTF-8 text ...`` at the first bad byte,
    ``file: cannot read it (...)`` when the system refuses."""
    try:
        data = Path(path).read_bytes()
    except FileNotFoundError:
        raise error(f"{path}: no such file") from None
    except OSError as exc:
        raise error(f"{path}: cannot read it ({exc.strerror or exc})") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line, col, byte = utf8_error_at(data, exc)
        raise error(f"{path}:{line}:{col}: not UTF-8 text (byte 0x{byte:02x}); is this the right file?") from None

