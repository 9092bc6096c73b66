"""Checking every run of an experiment before any of them runs.

Reading an experiment file checks what the file says (keys, types,
variables, durations, topology names).  Whether a run would *build* is
known only against the network: a misspelt parameter path, a routing
engine that does not exist, an MTU of 0, a link speed ``XDR``, an event
target ``sw999``.  :class:`RunCheck` finds those before anything runs
(``ibfabric sweep``, ``sweep --dry-run`` and ``saturation`` call
:meth:`Experiment.check <ibfabric.experiment.Experiment.check>`), never
simulating, and cheaply enough for thousands of runs:

- the first run on each topology (a file and network, or a generator's
  arguments but its seed: another seed of a generated fabric has the same
  modules) is **built** as a sweep would build it: every parameter pattern
  is matched against that network and every value checked by the modules
  that read it (an MTU of 0, a speed ``XDR``...); its events' targets are
  looked up;
- a run with a value no run checked before is **elaborated** with its
  values (their types and units: ``"80"`` for a time), and a value naming a
  plugin (``routing``, ``arbiter``, ``traffic``...) is looked up in its
  registry, once per distinct value: a 1,000-run study of nine loads and two
  routings on one topology costs one build and ten elaborations;
- a run with events no run of its topology had gets their targets looked
  up in that topology's built run.

Every run built or elaborated is a real run of the experiment (variables
that vary together stay together), so the check refuses only what a run
would refuse.  What it leaves to the runs: a value of an iteration list that
only the modules reading it would refuse (an MTU of 300 in a list), a value
that fails only next to another, a routing engine that fails on one seed of
a generated fabric: those runs fail when they run, recorded as failed runs.

An error names the key or value at fault in the experiment file
(``file:line:col``), not the place in a ``.ned`` file where the module that
read it was declared, and the run's variables when the value came from
them.
"""

from __future__ import annotations

import fnmatch
import re
import warnings
from collections.abc import Iterable
from typing import Any

import attrs

from ibfabric.errors import IbfabricError
from ibfabric.runspec import ExperimentError, RunSpec, as_text

__all__ = ["RunCheck"]

_LOCATION = re.compile(r"^(?:<[^>]*>|\S+):\d+:\d+: ")
_OVERRIDE = re.compile(r"^<override (?P<p>.+?)>:\d+:\d+: ")
_UNMATCHED = re.compile(r"override '(?P<p>.+?)' matches no parameter")
_QUOTED = re.compile(r"'([^'\s]+)'")
_VAR = re.compile(r"^\$\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}$")


#: Parameters that name a plugin, and the registry of :class:`~ibfabric.plugins.PluginSet` that holds it.
PLUGIN_PARAMETERS = {
    "routing": "routing_engines",
    "multicastRouting": "multicast_routing_engines",
    "arbiter": "vl_arbiters",
    "dropper": "packet_droppers",
    "replication": "replication_engines",
    "pathSelector": "path_selectors",
    "traffic": "traffic_patterns",  # "" = no traffic
}


