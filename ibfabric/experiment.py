"""Experiment files: a parameter study in TOML, expanded into runs (OMNeT++'s configurations and iterations).

An experiment names a topology, sets model parameters by wildcard path and
declares iteration variables (their values: :mod:`ibfabric.iterations`);
every combination of their values, repeated ``repeat`` times, is one run::

    [experiment]
    name = "loadsweep"
    topology = "irregular16"
    time = "300us"
    repeat = 3

    [parameters]
    "**.traffic" = "uniform"
    "**.load" = "${load}"

    [iterations]
    load = "0.1..0.9 step 0.1"

``[[events]]`` (optional) is a scenario of failures and traffic changes
(:mod:`ibfabric.scenario`), substituted per run into
:attr:`RunSpec.events <ibfabric.runspec.RunSpec.events>`.

:meth:`Experiment.runs` gives one :class:`~ibfabric.runspec.RunSpec` per
run; nothing here simulates.  Errors are
:class:`~ibfabric.runspec.ExperimentError`, one line starting with
``file:line:col:`` at the key or value the user wrote (found by
:mod:`ibfabric.tomlpos`).

Examples
--------
>>> exp = Experiment.from_text('''
... [experiment]
... name = "demo"
... topology = "irregular16"
... time = "10us"
... repeat = 2
... [parameters]
... "**.load" = "${load}"
... [iterations]
... load = "0.1..0.3 step 0.1"
... ''')
>>> len(exp), exp.values("load")
(6, [0.1, 0.2, 0.3])
>>> run = exp.runs()[1]
>>> run.iterationvars, run.repetition, run.overrides
('$load=0.1', 1, (('**.load', '0.1'),))
"""

from __future__ import annotations

import inspect
import itertools
import math
import os
import re
from collections.abc import Collection, Mapping
from pathlib import Path
from typing import Any

from ibfabric.errors import ConfigError, did_you_mean
from ibfabric.iterations import _SCALARS, _is_count, _kind, derive_seed, parse_values
from ibfabric.runspec import GENERATOR_ERRORS, ExperimentError, RunSpec, as_text, generated_ned
from ibfabric.scenario import event_templates, events_of_run
from ibfabric.tomlpos import Locator, parse, read_file

__all__ = ["Experiment", "ExperimentError", "RunSpec"]

#: Most runs one experiment may have.
MAX_RUNS = 100_000

_TABLES = ("experiment", "parameters", "iterations", "saturation")
_EXPERIMENT_KEYS = ("name", "topology", "network", "time", "warmup", "repeat", "seed", "together", "config",
                    "workload", "placement", "ideal")
_SATURATION_KEYS = ("variable", "low", "high", "tolerance", "max_runs", "threshold")
_BUILTINS = ("repetition", "seed")
_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]*")
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_VAR = re.compile(r"\$\{([^{}]*)\}")


def _literal(v: Any) -> str:
    """A whole parameter value as NED text: strings as they are, ``true``/``false``, numbers by ``repr``."""
    if isinstance(v, str):
        return v
    if isinstance(v, bool):
        return "true" if v else "false"
    return repr(v)


def _key(v: Any) -> tuple[str, str]:
    """Identity of a value for deduplication: 1, 1.0 and True are three values."""
    return type(v).__name__, repr(v)


# ----------------------------------------------------------------- experiment


