"""VL arbiters: which virtual lane an output port sends next.

Built-ins (registered through the ``arbiters`` entry point):

``iba-vlarb``
    The IBA VLArbitrationTable (InfiniBand Architecture Specification
    vol. 1, §7.6.9; Alfaro et al. 2001 §3.3): a high- and a low-priority
    table of up to 64 ``(VL, weight)`` entries served by weighted round
    robin, weights in 64-byte units, a packet never split (the weight is
    rounded up to whole packets), and ``LimitOfHighPriority x 4096`` bytes
    of high-priority traffic before one low-priority packet may go.
``round-robin``
    Every VL with a packet ready, in turn, one packet each.

Each port gets its own arbiter object from the factory; the data path calls
its ``select(ready)`` method once per packet sent (never a hook), or, when
exactly one VL is ready and the arbiter's class has one,
``select_one(ready, vl)``, which must choose as ``select`` would (the
built-ins have it; a third-party arbiter needs only ``select``).  The
arbiter of a third-party plugin is wrapped in a :class:`CheckedArbiter`,
which turns an exception or an invalid choice into a :class:`PluginError`
naming the plugin; the built-in arbiters are called directly.
"""

from __future__ import annotations

import functools
import operator

import attrs
import numpy as np

from ibfabric.errors import ConfigError, IbfabricError, PluginError
from ibfabric.kernel import module_rng
from ibfabric.plugins.manager import hookimpl
from ibfabric.plugins.registry import one_line

__all__ = ["ArbiterConfig", "CheckedArbiter", "IBAVLArbiter", "RoundRobinArbiter", "arbiter_for", "UNLIMITED"]

#: LimitOfHighPriority value meaning "no limit".
UNLIMITED = 255


@attrs.frozen
class ArbiterConfig:
    """What an arbiter factory receives for one output port.

    ``high`` and ``low`` are the VLArbitrationTable entries ``(vl, weight)``
    (weights in 64-byte units); ``limit_high`` is LimitOfHighPriority.
    When both tables are empty, ``low`` holds every data VL at weight 64.
    ``port`` is the port's path (``net.sw3.port[2]``) and ``seed`` the run's
    seed.

    :attr:`rng` is the port's own ``numpy.random.Generator``, for an arbiter
    that draws (a lottery, a random tie-break): derived from ``seed`` and
    ``port`` as every module's generator is (:func:`ibfabric.kernel.module_rng`
    of ``"<port>:arbiter"``), so two ports draw independent streams and a run
    with the same seed draws the same ones.  It is made on first use: the
    built-in arbiters draw nothing and never create it, so it changes no
    result of theirs.
    """

    num_vls: int
    high: tuple[tuple[int, int], ...] = ()
    low: tuple[tuple[int, int], ...] = ()
    limit_high: int = 0
    port: str = ""
    seed: int = 0

    @functools.cached_property
    def rng(self) -> np.random.Generator:
        """The port's generator (made on first access, then the same object)."""
        return module_rng(self.seed, f"{self.port}:arbiter")


