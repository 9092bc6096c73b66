"""Kim et al.'s mixed workload (2007, §4): MPEG-2 real-time streams and control traffic.

Per HCA, beside the best-effort pattern traffic (``traffic``, ``load``):

- ``realtime`` (a preset of :class:`ibfabric.mpeg.MpegModel`, ``"low"``,
  ``"medium"``, ``"high"``, or the path of a frame-size trace, one size in
  bytes per line) with ``realtimeLoad`` > 0: VBR streams of 30 frames/s
  adding up to ``realtimeLoad`` x the link's data rate, as many as the
  model's own rate makes (``realtimeStreams`` > 0 sets the count; each
  stream is then scaled to its share), each to a destination host
  (``realtimeDestination``, -1 = chosen uniformly at random among the
  other hosts, per stream, seeded).  Each frame is segmented into MTU
  packets plus headers (padded to full size, Kim's fixed-size packets)
  queued at once, as a burst, on SL ``realtimeSL`` (with ``realtimeSLs = k``
  the streams take SLs ``realtimeSL .. realtimeSL + k - 1`` in turn).  Packets carry the
  stream in ``flow`` (``STREAM_BASE + host x MAX_STREAMS + j``), the frame
  in ``msg`` (``last`` on its final packet), traffic class 2 (real time)
  and ``keep`` on the packets selective dropping must spare
  (:func:`ibfabric.mpeg.protected`).
- ``realtimeMulticast`` (0..1): that share of the host's streams
  (``round(share x count)``, picked at random, seeded) go to a multicast
  group instead, each to one of the groups the host sends to (picked at
  random): Kim et al.'s §5.2 workload ("20 percent of the real-time
  traffic has multi-destinations").  Each packet of such a stream's frames
  is sent as :meth:`~ibfabric.components.hca.HCA.multicast_packets` makes it (to the sender's MLID,
  or a unicast copy per other member under ``replicated-unicast``), with
  the same burst, ``last``, ``keep``, ``flow`` and ``msg``; the stream's
  deadlines are judged per member (:mod:`ibfabric.deadlines`).
- ``controlInterval`` > 0: one ``controlSize`` packet every interval (Kim:
  256 B every 33.3 ms) from a random phase, to a uniformly random other
  host, on VL15 (highest priority, no flow control), class 3 (control).

The injection rate of a run is normalised to the hosts' link data rate: a
host with ``load = 0.3 x L`` and ``realtimeLoad = 0.7 x L`` offers ``L`` of
its link, split 70:30 between real-time and best-effort traffic (control
adds ``controlSize / controlInterval``, 61 kbit/s in Kim's set-up).
Deadline metrics (DMP, DMT; :mod:`ibfabric.deadlines`) go into the run's
summary under ``"realtime"``.
"""

from __future__ import annotations

import heapq
import math
from pathlib import Path

import numpy as np

from ibfabric.errors import ConfigError
from ibfabric.kernel import module_rng

from ..packet import VL15, Packet

__all__ = ["MpegSource", "ControlSource", "STREAM_BASE", "deadlines_for", "realtime_summary", "start_sources"]

INF = math.inf
#: ``flow`` of host i's real-time stream (CBR connections and best-effort traffic use smaller ids).
STREAM_BASE = 1 << 24
#: Frames drawn from the model at a time, per stream.
BATCH = 64
#: Streams per host at most (their ``flow`` ids are ``STREAM_BASE + host x MAX_STREAMS + j``).
MAX_STREAMS = 4096


def load_model(spec: str, fps: float, where: str):
    """The :class:`~ibfabric.mpeg.MpegModel` named by *spec*: a preset name or a trace file."""
    from ibfabric.mpeg import PRESETS, MpegModel

    if spec in PRESETS:
        return MpegModel.preset(spec, fps=fps)
    if not Path(spec).exists():
        raise ConfigError(f"{where}: 'realtime' must be a preset ({', '.join(sorted(PRESETS))}) or a frame-size"
                          f" trace file (got {spec!r})")
    return MpegModel.from_trace(spec, fps=fps)


