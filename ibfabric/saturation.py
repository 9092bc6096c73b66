"""Saturation throughput by a bounded search on offered load.

The papers read a fabric's throughput where accepted traffic stops
following offered traffic and latency rises sharply (Martínez et al. 2003,
§5.2).  For every configuration of an experiment (every assignment of its
iteration variables except the searched one, and every repetition) the
search runs the experiment at chosen offered loads:

- a probe is **saturated** when the run says so (its source backlog grew
  through the window, see :mod:`ibfabric.measure`), when its accepted load
  is below ``threshold`` times its offered load, or when it deadlocked;
- it first probes ``high`` (not saturated there: the throughput is at least
  what ``high`` accepted, and the search stops) and ``low`` (saturated
  there: the fabric saturates below ``low``), then bisects the bracket
  ``[highest unsaturated load, lowest saturated load]`` until it is at most
  ``tolerance`` wide or ``max_runs`` probes have run;
- the **saturation throughput** is the largest accepted load of any probe,
  and the **saturation load** is the bracket.  Past saturation accepted
  load may stay level or fall (head-of-line blocking spreads a congestion
  tree: on ``irregular16`` with input-queued switches it falls from 0.157 to
  about 0.10), so the peak, reached next to the saturation load, is the
  throughput the papers read off their curves;
- the **accepted load at saturation** is what the highest unsaturated probe
  accepted: the point where the curve turns up.  Under permutation traffic
  the peak can lie far past it (the flows that do not cross the saturated
  link keep growing with the offered load; deterministic bit-reversal on 64
  switches accepts 2.9 times its saturation point at ``high``), and the
  peak then depends on ``high``: compare this one there.

Every probe is an ordinary run of the sweep machinery (its id hashes its
configuration), so a search that was interrupted resumes without running a
probe twice, and searches of different configurations run in parallel.
The experiment file names the search in its ``[saturation]`` table::

    [saturation]
    variable = "load"      # the variable that is the offered load (``"**.load" = "${load}"``)
    low = 0.05
    high = 1.0
    tolerance = 0.01
    max_runs = 8
    threshold = 0.95

The variable need not be listed in ``[iterations]``: the search sets it in
every probe, within ``low`` and ``high`` (a sweep of the file runs those two).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import attrs

from ibfabric.errors import ConfigError

__all__ = ["Search", "saturation_search", "is_saturated"]


def is_saturated(summary: dict[str, Any] | None, threshold: float) -> bool:
    """Whether a probe's summary is past saturation (None, a failed run, counts as saturated)."""
    if summary is None or summary.get("deadlock"):
        return True
    offered = summary.get("offered_load") or 0.0
    return bool(summary.get("saturated")) or summary.get("accepted_load", 0.0) < threshold * offered


@attrs.define
class Search:
    """The state of one configuration's search."""

    point: dict
    repetition: int
    low: float
    high: float
    tolerance: float
    max_runs: int
    threshold: float
    probes: list = attrs.field(factory=list)  # (load, offered, accepted, saturated, run_id)
    lo: float | None = None  # highest unsaturated load probed
    hi: float | None = None  # lowest saturated load probed
    failed: str | None = None

    def next_load(self) -> float | None:
        """The next load to probe, or None when the search is over."""
        if self.failed is not None or len(self.probes) >= self.max_runs:
            return None
        if not self.probes:
            return self.high
        if self.hi is None:  # not saturated at high
            return None
        if self.lo is None:
            return self.low if all(p[0] != self.low for p in self.probes) else None
        if self.hi - self.lo <= self.tolerance * (1 + 1e-9):
            return None
        return _round(0.5 * (self.lo + self.hi), self.tolerance)

    def add(self, load: float, summary: dict | None, run_id: str, error: str | None = None) -> None:
        """Record the probe at offered *load* and narrow the bracket.

        Parameters
        ----------
        load : float
            The offered load probed.
        summary : dict or None
            The run's summary, or None when it has none (it failed or did
            not run).
        run_id : str
            The probe's run id.
        error : str, optional
            Why the run has no summary.  A run without a summary whose error
            does not start with ``deadlock`` ends the search as failed; any
            other probe raises ``hi`` (saturated, see :func:`is_saturated`)
            or ``lo`` (not saturated).
        """
        sat = is_saturated(summary, self.threshold)
        offered = summary.get("offered_load") if summary else None
        accepted = summary.get("accepted_load") if summary else None
        self.probes.append((load, offered, accepted, sat, run_id))
        if summary is None and error is not None and not error.startswith("deadlock"):
            self.failed = error
            return
        if sat:
            self.hi = load if self.hi is None else min(self.hi, load)
        else:
            self.lo = load if self.lo is None else max(self.lo, load)

    def result(self) -> dict[str, Any]:
        """The search's row: the configuration's variables, then its outcome.

        Returns
        -------
        dict
            The point's variables, ``repetition``, ``status`` (``ok``,
            ``not saturated at high``, ``saturated at low``, ``max_runs
            reached`` or ``failed``), ``saturation_load_low`` and
            ``saturation_load_high`` (the bracket, None on an open side),
            ``throughput`` (the largest accepted load of any probe),
            ``accepted_at_saturation`` (what the highest unsaturated probe
            accepted, None without one), ``probes`` and ``error``.
        """
        accepted = [p[2] for p in self.probes if p[2] is not None]
        if self.failed is not None:
            status = "failed"
        elif self.hi is None:
            status = "not saturated at high"
        elif self.lo is None:
            status = "saturated at low"
        elif self.hi - self.lo <= self.tolerance * (1 + 1e-9):
            status = "ok"
        else:
            status = "max_runs reached"
        return {
            **self.point,
            "repetition": self.repetition,
            "status": status,
            "saturation_load_low": self.lo,
            "saturation_load_high": self.hi,
            "throughput": max(accepted) if accepted else None,
            "accepted_at_saturation": next((p[2] for p in self.probes if p[0] == self.lo), None),
            "probes": len(self.probes),
            "error": self.failed,
        }


