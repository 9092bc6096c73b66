"""Routing options: one DLID, several candidate output ports (the route stage, DESIGN §3).

One mechanism serves Martínez et al.'s fully adaptive routing (2003, §4)
and Kim et al.'s multipath routing (2007, §3.3-3.4):

- **Where the options come from.**  A switch with ``optionBits = k > 0``
  reads the forwarding table as ``2^k``-way interleaved memory: a DLID whose
  least significant bit is 1 returns *every* entry of its aligned range
  ``[d, d + 2^k)`` in one access; a DLID whose LSB is 0 returns only its own
  entry (the deterministic, escape path: Martínez §4.2).  The subnet manager
  still sees one linear table, so OpenSM dumps stay valid, and a switch with
  ``optionBits = 0`` (or a range whose entries all hold the same port) is an
  ordinary switch: mixed fabrics work.  Entry ``d`` of a range is option 0,
  the *escape* option; the others are *adaptive* options.  With
  ``optionsWhen = "slid"`` (Kim) the packet's SLID asks for them instead,
  and entry ``base + 2P + 1`` is path ``P``'s next hop (:class:`SlidRoute`).
- **When one is chosen** (``selectAt``): at ``lookup`` time, as the packet
  arrives (with the port status then), or at ``arbitration`` time: the
  packet waits at its read point as a candidate of every option's output
  port, and the first port that may take it asks the path selector which of
  the options that could take the packet *now* to use; if the selector
  prefers another port that could take it now, the port leaves the packet
  to that port and pokes it.
- **How** (``pathSelector``): a path-selector plugin (:mod:`ibfabric.plugins.selectors`).
- **Escape space** (``escapeBufferSize`` of the *receiving* switch, Martínez
  §4.4): an adaptive option is usable only if the downstream VL will have
  more free credits than the escape reserve ``C_E`` plus the packet, i.e.
  the packet fits in the adaptive part; the escape option only needs the
  packet to fit.  With output buffers "will have" counts the packets queued
  in the output VL buffer before it, and the packet must fit that buffer
  too; the reserve is then kept when it is sent, without another check.
  ``outputEscapeBufferSize`` splits the output VL buffers as well (Martínez
  §5.1: "the adaptive and escape queues implemented on each buffer"): a
  packet crossing on an adaptive option must also leave that much of its
  output buffer free, i.e. fit in the buffer's adaptive part; an escape
  option's packet may fill the whole buffer.  The output buffer needs no
  second read point: an adaptive packet in it has its credits downstream
  counted before it crosses, so its head never waits on them.

What an option port must take into account comes from its output side
(``free_at()``, ``room``, ``downstream_free()``: :mod:`~ibfabric.components.switch.tx`), so options
work with output buffers as without.  A port that is not Active is no
option (:mod:`ibfabric.components.failures`).
"""

from __future__ import annotations

from ibfabric.errors import ConfigError

from ..port import INF
from ..portstate import PortState

__all__ = ["Option", "OptionSet", "OptionWants", "SlidRoute", "add_options", "options_next_transfer", "options_pick",
           "options_sendable", "ZERO_VLS"]

#: The SL-to-VL "table" of an option-set route entry: the real mapping is per option.
ZERO_VLS = [0] * 16
ACTIVE = PortState.ACTIVE


class Option:
    """One routing option: the output port's transmitter, the SL-to-VL table towards it, its kind,
    and (Kim's multipath) the set of path names it continues, as a bit mask (-1: every one)."""

    __slots__ = ("tx", "sl2vl", "index", "adaptive", "pmask")

    def __init__(self, tx, sl2vl: list[int], index: int, pmask: int = -1, adaptive: bool | None = None):
        self.tx = tx
        self.sl2vl = sl2vl
        self.index = index
        self.adaptive = index > 0 if adaptive is None else adaptive
        self.pmask = pmask

    def __repr__(self) -> str:
        return f"<Option {self.index} {self.tx.name_}{' adaptive' if self.adaptive else ' escape'}>"


class _Register:
    """What ``OptionSet.cands[vl]`` is: ``append(c)`` makes the head of read point *c* a candidate of
    every option's port."""

    __slots__ = ("owner",)

    def __init__(self, owner: "OptionSet"):
        self.owner = owner

    def append(self, c) -> None:
        self.owner.register(c)


