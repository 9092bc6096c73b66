"""The figure of a sweep: one statistic against another, typically latency against load.

Each point is one configuration of the sweep, its repetitions aggregated
(:func:`ibfabric.collect.aggregate`): x is the mean of the x statistic (or
the value of a numeric iteration variable), y the mean of the y statistic,
and a shaded band is the 95 % confidence interval of y when the
configuration was repeated.  Points are joined in order of x, one line per
value of the *hue* variable, one subplot per value of the *facet* variable;
each line has its own colour, marker and line style, so that a grayscale
print tells them apart.

The confidence interval of a handful of repetitions can reach below zero
(two repetitions: ``mean ± 12.7 std``).  When no run's value of y is
negative (latencies, loads, counts: every statistic ibfabric writes) the
band stops at 0, and on a logarithmic axis (*logy*) at the smallest
positive value plotted (a mean or a band's edge), instead of running off
the bottom of the axis.

Matplotlib is optional (``pip install 'ibfabric[plot]'``) and imported only
here, when a figure is drawn.  Figures are drawn on a non-interactive Agg
canvas of their own, without pyplot: nothing global changes (a notebook's
backend stays as it was) and no figure is left open.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ibfabric.collect import AGGREGATE_COLUMNS, Table, aggregate, collect, sort_key
from ibfabric.errors import ConfigError
from ibfabric.results import atomic_path

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.figure import Figure

__all__ = ["DPI", "FORMATS", "LINE_STYLES", "MARKERS", "PANEL_SIZE", "check_format", "default_path", "label",
           "make_figure", "plot", "require_matplotlib", "save"]

#: Size of one subplot, in inches (a figure of several facets is a grid of them).
PANEL_SIZE = (5.0, 3.5)
#: Resolution of PNG files, in dots per inch.
DPI = 200
#: Subplots per row of a faceted figure.
MAX_COLUMNS = 3
#: Figure formats, by file extension.
FORMATS = (".png", ".svg", ".pdf")

_STAT_WORDS = ("mean", "p50", "p99", "max", "min")
#: Markers and line styles of the lines, in order (with the colours C0..C9 they tell lines apart in grayscale).
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")
LINE_STYLES = ("-", "--", ":", "-.")


def _words(name: str) -> str:
    return name.replace("_", " ")


def label(stat: str) -> str:
    """An axis label with units for the statistic *stat*.

    Examples
    --------
    >>> label("offered_load")
    'offered load (fraction of link rate)'
    >>> label("latency_mean")
    'mean latency (ns)'
    >>> label("network_latency_p99")
    'p99 network latency (ns)'
    >>> label("packets_delivered")
    'delivered (packets)'
    >>> label("link_utilisation_max")
    'link utilisation max'
    """
    if stat.endswith("_load"):
        return f"{_words(stat)} (fraction of link rate)"
    if "latency" in stat:
        head, _, tail = stat.rpartition("_")
        if "latency" in head and tail in _STAT_WORDS:
            return f"{tail} {_words(head)} (ns)"
        if "latency" in head and tail == "count":
            return f"{_words(head)} count (packets)"
        return f"{_words(stat.removesuffix('_ns'))} (ns)"
    if stat.startswith("packets_"):
        return f"{_words(stat.removeprefix('packets_'))} (packets)"
    if stat.endswith("_ns"):
        return f"{_words(stat.removesuffix('_ns'))} (ns)"
    return _words(stat)


def default_path(out_dir: str | os.PathLike, x: str, y: str) -> Path:
    """``out_dir/plot-<y>-vs-<x>.png``."""
    return Path(out_dir) / f"plot-{y}-vs-{x}.png"


def require_matplotlib() -> None:
    """Raise :class:`~ibfabric.errors.ConfigError` if matplotlib cannot be imported."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise ConfigError("plotting needs matplotlib: pip install 'ibfabric[plot]'") from None


