"""Quality of service: traffic classes, SL-to-VL maps, arbitration frames and connection admission.

The package is ibfabric's QoS support, and its own module (this one) the
policy-free half of it, after Alfaro, Sánchez and Duato (2001):

- **Frames and slots** (§4.2): a VLArbitrationTable has 64 entries of weight
  at most 255, in units of 64 bytes, so a *frame* of ``64 x 255 = 16320``
  slots is the most one pass over a full table can send.  Its duration on
  a link of ``B_link`` bit/s is ``T_frame = 16320 x 64 x 8 / B_link``
  (Table 1: 3.342336 ms at 2.5 Gb/s), and a connection of mean bandwidth
  ``B`` needs ``N_slots = ceil(B / B_link x 16320) = ceil(B x T_frame / 512)``
  slots of every frame.
- **Traffic classes** (§4.1): DBTS and DB (each in four bandwidth categories:
  up to 64 Kbps, 1.55 Mbps, 64 Mbps, and above), BE and CH, mapped to service
  levels and virtual lanes by a :class:`ClassMap`.  VL15 (management) is never
  in a class map nor in an arbitration table: it always goes first.
- **Admission** (§4.2): :class:`Admission` walks a connection's path through
  the forwarding tables and asks the table state of every output port on it
  (the source's host interface and each switch's output port) whether the
  connection fits; it is established only if every one of them has room,
  and only then reserved on all of them, so a rejection leaves nothing
  reserved.  How a port fills its table is an *arbitration policy* plugin
  (``ibfabric_register_arbitration_policies``; the built-in ``alfaro2001``).
- **Establishment** (§5.2): :func:`establish` requests connections with
  random endpoints and bandwidths, equally distributed among service
  levels, until the requested number is established or one service level
  exhausts its retries.

Nothing here needs a running simulation: admission works on
:class:`~ibfabric.components.routing.tables.ForwardingTables`.  Binding it to a
simulation (tables into the arbiters, CBR sources into the HCAs) is
:mod:`ibfabric.components.qos.cbr`; the bandwidth given to multicast traffic
(the subnet manager's ``multicastBandwidth``) is
:mod:`ibfabric.components.qos.mcastbw`.

References
----------
F. J. Alfaro, J. L. Sánchez, J. Duato, "A Strategy to Compute the InfiniBand
Arbitration Tables", tech. rep. DIAB-01-02-20, Univ. Castilla-La Mancha,
2001 (IPDPS 2002), §§3-5.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from fractions import Fraction
from typing import Any, Protocol

import attrs
import numpy as np

from ibfabric.errors import ConfigError

from ..routing.tables import NO_PORT, ForwardingTables

__all__ = [
    "SLOT_BYTES",
    "TABLE_ENTRIES",
    "MAX_WEIGHT",
    "SLOTS_PER_FRAME",
    "FRAME_BITS",
    "LINK_RATES",
    "CATEGORY_LIMITS",
    "PAPER_RANGES",
    "CLASSES",
    "frame_time",
    "slots_for",
    "slots_from_frame_time",
    "category",
    "link_rate_of",
    "ClassMap",
    "Connection",
    "Demand",
    "Rejection",
    "PortTable",
    "Admission",
    "Establishment",
    "establish",
]

#: Bytes per arbitration-table weight unit (and per flow-control credit).
SLOT_BYTES = 64
#: Entries of each (high, low) VLArbitrationTable.
TABLE_ENTRIES = 64
#: Largest weight of a table entry.
MAX_WEIGHT = 255
#: Slots of a frame: a full table's weights (Alfaro et al. 2001 §4.2).
SLOTS_PER_FRAME = TABLE_ENTRIES * MAX_WEIGHT
#: Bits of a frame (16320 slots of 64 bytes).
FRAME_BITS = SLOTS_PER_FRAME * SLOT_BYTES * 8
#: The IBA link rates of the paper (Table 1), bit/s: the raw signalling rates of 1x, 4x and 12x SDR.
LINK_RATES: dict[str, float] = {"1x": 2.5e9, "4x": 10e9, "12x": 30e9}
#: Upper bounds (bit/s, inclusive) of the bandwidth categories 0, 1, 2; category 3 is above (§4.1).
CATEGORY_LIMITS: tuple[float, float, float] = (64e3, 1.55e6, 64e6)
#: Bandwidth range (bit/s) of the connections of each SL in the paper's evaluation (§5.2).
PAPER_RANGES: dict[int, tuple[float, float]] = {
    0: (8e3, 64e3),
    1: (64e3, 1.55e6),
    2: (64e3, 64e6),  # sic: §5.2 gives 64 Kbps, not 1.55 Mbps, as SL 2's lower bound
    3: (64e6, 300e6),
}
#: The traffic classes of §4.1 (Pelissier's, with DBTS and DB split by bandwidth).
CLASSES = ("DBTS", "DB", "BE", "CH")


# ----------------------------------------------------------------- frame math


def frame_time(link_rate: float) -> float:
    """``T_frame`` in ns: the time a link of *link_rate* bit/s takes to send a full frame.

    >>> frame_time(2.5e9) / 1e6   # ms, Table 1 of the paper
    3.342336
    """
    if not link_rate > 0:
        raise ConfigError(f"a link rate must be > 0 bit/s (got {link_rate})")
    return FRAME_BITS * 1e9 / link_rate


def _ceil(x: Fraction) -> int:
    return -((-x.numerator) // x.denominator)


def slots_for(bandwidth: float, link_rate: float) -> int:
    """``N_slots = ceil(B / B_link x 16320)``: slots per frame for a mean bandwidth (exact arithmetic).

    >>> slots_for(64e6, 2.5e9)    # 417.792 rounded up
    418
    """
    if not bandwidth > 0:
        raise ConfigError(f"a connection's bandwidth must be > 0 bit/s (got {bandwidth})")
    if not link_rate > 0:
        raise ConfigError(f"a link rate must be > 0 bit/s (got {link_rate})")
    return _ceil(Fraction(bandwidth) * SLOTS_PER_FRAME / Fraction(link_rate))


def slots_from_frame_time(bandwidth: float, t_frame: float) -> int:
    """``N_slots = ceil(B x T_frame / 512)``, the second form of §4.2 (*t_frame* in ns, exact arithmetic)."""
    if not bandwidth > 0:
        raise ConfigError(f"a connection's bandwidth must be > 0 bit/s (got {bandwidth})")
    return _ceil(Fraction(bandwidth) * Fraction(t_frame) / (SLOT_BYTES * 8 * 10**9))


def category(bandwidth: float) -> int:
    """Bandwidth category of §4.1: 0 (<= 64 Kbps), 1 (<= 1.55 Mbps), 2 (<= 64 Mbps) or 3 (above)."""
    for k, limit in enumerate(CATEGORY_LIMITS):
        if bandwidth <= limit:
            return k
    return 3


def parse_rate(text: str, what: str, hint: str) -> float:
    """A positive rate in bit/s from a quantity (``'64Mbps'``); ConfigError ``bad <what> ...: <hint>`` otherwise."""
    from ibfabric.units import UnitError, parse_quantity

    try:
        v, _ = parse_quantity(str(text).strip(), expect="bps")
    except UnitError:
        v = 0.0
    if not v > 0:
        raise ConfigError(f"bad {what} {text!r}: {hint}")
    return v


def link_rate_of(text: str) -> float:
    """A link rate from ``'1x'``/``'4x'``/``'12x'`` (the paper's 2.5/10/30 Gb/s) or a quantity (``'2.5Gbps'``)."""
    t = str(text).strip().lower()
    if t in LINK_RATES:
        return LINK_RATES[t]
    return parse_rate(text, "link rate", "give 1x, 4x, 12x or a rate such as 2.5Gbps")


# ------------------------------------------------------------ traffic classes


def _sl_tuple(v) -> tuple[int, ...]:
    return tuple(int(x) for x in v)


@attrs.frozen
class ClassMap:
    """Traffic classes -> service levels -> virtual lanes (Alfaro et al. 2001 §4.1).

    The four DBTS SLs and the four DB SLs are indexed by bandwidth category
    (:func:`category`); BE and CH have one SL each.  DBTS goes to the
    high-priority arbitration table, everything else to the low-priority one
    (Pelissier's proposal, adopted in §4.2).  ``sl2vl`` is the SL-to-VL table
    every port uses (16 VLs; SLs of no class go to the BE VL).  VL15 is never
    a data VL.

    The default is the paper's: DB on SLs 0-3 (as in its evaluation), DBTS
    on SLs 4-7, BE on SL 8, CH on SL 9, each SL on the VL of the same number,
    so ports need 10 data VLs (11 with VL15).

    >>> m = ClassMap()
    >>> m.sl_for("DB", 1e6), m.vl(1), m.num_vls
    (1, 1, 10)
    """

    db: tuple[int, ...] = attrs.field(default=(0, 1, 2, 3), converter=_sl_tuple)
    dbts: tuple[int, ...] = attrs.field(default=(4, 5, 6, 7), converter=_sl_tuple)
    be: int = 8
    ch: int = 9
    sl2vl: tuple[int, ...] = attrs.field(default=None, converter=lambda v: None if v is None else _sl_tuple(v))

    def __attrs_post_init__(self) -> None:
        sls = list(self.db) + list(self.dbts) + [self.be, self.ch]
        if len(self.db) != 4 or len(self.dbts) != 4:
            raise ConfigError("a class map gives 4 DB and 4 DBTS SLs (one per bandwidth category)")
        if any(not 0 <= s <= 15 for s in sls) or len(set(sls)) != len(sls):
            raise ConfigError(f"a class map's SLs must be distinct and in 0..15 (got {sls})")
        table = self.sl2vl
        if table is None:
            table = tuple(s if s in sls else self.be for s in range(16))
            object.__setattr__(self, "sl2vl", table)
        if len(table) != 16 or any(not 0 <= v <= 14 for v in table):
            raise ConfigError(f"'sl2vl' must give a data VL 0..14 for each of the 16 SLs (got {list(table)})")
        vls_of = {}
        for s in sls:
            vls_of.setdefault(table[s], set()).add("high" if s in self.dbts else "low")
        mixed = [vl for vl, pr in vls_of.items() if len(pr) > 1]
        if mixed:
            raise ConfigError(f"VL {mixed[0]} carries both DBTS (high priority) and other SLs")

    @property
    def num_vls(self) -> int:
        """Data VLs a port needs for this map."""
        return max(self.sl2vl) + 1

    def vl(self, sl: int) -> int:
        """The VL that SL *sl* maps to."""
        return self.sl2vl[sl]

    def sl_for(self, cls: str, bandwidth: float = 0.0) -> int:
        """The SL of a connection of class *cls* (DBTS and DB: by bandwidth category)."""
        if cls == "DB":
            return self.db[category(bandwidth)]
        if cls == "DBTS":
            return self.dbts[category(bandwidth)]
        if cls == "BE":
            return self.be
        if cls == "CH":
            return self.ch
        raise ConfigError(f"unknown traffic class {cls!r} (valid: {', '.join(CLASSES)})")

    def class_of(self, sl: int) -> str:
        """The traffic class of SL *sl*: ``'DB'``, ``'DBTS'``, ``'CH'`` or ``'BE'`` (every other SL)."""
        if sl in self.db:
            return "DB"
        if sl in self.dbts:
            return "DBTS"
        if sl == self.ch:
            return "CH"
        return "BE"

    def is_high(self, sl: int) -> bool:
        """Whether *sl* is served by the high-priority table (DBTS)."""
        return sl in self.dbts

    def describe(self) -> list[dict[str, Any]]:
        """One row per class SL: class, bandwidth category, SL, VL, table."""
        rows = []
        for cls, sls in (("DBTS", self.dbts), ("DB", self.db)):
            for k, sl in enumerate(sls):
                rows.append({"class": cls, "category": k, "sl": sl, "vl": self.vl(sl),
                             "table": "high" if cls == "DBTS" else "low"})
        for cls, sl in (("BE", self.be), ("CH", self.ch)):
            rows.append({"class": cls, "category": None, "sl": sl, "vl": self.vl(sl), "table": "low"})
        return rows


# ---------------------------------------------------------------- connections


@attrs.frozen
class Connection:
    """A CBR connection between two traffic endpoints (host indices).

    ``bandwidth`` is the mean bandwidth in bit/s the connection asked for;
    ``packet_size`` its packets' wire size in bytes; ``overhead`` the bytes of
    each packet not counted in ``bandwidth`` (0: the bandwidth counts whole
    packets, headers included).  Packets leave every ``iat`` ns.
    """

    id: int
    src: int
    dst: int
    sl: int
    bandwidth: float
    packet_size: int = 256
    overhead: int = 0
    cls: str = "DB"

    @property
    def iat(self) -> float:
        """Inter-arrival time of its packets, ns."""
        return (self.packet_size - self.overhead) * 8e9 / self.bandwidth

    def as_dict(self) -> dict[str, Any]:
        """The connection as JSON-ready data: id, src, dst, sl, class, ``bandwidth_bps``,
        ``packet_size`` and ``iat_ns``.
        """
        return {"id": self.id, "src": self.src, "dst": self.dst, "sl": self.sl, "class": self.cls,
                "bandwidth_bps": self.bandwidth, "packet_size": self.packet_size, "iat_ns": self.iat}


@attrs.frozen
class Demand:
    """What one output port is asked to reserve for a connection: its SL, the VL it
    uses on that link, its bandwidth and whether it is served by the high-priority table."""

    conn: int
    sl: int
    vl: int
    bandwidth: float
    high: bool = False


@attrs.frozen
class Rejection:
    """Why a connection was refused: the first output port on its path without room, and the reason."""

    conn: Connection
    port: str
    reason: str


class PortTable(Protocol):
    """The arbitration-table state of one output port, as an arbitration policy keeps it.

    An arbitration policy's ``new_port(rate, classes, name)`` returns one of
    these per output port; :class:`Admission` calls ``check`` on every port
    of a path, then ``reserve`` on all of them if none refused.
    """

    def check(self, demand: Demand) -> str | None:
        """None if *demand* fits, else the reason it does not (one line)."""

    def reserve(self, demand: Demand) -> None:
        """Reserve *demand* (``check`` said it fits)."""

    def release(self, conn: int) -> None:
        """Give back everything reserved for connection *conn*."""

    def tables(self) -> tuple[tuple[tuple[int, int], ...], tuple[tuple[int, int], ...], int]:
        """``(high, low, limit_of_high_priority)``: the VLArbitrationTable to install."""

    def reserved(self) -> float:
        """Bandwidth reserved for connections, bit/s."""


class Admission:
    """Connection admission over a whole subnet (Alfaro et al. 2001 §4.2).

    Every output port (host interfaces and switch ports) gets a table state
    from the arbitration *policy*; a connection is admitted only if every
    output port on its path accepts it, and then reserved on all of them.

    Parameters
    ----------
    tables : ForwardingTables
        The subnet's routes (``tables.fabric`` is the subnet).
    policy : object
        An arbitration policy (``policy.new_port(rate, classes, name)``), as
        the ``ibfabric_register_arbitration_policies`` hook registers them.
    classes : ClassMap, optional
        SLs and VLs of the traffic classes (default: the paper's).
    rate : float, optional
        Link rate in bit/s used for every port; default: each link's own
        rate (``fabric.port_rate``).

    Attributes
    ----------
    hosts : ndarray of int
        Fabric node of each traffic endpoint (channel adapters with a
        connected port, in node order: the order of ``Simulation.hosts``).
    ports : dict
        ``(node, port) -> PortTable`` for every connected output port.
    connections : dict
        ``id -> Connection`` of the established connections.
    rejections : Counter
        Rejected requests by reason.

    Examples
    --------
    >>> from ibfabric.topologies.generators import mesh
    >>> from ibfabric.plugins.arbitration.alfaro2001 import Alfaro2001
    >>> from ibfabric.plugins.routing.minhop import compute as minhop
    >>> g = mesh((2, 1), hosts_per_switch=1, width="1x", speed="SDR").with_lids()
    >>> adm = Admission(minhop(g, {}, None), Alfaro2001(), rate=2.5e9)
    >>> c = adm.connect(0, 1, 64e6)
    >>> c.sl, [adm.port_name(n, p) for n, p in adm.path(0, 1)]
    (2, ['h0_0_0 port 1', 'sw0_0 port 1', 'sw1_0 port 5'])
    """

    def __init__(self, tables: ForwardingTables, policy: Any, classes: ClassMap | None = None, *, rate: float | None = None):
        self.tables = tables
        self.fabric = g = tables.fabric
        self.policy = policy
        self.classes = classes or ClassMap()
        self._exp = tables.expanded()
        self.hosts = np.array([int(n) for n in g.cas if len(g.ports(int(n)))], dtype=np.int64)
        self._ep = [g.endpoint_of(int(n), g.ports(int(n))[0]) for n in self.hosts]
        self.ports: dict[tuple[int, int], PortTable] = {}
        for node in range(len(g.nodes)):
            for port in g.ports(node):
                r = float(rate) if rate is not None else float(g.port_rate[node, port])
                if not r > 0:
                    raise ConfigError(f"{self.port_name(node, port)}: link rate unknown; pass rate=")
                self.ports[(node, port)] = policy.new_port(r, self.classes, self.port_name(node, port))
        self.connections: dict[int, Connection] = {}
        self.paths_of: dict[int, list[tuple[int, int]]] = {}
        self.rejections: Counter[str] = Counter()
        self._paths: dict[tuple[int, int], list[tuple[int, int]]] = {}
        self._next_id = 1

    @property
    def num_hosts(self) -> int:
        """The number of hosts connections can join."""
        return len(self.hosts)

    def port_name(self, node: int, port: int) -> str:
        """The output port as messages name it: ``'<node name> port <port>'``."""
        return f"{self.fabric.nodes[node].name} port {port}"

    def dlid(self, src: int, dst: int) -> int:
        """DLID of the packets from host *src* to host *dst*."""
        return self.tables.dlid(self._ep[src], self._ep[dst])

    def path(self, src: int, dst: int) -> list[tuple[int, int]]:
        """The output ports ``(node, port)`` a packet from host *src* to host *dst* leaves through:
        the source's host interface, then one port per switch."""
        key = (src, dst)
        hops = self._paths.get(key)
        if hops is not None:
            return hops
        g = self.fabric
        if not (0 <= src < len(self.hosts) and 0 <= dst < len(self.hosts)) or src == dst:
            raise ConfigError(f"a connection joins two different hosts 0..{len(self.hosts) - 1} (got {src} -> {dst})")
        node = int(self.hosts[src])
        port = g.ports(node)[0]
        dlid = self.dlid(src, dst)
        target = int(self.hosts[dst])
        hops = [(node, port)]
        for _ in range(len(g.switches) + 1):
            node = int(g.peer_node[node, port])
            if node == target:
                self._paths[key] = hops
                return hops
            if not g.is_switch[node]:
                break
            row = int(g.switch_row[node])
            port = int(self._exp[row, dlid]) if dlid < self._exp.shape[1] else NO_PORT
            if port in (0, NO_PORT):
                break
            hops.append((node, port))
        raise ConfigError(f"no route from host {src} to host {dst} (DLID {dlid}) in the forwarding tables")

    def demands(self, conn: Connection) -> list[tuple[tuple[int, int], Demand]]:
        """The bandwidth *conn* asks of each output port on its path: ``((node, port), Demand)``
        per hop, on the VL its SL maps to, high priority or not as its SL is.
        """
        vl = self.classes.vl(conn.sl)
        high = self.classes.is_high(conn.sl)
        d = Demand(conn.id, conn.sl, vl, conn.bandwidth, high)
        return [(hop, d) for hop in self.path(conn.src, conn.dst)]

    def admit(self, conn: Connection) -> Rejection | None:
        """Establish *conn* if every output port on its path has room; None if it was, else why not.

        All ports are checked before any is changed, so a rejected
        connection reserves nothing anywhere.
        """
        if conn.id in self.connections:
            raise ConfigError(f"connection {conn.id} is already established")
        if not 0 <= conn.sl <= 15:
            raise ConfigError(f"a connection's SL must be 0..15 (got {conn.sl})")
        plan = self.demands(conn)
        for hop, d in plan:
            reason = self.ports[hop].check(d)
            if reason is not None:
                rej = Rejection(conn, self.port_name(*hop), reason)
                self.rejections[reason.split(":")[0]] += 1
                return rej
        for hop, d in plan:
            self.ports[hop].reserve(d)
        self.connections[conn.id] = conn
        self.paths_of[conn.id] = [hop for hop, _ in plan]
        self._next_id = max(self._next_id, conn.id + 1)
        return None

    def connect(self, src: int, dst: int, bandwidth: float, *, sl: int | None = None, cls: str = "DB",
                packet_size: int = 256, overhead: int = 0) -> Connection | Rejection:
        """Request a connection; the SL comes from the class and bandwidth unless given.

        Returns the established :class:`Connection`, or the :class:`Rejection`.
        """
        if sl is None:
            sl = self.classes.sl_for(cls, bandwidth)
        else:
            cls = self.classes.class_of(sl)
        if not 0 <= overhead < packet_size:
            raise ConfigError(f"'overhead' must be in 0..packet_size-1 (got {overhead} for {packet_size}B packets)")
        conn = Connection(self._next_id, int(src), int(dst), int(sl), float(bandwidth), int(packet_size),
                          int(overhead), cls)
        rej = self.admit(conn)
        return conn if rej is None else rej

    def release(self, conn_id: int) -> None:
        """Tear a connection down: every port on its path gives its reservation back."""
        conn = self.connections.pop(conn_id, None)
        if conn is None:
            raise ConfigError(f"no established connection {conn_id}")
        for hop in self.paths_of.pop(conn_id):
            self.ports[hop].release(conn_id)

    def touched_ports(self, conn_id: int) -> list[tuple[int, int]]:
        """The output ports whose tables connection *conn_id* changed."""
        return list(self.paths_of.get(conn_id, []))


# ---------------------------------------------------------------- establishment


@attrs.frozen
class Establishment:
    """What :func:`establish` did: connections requested and established, attempts per SL."""

    requested: int
    established: int
    attempts: Mapping[int, int]
    accepted: Mapping[int, int]
    exhausted_sl: int | None  #: the SL whose retries ran out (None: the requested number was reached)
    connections: tuple[Connection, ...] = attrs.field(repr=False)

    def as_dict(self) -> dict[str, Any]:
        """The outcome as JSON-ready data: connections requested and established, whether
        an SL ran out of room (``exhausted_sl``), and attempts and established connections per SL.
        """
        return {
            "requested": self.requested,
            "established": self.established,
            "exhausted_sl": self.exhausted_sl,
            "per_sl": {str(sl): {"attempts": self.attempts[sl], "established": self.accepted[sl]}
                       for sl in sorted(self.attempts)},
        }


def establish(
    admission: Admission,
    n: int,
    rng: np.random.Generator,
    *,
    ranges: Mapping[int, tuple[float, float]] = PAPER_RANGES,
    packet_size: int = 256,
    overhead: int = 0,
    retries: int = 100,
    redraw: str = "all",
    order: str = "turn",
) -> Establishment:
    """Request connections until *n* are established or an SL runs out of retries (§5.2).

    Requests take the SLs of *ranges* in turn (so every SL ends with about
    the same number of connections); each draws a source, a different
    destination (uniformly among the hosts) and a bandwidth (uniformly in
    the SL's range) and asks *admission* for it.  An SL gets *retries*
    attempts for each connection; when they all fail, establishment ends.
    A retry draws a new request (``redraw='all'``), or new endpoints for
    the same bandwidth (``redraw='endpoints'``): the paper does not say
    which, and only the first favours the smaller bandwidths of a range
    as the links fill up.  ``order='random'`` draws each connection's SL
    uniformly instead of in turn (§5.2's "randomly generated among the 4
    SLs"); its retries keep that SL.

    Parameters
    ----------
    admission : Admission
    n : int
        Connections to establish.
    rng : numpy.random.Generator
    ranges : mapping SL -> (low, high) bit/s
        Default: the paper's (:data:`PAPER_RANGES`).
    packet_size, overhead : int
        Of the connections' packets (see :class:`Connection`).
    retries : int
        Attempts per connection before giving up.
    redraw : {'all', 'endpoints'}
        What a retry draws anew: source, destination and bandwidth, or the
        source and destination only.
    order : {'turn', 'random'}
        The SLs of successive connections: in turn, or drawn uniformly.

    Returns
    -------
    Establishment
    """
    if n < 0 or retries < 1:
        raise ConfigError(f"need n >= 0 connections and retries >= 1 (got n={n}, retries={retries})")
    if admission.num_hosts < 2:
        raise ConfigError("connections need at least two hosts")
    if redraw not in ("all", "endpoints"):
        raise ConfigError(f"'redraw' must be one of (all, endpoints) (got {redraw!r})")
    if order not in ("turn", "random"):
        raise ConfigError(f"'order' must be one of (turn, random) (got {order!r})")
    sls = sorted(int(s) for s in ranges)
    for sl in sls:
        lo, hi = ranges[sl]
        if not 0 < lo <= hi:
            raise ConfigError(f"bandwidth range of SL {sl} must satisfy 0 < low <= high (got {lo}, {hi})")
    attempts = {sl: 0 for sl in sls}
    accepted = {sl: 0 for sl in sls}
    made: list[Connection] = []
    nh = admission.num_hosts
    exhausted = None
    k = 0
    while len(made) < n:
        sl = sls[k % len(sls)] if order == "turn" else sls[int(rng.integers(len(sls)))]
        lo, hi = ranges[sl]
        bw = None
        for _ in range(retries):
            src = int(rng.integers(nh))
            dst = int(rng.integers(nh - 1))
            dst += dst >= src
            if bw is None or redraw == "all":
                bw = float(rng.uniform(lo, hi))
            attempts[sl] += 1
            res = admission.connect(src, dst, bw, sl=sl, packet_size=packet_size, overhead=overhead)
            if isinstance(res, Connection):
                made.append(res)
                accepted[sl] += 1
                break
        else:
            exhausted = sl
            break
        k += 1
    return Establishment(n, len(made), attempts, accepted, exhausted, tuple(made))