class OptionSet:
    """The options of one DLID at one switch: the route target of its packets (arbitration-time
    selection) until one port takes them, and what chooses among them at lookup time."""

    nvl = 16  # never rejects a VL: each option maps the SL itself
    #: the virtual output queue of an options packet (it has no output yet: :data:`~.inbuf.OPTIONS_QUEUE`)
    port = -2

    def __init__(self, node, options: list[Option]):
        self.node = node
        self.options = options
        self.selector = node.selector
        reg = _Register(self)
        self.cands = [reg] * 16

    def __repr__(self) -> str:
        return f"<OptionSet {[o.tx.port for o in self.options]}>"

    def register(self, c) -> None:
        """The head of read point *c* (an options packet) becomes a candidate of every option's port."""
        p = c.q[0]
        sl = p.sl
        n = 0
        for o in self.options:
            vl = o.sl2vl[sl]
            if vl < o.tx.nvl:
                o.tx.cands[vl].append(c)
                n += 1
        if not n:
            raise ConfigError(f"{self.node.path}: SL {sl} maps to no data VL on any routing option of DLID {p.dlid}"
                              f" (ports {[o.tx.port for o in self.options]}); check the SL-to-VL tables")

    def unregister(self, c, keep=None) -> None:
        """Take the head of read point *c* out of every option's candidates but *keep*'s."""
        sl = c.q[0].sl
        for o in self.options:
            tx = o.tx
            if tx is not keep:
                vl = o.sl2vl[sl]
                if vl < tx.nvl:
                    lst = tx.cands[vl]
                    if c in lst:
                        lst.remove(c)

    def poke(self, t: float) -> None:
        """Poke the transmitter of every option: something may be sendable from *t* on."""
        for o in self.options:
            o.tx.poke(t)

    def ways(self, p) -> list[tuple]:
        """``(port, vl, credits needed)`` of each option *p* could take (the deadlock finder)."""
        out = []
        for o in self.options:
            tx = o.tx
            vl = o.sl2vl[p.sl]
            if vl < tx.nvl and o.pmask & p.paths:
                out.append((tx, vl, p.credits + (tx.room_reserve() if o.adaptive else 0)))
        return out

    def active(self, p) -> bool:
        """Whether one of the options that continue *p*'s paths is an Active port."""
        return any(o.tx.state == ACTIVE and o.pmask & p.paths for o in self.options)

    def eligible(self, p, now: float) -> list[tuple[Option, int, int]]:
        """``(option, vl, free credits)`` of each option that could take *p* at *now*: its port is Active
        and may take a crossing now, the packet fits its room, and the credits downstream are enough
        (beyond the escape reserve for an adaptive option, which must also leave the output buffer's own
        reserve free)."""
        out = []
        sl = p.sl
        paths = p.paths
        cr = p.credits
        for o in self.options:
            tx = o.tx
            vl = o.sl2vl[sl]
            if vl >= tx.nvl or tx.state != ACTIVE or tx.free_at() > now or not o.pmask & paths:
                continue
            free = tx.downstream_free(vl, now)
            if o.adaptive:
                free -= tx.escape_reserve
            if free >= cr and (tx.obuf is None or tx.ofree[vl] + tx.freed_by(vl, now)
                               >= (cr + tx.oreserve if o.adaptive else cr)):
                out.append((o, vl, free))
        return out

    def choose_at_lookup(self, p, now: float) -> tuple[Option, int]:
        """Lookup-time choice: among the Active options with credits for *p* now (the escape option if none)."""
        sl = p.sl
        cands = []
        paths = p.paths
        for o in self.options:
            tx = o.tx
            vl = o.sl2vl[sl]
            if vl >= tx.nvl or not o.pmask & paths or tx.state != ACTIVE:
                continue
            free = tx.downstream_free(vl, now) - (tx.escape_reserve if o.adaptive else 0)
            if free >= p.credits or not o.adaptive:
                cands.append((o, vl, free))
        if not cands:
            o = next((o for o in self.options if o.pmask & paths), self.options[0])
            p.paths &= o.pmask
            return o, o.sl2vl[sl]
        o, vl, _ = cands[self.selector.select(p, cands, now)] if len(cands) > 1 else cands[0]
        self.selector.chosen(o, vl)
        p.paths &= o.pmask
        return o, vl


