"""The base class of multicast replication engines: what every engine shares.

A third-party engine subclasses :class:`ReplicationEngine` (imported as
``from ibfabric.plugins.replication import ReplicationEngine``) and is
registered through ``ibfabric_register_replication_engines``; the engine API
(``attach``, ``register``, ``unregister``, ``serve``, ``sendable``, ``held``,
``port_left``, ``flush``, ``waits``, ``nodes``) is described in
``docs/plugins.md``.
"""

from __future__ import annotations

from ibfabric.components.portstate import PORT_DOWN
from ibfabric.components.switch.multicast import clone
from ibfabric.errors import ConfigError

__all__ = ["ReplicationEngine"]


class ReplicationEngine:
    """Base class: options checked against :attr:`options`, per-switch state made in :meth:`attach`."""

    name = ""
    #: option name -> default (strings, as ``replicationOptions`` gives them)
    options: dict[str, str] = {}
    #: True: switches never replicate; the source HCA sends a unicast copy per member
    source_copies = False

    def __init__(self, options: dict[str, str] | None = None, rng=None):
        options = dict(options or {})
        bad = sorted(set(options) - set(self.options))
        if bad:
            valid = ", ".join(sorted(self.options)) or "none"
            raise ConfigError(f"replication engine '{self.name}' has no option '{bad[0]}' (valid: {valid})")
        self.opts = {**self.options, **options}
        self.rng = rng

    def attach(self, switch) -> None:
        """Attach the engine to *switch*, once, when the switch gets multicast entries, and
        set up its per-switch state (``heads``: input buffer -> its multicast Head).
        """
        self.switch = switch
        self.stats = switch.sim.stats
        self.heads: dict = {}  # input buffer -> its multicast Head, while in the input VL

    def register(self, h) -> None:
        """Offer the new head *h* to each of its output ports, which look once it may cross."""
        self.heads[h.buf] = h
        t = h.ready_at()
        for tx in h.outs:
            tx.mq.append(h)
            tx.poke(t)

    def unregister(self, h) -> None:
        """Head *h*, still at its read point, leaves without its copies (dropped, or lost with its link):
        no output port waits for it any more."""
        self.heads.pop(h.buf, None)
        for tx in h.outs:
            if h in tx.mq:
                tx.mq.remove(h)
        h.outs = []

    def held(self) -> int:
        """Packets the engine keeps outside the input VLs (for the conservation counts): none here."""
        return 0

    def port_left(self, tx, now: float) -> None:
        """Port *tx* left the Active state: the copies still owed to it are dropped (``port-down``); a
        packet that owed no other copy is dropped itself."""
        sim = self.switch.sim
        for h in list(tx.mq):
            if tx not in h.outs:
                continue
            h.outs.remove(tx)
            tx.mq.remove(h)
            if h.outs:
                self.stats.copies += 1  # a copy made and dropped
                sim.drop(h.p, PORT_DOWN, self.switch)
            else:
                self.gone(h, now, PORT_DOWN)

    def gone(self, h, now: float, reason: str) -> None:
        """Head *h* has no copy left to make: drop its packet where it waits."""
        if h.where is None:
            self.heads.pop(h.buf, None)
            h.buf.discard(now, reason)
        else:
            self.switch.sim.drop(h.p, reason, self.switch)

    def flush(self, now: float, reason: str) -> int:
        """The switch failed: drop the packets the engine holds outside the input VLs; return how many."""
        return 0

    def nodes(self, now: float, starved):
        """The engine's own buffers that wait, for the deadlock watchdog: ``(key, description, keys
        waited for, needs_all)`` each; none here.  *starved* ``(tx, vl, need)`` gives the
        downstream buffer port *tx* lacks credits from, or None.
        """
        return ()

    def copy_out(self, tx, p, vl: int, now: float, xend: float, last: bool) -> float:
        """A copy of *p* (the packet itself if it is the *last* copy) crosses into port *tx* on VL *vl*,
        its data there by *xend*: onto the link, or into the output VL buffer; returns when the port's
        crossbar output is free again (``tx.accept``)."""
        if last:
            c = p
        else:
            c = clone(p)
            self.stats.copies += 1
        return tx.accept(c, vl, now, xend)

    @staticmethod
    def any_starved(h, outs, now: float, starved) -> list | None:
        """The downstream buffers of *outs* if every one of them is credit-starved for *h*, else None."""
        waits = []
        for o in outs:
            k = starved(o, h.vl[o], h.p.credits)
            if k is None:
                return None
            waits.append(k)
        return waits
