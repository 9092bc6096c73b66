"""Routing options: one DLID, several candidate output ports (DESIGN §3).

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
  the *escape* option; the others are *adaptive* options.
- **When one is chosen** (``selectAt``): at ``lookup`` time, as the packet
  arrives (with the port status then), or at ``arbitration`` time: the
  packet waits at the head of its input VL as a candidate of every option's
  output port, and the first port that may send it asks the path selector
  which of the options that could take the packet *now* (link free, credits
  for it) to use; if the selector prefers another port that could take it
  now, the port leaves the packet to that port and pokes it.
- **How** (``pathSelector``): a path-selector plugin (:mod:`ibfabric.plugins.selectors`).
- **Escape space** (``escapeBufferSize`` of the *receiving* switch, Martínez
  §4.4): an adaptive option is usable only if the downstream VL has more
  free credits than the escape reserve ``C_E`` plus the packet, i.e. the
  packet fits in the adaptive part; the escape option only needs the packet
  to fit.

Switches without options keep their single-port fast path: the option
machinery lives in :class:`OptionSwitchTx` and in route entries that only
DLIDs with options have.
"""

from __future__ import annotations

from .lifetimes import expire, head_changed
from .packet import VL15
from .port import INF
from .switch import SwitchRx, SwitchTx

__all__ = ["EscapeRead", "Option", "OptionSet", "OptionSwitchTx", "SplitRx", "ZERO_VLS", "add_options", "offer",
           "refresh_escape", "withdraw"]

#: The SL-to-VL "table" of an option-set route entry: the real mapping is per option.
ZERO_VLS = [0] * 16


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
    """What ``OptionSet.cands[vl]`` returns: ``append(buf)`` makes the head of *buf* a candidate of every option."""

    __slots__ = ("owner",)

    def __init__(self, owner: "OptionSet"):
        self.owner = owner

    def append(self, buf) -> None:
        self.owner.register(buf)


class OptionSet:
    """The options of one DLID at one switch; stands in for the output port in a packet's route.

    The switch's receive path treats it like a transmitter (``cands[vl].append``,
    ``poke``), so it costs nothing to DLIDs without options.
    """

    nvl = 16  # never rejects a VL: each option maps the SL itself

    def __init__(self, node, options: list[Option]):
        self.node = node
        self.options = options
        self.selector = node.selector
        reg = _Register(self)
        self.cands = [reg] * 16

    def __repr__(self) -> str:
        return f"<OptionSet {[o.tx.port for o in self.options]}>"

    def register(self, buf) -> None:
        """The head of *buf* (an options packet) becomes a candidate of every option's port."""
        p = buf.q[0]
        sl = p.sl
        n = 0
        for o in self.options:
            vl = o.sl2vl[sl]
            if vl < o.tx.nvl:
                o.tx.cands[vl].append(buf)
                n += 1
        if not n:
            from ibfabric.errors import ConfigError

            raise ConfigError(f"{self.node.path}: SL {sl} maps to no data VL on any routing option of DLID {p.dlid}"
                              f" (ports {[o.tx.port for o in self.options]}); check the SL-to-VL tables")

    def unregister(self, buf, keep) -> None:
        """Take the head of *buf* out of every option's candidates but *keep*'s."""
        sl = buf.q[0].sl
        for o in self.options:
            tx = o.tx
            if tx is not keep:
                vl = o.sl2vl[sl]
                if vl < tx.nvl:
                    c = tx.cands[vl]
                    if buf in c:
                        c.remove(buf)

    def poke(self, t: float) -> None:
        """Poke the transmitter of every option: something may be sendable from *t* on."""
        for o in self.options:
            o.tx.poke(t)

    def eligible(self, p, now: float) -> list[tuple[Option, int, int]]:
        """``(option, vl, free credits)`` of each option that could take *p* at *now*: its link is
        free and it has the credits (beyond the escape reserve for an adaptive option)."""
        out = []
        sl = p.sl
        paths = p.paths
        for o in self.options:
            tx = o.tx
            vl = o.sl2vl[sl]
            if vl >= tx.nvl or tx.busy_until > now or not o.pmask & paths:
                continue
            free = tx._credits_at(vl, now)
            if o.adaptive:
                free -= tx.escape_reserve
            if free >= p.credits:
                out.append((o, vl, free))
        return out

    def choose_at_lookup(self, p, now: float) -> tuple[Option, int]:
        """Lookup-time choice: among the options with credits for *p* now (the escape option if none)."""
        sl = p.sl
        cands = []
        paths = p.paths
        for o in self.options:
            tx = o.tx
            vl = o.sl2vl[sl]
            if vl >= tx.nvl or not o.pmask & paths:
                continue
            free = tx._credits_at(vl, now) - (tx.escape_reserve if o.adaptive else 0)
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


