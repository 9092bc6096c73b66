"""Deadline metrics of real-time frame streams: the DMP and DMT of Kim et al. (2007).

Kim et al. (2007, §4) [1]_ drive their real-time traffic with MPEG-2 VBR streams
of 30 frames/s (:mod:`ibfabric.mpeg`) and measure two QoS figures per
delivered frame (§4, §5.1):

DMP (deadline missing probability)
    Frames that missed their deadline over the frames delivered.
DMT (deadline missing time)
    The mean of ``arrival - deadline`` over the frames that missed.

The deadline of a frame is the previous frame's deadline plus one frame
period (33.3 ms at 30 frames/s); after a miss it is the previous frame's
*arrival* plus one period.  A frame arrives when its last packet does (the
selective dropping of §3.5 never drops the last packet of a frame, see
:func:`ibfabric.mpeg.protected`).

This module gives the deadline rule, both for the frame arrivals of one
stream (:func:`deadline_misses`, :func:`dmp_dmt`) and as a foldable
accumulator over a delivery log (:class:`DeadlineStats`).

Times are in the delivery log's unit, nanoseconds for ibfabric runs;
``per_second`` (1e9) converts the frame rate into it.

References
----------
.. [1] E. J. Kim, K. H. Yum, C. R. Das, M. Yousif and J. Duato, "Exploring
   IBA Design Space for Improved Performance," IEEE Trans. Parallel and
   Distributed Systems, vol. 18, no. 4, pp. 498-510, 2007 (§3.5 selective
   packet dropping, §4 workload and DMP/DMT, §5.1).
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np

from ibfabric.errors import ConfigError
from ibfabric.mpeg import _positive

__all__ = ["REAL_TIME", "DeadlineStats", "deadline_misses", "deadline_stats", "deadlines", "dmp_dmt"]

#: ``Packet.cls`` of real-time traffic (:data:`ibfabric.measure.TRAFFIC_CLASSES`).
REAL_TIME = 2


def _period(fps, per_second) -> float:
    return _positive(per_second, "per_second") / _positive(fps, "fps")


def _chain(arrivals: np.ndarray, first: np.ndarray, start: float, period: float, carry: float | None):
    """Deadlines of consecutive frames ``start, start + 1, ...`` of a stream (the engine).

    With ``E[k] = D[k] - k T``, the rule ``D[k] = max(D[k-1], A[k-1]) + T``
    becomes ``E[k] = max(E[k-1], A[k-1] - (k-1) T)``: a running maximum.
    *carry* is ``E`` of frame *start* (None for the stream's first frame,
    whose deadline is *first*).  Returns ``(deadlines, E of the next frame)``.
    """
    g = (start + np.arange(len(arrivals))) * period
    c = arrivals - g
    e0 = first if carry is None else carry
    e = np.maximum.accumulate(np.concatenate(([e0], c[:-1])))
    return e + g, float(max(e[-1], c[-1]))


def deadlines(arrivals, created, fps: float = 30.0, first_deadline: float | None = None,
              per_second: float = 1e9) -> np.ndarray:
    """The deadline of each frame of one stream under Kim et al.'s rule (see :func:`deadline_misses`)."""
    a, d0, period = _stream_args(arrivals, created, fps, first_deadline, per_second)
    if len(a) == 0:
        return np.zeros(0)
    return _chain(a, d0, 0, period, None)[0]


def _stream_args(arrivals, created, fps, first_deadline, per_second):
    a = np.asarray(arrivals, dtype=float)
    if a.ndim != 1:
        raise ConfigError("'arrivals' must be one arrival time per frame")
    period = _period(fps, per_second)
    if first_deadline is not None:
        return a, float(first_deadline), period
    c = np.asarray(created, dtype=float)
    if c.ndim > 1 or (c.ndim == 1 and len(c) != len(a)):
        raise ConfigError(f"'created' must be a time or one time per frame ({len(a)} frames, got shape {c.shape})")
    first = float(c if c.ndim == 0 else c[0]) if len(a) else 0.0
    return a, first + period, period