def _aggregated(source: str | os.PathLike | Table) -> tuple[Table, dict[str, float]]:
    """The aggregated table of *source*, and the smallest value of each statistic over its runs
    (over the means when *source* is aggregated already)."""
    if not isinstance(source, Table):
        # timing statistics kept: events_per_s against offered_load is a fair thing to plot
        source = collect(source, timing=True)
    if tuple(source.columns[-len(AGGREGATE_COLUMNS):]) == AGGREGATE_COLUMNS:
        stat_i = source.columns.index("statistic")
        return source, _smallest((row[stat_i], row[stat_i + 2]) for row in source.rows)
    stat_i = len(source.columns) - 2
    return aggregate(source), _smallest((row[stat_i], row[stat_i + 1]) for row in source.rows)


def _smallest(pairs) -> dict[str, float]:
    out: dict[str, float] = {}
    for stat, value in pairs:
        if isinstance(value, (int, float)) and not math.isnan(value):
            out[stat] = min(out.get(stat, math.inf), value)
    return out


def _did_you_mean(name: str, valid) -> str:
    from ibfabric.errors import did_you_mean

    return did_you_mean(name, valid)


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def check_format(path: str | os.PathLike) -> str:
    """The extension of the figure file *path*, one of :data:`FORMATS`, else
    :class:`~ibfabric.errors.ConfigError`."""
    suffix = Path(path).suffix.lower()
    if suffix not in FORMATS:
        raise ConfigError(f"{path}: unknown figure format '{suffix or '(none)'}': use {', '.join(FORMATS)}")
    return suffix