class OptionSwitchTx(SwitchTx):
    """A switch output port that may be one of several options of the packets it sees.

    A candidate whose head packet's ``out_port`` is an :class:`OptionSet` is
    decided here (arbitration-time selection); a packet committed to this
    port through an adaptive option (lookup-time selection, ``p.opt > 0``)
    needs the escape reserve on top of its own credits.
    """

    def _send(self, buf, p, vl: int, now: float) -> float:
        p.opt = 0  # the option taken here means nothing at the next switch
        if buf.__class__ is EscapeRead:
            xend = send_escape(buf, p, now)
            end = now + p.size * self.byte_time
            if xend > end:
                end = xend
            self.launch(p, vl, now, end)
            return end
        end = super()._send(buf, p, vl, now)
        if buf.adaptive_cap:
            refresh_escape(buf)
        if self.node.lifetimes and buf.vl != VL15:
            head_changed(buf, now)
        return end

    def try_send(self, now: float):
        """As :meth:`SwitchTx.try_send <ibfabric.components.port.TxPort.try_send>`, discarding
        expired heads first when the switch has packet lifetimes (and looking again when the next expires).
        """
        if not self.node.lifetimes:
            return super().try_send(now)
        due = expire(self, now)
        end = super().try_send(now)
        if end is None and due < self.next_t:
            self.next_t = due  # look again when the next head expires
        return end

    def has_work(self) -> bool:
        return bool(self.mcands) or any(self.cands)

    def after_send(self, end: float) -> float:
        return end if self.has_work() else INF

    def sendable(self, now: float) -> bool:
        for buf in self.mcands:
            if max(buf.q[0].ready_at, buf.rx.xbar_free) <= now:
                return True
        for vl in range(self.nvl):
            for buf in self.cands[vl]:
                p = buf.q[0]
                if max(p.ready_at, buf.rx.xbar_free) > now:
                    continue
                op = p.out_port
                if op is self:
                    if p.credits + (self.escape_reserve if p.opt > 0 else 0) <= self._credits_at(vl, now):
                        return True
                else:
                    # an options packet: this port must look now unless another port that could take
                    # it is due to look by now (the selector may send it there)
                    elig = op.eligible(p, now)
                    if any(e[0].tx is self for e in elig) and not any(
                            e[0].tx is not self and e[0].tx.pending_wake() <= now for e in elig):
                        return True
        return False

    def _pick(self, vl: int, now: float):
        credits = self.credits[vl]
        nxt = INF
        need = 0
        for buf in self.cands[vl]:
            p = buf.q[0]
            t = p.ready_at
            xf = buf.rx.xbar_free
            if xf > t:
                t = xf
            if t > now:
                if t < nxt:
                    nxt = t
                continue
            op = p.out_port
            if op is self:
                c = p.credits + (self.escape_reserve if p.opt > 0 else 0)
                if c <= credits:
                    return buf, nxt
                if need == 0 or c < need:
                    need = c
                continue
            # an options packet: which of its options could take it now?
            elig = op.eligible(p, now)
            mine = [k for k, e in enumerate(elig) if e[0].tx is self]
            if not mine:
                # this port may take it once it has the credits, if it is one of the packet's options
                for o in op.options:
                    if o.tx is self and o.pmask & p.paths:
                        c = p.credits + (self.escape_reserve if o.adaptive else 0)
                        if need == 0 or c < need:
                            need = c
                        break
                continue
            k = op.selector.select(p, elig, now) if len(elig) > 1 else 0
            o, ovl, _ = elig[k]
            if o.tx is not self:
                # the selector prefers another port that could take the packet now: poke it, and look
                # again right after it (if it sent something else meanwhile, this port may take the packet)
                o.tx.poke(now)
                nxt = now
                continue
            op.unregister(buf, self)
            op.selector.chosen(o, ovl)
            p.paths &= o.pmask
            p.out_port = self
            p.out_vl = ovl
            p.opt = o.index
            return buf, nxt
        if need:
            t = self.credit_time(vl, need, now)
            if t < nxt:
                nxt = t
        return None, nxt


class SlidRoute:
    """The route entry of a DLID whose options the packet's SLID asks for (``optionsWhen = "slid"``,
    Kim et al.'s multipath): SLID LSB 0, the DLID's own entry; 1, the named paths' next hops."""

    __slots__ = ("single", "options", "arbitration")

    def __init__(self, single: tuple, options: OptionSet, arbitration: bool):
        self.single = single
        self.options = options
        self.arbitration = arbitration

    def route(self, p) -> tuple:
        if not p.slid & 1:
            return self.single
        if self.arbitration:
            return (-1, self.options, ZERO_VLS)
        from .switch import _OPTIONS

        return (_OPTIONS, None, self.options)