def deadline_misses(arrivals, created, fps: float = 30.0, first_deadline: float | None = None,
                    per_second: float = 1e9) -> tuple[np.ndarray, np.ndarray]:
    """Which frames of one stream missed their deadline, and by how much.

    Parameters
    ----------
    arrivals : array_like
        Arrival time of each frame (its last packet delivered), in frame order.
    created : float or array_like
        Creation time of the frames (one per frame, or the first frame's);
        only the first frame's is used, for the first deadline.
    fps : float
        Frames per second: the period is ``per_second / fps``.
    first_deadline : float, optional
        The first frame's deadline; by default its creation time plus one
        period (a frame is due one frame period after it is created).
    per_second : float
        Time units in one second (1e9: ibfabric's nanoseconds).

    Returns
    -------
    missed : ndarray of bool
        ``arrival > deadline``, per frame.
    miss_times : ndarray of float
        ``arrival - deadline`` for the frames that missed, 0 for the others.

    Examples
    --------
    Period 40 (25 frames/s in ms), first deadline 40:

    >>> missed, late = deadline_misses([30, 100, 130, 150], 0, fps=25, per_second=1000)
    >>> missed.tolist(), late.tolist()
    ([False, True, False, False], [0.0, 20.0, 0.0, 0.0])

    Frame 1 is due at 80 and misses; frame 2 is then due at 100 + 40 = 140,
    frame 3 at 180.

    Notes
    -----
    Kim et al. [1]_ (§4): the deadline of a frame is the previous deadline
    plus one period, or, if the previous frame missed its deadline, the
    previous frame's arrival plus one period; that is,
    ``D[k] = max(D[k-1], A[k-1]) + T``.  Computed as a running maximum,
    O(n).  The period is exactly ``1 / fps`` (33.33... ms), not the rounded
    33.3 ms of the paper.

    References
    ----------
    .. [1] Kim et al. 2007, §4 (see the module references).
    """
    a, d0, period = _stream_args(arrivals, created, fps, first_deadline, per_second)
    if len(a) == 0:
        return np.zeros(0, dtype=bool), np.zeros(0)
    d = _chain(a, d0, 0, period, None)[0]
    missed = a > d
    return missed, np.where(missed, a - d, 0.0)


def dmp_dmt(arrivals, created, fps: float = 30.0, first_deadline: float | None = None,
            per_second: float = 1e9) -> tuple[float, float]:
    """``(DMP, DMT)`` of one stream: missed frames over frames, and the mean miss time
    (in the arrivals' unit) of the frames that missed (NaN when none did; both NaN with no frames).

    >>> dmp_dmt([30, 100, 130, 150], 0, fps=25, per_second=1000)
    (0.25, 20.0)
    """
    missed, late = deadline_misses(arrivals, created, fps, first_deadline, per_second)
    n, m = len(missed), int(missed.sum())
    return (m / n if n else math.nan), (float(late[missed].sum()) / m if m else math.nan)


class _Stream:
    """What :class:`DeadlineStats` keeps of one stream."""

    __slots__ = ("frames", "carry", "last_deadline", "last_arrival", "last_msg", "counted", "missed", "miss_sum",
                 "miss_max", "reordered")

    def __init__(self):
        self.frames = 0  # frames seen (measured or not): the index of the next one
        self.carry: float | None = None  # E of the next frame (see _chain)
        self.last_deadline = math.nan
        self.last_arrival = math.nan
        self.last_msg = -(1 << 62)
        self.counted = 0  # frames created in the window
        self.missed = 0
        self.miss_sum = 0.0
        self.miss_max = 0.0
        self.reordered = 0