def make_figure(source: str | os.PathLike | Table, x: str, y: str, *, hue: str | None = None,
                facet: str | None = None, title: str | None = None, logy: bool = False,
                unsaturated: bool = False) -> Figure:
    """Draw statistic *y* against statistic *x*, one point per configuration of a sweep.

    Parameters
    ----------
    source : path or Table
        A sweep output directory, or a table from
        :func:`ibfabric.collect.collect` or :func:`ibfabric.collect.aggregate`.
    x : str
        A statistic, e.g. ``"offered_load"``, or an iteration variable with
        numeric values, e.g. ``"load"`` (a statistic of that name wins).
    y : str
        A statistic, e.g. ``"latency_mean"``.
    hue : str, optional
        An iteration variable: one line per value.
    facet : str, optional
        An iteration variable: one subplot per value.
    title : str, optional
    logy : bool
        A logarithmic y axis.  A confidence band of a statistic no run
        has negative stops at 0, and on a log axis at the smallest
        positive value plotted (see the module docstring).
    unsaturated : bool
        Leave out the configurations in which any repetition saturated
        (its ``saturated`` statistic), so that each line stops at the
        saturation point as latency-throughput curves in papers do;
        accepted traffic past saturation falls as the backlog grows and
        would turn the line back.

    Returns
    -------
    matplotlib.figure.Figure
        On an Agg canvas; ``PANEL_SIZE`` inches per subplot.  Lines (one
        per hue value, and per experiment when the sweep has several) are
        ordered as their values sort, the k-th with colour ``Ck``, marker
        ``MARKERS[k]`` and line style ``LINE_STYLES[k]`` (cycling); the
        legend lists them when there is more than one or *hue* is given.

    Raises
    ------
    ConfigError
        Matplotlib is missing, *x* is neither a statistic nor a numeric
        iteration variable of the sweep, *y* not a statistic, or *hue* or
        *facet* not one of its iteration variables (the message lists the
        valid ones, with the closest as a "did you mean"), or
        *unsaturated* is asked for a sweep without a ``saturated``
        statistic.
    """
    require_matplotlib()
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    table, smallest = _aggregated(source)
    cols = table.columns
    stat_i = cols.index("statistic")
    var_names = cols[1:stat_i]
    stats = list(dict.fromkeys(table.column("statistic")))
    x_var = x not in stats and x in var_names  # x is an iteration variable
    wanted = (y, "saturated") if unsaturated else (y,)
    if not x_var:
        wanted = (x, *wanted)
    for stat in wanted:
        if stat not in stats:
            raise ConfigError(_unknown(stat, "x" if stat == x and stat != y else "y", stats, var_names))
    for var in (hue, facet):
        if var is not None and var not in var_names:
            choices = f"choose from {', '.join(var_names)}" if var_names else "the sweep has none"
            raise ConfigError(f"unknown iteration variable '{var}'{_did_you_mean(var, var_names)}: {choices}")
    if x_var:
        x_i = cols.index(x)
        odd = sorted({str(row[x_i]) for row in table.rows if not _is_number(row[x_i])})
        if odd:
            raise ConfigError(f"--x '{x}': an iteration variable on the x axis needs numbers, but '{x}' is"
                              f" {', '.join(odd[:5])}{', ...' if len(odd) > 5 else ''}: give it as --hue or --facet")

    # configuration (experiment, variable values) -> statistic -> (n, mean, std, low, high)
    configs: dict[tuple, dict[str, tuple]] = {}
    for row in table.rows:
        if row[stat_i] in wanted:
            config = tuple(_plain(v) for v in row[:stat_i])
            by_stat = configs.setdefault(config, {})
            by_stat[row[stat_i]] = row[stat_i + 1:]
            if x_var:  # one point per configuration, at its value of the variable
                by_stat[x] = (1, row[x_i], None, row[x_i], row[x_i])
    several = len({row[0] for row in table.rows}) > 1
    hue_i = cols.index(hue) if hue else None
    facet_i = cols.index(facet) if facet else None

    # facet value -> line (experiment or None, hue value or None) -> points (x, y, n, low, high)
    lines: dict[Any, dict[tuple, list[tuple]]] = {}
    for config, by_stat in configs.items():
        if x not in by_stat or y not in by_stat:
            continue
        if unsaturated and by_stat.get("saturated", (0, 0.0))[1] > 0:
            continue
        fv = config[facet_i] if facet_i is not None else None
        lk = (config[0] if several else None, config[hue_i] if hue_i is not None else None)
        n, ymean, _, low, high = by_stat[y]
        lines.setdefault(fv, {}).setdefault(lk, []).append((by_stat[x][1], ymean, n, low, high))

    floor = _floor(lines, logy) if smallest.get(y, -1.0) >= 0 else None
    facets = sorted(lines, key=sort_key) or [None]
    ncols = min(len(facets), MAX_COLUMNS)
    nrows = math.ceil(len(facets) / ncols)
    fig = Figure(figsize=(PANEL_SIZE[0] * ncols, PANEL_SIZE[1] * nrows), dpi=DPI, layout="constrained")
    FigureCanvasAgg(fig)
    axes = fig.subplots(nrows, ncols, squeeze=False, sharey=True).ravel()
    for ax in axes[len(facets):]:
        ax.set_visible(False)

    keys = sorted({lk for by_line in lines.values() for lk in by_line}, key=lambda lk: tuple(map(sort_key, lk)))
    names = {lk: ", ".join(([lk[0]] if several else []) + ([_text(lk[1])] if hue else [])) or label(y)
             for lk in keys}
    handles = {}
    for k, (fv, ax) in enumerate(zip(facets, axes)):
        for lk in sorted(lines.get(fv, {}), key=keys.index):
            pts = sorted(lines[fv][lk])
            xs = [p[0] for p in pts]
            k_line = keys.index(lk)  # one colour, marker and line style per line across facets
            colour = f"C{k_line % 10}"
            (handles[lk],) = ax.plot(xs, [p[1] for p in pts], marker=MARKERS[k_line % len(MARKERS)],
                                     linestyle=LINE_STYLES[k_line % len(LINE_STYLES)], color=colour, label=names[lk])
            if max(p[2] for p in pts) > 1:
                lows = [p[3] if floor is None else max(p[3], floor) for p in pts]
                ax.fill_between(xs, lows, [p[4] for p in pts], color=colour, alpha=0.2, linewidth=0)
        ax.set_xlabel(label(x))
        if k % ncols == 0:
            ax.set_ylabel(label(y))
        if logy:
            ax.set_yscale("log")
        ax.grid(True, alpha=0.3)
        if facet is not None:
            ax.set_title(f"{facet} = {_text(fv)}")
    if len(handles) > 1 or (hue is not None and handles):
        shown = [lk for lk in keys if lk in handles]
        axes[0].legend([handles[lk] for lk in shown], [names[lk] for lk in shown], title=hue)
    if title:
        if facet is None:
            axes[0].set_title(title)
        else:
            fig.suptitle(title)
    return fig


