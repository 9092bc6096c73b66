"""Kim et al. 2007 (issue 32): the readings of the paper's "injection rate".

The paper plots Figs. 7-9 against an injection rate of 10-60 % (Fig. 9: up
to about 30 %) and never says what 100 % is.  Each reading below is a factor
f: a host offers f x (the paper's rate) of its link's data rate, split 70:30
(Fig. 7) or 30:70 (Fig. 8) between real time and best effort.  The factors are
computed here from the fabrics, never typed in:

  host       f = 1: a fraction of a host's link (what the experiment files use)
  spf        f = 1 / (SPF's busiest link under uniform traffic): 1.0 = SPF's saturation bound
  cut        f = the sparsest cut's bound on uniform traffic: 1.0 = no routing can carry more
  bisection  f = the smallest balanced cut's bound (halves of floor(N/2) and ceil(N/2) switches)
  bytens     f = 4 / N: the rate in bytes per ns over the whole network (a 1x SDR link carries 0.25 B/ns)
  vl         f = 1 / 16: a fraction of one VL's equal share of the link (Table 1's 16 VLs)

  python experiments/kim2007_readings.py factors           # the factors, per fabric
  python experiments/kim2007_readings.py files             # writes experiments/kim2007_readings_<reading>.toml
  python experiments/kim2007_readings.py figures READING   # kim2007_paper_fig{7,8,9}_<reading>.toml
  python experiments/kim2007_readings.py hll READING       # kim2007_paper_hll_<reading>.toml: HV 0-8
  python experiments/kim2007_readings.py deadlock READING  # kim2007_paper_mpdeadlock_<reading>.toml
  python experiments/kim2007_readings.py fig9screen READING  # kim2007_readings_fig9_<reading>.toml
  python experiments/kim2007_readings.py table RESULTS...  # a markdown table of finished runs
  python experiments/kim2007_readings.py reductions RESULTS  # each scheme's reduction against SPF, per load
  python experiments/kim2007_readings.py deadlocks RESULTS... # the deadlocked runs and their cycles
"""

from __future__ import annotations

import itertools
import json
import sys
from pathlib import Path

import networkx as nx
import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
READINGS = ("host", "spf", "cut", "bisection", "bytens", "vl")


def switch_graph(name: str) -> tuple[nx.MultiGraph, int]:
    from ibfabric.topologies import load_fabric

    f = load_fabric(str(ROOT / "topologies" / f"{name}.ned"))
    g = nx.MultiGraph()
    sw = [int(i) for i in np.flatnonzero(f.is_switch)]
    g.add_nodes_from(sw)
    for ln in f.links:
        a, b = int(ln.a), int(ln.b)
        if a in g and b in g:
            g.add_edge(a, b)
    return g, len(sw)


def cut_bound(links: int, k: int, n: int) -> float:
    """Uniform rate r per host (one host per switch) over a cut of *links* links with k switches on one side."""
    return links * (n - 1) / (k * (n - k))


def cuts(g: nx.MultiGraph, most: int = 3):
    """(links, switches on one side) of every cut of at most *most* links that splits the switch graph."""
    edges = list(g.edges(keys=True))
    for m in range(1, most + 1):
        for chosen in itertools.combinations(edges, m):
            h = g.copy()
            h.remove_edges_from(chosen)
            parts = list(nx.connected_components(h))
            if len(parts) == 2:
                yield m, len(parts[0])