class Experiment:
    """A parsed experiment file: its name, iteration variables and runs.

    Build with :meth:`from_file` or :meth:`from_text`; every run is built
    once while loading, so a bad file fails there, with its location.

    Attributes
    ----------
    path : pathlib.Path or None
        The file (absolute), None for text.
    name : str
    variables : list of str
        The iteration variables, in file order.
    repeat, seed : int
        Repetitions of every point, and the base seed.
    saturation : dict or None
        The ``[saturation]`` table with defaults filled in.
    """

    def __init__(self, data: dict, locator: Locator, base_dir: Path, path: Path | None = None):
        self.path = path
        self._loc = locator
        self._base_dir = base_dir
        self._topology_cache: dict[str, str] = {}
        self._generator_cache: dict[tuple, tuple] = {}
        self._time_cache: dict[tuple, float] = {}
        self._checker = None  # the RunCheck of check(), with what it already checked
        for key, value in data.items():
            if key == "events":
                continue  # [[events]]: an array of tables (_read_events)
            if key not in _TABLES:
                what = f"table [{key}]" if isinstance(value, dict) else f"top-level key '{key}'"
                raise self._error((key,), f"unknown {what}{_hint(key, _TABLES)} (valid tables: {', '.join(_TABLES)})")
            if not isinstance(value, dict):
                raise self._error((key,), f"[{key}] must be a table (got {_kind(value)})")
        if "experiment" not in data:
            raise ExperimentError(f"{locator.filename}:1:1: missing table [experiment]")
        exp = data["experiment"]
        self._check_keys("experiment", exp, _EXPERIMENT_KEYS)
        self._tables = data
        self.name = self._get("experiment", "name", str, "a string")
        if not _NAME.fullmatch(self.name):
            raise self._error(("experiment", "name"), f"bad name {self.name!r}: letters, digits, '_', '-' and '.' only", value=True)
        self.repeat = self._get("experiment", "repeat", int, "an integer", default=1, low=1)
        self.seed = self._get("experiment", "seed", int, "an integer", default=1, low=0)
        self._read_iterations(data.get("iterations", {}))
        self._searched_variable(data)
        self._axes = self._read_together(exp.get("together", []))
        self._read_templates(exp, data.get("parameters", {}))
        self._events = event_templates(data.get("events", []), self._error, self._check_template)
        self.saturation = self._read_saturation(data.get("saturation"))
        count = math.prod(len(values) for _, values in self._axes) * self.repeat
        if count > MAX_RUNS:
            where = ("iterations",) if self.variables else ("experiment", "repeat")
            raise self._error(where, f"{count} runs: more than {MAX_RUNS}")
        self._runs = [self.run(p, r) for p in self.points() for r in range(self.repeat)]

    @classmethod
    def from_file(cls, path: str | os.PathLike) -> Experiment:
        """Read an experiment file; relative topology paths are relative to its directory."""
        if not isinstance(path, (str, os.PathLike)):
            raise ExperimentError(f"Experiment.from_file takes a path (got {path!r:.60})")
        path = Path(path)
        text = read_file(path, ExperimentError)
        return cls._parse(text, str(path), path.absolute().parent, path.absolute())

    @classmethod
    def from_text(cls, text: str, filename: str = "<experiment>", base_dir: str | os.PathLike | None = None) -> Experiment:
        """Parse experiment text; *filename* is used in messages, *base_dir* (default: the current directory) resolves relative topology paths."""
        if not isinstance(text, str) or not isinstance(filename, str):
            raise ExperimentError(f"Experiment.from_text takes the text and file name as strings (got {text!r:.60})")
        return cls._parse(text, filename, Path(base_dir if base_dir is not None else os.getcwd()).absolute())

    @classmethod
    def _parse(cls, text: str, filename: str, base_dir: Path, path: Path | None = None) -> Experiment:
        data = parse(text, filename, ExperimentError)
        return cls(data, Locator(text, filename), base_dir, path)

    # ------------------------------------------------------------ reading

    def _error(self, path: tuple, message: str, *, value: bool = False) -> ExperimentError:
        return ExperimentError(f"{self._loc.at(path, value=value)}: {message}")

    def _check_keys(self, table: str, values: dict, valid: tuple) -> None:
        for key in values:
            if key not in valid:
                raise self._error((table, key), f"unknown key '{key}' in [{table}]{_hint(key, valid)} (valid: {', '.join(valid)})")

    def _get(self, section: str, key: str, kind: type, expected: str, *, default=None, low=None, high=None, open_=False):
        """A scalar of [experiment]/[saturation]: type and bounds checked; a missing key without default is an error."""
        table = self._tables[section]
        if key not in table:
            if default is None:
                raise self._error((section,), f"missing key '{key}' in [{section}]")
            return default
        v = table[key]
        if kind is float:
            ok = isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
        else:
            ok = isinstance(v, kind) and not isinstance(v, bool)
        if not ok:
            raise self._error((section, key), f"'{key}' must be {expected} (got {_kind(v)})", value=True)
        if (low is not None and (v <= low if open_ else v < low)) or (high is not None and v >= high):
            if high is not None:
                bound = f"between {low} and {high} (excluded)"
            else:
                bound = f"greater than {low}" if open_ else f"at least {low}"
            raise self._error((section, key), f"'{key}' must be {bound} (got {v})", value=True)
        return float(v) if kind is float else v

    def _read_iterations(self, table: dict) -> None:
        self.variables: list[str] = []
        self._values: dict[str, list] = {}
        for name, value in table.items():
            if not _IDENT.fullmatch(name):
                raise self._error(("iterations", name), f"bad variable name '{name}': a letter or '_', then letters, digits or '_'")
            if name in _BUILTINS:
                raise self._error(("iterations", name), f"'{name}' is a built-in variable ({', '.join(_BUILTINS)})")
            self._values[name] = parse_values(value, self._loc.at(("iterations", name), value=True))
            self.variables.append(name)

    def _searched_variable(self, data: dict) -> None:
        """The [saturation] variable, when the file uses it (``${load}``) but [iterations] does not list
        it: an iteration variable whose values are the search's 'low' and 'high' (a sweep runs those)."""
        table = data.get("saturation")
        name = table.get("variable") if isinstance(table, dict) else None
        if not isinstance(name, str) or name in self._values or name in _BUILTINS or not _IDENT.fullmatch(name):
            return
        rest = repr({k: v for k, v in data.items() if k != "saturation"})
        if re.search(r"\$\{\s*" + re.escape(name) + r"\s*\}", rest):  # (else [saturation] names no variable)
            self._values[name] = [table.get("low"), table.get("high")]
            self.variables.append(name)

    def _read_together(self, together: Any) -> list[tuple[tuple[str, ...], list[tuple]]]:
        """The axes of the product: one per variable, or one per group, at its first member's place."""
        path = ("experiment", "together")
        if not isinstance(together, list) or not all(isinstance(g, list) and all(isinstance(n, str) for n in g) for g in together):
            raise self._error(path, "'together' must be a list of lists of variable names, e.g. [[\"size\", \"buffer\"]]", value=True)
        group_of: dict[str, int] = {}
        for k, group in enumerate(together):
            if not group:
                raise self._error(path, "'together' has an empty group", value=True)
            for name in group:
                if name not in self._values:
                    raise self._error(path, f"'together' names '{name}', not an iteration variable{_listing(self.variables)}", value=True)
                if name in group_of:
                    raise self._error(path, f"'together' names '{name}' twice", value=True)
                group_of[name] = k
            lengths = {name: len(self._values[name]) for name in group}
            if len(set(lengths.values())) > 1:
                shown = ", ".join(f"'{n}' has {c}" for n, c in lengths.items())
                raise self._error(path, f"variables that vary together need as many values each ({shown})", value=True)
        axes, done = [], set()
        for name in self.variables:
            if name not in group_of:
                axes.append(((name,), [(v,) for v in self._values[name]]))
            elif group_of[name] not in done:
                done.add(group_of[name])
                members = tuple(n for n in self.variables if group_of.get(n) == group_of[name])
                axes.append((members, list(zip(*(self._values[n] for n in members)))))
        return axes

    def _read_templates(self, exp: dict, parameters: dict) -> None:
        """topology, network, time, warmup and parameter values: types checked, ``${...}`` names known."""
        if "topology" not in exp:
            raise self._error(("experiment",), "missing key 'topology' in [experiment]")
        topo = exp["topology"]
        if isinstance(topo, dict):
            if "generator" not in topo:
                from ibfabric.topologies.generators import KINDS

                raise self._error(("experiment", "topology"),
                                  f"a generated topology needs 'generator' (one of: {', '.join(sorted(KINDS))})", value=True)
            for key, v in topo.items():
                self._check_template(("experiment", "topology", key), v, (str, int, float, bool, list))
        else:
            self._check_template(("experiment", "topology"), topo, (str,), "a string or a generator table")
        self._topology = topo
        self._network = exp.get("network")
        if self._network is not None:
            self._check_template(("experiment", "network"), self._network, (str,))
        if "time" not in exp:
            raise self._error(("experiment",), "missing key 'time' in [experiment]")
        self._time = exp["time"]
        self._warmup = exp.get("warmup", "0ns")
        for key in ("time", "warmup"):
            self._check_template(("experiment", key), exp.get(key, "0ns"), (str, int, float), "a duration like \"10us\"")
        self._parameters: list[tuple[str, Any]] = []
        self._paths: dict[str, tuple] = {}  # pattern -> where it is written (parameter_source)
        for pattern, value, path in _flatten(parameters, ("parameters",)):
            if not pattern.strip():
                raise self._error(path, "an empty parameter pattern")
            self._check_template(path, value, (str, int, float, bool), "a string, number or boolean")
            self._parameters.append((pattern, value if isinstance(value, str) else _literal(value)))
            self._paths.setdefault(pattern, path)
        # a workload (docs/workloads.md): a GOAL file (relative to this file) or NAME:options, run to its end
        self._workload = exp.get("workload")
        self._placement = exp.get("placement", "linear")
        self._ideal = exp.get("ideal", False)
        for key, value in (("workload", self._workload), ("placement", self._placement)):
            if value is not None:
                self._check_template(("experiment", key), value, (str,))
        self._check_template(("experiment", "ideal"), self._ideal, (bool,), "true or false")
        if "config" in exp:  # a named configuration (ibfabric.configs), below the file's [parameters]
            self._parameters.extend(self._config(exp["config"]))

    def _config(self, name: Any) -> list[tuple[str, str]]:
        """The overrides of ``[experiment] config`` that the file's [parameters] do not set."""
        from ibfabric.configs import overrides

        if not isinstance(name, str):
            raise self._error(("experiment", "config"), f"'config' must be a string (got {_kind(name)})", value=True)
        try:
            items = overrides(name, self._base_dir)
        except ConfigError as exc:
            raise self._error(("experiment", "config"), str(exc), value=True) from None
        mine = {pattern for pattern, _ in self._parameters}
        return [(pattern, value) for pattern, value in items.items() if pattern not in mine]

    def _check_template(self, path: tuple, value: Any, kinds: tuple, expected: str | None = None) -> None:
        if isinstance(value, list) and list in kinds:
            for v in value:
                self._check_template(path, v, _SCALARS)
            return
        if not isinstance(value, kinds) or (bool not in kinds and isinstance(value, bool)):
            expected = expected or " or ".join(_kind(k()) for k in kinds)
            raise self._error(path, f"'{'.'.join(path[1:])}' must be {expected} (got {_kind(value)})", value=True)
        if not isinstance(value, str):
            return
        if "${" in _VAR.sub("", value):
            raise self._error(path, f"unterminated '${{' in {value!r}", value=True)
        for m in _VAR.finditer(value):
            name = m.group(1).strip()
            if name in self._values or name in _BUILTINS:
                continue
            if "=" in name:
                raise self._error(path, f"inline iterations like '{m.group()}' are not supported: declare the variable in [iterations]", value=True)
            known = ", ".join(self.variables) or "none"
            raise self._error(path, f"unknown variable '${{{name}}}' (iteration variables: {known}; built-in: {', '.join(_BUILTINS)})", value=True)

    def _read_saturation(self, table: dict | None) -> dict | None:
        if table is None:
            return None
        self._check_keys("saturation", table, _SATURATION_KEYS)
        variable = self._get("saturation", "variable", str, "a string")
        if variable not in self._values:
            raise self._error(("saturation", "variable"), f"'variable' must name an iteration variable (got '{variable}'){_listing(self.variables)}", value=True)
        low = self._get("saturation", "low", float, "a number", low=0.0, open_=True)
        high = self._get("saturation", "high", float, "a number", low=0.0, open_=True)
        if not low < high:
            raise self._error(("saturation", "high"), f"'high' must be greater than 'low' ({high} <= {low})", value=True)
        return {
            "variable": variable,
            "low": low,
            "high": high,
            "tolerance": self._get("saturation", "tolerance", float, "a number", default=0.01, low=0.0, open_=True),
            "max_runs": self._get("saturation", "max_runs", int, "an integer", default=8, low=2),
            "threshold": self._get("saturation", "threshold", float, "a number", default=0.95, low=0.0, high=1.0, open_=True),
        }

    # ------------------------------------------------------------ points and runs

    def values(self, name: str) -> list:
        """The values of iteration variable *name*."""
        if name not in self._values:
            raise self._no_variable(name)
        return list(self._values[name])

    def _no_variable(self, name: str) -> ExperimentError:
        return ExperimentError(f"{self._loc.filename}: no iteration variable '{name}'{_listing(self.variables)}")

    def points(self, *, exclude: Collection[str] = ()) -> list[dict]:
        """The assignments of the iteration variables in run order (first variable slowest), without *exclude*, each once."""
        exclude = (exclude,) if isinstance(exclude, str) else tuple(exclude)
        for name in exclude:
            self.values(name)
        seen, out = set(), []
        for combo in itertools.product(*(values for _, values in self._axes)):
            point = {}
            for (names, _), values in zip(self._axes, combo):
                point.update(zip(names, values))
            point = {n: point[n] for n in self.variables if n not in exclude}
            key = tuple(_key(v) for v in point.values())
            if key not in seen:
                seen.add(key)
                out.append(point)
        return out

    def runs(self) -> list[RunSpec]:
        """Every run: :meth:`points` times the repetitions, repetition innermost."""
        return list(self._runs)

    def check(self, specs: Collection[RunSpec] | None = None) -> None:
        """Check that every run of *specs* (default: all) builds, without simulating: patterns against
        the elaborated network, plugin names, values, event targets (:mod:`ibfabric.runcheck`).

        Raises
        ------
        ExperimentError
            ``file:line:col: message`` at the key or value at fault, naming the run's variables.
        """
        from ibfabric.runcheck import RunCheck

        if self._checker is None:
            self._checker = RunCheck(self)
        self._checker.check(self._runs if specs is None else specs)

    def parameter_source(self, pattern: str) -> tuple[tuple, Any] | None:
        """``(TOML path, template)`` of the parameter *pattern* as the file writes it, or None; a pattern
        of ``[experiment] config`` is placed at that key."""
        template = next((t for p, t in self._parameters if p == pattern), None)
        if template is None:
            return None
        return self._paths.get(pattern, ("experiment", "config")), template

    def locate(self, path: tuple, *, value: bool = False) -> str:
        """``file:line:col`` of the key (or value) at TOML *path*."""
        return self._loc.at(path, value=value)

    def __len__(self) -> int:
        return len(self._runs)

    def __repr__(self) -> str:
        return f"<Experiment {self.name!r}: {len(self)} runs>"

    def run(self, assignment: Mapping[str, Any], repetition: int) -> RunSpec:
        """The run of *assignment* (a value for every iteration variable, from its list or not) and *repetition*."""
        where = self._loc.filename
        for name in self.variables:
            if name not in assignment:
                raise ExperimentError(f"{where}: a run needs a value for iteration variable '{name}'")
        for name, v in assignment.items():
            if name not in self._values:
                raise self._no_variable(name)
            if not isinstance(v, _SCALARS):
                raise ExperimentError(f"{where}: the value of '{name}' must be a string, number or boolean (got {_kind(v)})")
        if not _is_count(repetition):
            raise ExperimentError(f"{where}: the repetition must be a non-negative integer (got {repetition!r})")
        env = {name: assignment[name] for name in self.variables}
        env["repetition"], env["seed"] = int(repetition), derive_seed(self.seed, int(repetition))
        topology, generator = self._resolve_topology(env)
        network = None
        if self._network is not None:
            network = _substitute(self._network, env)
            if not isinstance(network, str) or not network:
                raise self._error(("experiment", "network"), f"'network' must be a non-empty string (got {network!r})", value=True)
        time = self._duration(env, "time", self._time)
        warmup = self._duration(env, "warmup", self._warmup)
        self._check_window(time, warmup, env)
        overrides = tuple((pattern, _literal(_substitute(value, env))) for pattern, value in self._parameters)
        context = ", ".join(f"${n}={as_text(env[n])}" for n in self.variables) if _uses_vars(self._events) else ""
        events = events_of_run(self._events, lambda v: _substitute(v, env), self._loc, context)
        workload: tuple = ()
        if self._workload is not None:
            spec = as_text(_substitute(self._workload, env))
            if spec.endswith(".goal") and not os.path.isabs(spec):
                spec = str((Path(self._base_dir) / spec).resolve())
            ideal = _substitute(self._ideal, env)
            if not isinstance(ideal, bool):
                raise self._located(("experiment", "ideal"), f"'ideal' must be true or false (got {ideal!r})",
                                    self._ideal, env)
            workload = (("ideal", ideal), ("placement", as_text(_substitute(self._placement, env))), ("spec", spec))
        return RunSpec(
            experiment=self.name,
            topology=topology,
            generator=generator,
            network=network,
            overrides=overrides,
            time=time,
            warmup=warmup,
            seed=env["seed"],
            repetition=int(repetition),
            vars=tuple((n, assignment[n]) for n in self.variables),
            events=events,
            workload=workload,
        )

    # ------------------------------------------------------------ substitution and checks

    def _located(self, path: tuple, message: str, template: Any, env: dict) -> ExperimentError:
        """An error at *path*, naming the assignment when the value came from variables."""
        context = ", ".join(f"${n}={as_text(env[n])}" for n in self.variables)
        return self._error(path, message + (f" (with {context})" if context and _uses_vars(template) else ""), value=True)

    def _resolve_topology(self, env: dict) -> tuple[str | None, tuple | None]:
        if isinstance(self._topology, dict):
            return None, self._generator(env)
        path = ("experiment", "topology")
        name = as_text(_substitute(self._topology, env))
        if name not in self._topology_cache:
            resolved = _find_topology(name, self._base_dir)
            if resolved is None:
                from ibfabric.topologies import SHIPPED

                message = f"no such file or shipped topology '{name}' (shipped: {', '.join(sorted(SHIPPED))})"
                raise self._located(path, message, self._topology, env)
            self._topology_cache[name] = resolved
        return self._topology_cache[name], None

    def _generator(self, env: dict) -> tuple:
        from ibfabric.topologies.generators import KINDS

        args = {key: _substitute(v, env) for key, v in self._topology.items()}
        cache_key = tuple((k, _key(v) if not isinstance(v, list) else tuple(map(_key, v))) for k, v in args.items())
        if cache_key in self._generator_cache:
            return self._generator_cache[cache_key]
        kind = args.pop("generator")
        kind_path = ("experiment", "topology", "generator")
        if not isinstance(kind, str) or kind not in KINDS:
            raise self._located(kind_path, f"unknown generator {kind!r}{did_you_mean(kind, KINDS)} (valid: {', '.join(sorted(KINDS))})", self._topology["generator"], env)
        signature = inspect.signature(KINDS[kind])
        params = {n: p for n, p in signature.parameters.items() if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
        for key, v in args.items():
            path = ("experiment", "topology", key)
            if key not in params:
                raise self._error(path, f"generator '{kind}' has no parameter '{key}'{did_you_mean(key, params)} (valid: {', '.join(params)})")
            args[key], expected = _generator_arg(v, params[key].annotation)
            if expected is not None:
                raise self._located(path, f"'{key}' of generator '{kind}' must be {expected} (got {v!r})", self._topology[key], env)
        missing = [n for n, p in params.items() if p.default is p.empty and n not in args]
        if missing:
            raise self._error(("experiment", "topology"), f"generator '{kind}' needs '{missing[0]}'", value=True)
        bound = signature.bind(**args)
        bound.apply_defaults()
        generator = tuple(sorted([("generator", kind), *bound.arguments.items()]))
        try:
            generated_ned(generator)
        except GENERATOR_ERRORS as exc:
            raise self._located(("experiment", "topology"), f"generator '{kind}': {exc}", self._topology, env) from None
        self._generator_cache[cache_key] = generator
        return generator

    def _duration(self, env: dict, key: str, template: Any) -> str:
        from ibfabric.units import UnitError, parse_duration

        path = ("experiment", key)
        value = _substitute(template, env)
        text = as_text(value)
        if (key, text) not in self._time_cache:
            try:
                ns = parse_duration(value, numbers=False)
            except UnitError as exc:
                shown = f"bad {key}" if str(exc).startswith((repr(value), f"'{text}'")) else f"bad {key} {value!r}"
                raise self._located(path, f"{shown}: {exc}", template, env) from None
            if key == "time" and ns == 0:
                raise self._located(path, f"the time must be positive (got {text!r})", template, env)
            self._time_cache[key, text] = ns
        return text

    def _check_window(self, time: str, warmup: str, env: dict) -> None:
        if self._time_cache["warmup", warmup] >= self._time_cache["time", time]:
            key = "warmup" if "warmup" in self._tables["experiment"] else "time"
            message = f"the warmup ({warmup}) must end before the time ({time})"
            raise self._located(("experiment", key), message, [self._time, self._warmup], env)


def _find_topology(name: str, base_dir: Path) -> str | None:
    """An existing file's absolute path, a shipped topology's name, or None."""
    from ibfabric.topologies import SHIPPED

    if name:
        try:
            path = Path(name) if os.path.isabs(name) else base_dir / name
            if path.is_file():
                return os.path.abspath(path)
        except (OSError, ValueError):
            pass
    return name if name in SHIPPED else None


def _substitute(template: Any, env: dict) -> Any:
    """*template* with its ``${name}`` replaced from *env*; a lone ``${name}`` keeps the value's type."""
    if isinstance(template, list):
        return [_substitute(v, env) for v in template]
    if not isinstance(template, str) or "${" not in template:
        return template
    m = _VAR.fullmatch(template)
    if m is not None:
        return env[m.group(1).strip()]
    return _VAR.sub(lambda m: as_text(env[m.group(1).strip()]), template)


def _uses_vars(template: Any) -> bool:
    if isinstance(template, dict):
        return any(_uses_vars(v) for v in template.values())
    if isinstance(template, list):
        return any(_uses_vars(v) for v in template)
    return isinstance(template, str) and "${" in template


#: Generator parameter annotations -> (what fits, what the message asks for); tuples come as TOML lists.
_ARG_KINDS = {
    "tuple": (lambda v: isinstance(v, (list, tuple)) and all(type(x) is int for x in v), "a list of integers"),
    "int": (lambda v: type(v) is int, "an integer"),
    "float": (lambda v: type(v) in (int, float), "a number"),
    "str": (lambda v: type(v) is str, "a string"),
    "bool": (lambda v: type(v) is bool, "a boolean"),
}


def _generator_arg(value: Any, annotation: Any) -> tuple[Any, str | None]:
    """``(converted value, None)`` for a generator parameter annotated *annotation*, or ``(None, what it needs)``."""
    ann = annotation if isinstance(annotation, str) else getattr(annotation, "__name__", "")
    fits, expected = next((k for prefix, k in _ARG_KINDS.items() if ann.startswith(prefix)), (lambda v: True, ""))
    if not fits(value):
        return None, expected
    return (tuple(value) if isinstance(value, list) else value), None


def _flatten(table: dict, prefix: tuple) -> list[tuple[str, Any, tuple]]:
    """``(pattern, value, path)`` of [parameters]; unquoted dotted keys join back with dots."""
    out = []
    for key, value in table.items():
        if isinstance(value, dict) and value:  # (an empty table is a value, refused as one)
            out.extend((f"{key}.{p}", v, path) for p, v, path in _flatten(value, prefix + (key,)))
        else:
            out.append((key, value, prefix + (key,)))
    return out


def _hint(name: str, valid: Collection[str]) -> str:
    return did_you_mean(name, valid)


def _listing(names: list[str]) -> str:
    return f" (iteration variables: {', '.join(names)})" if names else " (no iteration variables)"
