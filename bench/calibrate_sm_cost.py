"""Calibrate the subnet manager's computation-time model (``components/sm/cost.py``).

``python -m bench.calibrate_sm_cost`` routes the shipped irregular fabrics
and random irregular fabrics of 8, 16, 24, 32, 48 and 64 four-port switches
(3 switch-to-switch links and 1 host each, as ``bench.routing`` and
Bermúdez et al. 2006, §4.1; seeds 1-3) with every engine of the paper and
the other engines that route irregular fabrics, measures each call's CPU
time (``time.process_time``, best of ``--repeat``) and its work
(``tables.info["work_total"]``), and fits

* one global cost per step: ``exp(mean(log(cpu / work)))``, the
  least-squares fit of ``log cpu = log work + log step``, so every fabric
  and engine weighs the same whatever its size;
* one cost per step for each engine, the same fit on that engine's runs.

It prints one JSON line per (engine, fabric), then the coefficients, the
spread of ``cpu / (work * step)`` and how often each model orders two
engines on one fabric as their measured CPU times do.  Copy the printed
``STEP_NS`` / ``STEP_NS_BY_ENGINE`` into ``components/sm/cost.py`` and the
table into ``docs/routing.md`` when recalibrating.
"""

from __future__ import annotations

import argparse
import datetime
import itertools
import json
import math
import os
import sys
import time
from pathlib import Path

import numpy as np

from ibfabric.plugins import PluginSet
from ibfabric.topologies import load_fabric
from ibfabric.topologies.generators import irregular

from .routing import machine, sequential_lids

SIZES = [8, 16, 24, 32, 48, 64]
SHIPPED = ["bermudez2006_fig1", "irregular16", "kim2007_15", "kim2007_15h1", "kim2007_30"]
#: engine label -> (engine, options, LMC the fabric needs)
ENGINES = {
    "pira": ("pira", {}, 0),
    "fera": ("fera", {}, 0),
    "dr": ("dr", {}, 3),
    "hybrid+fera": ("hybrid", {"final": "fera"}, 0),
    "hybrid+dr": ("hybrid", {"final": "dr"}, 3),
    "updn": ("updn", {}, 0),
    "updn-tree": ("updn-tree", {}, 0),
    "minhop": ("minhop", {}, 0),
    "spf": ("spf", {}, 0),
    "sssp": ("sssp", {}, 0),
    "dfsssp": ("dfsssp", {}, 0),
    "lash": ("lash", {}, 0),
    "dor": ("dor", {}, 0),
    "fa": ("fa", {}, 1),
}


def fabrics(sizes, seeds):
    """(label, switches, fabric without LIDs) of the calibration set."""
    root = Path(__file__).resolve().parent.parent / "topologies"
    for name in SHIPPED:
        yield name, None, load_fabric(root / f"{name}.ned")
    for s in sizes:
        for seed in seeds:
            yield f"irregular-{s}-s{seed}", s, irregular(s, links_per_switch=3, hosts_per_switch=1, num_ports=4, seed=seed)


def cpu_best_of(fn, n: int):
    best, out = math.inf, None
    for _ in range(n):
        t0 = time.process_time()
        out = fn()
        best = min(best, time.process_time() - t0)
    return best, out


def measure(sizes, seeds, repeat: int, engines=ENGINES):
    plugins = PluginSet.load()
    rows = []
    for label, s, g in fabrics(sizes, seeds):
        lids = {lmc: sequential_lids(g, lmc) for lmc in {v[2] for v in engines.values()}}
        for name, (engine, opts, lmc) in engines.items():
            compute = plugins.routing_engines[engine]
            try:
                cpu, t = cpu_best_of(lambda: compute(lids[lmc], opts, np.random.default_rng(1)), repeat)
            except Exception as exc:  # an engine that refuses the fabric (too few LIDs for DR, ...)
                print(json.dumps({"fabric": label, "engine": name, "refused": str(exc)}), flush=True)
                continue
            row = {"fabric": label, "switches": s or len(g.switches), "random": s is not None, "engine": name,
                   "work": int(t.info["work_total"]), "cpu_s": cpu}
            if "work_phases" in t.info:
                row["phases"] = t.info["work_phases"]
            rows.append(row)
            print(json.dumps(row), flush=True)
    return rows


def fit(rows):
    """Global and per-engine cost per step (ns), fitted in log space."""
    logr = lambda rs: [math.log(r["cpu_s"] * 1e9 / r["work"]) for r in rs if r["work"] > 0 and r["cpu_s"] > 0]
    glob = math.exp(float(np.mean(logr(rows))))
    per = {}
    for name in dict.fromkeys(r["engine"] for r in rows):
        per[name] = math.exp(float(np.mean(logr([r for r in rows if r["engine"] == name]))))
    # the hybrids' coexistence check alone: hybrid CPU minus PIRa's and the final engine's, per step of the check
    cpu = {(r["fabric"], r["engine"]): r for r in rows}
    logs = []
    for r in rows:
        if "phases" not in r:
            continue
        final = r["engine"].partition("+")[2]
        p, f = cpu.get((r["fabric"], "pira")), cpu.get((r["fabric"], final))
        rest = r["cpu_s"] - (p["cpu_s"] if p else 0) - (f["cpu_s"] if f else 0)
        if p and f and rest > 0 and r["phases"]["coexistence"] > 0:
            logs.append(math.log(rest * 1e9 / r["phases"]["coexistence"]))
    if logs:
        per["coexistence"] = math.exp(float(np.mean(logs)))
    return glob, per


