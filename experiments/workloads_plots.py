"""The figures of experiments/README.md, "workloads": completion time and slowdown against fat-tree levels.

``ibfabric plot`` draws one sweep's statistic against a numeric variable; the fat-tree sweep has two
workloads, so this script draws one figure per workload from the sweep's table, filtered:

    ibfabric sweep experiments/workloads_fattree.toml --jobs 2
    python experiments/workloads_plots.py results/workloads_fattree experiments/results
"""

from __future__ import annotations

import argparse
from pathlib import Path

from ibfabric.collect import Table, collect
from ibfabric.plot import plot


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("results", help="the sweep's output directory (results/workloads_fattree)")
    ap.add_argument("out", help="directory for the figures")
    args = ap.parse_args(argv)
    table = collect(args.results)
    wl = table.columns.index("wl")
    for name in sorted({row[wl] for row in table.rows}):
        part = Table(list(table.columns), [row for row in table.rows if row[wl] == name])
        short = name.split(":")[0]
        for stat, what in (("workload_completion_ns", "completion"), ("workload_slowdown", "slowdown")):
            path = Path(args.out) / f"workloads_fattree-{short}-{what}.png"
            plot(part, x="levels", y=stat, hue="routing", facet="bg", path=path, title=name)
            print(f"wrote {path}")


if __name__ == "__main__":
    main()
