"""The ``alfaro2001`` arbitration policy: VLArbitrationTables filled as connections are admitted.

Alfaro, Sánchez and Duato (2001, §4.2) fill each output port's
VLArbitrationTable so that the weights of the entries serving the admitted
connections are their share of a *frame* of ``64 x 255 = 16320`` slots of 64
bytes, the most a full table can send in one pass:

- a connection of mean bandwidth ``B`` on a link of ``B_link`` bit/s needs
  ``N_slots = ceil(B / B_link x 16320)`` slots, computed against the full
  frame, so existing entries never change when a connection is added;
- connections of the same SL share one entry until its weight reaches 255,
  then the next free entry (a connection may straddle entries), so the
  number of entries rarely limits admission, bandwidth does;
- before any connection, a share of the frame is reserved for best effort
  (``be_share``, 20 % by default) in entries of the BE VL, and the CH VL gets
  one entry of weight ``ch_weight`` (1): CH only gets what nobody else uses;
- DBTS connections go to the high-priority table, everything else to the
  low-priority one (Pelissier's proposal, adopted by the paper);
- a port admits a connection only while its frame has the slots and its
  table the entries (``check_entries=false``: the slots only).

Options (strings, as from the command line): ``be_share`` (0..1, default
0.2), ``ch_weight`` (1..255, default 1), ``limit_high`` (LimitOfHighPriority,
0..255, default 255 = unbounded), ``spread`` (``true``: BE entries spread
evenly over the 64 positions so that best effort never holds the link for a
long run of entries; ``false``: BE in the first positions, then CH; default
true), ``check_entries`` (``true``, the default: a port admits a connection
only if its table has the entries for it, IBA's 64; ``false``: admission
checks the frame's slots only, the paper's "the number of table entries is
not a limitation ... but only the available bandwidth", and a table grows
past 64 entries where it must, which no IBA port can hold: for admission
studies, not for traffic), ``rounding`` (``ceil``, the default: a
connection takes ``ceil(B / B_link x 16320)`` whole slots, §4.2's formula;
``none``: its exact share ``B / B_link x 16320``, a fraction of a slot, so
admission loses nothing to rounding: for admission studies of how much the
rounding costs, not for traffic, whose weights must be whole).

Examples
--------
>>> from ibfabric.components.qos import ClassMap, Demand
>>> port = Alfaro2001().new_port(2.5e9, ClassMap(), "sw0 port 1")
>>> port.tables()[1][:2], port.free_slots()     # BE entries first, 20 % of 16320 slots and CH's slot taken
(((8, 255), (0, 0)), 13055)
>>> port.reserve(Demand(1, 3, 3, 300e6))        # 1959 slots: 7 full entries and one of 174
>>> [w for vl, w in port.tables()[1] if vl == 3]
[255, 255, 255, 255, 255, 255, 255, 174]

References
----------
F. J. Alfaro, J. L. Sánchez, J. Duato, "A Strategy to Compute the InfiniBand
Arbitration Tables", tech. rep. DIAB-01-02-20, Univ. Castilla-La Mancha,
2001, §4.2 and Table 1.
"""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction
from typing import Any

import attrs

from ibfabric.components.qos import MAX_WEIGHT, SLOTS_PER_FRAME, TABLE_ENTRIES, ClassMap, Demand, slots_for
from ibfabric.errors import ConfigError, did_you_mean
from ibfabric.plugins.manager import hookimpl

__all__ = ["Alfaro2001", "AlfaroPort", "Entry"]


@attrs.define(eq=False)
class Entry:
    """One used position of a table: its VL, the SL it groups and its weight
    (which connections hold which slots is in :attr:`AlfaroPort.alloc`)."""

    vl: int
    sl: int
    weight: int


def _bool(v: Any, name: str) -> bool:
    if isinstance(v, bool):
        return v
    s = str(v).strip().lower()
    if s in ("1", "true", "yes", "on"):
        return True
    if s in ("0", "false", "no", "off"):
        return False
    raise ConfigError(f"'{name}' must be true or false (got {v!r})")


def _number(v: Any, name: str, kind, lo, hi, hi_open: bool = False):
    try:
        x = kind(v) if kind is int else float(v)
        if kind is int and str(v).strip() != str(x):
            raise ValueError
    except (TypeError, ValueError):
        raise ConfigError(f"'{name}' must be a number in {lo}..{hi} (got {v!r})") from None
    if not lo <= x <= hi or (hi_open and x == hi):
        raise ConfigError(f"'{name}' must be in {lo}..{hi}{' (exclusive)' if hi_open else ''} (got {v!r})")
    return x