class IBAVLArbiter:
    """Weighted round robin over an IBA VLArbitrationTable (high and low priority).

    Parameters
    ----------
    config : ArbiterConfig

    Notes
    -----
    Within a table, the current entry ``(vl, weight)`` may send while its VL
    has a packet ready and its remaining weight is positive; each packet
    consumes ``ceil(size / 64)`` units and is sent whole even if that
    exceeds the remainder.  An entry whose VL has nothing ready, or whose
    weight is spent, passes the turn to the next entry; entries with weight 0
    are skipped.  High priority is served first, but once
    ``limit_high x 4096`` bytes of it have gone since the last low-priority
    packet (at least one packet; 255 means unlimited), a ready low-priority
    packet goes next.  Low priority is also served whenever high has nothing
    ready.

    References
    ----------
    InfiniBand Architecture Specification, vol. 1, rel. 1.2, §7.6.9.
    F. J. Alfaro, J. L. Sánchez, J. Duato, "A Strategy to Compute the
    InfiniBand Arbitration Tables", tech. rep. DIAB-01-02-20, 2001, §3.3.
    """

    #: With one data VL the choice is always VL 0 and the table state is
    #: unobservable, so the data path may skip calling select().
    single_vl_trivial = True

    def __init__(self, config: ArbiterConfig):
        self.num_vls = config.num_vls
        self.set_tables(config.high, config.low, config.limit_high)

    def set_tables(self, high, low, limit_high: int) -> None:
        """Replace the tables (as a subnet manager's VLArbitrationTable SMP would)."""
        if not 0 <= limit_high <= 255:
            raise ConfigError(f"LimitOfHighPriority must be 0..255 (got {limit_high})")
        for name, table in (("high", high), ("low", low)):
            if len(table) > 64:
                raise ConfigError(f"the {name}-priority table has {len(table)} entries; at most 64")
            for vl, w in table:
                if not 0 <= vl <= 14 or not 0 <= w <= 255:
                    raise ConfigError(f"{name}-priority entry ({vl}, {w}): VL must be 0..14 and weight 0..255")
        nvl = self.num_vls
        self.high = [(vl, w) for vl, w in high if w > 0 and vl < nvl]
        self.low = [(vl, w) for vl, w in low if w > 0 and vl < nvl]
        self.limit = None if limit_high == UNLIMITED else limit_high * 4096
        self.hi_idx = 0
        self.hi_rem = self.high[0][1] if self.high else 0
        self.lo_idx = 0
        self.lo_rem = self.low[0][1] if self.low else 0
        self.hi_sent = 0
        self.served = {vl for vl, _ in self.high} | {vl for vl, _ in self.low}
        #: per VL, for each entry of the low-priority table, the next entry (after it, round the table
        #: back to itself) of that VL, -1 if the VL has none: where _wrr's walk stops when that VL alone
        #: is ready (:meth:`select`'s one-VL path)
        self.lo_next = _next_entries(tuple(self.low), nvl)
        self.low_only = bool(self.low) and not self.high

    def unserved(self) -> list[int]:
        """Data VLs that appear in neither table (their packets could never be sent)."""
        return [vl for vl in range(self.num_vls) if vl not in self.served]

    def select(self, ready: list) -> int:
        """The VL to send next among those whose entry of *ready* is a packet (see Notes).

        Raises
        ------
        ConfigError
            If no ready VL is in either VLArbitrationTable.
        """
        if self.low_only and ready.count(None) == len(ready) - 1:
            for vl, p in enumerate(ready):
                if p is not None:
                    return self.select_one(ready, vl)
        return self._select(ready)

    def select_one(self, ready: list, vl: int) -> int:
        """:meth:`select` when VL *vl* alone is ready (the data path calls this then).

        With only a low-priority table, the entry _wrr's walk would stop at is
        looked up (``lo_next``) instead of walked to: the same choice and the
        same table state.
        """
        if not self.low_only:
            return self._select(ready)
        idx = self.lo_idx
        rem = self.lo_rem
        low = self.low
        if low[idx][0] != vl or rem <= 0:
            idx = self.lo_next[vl][idx]
            if idx < 0:  # the VL is in no table: _wrr's walk and the error below
                return self._select(ready)
            rem = low[idx][1]
        rem -= (ready[vl].size + 63) >> 6
        if rem <= 0:
            idx = idx + 1 if idx + 1 < len(low) else 0
            rem = low[idx][1]
        self.lo_idx = idx
        self.lo_rem = rem
        self.hi_sent = 0
        return vl

    def _select(self, ready: list) -> int:
        """:meth:`select` by walking the tables (any number of VLs ready)."""
        high_allowed = self.limit is None or self.hi_sent == 0 or self.hi_sent < self.limit
        if self.high and high_allowed:
            vl = self._pick_high(ready)
            if vl >= 0:
                self.hi_sent += ready[vl].size
                return vl
        if self.low:
            vl = self._pick_low(ready)
            if vl >= 0:
                self.hi_sent = 0
                return vl
        if self.high and not high_allowed:
            vl = self._pick_high(ready)  # no low-priority packet is ready: high may go on
            if vl >= 0:
                self.hi_sent += ready[vl].size
                return vl
        raise ConfigError(f"VL arbiter asked to choose among VLs {[v for v, p in enumerate(ready) if p]} "
                          "that are in neither VLArbitrationTable")

    def _pick_high(self, ready: list) -> int:
        vl, self.hi_idx, self.hi_rem = _wrr(self.high, self.hi_idx, self.hi_rem, ready)
        return vl

    def _pick_low(self, ready: list) -> int:
        vl, self.lo_idx, self.lo_rem = _wrr(self.low, self.lo_idx, self.lo_rem, ready)
        return vl


@functools.lru_cache(maxsize=64)
def _next_entries(table: tuple[tuple[int, int], ...], nvl: int) -> list[list[int]]:
    """Per VL, per entry ``i`` of *table*: the first entry of that VL among ``i + 1, i + 2, ...``
    round the table (``i`` itself last), or -1 where the VL has no entry.

    One backward pass round the table twice per VL; shared (read-only) by the ports whose tables
    are equal, which is every port of a fabric built from the same parameters."""
    n = len(table)
    out = []
    for vl in range(nvl):
        row = [-1] * n
        nxt = -1
        for i in range(2 * n - 1, -1, -1):
            if i < n:
                row[i] = nxt
            if table[i % n][0] == vl:
                nxt = i % n
        out.append(row)
    return out