def options_pick(tx, vl: int, now: float):
    """The crossbar's choice on output VL *vl* of a port of a switch with routing options (``pick``, see
    :mod:`~ibfabric.components.switch.tx`): as the plain one, and for an options packet the path selector's choice among the options
    that could take it now.  A packet committed to this port through an adaptive option needs the escape
    reserve downstream on top of its own credits; the option taken means nothing at the next switch."""
    nxt = INF
    need = 0
    buffered = tx.obuf is not None
    room = tx.room[vl]
    for c in tx.cands[vl]:
        p = c.q[0]
        t = p.ready_at
        xf = c.rx.xbar_free
        if xf > t:
            t = xf
        if t > now:
            if t < nxt:
                nxt = t
            continue
        op = p.out_port
        if op is tx:
            n = p.credits
            if p.opt > 0:
                if buffered:
                    fits = n + tx.oreserve <= room and tx.downstream_free(vl, now) - tx.escape_reserve >= n
                    n += tx.oreserve  # (the room it waits for)
                else:
                    n += tx.escape_reserve
                    fits = n <= room
            else:
                fits = n <= room
            if fits:
                p.opt = 0
                return c, nxt
            if need == 0 or n < need:
                need = n
            continue
        # an options packet: which of its options could take it now?
        elig = op.eligible(p, now)
        mine = [k for k, e in enumerate(elig) if e[0].tx is tx]
        if not mine:
            # this port may take it once it has the room, if it is one of the packet's options
            for o in op.options:
                if o.tx is tx and o.pmask & p.paths:
                    n = p.credits + (tx.room_reserve() if o.adaptive else 0)
                    if need == 0 or n < need:
                        need = n
                    break
            continue
        k = op.selector.select(p, elig, now) if len(elig) > 1 else 0
        o, ovl, _ = elig[k]
        if o.tx is not tx:
            # the selector prefers another port that could take the packet now: poke it, and look again
            # right after it (if it sent something else meanwhile, this port may take the packet)
            o.tx.poke(now)
            nxt = now
            continue
        op.unregister(c, tx)
        op.selector.chosen(o, ovl)
        p.paths &= o.pmask
        p.out_port = tx
        p.out_vl = ovl
        p.opt = 0
        return c, nxt
    if need:
        t = tx.room_time(vl, need, now)
        if t < nxt:
            nxt = t
    return None, nxt


def options_sendable(tx, now: float) -> bool:
    """Whether a candidate of *tx* (a port of a switch with routing options) could cross now (no side
    effects; the port audits)."""
    buffered = tx.obuf is not None
    for vl in range(tx.nvl):
        room = tx.room_at(vl, now)
        for c in tx.cands[vl]:
            p = c.q[0]
            if max(p.ready_at, c.rx.xbar_free) > now:
                continue
            op = p.out_port
            if op is tx:
                n = p.credits
                if p.opt > 0 and buffered:
                    fits = n + tx.oreserve <= room and tx.downstream_free(vl, now) - tx.escape_reserve >= n
                else:
                    fits = n + (tx.escape_reserve if p.opt > 0 else 0) <= room
                if fits:
                    return True
            else:
                # an options packet: this port must look now unless another port that could take it is
                # due to look by now (the selector may send it there)
                elig = op.eligible(p, now)
                if any(e[0].tx is tx for e in elig) and not any(
                        e[0].tx is not tx and e[0].tx.pending_wake() <= now for e in elig):
                    return True
    return False


def options_next_transfer(tx, after: float) -> float:
    """With output buffers: the earliest time from *after* on when a candidate of *tx* could cross into its
    output buffer (``next_transfer``, see :mod:`~ibfabric.components.switch.tx`), as
    :meth:`~.outbuf.OutputBuffers._next_transfer` finds it, and for a packet that must see credits downstream
    first (committed through an adaptive option, or an options packet that this port is an option of) once
    the returns on their way bring them: the credits beyond those of the packets queued before it in the
    output buffer, and beyond the escape reserve for an adaptive option (:func:`options_pick`).  If they
    are not on their way yet, a credit return pokes the port (:class:`OptionWants`).  An options packet
    none of whose options at this port continues its paths is not this port's to take."""
    best = INF
    for vl in range(tx.nvl):
        for c in tx.cands[vl]:
            p = c.q[0]
            t = p.ready_at
            xf = c.rx.xbar_free
            if xf > t:
                t = xf
            if after > t:
                t = after
            if t >= best:
                continue
            n = p.credits
            op = p.out_port
            if op is tx:
                adaptive = p.opt > 0
                down = n + tx.escape_reserve if adaptive else 0
            else:
                down = 0
                for o in op.options:
                    if o.tx is tx and o.pmask & p.paths:
                        adaptive = o.adaptive
                        down = n + (tx.escape_reserve if adaptive else 0)
                        break
                if not down:
                    continue
            t = tx.room_time(vl, n + tx.oreserve if adaptive else n, t)
            if down and t < best:
                t = tx.credit_time(vl, down + tx.oqueued[vl], t)
            if t < best:
                best = t
    return best