def _unknown(name: str, axis: str, stats: list[str], var_names: list[str]) -> str:
    """The message for a name on the *axis* that is not a statistic (x: nor an iteration variable)."""
    if not stats:
        return f"unknown statistic '{name}': the sweep has no results"
    if axis == "y" and name in var_names:
        return (f"--y '{name}' is an iteration variable; y is a statistic: choose from {', '.join(stats)}")
    if axis == "x":
        variables = f"; or an iteration variable with numbers: {', '.join(var_names)}" if var_names else ""
        return (f"unknown statistic or iteration variable '{name}'{_did_you_mean(name, stats + var_names)}:"
                f" choose from {', '.join(stats)}{variables}")
    return f"unknown statistic '{name}'{_did_you_mean(name, stats)}: choose from {', '.join(stats)}"


def _floor(lines: dict, logy: bool) -> float:
    """Where the bands of a non-negative statistic stop: 0, or on a log axis the smallest positive
    mean or band edge of every line (the axes share y)."""
    if not logy:
        return 0.0
    shown = [v for by_line in lines.values() for pts in by_line.values() for p in pts for v in (p[1], p[3], p[4])
             if _is_number(v) and v > 0]
    return min(shown, default=0.0)


def _plain(v: Any) -> Any:
    """An iteration variable's value, hashable: lists and dicts as their JSON text."""
    return json.dumps(v, sort_keys=True) if isinstance(v, (list, dict)) else v


def _text(v: Any) -> str:
    return "(none)" if v is None else str(v)


def save(fig: Figure, path: str | os.PathLike) -> Path:
    """Write *fig* to *path* (format by extension: .png, .svg or .pdf), atomically.

    The figure goes to a temporary file in the same directory, then is
    renamed over *path*.  No creation date or software version is written,
    so one figure gives the same bytes twice.
    """
    import matplotlib

    path = Path(path)
    suffix = check_format(path)
    metadata = {".png": {"Software": None}, ".svg": {"Date": None}, ".pdf": {"CreationDate": None}}[suffix]
    with atomic_path(path, suffix) as tmp, matplotlib.rc_context({"svg.hashsalt": "ibfabric"}):
        fig.savefig(tmp, format=suffix[1:], dpi=DPI, metadata=metadata)
    return path


def plot(source: str | os.PathLike | Table, x: str, y: str, *, hue: str | None = None, facet: str | None = None,
         path: str | os.PathLike | None = None, title: str | None = None, logy: bool = False,
         unsaturated: bool = False) -> Path:
    """Draw *y* against *x* for a sweep (:func:`make_figure`) and write the figure.

    Parameters
    ----------
    source, x, y, hue, facet, title, logy, unsaturated
        As for :func:`make_figure`.
    path : path, optional
        The figure file, .png, .svg or .pdf; default
        ``<source>/plot-<y>-vs-<x>.png`` (in the current directory when
        *source* is a table).

    Returns
    -------
    Path
        The figure file.

    Raises
    ------
    ConfigError
        As :func:`make_figure`, or *path* has an unknown extension.

    Examples
    --------
    >>> plot("out", "offered_load", "latency_mean", hue="routing")  # doctest: +SKIP
    PosixPath('out/plot-latency_mean-vs-offered_load.png')
    """
    if path is None:
        path = default_path("." if isinstance(source, Table) else source, x, y)
    check_format(path)
    return save(make_figure(source, x, y, hue=hue, facet=facet, title=title, logy=logy, unsaturated=unsaturated),
                path)