class MpegSource:
    """The MPEG-2 VBR streams leaving one HCA port (see the module docstring).

    ``count`` streams, each to its own destination, each of 30 frames/s
    from its own random phase and place in the GOP, with frame sizes drawn
    from *model* scaled to ``rate_bps / count``; merged in time order with
    a heap.  Every frame is
    queued on time (``lazy`` is False).
    """

    lazy = False

    def __init__(self, hca, tx, src: int, dsts: list[int], dlids: list[int], model, rate_bps: float, sl: int,
                 rng: np.random.Generator, start: float = 0.0, sls: int = 1, groups: list[int] | None = None):
        self.sim = hca.sim
        self.hca = hca
        self.stats = hca.sim.stats
        self.tx = tx
        self.slid = hca.lid
        self.src, self.sl = src, sl
        n = len(dsts)
        self.dsts, self.dlids = list(dsts), list(dlids)
        #: stream j's SL: the streams take the *sls* SLs from *sl* on in turn
        self.sls = [sl + j % sls for j in range(n)]
        self.flows = [STREAM_BASE + src * MAX_STREAMS + j for j in range(n)]
        #: stream j's multicast group (an index of ``sim.multicast``), or -1: a unicast stream to ``dsts[j]``
        self.groups = [-1] * n if groups is None else [int(g) for g in groups]
        #: packets queued per packet of stream j's frames (a copy per other member with replicated-unicast)
        self.copies = [1] * n
        if any(g >= 0 for g in self.groups):
            acc = self.sim.multicast
            turn = [0] * len(acc.groups)
            for j, g in enumerate(self.groups):
                if g >= 0 and acc.source_copies:
                    self.copies[j] = sum(1 for m in acc.groups[g].member_hosts if m != src)
                if g >= 0 and acc.sls[g]:  # the group's SLs (a bandwidth policy), its streams in turn
                    self.sls[j] = acc.sls[g][turn[g] % len(acc.sls[g])]
                    turn[g] += 1
        self.model = model.at_rate(rate_bps / n)
        self.period = 1e9 / self.model.fps
        self.mtu, self.header = hca.mtu, hca.header_size
        self.rngs = [np.random.default_rng(int(x)) for x in rng.integers(1 << 62, size=n)]
        self.phase = [start + float(u) * self.period for u in rng.uniform(0.0, 1.0, n)]
        # each stream starts at a random place in its GOP (streams are not in step)
        self.gop_at = [int(g) for g in rng.integers(len(self.model.gop), size=n)]
        self.k = [0] * n
        self.batches: list[tuple[int, np.ndarray, np.ndarray]] = [(0, np.zeros(0, "<U1"), np.zeros(0, np.int64))] * n
        self.heap = [(t, j) for j, t in enumerate(self.phase)]
        heapq.heapify(self.heap)
        self.frames_sent = 0
        self.next_time = self.heap[0][0] if self.heap else INF

    def _frame(self, j: int, k: int) -> tuple[str, int]:
        base, types, sizes = self.batches[j]
        if k >= base + len(sizes):
            base += len(sizes)
            types, sizes = self.model.frames(BATCH, self.rngs[j], start=base + self.gop_at[j])
            self.batches[j] = (base, types, sizes)
        return str(types[k - base]), int(sizes[k - base])

    def _packets(self, size: int) -> list[int]:
        from ibfabric.mpeg import packets_of_frame

        return [int(x) for x in packets_of_frame(size, self.mtu, self.header, pad=True)]

    def materialize(self, now: float) -> None:
        """Queue every frame due by *now* (none after the simulation's ``traffic_stop``)."""
        from ibfabric.mpeg import protected

        stop = self.sim.traffic_stop
        sendq = self.tx.sendq
        next_id = self.sim.next_message_id
        heap = self.heap
        while heap and heap[0][0] <= now:
            t, j = heap[0]
            if t > stop:
                heap.clear()
                break
            k = self.k[j]
            kind, size = self._frame(j, k)
            sizes = self._packets(size)
            n = len(sizes)
            msg = next_id()
            dlid, dst, flow, sl, g = self.dlids[j], self.dsts[j], self.flows[j], self.sls[j], self.groups[j]
            q = sendq[sl]
            if g < 0:
                for i, sz in enumerate(sizes):
                    q.append(Packet(self.slid, dlid, sl, sz, (sz + 63) >> 6, self.src, dst, t, 0, 2, flow, msg, i,
                                    i == n - 1, cls=2, keep=protected(kind, i, n)))
            else:  # a multicast stream: each packet to the group (HCA.multicast_packets: MLID or copies)
                make = self.hca.multicast_packets
                for i, sz in enumerate(sizes):
                    q.extend(make(g, sz, sl=sl, created=t, flow=flow, msg=msg, seq=i, last=i == n - 1, cls=2,
                                  keep=protected(kind, i, n)))
            c = self.copies[j]
            self.tx.queued += n * c
            self.stats.add_generated(n * c, sum(sizes) * c, t)
            self.frames_sent += 1
            self.k[j] = k + 1
            heapq.heapreplace(heap, (self.phase[j] + (k + 1) * self.period, j))
        self.next_time = heap[0][0] if heap and heap[0][0] <= stop else INF

    def next_after(self, now: float) -> float:
        """The next frame's time if it is after *now*, else INF (every frame is created on time)."""
        return self.next_time if self.next_time > now else INF

    def pending(self, now: float) -> tuple[int, int]:
        """``(packets, bytes created in the window)`` of the frames due by *now* not queued yet."""
        lim = min(now, self.sim.traffic_stop)
        packets = nbytes = 0
        for t, j in self.heap:
            if t > lim:
                continue
            saved = (self.batches[j], self.rngs[j].bit_generator.state)
            k, c = self.k[j], self.copies[j]
            while self.phase[j] + k * self.period <= lim:
                sizes = self._packets(self._frame(j, k)[1])
                packets += len(sizes) * c
                if self.phase[j] + k * self.period >= self.stats.window:
                    nbytes += sum(sizes) * c
                k += 1
            self.batches[j], state = saved
            self.rngs[j].bit_generator.state = state
        return packets, nbytes

    def pending_estimate(self, now: float) -> float:
        """The expected number of packets of the frames due by *now* not created yet: frames
        times the packets of a mean-size frame.
        """
        lim = min(now, self.sim.traffic_stop)
        frames = sum((math.floor((lim - t) / self.period) + 1) * self.copies[j] for t, j in self.heap if t <= lim)
        return frames * math.ceil(self.model.mean_frame() / self.mtu)


