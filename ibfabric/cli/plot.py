"""``ibfabric plot``: draw one statistic of a sweep against another (latency against load)."""

from __future__ import annotations

import argparse
import sys

from ibfabric.cli.results import warn_skipped


def add_parser(sub) -> argparse.ArgumentParser:
    p = sub.add_parser(
        "plot",
        help="plot a statistic of a sweep against another, e.g. latency against offered load",
        description=(
            "Draw statistic Y against statistic X for the sweep output directory DIR: one point per"
            " configuration (the mean over its repetitions, with a shaded 95% confidence band of Y), one"
            " line per value of --hue (each with its own colour, marker and line style), one subplot per value"
            " of --facet.  Needs matplotlib."
        ),
    )
    p.add_argument("dir", metavar="DIR", help="sweep output directory")
    p.add_argument("--x", required=True, metavar="STAT",
                   help="statistic on the x axis, e.g. offered_load, or an iteration variable with numbers, e.g. load")
    p.add_argument("--y", required=True, metavar="STAT", help="statistic on the y axis, e.g. latency_mean")
    p.add_argument("--hue", metavar="VAR", help="iteration variable: one line per value")
    p.add_argument("--facet", metavar="VAR", help="iteration variable: one subplot per value")
    p.add_argument("-o", "--output", metavar="FILE",
                   help="figure file, .png, .svg or .pdf (default DIR/plot-<Y>-vs-<X>.png)")
    p.add_argument("--title", metavar="T", help="title of the figure")
    p.add_argument("--logy", action="store_true",
                   help="logarithmic y axis (a confidence band reaching 0 stops at the smallest positive value plotted)")
    p.add_argument("--unsaturated", action="store_true",
                   help="leave out the configurations whose runs saturated (each line stops at saturation)")
    return p


def run(args) -> int:
    from ibfabric.collect import collect
    from ibfabric.plot import check_format, default_path, plot, require_matplotlib

    path = args.output or default_path(args.dir, args.x, args.y)
    check_format(path)
    require_matplotlib()
    table = collect(args.dir, timing=True)
    warn_skipped(table)
    if table.failures:
        print(f"ibfabric: warning: {len(table.failures)} of {len(table.runs)} runs failed and are left out",
              file=sys.stderr)
    path = plot(table, args.x, args.y, hue=args.hue, facet=args.facet, path=path, title=args.title,
                logy=args.logy, unsaturated=args.unsaturated)
    print(f"figure written to {path}")
    return 0