def _wrr(table: list[tuple[int, int]], idx: int, rem: int, ready: list) -> tuple[int, int, int]:
    """One weighted-round-robin choice in a VLArbitrationTable.

    Returns ``(vl or -1, new current entry, its remaining weight)``: the
    current entry sends if its VL has a packet ready and weight left (the
    packet's ``ceil(size / 64)`` units are taken even beyond the remainder);
    otherwise the turn passes to the next entry, at most once round the table.
    """
    n = len(table)
    for _ in range(n + 1):
        vl, _w = table[idx]
        p = ready[vl] if vl < len(ready) else None
        if p is not None and rem > 0:
            rem -= (p.size + 63) >> 6
            if rem <= 0:
                idx = idx + 1 if idx + 1 < n else 0
                rem = table[idx][1]
            return vl, idx, rem
        idx = idx + 1 if idx + 1 < n else 0
        rem = table[idx][1]
    return -1, idx, rem


class RoundRobinArbiter:
    """One packet per ready VL in turn, starting after the VL served last."""

    single_vl_trivial = True

    def __init__(self, config: ArbiterConfig):
        self.num_vls = config.num_vls
        self.last = config.num_vls - 1

    def select(self, ready: list) -> int:
        """The first VL after the one served last whose entry of *ready* is a packet.

        Raises
        ------
        ValueError
            If no VL is ready.
        """
        n = self.num_vls
        vl = self.last
        for _ in range(n):
            vl = vl + 1 if vl + 1 < n else 0
            if ready[vl] is not None:
                self.last = vl
                return vl
        raise ValueError("round-robin arbiter called with no VL ready")

    def select_one(self, ready: list, vl: int) -> int:
        """:meth:`select` when VL *vl* alone is ready: that VL, served last from now on."""
        self.last = vl
        return vl


class CheckedArbiter:
    """A third-party arbiter whose every choice is checked (one extra call per packet sent).

    :meth:`select` must return the index of a VL whose entry of *ready* is a
    packet; anything else, or an exception, is a :class:`PluginError` that
    names the arbiter, its plugin and the port.  Other attributes are the
    wrapped arbiter's (``set_tables``, ``single_vl_trivial``...).
    """

    def __init__(self, arbiter, reg, where: str):
        self.arbiter = arbiter
        self._select = arbiter.select
        self.what = f"{where}: VL arbiter '{reg.name}' (plugin '{reg.plugin}')"

    def __getattr__(self, name: str):
        return getattr(self.__dict__["arbiter"], name)

    def select(self, ready: list) -> int:
        """The wrapped arbiter's choice, checked.

        Parameters
        ----------
        ready : list
            Per data VL, the packet ready to go on it, or None.

        Returns
        -------
        int
            A VL whose entry of *ready* is a packet (a numpy integer is converted).

        Raises
        ------
        PluginError
            If the arbiter raises (other than an :class:`~ibfabric.IbfabricError`,
            which passes through) or returns anything else.
        """
        try:
            vl = self._select(ready)
        except IbfabricError:
            raise
        except Exception as exc:
            raise PluginError(f"{self.what} raised {type(exc).__name__} in select(): {one_line(exc)}") from exc
        if type(vl) is not int and not isinstance(vl, bool):
            try:
                vl = operator.index(vl)  # numpy integers
            except TypeError:
                pass
        if type(vl) is not int or not 0 <= vl < len(ready) or ready[vl] is None:
            waiting = [v for v, p in enumerate(ready) if p is not None]
            raise PluginError(
                f"{self.what}: select() returned {vl!r}, not one of the VLs with a packet ready {waiting}"
            )
        return vl


def arbiter_for(node, port: int, nvl: int):
    """Build the arbiter of one port of *node* from its ``arbiter`` and ``vlArb*`` parameters."""
    from ibfabric.components.node import parse_vlarb

    p = node.params
    where = f"{node.path}.port[{port}]"
    high = parse_vlarb(str(p["vlArbHigh"]), node.path, "vlArbHigh")
    low = parse_vlarb(str(p["vlArbLow"]), node.path, "vlArbLow")
    if not high and not low:
        low = tuple((vl, 64) for vl in range(nvl))
    limit = node.int_param("vlArbHighLimit", 0, 255)
    reg = node.sim.plugins.vl_arbiters.get(str(p["arbiter"]))
    cfg = ArbiterConfig(num_vls=nvl, high=high, low=low, limit_high=limit, port=where, seed=node.sim.seed)
    arb = reg.create(cfg, where=where)
    if not reg.builtin:
        arb = CheckedArbiter(arb, reg, where)
    unserved = getattr(arb, "unserved", lambda: [])()
    if unserved:
        raise ConfigError(
            f"{where}: VL {unserved[0]} is operational but in neither VLArbitrationTable"
            " (vlArbHigh/vlArbLow); its packets could never be sent"
        )
    return arb


@hookimpl
def ibfabric_register_vl_arbiters(register) -> None:
    register("iba-vlarb", IBAVLArbiter, description="IBA VLArbitrationTable: high/low WRR, LimitOfHighPriority")
    register("round-robin", RoundRobinArbiter, description="one packet per ready VL in turn")
