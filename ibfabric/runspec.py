"""One run of an experiment: :class:`RunSpec`, everything a simulation needs, and its run id.

A run's id hashes what determines its results (the topology and its
content, parameter overrides, time, warm-up, seed), not the names of the
experiment or of its variables, so the same configuration has the same id
in any experiment and a sweep resumes where it stopped.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
from pathlib import Path
from typing import Any

import attrs

from ibfabric.errors import ConfigError

__all__ = ["ExperimentError", "GENERATOR_ERRORS", "RunSpec", "as_text", "generated_ned"]

#: What bad arguments make a topology generator raise.
GENERATOR_ERRORS = (ArithmeticError, LookupError, TypeError, ValueError)


class ExperimentError(ConfigError):
    """An experiment file is unreadable or invalid (message: ``file:line:col: what``)."""


@attrs.frozen
class RunSpec:
    """One run of an experiment: everything a simulation needs, substituted and checked.

    Attributes
    ----------
    experiment : str
        The experiment's name (OMNeT++'s configname).
    topology : str or None
        A shipped topology's name or a file's absolute path; None when generated.
    generator : tuple or None
        ``((key, value), ...)`` sorted by key, with ``('generator', kind)``
        and every parameter of the generator (defaults filled in).
    network : str or None
        Which network of the topology file.
    overrides : tuple
        ``((pattern, value), ...)`` in file order.
    time, warmup : str
        Simulated time and start of the measurement window.
    seed : int
        :func:`~ibfabric.iterations.derive_seed` of the base seed and *repetition*.
    repetition : int
    vars : tuple
        ``((name, value), ...)``: the iteration variables, in file order.
    events : tuple
        The ``[[events]]`` of the experiment, substituted: :class:`ibfabric.scenario.Event` values.
    workload : tuple
        ``(('ideal', bool), ('placement', str), ('spec', str))`` of ``[experiment] workload``, or ``()``:
        the run stops when the workload completes (docs/workloads.md).
    """

    experiment: str
    topology: str | None
    generator: tuple | None
    network: str | None
    overrides: tuple
    time: str
    warmup: str
    seed: int
    repetition: int
    vars: tuple
    events: tuple = ()
    workload: tuple = ()

    def config(self) -> dict:
        """The full configuration as a JSON-able dict.

        ``topology`` is ``{'path': ..., 'sha256': ...}`` for a file,
        ``{'shipped': name, 'sha256': ...}`` for a shipped topology (hashes
        of the file's bytes) and the generator's dict for a generated one.
        """
        if self.generator is not None:
            topology = {k: list(v) if isinstance(v, tuple) else v for k, v in self.generator}
        else:
            path, key = _topology_file(self.topology)
            topology = {key: self.topology, "sha256": _sha256(path)}
        out = {
            "experiment": self.experiment,
            "topology": topology,
            "network": self.network,
            "overrides": [[p, v] for p, v in self.overrides],
            "time": self.time,
            "warmup": self.warmup,
            "seed": self.seed,
            "repetition": self.repetition,
            "vars": dict(self.vars),
        }
        if self.events:  # only then: the run ids of experiments without events stay as they were
            out["events"] = [e.config() for e in self.events]
        if self.workload:  # likewise
            out["workload"] = dict(self.workload)
            spec = out["workload"]["spec"]
            if spec.endswith(".goal") and os.path.isfile(spec):
                out["workload"]["sha256"] = _sha256(Path(spec))
        return out

    @property
    def run_id(self) -> str:
        """16 hex digits hashing what determines the results (not the names of experiment and variables).

        The same configuration has the same id in any experiment, so a sweep
        that stopped resumes where it was.
        """
        cfg = {k: v for k, v in self.config().items() if k not in ("experiment", "repetition", "vars")}
        return _json_sha256(cfg)[:16]

    @property
    def iterationvars(self) -> str:
        """OMNeT++'s ``iterationvars``: ``'$load=0.1, $routing=updn'``; ``''`` without variables."""
        return ", ".join(f"${name}={as_text(v)}" for name, v in self.vars)

    def simulation(self, overrides=(), plugins=()):
        """This run's :class:`~ibfabric.simulation.Simulation`, built but not run, with its events
        scheduled: what a sweep runs (and what :mod:`ibfabric.runcheck` builds to check it).

        *overrides* (``(pattern, value)`` pairs) change the run: each replaces the run's own value of
        the same pattern and comes before the others (the first match wins); *plugins* are loaded
        besides the installed ones (as :class:`~ibfabric.simulation.Simulation` takes them)."""
        from ibfabric.simulation import Simulation

        mine = {k for k, _ in overrides}
        own = [o for o in self.overrides if o[0] not in mine]
        sim = Simulation(self.topology_source(), overrides=[*overrides, *own], network=self.network,
                         seed=self.seed, warmup=self.warmup, plugins=plugins)
        sim.apply_events(self.events)  # [[events]]: failures, restores, traffic changes (ibfabric.scenario)
        if self.workload:
            from ibfabric.components.hca.workload import Workload
            from ibfabric.plugins.workloads import schedule_from_spec

            w = dict(self.workload)
            schedule = schedule_from_spec(sim.plugins, w["spec"], len(sim.hosts))
            Workload(sim, schedule, placement=w["placement"], stop=True, ideal=w["ideal"])
        return sim

    def topology_source(self) -> str:
        """What :class:`~ibfabric.simulation.Simulation` takes: a file's path, or the generated fabric's NED text.

        A generated network is named ``<kind>_<hash8>`` after its generator
        arguments; the text is the same for the same arguments.
        """
        if self.generator is None:
            return str(_topology_file(self.topology)[0])
        try:
            return generated_ned(self.generator)
        except GENERATOR_ERRORS as exc:
            raise ExperimentError(f"generator {dict(self.generator)['generator']!r}: {exc}") from None


def _topology_file(topology: str) -> tuple[Path, str]:
    """``(path, 'path' or 'shipped')`` of a file or shipped topology."""
    from ibfabric.topologies import SHIPPED, shipped

    if os.path.isabs(topology) or topology not in SHIPPED:
        return Path(topology), "path"
    return shipped(topology), "shipped"


def _sha256(path: Path) -> str:
    try:
        st = path.stat()
        return _sha256_cached(str(path), st.st_mtime_ns, st.st_size)
    except OSError:
        raise ExperimentError(f"{path}: no such file") from None


@functools.lru_cache(maxsize=256)
def _sha256_cached(path: str, mtime_ns: int, size: int) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


@functools.lru_cache(maxsize=16)
def generated_ned(generator: tuple) -> str:
    from ibfabric.topologies.generators import KINDS, to_ned

    args = dict(generator)
    kind = args.pop("generator")
    return to_ned(KINDS[kind](**args), name=f"{kind}_{_json_sha256(dict(generator))[:8]}")


def _json_sha256(obj: Any) -> str:
    """The sha256 hex digest of *obj* as canonical JSON (sorted keys, no blanks)."""
    return hashlib.sha256(json.dumps(obj, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def as_text(v: Any) -> str:
    """A value inside a longer string: ``str()`` (floats from ranges carry no float noise)."""
    return v if isinstance(v, str) else str(v)