def _round(x: float, tolerance: float) -> float:
    """*x* rounded to a decimal a tenth of the tolerance fine (probe loads read well and hash stably)."""
    digits = max(0, -math.floor(math.log10(tolerance)) + 1)
    return round(x, digits)


def saturation_search(sweep, *, jobs: int = 1, dask: str | None = None, retry_failed: bool = False,
                      reuse_stale: bool = False, progress: Callable | None = None) -> list[dict[str, Any]]:
    """Search the saturation of every configuration of ``sweep.experiment``; one dict per (configuration, repetition).

    Probes of all configurations advance in rounds: each round runs the next
    probe of every search still open (in parallel, through :meth:`Sweep.run <ibfabric.sweep.Sweep.run>`).
    """
    exp = sweep.experiment
    cfg = exp.saturation
    if cfg is None:
        raise ConfigError(f"{exp.path or exp.name}: no [saturation] table (variable, low, high...) in the experiment")
    var = cfg["variable"]
    # every configuration builds at both ends of the search, or nothing runs (ibfabric.runcheck)
    exp.check([exp.run({**point, var: load}, rep) for point in exp.points(exclude=(var,))
               for load in (cfg["high"], cfg["low"]) for rep in range(exp.repeat)])
    searches = [
        Search(point, rep, cfg["low"], cfg["high"], cfg["tolerance"], cfg["max_runs"], cfg["threshold"])
        for point in exp.points(exclude=(var,))
        for rep in range(exp.repeat)
    ]
    while True:
        round_ = []
        for s in searches:
            load = s.next_load()
            if load is not None:
                round_.append((s, load, exp.run({**s.point, var: load}, s.repetition)))
        if not round_:
            break
        sweep.run([spec for _, _, spec in round_], jobs=jobs, dask=dask, retry_failed=retry_failed,
                  reuse_stale=reuse_stale, progress=progress)
        for s, load, spec in round_:
            rec = sweep.record(spec.run_id) or {}
            summary = sweep.summary(spec.run_id) if rec.get("status") in ("ok", "deadlock") else None
            if summary is not None and not summary.get("packets_generated"):
                raise ConfigError(_no_traffic(exp, var, load, spec, summary))
            s.add(load, summary, spec.run_id, rec.get("error") or "not run")
    return [s.result() for s in searches]


def _no_traffic(exp, var: str, load: float, spec, summary: dict) -> str:
    """Why a search cannot go on: its probe at *load* generated no packet (its warnings say why)."""
    from ibfabric.checks import NO_TRAFFIC

    cause = next((w for w in summary.get("warnings", ()) if w.startswith(NO_TRAFFIC)),
                 "its hosts generated no packet: is '**.traffic' set, and does '**.load' follow the variable?")
    where = f" ({spec.iterationvars})" if spec.iterationvars else ""
    return f"{exp.path or exp.name}: saturation search stopped: the probe at {var} = {load:g}{where} generated no packet: {cause}"
