"""Reproduce Martínez et al. (2003) Table 2: how many routing options FA gives each (switch, destination).

Static analysis, no simulation: for random irregular fabrics of 8, 16, 32
and 64 switches (4 hosts each, 4 or 6 links to other switches, one link
between neighbours, 10 topologies per size, as in §5.1), the ``fa`` routing
engine fills each destination's LID range with the up*/down* escape port
and minimal adaptive ports, at most MR distinct ports in all (MR = 2, 3,
4), and :func:`ibfabric.plugins.routing.fa.option_counts` gives the share
of (switch, destination) pairs with 1, 2, 3, 4 distinct ports.  The table
prints min/mean/max over the topologies beside the paper's averages;
``experiments/README.md`` discusses the differences.

::

    python experiments/martinez2003_table2.py                         # everything, about 20 s; writes experiments/results/martinez2003_table2.json
    python experiments/martinez2003_table2.py --seeds 2 --sizes 8,16  # a smoke test, about a second
    python experiments/martinez2003_table2.py --report                # the tables of an existing results file
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results" / "martinez2003_table2.json"

#: Table 2 of the paper: percentage of (switch, destination) pairs with 1, 2, 3, 4 routing options,
#: averaged over 10 topologies, by (links per switch, switches, MR = most options); None where the paper has "-".
#: The paper gives no 6-link row for 8 switches.
PAPER_TABLE2: dict[tuple[int, int, int], tuple[float | None, ...]] = {
    (4, 8, 2): (57.14, 42.86, None, None),
    (4, 8, 3): (57.14, 22.14, 20.72, None),
    (4, 8, 4): (57.14, 22.14, 19.46, 1.26),
    (4, 16, 2): (54.79, 45.21, None, None),
    (4, 16, 3): (54.79, 31.75, 13.46, None),
    (4, 16, 4): (54.79, 31.75, 11.83, 1.62),
    (4, 32, 2): (48.07, 51.93, None, None),
    (4, 32, 3): (48.07, 35.86, 16.07, None),
    (4, 32, 4): (48.07, 35.86, 13.21, 2.86),
    (4, 64, 2): (41.32, 58.68, None, None),
    (4, 64, 3): (41.32, 41.20, 17.48, None),
    (4, 64, 4): (41.32, 41.20, 14.09, 3.39),
    (6, 16, 2): (49.33, 50.67, None, None),
    (6, 16, 3): (49.33, 24.33, 26.34, None),
    (6, 16, 4): (49.33, 24.33, 20.29, 6.05),
    (6, 32, 2): (45.39, 54.61, None, None),
    (6, 32, 3): (45.39, 26.49, 28.12, None),
    (6, 32, 4): (45.39, 26.49, 13.50, 14.62),
    (6, 64, 2): (37.29, 62.71, None, None),
    (6, 64, 3): (37.29, 32.65, 30.06, None),
    (6, 64, 4): (37.29, 32.65, 19.13, 10.93),
}
HOSTS_PER_SWITCH = 4


# -------------------------------------------------------------------- jobs


def topology_job(switches: int, links: int, seed: int, options: list[int]) -> dict[str, Any]:
    """One random fabric: its shape, and the option shares of ``fa`` for every MR in *options*."""
    from ibfabric.plugins.routing import fa
    from ibfabric.topologies import generators as gen

    t0 = time.perf_counter()
    g = gen.irregular(switches, links_per_switch=links, hosts_per_switch=HOSTS_PER_SWITCH, seed=seed)
    # one LMC for every MR (2^LMC LIDs per host, at least the largest MR): the same LIDs give the same
    # up*/down* escape routes, so MR only caps the adaptive ports, as in the paper's nested columns
    g = g.with_lids(lmc=(max(options) - 1).bit_length())
    counts = {}
    tables = None
    for mr in options:
        t = fa.compute(g, {"options": str(mr)})
        counts[mr] = {k: float(v) for k, v in t.info["option_counts"].items()}
        if tables is None:
            tables = t
    out = {"switches": switches, "links": links, "seed": seed, "counts": counts}
    out.update(_shape(tables))
    out["wall_s"] = time.perf_counter() - t0
    return out


def _shape(tables) -> dict[str, Any]:
    """What decides the option counts: degrees, distances, minimal ports per pair, escape ports off minimal paths.

    Pairs are (switch, destination switch) pairs without the destination's own switch; every switch has
    the same number of hosts, so shares per destination host are the same.
    """
    from ibfabric.plugins.routing._common import SwitchView

    g = tables.fabric
    adj = g.switch_adjacency()
    hops = g.switch_hops()
    view = SwitchView(g)
    S = view.S
    off = ~np.eye(S, dtype=bool)
    # minimal ports of switch s towards switch t: neighbours one hop closer to t
    closer = np.zeros((S, S), dtype=np.int64)
    escape_off = 0
    for s in range(S):
        nb = view.nbr[s][view.nbr[s] >= 0]
        closer[s] = (hops[nb] == hops[s] - 1).sum(axis=0)
    # the up*/down* escape port (entry d) of s towards the first host of each switch
    first_host = {}
    for e in range(len(g.ep_node)):
        a = int(view.ep_row[e])
        if not g.is_switch[int(g.ep_node[e])] and a >= 0 and a not in first_host:
            first_host[a] = int(g.ep_lid[e])
    for a, lid in first_host.items():
        for s in range(S):
            if s != a:
                nxt = int(view.nbr[s, int(tables.lft[s, lid])])
                escape_off += int(hops[nxt, a] != hops[s, a] - 1)
    m = closer[off]
    pairs = S * (S - 1)
    return {
        "degree_min": int(adj.sum(axis=1).min()), "degree_max": int(adj.sum(axis=1).max()),
        "parallel_links": int((adj > 1).sum() // 2), "switch_links": int(adj.sum() // 2),
        "diameter": int(hops.max()), "mean_hops": float(hops[off].mean()),
        "neighbour_share": float((hops[off] == 1).mean()),
        "minimal_ports": {int(k): float((m == k).mean()) for k in np.unique(m)},
        "escape_nonminimal_share": escape_off / pairs if pairs else 0.0,
        "root": tables.info.get("root"),
    }


# ------------------------------------------------------------------ report


def summarise(topologies: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Min, mean and max share (in percent) of each option count, by links, switches and MR, with the paper's."""
    groups: dict[tuple[int, int, int], list[dict[int, float]]] = {}
    for r in topologies:
        for mr, c in r["counts"].items():
            groups.setdefault((r["links"], r["switches"], int(mr)), []).append({int(k): v for k, v in c.items()})
    rows = []
    for (links, sw, mr), cs in sorted(groups.items()):
        shares = np.array([[100 * c.get(k, 0.0) for k in range(1, mr + 1)] for c in cs])
        paper = PAPER_TABLE2.get((links, sw, mr))
        rows.append({"links": links, "switches": sw, "options": mr, "topologies": len(cs),
                     "mean": shares.mean(axis=0).tolist(), "min": shares.min(axis=0).tolist(),
                     "max": shares.max(axis=0).tolist(), "paper": list(paper[:mr]) if paper else None})
    return rows