class DeadlineStats:
    """DMP and DMT per stream, from a delivery log added one chunk at a time.

    A *stream* is a ``flow`` as one destination receives it, a ``(flow, dst)``
    pair (the ``flow`` alone for a log without ``dst``): the copies of a
    multicast stream's frames that reach its members are judged member by
    member, each member's frames as one stream [1]_ (§5.2 applies the §4
    rule to multicast frames; one member's late frame resets that member's
    deadlines only).  Its *frames* are its messages, in ``msg`` order.  A frame arrives when the packet of its message with
    ``last=True`` is delivered (selective dropping never drops it, see
    :func:`ibfabric.mpeg.protected`); other packets are ignored.  Per
    stream only the state of the deadline rule (the next frame's index and
    running maximum, the last deadline and arrival) and the counts and sums
    are kept, so the accumulator can take
    :attr:`ibfabric.stats.PacketStats.fold_hooks` calls
    (``stats.fold_hooks.append(acc.add)``) and the rest of the log at the
    end (``acc.add(stats.arrays(), now)``).

    Assumptions:

    * ``msg`` increases with the frame order within a stream.  It does both
      for a global message id in creation order (what the HCA's sources get
      from ``Simulation.next_message_id``) and for a frame number per stream;
      a frame whose message never arrives is not seen, and the next one
      counts as the following frame.
    * A stream's frames complete in order.  Within a chunk, frames are put
      in ``msg`` order anyway; a frame whose ``msg`` is not above every
      ``msg`` of earlier chunks is counted in ``reordered`` and taken as the
      next frame.

    Parameters
    ----------
    fps : float
        Frames per second of every stream (Kim et al.: 30).
    per_second : float
        Time units of the log in one second (1e9: nanoseconds).
    cls : int or None
        Only packets of this traffic class count (2, real time, by default;
        :data:`REAL_TIME`); None, or a log without a ``cls`` column: every
        packet.
    flows : iterable of int, optional
        Only these streams count.
    t0, t_end : float
        Frames created in ``[t0, t_end]`` are measured (``t_end=None``: no
        end); earlier ones still set the deadlines of those after them.
    first_deadline : mapping, optional
        ``{flow: time}``: the deadline of a stream's first frame; by default
        its creation time plus one period.

    Examples
    --------
    >>> log = {"flow": np.array([7, 7, 7]), "msg": np.array([1, 2, 3]), "created": np.array([0.0, 40, 80]),
    ...        "delivered_at": np.array([30.0, 100, 130]), "last": np.array([True, True, True])}
    >>> acc = DeadlineStats(fps=25, per_second=1000, cls=None)
    >>> acc.add(log).summary()
    {'streams': 1, 'frames': 3, 'missed': 1, 'dmp': 0.3333333333333333, 'dmt': 20.0}

    References
    ----------
    .. [1] Kim et al. 2007, §4 (see the module references).
    """

    def __init__(self, fps: float = 30.0, *, per_second: float = 1e9, cls: int | None = REAL_TIME, flows=None,
                 t0: float = 0.0, t_end: float | None = None, first_deadline: Mapping[int, float] | None = None):
        self.period = _period(fps, per_second)
        self.fps = float(fps)
        self.per_second = float(per_second)
        self.cls = cls
        self.flows = None if flows is None else np.unique(np.asarray(list(flows), dtype=np.int64))
        self.t0 = float(t0)
        self.t_end = t_end
        self.first_deadline = dict(first_deadline or {})
        self.streams: dict[tuple[int, int], _Stream] = {}  # (flow, dst) -> state

    def add(self, log: Mapping[str, np.ndarray], now: float = math.inf) -> "DeadlineStats":
        """Add the frames of *log* (``flow``, ``msg``, ``created``, ``delivered_at``, ``last``, and
        ``dst`` and ``cls`` if present, as :meth:`ibfabric.stats.PacketStats.arrays`) whose last packet was
        delivered by *now*."""
        last = np.asarray(log["last"], dtype=bool)
        if len(last) == 0:
            return self
        delivered = np.asarray(log["delivered_at"], dtype=float)
        flow = np.asarray(log["flow"], dtype=np.int64)
        keep = last & (delivered <= now)
        if self.cls is not None and "cls" in log:
            keep &= np.asarray(log["cls"]) == self.cls
        if self.flows is not None:
            keep &= np.isin(flow, self.flows)
        if not keep.any():
            return self
        f = flow[keep]
        d = np.asarray(log["dst"], dtype=np.int64)[keep] if "dst" in log else np.full(len(f), -1, dtype=np.int64)
        m = np.asarray(log["msg"], dtype=np.int64)[keep]
        c = np.asarray(log["created"], dtype=float)[keep]
        a = delivered[keep]
        o = np.lexsort((a, m, d, f))
        f, d, m, c, a = f[o], d[o], m[o], c[o], a[o]
        cuts = np.flatnonzero((f[1:] != f[:-1]) | (d[1:] != d[:-1])) + 1
        for lo, hi in zip(np.concatenate(([0], cuts)), np.concatenate((cuts, [len(f)]))):
            self._add_stream(int(f[lo]), int(d[lo]), m[lo:hi], c[lo:hi], a[lo:hi])
        return self

    def _add_stream(self, flow: int, dst: int, msg: np.ndarray, created: np.ndarray, arrivals: np.ndarray) -> None:
        st = self.streams.get((flow, dst))
        if st is None:
            st = self.streams[(flow, dst)] = _Stream()
        first = self.first_deadline.get(flow, created[0] + self.period)
        d, st.carry = _chain(arrivals, first, st.frames, self.period, st.carry)
        st.reordered += int((msg <= st.last_msg).sum())
        st.last_msg = max(st.last_msg, int(msg[-1]))
        st.frames += len(arrivals)
        st.last_deadline = float(d[-1])
        st.last_arrival = float(arrivals[-1])
        measured = created >= self.t0
        if self.t_end is not None:
            measured &= created <= self.t_end
        late = (arrivals - d)[measured & (arrivals > d)]
        st.counted += int(measured.sum())
        st.missed += len(late)
        if len(late):
            st.miss_sum += float(late.sum())
            st.miss_max = max(st.miss_max, float(late.max()))

    def result(self) -> dict[str, np.ndarray]:
        """Per stream, in ``(flow, dst)`` order: ``flow``, ``dst`` (-1 for a log without one), ``frames``
        (measured frames delivered),
        ``missed``, ``dmp``, ``dmt`` (mean miss time, NaN without misses), ``miss_time_sum``,
        ``miss_time_max``, ``reordered``, ``last_deadline``, ``last_arrival``."""
        ids = sorted(self.streams)
        ss = [self.streams[i] for i in ids]
        frames = np.array([s.counted for s in ss], dtype=np.int64)
        missed = np.array([s.missed for s in ss], dtype=np.int64)
        miss_sum = np.array([s.miss_sum for s in ss], dtype=float)
        with np.errstate(invalid="ignore", divide="ignore"):
            dmp = np.where(frames > 0, missed / np.maximum(frames, 1), np.nan)
            dmt = np.where(missed > 0, miss_sum / np.maximum(missed, 1), np.nan)
        return {"flow": np.array([i[0] for i in ids], dtype=np.int64),
                "dst": np.array([i[1] for i in ids], dtype=np.int64), "frames": frames, "missed": missed, "dmp": dmp, "dmt": dmt,
                "miss_time_sum": miss_sum, "miss_time_max": np.array([s.miss_max for s in ss], dtype=float),
                "reordered": np.array([s.reordered for s in ss], dtype=np.int64),
                "last_deadline": np.array([s.last_deadline for s in ss], dtype=float),
                "last_arrival": np.array([s.last_arrival for s in ss], dtype=float)}

    def summary(self, flows=None) -> dict[str, float | int]:
        """Over all streams, or those of the ``flow`` ids in *flows*: ``streams`` (receiving streams:
        ``(flow, dst)`` pairs), ``frames``, ``missed``, ``dmp`` (missed over frames) and ``dmt`` (mean
        miss time over every missed frame, in the log's unit)."""
        ss = [s for k, s in self.streams.items() if flows is None or k[0] in flows]
        frames = sum(s.counted for s in ss)
        missed = sum(s.missed for s in ss)
        total = sum(s.miss_sum for s in ss)
        return {"streams": len(ss), "frames": frames, "missed": missed,
                "dmp": missed / frames if frames else math.nan, "dmt": total / missed if missed else math.nan}


def deadline_stats(log: Mapping[str, np.ndarray], now: float = math.inf, **options) -> dict[str, np.ndarray]:
    """:meth:`DeadlineStats.result` of a whole delivery log (*options*: those of :class:`DeadlineStats`)."""
    return DeadlineStats(**options).add(log, now).result()
