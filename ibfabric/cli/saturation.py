"""``ibfabric saturation``: the saturation throughput of every configuration of an experiment."""

from __future__ import annotations

import sys

from ibfabric.cli import sweep as sweep_cli


def add_parser(sub):
    p = sub.add_parser(
        "saturation",
        help="find each configuration's saturation throughput by a bounded search on offered load",
        description=(
            "For every configuration of EXPERIMENT (its iteration variables except the one named in its"
            " [saturation] table, times its repetitions), search the offered load at which the fabric"
            " saturates (the run's source backlog grows, or accepted < threshold x offered) by bisection,"
            " and report the saturation throughput (the largest accepted load probed) and the accepted load"
            " at saturation (that of the highest unsaturated probe). Probes are ordinary"
            " sweep runs in OUT/runs/, so an interrupted search resumes. Writes OUT/saturation.csv."
        ),
    )
    p.add_argument("experiment", metavar="EXPERIMENT")
    sweep_cli.add_common(p)
    return p


def run(args) -> int:
    from ibfabric.collect import Table, aggregate
    from ibfabric.experiment import Experiment
    from ibfabric.saturation import saturation_search
    from ibfabric.sweep import Sweep, plain_progress

    exp = Experiment.from_file(args.experiment)
    sweep = Sweep(exp, sweep_cli.out_dir(args, exp))
    progress = plain_progress(sys.stderr)  # a search runs in rounds: one line per probe
    results = saturation_search(sweep, jobs=args.jobs, dask=args.dask, retry_failed=args.retry_failed,
                                reuse_stale=args.reuse_stale, progress=progress)
    var = exp.saturation["variable"]
    names = [n for n in exp.variables if n != var]
    columns = ["experiment", *names, "repetition", "status", "saturation_load_low", "saturation_load_high",
               "throughput", "accepted_at_saturation", "probes"]
    rows = [tuple([exp.name, *(r[n] for n in names), r["repetition"], r["status"], r["saturation_load_low"],
                   r["saturation_load_high"], r["throughput"], r["accepted_at_saturation"], r["probes"]])
            for r in results]
    table = Table(columns=columns, rows=rows, failures=[])
    path = sweep.out / "saturation.csv"
    table.to_csv(path)
    # mean and 95 % confidence interval of the throughput over repetitions
    long = Table(columns=["experiment", "run_id", *names, "repetition", "seed", "status", "statistic", "value"],
                 rows=[tuple([exp.name, "", *(r[n] for n in names), r["repetition"], 0, r["status"], "throughput",
                              r["throughput"]]) for r in results if r["throughput"] is not None],
                 failures=[])
    agg = aggregate(long)
    print_table(exp, names, results, agg)
    print(f"saturation search written to {path}", file=sys.stderr)
    return 1 if any(r["status"] == "failed" for r in results) else 0


def print_table(exp, names, results, agg) -> None:
    from rich.console import Console
    from rich.table import Table as RichTable

    t = RichTable(title=f"{exp.name}: saturation throughput (fraction of link rate)", header_style="bold")
    for n in names:
        t.add_column(n)
    for c in ("runs", "throughput mean", "95% CI", "saturation load", "status"):
        t.add_column(c, justify="right" if c != "status" else "left")
    idx = {c: i for i, c in enumerate(agg.columns)}
    by_point: dict = {}
    for r in results:
        by_point.setdefault(tuple(repr(r[n]) for n in names), []).append(r)
    for row in agg.rows:
        key = tuple(repr(row[idx[n]]) for n in names)
        rs = by_point.get(key, [])
        lows = [r["saturation_load_low"] for r in rs if r["saturation_load_low"] is not None]
        highs = [r["saturation_load_high"] for r in rs if r["saturation_load_high"] is not None]
        bracket = f"{min(lows):g}..{max(highs):g}" if lows and highs else "-"
        statuses = sorted({r["status"] for r in rs})
        t.add_row(*(str(row[idx[n]]) for n in names), str(row[idx["n"]]), f"{row[idx['mean']]:.4f}",
                  f"{row[idx['ci95_low']]:.4f}..{row[idx['ci95_high']]:.4f}", bracket, ", ".join(statuses))
    Console(width=120).print(t)
