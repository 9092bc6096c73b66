"""The traffic sources of an HCA: open-loop pattern traffic, and merging a port's sources.

Traffic sources are lazy: a source knows the time of its next message and
the HCA's transmitter creates every message due by the time it wakes, so a
source costs no events of its own.  A source stops creating messages while
its send queue holds ``BACKLOG`` packets (the rest wait as draws, their
creation times known): an overloaded fabric keeps O(BACKLOG x SLs) packets
per HCA at the sources however long it runs.  With several SLs, the source
is one :class:`SLSource` per SL (a :class:`SplitSource`), each replaying the
HCA's stream of draws and keeping the messages of its SL.

A port with several sources (Kim et al.'s MPEG-2 streams and control packets,
:mod:`~ibfabric.components.hca.realtime`, or QoS connections,
:mod:`~ibfabric.components.qos.cbr`, beside pattern traffic) has them in one
:class:`MergedSource`.
"""

from __future__ import annotations

import copy
from array import array
from functools import lru_cache
from typing import TYPE_CHECKING

import numpy as np

from ibfabric.errors import ConfigError

from ..packet import Packet
from ..port import INF

if TYPE_CHECKING:  # pragma: no cover
    from . import HCA
    from .tx import HcaTx

__all__ = ["TrafficSource", "SLSource", "SplitSource", "MergedSource", "pending_of"]

#: Packets a traffic source keeps in the send queue of each of its SLs (see TrafficSource.materialize).
BACKLOG = 32
_BATCH = 512


def _floats(a: np.ndarray) -> array:
    """A batch of draws as a compact ``array('d')`` (8 bytes an entry, where a list of floats takes 32;
    indexing it gives plain Python floats, as cheap per message as a list)."""
    return array("d", np.ascontiguousarray(a, dtype=np.float64).tobytes())


def _ints(a: np.ndarray, code: str = "i") -> array:
    """A batch of integer draws as a compact ``array(code)`` (4 bytes an entry for host indices and
    1 for SLs, where a list takes 8 to 36); the values are checked to fit."""
    a = np.asarray(a)
    info = np.iinfo(np.dtype(code))
    if a.size and (a.min() < info.min or a.max() > info.max):
        code = "q"
    return array(code, np.ascontiguousarray(a, dtype=np.dtype(code)).tobytes())


@lru_cache(maxsize=None)
def _same_sl(sl: int) -> tuple[int, ...]:
    """A batch of SL draws that are all *sl*, one tuple shared by every source of one SL."""
    return (sl,) * _BATCH


