"""The host channel adapter (HCA).

Send side (Kim et al. 2007 §2.3, Fig. 2): messages wait in per-SL send
queues; the HCA serves the queues in SL priority order (``slPriority``) and
moves their packets (DMA) into the VL buffers of its port (``sl2vl``); the
port's VL arbiter then picks which VL sends next, subject to the credits of
the switch's input buffers.  Messages larger than the MTU are segmented into
MTU-sized packets, each carrying ``headerSize`` bytes of headers.  VL15
(management) packets skip the queues, arbitration and flow control.

Receive side: packets are consumed at their tail (the HCA's receive buffers
drain at line rate), their credits return one wire delay later, and their
latency is recorded.  A packet whose DLID is not one of the port's LIDs is
counted as dropped ("misrouted").

Traffic sources are lazy: a source knows the time of its next message and
the HCA's transmitter creates every message due by the time it wakes, so a
source costs no events of its own.  A source stops creating messages while
its send queue holds ``BACKLOG`` packets (the rest wait as draws, their
creation times known): an overloaded fabric keeps O(BACKLOG x SLs) packets
per HCA at the sources however long it runs.  With several SLs, the source
is one :class:`SLSource` per SL (a :class:`SplitSource`), each replaying the
HCA's stream of draws and keeping the messages of its SL.
"""

from __future__ import annotations

import copy
from array import array
from collections import deque
from functools import lru_cache

import numpy as np

from ibfabric.errors import ConfigError

from ..node import STAGE_LOCAL, STAGE_TRAFFIC, STAGE_WIRE, IBNode
from ..packet import CREDIT_BYTES, VL15, Packet
from ..port import INF, SEVERAL, TxPort, return_credits
from ..portstate import PortState

__all__ = ["HCA", "HcaRx", "HcaTx", "TrafficSource", "SLSource", "SplitSource", "MTUS"]

#: IBA path MTUs (payload bytes).
MTUS = (256, 512, 1024, 2048, 4096)
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


#: the send queue of an SL that nothing was queued on yet (see HcaTx.sendq)
_NO_QUEUE = ()


@lru_cache(maxsize=None)
def _same_sl(sl: int) -> tuple[int, ...]:
    """A batch of SL draws that are all *sl*, one tuple shared by every source of one SL."""
    return (sl,) * _BATCH


class VLSendBuffer:
    """One VL buffer of an HCA port (bytes)."""

    __slots__ = ("q", "vl", "bytes", "capacity")

    def __init__(self, vl: int, capacity: int):
        self.q: deque[Packet] = deque()
        self.vl = vl
        self.bytes = 0
        self.capacity = capacity


class HcaRx:
    """Receiving side of one HCA port."""

    __slots__ = ("node", "port", "upstream", "delay", "lid_lo", "lid_hi", "sim", "nvl", "capacity")

    def __init__(self, node: "HCA", port: int, nvl: int, capacity: int, delay: float):
        self.node = node
        self.sim = node.sim
        self.port = port
        self.nvl = nvl
        self.capacity = capacity
        self.upstream: TxPort | None = None
        self.delay = delay
        self.lid_lo = 0
        self.lid_hi = 0

    def capacities(self) -> list[int]:
        """Receive buffer size of each data VL, in credits."""
        return [self.capacity] * self.nvl

    def held(self, vl: int) -> int:
        """Credits held in the receive buffer of *vl*: always 0 (packets are consumed at
        their tail; the space returns as credits).
        """
        return 0  # consumed at the tail; space is in flight back as credits

    def receive(self, p: Packet, now: float) -> None:
        """Take in packet *p*, whose head arrives at *now*, at its tail.

        Data packets return their credits; an SMP goes to the HCA's management
        agent; a packet for one of the HCA's LIDs is delivered, a multicast copy
        is handed to the multicast layer, anything else is dropped as
        ``misrouted``.
        """
        t = p.tail_at
        if p.vl != VL15:
            return_credits(self.upstream, p.vl, t + self.delay, p.credits)
        elif self.node.sma is not None and getattr(p, "smp", None) is not None:  # an SMP: its agent (components/sm)
            self.node.sma.receive(p, self.port, t)
            return
        if not self.lid_lo <= p.dlid < self.lid_hi:
            if p.dlid >= 0xC000 and self.sim.multicast is not None:  # a multicast copy (cold path)
                self.sim.multicast.receive(p, t, self.node)
                return
            self.sim.drop(p, "misrouted", self.node)
            return
        self.sim.deliver(p, t, self.node)


