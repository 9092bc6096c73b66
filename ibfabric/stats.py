"""Run-wide packet accounting: generated, injected, delivered and dropped packets.

Deliveries are kept per packet in compact typed arrays (``array.array``,
8 bytes or less per field, about 60 bytes a packet), not as lists of
Python objects, and turned into numpy arrays when results are computed.
A delivered packet is held as it is until 1,024 of them are (or anything
reads the log), and then their fields go to the arrays together: a few C
calls per field for the batch, where a typed append per packet and field
took a twentieth of a small run.

Memory stays bounded on long runs: once ``log_limit`` deliveries are logged,
those already complete are *folded* into streaming statistics
(:class:`~ibfabric.measure.WindowStats`: exact counts, bytes, means, minima
and maxima per destination, SL and class; latency quantiles from
logarithmic bins within 0.5 % relative error) and dropped from the log.
``log_limit=None`` keeps every delivery (``Simulation(log_limit=None)``).
Other per-packet analyses fold along: each of :attr:`PacketStats.fold_hooks`
is called with the log and the time before a fold (a QoS run folds its
per-connection delay and jitter sums this way).
"""

from __future__ import annotations

from array import array
from collections import Counter
from operator import attrgetter

import numpy as np

__all__ = ["PacketStats", "DEFAULT_LOG_LIMIT"]

#: Deliveries logged per packet before the complete ones are folded (about 60 MB of log).
DEFAULT_LOG_LIMIT = 1 << 20
_FIELDS = ("created", "injected_at", "delivered_at", "size", "sl", "src", "dst", "hops", "flow", "msg", "last", "cls")
#: each log field and the packet attribute it comes from
_SOURCES = tuple((name, attrgetter({"injected_at": "injected", "delivered_at": "tail_at"}.get(name, name)))
                 for name in _FIELDS)
#: deliveries held as packets before their fields go to the arrays
_BATCH = 1024