class TrafficSource:
    """Generates the messages of one HCA.

    Inter-arrival times are exponential (``arrival='poisson'``) or constant,
    with mean ``message wire bytes / (load * port data rate)``; destinations
    come from the traffic pattern and SLs uniformly from ``sls``.  Draws are
    made in batches from the HCA's own generator.

    The HCA uses this class when it sends on one SL.  With several SLs this
    class creates every message on time (``lazy`` is False: a later message
    may have priority); the HCA uses a :class:`SplitSource` instead, which
    creates the same messages lazily.

    What the HCA's transmitter uses: ``next_time`` (the next message not
    created yet; due in the past only while held back by ``BACKLOG``),
    :meth:`materialize`, :meth:`next_after`, and for the measurements
    :meth:`pending` and :meth:`pending_estimate`.
    """

    def __init__(self, hca: "HCA", tx: HcaTx, pattern, src: int, dlids: list[int], rng: np.random.Generator):
        self.hca = hca
        self.tx = tx
        self.pattern = pattern
        self.src = src
        #: the DLID of each destination index, a list of ints: the one list every source shares
        #: (:meth:`Simulation.dlids_from <ibfabric.simulation.Simulation.dlids_from>`) unless the
        #: routing picks DLIDs per source.  Never modified here.
        self.dlids = dlids
        self.rng = rng
        #: fractions of messages sent adaptively (the DLID's or the SLID's LSB set; Martínez et al. 2003
        #: §4.2, Kim et al. 2007 §3.4) and on a path chosen here (Kim's reliable datagrams)
        self.adaptive = hca.adaptive
        self.random_path = hca.random_path
        self.by_slid = hca.adaptive_by == "slid"
        if self.adaptive or self.random_path:
            sim = hca.sim
            # derived from the shared list, shared too (read-only)
            self.adaptive_dlids = self.dlids if self.by_slid else sim.adaptive_dlids(self.dlids)
            self.path_counts = sim.path_counts(self.dlids)
            if self.by_slid and self.adaptive and hca.lmc < 1:
                raise ConfigError(f"{hca.path}: adaptive messages marked by the SLID need the HCA's LMC >= 1")
            # its own stream, so that the traffic itself does not change with the fractions
            self.adaptive_rng = np.random.default_rng([int(sim.seed), src, 0xADA])
        self.sim = hca.sim
        self.stats = hca.sim.stats
        self.slid = hca.lid
        self.sls = hca.source_sls
        #: the SL of the path to each destination (dfsssp, lash), or None: the traffic's own SLs
        self.path_sls = hca.path_sls
        payload = hca.message_payload
        mtu = hca.mtu
        header = hca.header_size
        sizes = [mtu + header] * (payload // mtu)
        if payload % mtu or payload == 0:
            sizes.append(payload % mtu + header)
        self.packet_sizes = sizes
        self.wire_bytes = sum(sizes)
        rate = tx.link.rate / 8e9  # bytes per ns
        self.mean_gap = self.wire_bytes / (hca.load * rate)
        self.poisson = hca.arrival == "poisson"
        self.next_time = hca.traffic_start
        # the current batch of draws, as compact arrays of the array module: indexing them gives
        # Python numbers (indexing numpy arrays per message is slow) and they take 8 bytes an entry
        # (lists of Python numbers take 32-36): O(hosts x batch) memory in all, with a small constant
        self._gaps = array("d")
        self._dsts = array("i")
        self._sl: array | tuple[int, ...] = ()
        self._i = 0
        self.messages = 0
        self.lazy = len(self.sls) == 1
        self._advance()

    def _refill(self) -> None:
        rng = self.rng
        if self.poisson:
            self._gaps = _floats(rng.exponential(self.mean_gap, _BATCH))
        else:
            self._gaps = array("d", (self.mean_gap,)) * _BATCH
        dsts = np.asarray(self.pattern.destinations(self.src, rng, _BATCH))
        self._dsts = _ints(dsts)
        if self.path_sls is not None:
            self._sl = _ints(np.where(dsts >= 0, self.path_sls[dsts], self.sls[0]), "b")
        elif len(self.sls) == 1:
            self._sl = _same_sl(self.sls[0])
        else:
            self._sl = _ints(np.asarray(self.sls)[rng.integers(0, len(self.sls), _BATCH)], "b")
        self._i = 0

    def _advance(self) -> None:
        """Draw the gap to the next message (the first gap is drawn too: arrivals start at a random phase)."""
        if self._i >= len(self._gaps):
            self._refill()
        i = self._i
        self.next_time += self._gaps[i]
        self._cur_dst = self._dsts[i]
        self._cur_sl = self._sl[i]
        self._i = i + 1

    def materialize(self, now: float) -> None:
        """Create the messages due by *now* and queue their packets.

        A lazy source stops once ``BACKLOG`` packets wait in the send
        queues: the rest stay unmaterialised, with their creation times
        known, until the queue drains.  That changes nothing (they could
        only queue behind the others), but keeps an overloaded source from
        building packets the run will never send.  A source of several SLs
        is not lazy: every message is created on time, since a later one
        may have priority (:class:`SplitSource` is the lazy equivalent).
        """
        stop = self.sim.traffic_stop
        tx = self.tx
        limit = BACKLOG if self.lazy else 1 << 62
        while self.next_time <= now and tx.queued < limit:
            t = self.next_time
            if t > stop:
                self.next_time = INF
                return
            dst = self._cur_dst
            if dst >= 0:
                self._emit(t, dst, self._cur_sl)
            self._advance()

    def next_after(self, now: float) -> float:
        """The next message due after *now* of an SL that is not held back (called when
        ``next_time <= now``, after :meth:`materialize`: the source is held back)."""
        return INF

    def pending(self, now: float) -> tuple[int, int]:
        """``(packets, wire bytes created in the measurement window)`` of the
        messages due by *now* that are not materialised yet; the source's
        state is left as it was."""
        if self.next_time > now:
            return 0, 0
        saved = (self.next_time, self._i, self._gaps, self._dsts, self._sl, self._cur_dst, self._cur_sl,
                 self.rng.bit_generator.state)
        packets = nbytes = 0
        window = self.stats.window
        stop = self.sim.traffic_stop
        per = len(self.packet_sizes)
        while self.next_time <= now and self.next_time <= stop:
            if self._cur_dst >= 0:
                packets += per
                if self.next_time >= window:
                    nbytes += self.wire_bytes
            self._advance()
        self.next_time, self._i, self._gaps, self._dsts, self._sl, self._cur_dst, self._cur_sl, state = saved
        self.rng.bit_generator.state = state
        return packets, nbytes

    def pending_estimate(self, now: float) -> float:
        """The expected number of packets :meth:`pending` would count, in O(1): messages
        arrive every ``mean_gap`` on average after the next one, due at ``next_time``."""
        end = min(now, self.sim.traffic_stop)
        if self.next_time > end:
            return 0.0
        return (1.0 + (end - self.next_time) / self.mean_gap) * len(self.packet_sizes)

    def _emit(self, t: float, dst: int, sl: int) -> None:
        dlid = self.dlids[dst]
        slid = self.slid
        if self.adaptive or self.random_path:
            u = self.adaptive_rng.random()
            if u < self.adaptive:
                if self.by_slid:
                    slid |= 1
                else:
                    dlid = self.adaptive_dlids[dst]
            elif u < self.adaptive + self.random_path and self.path_counts[dst]:
                dlid += 2 * int(self.adaptive_rng.integers(self.path_counts[dst])) + 1
        msg = self.sim.next_message_id()
        self.messages += 1
        sizes = self.packet_sizes
        n = len(sizes)
        q = self.tx.sendq[sl]
        src = self.src
        for k in range(n):
            size = sizes[k]
            # positional: (slid, dlid, sl, size, credits, src, dst, created, vl, lnh, flow, msg, seq, last)
            q.append(Packet(slid, dlid, sl, size, (size + 63) >> 6, src, dst, t, 0, 2, 0, msg, k, k == n - 1))
        self.tx.queued += n
        self.stats.add_generated(n, self.wire_bytes, t)


class SLSource(TrafficSource):
    """The messages of one SL of a multi-SL :class:`TrafficSource`, created lazily.

    It draws the whole source's stream (gaps, destinations and SLs, in the
    same batches and order as :class:`TrafficSource`) from its own copy of
    the HCA's generator and keeps the messages whose SL is ``sl``: the
    :class:`SLSource` of every SL of a :class:`SplitSource` together create
    exactly the messages (times, destinations, SLs) that one
    :class:`TrafficSource` would, whatever the arrival process.

    It stops creating messages while the send queue of its SL holds
    :attr:`limit` packets: ``BACKLOG``, or more when the VL buffer can take
    more than that in one step of the transmitter.  So the send queue of a
    source held back never runs dry before the transmitter looks again
    (which creates more), and the packets that move into the VL buffers,
    whose order between SLs sharing a VL matters, are those that creating
    every message on time would move.
    """

    def __init__(self, hca: "HCA", tx: HcaTx, pattern, src: int, dlids: list[int], rng: np.random.Generator,
                 sl: int):
        self.sl = sl
        self._t = hca.traffic_start  # time of the last message drawn, of any SL
        self._sl_values = np.asarray(hca.traffic_sls)
        self._times = array("d")
        super().__init__(hca, tx, pattern, src, dlids, rng)
        self.lazy = True
        self._cur_sl = sl
        share = hca.traffic_sls.count(sl) / len(hca.traffic_sls)
        self.mean_gap_sl = self.mean_gap / share
        # a transmitter step moves at most a VL buffer plus the packet it sends into the VL buffer
        n = len(self.packet_sizes)
        self.limit = max(BACKLOG, n * ((hca.vl_buffer + max(self.packet_sizes)) // self.wire_bytes + 1))

    def _draw(self) -> tuple[np.ndarray, np.ndarray]:
        """The times and destinations of this SL's messages in the source's next batch that has any."""
        rng = self.rng
        k = len(self._sl_values)
        while True:
            if self.poisson:
                gaps = rng.exponential(self.mean_gap, _BATCH)
            else:
                gaps = np.full(_BATCH, self.mean_gap)
            dsts = np.asarray(self.pattern.destinations(self.src, rng, _BATCH))
            mine = self._sl_values[rng.integers(0, k, _BATCH)] == self.sl
            # sequential sums, as TrafficSource adds the gaps one by one
            times = np.add.accumulate(np.concatenate(((self._t,), gaps)))[1:]
            self._t = float(times[-1])
            if mine.any():
                return times[mine], dsts[mine]

    def _refill(self) -> None:
        times, dsts = self._draw()
        self._times = _floats(times)
        self._dsts = _ints(dsts)
        self._i = 0

    def _advance(self) -> None:
        if self._i >= len(self._times):
            self._refill()
        i = self._i
        self.next_time = self._times[i]
        self._cur_dst = self._dsts[i]
        self._i = i + 1

    def materialize(self, now: float) -> None:
        """Create this SL's messages due by *now* while its send queue holds fewer than :attr:`limit` packets."""
        stop = self.sim.traffic_stop
        q = self.tx.sendq[self.sl]
        limit = self.limit if self.lazy else 1 << 62
        sl = self.sl
        while self.next_time <= now and len(q) < limit:
            t = self.next_time
            if t > stop:
                self.next_time = INF
                return
            dst = self._cur_dst
            if dst >= 0:
                self._emit(t, dst, sl)
            self._advance()

    def pending(self, now: float) -> tuple[int, int]:
        """As :meth:`TrafficSource.pending`, counting a batch of draws at a time."""
        end = min(now, self.sim.traffic_stop)
        if self.next_time > end:
            return 0, 0
        saved = (self._t, self.rng.bit_generator.state)
        window = self.stats.window
        per = len(self.packet_sizes)
        times = np.asarray(self._times[self._i - 1:])  # the next message and the rest of the batch
        dsts = np.asarray(self._dsts[self._i - 1:])
        packets = nbytes = 0
        while True:
            due = int(np.searchsorted(times, end, side="right"))  # times never decrease
            sent = dsts[:due] >= 0
            packets += per * int(sent.sum())
            nbytes += self.wire_bytes * int((sent & (times[:due] >= window)).sum())
            if due < len(times):
                break
            times, dsts = self._draw()
        self._t, state = saved
        self.rng.bit_generator.state = state
        return packets, nbytes

    def pending_estimate(self, now: float) -> float:
        """The expected number of packets :meth:`pending` would count, in O(1) (as
        :meth:`TrafficSource.pending_estimate`, at this SL's mean gap).
        """
        end = min(now, self.sim.traffic_stop)
        if self.next_time > end:
            return 0.0
        return (1.0 + (end - self.next_time) / self.mean_gap_sl) * len(self.packet_sizes)


class SplitSource:
    """The lazy traffic source of an HCA that sends on several SLs: one :class:`SLSource` per SL.

    It creates the messages a :class:`TrafficSource` of the same SLs would
    create on time (same times, destinations and SLs, for Poisson and
    constant arrivals alike; message ids follow the order of creation,
    which differs), but each SL's stops while that SL's send queue is full,
    so an overloaded HCA holds O(BACKLOG x SLs) packets at its source
    however long it runs.  Each SL's source replays the whole stream of
    draws, so drawing costs SLs times more (vectorised, in batches).

    ``next_time`` is the earliest of the SL sources'.  One due in the past
    is held back with its SL's send queue full, hence that SL's VL buffer
    not empty; :meth:`next_after` gives the earliest of the others, which
    the transmitter must not sleep past when one of its VLs is empty.
    """

    def __init__(self, hca: "HCA", tx: HcaTx, pattern, src: int, dlids: list[int], rng: np.random.Generator):
        sls = hca.traffic_sls
        self.parts = [SLSource(hca, tx, pattern, src, dlids, copy.deepcopy(rng), sl)
                      for sl in sorted(set(sls), key=sls.index)]
        self.sls = sls
        self.tx = tx
        self._lazy = True
        self.next_time = min(p.next_time for p in self.parts)

    @property
    def lazy(self) -> bool:
        """False: every message is created on time (each SL's source, set together)."""
        return self._lazy

    @lazy.setter
    def lazy(self, value: bool) -> None:
        self._lazy = bool(value)
        for p in self.parts:
            p.lazy = self._lazy

    @property
    def messages(self) -> int:
        """Messages created so far."""
        return sum(p.messages for p in self.parts)

    def materialize(self, now: float) -> None:
        """Materialise each SL's source whose next message is due by *now*; ``next_time``
        becomes the earliest of theirs.
        """
        t = INF
        for p in self.parts:
            if p.next_time <= now:
                p.materialize(now)
            if p.next_time < t:
                t = p.next_time
        self.next_time = t

    def next_after(self, now: float) -> float:
        """The earliest next message, due after *now*, of the SLs' sources."""
        t = INF
        for p in self.parts:
            if now < p.next_time < t:
                t = p.next_time
        return t

    def pending(self, now: float) -> tuple[int, int]:
        """The summed :meth:`TrafficSource.pending` of the SLs' sources."""
        return pending_of(self.parts, now)

    def pending_estimate(self, now: float) -> float:
        """The summed :meth:`TrafficSource.pending_estimate` of the SLs' sources."""
        return sum(p.pending_estimate(now) for p in self.parts)


def pending_of(sources, now: float) -> tuple[int, int]:
    """The summed :meth:`TrafficSource.pending` of several sources."""
    packets = nbytes = 0
    for src in sources:
        a, b = src.pending(now)
        packets += a
        nbytes += b
    return packets, nbytes


class MergedSource:
    """Two or more traffic sources on one HCA port (pattern traffic with real-time streams or CBR connections).

    Each source keeps its own laziness: CBR sources create every packet on
    time, a pattern source may be held back by a full send queue (its
    ``next_time`` then lies in the past).  :meth:`next_after` gives the HCA
    the next message of the sources that are not held back, so a held-back
    pattern source hides no connection's packet, and an overloaded pattern
    source merged with connections keeps its send queue bounded.
    """

    def __init__(self, *sources):
        self.sources = list(sources)

    @property
    def next_time(self) -> float:
        """The earliest ``next_time`` of the merged sources."""
        return min(s.next_time for s in self.sources)

    def next_after(self, now: float) -> float:
        """The next message due after *now* of a source that is not held back."""
        t = INF
        for s in self.sources:
            u = s.next_time if s.next_time > now else s.next_after(now)
            if u < t:
                t = u
        return t

    def materialize(self, now: float) -> None:
        """Materialise each source whose next message is due by *now*."""
        for s in self.sources:
            if s.next_time <= now:
                s.materialize(now)

    def pending(self, now: float) -> tuple[int, int]:
        """The summed :meth:`TrafficSource.pending` of the sources."""
        return pending_of(self.sources, now)

    def pending_estimate(self, now: float) -> float:
        """The summed :meth:`TrafficSource.pending_estimate` of the sources."""
        return sum(s.pending_estimate(now) for s in self.sources)