def report(res: dict[str, Any]) -> str:
    """Markdown tables of a results dict: ours (mean, min-max) beside the paper's, then the fabrics' shapes."""
    out = []
    rows = summarise(res["topologies"])
    n = max((r["topologies"] for r in rows), default=0)
    for links in sorted({r["links"] for r in rows}):
        out.append(f"### {links} links per switch: % of (switch, destination) pairs with k routing options\n")
        out.append(f"Ours: mean over {n} topologies (min-max) / paper's mean.\n")
        out.append("| switches | MR | 1 | 2 | 3 | 4 |")
        out.append("|---|---|---|---|---|---|")
        for r in (r for r in rows if r["links"] == links):
            cells = []
            for k in range(4):
                if k >= r["options"]:
                    cells.append("-")
                    continue
                p = r["paper"][k] if r["paper"] and r["paper"][k] is not None else None
                cells.append(f"{r['mean'][k]:.2f} ({r['min'][k]:.2f}-{r['max'][k]:.2f}) / "
                             + ("-" if p is None else f"{p:.2f}"))
            out.append(f"| {r['switches']} | {r['options']} | " + " | ".join(cells) + " |")
        out.append("")
    out.append("### The fabrics (min-max over the topologies)\n")
    out.append("| links | switches | degree | parallel links | diameter | mean hops | neighbours % "
               "| 1 minimal port % | escape off minimal % |")
    out.append("|---|---|---|---|---|---|---|---|---|")
    keys = sorted({(r["links"], r["switches"]) for r in res["topologies"]})
    for links, sw in keys:
        ts = [r for r in res["topologies"] if (r["links"], r["switches"]) == (links, sw)]

        def rng(f, fmt="{:.0f}"):
            v = [f(t) for t in ts]
            lo, hi = fmt.format(min(v)), fmt.format(max(v))
            return lo if lo == hi else f"{lo}-{hi}"

        lo, hi = min(t["degree_min"] for t in ts), max(t["degree_max"] for t in ts)
        out.append(f"| {links} | {sw} | {lo if lo == hi else f'{lo}-{hi}'} | "
                   f"{rng(lambda t: t['parallel_links'])} | {rng(lambda t: t['diameter'])} | "
                   f"{rng(lambda t: t['mean_hops'], '{:.2f}')} | {rng(lambda t: 100 * t['neighbour_share'], '{:.1f}')} | "
                   f"{rng(lambda t: 100 * t['minimal_ports'].get(1, t['minimal_ports'].get('1', 0.0)), '{:.1f}')} | "
                   f"{rng(lambda t: 100 * t['escape_nonminimal_share'], '{:.1f}')} |")
    out.append("")
    out.append(f"Wall time: {res.get('wall_s', 0):.1f} s, one process\n")
    return "\n".join(out)