class OptionWants:
    """``tx.wants`` of a port with routing options and output buffers: a credit return pokes the port if its
    output buffer holds packets of that VL (to send them) or candidates wait for it (they may need the
    credits downstream to cross, :func:`options_next_transfer`)."""

    __slots__ = ("tx",)

    def __init__(self, tx):
        self.tx = tx

    def __getitem__(self, vl: int):
        tx = self.tx
        return tx.obuf[vl] or tx.cands[vl]


class SlidRoute:
    """The route entry of a DLID whose options the packet's SLID asks for (``optionsWhen = "slid"``,
    Kim et al.'s multipath): SLID LSB 0, the DLID's own entry; 1, the named paths' next hops."""

    __slots__ = ("single", "options", "arbitration")

    def __init__(self, single: tuple, options: OptionSet, arbitration: bool):
        self.single = single
        self.options = options
        self.arbitration = arbitration

    def route(self, p) -> tuple:
        """The route entry for *p*: its DLID's own, or the options (at lookup or arbitration time)."""
        if not p.slid & 1:
            return self.single
        if self.arbitration:
            return (-1, self.options, ZERO_VLS)
        from .rx import OPTIONS

        return (OPTIONS, None, self.options)


def _add_slid_options(node, routes: list, lft: bytes, per_port: list) -> None:
    """Kim's layout (:mod:`ibfabric.plugins.routing.multipath`): entry ``base + 2P + 1`` of each
    ``2^optionBits`` range is path ``P``'s next hop; a packet whose SLID's LSB is 1 may take any of
    them that continues a path it is still on (``Packet.paths``)."""
    from .rx import BY_SLID

    size = 1 << node.option_bits
    n = len(per_port)
    sets: dict[tuple, OptionSet] = {}
    for base in range(0, len(lft) - size + 1, size):
        masks: dict[int, int] = {}
        for P, port in enumerate(lft[base + 1:base + size:2]):
            if 0 < port < n and per_port[port][1] is not None:
                masks[port] = masks.get(port, 0) | (1 << P)
        if len(masks) < 2:
            continue
        key = tuple(sorted(masks.items()))
        os_ = sets.get(key)
        if os_ is None:
            opts = [Option(per_port[port][1], per_port[port][2], k, pmask=m, adaptive=False)
                    for k, (port, m) in enumerate(sorted(masks.items()))]
            os_ = sets[key] = OptionSet(node, opts)
        arbitration = node.select_at == "arbitration"
        for dlid in range(base, base + size):
            routes[dlid] = (BY_SLID, None, SlidRoute(routes[dlid], os_, arbitration))


def add_options(node, routes: list, lft: bytes, per_port: list) -> None:
    """Replace, in *routes* (one entry per DLID), the entries of DLIDs with LSB 1 whose
    ``2^optionBits``-LID range holds more than one port by option-set entries (with
    ``optionsWhen = "slid"``: :func:`_add_slid_options`)."""
    from .rx import OPTIONS

    if node.options_when == "slid":
        _add_slid_options(node, routes, lft, per_port)
        return
    size = 1 << node.option_bits
    mask = ~(size - 1)
    n = len(per_port)
    sets: dict[tuple, OptionSet] = {}
    for dlid in range(1, len(lft), 2):
        base = dlid & mask
        ports: list[int] = []
        for port in lft[base:base + size]:
            if 0 < port < n and per_port[port][1] is not None and port not in ports:
                ports.append(port)
        if len(ports) < 2:
            continue
        key = tuple(ports)
        os_ = sets.get(key)
        if os_ is None:
            first = lft[base]
            opts = []
            if first in ports:  # entry d is the escape option
                opts.append(Option(per_port[first][1], per_port[first][2], 0))
            for port in ports:
                if port != first:
                    opts.append(Option(per_port[port][1], per_port[port][2], len(opts) if opts else 1))
            os_ = sets[key] = OptionSet(node, opts)
        routes[dlid] = (-1, os_, ZERO_VLS) if node.select_at == "arbitration" else (OPTIONS, None, os_)
