"""How long the subnet manager computes routes, in simulated time.

After a topology change the subnet manager explores the subnet, computes
new forwarding tables and distributes them; Bermúdez et al. (2006, §4.2,
Figs. 10-11) [1]_ show that the computation dominates that timeline and that
it orders the engines: DR slowest, then FERa, PIRa shortest, and a hybrid's
first (PIRa) phase as short as PIRa alone.  This module turns a routing
engine's result into that computation time.

Three models:

``model="ops"`` (deterministic; the paper's Fig. 10 from operation counts)
    Every counted operation of every engine costs the same :data:`OP_NS`
    (564.32 ns: one operation of this machine's global fit, below), so the
    ratio between two engines' times is the ratio of their operation
    counts: what the algorithms do, not how fast our implementation of each
    runs.  A hybrid's phases are priced at the same cost.
``model="work"`` (the default; deterministic)
    Every built-in routing engine counts the elementary operations it did
    in ``tables.info["work"]`` (``visits``, ``relaxations``, ``entries``,
    ``checks``; their meaning per engine is in docs/routing.md,
    "Computation time") and their sum in ``tables.info["work_total"]``.
    The time is ``work_total x step_ns``.  The same fabric and options give
    the same counts on any machine, so simulations stay bit-reproducible.
``model="measured"``
    The engine's measured CPU time (*measured_s*, e.g. ``time.process_time``
    around the engine call).  Results then depend on the machine and its
    load and are **not** bit-reproducible.

Calibration
-----------
``python -m bench.calibrate_sm_cost`` (2026-11-22, AMD EPYC, 2 cores,
Python 3.11.7, numpy 2.4.6, 1-minute load average 6.1 from other
jobs) routed the 5 shipped irregular fabrics and 3 random irregular fabrics
of each of 8, 16, 24, 32, 48 and 64 four-port switches (3 switch links and
1 host per switch, seeds 1-3) with 14 engine configurations, measured each
call's CPU time (best of 3) and fitted ``log cpu = log work + log step``.
One cost per engine (:data:`STEP_NS_BY_ENGINE`) orders 96.5 % of the
(fabric, engine pair) comparisons as the measured CPU times do; one global
cost (:data:`STEP_NS`, 564 ns) 85.7 %, because our engines differ in how
much of their work runs in vectorised numpy calls (160-290 ns per counted
operation for minhop, spf, dor) or in Python loops (about 1.1 us for
PIRa's heap and FERa's searches).  The per-engine cost is therefore the
default; :data:`STEP_NS` serves engines not calibrated (ftree, dnup,
multipath, file, third-party engines).  Both order PIRa < FERa < DR on
every fabric, as their measured times do.  The model is proportional,
as the issue asks: on 8-switch fabrics it leaves out about 0.5 ms of
fixed per-call Python overhead (measured / modelled spread: a factor of
1.9 per engine, 2.4 global, geometric standard deviation).  Recalibrate
by running the script and copying its ``STEP_NS`` lines here.

References
----------
.. [1] A. Bermúdez, R. Casado, F. J. Quiles, J. Duato, "Fast Routing
   Computation on InfiniBand Networks", IEEE TPDS 17(3), 2006, §3.2
   (PIRa's n(n-1)/2 interactions), §2.3 (FERa, O(n^3)), §4.2, Figs. 10-11.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ibfabric.errors import ConfigError

__all__ = ["OP_NS", "STEP_NS", "STEP_NS_BY_ENGINE", "MODELS", "compute_time_ns", "engine_key", "step_ns_for"]

#: Models of :func:`compute_time_ns`.
MODELS = ("ops", "work", "measured")

#: One cost per counted operation for every engine (ns), fitted on all runs.
STEP_NS = 564.32

#: Cost of one counted operation (a visit, a relaxation, an entry, a check) of
#: any engine in the ``ops`` model (ns): the global fit, :data:`STEP_NS`.
OP_NS = STEP_NS

#: Cost per counted operation of each calibrated engine (ns).  A hybrid is
#: priced phase by phase: PIRa's cost, the final engine's, and
#: ``coexistence`` for its coexistence check (fitted on the hybrids' CPU time
#: minus PIRa's and the final engine's on the same fabric).
STEP_NS_BY_ENGINE: Mapping[str, float] = {
    "pira": 1132.02,
    "fera": 1146.09,
    "dr": 664.08,
    "updn": 814.44,
    "updn-tree": 387.83,
    "minhop": 253.97,
    "spf": 162.98,
    "sssp": 716.47,
    "dfsssp": 1013.18,
    "lash": 1138.40,
    "dor": 291.80,
    "fa": 740.61,
    "coexistence": 214.60,
}

_PHASES = ("provisional", "final", "coexistence")


def engine_key(tables: Any) -> str:
    """The calibration key of a table set: its engine, ``hybrid+<final>`` for a hybrid."""
    engine = str(tables.engine)
    if engine == "hybrid":
        return f"hybrid+{tables.info.get('final_engine', 'fera')}"
    return engine


def step_ns_for(key: str, per_engine: bool = True) -> float:
    """The calibrated cost per operation of engine *key* (ns); :data:`STEP_NS` if not calibrated or not *per_engine*."""
    if per_engine and STEP_NS_BY_ENGINE.get(key, 0) > 0:
        return float(STEP_NS_BY_ENGINE[key])
    return float(STEP_NS)


def compute_time_ns(
    tables: Any,
    model: str = "work",
    step_ns: float | None = None,
    measured_s: float | None = None,
    *,
    phase: str | None = None,
    per_engine: bool = True,
) -> int:
    """Simulated time (integer ns) the subnet manager spends computing *tables*.

    Parameters
    ----------
    tables : ForwardingTables
        A routing engine's result, with ``info["work_total"]`` (every
        built-in engine sets it).
    model : {"work", "ops", "measured"}
        ``work``: ``work x step``, deterministic.  ``ops``: ``work x OP_NS``,
        the same cost for every engine and phase (*step_ns* replaces
        :data:`OP_NS`).  ``measured``: *measured_s* seconds of CPU time, not
        reproducible.
    step_ns : float, optional
        Cost of one counted operation; default the calibrated cost of the
        engine (of the phase's engine with *phase*), :data:`STEP_NS` for an
        engine not calibrated or with ``per_engine=False``.
    measured_s : float, optional
        The engine's measured CPU time, for ``model="measured"``.
    phase : {"provisional", "final", "coexistence"}, optional
        For a hybrid's tables: the time of one phase only (PIRa's
        provisional tables, the final engine's, the check that both sets
        coexist), priced at that phase's engine cost.  The provisional phase
        is exactly PIRa's time on the same fabric.  Without *phase*, a
        hybrid's time is the sum of its phases (unless *step_ns* or
        ``per_engine=False`` prices all its work at one cost).
    per_engine : bool
        Use the per-engine calibration (default) or the global one.

    Returns
    -------
    int
        Nanoseconds, rounded to the nearest integer.

    Raises
    ------
    ConfigError
        For an unknown model or phase, a negative step, ``measured`` without
        *measured_s*, or tables that carry no work count.

    Examples
    --------
    >>> from ibfabric.topologies.generators import bermudez2006_fig1
    >>> from ibfabric.plugins.routing import pira
    >>> t = pira.compute(bermudez2006_fig1(), {"father": "highest-port"})
    >>> t.info["work_total"]
    157
    >>> compute_time_ns(t, step_ns=1000.0)
    157000
    >>> compute_time_ns(t, "ops") == round(157 * OP_NS)
    True
    >>> compute_time_ns(t, "measured", measured_s=0.0025)
    2500000
    """
    if model not in MODELS:
        raise ConfigError(f"'smComputeTime' must be one of ({', '.join(MODELS)}) (got {model!r})")
    if model == "measured":
        if measured_s is None or not measured_s >= 0:
            raise ConfigError(f"smComputeTime = measured needs the engine's measured CPU time (got {measured_s!r})")
        return int(round(float(measured_s) * 1e9))
    info = getattr(tables, "info", None) or {}
    if "work_total" not in info:
        raise ConfigError(f"routing engine '{getattr(tables, 'engine', '?')}' reports no work "
                          "(tables.info['work_total']); use smComputeTime = measured")
    key = engine_key(tables)
    work = int(info["work_total"])
    if model == "ops":
        per_engine = False
        step_ns = OP_NS if step_ns is None else step_ns
    if phase is None and "work_phases" in info and step_ns is None and per_engine:
        return sum(compute_time_ns(tables, phase=ph) for ph in _PHASES)
    if phase is not None:
        if phase not in _PHASES:
            raise ConfigError(f"'phase' must be one of ({', '.join(_PHASES)}) (got {phase!r})")
        phases = info.get("work_phases")
        if phases is None:
            raise ConfigError(f"tables of engine '{tables.engine}' have no phases (only hybrid's do)")
        work = int(phases[phase])
        key = {"provisional": "pira", "final": str(info.get("final_engine", "fera")), "coexistence": "coexistence"}[phase]
    if step_ns is None:
        step = step_ns_for(key, per_engine)
    else:
        step = float(step_ns)
        if not step >= 0:
            raise ConfigError(f"'step_ns' must be >= 0 (got {step_ns!r})")
    return int(round(work * step))