class ControlSource:
    """Control (management) packets of one HCA: one every ``interval`` ns on VL15 (see the module docstring)."""

    lazy = False

    def __init__(self, hca, tx, src: int, dlids, size: int, interval: float, rng: np.random.Generator,
                 start: float = 0.0):
        self.sim = hca.sim
        self.stats = hca.sim.stats
        self.tx = tx
        self.slid = hca.lid
        self.src = src
        # the list of Simulation.dlids_from, shared by the HCAs (read-only)
        self.dlids = dlids if isinstance(dlids, list) else [int(d) for d in dlids]
        self.size = size
        self.interval = interval
        self.rng = rng
        self.next_time = start + float(rng.uniform(0.0, interval))
        self.sent = 0

    def materialize(self, now: float) -> None:
        """Create the control packets due by *now* (up to the end of traffic) and queue them
        on the management queue: one every ``interval`` ns, each to a uniformly drawn other host.
        """
        stop = self.sim.traffic_stop
        n = len(self.dlids)
        while self.next_time <= now and self.next_time <= stop:
            t = self.next_time
            dst = int(self.rng.integers(n - 1))
            dst += dst >= self.src
            p = Packet(self.slid, self.dlids[dst], 0, self.size, (self.size + 63) >> 6, self.src, dst, t, VL15, 2,
                       0, self.sim.next_message_id(), 0, True, cls=3, keep=True)
            self.tx.mgmt.append(p)
            self.stats.add_generated(1, self.size, t)
            self.sent += 1
            self.next_time = t + self.interval
        if self.next_time > stop:
            self.next_time = INF

    def next_after(self, now: float) -> float:
        """The next packet's time if it is after *now*, else INF (every packet is created on time)."""
        return self.next_time if self.next_time > now else INF

    def pending(self, now: float) -> tuple[int, int]:
        """``(packets, bytes created in the measurement window)`` of the packets due by *now*
        not created yet; the source's state is left as it was.
        """
        lim = min(now, self.sim.traffic_stop)
        if self.next_time > lim:
            return 0, 0
        k = math.floor((lim - self.next_time) / self.interval) + 1
        first = self.next_time
        in_window = sum(1 for j in range(k) if first + j * self.interval >= self.stats.window)
        return k, in_window * self.size

    def pending_estimate(self, now: float) -> float:
        """The number of packets :meth:`pending` counts (exact, in O(1))."""
        return float(self.pending(now)[0])


