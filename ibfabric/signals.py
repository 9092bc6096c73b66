"""Signals and statistics collectors.

Modules :meth:`~ibfabric.kernel.Module.emit` values on named signals;
listeners subscribed to a signal receive ``(module, signal, value, time)``.
What gets recorded is configuration, not model code: ::

    sim.record("packetReceived", "count", "mean", "max", "histogram", modules="**.h*")

creates one set of collectors per matching module.  Their count, sum,
mean, min, max and stddev become the run's scalars (``module, statistic,
value`` rows); histograms and vectors stay with the recorder, per module:
``rec.per_module[path].hist`` (counts per bin of ``edges``, with underflow
first and overflow last) and ``rec.per_module[path].vector()``.

Hot-path components only emit a signal when somebody listens to it: they
ask :meth:`SignalBus.listened` once, when the run starts.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

import numpy as np

from ibfabric.errors import ConfigError, did_you_mean

if TYPE_CHECKING:  # pragma: no cover
    from ibfabric.kernel import Module

__all__ = ["SignalBus", "Statistic", "Recorder", "STATISTICS"]

Listener = Callable[["Module", str, Any, float], None]


class SignalBus:
    """Routes emitted values to listeners, by signal name and source module."""

    def __init__(self, clock: Callable[[], float]):
        self._clock = clock
        self._all: dict[str, list[Listener]] = defaultdict(list)
        self._by_source: dict[tuple[int, str], list[Listener]] = defaultdict(list)
        self._names: set[str] = set()

    def subscribe(self, signal: str, listener: Listener, source: Module | None = None) -> None:
        """Call *listener* for every emission of *signal* (by *source* only, if given)."""
        self._names.add(signal)
        if source is None:
            self._all[signal].append(listener)
        else:
            self._by_source[(id(source), signal)].append(listener)

    def listened(self, signal: str) -> bool:
        """Whether any listener is subscribed to *signal*."""
        return signal in self._names

    def emit(self, source: Module, signal: str, value: Any) -> None:
        """Call the listeners of *signal*, those of every source then those of *source*.

        Each is called with ``(source, signal, value, time)``, *time* the
        simulation's current time.  Without any listener of *signal* this
        returns at once.
        """
        if signal not in self._names:
            return
        t = self._clock()
        for fn in self._all.get(signal, ()):
            fn(source, signal, value, t)
        for fn in self._by_source.get((id(source), signal), ()):
            fn(source, signal, value, t)


class Statistic:
    """Running statistics of one signal at one module: count, sum, mean, min, max, stddev.

    With ``histogram_edges``, also a histogram (values outside the edges go
    to underflow/overflow counts); with ``vector=True``, every (time, value)
    pair is kept in numpy-backed arrays.
    """

    def __init__(self, histogram_edges: Iterable[float] | None = None, vector: bool = False):
        self.count = 0
        self.sum = 0.0
        self.sumsq = 0.0
        self.min = math.inf
        self.max = -math.inf
        self.edges = None if histogram_edges is None else np.asarray(list(histogram_edges), dtype=float)
        self.hist = None if self.edges is None else np.zeros(len(self.edges) + 1, dtype=np.int64)
        self._vec_t: list[float] | None = [] if vector else None
        self._vec_v: list[float] | None = [] if vector else None

    def collect(self, value: float, time: float = 0.0) -> None:
        """Add *value* (emitted at simulation *time*, kept only by a vector) to the statistics."""
        v = float(value)
        self.count += 1
        self.sum += v
        self.sumsq += v * v
        if v < self.min:
            self.min = v
        if v > self.max:
            self.max = v
        if self.hist is not None:
            self.hist[np.searchsorted(self.edges, v, side="right")] += 1
        if self._vec_t is not None:
            self._vec_t.append(time)
            self._vec_v.append(v)

    @property
    def mean(self) -> float:
        """The mean of the values collected (NaN without any)."""
        return self.sum / self.count if self.count else math.nan

    @property
    def stddev(self) -> float:
        """The sample standard deviation (``n - 1`` in the denominator; NaN with fewer than two values)."""
        if self.count < 2:
            return math.nan
        var = (self.sumsq - self.sum * self.sum / self.count) / (self.count - 1)
        return math.sqrt(max(var, 0.0))

    def vector(self) -> tuple[np.ndarray, np.ndarray]:
        """``(times, values)`` of every value collected, as numpy arrays.

        Raises
        ------
        ~ibfabric.errors.ConfigError
            If the statistic keeps no vector (it was not recorded with
            ``'vector'``).
        """
        if self._vec_t is None:
            raise ConfigError("this statistic records no vector (record it with 'vector')")
        return np.asarray(self._vec_t), np.asarray(self._vec_v)

    def value(self, name: str) -> float:
        """The statistic called *name*: ``count``, ``sum``, ``mean``, ``min``, ``max`` or ``stddev``.

        Every one but ``count`` is NaN when nothing was collected.

        Raises
        ------
        KeyError
            For any other name.
        """
        if name == "count":
            return float(self.count)
        if name in ("sum", "mean", "min", "max", "stddev"):
            v = getattr(self, name)
            return v if self.count else math.nan
        raise KeyError(name)


#: Statistic names :meth:`Recorder` accepts.
STATISTICS = ("count", "sum", "mean", "min", "max", "stddev", "histogram", "vector")


class Recorder:
    """Per-module :class:`Statistic` objects for one signal (what ``sim.record`` creates)."""

    def __init__(self, signal: str, stats: Iterable[str], histogram_edges: Iterable[float] | None = None):
        self.signal = signal
        self.stats = tuple(stats)
        bad = [s for s in self.stats if s not in STATISTICS]
        if bad:
            raise ConfigError(f"unknown statistic '{bad[0]}'{did_you_mean(bad[0], STATISTICS)} (valid: {', '.join(STATISTICS)})")
        if "histogram" in self.stats and histogram_edges is None:
            histogram_edges = np.logspace(0, 7, 29)  # 1 ns .. 10 ms, 4 bins per decade
        self.edges = histogram_edges if "histogram" in self.stats else None
        self.vector = "vector" in self.stats
        self.per_module: dict[str, Statistic] = {}

    def __call__(self, module: Module, signal: str, value: Any, time: float) -> None:
        st = self.per_module.get(module.path)
        if st is None:
            st = self.per_module[module.path] = Statistic(self.edges, self.vector)
        st.collect(value, time)

    def scalars(self) -> list[tuple[str, str, float]]:
        """``(module path, 'signal:statistic', value)`` rows, by module path then in the order recorded.

        Histograms and vectors are not scalars: they are left out.
        """
        rows = []
        for path in sorted(self.per_module):
            st = self.per_module[path]
            for name in self.stats:
                if name in ("histogram", "vector"):
                    continue
                rows.append((path, f"{self.signal}:{name}", st.value(name)))
        return rows
