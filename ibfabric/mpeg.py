"""MPEG-2 video streams, as Kim et al. (2007) use them.

Kim et al. (2007, §4) [1]_ drive their real-time traffic with MPEG-2 VBR streams
of 30 frames/s, each frame cut into fixed-size packets of one MTU plus the
headers.  This module gives the pieces: a synthetic frame-size model
(:class:`MpegModel`, after Krunz and Tripathi [2]_) and a frame-size trace reader (:func:`load_trace`),
segmentation (:func:`packets_of_frame`) and the protection flags of
selective dropping (:func:`protected`).  The QoS figures measured on such
streams, DMP and DMT, are in :mod:`ibfabric.deadlines`.

References
----------
.. [1] E. J. Kim, K. H. Yum, C. R. Das, M. Yousif and J. Duato, "Exploring
   IBA Design Space for Improved Performance," IEEE Trans. Parallel and
   Distributed Systems, vol. 18, no. 4, pp. 498-510, 2007 (§3.5 selective
   packet dropping, §4 workload).
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

__all__ = ["DEFAULT_GOP", "FRAME_TYPES", "MAX_FRAME_BYTES", "PRESETS", "MpegModel", "frame_types", "load_trace",
           "packets_of_frame", "parse_trace", "protected", "protected_mask", "scale_to_rate"]

#: The MPEG frame types.
FRAME_TYPES = "IPB"
#: The common GOP (N = 12 frames, M = 3: an anchor every third frame), in display order.
DEFAULT_GOP = "IBBPBBPBBPBB"
#: The largest frame size a trace may give (bytes).
MAX_FRAME_BYTES = 1 << 32

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
    (:class:`ibfabric.components.hca.sources.TrafficSource`).

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
    is that packet's (what :class:`ibfabric.deadlines.DeadlineStats` assumes).

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