class PacketStats:
    """Counters and the delivery log of one simulation.

    ``window`` is the start of the measurement window (the warm-up time):
    offered bytes count messages created at or after it.  What was delivered
    in the window is found from the delivery log (:mod:`ibfabric.measure`).
    """

    def __init__(self, window: float = 0.0, log_limit: int | None = DEFAULT_LOG_LIMIT):
        if log_limit is not None and (isinstance(log_limit, bool) or not isinstance(log_limit, int) or log_limit < 1):
            from ibfabric.errors import ConfigError

            raise ConfigError(f"log_limit must be a positive integer or None (got {log_limit!r})")
        self.window = window
        self.log_limit = log_limit
        self._fold_at = log_limit if log_limit is not None else 1 << 62
        self.folded = None  # WindowStats of the deliveries folded out of the log
        self.folded_delivered = 0  # how many (all complete at the time they were folded)
        self.clock = lambda: 0.0  # the simulation's clock (set by Simulation)
        self.fold_hooks: list = []  # hook(log, now): sees the log before its complete deliveries go
        self.hosts = 0  # traffic endpoints (set by Simulation)
        self.generated = 0
        self.offered_bytes = 0  # bytes of messages created in the window
        self.offered_packets = 0  # their packets
        self.injected = 0
        #: packets made by multicast replication: each copy that leaves a switch while the packet stays
        #: behind (see :mod:`ibfabric.components.multicast`); conservation counts them as injected
        self.copies = 0
        self.dropped: Counter[str] = Counter()
        self.local: list[float] = []  # tail times of packets consumed by switches
        self.created = array("d")
        self.injected_at = array("d")
        self.delivered_at = array("d")
        self.size = array("l")
        self.sl = array("b")
        self.src = array("l")
        self.dst = array("l")
        self.hops = array("l")
        self.flow = array("l")
        self.msg = array("l")
        self.last = array("b")
        self.cls = array("b")
        self._held: list = []  # delivered packets whose fields are not in the arrays yet
        self._rearm()  # sets _flush_at: the held packets that make a flush

    def add_generated(self, n: int, nbytes: int, t: float) -> None:
        """Count *n* packets of *nbytes* wire bytes in all, created at *t*.

        They are offered load (``offered_packets``, ``offered_bytes``) when
        *t* is in the window (at or after ``window``).
        """
        self.generated += n
        if t >= self.window:
            self.offered_bytes += nbytes
            self.offered_packets += n

    def add_delivery(self, p, t: float) -> None:
        """Log packet *p*, its last bit at its destination at *t*.

        The packet is held (its ``tail_at`` set to *t*) until :data:`_BATCH` of them are, then its
        fields go to the arrays at once (:meth:`_flush`: a few C calls per field for the whole batch
        rather than one typed append per packet and field).  Once the log holds ``log_limit``
        deliveries more than after the last fold, :meth:`fold` runs.
        """
        p.tail_at = t
        held = self._held
        held.append(p)
        if len(held) >= self._flush_at:
            self._flush()

    def _flush(self) -> None:
        """Move the held deliveries into the arrays (every reader of the log calls this first)."""
        held = self._held
        if not held:
            return
        n = len(held)
        for name, attr in _SOURCES:
            a = getattr(self, name)
            a.frombytes(np.fromiter(map(attr, held), dtype=a.typecode, count=n).tobytes())
        held.clear()
        if len(self.created) >= self._fold_at:
            self.fold()
        self._rearm()

    def _rearm(self) -> None:
        # hold at most _BATCH packets, and never past the delivery that makes a fold: a fold comes at
        # the same delivery, and sees the same log, as when every delivery went to the arrays at once
        self._flush_at = max(1, min(_BATCH, self._fold_at - len(self.created)))

    def keep_log(self) -> None:
        """Keep every delivery in the log from now on (what per-packet analyses need)."""
        self.log_limit = None
        self._fold_at = 1 << 62
        self._rearm()

    def fold(self) -> None:
        """Fold the complete deliveries of the log (last bit arrived by now) into :attr:`folded`."""
        self._flush()
        from ibfabric.measure import WindowStats

        now = self.clock()
        log = self.arrays()
        for hook in self.fold_hooks:
            hook(log, now)
        d = log["delivered_at"]
        done = d <= now
        ws = WindowStats.of(log, done & (d >= self.window), self.hosts).fold()
        self.folded = ws if self.folded is None else self.folded.merge(ws)
        self.folded_delivered += int(done.sum())
        keep = ~done
        for name in _FIELDS:
            a = getattr(self, name)
            setattr(self, name, array(a.typecode, log[name][keep].astype(a.typecode if name != "last" else "b")))
        # packets still on their last wire stay; never fold more often than every log_limit deliveries
        self._fold_at = len(self.created) + (self.log_limit or 0)
        self._rearm()

    def delivered(self, now: float) -> int:
        """Packets whose last bit reached their destination by *now*."""
        self._flush()
        d = np.frombuffer(self.delivered_at, dtype="d") if len(self.delivered_at) else np.zeros(0)
        return int((d <= now).sum()) + self.folded_delivered + sum(1 for t in self.local if t <= now)

    def lose_deliveries(self, now: float, dst: int) -> int:
        """Take out of the log the deliveries to host *dst* whose last bit arrives after *now* (their
        link failed under them, :mod:`ibfabric.components.failures`); return how many."""
        self._flush()
        d = np.array(self.delivered_at, dtype="d")  # copies: the arrays are resized below
        late = np.flatnonzero(d > now)
        if not len(late):
            return 0
        gone = late[np.array(self.dst, dtype=np.int64)[late] == dst]
        for i in gone[::-1].tolist():
            for name in _FIELDS:
                del getattr(self, name)[i]
        self._rearm()
        return len(gone)

    def arrays(self) -> dict[str, np.ndarray]:
        """The delivery log as numpy arrays (one entry per delivered packet, in delivery order):
        every delivery, unless a long run folded some (:attr:`folded_delivered` > 0)."""
        self._flush()
        out = {}
        for name in _FIELDS:
            a = getattr(self, name)
            out[name] = np.frombuffer(a, dtype=a.typecode).copy() if len(a) else np.zeros(0, dtype=a.typecode)
        out["last"] = out["last"].astype(bool)
        return out

    def on_wire_to_hosts(self, now: float) -> int:
        """Packets on their last wire at *now*: logged (to a host, or consumed by a switch) but their
        last bit arriving after *now* (part of :meth:`Simulation.packets_in_network
        <ibfabric.simulation.Simulation.packets_in_network>`)."""
        self._flush()
        d = np.frombuffer(self.delivered_at, dtype="d") if len(self.delivered_at) else np.zeros(0)
        return int((d > now).sum()) + sum(1 for t in self.local if t > now)