class Alfaro2001:
    """The arbitration policy of Alfaro, Sánchez and Duato (2001): see the module docstring.

    Parameters
    ----------
    be_share : float
        Fraction of the frame reserved for best effort, in [0, 1).  With 0
        BE still gets one entry of weight 1, like CH (else its packets could
        never leave).
    ch_weight : int
        Weight of the CH entry, 1..255.
    limit_high : int
        LimitOfHighPriority of every table (255: unbounded).
    spread : bool
        Spread the BE entries over the table (see the module docstring).
    check_entries : bool
        Admit a connection only if the table has the entries it needs (IBA's
        64); False: only if the frame has its slots (bandwidth-only
        admission; tables may then grow past 64 entries).
    rounding : {'ceil', 'none'}
        A connection's slots: rounded up (§4.2) or its exact fraction of the
        frame (admission studies only).
    """

    option_names = ("be_share", "ch_weight", "limit_high", "spread", "check_entries", "rounding")

    def __init__(self, be_share: float = 0.2, ch_weight: int = 1, limit_high: int = 255, spread: bool = True,
                 check_entries: bool = True, rounding: str = "ceil"):
        self.be_share = _number(be_share, "be_share", float, 0, 1, hi_open=True)
        self.ch_weight = _number(ch_weight, "ch_weight", int, 1, MAX_WEIGHT)
        self.limit_high = _number(limit_high, "limit_high", int, 0, 255)
        self.spread = _bool(spread, "spread")
        self.check_entries = _bool(check_entries, "check_entries")
        if rounding not in ("ceil", "none"):
            raise ConfigError(f"'rounding' must be one of (ceil, none) (got {rounding!r})")
        self.rounding = rounding
        self.be_slots = -(-Fraction(repr(self.be_share)) * SLOTS_PER_FRAME // 1)
        self.be_entries = max(1, -(-self.be_slots // MAX_WEIGHT))
        if self.be_entries + 1 > TABLE_ENTRIES:
            raise ConfigError(f"'be_share' {self.be_share} leaves no table entry for CH and connections")

    @classmethod
    def from_options(cls, options: Mapping[str, Any] | None = None) -> "Alfaro2001":
        """The policy from string options (``{'be_share': '0.3'}``); unknown keys are an error."""
        options = dict(options or {})
        unknown = sorted(set(options) - set(cls.option_names))
        if unknown:
            raise ConfigError(f"unknown alfaro2001 option '{unknown[0]}'{did_you_mean(unknown[0], cls.option_names)} (valid: {', '.join(cls.option_names)})")
        return cls(**options)

    def options(self) -> dict[str, Any]:
        """The policy's settings (reported in a QoS run's summary)."""
        return {"be_share": self.be_share, "ch_weight": self.ch_weight, "limit_high": self.limit_high,
                "spread": self.spread, "check_entries": self.check_entries, "rounding": self.rounding}

    def new_port(self, rate: float, classes: ClassMap, name: str = "") -> "AlfaroPort":
        """The table state of one output port on a link of *rate* bit/s."""
        return AlfaroPort(self, rate, classes, name)


class AlfaroPort:
    """The VLArbitrationTable of one output port, filled by the ``alfaro2001`` policy.

    ``low`` and ``high`` are the 64 positions of each table (None where
    free).  ``used`` counts the frame's reserved slots (BE and CH included).
    """

    def __init__(self, policy: Alfaro2001, rate: float, classes: ClassMap, name: str = ""):
        self.policy = policy
        self.rate = float(rate)
        self.classes = classes
        self.name = name
        self.low: list[Entry | None] = [None] * TABLE_ENTRIES
        self.high: list[Entry | None] = [None] * TABLE_ENTRIES
        self.open: dict[tuple[bool, int], int] = {}
        self.alloc: dict[int, list[tuple[bool, int, int]]] = {}
        self.bandwidth: dict[int, float] = {}
        self.used = 0
        self._reserve_be_ch()

    def _reserve_be_ch(self) -> None:
        pol = self.policy
        be_vl, ch_vl = self.classes.vl(self.classes.be), self.classes.vl(self.classes.ch)
        n = pol.be_entries
        left = pol.be_slots
        for i in range(n):
            pos = (i * TABLE_ENTRIES) // n if pol.spread else i
            w = min(left, MAX_WEIGHT) if left else 1
            left -= min(left, MAX_WEIGHT)
            self.low[pos] = Entry(be_vl, self.classes.be, w)
            self.used += w
        pos = max(i for i, e in enumerate(self.low) if e is None) if pol.spread else n
        self.low[pos] = Entry(ch_vl, self.classes.ch, pol.ch_weight)
        self.used += pol.ch_weight

    # ------------------------------------------------------------ admission

    def slots(self, bandwidth: float) -> int | Fraction:
        """The slots of the frame a connection of *bandwidth* bit/s takes here: ``slots_for`` (rounded
        up), or with ``rounding='none'`` the exact fraction ``bandwidth / rate x 16320``."""
        if self.policy.rounding == "none":
            return Fraction(bandwidth) * SLOTS_PER_FRAME / Fraction(self.rate)
        return slots_for(bandwidth, self.rate)

    def connection_slots(self) -> int | Fraction:
        """Slots reserved for connections (BE and CH not counted)."""
        return sum((take for alloc in self.alloc.values() for _, _, take in alloc), 0)

    def exact_slots(self) -> Fraction:
        """The connections' exact share of the frame: the sum of ``B / rate x 16320``, unrounded.
        ``connection_slots() - exact_slots()`` is what rounding up cost this port."""
        return sum((Fraction(b) for b in self.bandwidth.values()), Fraction(0)) * SLOTS_PER_FRAME / Fraction(self.rate)

    def free_slots(self) -> int:
        """Slots of the frame not reserved yet."""
        return SLOTS_PER_FRAME - self.used

    def free_entries(self, high: bool = False) -> int:
        """The number of free positions of the high-priority table (*high*) or the low-priority one."""
        return sum(1 for e in (self.high if high else self.low) if e is None)

    def _room(self, high: bool, sl: int) -> int:
        idx = self.open.get((high, sl))
        if idx is None:
            return 0
        return MAX_WEIGHT - (self.high if high else self.low)[idx].weight

    def check(self, demand: Demand) -> str | None:
        """Why *demand* cannot be reserved on this port, or None if it can.

        It needs ``slots_for(bandwidth, rate)`` free slots of the frame, and
        enough free entries of its priority's table for the slots the open entry
        of its SL cannot take (at most ``MAX_WEIGHT`` slots per entry; not
        checked with ``check_entries=false``).  The reason reads
        ``bandwidth: ...`` or ``entries: ...``.
        """
        slots = self.slots(demand.bandwidth)
        free = self.free_slots()
        if slots > free:
            return f"bandwidth: {self.name} needs {float(slots):g} slots, {float(free):g} left"
        if not self.policy.check_entries:
            return None
        need = -(-max(0, slots - self._room(demand.high, demand.sl)) // MAX_WEIGHT)
        have = self.free_entries(demand.high)
        if need > have:
            which = "high" if demand.high else "low"
            return f"entries: {self.name} needs {need} free {which}-priority entries, {have} left"
        return None

    def reserve(self, demand: Demand) -> None:
        """Reserve the slots of *demand*: fill the open entry of its SL, then new entries.

        Call :meth:`check` first: this method assumes there is room.

        Raises
        ------
        ConfigError
            If the connection is reserved on this port already.
        """
        if demand.conn in self.alloc:
            raise ConfigError(f"{self.name}: connection {demand.conn} is already reserved")
        slots = self.slots(demand.bandwidth)
        table = self.high if demand.high else self.low
        key = (demand.high, demand.sl)
        alloc = []
        rem = slots
        idx = self.open.get(key)
        if idx is not None:
            e = table[idx]
            take = min(rem, MAX_WEIGHT - e.weight)
            if take:
                e.weight += take
                alloc.append((demand.high, idx, take))
                rem -= take
        while rem:
            if None in table:
                idx = table.index(None)  # the next free entry (check() made sure there is one)
            else:  # check_entries=false: the table grows past IBA's 64 entries
                table.append(None)
                idx = len(table) - 1
            take = min(rem, MAX_WEIGHT)
            table[idx] = Entry(demand.vl, demand.sl, take)
            alloc.append((demand.high, idx, take))
            self.open[key] = idx
            rem -= take
        self.alloc[demand.conn] = alloc
        self.bandwidth[demand.conn] = demand.bandwidth
        self.used += slots

    def release(self, conn: int) -> None:
        """Free the slots and entries of connection *conn* (nothing if it holds none)."""
        for high, idx, take in self.alloc.pop(conn, ()):
            table = self.high if high else self.low
            e = table[idx]
            e.weight -= take
            self.used -= take
            if e.weight == 0:
                table[idx] = None
                if self.open.get((high, e.sl)) == idx:
                    del self.open[(high, e.sl)]
        self.bandwidth.pop(conn, None)

    # ---------------------------------------------------------------- tables

    def tables(self) -> tuple[tuple[tuple[int, int], ...], tuple[tuple[int, int], ...], int]:
        """``(high, low, LimitOfHighPriority)``; free positions are written with weight 0 (which IBA skips)."""
        high = tuple((e.vl, e.weight) if e else (0, 0) for e in self.high)
        low = tuple((e.vl, e.weight) if e else (0, 0) for e in self.low)
        return _trim(high), _trim(low), self.policy.limit_high

    def reserved(self) -> float:
        """Bandwidth of the connections reserved here, bit/s."""
        return float(sum(self.bandwidth.values()))


def _trim(table: tuple[tuple[int, int], ...]) -> tuple[tuple[int, int], ...]:
    """Drop the trailing free positions."""
    n = len(table)
    while n and table[n - 1][1] == 0:
        n -= 1
    return table[:n]


@hookimpl
def ibfabric_register_arbitration_policies(register) -> None:
    register("alfaro2001", Alfaro2001.from_options,
             description="Alfaro-Sanchez-Duato 2001: 64x255-slot frames, entries grouped by SL, BE share, CH weight 1")
