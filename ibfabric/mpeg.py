"""MPEG-2 video streams and their deadline metrics, as Kim et al. (2007) use them.

Kim et al. (2007, §4) drive their real-time traffic with MPEG-2 VBR streams
of 30 frames/s, each frame cut into fixed-size packets of one MTU plus the
headers, and measure two QoS figures per delivered frame (§4, §5.1):

DMP (deadline missing probability)
    Frames that missed their deadline over the frames delivered.
DMT (deadline missing time)
    The mean of ``arrival - deadline`` over the frames that missed.

The deadline of a frame is the previous frame's deadline plus one frame
period (33.3 ms at 30 frames/s); after a miss it is the previous frame's
*arrival* plus one period.  A frame arrives when its last packet does (the
selective dropping of §3.5 never drops the last packet of a frame, see
:func:`protected`).

This module gives the pieces: a synthetic frame-size model
(:class:`MpegModel`) and a frame-size trace reader (:func:`load_trace`),
segmentation (:func:`packets_of_frame`), the protection flags of selective
dropping, and the deadline rule, both for the frame arrivals of one stream
(:func:`deadline_misses`, :func:`dmp_dmt`) and as a foldable accumulator
over a delivery log (:class:`DeadlineStats`).

Times are in the delivery log's unit, nanoseconds for ibfabric runs;
``per_second`` (1e9) converts the frame rate into it.

References
----------
.. [1] E. J. Kim, K. H. Yum, C. R. Das, M. Yousif and J. Duato, "Exploring
   IBA Design Space for Improved Performance," IEEE Trans. Parallel and
   Distributed Systems, vol. 18, no. 4, pp. 498-510, 2007 (§3.5 selective
   packet dropping, §4 workload and DMP/DMT, §5.1).
.. [2] M. Krunz and S. K. Tripathi, "On the characterization of VBR MPEG
   streams," Proc. ACM SIGMETRICS '97, Performance Evaluation Review,
   vol. 25, no. 1, pp. 192-202, 1997 (frame sizes per frame type, lognormal
   P and B frames, GOP interleaving).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from os import PathLike
from pathlib import Path

import attrs
import numpy as np

from ibfabric.errors import ConfigError, utf8_error_at

__all__ = ["DEFAULT_GOP", "FRAME_TYPES", "MAX_FRAME_BYTES", "PRESETS", "REAL_TIME", "DeadlineStats", "MpegModel",
           "deadline_misses", "deadline_stats", "deadlines", "dmp_dmt", "frame_types", "load_trace", "packets_of_frame",
           "parse_trace", "protected", "protected_mask", "scale_to_rate"]

#: The MPEG frame types.
FRAME_TYPES = "IPB"
#: The common GOP (N = 12 frames, M = 3: an anchor every third frame), in display order.
DEFAULT_GOP = "IBBPBBPBBPBB"
#: The largest frame size a trace may give (bytes).
MAX_FRAME_BYTES = 1 << 32
#: ``Packet.cls`` of real-time traffic (:data:`ibfabric.measure.TRAFFIC_CLASSES`).
REAL_TIME = 2

#: Frame-size parameter sets: mean bytes and coefficient of variation per frame type.
#: ILLUSTRATIVE, NOT FITTED TO A TRACE: round numbers of the usual shape (I twice P,
#: P twice B; I frames less variable than P and B), at three rates with the default
#: GOP and 30 frames/s.  To reproduce a paper, fit its trace (:meth:`MpegModel.fit`,
#: :meth:`MpegModel.from_trace`) or give the trace's published statistics.
PRESETS: dict[str, dict[str, dict[str, float]]] = {
    "low": {"mean": {"I": 16000.0, "P": 8000.0, "B": 4000.0}, "cv": {"I": 0.3, "P": 0.5, "B": 0.5}},  # 1.44 Mb/s
    "medium": {"mean": {"I": 40000.0, "P": 20000.0, "B": 10000.0}, "cv": {"I": 0.3, "P": 0.5, "B": 0.5}},  # 3.6 Mb/s
    "high": {"mean": {"I": 80000.0, "P": 40000.0, "B": 20000.0}, "cv": {"I": 0.3, "P": 0.5, "B": 0.5}},  # 7.2 Mb/s
}
_DEFAULT = "medium"


# ---------------------------------------------------------------- frame sizes


def frame_types(n: int, gop: str = DEFAULT_GOP, start: int = 0) -> np.ndarray:
    """The types (``'I'``, ``'P'``, ``'B'``) of *n* consecutive frames of a stream with GOP *gop*,
    the first at position *start* of the pattern.

    >>> "".join(frame_types(14))
    'IBBPBBPBBPBBIB'
    """
    gop = _check_gop(gop)
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 0:
        raise ConfigError(f"the number of frames must be an integer >= 0 (got {n!r})")
    pattern = np.array(list(gop))
    return pattern[(int(start) + np.arange(int(n))) % len(gop)]


def _check_gop(gop) -> str:
    if not isinstance(gop, str) or not gop or set(gop) - set(FRAME_TYPES):
        raise ConfigError(f"'gop' must be a non-empty string of I, P and B frames (got {gop!r})")
    return gop


def _per_type(value) -> dict[str, float]:
    if not isinstance(value, Mapping):
        raise ConfigError(f"frame-type parameters must be a mapping like {{'I': ..., 'P': ..., 'B': ...}} (got {value!r})")
    out = {}
    for k, v in value.items():
        try:
            out[str(k)] = float(v)
        except (TypeError, ValueError):
            raise ConfigError(f"the parameter of {k!r} frames must be a number (got {v!r})") from None
    return out


def _default(kind: str):
    return lambda: dict(PRESETS[_DEFAULT][kind])


@attrs.frozen
class MpegModel:
    """A synthetic VBR MPEG stream: frame sizes drawn per frame type, interleaved by a GOP pattern.

    Each frame's size is drawn independently from a lognormal distribution
    with its type's mean and coefficient of variation (standard deviation
    over mean), and rounded to whole bytes (at least 1).  This is the
    per-frame-type lognormal model of Krunz and Tripathi [2]_ (lognormal
    P and B frames, the three sub-sequences intermixed by the GOP pattern)
    with one simplification: their I frames add a scene component and an
    AR(2) process, which this model leaves out, so its frame sizes have the
    right marginal distribution per type but no correlation between GOPs.

    Parameters
    ----------
    gop : str
        The GOP pattern in display order; the default ``"IBBPBBPBBPBB"``
        (N = 12, M = 3) is the common one.
    mean : mapping
        Mean frame size in bytes of each frame type of the GOP.
    cv : mapping
        Coefficient of variation of each frame type's size (0: constant).
    fps : float
        Frames per second (Kim et al. [1]_: 30).

    The default parameters are the ``"medium"`` entry of :data:`PRESETS`:
    illustrative round numbers (3.6 Mb/s), **not** statistics of a real
    trace.  Give a trace's per-type statistics, or fit them with
    :meth:`fit` / :meth:`from_trace`, to model a particular video.

    Raises
    ------
    ConfigError
        For a GOP of other letters than I, P and B, a frame type of the GOP
        without a mean, a mean <= 0, a negative CV, or fps <= 0.

    Examples
    --------
    >>> m = MpegModel()
    >>> m.mean_rate()
    3600000.0
    >>> types, sizes = m.frames(4, np.random.default_rng(1))
    >>> "".join(types), sizes.dtype
    ('IBBP', dtype('int64'))
    >>> MpegModel(mean={"I": 3000, "P": 1500, "B": 750}).at_rate(1.08e6).mean
    {'I': 12000.0, 'P': 6000.0, 'B': 3000.0}

    Notes
    -----
    For mean :math:`m` and coefficient of variation :math:`c` the lognormal
    parameters are :math:`\\sigma^2 = \\ln(1 + c^2)` and
    :math:`\\mu = \\ln m - \\sigma^2 / 2`.  Drawing *n* frames costs O(n)
    and one normal variate per frame.

    References
    ----------
    .. [1] Kim et al. 2007, §4 (see the module references).
    .. [2] M. Krunz and S. K. Tripathi, "On the characterization of VBR MPEG
       streams," Proc. ACM SIGMETRICS '97, Performance Evaluation Review,
       vol. 25, no. 1, pp. 192-202, 1997.
    """

    gop: str = DEFAULT_GOP
    mean: Mapping[str, float] = attrs.field(factory=_default("mean"), converter=_per_type, hash=False)
    cv: Mapping[str, float] = attrs.field(factory=_default("cv"), converter=_per_type, hash=False)
    fps: float = attrs.field(default=30.0, converter=float)

    def __attrs_post_init__(self) -> None:
        _check_gop(self.gop)
        for name, table in (("mean", self.mean), ("cv", self.cv)):
            for t in sorted(set(self.gop), key=FRAME_TYPES.index):
                if t not in table:
                    raise ConfigError(f"'{name}' must give {t} frames a value (the GOP {self.gop!r} has them)")
                v = table[t]
                if not math.isfinite(v) or (v <= 0 if name == "mean" else v < 0):
                    limit = "> 0 bytes" if name == "mean" else ">= 0"
                    raise ConfigError(f"'{name}' of {t} frames must be {limit} (got {v})")
        if not math.isfinite(self.fps) or self.fps <= 0:
            raise ConfigError(f"'fps' must be > 0 (got {self.fps})")

    @classmethod
    def preset(cls, name: str, gop: str = DEFAULT_GOP, fps: float = 30.0) -> "MpegModel":
        """The model of the :data:`PRESETS` entry *name* (illustrative parameter sets)."""
        if name not in PRESETS:
            raise ConfigError(f"unknown MPEG preset {name!r}; choose one of {', '.join(sorted(PRESETS))}")
        p = PRESETS[name]
        return cls(gop=gop, mean=p["mean"], cv=p["cv"], fps=fps)

    @classmethod
    def fit(cls, sizes, gop: str = DEFAULT_GOP, fps: float = 30.0, start: int = 0) -> "MpegModel":
        """The model with the sample mean and CV (population standard deviation over mean) of each
        frame type of a trace *sizes* (bytes), its frames typed by *gop* from position *start*."""
        sizes = np.asarray(sizes, dtype=float)
        types = frame_types(len(sizes), gop, start)
        mean, cv = {}, {}
        for t in sorted(set(gop), key=FRAME_TYPES.index):
            x = sizes[types == t]
            if len(x) == 0:
                raise ConfigError(f"the trace has no {t} frames ({len(sizes)} frames, GOP {gop!r})")
            mean[t] = float(x.mean())
            cv[t] = float(x.std() / mean[t]) if mean[t] > 0 else 0.0
        return cls(gop=gop, mean=mean, cv=cv, fps=fps)

    @classmethod
    def from_trace(cls, path: str | PathLike, gop: str = DEFAULT_GOP, unit: str = "bytes", fps: float = 30.0,
                   start: int = 0) -> "MpegModel":
        """:meth:`fit` to the frame-size trace file *path* (see :func:`load_trace`)."""
        return cls.fit(load_trace(path, unit), gop, fps, start)

    def frames(self, n: int, rng: np.random.Generator | int, start: int = 0) -> tuple[np.ndarray, np.ndarray]:
        """``(types, sizes)`` of *n* consecutive frames, the first at position *start* of the GOP:
        types as ``'I'``/``'P'``/``'B'`` strings, sizes in whole bytes (int64, >= 1).

        *rng* is a :class:`numpy.random.Generator` or a seed; the draws are one
        standard normal variate per frame, so a seed gives the same frames.
        """
        rng = np.random.default_rng(rng)
        types = frame_types(n, self.gop, start)
        mu, sigma = self._lognormal()
        idx = _type_index(types)
        z = rng.standard_normal(len(types))
        sizes = np.exp(mu[idx] + sigma[idx] * z)
        return types, np.maximum(np.rint(sizes), 1).astype(np.int64)

    def _lognormal(self) -> tuple[np.ndarray, np.ndarray]:
        """``(mu, sigma)`` per frame type, indexed as :data:`FRAME_TYPES` (types absent from the GOP: 0)."""
        mu = np.zeros(len(FRAME_TYPES))
        sigma = np.zeros(len(FRAME_TYPES))
        for i, t in enumerate(FRAME_TYPES):
            if t in self.gop:
                s2 = math.log1p(self.cv[t] ** 2)
                mu[i] = math.log(self.mean[t]) - s2 / 2
                sigma[i] = math.sqrt(s2)
        return mu, sigma

    def mean_frame(self) -> float:
        """Mean frame size over the GOP (bytes)."""
        return sum(self.mean[t] for t in self.gop) / len(self.gop)

    def mean_rate(self) -> float:
        """Mean bit rate (bit/s): the mean frame size over the GOP times 8 times fps."""
        return self.mean_frame() * 8 * self.fps

    def at_rate(self, bps: float) -> "MpegModel":
        """This model with every mean scaled so that :meth:`mean_rate` is *bps* (CVs unchanged)."""
        bps = _positive(bps, "bps")
        k = bps / self.mean_rate()
        return attrs.evolve(self, mean={t: v * k for t, v in self.mean.items()})


def _type_index(types: np.ndarray) -> np.ndarray:
    """Index into :data:`FRAME_TYPES` of each type."""
    idx = np.zeros(len(types), dtype=np.int64)
    for i, t in enumerate(FRAME_TYPES):
        idx[types == t] = i
    return idx


def _positive(value, name: str) -> float:
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ConfigError(f"'{name}' must be a number > 0 (got {value!r})") from None
    if not math.isfinite(v) or v <= 0:
        raise ConfigError(f"'{name}' must be > 0 (got {value!r})")
    return v


def scale_to_rate(sizes, bps: float, fps: float = 30.0):
    """Frame sizes (bytes) scaled by one factor so that their mean rate at *fps* frames/s is *bps* bit/s.

    The result is rounded to whole bytes (int64), which moves the mean rate by
    at most ``4 * fps`` bit/s.  Given an :class:`MpegModel` instead of sizes,
    returns :meth:`MpegModel.at_rate` (its own fps; *fps* is ignored).

    >>> scale_to_rate([3000, 1000, 2000], 480_000, fps=30).tolist()
    [3000, 1000, 2000]
    >>> scale_to_rate([3000, 1000, 2000], 240_000, fps=30).tolist()
    [1500, 500, 1000]
    """
    if isinstance(sizes, MpegModel):
        return sizes.at_rate(bps)
    bps = _positive(bps, "bps")
    fps = _positive(fps, "fps")
    x = np.asarray(sizes, dtype=float)
    if x.ndim != 1 or len(x) == 0 or not np.isfinite(x).all() or (x < 0).any() or x.sum() == 0:
        raise ConfigError("scale_to_rate needs a non-empty list of frame sizes >= 0, not all zero")
    k = bps / (x.mean() * 8 * fps)
    return np.rint(x * k).astype(np.int64)


# ---------------------------------------------------------------- traces

_DIGITS = re.compile(r"[0-9]+")
_TOKEN = re.compile(r"\S+")


def load_trace(path: str | PathLike, unit: str = "bytes") -> np.ndarray:
    """The frame sizes of a trace file, in bytes (int64).

    The format is that of the public MPEG trace libraries: one frame size
    per line as a bare non-negative integer, in bytes (``unit="bytes"``) or
    bits (``unit="bits"``, as some libraries give them; sizes are rounded
    up to whole bytes).  ``#`` starts a comment to the end of the
    line; blank lines are skipped.  The frame types come from a GOP pattern
    (:func:`frame_types`), not from the file.

    Raises
    ------
    ConfigError
        ``file:line:col: ...`` for a line that is not one integer, a size
        beyond :data:`MAX_FRAME_BYTES`, text that is not UTF-8, or a file
        without sizes; ``file: ...`` for a file that cannot be read, and
        for a *unit* other than ``"bytes"`` or ``"bits"``.
    """
    name = str(path)
    _check_unit(unit)
    try:
        data = Path(path).read_bytes()
    except FileNotFoundError:
        raise ConfigError(f"{name}: no such file") from None
    except OSError as exc:
        raise ConfigError(f"{name}: cannot read it ({exc.strerror or exc})") from None
    return parse_trace(data, name, unit)


def _check_unit(unit) -> None:
    if unit not in ("bytes", "bits"):
        raise ConfigError(f"'unit' must be 'bytes' or 'bits' (got {unit!r})")


def parse_trace(data: bytes | str, name: str = "<string>", unit: str = "bytes") -> np.ndarray:
    """:func:`load_trace` of the contents *data*, with *name* as the file name in messages.

    Lines are separated by ``\\n`` (a ``\\r`` before it is ignored); columns
    count characters from 1.
    """
    _check_unit(unit)
    if isinstance(data, bytes):
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            line, col, byte = utf8_error_at(data, exc)
            raise ConfigError(f"{name}:{line}:{col}: not UTF-8 text (byte 0x{byte:02x}); "
                              f"expected one frame size per line") from None
    else:
        text = data
    per = 8 if unit == "bits" else 1
    limit = MAX_FRAME_BYTES * per
    out: list[int] = []
    for ln, raw in enumerate(text.split("\n"), 1):
        body = raw.split("#", 1)[0]
        if ln == 1 and body.startswith("\ufeff"):
            body = " " + body[1:]  # a byte-order mark
        tokens = list(_TOKEN.finditer(body))
        if not tokens:
            continue
        tok = tokens[0].group()
        col = tokens[0].start() + 1
        if not _DIGITS.fullmatch(tok):
            raise ConfigError(f"{name}:{ln}:{col}: {tok[:20]!r} is not a frame size "
                              f"(expected a non-negative integer number of {unit})")
        if len(tok) > 20 or int(tok) > limit:
            raise ConfigError(f"{name}:{ln}:{col}: frame size {tok[:20]}{'...' if len(tok) > 20 else ''} is too "
                              f"large (at most {limit} {unit})")
        if len(tokens) > 1:
            extra = tokens[1]
            raise ConfigError(f"{name}:{ln}:{extra.start() + 1}: expected one frame size per line "
                              f"(found {extra.group()[:20]!r} after {tok})")
        out.append(int(tok))
    if not out:
        raise ConfigError(f"{name}:1:1: no frame sizes (expected one integer number of {unit} per line)")
    sizes = np.array(out, dtype=np.int64)
    return (sizes + 7) // 8 if per == 8 else sizes


# ---------------------------------------------------------------- packets


def packets_of_frame(size: int, mtu: int = 1024, header: int = 26, pad: bool = True) -> np.ndarray:
    """The wire sizes (bytes, int64) of the packets a frame of *size* bytes is cut into.

    The frame is cut into ``ceil(size / mtu)`` payloads of *mtu* bytes (at
    least one, so an empty frame is one packet), each with *header* bytes
    of headers (LRH, BTH and CRC: 26 bytes in Kim et al. [1]_, Table 1).
    Kim et al. send fixed-size packets, "the MTU and the header" (§4), so by
    default the last payload is padded to a full MTU; ``pad=False`` sends
    only the bytes left, as the HCA's own segmentation does
    (:class:`ibfabric.components.hca.TrafficSource`).

    >>> packets_of_frame(2500).tolist()
    [1050, 1050, 1050]
    >>> packets_of_frame(2500, pad=False).tolist()
    [1050, 1050, 478]

    References
    ----------
    .. [1] Kim et al. 2007, §4 and Table 1 (see the module references).
    """
    for value, name, low in ((size, "size", 0), (mtu, "mtu", 1), (header, "header", 0)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
            raise ConfigError(f"'{name}' must be an integer >= {low} (got {value!r})")
    n = max(1, -(-int(size) // int(mtu)))
    out = np.full(n, int(mtu) + int(header), dtype=np.int64)
    if not pad:
        out[-1] = int(size) - (n - 1) * int(mtu) + int(header)
    return out


def protected(frame_type: str, index: int, count: int) -> bool:
    """Whether selective dropping must spare packet *index* (0-based) of the *count* packets of a frame.

    Kim et al. (§3.5) never drop the packets of I frames, nor the first and
    last packets of P and B frames; every other packet of a real-time frame
    may be dropped.  So a frame's last packet always arrives and its arrival
    is that packet's (what :class:`DeadlineStats` assumes).

    >>> [protected("B", k, 4) for k in range(4)]
    [True, False, False, True]
    >>> protected("I", 2, 4)
    True
    """
    if frame_type not in ("I", "P", "B"):
        raise ConfigError(f"frame type must be 'I', 'P' or 'B' (got {frame_type!r})")
    if not 0 <= index < count:
        raise ConfigError(f"packet index {index} is not one of the frame's {count} packets")
    return frame_type == "I" or index == 0 or index == count - 1


def protected_mask(frame_type: str, count: int) -> np.ndarray:
    """:func:`protected` of each of the *count* packets of a frame, as a bool array."""
    if frame_type not in ("I", "P", "B"):
        raise ConfigError(f"frame type must be 'I', 'P' or 'B' (got {frame_type!r})")
    if count < 1:
        raise ConfigError(f"a frame has at least one packet (got {count})")
    mask = np.full(count, frame_type == "I")
    mask[0] = mask[-1] = True
    return mask


# ---------------------------------------------------------------- deadlines


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

    A *stream* is a ``flow``; its *frames* are its messages, in ``msg``
    order.  A frame arrives when the packet of its message with
    ``last=True`` is delivered (selective dropping never drops it, see
    :func:`protected`); other packets are ignored.  Per stream only the
    state of the deadline rule (the next frame's index and running maximum,
    the last deadline and arrival) and the counts and sums are kept, so the
    accumulator can take :attr:`ibfabric.stats.PacketStats.fold_hooks`
    calls (``stats.fold_hooks.append(acc.add)``) and the rest of the log at
    the end (``acc.add(stats.arrays(), now)``).

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
        self.streams: dict[int, _Stream] = {}

    def add(self, log: Mapping[str, np.ndarray], now: float = math.inf) -> "DeadlineStats":
        """Add the frames of *log* (``flow``, ``msg``, ``created``, ``delivered_at``, ``last``, and
        ``cls`` if present, as :meth:`ibfabric.stats.PacketStats.arrays`) whose last packet was
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
        m = np.asarray(log["msg"], dtype=np.int64)[keep]
        c = np.asarray(log["created"], dtype=float)[keep]
        a = delivered[keep]
        o = np.lexsort((a, m, f))
        f, m, c, a = f[o], m[o], c[o], a[o]
        cuts = np.flatnonzero(f[1:] != f[:-1]) + 1
        for lo, hi in zip(np.concatenate(([0], cuts)), np.concatenate((cuts, [len(f)]))):
            self._add_stream(int(f[lo]), m[lo:hi], c[lo:hi], a[lo:hi])
        return self

    def _add_stream(self, flow: int, msg: np.ndarray, created: np.ndarray, arrivals: np.ndarray) -> None:
        st = self.streams.get(flow)
        if st is None:
            st = self.streams[flow] = _Stream()
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
        """Per stream, in ``flow`` order: ``flow``, ``frames`` (measured frames delivered),
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
        return {"flow": np.array(ids, dtype=np.int64), "frames": frames, "missed": missed, "dmp": dmp, "dmt": dmt,
                "miss_time_sum": miss_sum, "miss_time_max": np.array([s.miss_max for s in ss], dtype=float),
                "reordered": np.array([s.reordered for s in ss], dtype=np.int64),
                "last_deadline": np.array([s.last_deadline for s in ss], dtype=float),
                "last_arrival": np.array([s.last_arrival for s in ss], dtype=float)}

    def summary(self) -> dict[str, float | int]:
        """Over all streams: ``streams``, ``frames``, ``missed``, ``dmp`` (missed over frames) and
        ``dmt`` (mean miss time over every missed frame, in the log's unit)."""
        frames = sum(s.counted for s in self.streams.values())
        missed = sum(s.missed for s in self.streams.values())
        total = sum(s.miss_sum for s in self.streams.values())
        return {"streams": len(self.streams), "frames": frames, "missed": missed,
                "dmp": missed / frames if frames else math.nan, "dmt": total / missed if missed else math.nan}


def deadline_stats(log: Mapping[str, np.ndarray], now: float = math.inf, **options) -> dict[str, np.ndarray]:
    """:meth:`DeadlineStats.result` of a whole delivery log (*options*: those of :class:`DeadlineStats`)."""
    return DeadlineStats(**options).add(log, now).result()