class HcaTx(TxPort):
    """Transmitter of an HCA port: send queues per SL, DMA into VL buffers, VL arbitration."""

    # slots, as TxPort's: on a large fabric an instance dictionary is two more cold objects per look
    __slots__ = ("source", "sendq", "queued", "sl_order", "used_sls", "sl2vl", "vbuf", "vqueues", "mgmt", "stats")

    def __init__(self, node: "HCA", port, link, nvl, arbiter, env):
        super().__init__(node, port, link, nvl, arbiter, env)
        self.source: TrafficSource | None = None
        #: per SL, its send queue; an SL not used yet has the shared empty tuple (16 empty deques
        #: per HCA took ~10 KB: :meth:`use_sl` makes an SL's deque before anything is queued on it)
        self.sendq: list[deque[Packet] | tuple] = [_NO_QUEUE] * 16
        self.queued = 0
        self.sl_order = node.sl_order
        self.used_sls: list[int] = []  # SLs that ever had a send queue, in priority order
        self.sl2vl = node.sl2vl_table(nvl)
        self.vbuf = tuple(VLSendBuffer(vl, node.vl_buffer) for vl in range(nvl))
        self.vqueues = tuple(vb.q for vb in self.vbuf)
        self.mgmt: deque[Packet] = deque()
        self.stats = node.sim.stats

    def enqueue(self, p: Packet) -> None:
        """Queue a packet for sending (management packets go first, on VL15)."""
        if p.vl == VL15:
            self.mgmt.append(p)
        else:
            self.use_sl(p.sl)
            self.sendq[p.sl].append(p)
            self.queued += 1
        self.poke(self.loop.now)

    def has_work(self) -> bool:
        if self.state != PortState.ACTIVE:
            return bool(self.state != PortState.DOWN and self.mgmt)
        return bool(self.queued or self.mgmt) or any(self.cands)

    def _step_inactive(self, now: float) -> float:
        """A port that is not Active: Down sends nothing (its send queues and VL buffers stay as they are,
        as a real HCA keeps its send queues; the source makes no messages meanwhile), Init and Armed send
        VL15 packets only."""
        if self.state == PortState.DOWN or not self.mgmt:
            return INF
        if now < self.busy_until:
            return self.busy_until
        end = self.busy_until = self._launch(self.mgmt.popleft(), VL15, now)
        return end

    def sendable(self, now: float) -> bool:
        if self.state != PortState.ACTIVE:
            return bool(self.state != PortState.DOWN and self.mgmt) and self.busy_until <= now
        if self.mgmt:
            return True
        for vl in range(self.nvl):
            q = self.vbuf[vl].q
            if q and q[0].credits <= self.credits_at(vl, now):
                return True
        src = self.source
        if src is not None and src.next_time <= now and not any(vb.q for vb in self.vbuf) and not self.queued:
            return True  # a message is due and nothing queued could block it
        return False

    def after_send(self, end: float) -> float:
        if self.mgmt:
            return end
        # a VL whose head lacks credits waits for them (new messages queue
        # behind it); an empty VL may get a new message from the source
        best = self.heads_credit_time(self.vqueues, end)
        if not all(self.vqueues):
            t = self.idle_wake(end)
            if t < best:
                best = t
        return best

    def idle_wake(self, end: float) -> float:
        src = self.source
        if src is None:
            return INF
        t = src.next_time
        return end if t < end else t

    def use_sl(self, sl: int) -> None:
        """Include *sl* in the send queues DMA looks at."""
        if sl not in self.used_sls:
            self.used_sls = [s for s in self.sl_order if s in self.used_sls or s == sl]
            if self.sendq[sl] is _NO_QUEUE:
                self.sendq[sl] = deque()

    def _dma(self) -> None:
        vbuf = self.vbuf
        sl2vl = self.sl2vl
        for sl in self.used_sls:
            q = self.sendq[sl]
            if not q:
                continue
            vb = vbuf[sl2vl[sl]]
            while q and vb.bytes + q[0].size <= vb.capacity:
                p = q.popleft()
                self.queued -= 1
                vb.q.append(p)
                vb.bytes += p.size
                if len(vb.q) == 1:
                    self.cands[vb.vl].append(vb)

    def try_send(self, now: float) -> float | None:
        src = self.source
        if src is not None and src.next_time <= now:
            src.materialize(now)
        if self.queued:
            self._dma()
        if self.mgmt:
            return self._launch(self.mgmt.popleft(), VL15, now)
        credits = self.credits
        returns = self.returns
        if self.single:
            q = self.vbuf[0].q
            if not q:
                # (a source due in the past is one held back by BACKLOG: it cannot be, with q empty)
                self.next_t = src.next_time if src is not None and src.next_time > now else INF
                return None
            rq = returns[0]
            if rq and rq[0] <= now:
                self.absorb(0, now)
            if q[0].credits > credits[0]:
                # new messages would queue behind the blocked head: only credits can help
                self.next_t = rq[0] if rq else INF
                return None
            vl = 0
        else:
            one, nxt = self.ready_heads(self.vqueues, now)
            if one < 0:
                if src is not None and not all(self.vqueues):
                    # a new message may go on an empty VL.  A source due in the past is
                    # held back by BACKLOG: the send queue of its SL is full, so that SL's
                    # VL is not empty; a source of several SLs may have others due later
                    t = src.next_time
                    if t <= now:
                        t = src.next_after(now)
                    if t < nxt:
                        nxt = t
                self.next_t = nxt
                return None
            vl = self.pick_one(self.ready, one) if one != SEVERAL else self.arbiter.select(self.ready)
        vb = self.vbuf[vl]
        p = vb.q.popleft()
        vb.bytes -= p.size
        if not vb.q:
            self.cands[vl].remove(vb)
        end = self._launch(p, vl, now)
        if self.queued:
            self._dma()
        return end

    def _launch(self, p: Packet, vl: int, now: float) -> float:
        end = now + p.size * self.byte_time
        p.injected = now
        self.stats.injected += 1
        self.launch(p, vl, now, end)
        return end

    def queued_packets(self) -> int:
        """Packets at the source: in send queues and VL buffers, not yet on the wire."""
        return self.queued + sum(len(vb.q) for vb in self.vbuf) + len(self.mgmt)


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