class RunCheck:
    """What :meth:`check` found good so far for one experiment, so that checking again is cheap."""

    def __init__(self, experiment):
        self.exp = experiment
        self._built: set[tuple] = set()  # topology structures built
        self._good: set[tuple[str, str]] = set()  # (pattern, value) of a run built or elaborated
        self._events: set[tuple] = set()  # (topology structure, events) applied
        self._plugins = None

    def check(self, specs: Iterable[RunSpec]) -> None:
        """Check *specs*; raise :class:`~ibfabric.runspec.ExperimentError` for the first run that would
        not build, at the key or value at fault."""
        sims: dict[tuple, Any] = {}  # a built simulation per structure, for event targets (dropped at the end)
        with warnings.catch_warnings():  # what looks wrong but runs is the runs' business
            warnings.simplefilter("ignore")
            for spec in specs:
                self._spec(spec, sims)

    def _spec(self, spec: RunSpec, sims: dict) -> None:
        key = _structure(spec)
        if key not in self._built:
            sims[key] = self._build(spec)
            self._built.add(key)
            self._good.update(spec.overrides)
        else:
            new = [(p, v) for p, v in spec.overrides if (p, v) not in self._good]
            if new:
                self._values(spec, new)
                self._good.update(new)
        if spec.events and (key, spec.events) not in self._events:
            if key not in sims:
                sims[key] = self._build(spec)
            try:
                sims[key].apply_events(spec.events)
            except IbfabricError as exc:
                raise self._error(spec, exc, [], events=True) from None
            self._events.add((key, spec.events))

    def _values(self, spec: RunSpec, new: list[tuple[str, str]]) -> None:
        """Elaborate *spec*'s network with its values, and look up the plugins its *new* values name."""
        from ibfabric.ned_like import OverrideSet
        from ibfabric.plugins import PluginSet
        from ibfabric.topologies import load_network

        if self._plugins is None:
            self._plugins = PluginSet.load()
        try:
            load_network(spec.topology_source(), network=spec.network, library=self._plugins.type_library(),
                         overrides=OverrideSet(list(spec.overrides)))
        except IbfabricError as exc:  # the topology elaborated with the other values: one of these is at fault
            raise self._error(spec, exc, new if len(new) == 1 else _guessed(exc, new)) from None
        for pattern, value in new:
            role = PLUGIN_PARAMETERS.get(pattern.rpartition(".")[2])
            name = _plain(value)
            if role is None or name is None or (name == "" and role == "traffic_patterns"):
                continue
            try:
                getattr(self._plugins, role).get(name)
            except IbfabricError as exc:
                raise self._error(spec, exc, [(pattern, value)]) from None

    def _build(self, spec: RunSpec):
        """*spec*'s simulation without its events (:meth:`_spec` applies them)."""
        try:
            return attrs.evolve(spec, events=()).simulation()
        except IbfabricError as exc:  # a value or the topology itself: the message tells which, if anything
            raise self._error(spec, exc, _guessed(exc, spec.overrides)) from None

    # ------------------------------------------------------------ placing the error

    def _error(self, spec: RunSpec, exc: Exception, culprit: list, *, events: bool = False) -> ExperimentError:
        """*exc* of checking *spec*, placed at the parameter at fault (*culprit*: ``[(pattern, value)]``,
        or ``[]`` when none is known), else at the topology (an error of the topology itself keeps its
        own place in a ``.ned`` file)."""
        from ibfabric.plugins.registry import one_line

        message = one_line(exc)
        context = f" (with {spec.iterationvars})" if spec.iterationvars else ""
        if events:  # Event.apply put the [[events]] entry's place in front
            return ExperimentError(message + (context if _LOCATION.match(message) else ""))
        pattern = culprit[0][0] if culprit else None
        source = self.exp.parameter_source(pattern) if pattern is not None else None
        if source is None:
            topology = ("experiment", "topology")
            return ExperimentError(f"{self.exp.locate(topology, value=True)}: {message}{context}")
        path, template = source
        m = _OVERRIDE.match(message)
        message = message[m.end():] if m else _LOCATION.sub("", message, count=1)
        if _UNMATCHED.search(message):  # the key is wrong, not the value
            return ExperimentError(f"{self.exp.locate(path)}: {message}")
        var = _VAR.match(template) if isinstance(template, str) else None
        if var is not None and var.group(1) in self.exp.variables:  # the value is written in [iterations]
            where = self.exp.locate(("iterations", var.group(1)), value=True)
            value = as_text(dict(spec.vars)[var.group(1)])
            return ExperimentError(f"{where}: {message} (for '{pattern}', with ${var.group(1)}={value})")
        uses_vars = isinstance(template, str) and "${" in template
        return ExperimentError(f"{self.exp.locate(path, value=True)}: {message}{context if uses_vars else ''}")


def _guessed(exc: Exception, overrides) -> list[tuple[str, str]]:
    """``[(pattern, value)]`` of the override *exc* is most likely about, or ``[]`` (:func:`_guess`)."""
    from ibfabric.plugins.registry import one_line

    pattern = _guess(one_line(exc), tuple(overrides))
    return [(p, v) for p, v in overrides if p == pattern][:1]


def _guess(message: str, overrides: tuple) -> str | None:
    """The override a build error is most likely about: the one its message names (``<override P>``,
    ``override 'P'``), else one whose value the message quotes (an unknown plugin name), else one whose
    parameter it quotes (``'mtu' must be ...``)."""
    for rx in (_OVERRIDE, _UNMATCHED):
        m = rx.search(message)
        if m is not None and any(p == m.group("p") for p, _ in overrides):
            return m.group("p")
    quoted = _QUOTED.findall(message)
    for name in quoted:
        for pattern, value in overrides:
            if value.strip().strip('"') == name:
                return pattern
    for name in quoted:
        for pattern, _ in overrides:
            if fnmatch.fnmatchcase(name, pattern.rpartition(".")[2]):
                return pattern
    return None


def _structure(spec: RunSpec) -> tuple:
    """What a run's modules and their names depend on: the topology file and network, or the generator's
    arguments but its seed."""
    if spec.generator is not None:
        return tuple((k, v) for k, v in spec.generator if k != "seed"), spec.network
    return spec.topology, spec.network


def _plain(value: str) -> str | None:
    """The name an override value gives (``updn`` or ``"updn"``), None for an expression."""
    value = value.strip()
    m = re.fullmatch(r'"([^"\\]*)"', value)
    if m is not None:
        return m.group(1)
    return value if re.fullmatch(r"[A-Za-z0-9_.+-]+", value) else None
