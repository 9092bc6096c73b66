"""Gather the results of a sweep into one tidy table, and aggregate its repetitions.

A sweep output directory holds one directory per run, ``OUT/runs/<run_id>/``,
moved into place when the run is complete; names starting with ``.`` are
runs still in progress and are ignored, and so are directories without a
``run.json`` (:attr:`Table.skipped` lists them).  Each run contributes one
row per statistic of its ``summary.json`` (flattened by
:func:`ibfabric.measure.flatten`)::

    experiment, run_id, <iteration variables...>, repetition, seed, status, statistic, value

The table depends only on what the runs measured: statistics of the
simulator itself (:data:`ibfabric.measure.TIMING`: wall-clock time, events
per second...) are left out unless asked for, rows are sorted by
configuration whatever the order the runs finished in, and floats are
written with ``repr``, so a sweep run locally and the same sweep run on a
cluster give byte-identical CSV files.
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
from pathlib import Path
from typing import Any, TextIO

import attrs

from ibfabric.errors import ConfigError
from ibfabric.measure import TIMING, flatten
from ibfabric.results import atomic_path, write_atomic

__all__ = ["Failure", "Table", "aggregate", "collect", "require_pyarrow", "sort_key", "t_quantile"]

#: Columns of :func:`collect` before and after the iteration variables.
RUN_COLUMNS = ("experiment", "run_id")
TAIL_COLUMNS = ("repetition", "seed", "status", "statistic", "value")
#: Columns :func:`aggregate` adds after ``statistic``.
AGGREGATE_COLUMNS = ("n", "mean", "std", "ci95_low", "ci95_high")
STATUSES = ("ok", "deadlock", "failed")


@attrs.frozen
class Failure:
    """A run that failed: no statistics, only its configuration and error."""

    run_id: str
    vars: dict[str, Any]
    error: str | None


@attrs.frozen
class Table:
    """A table of results: named columns and rows of Python values (``None``: an empty cell).

    Attributes
    ----------
    columns : list of str
    rows : list of tuple
    failures : list of Failure
        Runs with status ``failed``, in table order; they have no rows.
    runs : list of str
        Every run read (``failed`` ones included), in table order.
    skipped : list of str
        Directories under ``runs/`` without a ``run.json``, ignored.
    """

    columns: list[str]
    rows: list[tuple]
    failures: list[Failure] = attrs.field(factory=list)
    runs: list[str] = attrs.field(factory=list)
    skipped: list[str] = attrs.field(factory=list)

    def column(self, name: str) -> list:
        """The values of column *name*, in row order."""
        try:
            i = self.columns.index(name)
        except ValueError:
            raise ConfigError(f"no column '{name}': choose from {', '.join(self.columns)}") from None
        return [row[i] for row in self.rows]

    def to_csv(self, path_or_file: str | os.PathLike | TextIO | None = None) -> str:
        """The table as CSV text, also written to *path_or_file* if given.

        A path is written atomically (:func:`ibfabric.results.write_atomic`).
        Floats are written with ``repr`` (they read back exactly), empty
        cells as nothing, lines end with ``\\n``: the bytes depend only on the
        table.
        """
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(self.columns)
        for row in self.rows:
            w.writerow([_cell(v) for v in row])
        text = buf.getvalue()
        if path_or_file is None:
            pass
        elif hasattr(path_or_file, "write"):
            path_or_file.write(text)
        else:
            write_atomic(path_or_file, text)
        return text

    def to_parquet(self, path: str | os.PathLike) -> Path:
        """Write the table to a Parquet file, atomically; needs ``pyarrow``.

        A column keeps its type when its values share one (numbers mixing
        int and float become float); otherwise it is written as text, as in
        the CSV file.
        """
        pa, pq = require_pyarrow()
        arrays = {name: pa.array(_uniform([row[i] for row in self.rows])) for i, name in enumerate(self.columns)}
        path = Path(path)
        with atomic_path(path) as tmp:
            pq.write_table(pa.table(arrays), tmp)
        return path


def require_pyarrow() -> tuple[Any, Any]:
    """``(pyarrow, pyarrow.parquet)``, or :class:`~ibfabric.errors.ConfigError` if pyarrow is not installed."""
    try:
        import pyarrow
        import pyarrow.parquet
    except ImportError:
        raise ConfigError("writing Parquet needs pyarrow: pip install pyarrow") from None
    return pyarrow, pyarrow.parquet


def _cell(v: Any) -> str:
    if v is None:
        return ""
    if isinstance(v, bool):
        return str(v)
    if isinstance(v, float):
        return repr(v)
    if isinstance(v, (int, str)):
        return str(v)
    return json.dumps(v, sort_keys=True, separators=(",", ":"))


def _uniform(values: list) -> list:
    """*values* with one Python type (None kept), for a typed Parquet column."""
    types = {type(v) for v in values if v is not None}
    if len(types) <= 1 and types <= {bool, int, float, str}:
        return values
    if types <= {int, float}:
        return [None if v is None else float(v) for v in values]
    return [None if v is None else _cell(v) for v in values]


def sort_key(v: Any) -> tuple:
    """A sort key for a value of any JSON type: missing first, then booleans, numbers, strings, the rest."""
    if v is None:
        return (0,)
    if isinstance(v, bool):
        return (1, int(v))
    if isinstance(v, (int, float)):
        if math.isnan(v):
            return (2, 1, 0.0, type(v).__name__)
        return (2, 0, v, type(v).__name__)
    if isinstance(v, str):
        return (3, v)
    return (4, json.dumps(v, sort_keys=True))


def _read_json(path: Path) -> Any:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"{path}: missing") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read ({getattr(exc, 'strerror', None) or exc})") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{path}: invalid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})") from None


def _read_run(run_dir: Path) -> tuple[dict[str, Any], dict[str, float] | None]:
    """``(run.json, flattened summary or None for a failed run)`` of *run_dir*."""
    path = run_dir / "run.json"
    info = _read_json(path)
    if not isinstance(info, dict):
        raise ConfigError(f"{path}: expected a JSON object")
    for key, kind in (("run_id", str), ("experiment", str), ("status", str), ("vars", dict),
                      ("repetition", int), ("seed", int)):
        if key not in info:
            raise ConfigError(f"{path}: missing '{key}'")
        if not isinstance(info[key], kind) or isinstance(info[key], bool):
            raise ConfigError(f"{path}: '{key}' must be a {kind.__name__} (got {info[key]!r})")
    if info["status"] not in STATUSES:
        raise ConfigError(f"{path}: 'status' must be one of {', '.join(STATUSES)} (got {info['status']!r})")
    clash = sorted(set(info["vars"]) & {*RUN_COLUMNS, *TAIL_COLUMNS})
    if clash:
        raise ConfigError(f"{path}: iteration variable '{clash[0]}' has the name of a column of the results table")
    if info["status"] == "failed":
        return info, None
    summary_path = run_dir / "summary.json"
    summary = _read_json(summary_path)
    if not isinstance(summary, dict):
        raise ConfigError(f"{summary_path}: expected a JSON object")
    return info, flatten(summary)


def collect(out_dir: str | os.PathLike, *, timing: bool = False) -> Table:
    """The tidy table of a sweep: one row per (run, statistic).

    Parameters
    ----------
    out_dir : path
        A sweep output directory, holding ``runs/<run_id>/run.json`` and
        ``summary.json``.
    timing : bool
        Keep the statistics that measure the simulator
        (:data:`ibfabric.measure.TIMING`); they differ between two runs of
        one configuration, so they are left out by default.

    Returns
    -------
    Table
        Columns ``experiment, run_id, <iteration variables>, repetition,
        seed, status, statistic, value``; the variables in the order they
        first appear in the runs' ``vars`` (runs taken by experiment and
        run id); a run without one of them has an empty cell.  Rows are
        sorted by experiment, variable values, repetition and run id, and
        a run's statistics are in summary order.  Failed runs have no rows
        and are listed in :attr:`Table.failures`.

    Raises
    ------
    ConfigError
        *out_dir* has no ``runs/``, or a ``run.json`` or ``summary.json``
        is unreadable or malformed (the message names the file).

    Examples
    --------
    >>> table = collect("out")                      # doctest: +SKIP
    >>> table.to_csv("out/results.csv")             # doctest: +SKIP
    """
    runs_dir = Path(out_dir) / "runs"
    if not runs_dir.is_dir():
        raise ConfigError(f"{out_dir}: not a sweep output directory (no runs/)")
    runs: list[tuple[dict[str, Any], dict[str, float] | None]] = []
    skipped = []
    for entry in sorted(runs_dir.iterdir(), key=lambda p: p.name):
        if entry.name.startswith(".") or not entry.is_dir():
            continue
        if not (entry / "run.json").is_file():
            skipped.append(str(entry))
            continue
        runs.append(_read_run(entry))

    # variable columns: first appearance, runs in a creation-independent order
    names: dict[str, None] = {}
    for info, _ in sorted(runs, key=lambda r: (r[0]["experiment"], r[0]["run_id"])):
        names.update(dict.fromkeys(info["vars"]))
    var_names = list(names)

    def order(run: tuple[dict[str, Any], Any]) -> tuple:
        info = run[0]
        return (info["experiment"], tuple(sort_key(info["vars"].get(n)) for n in var_names), info["repetition"],
                info["run_id"])

    runs.sort(key=order)
    rows = []
    failures = []
    for info, stats in runs:
        head = (info["experiment"], info["run_id"], *(info["vars"].get(n) for n in var_names),
                info["repetition"], info["seed"], info["status"])
        if stats is None:
            failures.append(Failure(info["run_id"], dict(info["vars"]), info.get("error")))
            continue
        for name, value in stats.items():
            if timing or name not in TIMING:
                rows.append((*head, name, value))
    return Table(columns=[*RUN_COLUMNS, *var_names, *TAIL_COLUMNS], rows=rows, failures=failures,
                 runs=[info["run_id"] for info, _ in runs], skipped=skipped)


#: Two-sided 95 % critical values of Student's t, ``t_{0.975, df}`` for df = 1..30: the values of
#: ``scipy.stats.t.ppf(0.975, df)``, which agree with the three-decimal table of the NIST/SEMATECH
#: e-Handbook of Statistical Methods, section 1.3.6.7.2, "Critical Values of the Student's t
#: Distribution", https://www.itl.nist.gov/div898/handbook/eda/section3/eda3672.htm
_T975 = (
    12.706204736174694, 4.302652729749462, 3.1824463052837078, 2.7764451051977934, 2.5705818356363146,
    2.4469118511449786, 2.364624251592784, 2.306004135204166, 2.262157162798205, 2.228138851986274,
    2.200985160091639, 2.1788128296672284, 2.1603686564627913, 2.144786687917804, 2.131449545559776,
    2.1199052992212546, 2.1098155778333156, 2.1009220402410382, 2.0930240544083087, 2.085963447265864,
    2.0796138447276795, 2.0738730679040254, 2.0686576104190486, 2.0638985616280245, 2.0595385527532972,
    2.0555294386428735, 2.0518305164802846, 2.0484071417952454, 2.045229642132703, 2.0422724563012378,
)
#: The standard normal quantile z_{0.975}.
_Z975 = 1.959963984540054


def t_quantile(df: int) -> float:
    """The 97.5 % quantile of Student's t with *df* degrees of freedom (the 95 % two-sided critical value).

    Notes
    -----
    For df <= 30, a table (:data:`_T975`); beyond, the Cornish-Fisher
    expansion of t in powers of 1/df around the normal quantile z
    (Abramowitz and Stegun, eq. 26.7.5), within 3e-8 of the exact value
    there.  No scipy: the result, and so the aggregated table, is the
    same in every environment.

    References
    ----------
    M. Abramowitz and I. A. Stegun, *Handbook of Mathematical Functions*,
    National Bureau of Standards, 1964, eq. 26.7.5 and Table 26.10.
    """
    if df < 1:
        raise ValueError(f"df must be >= 1 (got {df})")
    if df <= len(_T975):
        return _T975[df - 1]
    z = _Z975
    g1 = (z**3 + z) / 4
    g2 = (5 * z**5 + 16 * z**3 + 3 * z) / 96
    g3 = (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / 384
    g4 = (79 * z**9 + 776 * z**7 + 1482 * z**5 - 1920 * z**3 - 945 * z) / 92160
    return z + g1 / df + g2 / df**2 + g3 / df**3 + g4 / df**4


def _stats(values: list[float]) -> tuple[int, float, float | None, float, float]:
    n = len(values)
    mean = math.fsum(values) / n
    mean += math.fsum(v - mean for v in values) / n  # one refinement: the mean of n equal values is that value
    mean = min(max(mean, min(values)), max(values))
    if n == 1:
        return 1, mean, None, mean, mean
    std = math.sqrt(math.fsum((v - mean) ** 2 for v in values) / (n - 1))
    half = t_quantile(n - 1) * std / math.sqrt(n)
    return n, mean, std, mean - half, mean + half


def aggregate(table: Table) -> Table:
    """Aggregate the repetitions of each configuration of a :func:`collect` table.

    Parameters
    ----------
    table : Table
        A table from :func:`collect`.

    Returns
    -------
    Table
        One row per (experiment, iteration variables, statistic), in the
        order they first appear in *table*: columns ``experiment,
        <variables>, statistic, n, mean, std, ci95_low, ci95_high``.  ``std``
        is the sample standard deviation (n - 1); the 95 % confidence
        interval of the mean is ``mean ± t_{0.975, n-1} std / sqrt(n)``
        (Student's t, :func:`t_quantile`).  With n = 1, ``std`` is empty
        and the interval is the mean itself.

    Raises
    ------
    ConfigError
        *table* is not a :func:`collect` table.
    """
    cols = table.columns
    if tuple(cols[:2]) != RUN_COLUMNS or tuple(cols[-len(TAIL_COLUMNS):]) != TAIL_COLUMNS:
        raise ConfigError("aggregate: expected a table from collect() (columns experiment, run_id, ..., value)")
    var_idx = range(2, len(cols) - len(TAIL_COLUMNS))
    stat_i, value_i = len(cols) - 2, len(cols) - 1
    groups: dict[tuple, tuple[tuple, list[float]]] = {}  # key -> (leading cells, values); insertion order
    for row in table.rows:
        key = (row[0], *(_hashable(row[i]) for i in var_idx), row[stat_i])
        if key not in groups:
            groups[key] = ((row[0], *(row[i] for i in var_idx), row[stat_i]), [])
        groups[key][1].append(row[value_i])
    rows = [(*head, *_stats(values)) for head, values in groups.values()]
    columns = [cols[0], *(cols[i] for i in var_idx), "statistic", *AGGREGATE_COLUMNS]
    return Table(columns=columns, rows=rows, failures=list(table.failures), runs=list(table.runs),
                 skipped=list(table.skipped))


def _hashable(v: Any) -> Any:
    """*v* usable in a dict key (lists and dicts of iteration variables as their JSON text)."""
    if isinstance(v, (list, dict)):
        return ("json", json.dumps(v, sort_keys=True))
    return (type(v).__name__, v) if isinstance(v, bool) else v