def factors(name: str) -> dict[str, float]:
    from ibfabric.plugins import PluginSet
    from ibfabric.topologies import load_fabric
    from ibfabric.plugins.routing.metrics import engine_figures

    fabric = load_fabric(str(ROOT / "topologies" / f"{name}.ned")).with_lids()
    spf = PluginSet.load().routing_engines["spf"]
    worst = engine_figures(fabric, "spf", spf, {}, np.random.default_rng(1)).uniform_worst
    g, n = switch_graph(name)
    found = list(cuts(g))
    sparsest = min(cut_bound(m, k, n) for m, k in found)
    half = [cut_bound(m, k, n) for m, k in found if k in (n // 2, (n + 1) // 2)]
    if not half:  # no balanced cut of <= 3 links: the smallest balanced cut by exhaustive search (n <= 20)
        raise SystemExit(f"{name}: no balanced cut of at most 3 links")
    return {"host": 1.0, "spf": 1 / worst, "cut": sparsest, "bisection": min(half), "bytens": 4 / n,
            "vl": 1 / 16}


HEADER = """# Kim et al. 2007, Fig. {fig} schemes under the "{reading}" reading of the injection rate (issue 32),
# written by experiments/kim2007_readings.py (do not edit): factor f = {f:.4f} on {topology}, so the paper's
# injection rate L offers f x L of a host's link, {rt}:{be} real time : best effort.  Window:
# {warmup} of warm-up, {measured} measured, one seed.  Otherwise as experiments/kim2007_fig{fig}.toml.
#
#   ibfabric sweep experiments/{name}.toml --jobs 1
#   python experiments/kim2007_readings.py table results/{name}
"""

SCHEMES = {  # scheme: routing, options, dropper, dropopts, selector, adaptive, sourcepath
    "updn-r0": ("updn-tree", "root=sw0", "none", "", "first", 0, 0),
    "updn-r7": ("updn-tree", "root=sw7", "none", "", "first", 0, 0),
    "updn-r14": ("updn-tree", "root=sw14", "none", "", "first", 0, 0),
    "updn-r15": ("updn-tree", "root=sw15", "none", "", "first", 0, 0),
    "updn-r29": ("updn-tree", "root=sw29", "none", "", "first", 0, 0),
    "spf": ("multipath", "", "none", "", "first", 0, 0),
    "spf+drop": ("multipath", "", "hll", "hv=2", "first", 0, 0),
    "mp+lfu": ("multipath", "", "none", "", "lfu", 0.5, 0.5),
    "mp+lfu+drop": ("multipath", "", "hll", "hv=2", "lfu", 0.5, 0.5),
    "mp+credit": ("multipath", "", "none", "", "max-credit", 0.5, 0.5),
    "mp+credit+drop": ("multipath", "", "hll", "hv=2", "max-credit", 0.5, 0.5),
    # best effort all reliable (a named path chosen at the source) or all unreliable (adaptive per switch)
    "mp+lfu/source": ("multipath", "", "none", "", "lfu", 0, 1),
    "mp+lfu/adaptive": ("multipath", "", "none", "", "lfu", 1, 0),
}


def toml_list(xs) -> str:
    return "[" + ", ".join(json.dumps(x) for x in xs) + "]"


def write(name: str, reading: str, topology: str, fig: int, loads, schemes, warmup: str, time: str,
          measured: str, hvs=None) -> Path:
    f = factors(topology)[reading]
    rt, be = (70, 30) if fig in (7, 9) else (30, 70)
    rows = [SCHEMES[s] for s in schemes]
    dropopts = [r[3] for r in rows]
    if hvs is not None:  # HLL variants of the +drop schemes: scheme@hv
        schemes = [f"{s}@hv{hv}" for s in schemes for hv in hvs]
        rows = [r for r in rows for _ in hvs]
        dropopts = [f"hv={hv}" for _ in range(len(schemes) // len(hvs)) for hv in hvs]
    text = HEADER.format(fig=fig, reading=reading, f=f, topology=topology, rt=rt, be=be, warmup=warmup,
                         measured=measured, name=name)
    text += f"""
[experiment]
name = "{name}"
topology = "{topology}"
config = "kim2007-traffic"
time = "{time}"
warmup = "{warmup}"
repeat = 1
together = [["scheme", "routing", "options", "dropper", "dropopts", "selector", "adaptive", "sourcepath"],
            ["load", "offered", "rtload", "beload"]]

[parameters]
"**.routing" = "${{routing}}"
"**.routingOptions" = "${{options}}"
"**.sm.lmc" = "7"
"**.optionBits" = "7"
"**.optionsWhen" = "slid"
"**.adaptiveBy" = "slid"
"**.pathSelector" = "${{selector}}"
"**.adaptive" = "${{adaptive}}"
"**.randomPath" = "${{sourcepath}}"
"**.dropper" = "${{dropper}}"
"**.dropperOptions" = "${{dropopts}}"
"**.load" = "${{beload}}"
"**.realtimeLoad" = "${{rtload}}"

[iterations]
# load: the paper's injection rate; offered: f x load, a fraction of a host's link
load = {toml_list(loads)}
offered = {toml_list([round(f * x, 5) for x in loads])}
rtload = {toml_list([round(f * x * rt / 100, 5) for x in loads])}
beload = {toml_list([round(f * x * be / 100, 5) for x in loads])}
reading = ["{reading}"]
scheme = {toml_list(schemes)}
routing = {toml_list([r[0] for r in rows])}
options = {toml_list([r[1] for r in rows])}
dropper = {toml_list([r[2] for r in rows])}
dropopts = {toml_list(dropopts)}
selector = {toml_list([r[4] for r in rows])}
adaptive = {toml_list([r[5] for r in rows])}
sourcepath = {toml_list([r[6] for r in rows])}
"""
    path = HERE / f"{name}.toml"
    path.write_text(text)
    return path


SCREEN = ["spf", "spf+drop", "mp+lfu", "mp+lfu+drop", "mp+credit+drop"]


def files() -> None:
    for reading in READINGS:
        if reading == "bisection":  # the sparsest cut is a balanced one on both fabrics: same factor as "cut"
            continue
        loads = [0.6] if reading == "vl" else [0.2, 0.4, 0.6]
        print(write(f"kim2007_readings_{reading}", reading, "kim2007_15", 7, loads, SCREEN,
                    "10ms", "70ms", "60 ms"))


COLUMNS = (("status", None), ("offered", "offered_load"), ("accepted", "accepted_load"),
           ("DMP", "realtime_dmp"), ("DMT (ms)", "realtime_dmt_ns"), ("frames", "realtime_frames"),
           ("real time (us)", "real_time_latency_mean"), ("control (us)", "control_latency_mean"),
           ("control n", "control_latency_count"), ("best effort (us)", "best_effort_latency_mean"),
           ("dropped", "packets_dropped"), ("max link", "link_utilisation_max"), ("run s", "wall_s"))


def rows(directory: str) -> list[dict]:
    """One dict per run of a sweep directory, from 'ibfabric results DIR --timing' (the CLI's own reader)."""
    import csv
    import io
    import subprocess

    out = subprocess.run([sys.executable, "-m", "ibfabric", "results", directory, "--timing"], check=True,
                         capture_output=True, text=True).stdout
    runs: dict[str, dict] = {}
    for r in csv.DictReader(io.StringIO(out)):
        run = runs.setdefault(r["run_id"], {k: v for k, v in r.items() if k not in ("statistic", "value")})
        run[r["statistic"]] = r["value"]
    return list(runs.values())


def cell(run: dict, key: str | None) -> str:
    if key is None:
        return run["status"]
    v = run.get(key, "")
    if v in ("", "None", "nan"):
        return "-"
    x = float(v)
    if key.endswith("latency_mean"):
        return f"{x / 1000:,.1f}"
    if key == "realtime_dmt_ns":
        return f"{x / 1e6:.2f}"
    if key in ("packets_dropped", "realtime_frames", "control_latency_count"):
        return f"{x:,.0f}"
    if key == "wall_s":
        return f"{x:.1f}"
    return f"{x:.3f}"


FIG7 = ["updn-r0", "updn-r7", "updn-r14", "spf", "spf+drop", "mp+lfu", "mp+lfu+drop", "mp+credit",
        "mp+credit+drop"]
FIG9 = ["updn-r0", "updn-r15", "updn-r29", "spf", "spf+drop", "mp+lfu", "mp+lfu+drop"]


def figures(reading: str) -> None:
    """Figs. 7 and 8 (kim2007_15, loads 0.1-0.6) and Fig. 9 (kim2007_30, 0.04-0.28) under *reading*."""
    loads = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6]
    print(write(f"kim2007_paper_fig7_{reading}", reading, "kim2007_15", 7, loads, FIG7, "30ms", "180ms", "150 ms"))
    print(write(f"kim2007_paper_fig8_{reading}", reading, "kim2007_15", 8, loads, FIG7, "30ms", "180ms", "150 ms"))
    print(write(f"kim2007_paper_fig9_{reading}", reading, "kim2007_30", 9, [0.04, 0.12, 0.2, 0.28], FIG9,
                "30ms", "180ms", "150 ms"))


def hll(reading: str) -> None:
    """The HLL the paper leaves open: HV 0, 2, 4, 6, 7, 8 (4.1 us to 1.05 ms) for the +drop schemes at 0.6."""
    print(write(f"kim2007_paper_hll_{reading}", reading, "kim2007_15", 7, [0.6], ["spf+drop", "mp+lfu+drop"],
                "30ms", "180ms", "150 ms", hvs=[0, 2, 4, 6, 7, 8]))


def fig9screen(reading: str) -> None:
    """Fig. 9's comparison points (20 %, 28 %) on kim2007_30 under another reading, screening window."""
    print(write(f"kim2007_readings_fig9_{reading}", reading, "kim2007_30", 9, [0.2, 0.28],
                ["spf", "mp+lfu", "mp+lfu+drop"], "10ms", "70ms", "60 ms"))


def deadlock(reading: str) -> None:
    """Multipath without dropping: which half of the best effort (source paths or per-switch choice) deadlocks."""
    print(write(f"kim2007_paper_mpdeadlock_{reading}", reading, "kim2007_15", 7, [0.5, 0.6],
                ["mp+lfu", "mp+lfu/source", "mp+lfu/adaptive"], "30ms", "180ms", "150 ms"))


def table(dirs: list[str]) -> None:
    head = ["reading", "load", "scheme"] + [c for c, _ in COLUMNS]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for d in dirs:
        found = rows(d)
        order = list(SCHEMES)
        for r in sorted(found, key=lambda r: (float(r["load"]), order.index(r["scheme"].split("@")[0]),
                                              r["scheme"])):
            print("| " + " | ".join([r.get("reading", "host"), r["load"], r["scheme"]]
                                    + [cell(r, k) for _, k in COLUMNS]) + " |")


REDUCED = (("DMP", "realtime_dmp"), ("DMT", "realtime_dmt_ns"), ("real time", "real_time_latency_mean"),
           ("control", "control_latency_mean"), ("best effort", "best_effort_latency_mean"))


def reductions(directory: str, base: str = "spf") -> None:
    """Each scheme's reduction against *base* at each load, in percent (the paper's unit in §5.1): 1 - x / base."""
    found = [r for r in rows(directory) if r["status"] == "ok"]
    order = list(SCHEMES)
    head = ["load", "scheme"] + [f"{c} reduction" for c, _ in REDUCED]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for load in sorted({r["load"] for r in found}, key=float):
        at = {r["scheme"]: r for r in found if r["load"] == load}
        if base not in at:
            continue
        for scheme in sorted(at, key=lambda s: order.index(s.split("@")[0])):
            if scheme == base:
                continue
            cells = []
            for _, key in REDUCED:
                b, x = at[base].get(key, ""), at[scheme].get(key, "")
                ok = lambda v: v not in ("", "None", "nan")  # noqa: E731
                if not ok(x):
                    cells.append("(none missed)" if key == "realtime_dmt_ns" else "-")
                elif not ok(b) or float(b) == 0:
                    cells.append("- (SPF 0)" if ok(b) else "-")
                else:
                    cells.append(f"{100 * (1 - float(x) / float(b)):+.0f} %")
            print("| " + " | ".join([load, scheme] + cells) + " |")


def deadlocks(dirs: list[str]) -> None:
    """The deadlocked runs: when, and the cycle of full buffers the watchdog found (summary.json)."""
    print("| experiment | load | scheme | deadlock at (ms) | cycle |")
    print("|---|---|---|---|---|")
    for d in dirs:
        for r in sorted(rows(d), key=lambda r: (float(r["load"]), r["scheme"])):
            if r["status"] != "deadlock":
                continue
            dl = json.loads((Path(d) / "runs" / r["run_id"] / "summary.json").read_text())["deadlock"]
            cycle = " -> ".join(c.split(".", 1)[1] for c in dl["cycle"])
            print(f"| {r['experiment']} | {r['load']} | {r['scheme']} | {dl['time_ns'] / 1e6:.2f} | {cycle} |")


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in ("factors", "files", "figures", "hll", "fig9screen", "deadlock", "table", "reductions", "deadlocks"):
        print(__doc__)
        return 2
    if argv[0] == "factors":
        for name in ("kim2007_15", "kim2007_30"):
            print(name, {k: round(v, 4) for k, v in factors(name).items()})
    elif argv[0] == "files":
        files()
    elif argv[0] == "figures":
        figures(argv[1])
    elif argv[0] == "hll":
        hll(argv[1])
    elif argv[0] == "deadlock":
        deadlock(argv[1])
    elif argv[0] == "fig9screen":
        fig9screen(argv[1])
    elif argv[0] == "deadlocks":
        deadlocks(argv[1:])
    elif argv[0] == "reductions":
        reductions(argv[1])
    else:
        table(argv[1:])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