def modelled(row, per) -> float:
    """Seconds with the per-engine costs; a hybrid phase by phase, as ``sm_cost.compute_time_ns`` does."""
    if "phases" not in row:
        return row["work"] * per[row["engine"]] / 1e9
    final = row["engine"].partition("+")[2]
    ph = row["phases"]
    return (ph["provisional"] * per["pira"] + ph["final"] * per[final] + ph["coexistence"] * per.get("coexistence", 0)) / 1e9


def ordering_agreement(rows, step_of) -> float:
    """Share of (fabric, engine pair) whose modelled times order as their measured CPU times."""
    agree = total = 0
    by_fabric: dict[str, list] = {}
    for r in rows:
        by_fabric.setdefault(r["fabric"], []).append(r)
    for rs in by_fabric.values():
        for a, b in itertools.combinations(rs, 2):
            ma, mb = a["work"] * step_of(a), b["work"] * step_of(b)
            if a["cpu_s"] == b["cpu_s"]:
                continue
            total += 1
            agree += (ma < mb) == (a["cpu_s"] < b["cpu_s"])
    return agree / total if total else float("nan")


def spread(rows, step_of) -> float:
    """Geometric standard deviation of measured / modelled time (1.0 = exact)."""
    v = [math.log(r["cpu_s"] * 1e9 / (r["work"] * step_of(r))) for r in rows if r["work"] > 0 and r["cpu_s"] > 0]
    return math.exp(float(np.std(v)))


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.calibrate_sm_cost", description=__doc__.split("\n")[0])
    p.add_argument("--repeat", type=int, default=3, help="best of N CPU-time measurements per call (default 3)")
    p.add_argument("--seeds", type=int, default=3, help="random fabrics per size (default 3)")
    p.add_argument("--quick", action="store_true", help="sizes 8 and 16 only, one repetition (a smoke run)")
    args = p.parse_args(argv)
    sizes = [8, 16] if args.quick else SIZES
    repeat = 1 if args.quick else args.repeat
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    print(json.dumps({"bench": "calibrate_sm_cost", "date": datetime.date.today().isoformat(), "machine": machine(),
                      "load_average_1min": load}))
    rows = measure(sizes, range(1, args.seeds + 1), repeat)
    glob, per = fit(rows)
    print(json.dumps({"STEP_NS": round(glob, 2), "STEP_NS_BY_ENGINE": {k: round(v, 2) for k, v in per.items()}}))
    print(json.dumps({
        "ordering_agreement": {"global": round(ordering_agreement(rows, lambda r: glob), 4),
                               "per_engine": round(ordering_agreement(rows, lambda r: per[r["engine"]]), 4),
                               "per_engine_hybrid_by_phase": round(ordering_agreement(
                                   rows, lambda r: modelled(r, per) * 1e9 / r["work"]), 4)},
        "spread": {"global": round(spread(rows, lambda r: glob), 3),
                   "per_engine": round(spread(rows, lambda r: per[r["engine"]]), 3)},
    }))
    # the paper's order (Fig. 10/11): PIRa < FERa < DR on every fabric, measured and modelled
    order = {"measured": 0, "global": 0, "per_engine": 0, "fabrics": 0}
    by = {(r["fabric"], r["engine"]): r for r in rows}
    for fab in dict.fromkeys(r["fabric"] for r in rows):
        trio = [by.get((fab, e)) for e in ("pira", "fera", "dr")]
        if None in trio:
            continue
        order["fabrics"] += 1
        for key, val in (("measured", lambda r: r["cpu_s"]), ("global", lambda r: r["work"] * glob),
                         ("per_engine", lambda r: r["work"] * per[r["engine"]])):
            v = [val(r) for r in trio]
            order[key] += v[0] < v[1] < v[2]
    print(json.dumps({"pira_fera_dr_order": order}))
    # the paper's sizes: mean work, CPU and modelled time per engine
    print(f"{'engine':12s} {'S':>3s} {'work':>9s} {'cpu ms':>9s} {'global ms':>9s} {'per-eng ms':>12s}")
    for name in per:
        for s in sizes if name != "coexistence" else ():
            rs = [r for r in rows if r["engine"] == name and r["random"] and r["switches"] == s]
            if not rs:
                continue
            w = float(np.mean([r["work"] for r in rs]))
            c = float(np.mean([r["cpu_s"] for r in rs]))
            m = float(np.mean([modelled(r, per) for r in rs]))
            print(f"{name:12s} {s:3d} {w:9.0f} {c * 1e3:9.3f} {w * glob / 1e6:9.3f} {m * 1e3:12.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