# -------------------------------------------------------------------- main


def _int_list(text: str) -> list[int]:
    try:
        values = [int(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated integers (got {text!r})") from None
    if not values or min(values) < 1:
        raise argparse.ArgumentTypeError(f"expected positive integers (got {text!r})")
    return values


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=RESULTS, help=f"results file (default {RESULTS.relative_to(HERE.parent)})")
    ap.add_argument("--sizes", type=_int_list, default=[8, 16, 32, 64], help="switch counts (default 8,16,32,64)")
    ap.add_argument("--seeds", type=int, default=10, help="topologies per size: seeds 1..N (default 10)")
    ap.add_argument("--links", type=_int_list, default=[4, 6], help="links per switch (default 4,6)")
    ap.add_argument("--options", type=_int_list, default=[2, 3, 4], help="most routing options, MR (default 2,3,4)")
    ap.add_argument("--report", action="store_true", help="print the tables of --out and exit")
    args = ap.parse_args(argv)
    if args.report:
        try:
            res = json.loads(args.out.read_text())
        except (OSError, ValueError) as exc:
            ap.error(f"cannot read {args.out}: {exc}")
        print(report(res))
        return 0
    if args.seeds < 1:
        ap.error(f"--seeds must be at least 1 (got {args.seeds})")
    if max(args.options) > 128:
        ap.error(f"--options must be at most 128 (got {max(args.options)})")
    t0 = time.perf_counter()
    topologies = []
    for links in args.links:
        for sw in args.sizes:
            for seed in range(1, args.seeds + 1):
                try:
                    topologies.append(topology_job(sw, links, seed, args.options))
                except ValueError as exc:  # a fabric the generator cannot build (too few switches for the links)
                    ap.error(f"{sw} switches with {links} links each: {exc}")
            print(f"done {links} links, {sw} switches, {args.seeds} topologies", file=sys.stderr)
    res = {"paper": "Martínez et al. 2003, Table 2", "hosts_per_switch": HOSTS_PER_SWITCH,
           "sizes": args.sizes, "seeds": list(range(1, args.seeds + 1)), "links": args.links,
           "options": args.options, "wall_s": time.perf_counter() - t0, "topologies": topologies}
    res["summary"] = summarise(topologies)
    from ibfabric.results import to_json, write_atomic

    write_atomic(args.out, to_json(res, indent=1) + "\n")
    print(report(res))
    print(f"\nresults written to {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
