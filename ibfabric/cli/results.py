"""``ibfabric results``: gather a sweep's runs into one table, CSV or Parquet."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ibfabric.errors import ConfigError

#: Table formats, by file extension.
FORMATS = (".csv", ".parquet")


def add_parser(sub) -> argparse.ArgumentParser:
    p = sub.add_parser(
        "results",
        help="gather a sweep's results into one table (CSV or Parquet)",
        description=(
            "Read the runs of the sweep output directory DIR (DIR/runs/<run_id>/) and write one row per run and"
            " statistic: experiment, run_id, the iteration variables, repetition, seed, status, statistic, value."
            " Counts and failed runs go to stderr."
        ),
    )
    p.add_argument("dir", metavar="DIR", help="sweep output directory")
    p.add_argument("-o", "--output", metavar="FILE",
                   help="write to FILE, .csv or .parquet (Parquet needs pyarrow; default: CSV to stdout)")
    p.add_argument("--aggregate", action="store_true",
                   help="one row per configuration and statistic over the repetitions: n, mean, std and the 95%%"
                        " confidence interval of the mean")
    p.add_argument("--timing", action="store_true",
                   help="keep the statistics that measure the simulator (wall_s, events_per_s, ...), which differ"
                        " between two runs of one configuration")
    return p


def warn_skipped(table) -> None:
    """One line on stderr per directory of ``runs/`` that has no ``run.json``."""
    for path in table.skipped:
        print(f"ibfabric: warning: {path}: no run.json, ignored", file=sys.stderr)


def one_line(text: str | None) -> str:
    """The first non-blank line of an error message."""
    lines = [line.strip() for line in (text or "").splitlines() if line.strip()]
    return lines[0] if lines else "(no error message)"


def run(args) -> int:
    from ibfabric.collect import aggregate, collect, require_pyarrow

    suffix = Path(args.output).suffix.lower() if args.output is not None else ".csv"
    if suffix not in FORMATS:
        raise ConfigError(f"-o {args.output}: expected a {' or '.join(FORMATS)} file")
    if suffix == ".parquet":
        require_pyarrow()  # before reading the whole sweep
    table = collect(args.dir, timing=args.timing)
    warn_skipped(table)
    out = aggregate(table) if args.aggregate else table
    if args.output is None:
        out.to_csv(sys.stdout)
        sys.stdout.flush()
    elif suffix == ".parquet":
        out.to_parquet(args.output)
    else:
        out.to_csv(args.output)
    from ibfabric.wording import counted

    print(f"{counted(len(table.runs), 'run')} ({len(table.failures)} failed), {counted(len(out.rows), 'row')}",
          file=sys.stderr)
    for failure in table.failures:
        print(f"{failure.run_id}: {one_line(failure.error)}", file=sys.stderr)
    return 0