def start_sources(hca) -> list:
    """The real-time and control sources *hca*'s parameters ask for (started at time 0)."""
    sim = hca.sim
    out = []
    src = sim.traffic_index(hca)
    if src is None or hca.first_port is None:
        return out
    tx = hca.tx[hca.first_port]
    dlids = sim.dlids_from(hca)
    n = len(dlids)
    if hca.realtime_load > 0 and n > 1:
        rng = module_rng(sim.seed, f"{hca.path}:realtime")
        model = load_model(hca.realtime, 30.0, hca.path)
        rate = hca.realtime_load * tx.link.rate
        count = hca.realtime_streams or max(1, round(rate / model.mean_rate()))
        if count > MAX_STREAMS:
            raise ConfigError(f"{hca.path}: {count} real-time streams of {model.mean_rate() / 1e6:.2f} Mb/s make"
                              f" 'realtimeLoad' {hca.realtime_load}; at most {MAX_STREAMS} (set 'realtimeStreams')")
        dst = hca.realtime_dst
        if dst < 0:
            dsts = rng.integers(n - 1, size=count)
            dsts = [int(d) + (int(d) >= src) for d in dsts]
        elif dst >= n or dst == src:
            raise ConfigError(f"{hca.path}: 'realtimeDestination' must be another host's index 0..{n - 1}"
                              f" (got {dst})")
        else:
            dsts = [dst] * count
        groups = multicast_streams(hca, src, count)
        source = MpegSource(hca, tx, src, dsts, [int(dlids[d]) for d in dsts], model, rate, hca.realtime_sl, rng,
                            sls=hca.realtime_sls, groups=groups)
        out.append(source)
        deadlines_for(sim)
        sim.realtime_multicast_flows.update(f for f, g in zip(source.flows, groups) if g >= 0)
    if hca.control_interval > 0 and n > 1:
        rng = module_rng(sim.seed, f"{hca.path}:control")
        out.append(ControlSource(hca, tx, src, dlids, hca.control_size, hca.control_interval, rng))
    return out


def multicast_streams(hca, src: int, count: int) -> list[int]:
    """Per stream of host *src*, the index (in ``sim.multicast``) of the group it is sent to, or -1.

    ``round(realtimeMulticast x count)`` streams, picked at random, each to a group picked at
    random among those this host sends to (declared with it among their ``senders=`` and with
    another member), from the host's own seeded generator (so the unicast streams' destinations
    do not change with the share).
    """
    share = hca.realtime_multicast
    out = [-1] * count
    if share <= 0:
        return out
    sim = hca.sim
    acc = sim.multicast
    if acc is None:
        raise ConfigError(f"{hca.path}: 'realtimeMulticast' is {share} but no multicast groups are declared (the"
                          f" subnet manager's 'multicastGroups')")
    mine = [gi for gi, g in enumerate(acc.groups)
            if src in g.sender_hosts and any(m != src for m in g.member_hosts)]
    if not mine:
        raise ConfigError(f"{hca.path}: 'realtimeMulticast' is {share} but host {src} sends to no multicast group"
                          f" (none of {', '.join(g.name for g in acc.groups)} lists it, with another member, in"
                          f" 'senders=')")
    for gi in mine:
        hca.multicast_group(acc.groups[gi])  # the switches' problem, if any, as send_multicast reports it
    rng = module_rng(sim.seed, f"{hca.path}:realtime-multicast")
    k = round(share * count)
    picked = rng.permutation(count)[:k]
    chosen = rng.integers(len(mine), size=k)
    for j, c in zip(picked.tolist(), chosen.tolist()):
        out[j] = mine[c]
    return out


def deadlines_for(sim):
    """The simulation's :class:`~ibfabric.deadlines.DeadlineStats` of real-time streams (made, and
    folded along with the delivery log, on first use)."""
    from ibfabric.deadlines import DeadlineStats

    if sim.realtime_deadlines is None:
        sim.realtime_deadlines = DeadlineStats(fps=30.0, t0=sim.warmup)
        sim.stats.fold_hooks.append(sim.realtime_deadlines.add)
        sim.add_summary_section("realtime", lambda: {"realtime": realtime_summary(sim)})
    return sim.realtime_deadlines


def realtime_summary(sim) -> dict:
    """The ``"realtime"`` section of the summary: ``streams``, ``frames`` (measured frames delivered:
    created after the warm-up), ``missed``, ``dmp`` and ``dmt_ns`` (Kim et al.'s deadline rule,
    :mod:`ibfabric.deadlines`); None where nothing was measured.

    A multicast stream's frame counts once per member that receives it (each member's frames are
    judged as a stream of their own), so the overall figures are those of Kim et al.'s Fig. 10a-b
    (real-time traffic, unicast and multicast together); with multicast streams (``realtimeMulticast``)
    ``"multicast"`` gives the same figures over them alone, with ``streams`` the streams sent and
    ``receivers`` the (stream, member) pairs that received frames."""
    import copy

    acc = copy.deepcopy(sim.realtime_deadlines)
    acc.add(sim.stats.arrays(), sim.now)
    s = acc.summary()
    out = {"streams": len({f for f, _d in acc.streams}), **_figures(s)}
    mflows = sim.realtime_multicast_flows
    if mflows:
        m = acc.summary(flows=mflows)
        out["multicast"] = {"streams": len(mflows), "receivers": m["streams"], **_figures(m)}
    return out


def _figures(s: dict) -> dict:
    return {"frames": s["frames"], "missed": s["missed"], "dmp": None if s["dmp"] != s["dmp"] else s["dmp"],
            "dmt_ns": None if s["dmt"] != s["dmt"] else s["dmt"]}
