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
  cut15      f = kim2007_15's cut factor on both fabrics: Fig. 9's rate per host is Figs. 7-8's (one
             absolute unit for the paper's three figures, set by the 15-switch network)

  python experiments/kim2007_readings.py factors [--table]  # the factors, per fabric (--table: README's table)
  python experiments/kim2007_readings.py files             # writes experiments/kim2007_readings_<reading>.toml
  python experiments/kim2007_readings.py figures READING   # kim2007_paper_fig{7,8,9}_<reading>.toml
  python experiments/kim2007_readings.py hll READING       # kim2007_paper_hll_<reading>.toml: HV 0-8
  python experiments/kim2007_readings.py hllseeds READING  # kim2007_paper_hllseeds{,_spf}_<reading>.toml: HV 6-8, SPF, 2 seeds
  python experiments/kim2007_readings.py hllload READING   # kim2007_paper_hllload{,_spf}_<reading>.toml: 0.7-1.0, HV 2 and 7
  python experiments/kim2007_readings.py deadlock READING  # kim2007_paper_mpdeadlock_<reading>.toml
  python experiments/kim2007_readings.py fig9screen READING  # kim2007_readings_fig9_<reading>.toml
  python experiments/kim2007_readings.py fig9fine READING  # kim2007_paper_fig9fine_<reading>.toml: 22-26 %
  python experiments/kim2007_readings.py multicast READING  # kim2007_paper_fig10{,f,_long,_cbuf,_cbufvl,_cbufseeds,_drop}_<reading>.toml
                                                           # and kim2007_paper_fig10f_{queue,weights}_<reading>.toml
  python experiments/kim2007_readings.py seeds READING     # kim2007_paper_seeds_fig{7,8}_<reading>.toml: 2 seeds
  python experiments/kim2007_readings.py fabrics READING   # kim2007_paper_fabrics_<reading>.toml: 0.6 on 4 more fabrics
  python experiments/kim2007_readings.py selectors READING # kim2007_paper_selectors_fig{7,8}_<reading>.toml: 4 seeds
  python experiments/kim2007_readings.py adaptive READING  # kim2007_paper_{adaptive,lookup}_<reading>.toml
  python experiments/kim2007_readings.py control READING   # kim2007_paper_control_fig{7,8}_<reading>.toml: 1 ms control
  python experiments/kim2007_readings.py table RESULTS...  # a markdown table of finished runs
  python experiments/kim2007_readings.py mtable [--network] RESULTS...  # Fig. 10's multicast table of finished runs
  python experiments/kim2007_readings.py reductions RESULTS  # each scheme's reduction against SPF, per load
  python experiments/kim2007_readings.py versus RESULTS A B  # scheme B against scheme A, seed by seed
  python experiments/kim2007_readings.py seedwise RESULTS...  # the reductions against SPF seed by seed (fabric by fabric)
  python experiments/kim2007_readings.py latency CLASS RESULTS...  # one class's latency and reduction, seed by seed
  python experiments/kim2007_readings.py networks          # the networks' properties, the paper's beside them
  python experiments/kim2007_readings.py beside A B   # Fig. 10's latencies of A's runs beside B's (same load, policy)
  python experiments/kim2007_readings.py deadlocks RESULTS... # the deadlocked runs and their cycles
  python experiments/kim2007_readings.py gather RESULTS...  # keep their runs in experiments/results/kim2007.json