class HCA(IBNode):
    """A host channel adapter module (see the module docstring)."""

    def initialize(self, stage: int) -> None:
        if stage == STAGE_LOCAL:
            self._read_params()
            self.rx: dict[int, HcaRx] = {}
            for port, (peer, _pp, link) in self.links.items():
                nvl = self.link_vls(peer)
                self.rx[port] = HcaRx(self, port, nvl, self.vl_buffer // CREDIT_BYTES, link.delay)
        elif stage == STAGE_WIRE:
            self.build_transmitters(lambda port, link, nvl, arb, env: HcaTx(self, port, link, nvl, arb, env))
        elif stage == STAGE_TRAFFIC:
            self._start_traffic()

    def _read_params(self) -> None:
        self.read_common()
        p = self.params
        self.mtu = int(p["mtu"])
        if self.mtu not in MTUS:
            raise ConfigError(f"{self.path}: 'mtu' must be one of {MTUS} (got {self.mtu})")
        self.header_size = self.int_param("headerSize", 0, 4096)
        prio = str(p["slPriority"]).replace(",", " ").split()
        try:
            order = [int(s) for s in prio]
        except ValueError:
            raise ConfigError(f"{self.path}: 'slPriority' must list SLs 0..15 (got {p['slPriority']!r})") from None
        if any(not 0 <= s <= 15 for s in order) or len(set(order)) != len(order):
            raise ConfigError(f"{self.path}: 'slPriority' must list distinct SLs 0..15 (got {p['slPriority']!r})")
        self.sl_order = order + [s for s in range(16) if s not in order]
        self.port_lids = {}
        # traffic
        self.traffic = str(p["traffic"])
        self.load = float(p["load"])
        self.arrival = str(p["arrival"])
        self.adaptive = float(p["adaptive"])
        if not 0.0 <= self.adaptive <= 1.0:
            raise ConfigError(f"{self.path}: 'adaptive' must be a fraction from 0 to 1 (got {self.adaptive})")
        self.adaptive_by = str(p["adaptiveBy"])
        if self.adaptive_by not in ("dlid", "slid"):
            raise ConfigError(f"{self.path}: 'adaptiveBy' must be \"dlid\" or \"slid\" (got {self.adaptive_by!r})")
        self.random_path = float(p["randomPath"])
        if not 0.0 <= self.random_path <= 1.0 or self.adaptive + self.random_path > 1.0:
            raise ConfigError(f"{self.path}: 'randomPath' must be a fraction from 0 to 1, and with 'adaptive' at most"
                              f" 1 (got {self.random_path} and {self.adaptive})")
        self.realtime = str(p["realtime"])
        self.realtime_load = float(p["realtimeLoad"])
        self.realtime_sl = self.int_param("realtimeSL", 0, 14)
        self.realtime_sls = self.int_param("realtimeSLs", 1, 15 - self.realtime_sl)
        self.realtime_dst = int(p["realtimeDestination"])
        self.realtime_streams = self.int_param("realtimeStreams", 0, 4096)
        self.realtime_multicast = float(p["realtimeMulticast"])
        if not 0.0 <= self.realtime_multicast <= 1.0:
            raise ConfigError(f"{self.path}: 'realtimeMulticast' must be a fraction from 0 to 1"
                              f" (got {self.realtime_multicast})")
        if not 0.0 <= self.realtime_load <= 10.0:
            raise ConfigError(f"{self.path}: 'realtimeLoad' must be from 0 to 10 (got {self.realtime_load})")
        self.control_interval = float(p["controlInterval"])  # ns
        self.control_size = self.int_param("controlSize", 1, 1 << 16)
        if self.control_interval < 0:
            raise ConfigError(f"{self.path}: 'controlInterval' must be >= 0 (got {self.control_interval}ns)")
        if self.traffic:
            if not 0 < self.load:
                raise ConfigError(f"{self.path}: 'load' must be > 0 when traffic is '{self.traffic}' (got {self.load})")
            if self.arrival not in ("poisson", "constant"):
                raise ConfigError(f"{self.path}: 'arrival' must be 'poisson' or 'constant' (got {self.arrival!r})")
        self.traffic_sls = _parse_sls(str(p["sl"]), self.path)
        #: what the traffic source sends on: its own SLs, or those of the routing's paths (see _start_traffic)
        self.source_sls, self.path_sls = self.traffic_sls, None
        packet_size = self.int_param("packetSize", 1, 1 << 20)
        message = self.int_param("messageSize", 0, 1 << 40)
        if message:
            self.message_payload = message
        else:
            if packet_size <= self.header_size:
                raise ConfigError(
                    f"{self.path}: 'packetSize' ({packet_size}B) must exceed 'headerSize' ({self.header_size}B)"
                )
            if packet_size - self.header_size > self.mtu:
                raise ConfigError(
                    f"{self.path}: 'packetSize' ({packet_size}B) exceeds mtu + headerSize"
                    f" ({self.mtu + self.header_size}B); set messageSize to send larger messages"
                )
            self.message_payload = packet_size - self.header_size
        self.traffic_start = 0.0

    def sl2vl_table(self, nvl: int) -> list[int]:
        """The SL-to-VL map of a port with *nvl* data VLs: 16 VLs, one per SL.

        The ``sl2vl`` parameter if it is set, else ``sl % nvl``.

        Raises
        ------
        ConfigError
            If ``sl2vl`` maps an SL to a VL the port does not have.
        """
        if self.sl2vl is None:
            return [sl % nvl for sl in range(16)]
        bad = [vl for vl in self.sl2vl if vl >= nvl]
        if bad:
            raise ConfigError(f"{self.path}: 'sl2vl' uses VL {bad[0]} but the port has {nvl} data VLs")
        return list(self.sl2vl)

    def max_packet(self) -> int:
        """The largest packet the HCA sends, in bytes: its MTU plus the header size."""
        return self.mtu + self.header_size

    @property
    def first_port(self) -> int | None:
        """The lowest connected port number, or None if no port is connected."""
        return min(self.links) if self.links else None

    def set_port_lids(self, lids: dict[int, tuple[int, int]]) -> None:
        """Set ``{port: (base LID, lmc)}`` (done by the subnet manager)."""
        self.port_lids = dict(lids)
        for port, (lid, lmc) in lids.items():
            rx = self.rx[port]
            rx.lid_lo = lid
            rx.lid_hi = lid + (1 << lmc)
        if self.first_port is not None and self.first_port in lids:
            self.lid, self.lmc = lids[self.first_port]

    def _start_traffic(self) -> None:
        if self.first_port is None:
            return
        if self.realtime_load > 0 or self.control_interval > 0:
            self._start_realtime()
        if not self.traffic:
            return
        sim = self.sim
        src = sim.traffic_index(self)
        if src is None:
            return
        pattern = sim.traffic_pattern(self.traffic, str(self.params["trafficOptions"]))
        if not pattern.active(src):
            return
        dlids = sim.dlids_from(self)
        self.path_sls = sim.path_sls_from(self, dlids)
        if self.path_sls is not None:  # (else source_sls stays traffic_sls, as _read_params set it)
            if self.traffic_sls != [0]:
                raise ConfigError(f"{self.path}: the routing engine gives every path its SL (dfsssp, lash):"
                                  f" 'sl' cannot be set too (got {self.params['sl']!r})")
            self.source_sls = sorted(set(np.delete(self.path_sls, src).tolist()))
            vl_of = self.sl2vl_table(self.link_vls(self.links[self.first_port][0]))
            for sl in self.source_sls:
                if vl_of[sl] != sim.tables.sl2vl[sl]:
                    raise ConfigError(f"{self.path}: the routing engine puts SL {sl} on VL {sim.tables.sl2vl[sl]},"
                                      f" this HCA's SL-to-VL table on VL {vl_of[sl]}: give it 'numVLs' >="
                                      f" {max(sim.tables.sl2vl[x] for x in self.source_sls) + 1} (or the engine"
                                      f" fewer layers)")
        tx = self.tx[self.first_port]
        # with path SLs the destination decides the SL: one source, creating every message on time when
        # there are several (SplitSource splits a stream of drawn SLs; a pattern may never reach an SL)
        source = TrafficSource if len(self.source_sls) == 1 or self.path_sls is not None else SplitSource
        self._add_source(tx, source(self, tx, pattern, src, dlids, self.rng))
        for sl in self.source_sls:
            tx.use_sl(sl)
        tx.poke(0.0)

    def _start_realtime(self) -> None:
        """Kim et al.'s MPEG-2 stream and control packets (:mod:`ibfabric.components.hca.realtime`)."""
        from .realtime import MpegSource, start_sources

        tx = self.tx[self.first_port]
        for s in start_sources(self):
            self._add_source(tx, s)
            if isinstance(s, MpegSource):
                for sl in sorted(set(s.sls)):
                    tx.use_sl(sl)
        tx.poke(0.0)

    @staticmethod
    def _add_source(tx, source) -> None:
        if tx.source is None:
            tx.source = source
            return
        from ..qos.cbr import MergedSource  # (cbr imports the QoS metrics: only when sources merge)

        tx.source = MergedSource(tx.source, source)

    def send_packet(self, p: Packet, port: int | None = None) -> None:
        """Send one packet built by a script or another module (set ``p.vl = 15`` for management)."""
        port = self.first_port if port is None else port
        if port not in self.tx:
            raise ConfigError(f"{self.path}: port {port} is not connected")
        if p.size > self.vl_buffer and p.vl != VL15:
            raise ConfigError(f"{self.path}: a {p.size}B packet does not fit the {self.vl_buffer}B VL buffer")
        if p.slid == 0:
            p.slid = self.lid
        p.created = self.sim.now
        self.sim.stats.add_generated(1, p.size, p.created)
        self.tx[port].enqueue(p)

    def send_multicast(self, group, size: int, *, sl: int | None = None, **kw) -> list[Packet]:
        """Send one packet of *size* wire bytes to multicast *group* (its name or MulticastGroup), now.

        This host must be one of the group's senders.  *sl* defaults to the group's first SL under a
        bandwidth policy that gives groups SLs of their own (``multicastBandwidth``), else 0.  With
        switch replication the packet goes to the group's MLID for this sender (``group.mlid_of(host)``); with
        ``replication = "replicated-unicast"`` one unicast copy goes to each other member.  The
        packet(s) share a new message id; :mod:`ibfabric.mstats` accounts for the members
        reached.  Returns the packets queued.
        """
        if isinstance(size, bool) or not isinstance(size, (int, np.integer)) or size < 1:  # (public API check)
            raise ConfigError(f"{self.path}: send_multicast's size must be a positive number of bytes (got {size!r})")
        gi = self.multicast_group(group)
        if sl is None:
            sls = self.sim.multicast.sls[gi]
            sl = sls[0] if sls else 0
        out = self.multicast_packets(gi, size, sl=sl, created=self.sim.now, msg=self.sim.next_message_id(), **kw)
        for p in out:
            self.send_packet(p)
        return out

    def multicast_group(self, group) -> int:
        """The index in ``sim.multicast`` of *group* (a name or MulticastGroup), checked: groups are
        declared, the switches can replicate, this host sends to the group and it has another member.

        Raises
        ------
        ConfigError
            Naming what is wrong.
        """
        sim = self.sim
        acc = sim.multicast
        if acc is None:
            raise ConfigError(f"{self.path}: no multicast groups are declared (the subnet manager's"
                              f" 'multicastGroups')")
        try:
            gi = acc.group_index(group)
        except KeyError as exc:
            raise ConfigError(f"{self.path}: {exc.args[0]}") from None
        g = acc.groups[gi]
        host = sim.traffic_index(self)
        if host not in g.sender_hosts:
            raise ConfigError(f"{self.path}: host {host} is not a sender of multicast group '{g.name}'")
        if not any(m != host for m in g.member_hosts):
            raise ConfigError(f"{self.path}: multicast group '{g.name}' has no member but the sender")
        return gi

    def multicast_packets(self, gi: int, size: int, *, sl: int, created: float, **kw) -> list[Packet]:
        """The packet(s) that carry one multicast packet of *size* wire bytes to group *gi* (an index
        checked by :meth:`multicast_group`), accounted as sent in ``sim.multicast`` but not queued.

        One packet to the group's MLID for this host with switch replication, one unicast copy per
        other member with ``replicated-unicast``; *kw* are :class:`Packet` fields (``msg`` and
        ``seq`` identify the packet to the accounting, so every packet sent needs its own pair).
        """
        sim = self.sim
        acc = sim.multicast
        g = acc.groups[gi]
        host = sim.traffic_index(self)
        klass = kw.pop("cls", 0)  # Packet.make's own first argument is named cls
        p = Packet.make(self.lid, g.mlid_of(host), size, sl=sl, src=host, **kw)
        p.created, p.cls = created, klass
        acc.add_sent(p, gi, host)
        if not acc.source_copies:
            return [p]
        dlids = self.__dict__.get("_member_dlids")
        if dlids is None:  # the unicast DLID of every host (routes are static): the list HCAs share
            dlids = self._member_dlids = sim.dlids_from(self)
        out = []
        for m in g.member_hosts:
            if m != host:
                c = copy.copy(p)
                c.dlid = int(dlids[m])
                c.dst = m
                out.append(c)
        return out


def _parse_sls(text: str, owner: str) -> list[int]:
    """'3' -> [3]; '0,2' -> [0, 2]; '0..15' -> [0, ..., 15]."""
    out: list[int] = []
    try:
        for item in text.replace(",", " ").split():
            if ".." in item:
                lo, hi = item.split("..")
                out.extend(range(int(lo), int(hi) + 1))
            else:
                out.append(int(item))
    except ValueError:
        raise ConfigError(f"{owner}: 'sl' must be SLs like '3', '0,2' or '0..15' (got {text!r})") from None
    if not out or any(not 0 <= s <= 15 for s in out):
        raise ConfigError(f"{owner}: 'sl' must name SLs 0..15 (got {text!r})")
    return out