def _add_slid_options(node, routes: list, lft: list[int], per_port: list) -> None:
    """Kim's layout (:mod:`ibfabric.plugins.routing.multipath`): entry ``base + 2P + 1`` of each
    ``2^optionBits`` range is path ``P``'s next hop; a packet whose SLID's LSB is 1 may take any of
    them that continues a path it is still on (``Packet.paths``)."""
    from .switch import _BY_SLID

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
            routes[dlid] = (_BY_SLID, None, SlidRoute(routes[dlid], os_, arbitration))


def add_options(node, routes: list, lft: list[int], per_port: list) -> None:
    """Replace, in *routes* (one entry per DLID), the entries of DLIDs with LSB 1 whose
    ``2^optionBits``-LID range holds more than one port by option-set entries (with
    ``optionsWhen = "slid"``: :func:`_add_slid_options`)."""
    from .switch import _OPTIONS

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
        routes[dlid] = (-1, os_, ZERO_VLS) if node.select_at == "arbitration" else (_OPTIONS, None, os_)


# ------------------------------------------------------------ split VL buffers

class EscapeRead:
    """The second read point of a split VL buffer (Martínez et al. 2003 §4.4, Fig. 2): the packet
    :func:`refresh_escape` names, offered to its output port(s) like a buffer head."""

    __slots__ = ("buf", "rx", "q", "vl")

    def __init__(self, buf, p):
        self.buf = buf
        self.rx = buf.rx
        self.vl = buf.vl
        self.q = [p]

    def __repr__(self) -> str:
        return f"<EscapeRead {self.buf.name}>"


def _deterministic(p) -> bool:
    """Sent on the deterministic path (DLID least significant bit 0, Martínez §4.2): it must stay
    in order with the packets before it."""
    return not p.dlid & 1


def refresh_escape(buf) -> None:
    """Set *buf*'s second read point and register it with its port(s): the first deterministic
    packet (DLID LSB 0) behind the head, if one is stored before the escape part (in-order
    delivery: it goes first, and through its own read point); else the first packet of the escape
    part; none if the head is deterministic or the escape part is empty."""
    q = buf.q
    cap = buf.adaptive_cap
    new = None
    off = 0
    for i, p in enumerate(q):
        if i and off >= cap:
            new = p
            break
        if _deterministic(p):
            # the first deterministic packet goes before any packet of the escape part, and has a
            # read point of its own (Martínez §4.4's pointer) so it is not stuck behind adaptive ones
            new = p if i else None
            break
        off += p.credits
    old = buf.escape
    if old is not None and old.q[0] is new:
        return
    if old is not None:
        withdraw(old)
        buf.escape = None
    if new is not None:
        buf.escape = EscapeRead(buf, new)
        offer(buf.escape, new, buf.rx.xbar_free)


def withdraw(cand) -> None:
    """Take *cand* (an input buffer, or a read point) out of the candidates of its packet's port(s)."""
    p = cand.q[0]
    op = p.out_port
    if isinstance(op, OptionSet):
        op.unregister(cand, None)
    else:
        c = op.cands[p.out_vl]
        if cand in c:
            c.remove(cand)


def offer(cand, p, after: float) -> None:
    """Make *p*, read through *cand*, a candidate of its port(s) and have them look once it may
    cross (not before *after*).  :func:`~ibfabric.components.switch.cross` does the same inline
    for the heads it exposes, on the per-packet path."""
    op = p.out_port
    if p.out_vl == VL15:
        op.mcands.append(cand)
    else:
        op.cands[p.out_vl].append(cand)
    t = p.ready_at
    if after > t:
        t = after
    op.poke(t)


def send_escape(r: EscapeRead, p, now: float) -> float:
    """*p*, at the escape read point *r*, starts crossing the crossbar at *now*: like
    :func:`~ibfabric.components.switch.cross`, but out of the middle of the buffer."""
    from .port import return_credits

    buf = r.buf
    buf.escape = None
    buf.q.remove(p)
    rx = buf.rx
    cr = p.credits
    xend = now + p.size * rx.xbar_bt
    if p.tail_at > xend:
        xend = p.tail_at
    rx.xbar_free = xend
    buf.occ -= cr
    return_credits(rx.upstream, buf.vl, xend + rx.delay, cr)
    refresh_escape(buf)
    return xend


class SplitRx(SwitchRx):
    """The receiving side of a switch port with split VL buffers (``escapeBufferSize``) or a
    lifetime dropper (:mod:`ibfabric.components.lifetimes`)."""

    __slots__ = ()

    def receive(self, p, now: float) -> None:
        super().receive(p, now)
        if p.vl != VL15:
            buf = self.bufs[p.vl]
            q = buf.q
            if q and q[-1] is p:
                if len(q) == 1:
                    if self.node.lifetimes:
                        head_changed(buf, now)
                elif buf.escape is None and buf.adaptive_cap:
                    refresh_escape(buf)