The eight tables take --committed: the runs gather kept of each RESULTS directory's experiment, not the
directory (the README's Kim tables are printed so and checked by experiments/readme_tables.py).
"""

from __future__ import annotations

import itertools
import json
import random
import re
import sys
from pathlib import Path

import networkx as nx
import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
READINGS = ("host", "spf", "cut", "bisection", "bytens", "vl", "cut15")


def fabric(name: str):
    """The fabric *name*: a shipped topology (``kim2007_15``) or ``kim2007_15_s<seed>``, drawn by
    ``generators.kim2007_paper(15, 9, seed=<seed>)`` (``kim2007_30_s<seed>``: 30 switches, 17 cycles)."""
    from ibfabric.topologies import load_fabric
    from ibfabric.topologies.generators import kim2007_paper

    head, _, seed = name.rpartition("_s")
    if head in DRAWN and seed.isdigit():
        return kim2007_paper(*DRAWN[head], seed=int(seed))
    return load_fabric(str(ROOT / "topologies" / f"{name}.ned"))


#: The drawn fabrics' (switches, cycles), by the name of the shipped one of their size.
DRAWN = {"kim2007_15": (15, 9), "kim2007_30": (30, 17)}


def switch_graph(name: str) -> tuple[nx.MultiGraph, int]:
    f = fabric(name)
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


def sparsest(name: str) -> tuple[float, int, int, int]:
    """``(bound, links, switches on one side, switches)`` of the sparsest cut of at most 3 links of fabric *name*
    (the lowest uniform-traffic bound over those cuts, one host per switch)."""
    g, n = switch_graph(name)
    return (*_sparsest(cuts(g), n), n)


def _sparsest(found, n: int) -> tuple[float, int, int]:
    """``(bound, links, switches on one side)`` of the sparsest of the cuts *found* ((links, side) pairs)."""
    return min((cut_bound(m, k, n), m, k) for m, k in found)


#: The readings' rows of the factors table: reading -> what 100 % is (``{spf}``: SPF's busiest link on
#: kim2007_15, ``{cut}``: what the sparsest cuts are).
READING_TEXT = {
    "host": "a host's link (what the experiment files and the first round used)",
    "spf": "SPF's saturation bound: its busiest link carries {spf}",
    "cut": "the sparsest cut's bound on uniform traffic, no routing can carry more ({cut})",
    "bytens": "λ in bytes per ns over the whole network (Martínez's unit; a 1x SDR link carries 0.25 B/ns)",
    "vl": "one VL's equal share of the link (16 VLs)",
}


def factors_table() -> None:
    """The factors of the readings on kim2007_15 and kim2007_30 as a markdown table (``factors --table``)."""
    names = ("kim2007_15", "kim2007_30")
    f = {name: factors(name) for name in names}
    hosts = len(fabric(names[0]).cas)
    worst = 1 / f[names[0]]["spf"]
    spf = f"{worst:.1f} x a host's rate ({worst * (hosts - 1):.0f} of the {hosts} x {hosts - 1} routes)"
    cut = [sparsest(name) for name in names]
    if all(k in (n // 2, (n + 1) // 2) and m == cut[0][1] for _, m, k, n in cut):
        cut_text = (f"on both fabrics the sparsest cut is a balanced {cut[0][1]}-link cut, so this is also the "
                    "bisection reading")
    else:
        cut_text = "; ".join(f"{name}: a {m}-link cut, {k} | {n - k} switches" for name, (_, m, k, n) in zip(names, cut))
    print("| reading | 100 % is | " + " | ".join(f"f on {name}" for name in names) + " |")
    print("|---|---|" + "---|" * len(names))
    for reading, text in READING_TEXT.items():
        print(f"| {reading} | {text.format(spf=spf, cut=cut_text)} | "
              + " | ".join(f"{f[name][reading]:.4g}" for name in names) + " |")


def factors(name: str) -> dict[str, float]:
    from ibfabric.plugins import PluginSet
    from ibfabric.plugins.routing.metrics import engine_figures

    spf = PluginSet.load().routing_engines["spf"]
    worst = engine_figures(fabric(name).with_lids(), "spf", spf, {}, np.random.default_rng(1)).uniform_worst
    g, n = switch_graph(name)
    found = list(cuts(g))
    sparsest = _sparsest(found, n)[0]
    half = [cut_bound(m, k, n) for m, k in found if k in (n // 2, (n + 1) // 2)]
    if not half:  # no balanced cut of <= 3 links: the smallest balanced cut by exhaustive search (n <= 20)
        raise SystemExit(f"{name}: no balanced cut of at most 3 links")
    cut15 = sparsest if name == "kim2007_15" else factors("kim2007_15")["cut"]
    return {"host": 1.0, "spf": 1 / worst, "cut": sparsest, "bisection": min(half), "bytens": 4 / n,
            "vl": 1 / 16, "cut15": cut15}


#: The networks' table: our fabric files, the paper's column beside the first.
NETWORKS = ("kim2007_15", "kim2007_15_29hosts", "kim2007_30", "kim2007_30_58hosts")
#: What the paper states of its 15-node network, row by row (networks()).
PAPER_NETWORK = {"hosts": '"15-node"', "links": "- / 9", "bits": "9", "per switch": "1-2 (tables of 30 or 60)",
                 "sizes": '"30 or 60"', "bridges": "-", "cdg": '"SPF may deadlock"', "bound": "Fig. 7 runs to 0.6"}


def _sizes(sizes: dict) -> str:
    """§3.3's table sizes of a fabric's switches: each size with its count of switches when there are two at
    most, else their range."""
    counts: dict[int, int] = {}
    for v in sizes.values():
        counts[v] = counts.get(v, 0) + 1
    if len(counts) > 2:
        return f"{min(counts)}-{max(counts)}"
    parts = [f"{v} ({n})" for v, n in sorted(counts.items())]
    if len(parts) > 1:
        parts[0] = parts[0][:-1] + (" switch)" if counts[min(counts)] == 1 else " switches)")
    return ", ".join(parts)


def networks() -> None:
    """The networks' properties (Kim §3, §5.1) measured on the fabric files, the paper's beside the first: hosts,
    links and independent cycles, the path bits Algorithm 2's cycles name (their GF(2) rank), cycles per switch,
    §3.3's table sizes, bridges, whether SPF's channel dependencies are acyclic, and SPF's uniform saturation
    bound (one over the load of SPF's busiest link, in host link rates)."""
    from ibfabric.components.routing.routecheck import check_routes
    from ibfabric.plugins import PluginSet
    from ibfabric.plugins.routing.metrics import engine_figures
    from ibfabric.topologies.generators import kim2007_properties

    spf = PluginSet.load().routing_engines["spf"]
    cols = {}
    for name in NETWORKS:
        f = fabric(name)
        p = kim2007_properties(f)
        n = len(f.switches)
        links = sum(1 for ln in f.links if f.is_switch[ln.a] and f.is_switch[ln.b])
        on = p["on_cycles"].values()
        bridges = p["bridges"]
        short = [f"{f.nodes[a].name.rsplit('.', 1)[-1]}-{f.nodes[b].name.rsplit('.', 1)[-1]}" for a, b in bridges]
        named = f" ({', '.join(short)})" if 0 < len(bridges) <= 2 else ""
        with_lids = f.with_lids()
        cyclic = check_routes(spf(with_lids, {}, np.random.default_rng(1))).cycle
        worst = engine_figures(with_lids, "spf", spf, {}, np.random.default_rng(1)).uniform_worst
        cols[name] = {"hosts": str(len(f.cas)), "links": f"{links} / {links - n + 1}", "bits": str(p["independent"]),
                      "per switch": f"{min(on)}-{max(on)}", "sizes": _sizes(p["table_sizes"]),
                      "bridges": f"{len(bridges)}{named}", "cdg": "cyclic" if cyclic else "acyclic",
                      "bound": f"{1 / worst:.3f}"}
    rows = (("hosts", "hosts"), ("links", "switch links / independent cycles"),
            ("bits", "path bits that name paths (GF(2) rank of Algorithm 2's cycles)"),
            ("per switch", "cycles per switch"), ("sizes", "§3.3 table sizes (S x 2^cycles)"), ("bridges", "bridges"),
            ("cdg", "SPF channel dependencies"), ("bound", "uniform SPF saturation bound (fraction of a host link)"))
    heads = [NETWORKS[0], "paper (15-node)", *(h + " (old)" if h.endswith("hosts") else h for h in NETWORKS[1:])]
    print("| | " + " | ".join(heads) + " |")
    print("|" + "---|" * (len(heads) + 1))
    for key, label in rows:
        cells = [cols[NETWORKS[0]][key], PAPER_NETWORK[key], *(cols[n][key] for n in NETWORKS[1:])]
        print(f"| {label} | " + " | ".join(cells) + " |")


HEADER = """# Kim et al. 2007, Fig. {fig} schemes under the "{reading}" reading of the injection rate (issue 32),
# written by experiments/kim2007_readings.py (do not edit): factor f = {f:.4f} on {topology}, so the paper's
# injection rate L offers f x L of a host's link, {rt}:{be} real time : best effort.  Window:
# {warmup} of warm-up, {measured} measured, {seeds}.  Otherwise as experiments/kim2007_fig{fig}.toml.
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
    # LFU counting every packet an output port sent (all VLs and classes), not only its own choices
    "mp+lfuport+drop": ("multipath", "", "hll", "hv=2", "lfu-port", 0.5, 0.5),
    # best effort all reliable (a named path chosen at the source) or all unreliable (adaptive per switch)
    "mp+lfu/source": ("multipath", "", "none", "", "lfu", 0, 1),
    "mp+lfu/adaptive": ("multipath", "", "none", "", "lfu", 1, 0),
}


def toml_list(xs) -> str:
    return "[" + ", ".join(json.dumps(x) for x in xs) + "]"


#: The [parameters] of the Kim experiment files: each scheme's routing, options, selector and dropper, and the
#: two classes' loads, from the iteration variables.
PARAMETERS = "".join(f'"**.{k}" = "{v}"\n' for k, v in (
    ("routing", "${routing}"), ("routingOptions", "${options}"), ("sm.lmc", "7"), ("optionBits", "7"),
    ("optionsWhen", "slid"), ("adaptiveBy", "slid"), ("pathSelector", "${selector}"), ("adaptive", "${adaptive}"),
    ("randomPath", "${sourcepath}"), ("dropper", "${dropper}"), ("dropperOptions", "${dropopts}"),
    ("load", "${beload}"), ("realtimeLoad", "${rtload}")))


def scheme_lines(schemes: list[str], rows: list[tuple], dropopts: list[str]) -> str:
    """The [iterations] lines that name the schemes and give each its row of :data:`SCHEMES` (iterated together)."""
    columns = {"scheme": schemes, "routing": [r[0] for r in rows], "options": [r[1] for r in rows],
               "dropper": [r[2] for r in rows], "dropopts": dropopts, "selector": [r[4] for r in rows],
               "adaptive": [r[5] for r in rows], "sourcepath": [r[6] for r in rows]}
    return "".join(f"{key} = {toml_list(values)}\n" for key, values in columns.items())


def write(name: str, reading: str, topology: str, fig: int, loads, schemes, warmup: str, time: str,
          measured: str, hvs=None, repeat: int = 1, extra: dict[str, str] | None = None) -> Path:
    f = factors(topology)[reading]
    rt, be = (70, 30) if fig in (7, 9) else (30, 70)
    rows = [SCHEMES[s] for s in schemes]
    dropopts = [r[3] for r in rows]
    if hvs is not None:  # HLL variants of the +drop schemes: scheme@hv
        schemes = [f"{s}@hv{hv}" for s in schemes for hv in hvs]
        rows = [r for r in rows for _ in hvs]
        dropopts = [f"hv={hv}" for _ in range(len(schemes) // len(hvs)) for hv in hvs]
    text = HEADER.format(fig=fig, reading=reading, f=f, topology=topology, rt=rt, be=be, warmup=warmup,
                         measured=measured, name=name,
                         seeds="one seed" if repeat == 1 else f"{repeat} seeds (repetitions 0-{repeat - 1})")
    if extra:
        text += "# Besides: " + ", ".join(f"{k} = {v}" for k, v in extra.items()) + ".\n"
    text += f"""
[experiment]
name = "{name}"
topology = "{topology}"
config = "kim2007-traffic"
time = "{time}"
warmup = "{warmup}"
repeat = {repeat}
together = [["scheme", "routing", "options", "dropper", "dropopts", "selector", "adaptive", "sourcepath"],
            ["load", "offered", "rtload", "beload"]]

[parameters]
{PARAMETERS}{"".join(f'"{k}" = "{v}"' + chr(10) for k, v in (extra or {}).items())}
[iterations]
# load: the paper's injection rate; offered: f x load, a fraction of a host's link
load = {toml_list(loads)}
offered = {toml_list([round(f * x, 5) for x in loads])}
rtload = {toml_list([round(f * x * rt / 100, 5) for x in loads])}
beload = {toml_list([round(f * x * be / 100, 5) for x in loads])}
reading = ["{reading}"]
{scheme_lines(schemes, rows, dropopts)}"""
    path = HERE / f"{name}.toml"
    path.write_text(text)
    return path


SCREEN = ["spf", "spf+drop", "mp+lfu", "mp+lfu+drop", "mp+credit+drop"]


def files() -> None:
    for reading in READINGS:
        if reading in ("bisection", "cut15"):  # same factors as "cut" on kim2007_15 (the sparsest cut is balanced)
            continue
        loads = [0.6] if reading == "vl" else [0.2, 0.4, 0.6]
        print(write(f"kim2007_readings_{reading}", reading, "kim2007_15", 7, loads, SCREEN,
                    "10ms", "70ms", "60 ms"))


COLUMNS = (("status", None), ("offered", "offered_load"), ("accepted", "accepted_load"),
           ("DMP", "realtime_dmp"), ("DMT (ms)", "realtime_dmt_ns"), ("frames", "realtime_frames"),
           ("real time (us)", "real_time_latency_mean"), ("control (us)", "control_latency_mean"),
           ("control n", "control_latency_count"), ("best effort (us)", "best_effort_latency_mean"),
           ("dropped", "packets_dropped"), ("max link", "link_utilisation_max"), ("run s", "wall_s"))


#: What the tables read of a run (and all that ``gather`` keeps): its labels, the statistics of COLUMNS,
#: MCOLUMNS and REDUCED, and the per-group and per-SL latencies Fig. 10's cells pool.
KEPT = re.compile(r"(run_id|experiment|reading|load|scheme|repetition|engine|policy|seed|fabric|status|wall_s"
                  r"|offered_load|accepted_load|realtime_(dmp|dmt_ns|frames|multicast_dmp)|packets_dropped"
                  r"|link_utilisation_max|multicast_copies|(control|best_effort|real_time)_latency_(count|mean)"
                  r"|multicast_groups_g\d+_((member_(network_)?)?latency_(count|mean)|packets|complete)"
                  r"|sl[4-8]_latency_(count|mean)|deadlock_ms|cycle)")

#: The committed rows of the sweeps the README's Kim tables come from (``gather`` writes it).
COMMITTED = HERE / "results" / "kim2007.json"


def rows(directory: str, committed: bool = False) -> list[dict]:
    """One dict per run of a sweep directory (the values as 'ibfabric results DIR --timing', the CLI's own
    reader, prints them; a deadlocked run with its deadlock's time and cycle from its summary), only what
    :data:`KEPT` names; with *committed*, the rows :func:`gather` kept of the directory's experiment in
    :data:`COMMITTED` (the same dicts: the tables print the same from either)."""
    if committed:
        name = Path(directory).name
        try:
            kept = json.loads(COMMITTED.read_text())["experiments"]
        except (OSError, ValueError, KeyError) as exc:
            raise SystemExit(f"{COMMITTED}: cannot read the committed rows ({exc})") from None
        if name not in kept:
            raise SystemExit(f"{COMMITTED}: no rows of {name} (gather them: kim2007_readings.py gather {directory})")
        return kept[name]["rows"]
    import csv
    import io
    import subprocess

    out = subprocess.run([sys.executable, "-m", "ibfabric", "results", directory, "--timing"], check=True,
                         capture_output=True, text=True).stdout
    runs: dict[str, dict] = {}
    for r in csv.DictReader(io.StringIO(out)):
        run = runs.setdefault(r["run_id"], {k: v for k, v in r.items() if k not in ("statistic", "value")})
        run[r["statistic"]] = r["value"]
    for run in runs.values():
        if run.get("status") == "deadlock":
            dl = json.loads((Path(directory) / "runs" / run["run_id"] / "summary.json").read_text())["deadlock"]
            run["deadlock_ms"] = f"{dl['time_ns'] / 1e6:.2f}"
            run["cycle"] = " -> ".join(c.split(".", 1)[1] for c in dl["cycle"])
    return [{k: v for k, v in run.items() if KEPT.fullmatch(k)} for run in runs.values()]


def gather(dirs: list[str]) -> None:
    """Keep the runs of the sweep directories *dirs* in :data:`COMMITTED`, each experiment's rows replacing
    its own (the other experiments' stay), with their count, run time and the versions that made them;
    written atomically."""
    from ibfabric.results import write_atomic

    try:
        res = json.loads(COMMITTED.read_text())
    except (OSError, ValueError):
        res = {"paper": "Kim et al. 2007", "experiments": {}}
    for d in dirs:
        found = sorted(rows(d), key=lambda r: r["run_id"])
        if not found:
            raise SystemExit(f"{d}: no finished runs")
        versions = sorted({json.dumps(json.loads((Path(d) / "runs" / r["run_id"] / "summary.json").read_text())
                                      .get("versions", {}), sort_keys=True) for r in found})
        wall = round(sum(float(r["wall_s"]) for r in found), 1)
        res["experiments"][Path(d).name] = {"runs": len(found), "wall_s": wall,
                                            "versions": [json.loads(v) for v in versions], "rows": found}
        print(f"{d}: {len(found)} runs", file=sys.stderr)
    write_atomic(COMMITTED, _dump(res))


def _dump(res: dict) -> str:
    """*res* as JSON with one run per line (a rerun's diff shows the runs that changed)."""
    from ibfabric.results import to_json

    parts = []
    for name, exp in sorted(res["experiments"].items()):
        head = to_json({k: v for k, v in exp.items() if k != "rows"}, indent=None)[:-1]
        body = ",\n".join("   " + to_json(r, indent=None) for r in exp["rows"])
        parts.append(f' {to_json(name, indent=None)}: {head}, "rows": [\n{body}\n ]}}')
    return f'{{"paper": {to_json(res["paper"], indent=None)}, "experiments": {{\n' + ",\n".join(parts) + "\n}}\n"


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
    if reading != "cut15":  # cut15's Figs. 7-8 are the cut reading's
        print(write(f"kim2007_paper_fig7_{reading}", reading, "kim2007_15", 7, loads, FIG7, "30ms", "180ms",
                    "150 ms"))
        print(write(f"kim2007_paper_fig8_{reading}", reading, "kim2007_15", 8, loads, FIG7, "30ms", "180ms",
                    "150 ms"))
    print(write(f"kim2007_paper_fig9_{reading}", reading, "kim2007_30", 9, [0.04, 0.12, 0.2, 0.28], FIG9,
                "30ms", "180ms", "150 ms"))


def hll(reading: str) -> None:
    """The HLL the paper leaves open: HV 0, 2, 4, 6, 7, 8 (4.1 us to 1.05 ms) for the +drop schemes at 0.6."""
    print(write(f"kim2007_paper_hll_{reading}", reading, "kim2007_15", 7, [0.6], ["spf+drop", "mp+lfu+drop"],
                "30ms", "180ms", "150 ms", hvs=[0, 2, 4, 6, 7, 8]))


def hllseeds(reading: str) -> None:
    """The HLLs near the paper's DMP reduction (HV 6, 7, 8) at 0.6 and SPF there, two seeds: repetition 0 is the run
    of kim2007_paper_hll_<reading>.toml (SPF's: kim2007_paper_fig7_<reading>.toml's), repetition 1 a second seed."""
    print(write(f"kim2007_paper_hllseeds_{reading}", reading, "kim2007_15", 7, [0.6], ["spf+drop", "mp+lfu+drop"],
                "30ms", "180ms", "150 ms", hvs=[6, 7, 8], repeat=2))
    print(write(f"kim2007_paper_hllseeds_spf_{reading}", reading, "kim2007_15", 7, [0.6], ["spf"],
                "30ms", "180ms", "150 ms", repeat=2))


def hllload(reading: str) -> None:
    """Fig. 7 beyond 0.6 (0.7-1.0: 1.0 is the sparsest cut's bound under the cut reading) with dropping at HV 2 and 7,
    and SPF there: the load at which Multipath+LFU+Drop, which misses no deadline at 0.6, starts to miss."""
    loads = [0.7, 0.8, 0.9, 1.0]
    print(write(f"kim2007_paper_hllload_{reading}", reading, "kim2007_15", 7, loads, ["spf+drop", "mp+lfu+drop"],
                "30ms", "180ms", "150 ms", hvs=[2, 7]))
    print(write(f"kim2007_paper_hllload_spf_{reading}", reading, "kim2007_15", 7, loads, ["spf"],
                "30ms", "180ms", "150 ms"))


#: Seeds of generators.kim2007_paper(15, 9): kim2007_15's links (2007; the generated network has another name, which
#: keys its hosts' random streams, so its traffic is another draw, as another seed's) and four more fabrics with
#: the paper's properties.
FABRICS = (2007, 1, 2, 3, 4)


def fabrics(reading: str) -> None:
    """Fig. 7's point 0.6 with dropping at HV 2 (Figs. 7-9's) and HV 7 (where SPF+Drop's DMP reduction is the paper's)
    on kim2007_15 drawn again and four more fabrics with the paper's stated properties: does Multipath+LFU+Drop miss
    no deadline on every fabric, or is kim2007_15's 100 % reduction its own?"""
    schemes = ["spf", "spf+drop@hv2", "spf+drop@hv7", "mp+lfu+drop@hv2", "mp+lfu+drop@hv7"]
    rows = [SCHEMES[s.split("@")[0]] for s in schemes]
    dropopts = [f"hv={s.split('@hv')[1]}" if "@" in s else "" for s in schemes]
    load, (rt, be) = 0.6, (70, 30)
    f = [factors(f"kim2007_15_s{seed}")[reading] for seed in FABRICS]
    name = f"kim2007_paper_fabrics_{reading}"
    factors_text = ", ".join(f"{x:.4f}" for x in f)
    text = f"""# Kim et al. 2007, Fig. 7's point {load} on kim2007_15 and four more fabrics with the paper's properties
# (issue 32), written by experiments/kim2007_readings.py (do not edit): generators.kim2007_paper(15, 9,
# seed=FABRIC), the "{reading}" reading of the injection rate (factor f per fabric: {factors_text}),
# {rt}:{be} real time : best effort, 30 ms of warm-up and 150 ms measured, one seed; SPF, and SPF+Drop and
# Multipath+LFU+Drop at HV 2 and 7.
#
#   ibfabric sweep experiments/{name}.toml --jobs 2
#   python experiments/kim2007_readings.py reductions results/{name}

[experiment]
name = "{name}"
topology = {{ generator = "kim2007", switches = 15, cycles = 9, seed = "${{fabric}}" }}
config = "kim2007-traffic"
time = "180ms"
warmup = "30ms"
repeat = 1
together = [["scheme", "routing", "options", "dropper", "dropopts", "selector", "adaptive", "sourcepath"],
            ["fabric", "offered", "rtload", "beload"]]

[parameters]
{PARAMETERS}
[iterations]
load = {load}
fabric = {toml_list(list(FABRICS))}
offered = {toml_list([round(x * load, 5) for x in f])}
rtload = {toml_list([round(x * load * rt / 100, 5) for x in f])}
beload = {toml_list([round(x * load * be / 100, 5) for x in f])}
reading = ["{reading}"]
{scheme_lines(schemes, rows, dropopts)}"""
    path = HERE / f"{name}.toml"
    path.write_text(text)
    print(path)


def fig9screen(reading: str) -> None:
    """Fig. 9's comparison points (20 %, 28 %) on kim2007_30 under another reading, screening window."""
    print(write(f"kim2007_readings_fig9_{reading}", reading, "kim2007_30", 9, [0.2, 0.28],
                ["spf", "mp+lfu", "mp+lfu+drop"], "10ms", "70ms", "60 ms"))


def fig9fine(reading: str) -> None:
    """Fig. 9 between its last two loads (22, 24, 26 %) on kim2007_30: SPF, Multipath+LFU, +Drop, Fig. 9's window."""
    print(write(f"kim2007_paper_fig9fine_{reading}", reading, "kim2007_30", 9, [0.22, 0.24, 0.26],
                ["spf", "mp+lfu", "mp+lfu+drop"], "30ms", "180ms", "150 ms"))


def deadlock(reading: str) -> None:
    """Multipath without dropping: which half of the best effort (source paths or per-switch choice) deadlocks."""
    print(write(f"kim2007_paper_mpdeadlock_{reading}", reading, "kim2007_15", 7, [0.5, 0.6],
                ["mp+lfu", "mp+lfu/source", "mp+lfu/adaptive"], "30ms", "180ms", "150 ms"))


GROUP_SIZES = (2, 4, 2)  # §5.2: "three groups each with two or four multicast members"
ENGINES = ("replicated-unicast", "synchronous", "asynchronous", "central-buffer")  # Fig. 10a-e, §5.2's order
POLICIES = {  # Fig. 10f (§5.2, asynchronous replication): multicastBandwidth, its options, realtimeSLs, slPriority
    "shared": ("shared", "", 11, "4 5 6 7 8 9 10 11 12 13 14 0 1 2 3"),
    "separate": ("separate", "vls=6 sl=9", 5, "4 9 5 10 6 11 7 12 8 13 14 0 1 2 3"),
    "linear": ("linear", "vls=6 sl=9", 5, "4 9 5 10 6 11 7 12 8 13 14 0 1 2 3"),
    "logarithmic": ("logarithmic", "vls=6 sl=9", 5, "4 9 5 10 6 11 7 12 8 13 14 0 1 2 3"),
}


def multicast_groups(hosts: int, seed: int = 2007) -> str:
    """Fig. 10's groups: 2, 4 and 2 of the *hosts* drawn without replacement by ``random.Random(seed)``.

    The paper names neither the members nor how it chose them; the seed is the fabric's own (2007), fixed
    before any run.  Every host sends to every group (source-based trees: 3 x hosts MLIDs per switch, the
    paper's "3 x 15 entries").
    """
    drawn = random.Random(seed).sample(range(hosts), sum(GROUP_SIZES))
    out, at = [], 0
    for i, k in enumerate(GROUP_SIZES):
        members = " ".join(str(h) for h in sorted(drawn[at:at + k]))
        out.append(f"g{i + 1}: {members} senders=*")
        at += k
    return "; ".join(out)


MHEADER = """# Kim et al. 2007, Fig. {fig} on the paper's set-up under the "{reading}" reading of the injection rate
# (issue 32), written by experiments/kim2007_readings.py (do not edit): kim2007_15 (15 five-port switches,
# one host each), config kim2007-traffic (Table 1's switch: 4200 B input + 4200 B output buffers per VL;
# real time on SLs = VLs 4-14, best effort 0-3, control VL15).  f = {f:.4f}: the paper's injection rate L
# offers f x L of a host's link, 70:30 real time : best effort; 20 % of each host's MPEG-2 streams go
# frame by frame to one of three groups of 2, 4 and 2 members (multicast_groups(15): drawn by seed 2007),
# every host a sender (source-based trees along the unicast routes).  Routing: SPF (§5.2 names none; SPF
# is the paper's default forwarding, deadlock-free on kim2007_15).  Window: {warmup} of warm-up,
# {measured} measured, {seeds}.
{what}#
#   ibfabric sweep experiments/{name}.toml --jobs 1
#   python experiments/kim2007_readings.py mtable results/{name}
"""


def write_multicast(name: str, reading: str, fig: str, loads, warmup: str, time: str, measured: str,
                    engines=ENGINES, extra: dict[str, str] | None = None, repeat: int = 1) -> Path:
    """Fig. 10a-e (*fig* "10": the four replication engines) or Fig. 10f ("10f": the four policies)."""
    topology = "kim2007_15"
    f = factors(topology)[reading]
    if fig == "10":
        what = "# Fig. 10a-e: replicated unicast, synchronous, asynchronous, central buffer (quota=auto).\n"
        together = '[["load", "offered", "rtload", "beload"]]'
        params = '"**.replication" = "${engine}"\n'
        its = f"engine = {toml_list(engines)}\n"
        if any(" " in e for e in engines):  # "ENGINE OPTIONS": replicationOptions per engine
            together = '[["load", "offered", "rtload", "beload"], ["engine", "replication", "replopts"]]'
            params = '"**.replication" = "${replication}"\n"**.replicationOptions" = "${replopts}"\n'
            its += (f"replication = {toml_list([e.split(' ', 1)[0] for e in engines])}\n"
                    f"replopts = {toml_list([e.split(' ', 1)[1] if ' ' in e else '' for e in engines])}\n")
    else:
        what = ("# Fig. 10f: asynchronous replication under four bandwidth policies: shared (multicast on the\n"
                "# unicast real-time VLs, copies first), separate, linear, logarithmic (multicast on SLs/VLs\n"
                "# 9-14, two per group, unicast real time on 4-8: the paper's 6 : 5; VL weights 64 x 1, x members,\n"
                "# x (1 + ln members)).\n")
        together = ('[["load", "offered", "rtload", "beload"], '
                    '["policy", "bwopts", "rtsls", "priority"]]')
        params = ('"**.replication" = "asynchronous"\n"**.multicastBandwidth" = "${policy}"\n'
                  '"**.multicastBandwidthOptions" = "${bwopts}"\n"**.realtimeSLs" = "${rtsls}"\n'
                  '"**.slPriority" = "${priority}"\n')
        rows = list(POLICIES.values())
        its = (f"policy = {toml_list([r[0] for r in rows])}\nbwopts = {toml_list([r[1] for r in rows])}\n"
               f"rtsls = {toml_list([r[2] for r in rows])}\npriority = {toml_list([r[3] for r in rows])}\n")
    if extra:
        what += "# Besides: " + ", ".join(f"{k} = {v}" for k, v in extra.items()) + ".\n"
    text = MHEADER.format(fig=fig, reading=reading, f=f, warmup=warmup, measured=measured, what=what, name=name,
                          seeds="one seed" if repeat == 1 else f"{repeat} seeds (repetitions 0-{repeat - 1})")
    text += f"""
[experiment]
name = "{name}"
topology = "{topology}"
config = "kim2007-traffic"
time = "{time}"
warmup = "{warmup}"
repeat = {repeat}
together = {together}

[parameters]
"**.routing" = "spf"
"**.multicastGroups" = "{multicast_groups(15)}"
"**.realtimeMulticast" = "0.2"
{params}{"".join(f'"{k}" = "{v}"' + chr(10) for k, v in (extra or {}).items())}"**.load" = "${{beload}}"
"**.realtimeLoad" = "${{rtload}}"

[iterations]
# load: the paper's injection rate; offered: f x load, a fraction of a host's link
load = {toml_list(loads)}
offered = {toml_list([round(f * x, 5) for x in loads])}
rtload = {toml_list([round(f * x * 0.7, 5) for x in loads])}
beload = {toml_list([round(f * x * 0.3, 5) for x in loads])}
reading = ["{reading}"]
{its}"""
    path = HERE / f"{name}.toml"
    path.write_text(text)
    return path


def multicast(reading: str) -> None:
    """Fig. 10a-e at L = 0.1-0.6 and Fig. 10f at 0.2, 0.4, 0.5, 0.6 on kim2007_15 under *reading*; the window
    check (kim2007_paper_fig10_long_<reading>: replicated unicast and asynchronous at 0.5 and 0.6, 300 ms); the
    central buffer's size (kim2007_paper_fig10_cbuf_<reading>) and FIFOs (_cbufvl_); Fig. 10f at 0.5-0.6 for the
    members' latency from injection (_fig10f_queue_) and with one packet's VL weight (_fig10f_weights_); SPF+Drop
    (kim2007_paper_fig10_drop_<reading>)."""
    print(write_multicast(f"kim2007_paper_fig10_{reading}", reading, "10", [0.1, 0.2, 0.3, 0.4, 0.5, 0.6],
                          "30ms", "180ms", "150 ms"))
    print(write_multicast(f"kim2007_paper_fig10f_{reading}", reading, "10f", [0.2, 0.4, 0.5, 0.6],
                          "30ms", "180ms", "150 ms"))
    # the window check: twice the measured time at the two highest loads
    print(write_multicast(f"kim2007_paper_fig10_long_{reading}", reading, "10", [0.5, 0.6], "30ms", "330ms",
                          "300 ms", engines=("replicated-unicast", "asynchronous")))
    # the central buffer's size: 16384 B (the default, 3276 B per output port's FIFO), 8192 B and 65536 B
    print(write_multicast(f"kim2007_paper_fig10_cbuf_{reading}", reading, "10", [0.5, 0.6], "30ms", "180ms",
                          "150 ms", engines=("central-buffer size=8192", "central-buffer size=65536")))
    # the central buffer's FIFOs: one per output port (the default) against one per port and VL, and per VL
    # with four times the buffer (each port's share 13107 B: twelve packets, not three)
    print(write_multicast(f"kim2007_paper_fig10_cbufvl_{reading}", reading, "10", [0.5, 0.6], "30ms", "180ms",
                          "150 ms", engines=("central-buffer", "central-buffer fifo=vl",
                                             "central-buffer fifo=vl size=65536")))
    # the central buffer with per-VL FIFOs and 64 KB against the other two switch schemes, three seeds
    print(write_multicast(f"kim2007_paper_fig10_cbufseeds_{reading}", reading, "10", [0.4, 0.5], "30ms", "180ms",
                          "150 ms", engines=("synchronous", "asynchronous", "central-buffer fifo=vl size=65536"),
                          repeat=3))
    # Fig. 10f at 0.5 and 0.6 again, for the members' latency from injection (where multicast waits)
    print(write_multicast(f"kim2007_paper_fig10f_queue_{reading}", reading, "10f", [0.5, 0.6], "30ms", "180ms",
                          "150 ms"))
    # Fig. 10f at 0.5 and 0.6 with every data VL's weight 17 (one 1050 B packet, 17 64-byte units) instead of 64
    # (four packets): do the policies' weights bind once a turn is shorter than a VL's queue?
    print(write_multicast(f"kim2007_paper_fig10f_weights_{reading}", reading, "10f", [0.5, 0.6], "30ms", "180ms",
                          "150 ms", extra={"**.vlArbLow": ",".join(f"{vl}:17" for vl in range(15))}))
    # SPF+Drop instead of SPF (HLL, HV 2 as Figs. 7-9): does the routing choice change the ordering?
    print(write_multicast(f"kim2007_paper_fig10_drop_{reading}", reading, "10", [0.5, 0.6], "30ms", "180ms",
                          "150 ms", engines=("replicated-unicast", "asynchronous"),
                          extra={"**.dropper": "hll", "**.dropperOptions": "hv=2"}))


def seeds(reading: str) -> None:
    """Figs. 7 and 8's key points (0.4-0.6; SPF, Multipath+LFU+Drop) for two seeds: repetition 0 is the run of
    kim2007_paper_fig{7,8}_<reading>.toml (same parameters, same seed), repetition 1 a second seed."""
    for fig in (7, 8):
        print(write(f"kim2007_paper_seeds_fig{fig}_{reading}", reading, "kim2007_15", fig, [0.4, 0.5, 0.6],
                    ["spf", "mp+lfu+drop"], "30ms", "180ms", "150 ms", repeat=2))


def selectors(reading: str) -> None:
    """LFU against Max-Credit (Figs. 7-8, with dropping, 0.4-0.6) under four seeds: repetition 0 is the run of
    kim2007_paper_fig{7,8}_<reading>.toml, repetitions 1-3 further seeds, so each seed pairs the selectors on the
    same traffic; and LFU counting every packet of the port (``lfu-port``, the paper's reason for LFU)."""
    for fig in (7, 8):
        print(write(f"kim2007_paper_selectors_fig{fig}_{reading}", reading, "kim2007_15", fig, [0.4, 0.5, 0.6],
                    ["mp+lfu+drop", "mp+credit+drop", "mp+lfuport+drop"], "30ms", "180ms", "150 ms", repeat=4))


def adaptive(reading: str) -> None:
    """All best effort adaptive at every switch (Fig. 7, no dropping), three seeds, 0.5-0.7: with the option
    chosen at arbitration time (a head waits for every option it has; what Multipath runs with) and chosen once,
    on arrival (``selectAt = lookup``: a head waits for the one it was given, as a source-chosen path does)."""
    for name, extra in (("adaptive", None), ("lookup", {"**.selectAt": "lookup"})):
        print(write(f"kim2007_paper_{name}_{reading}", reading, "kim2007_15", 7, [0.5, 0.6, 0.7],
                    ["mp+lfu/adaptive"], "30ms", "180ms", "150 ms", repeat=3, extra=extra))


def control(reading: str) -> None:
    """Figs. 7 and 8 at 0.4-0.6 (SPF, Multipath+LFU+Drop, Multipath+Credit+Drop), two seeds, with a control
    packet every 1 ms instead of every 33.3 ms: 33 times the control packets (2,250 a run instead of 67) for a
    control load of 0.08 % of a link, so that control latency is measured, not sampled (repetition 0 has the
    seed of kim2007_paper_fig{7,8}_<reading>.toml's runs)."""
    for fig in (7, 8):
        print(write(f"kim2007_paper_control_fig{fig}_{reading}", reading, "kim2007_15", fig, [0.4, 0.5, 0.6],
                    ["spf", "mp+lfu+drop", "mp+credit+drop"], "30ms", "180ms", "150 ms", repeat=2,
                    extra={"**.controlInterval": "1ms"}))


def labelled(name: str, repetition: str) -> str:
    """A row's label: the scheme (engine, policy) of repetition 0 as it is, a later seed's with "(rep N)"."""
    return name if repetition == "0" else f"{name} (rep {repetition})"


def table(dirs: list[str], committed: bool = False) -> None:
    """One row per run, by load (and fabric, where the runs have one), scheme and repetition."""
    found = [rows(d, committed) for d in dirs]
    by_fabric = any("fabric" in r for runs in found for r in runs)
    head = ["reading", "load"] + ["fabric"] * by_fabric + ["scheme"] + [c for c, _ in COLUMNS]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    order = list(SCHEMES)
    for runs in found:
        for r in sorted(runs, key=lambda r: (float(r["load"]), int(r.get("fabric", 0)),
                                             order.index(r["scheme"].split("@")[0]), r["scheme"],
                                             int(r.get("repetition", 0)))):
            scheme = labelled(r["scheme"], r.get("repetition", "0"))
            print("| " + " | ".join([r.get("reading", "host"), r["load"]] + [r.get("fabric", "-")] * by_fabric
                                    + [scheme] + [cell(r, k) for _, k in COLUMNS]) + " |")


def _num(run: dict, key: str) -> float | None:
    v = run.get(key, "")
    return None if v in ("", "None", "nan") else float(v)


def _pooled(run: dict, names: list[str]) -> tuple[float, float | None]:
    """(count, mean) pooled over the statistics *names* (each with ``_count`` and ``_mean``)."""
    n = total = 0.0
    for name in names:
        c, m = _num(run, f"{name}_count"), _num(run, f"{name}_mean")
        if c and m is not None:
            n += c
            total += c * m
    return n, (total / n if n else None)


def multicast_cells(run: dict) -> dict[str, float | None]:
    """Fig. 10's figures of one run (latencies in ns).

    multicast: to the group's last member, pooled over the groups; member: every member's copy; unicast: the
    real-time class less the members' copies (count x mean of each), by difference: the class counts copies
    delivered in the window, the groups those created in it, so the two agree only below saturation (the
    Fig. 10f table checks it against the unicast SLs where they are separate); unicast SLs: SLs 4-8, the
    unicast real time of policies 2-4 exactly.
    """
    groups = sorted({k.split("_")[2] for k in run if k.startswith("multicast_groups_g")})
    _, last = _pooled(run, [f"multicast_groups_{g}_latency" for g in groups])
    nm, member = _pooled(run, [f"multicast_groups_{g}_member_latency" for g in groups])
    _, network = _pooled(run, [f"multicast_groups_{g}_member_network_latency" for g in groups])
    nr, rt = _pooled(run, ["real_time_latency"])
    unicast = (nr * rt - nm * member) / (nr - nm) if rt is not None and member is not None and nr > nm else None
    _, uni_sls = _pooled(run, [f"sl{s}_latency" for s in range(4, 9)])
    sent = sum(_num(run, f"multicast_groups_{g}_packets") or 0 for g in groups)
    complete = sum(_num(run, f"multicast_groups_{g}_complete") or 0 for g in groups)
    return {"multicast": last, "member": member, "member network": network, "real time": rt, "unicast": unicast,
            "unicast SLs": uni_sls, "complete": complete / sent if sent else None}


MCOLUMNS = (("status", None), ("offered", "offered_load"), ("accepted", "accepted_load"),
            ("DMP", "realtime_dmp"), ("DMT (ms)", "realtime_dmt_ns"), ("multicast DMP", "realtime_multicast_dmp"),
            ("multicast (us)", "multicast"), ("member (us)", "member"), ("real time (us)", "real time"),
            ("unicast real time (us)", "unicast"), ("control (us)", "control_latency_mean"),
            ("best effort (us)", "best_effort_latency_mean"), ("copies", "multicast_copies"),
            ("complete", "complete"), ("max link", "link_utilisation_max"), ("run s", "wall_s"))


def mtable(dirs: list[str], network: bool = False, committed: bool = False) -> None:
    """Fig. 10's table: one row per run, by load and then the engines' or the policies' order; with *network*,
    the members' copies' network latency too (from injection: the member latency less the source queue)."""
    for d in dirs:
        found = rows(d, committed)
        policies = any("policy" in r for r in found)
        by = "policy" if policies else "engine"
        order = list(POLICIES) if policies else list(ENGINES)
        cols = list(MCOLUMNS)
        if policies:
            cols.insert(cols.index(("control (us)", "control_latency_mean")), ("unicast SLs 4-8 (us)", "unicast SLs"))
        if network:
            cols.insert(cols.index(("member (us)", "member")) + 1, ("member from injection (us)", "member network"))
        head = ["load", by] + [c for c, _ in cols]
        print("| " + " | ".join(head) + " |")
        print("|" + "---|" * len(head))
        for r in sorted(found, key=lambda r: (float(r["load"]), order.index(r[by].split(" ")[0]), r[by],
                                              int(r.get("repetition", "0")))):
            mc = multicast_cells(r)
            cells = []
            for _, key in cols:
                if key in mc:
                    v = mc[key]
                    cells.append("-" if v is None else f"{v:.3f}" if key == "complete" else f"{v / 1000:,.1f}")
                elif key == "multicast_copies":
                    cells.append(f"{float(r.get(key) or 0):,.0f}")
                else:
                    cells.append(cell(r, key))
            if policies and r[by] == "shared":  # SLs 4-8 carry multicast too under the shared policy
                cells[[k for _, k in cols].index("unicast SLs")] = "(shared)"
            label = labelled(r[by], r.get("repetition", "0"))
            print("| " + " | ".join([r["load"], label] + cells) + " |")


REDUCED = (("DMP", "realtime_dmp"), ("DMT", "realtime_dmt_ns"), ("real time", "real_time_latency_mean"),
           ("control", "control_latency_mean"), ("best effort", "best_effort_latency_mean"))


def reductions(directory: str, base: str = "spf", committed: bool = False) -> None:
    """Each scheme's reduction against *base* at each load, in percent (the paper's unit in §5.1): 1 - x / base."""
    found = [r for r in rows(directory, committed) if r["status"] == "ok"]
    order = list(SCHEMES)
    by_fabric = any("fabric" in r for r in found)
    head = ["load"] + ["fabric"] * by_fabric + ["scheme"] + [f"{c} reduction" for c, _ in REDUCED]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    points = sorted({(r["load"], r.get("repetition", "0"), r.get("fabric", "-")) for r in found},
                    key=lambda x: (float(x[0]), int(x[1]), int(x[2]) if x[2] != "-" else 0))
    for load, rep, fab in points:  # each repetition (fabric) against the base of the same seed (fabric)
        at = {r["scheme"]: r for r in found
              if r["load"] == load and r.get("repetition", "0") == rep and r.get("fabric", "-") == fab}
        if base not in at:
            continue
        for scheme in sorted(at, key=lambda s: (order.index(s.split("@")[0]), s)):
            if scheme == base:
                continue
            label = labelled(scheme, rep)
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
            print("| " + " | ".join([load] + [fab] * by_fabric + [label] + cells) + " |")


def _percent(x: float) -> str:
    """*x* rounded to a whole percent, without the sign of a reduction that rounds to 0."""
    text = f"{x:.0f}"
    return "0" if text == "-0" else text


def seedwise(dirs: list[str], base: str = "spf", committed: bool = False) -> None:
    """Each scheme's reductions against *base* (1 - x / base, in percent) seed by seed (fabric by fabric, where the
    runs have fabrics), side by side, and their mean (of more than one): the runs of *dirs* together (the base may be in a directory
    of its own), each against the base of the same seed (fabric); "-" where either has no figure (no frame missed
    its deadline: no DMT)."""
    found = [r for d in dirs for r in rows(d, committed) if r["status"] == "ok"]
    by = "fabric" if any("fabric" in r for r in found) else "repetition"
    order = list(SCHEMES)
    head = ["load", "scheme", "fabrics" if by == "fabric" else "seeds"] + [c for c, _ in REDUCED]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    at = {(r["load"], r["scheme"], r.get(by, "0")): r for r in found}
    for load in sorted({r["load"] for r in found}, key=float):
        schemes = sorted({s for (ld, s, _) in at if ld == load and s != base},
                         key=lambda s: (order.index(s.split("@")[0]), s))
        for scheme in schemes:
            keys = sorted((k for (ld, s, k) in at if ld == load and s == scheme and (load, base, k) in at), key=int)
            if not keys:
                continue
            cells = []
            for _, key in REDUCED:
                xs = []
                for k in keys:
                    b, x = _num(at[(load, base, k)], key), _num(at[(load, scheme, k)], key)
                    xs.append(None if b is None or x is None or b == 0 else 100 * (1 - x / b))
                known = [x for x in xs if x is not None]
                mean = f" (mean {_percent(sum(known) / len(known))})" if known and len(xs) > 1 else ""
                cells.append(" / ".join("-" if x is None else _percent(x) for x in xs) + (f" %{mean}" if known else ""))
            names = keys if by == "fabric" else [str(int(k) + 1) for k in keys]
            print("| " + " | ".join([load, scheme, " / ".join(names)] + cells) + " |")


def latency(cls: str, dirs: list[str], base: str = "spf", committed: bool = False) -> None:
    """One latency class (*cls*: a name of :data:`REDUCED`, e.g. "control") per experiment and load: each scheme's
    mean latency seed by seed (repetition 0 first) and each scheme's reduction against *base* on the same seed
    (1 - x / base, in percent); "-" where a run has no figure."""
    names = dict(REDUCED)
    if cls not in names:
        raise SystemExit(f"latency: no class {cls!r} (one of {', '.join(names)})")
    key = names[cls]
    order = list(SCHEMES)
    found = [(d, [r for r in rows(d, committed) if r["status"] == "ok"]) for d in dirs]
    schemes = sorted({r["scheme"] for _, runs in found for r in runs}, key=lambda s: (order.index(s.split("@")[0]), s))
    others = [s for s in schemes if s != base]
    head = (["experiment", "load", "seeds"] + [f"{cls}: {s} (us)" for s in schemes]
            + [f"reduction: {s}" for s in others])
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for d, runs in found:
        for load in sorted({r["load"] for r in runs}, key=float):
            at = {(r["scheme"], r.get("repetition", "0")): _num(r, key) for r in runs if r["load"] == load}
            reps = sorted({rep for _, rep in at}, key=int)
            cells = [" / ".join("-" if at.get((s, rep)) is None else f"{at[(s, rep)] / 1000:,.1f}" for rep in reps)
                     for s in schemes]
            for s in others:
                xs = [None if at.get((base, rep)) in (None, 0) or at.get((s, rep)) is None
                      else 100 * (1 - at[(s, rep)] / at[(base, rep)]) for rep in reps]
                cells.append(" / ".join("-" if x is None else _percent(x) for x in xs)
                             + (" %" if any(x is not None for x in xs) else ""))
            print("| " + " | ".join([Path(d).name, load, str(len(reps))] + cells) + " |")


def versus(directory: str, a: str, b: str, committed: bool = False) -> None:
    """Scheme *b* against scheme *a*, seed by seed (each repetition pairs the two on the same traffic): per load and
    latency class, both means over the seeds, *b*'s change against *a* on each seed, and on how many seeds *b* is
    lower."""
    found = [r for r in rows(directory, committed) if r["status"] == "ok"]
    classes = REDUCED[2:]
    head = ["load", "seeds"] + [f"{c}: {a} / {b} (us)" for c, _ in classes] + [
        f"{c}: {b} against {a}, per seed" for c, _ in classes]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for load in sorted({r["load"] for r in found}, key=float):
        at = {(r["scheme"], r.get("repetition", "0")): r for r in found if r["load"] == load}
        reps = sorted({rep for _, rep in at if (a, rep) in at and (b, rep) in at}, key=int)
        means, changes = [], []
        for _, key in classes:
            xa = [_num(at[(a, rep)], key) for rep in reps]
            xb = [_num(at[(b, rep)], key) for rep in reps]
            pairs = [(u, v) for u, v in zip(xa, xb) if u is not None and v is not None]
            if not pairs:
                means.append("-")
                changes.append("-")
                continue
            ch = [100 * (v / u - 1) for u, v in pairs]
            means.append(f"{sum(u for u, _ in pairs) / len(pairs) / 1000:,.1f} / "
                         f"{sum(v for _, v in pairs) / len(pairs) / 1000:,.1f}")  # ns -> us
            changes.append(" ".join(f"{c:+.0f}" for c in ch) + f" % (lower on {sum(c < 0 for c in ch)} of {len(ch)})")
        print("| " + " | ".join([load, str(len(reps))] + means + changes) + " |")


BESIDE = (("multicast", "multicast"), ("member", "member"), ("member from injection", "member network"),
          ("unicast real time", "unicast"), ("best effort", "best_effort_latency_mean"))


def beside(a: str, b: str, committed: bool = False) -> None:
    """Fig. 10's latencies of the runs of *a* beside those of *b* (us, "a / b"): one row per load and policy (or
    engine) that both ran, in mtable's order."""
    runs = []
    for d in (a, b):
        found = [r for r in rows(d, committed) if r["status"] == "ok"]
        by = "policy" if any("policy" in r for r in found) else "engine"
        runs.append({(r["load"], r[by], r.get("repetition", "0")): r for r in found})
    order = list(POLICIES) if by == "policy" else list(ENGINES)
    head = ["load", by] + [c for c, _ in BESIDE]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for key in sorted(set(runs[0]) & set(runs[1]),
                      key=lambda k: (float(k[0]), order.index(k[1].split(" ")[0]), k[1], int(k[2]))):
        figures = []
        for side in runs:
            f = multicast_cells(side[key])
            f["best_effort_latency_mean"] = _num(side[key], "best_effort_latency_mean")
            figures.append(f)
        cells = [" / ".join("-" if f[col] is None else f"{f[col] / 1000:,.1f}" for f in figures) for _, col in BESIDE]
        print("| " + " | ".join([key[0], labelled(key[1], key[2])] + cells) + " |")


def deadlocks(dirs: list[str], committed: bool = False) -> None:
    """The deadlocked runs: when, and the cycle of full buffers the watchdog found (summary.json)."""
    print("| experiment | load | scheme | deadlock at (ms) | cycle |")
    print("|---|---|---|---|---|")
    for d in dirs:
        found = rows(d, committed)
        for r in sorted(found, key=lambda r: (float(r["load"]), r["scheme"], int(r.get("repetition", "0")))):
            if r["status"] != "deadlock":
                continue
            scheme = labelled(r["scheme"], r.get("repetition", "0"))
            print(f"| {r['experiment']} | {r['load']} | {scheme} | {r['deadlock_ms']} | {r['cycle']} |")


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in ("factors", "files", "figures", "hll", "hllseeds", "fig9screen", "deadlock", "table", "reductions", "deadlocks", "multicast", "mtable", "seeds", "fig9fine",
                                         "selectors", "adaptive", "control", "versus", "gather", "seedwise", "fabrics",
                                         "hllload", "latency", "beside", "networks"):
        print(__doc__)
        return 2
    committed = "--committed" in argv[1:]
    argv = [argv[0]] + [a for a in argv[1:] if a != "--committed"]
    if committed and argv[0] not in ("table", "mtable", "reductions", "seedwise", "versus", "deadlocks", "latency",
                                     "beside"):
        print(f"{argv[0]}: --committed is for the tables (table, mtable, reductions, seedwise, versus, deadlocks, "
              "latency, beside)",
              file=sys.stderr)
        return 2
    if argv[0] == "factors" and argv[1:] == ["--table"]:
        factors_table()
    elif argv[0] == "factors":
        for name in ("kim2007_15", "kim2007_30"):
            print(name, {k: round(v, 4) for k, v in factors(name).items()})
    elif argv[0] == "files":
        files()
    elif argv[0] == "figures":
        figures(argv[1])
    elif argv[0] == "hll":
        hll(argv[1])
    elif argv[0] == "hllseeds":
        hllseeds(argv[1])
    elif argv[0] == "deadlock":
        deadlock(argv[1])
    elif argv[0] == "fig9screen":
        fig9screen(argv[1])
    elif argv[0] == "fig9fine":
        fig9fine(argv[1])
    elif argv[0] == "multicast":
        multicast(argv[1])
    elif argv[0] == "seeds":
        seeds(argv[1])
    elif argv[0] == "fabrics":
        fabrics(argv[1])
    elif argv[0] == "hllload":
        hllload(argv[1])
    elif argv[0] == "selectors":
        selectors(argv[1])
    elif argv[0] == "adaptive":
        adaptive(argv[1])
    elif argv[0] == "control":
        control(argv[1])
    elif argv[0] == "versus":
        versus(*argv[1:4], committed=committed)
    elif argv[0] == "mtable":
        mtable([a for a in argv[1:] if a != "--network"], network="--network" in argv, committed=committed)
    elif argv[0] == "networks":
        networks()
    elif argv[0] == "beside":
        if len(argv) != 3:
            print("usage: kim2007_readings.py beside [--committed] A B", file=sys.stderr)
            return 2
        beside(argv[1], argv[2], committed=committed)
    elif argv[0] == "deadlocks":
        deadlocks(argv[1:], committed)
    elif argv[0] == "reductions":
        reductions(argv[1], committed=committed)
    elif argv[0] == "latency":
        if len(argv) < 3:
            print("usage: kim2007_readings.py latency [--committed] CLASS RESULTS...", file=sys.stderr)
            return 2
        latency(argv[1], argv[2:], committed=committed)
    elif argv[0] == "seedwise":
        seedwise(argv[1:], committed=committed)
    elif argv[0] == "gather":
        gather(argv[1:])
    else:
        table(argv[1:], committed)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
