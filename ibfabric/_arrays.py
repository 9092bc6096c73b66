"""Two numpy functions as a run uses them, without importing :mod:`numpy.ma`.

numpy 2's :func:`numpy.unique` looks at ``np.ma`` on every call (to refuse
masked arrays), and :func:`numpy.percentile` calls it; the first look
imports :mod:`numpy.ma`, 8-12 ms of every process that builds a fabric
(the route check) or summarises a run (latency quantiles).  These give the
same values, bit for bit, for what ibfabric passes them: one-dimensional
integer arrays to :func:`unique`, one-dimensional float arrays to
:func:`percentile` (numpy's default ``linear`` method).
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["percentile", "unique"]


def unique(a) -> np.ndarray:
    """The sorted distinct values of integer array *a* (flattened), as :func:`numpy.unique` gives them."""
    s = np.sort(np.asarray(a).ravel())
    if s.size < 2:
        return s
    return s[np.concatenate(([True], s[1:] != s[:-1]))]


def percentile(values, q: float) -> float:
    """The *q* percentile (``0 <= q <= 100``) of float array *values*, as
    ``float(numpy.percentile(values, q))`` computes it (linear interpolation between the two
    order statistics around rank ``(n - 1) * q / 100``, the same floating-point operations)."""
    a = np.asarray(values)
    n = a.shape[0] if a.ndim == 1 else 0
    if n == 0 or a.dtype != np.float64 or not 0 <= q <= 100:
        return float(np.percentile(a, q))  # (what numpy says of anything else)
    v = (n - 1) * (q / 100)  # numpy: q / 100, then (n - 1) * q
    if v >= n - 1:  # numpy takes the last order statistic twice, stored as index -1
        lo = hi = n - 1
        kth = {0, -1}
    else:
        lo = math.floor(v)
        hi = lo + 1
        kth = {0, -1, lo, hi}
    # the same partition as numpy's (its kth: the sorted distinct 0, -1 and the two indexes), so
    # that equal values of different bits (0.0 and -0.0) land where numpy's land
    part = np.partition(a, np.array(sorted(kth), dtype=np.intp))
    if math.isnan(part[-1]):  # (a NaN sorts last)
        return math.nan
    below, above = float(part[lo]), float(part[hi])
    t = v - lo if hi != lo else v + 1  # numpy's weight: from the index it stored (-1 for the last)
    diff = above - below
    return above - diff * (1 - t) if t >= 0.5 else below + diff * t
