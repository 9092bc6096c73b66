"""Bermudez et al. 2006, Fig. 14: where DR's routes differ from FERa's after each sampled failure.

    python experiments/bermudez2006_dr.py routes [--only-differing]  # 7 s: the routes' table of experiments/README.md
    python experiments/bermudez2006_dr.py files    # writes bermudez2006_fig14dr.toml: the failures where they differ
    ibfabric sweep experiments/bermudez2006_fig14dr.toml --jobs 1
    python experiments/bermudez2006_dr.py collect  # FERa against DR in those runs

Fig. 14 simulates one failure per subnet; the paper's "DR provides better
performances than FERa only in a few cases" is about how often DR's routes
are better.  This routes the subnet left by every sampled failure of
``bermudez2006.py targets`` (switch and link failures) of each Fig. 14b-f
subnet with FERa and with DR (LMC 1, as the runs), as the dynamic subnet
manager sees it after the change (the nodes the SM still reaches, the same
LIDs and GUIDs), and compares the routes of every ordered pair of
endpoints (``routecheck.check_routes``): mean hops and the most routes on
one directed link, and counts DR's entries for every endpoint's base LID
that differ from FERa's.  No traffic is simulated.  ``files`` then writes
the Fig. 14 runs (the method of ``bermudez2006_fig14bf.toml``) of FERa and
DR for every failure after which their routes differ.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import bermudez2006 as berm  # noqa: E402

__all__ = ["reduced", "compare", "differing"]


def reduced(fabric, action: str, target: str):
    """*fabric* (with LIDs) less the failed switch (``fail-node``, ``swN``) or link (``fail-link``,
    ``swN.port[p]``), and less every node the subnet manager no longer reaches."""
    from ibfabric.components.routing.fabric import FabricGraph, Link

    name = {i: fabric.nodes[i].name.rpartition(".")[2] for i in range(len(fabric.nodes))}
    links = list(fabric.links)
    if action == "fail-node":
        dead = next(i for i in name if name[i] == target)
        links = [ln for ln in links if dead not in (ln.a, ln.b)]
    elif action == "fail-link":
        sw, _, rest = target.partition(".port[")
        node, port = next(i for i in name if name[i] == sw), int(rest.rstrip("]"))
        links = [ln for ln in links if (ln.a, ln.port_a) != (node, port) and (ln.b, ln.port_b) != (node, port)]
    else:
        raise ValueError(f"'action' must be 'fail-node' or 'fail-link' (got {action!r})")
    adj: dict[int, list[int]] = {}
    for ln in links:
        adj.setdefault(ln.a, []).append(ln.b)
        adj.setdefault(ln.b, []).append(ln.a)
    seen, todo = {fabric.sm_node}, [fabric.sm_node]
    while todo:
        for y in adj.get(todo.pop(), []):
            if y not in seen:
                seen.add(y)
                todo.append(y)
    keep = sorted(seen)
    pos = {x: k for k, x in enumerate(keep)}
    specs = [fabric.nodes[x] for x in keep]
    kept = [Link(pos[ln.a], ln.port_a, pos[ln.b], ln.port_b, ln.width, ln.speed, ln.rate)
            for ln in links if ln.a in pos and ln.b in pos]
    return FabricGraph(specs, kept, sm_node=pos[fabric.sm_node], name=fabric.name)


def compare(fabric) -> dict:
    """FERa's and DR's routes on *fabric* (LMC 1): mean hops, most routes on a link, DR's renamed hosts."""
    from ibfabric.components.routing.routecheck import check_routes
    from ibfabric.plugins import PluginSet

    engines = PluginSet.load().routing_engines
    out, tables = {}, {}
    for eng in ("fera", "dr"):
        t = tables[eng] = engines[eng](fabric, {}, np.random.default_rng(1))
        r = check_routes(t)
        out[eng] = {"mean_hops": r.mean_hops, "max_link_load": int(r.max_link_load), "renamed": int(t.info.get("renamed", 0))}
    # entries at every switch for every endpoint's base LID (DR's first name) that differ from FERa's
    lids = [fabric.lid_of(int(x)) for x in range(len(fabric.nodes)) if fabric.lid_of(int(x))]
    out["differing_entries"] = sum(1 for x in fabric.switches for lid in lids
                                   if tables["dr"].port(int(x), lid) != tables["fera"].port(int(x), lid))
    return out


def differing() -> list[tuple[str, str, str, dict]]:
    """[(subnet, action, target, compare())] for every sampled failure of every Fig. 14b-f subnet."""
    from ibfabric.topologies import load_fabric

    out = []
    for size in berm.FIG14_PAPER:
        key = int(size) if size.isdigit() else size
        g = load_fabric(berm.TOPO_DIR / f"irr{size}.ned").with_lids(lmc=1)
        for action, target in berm.targets(key):
            out.append((size, action, target, compare(reduced(g, action, target))))
    return out


def routes_table(rows, only_differing: bool = False) -> str:
    out = ["| subnet | failure | FERa: mean hops, most routes on a link | DR: mean hops, most routes on a link | DR renamed hosts "
           "| DR entries unlike FERa's (base LIDs) | DR's routes |", "|---|---|---|---|---|---|---|"]
    for size, action, target, c in rows:
        f, d = c["fera"], c["dr"]
        same = c["differing_entries"] == 0 and d["renamed"] == 0
        if same and only_differing:
            continue
        verdict = "FERa's" if same else ("shorter" if d["mean_hops"] < f["mean_hops"] else
                                         "longer" if d["mean_hops"] > f["mean_hops"] else "as long") + \
            (", busiest link " + ("lighter" if d["max_link_load"] < f["max_link_load"] else
                                  "heavier" if d["max_link_load"] > f["max_link_load"] else "the same"))
        out.append(f"| {size} | {'switch' if action == 'fail-node' else 'link'} {target} | {f['mean_hops']:.4f}, {f['max_link_load']} "
                   f"| {d['mean_hops']:.4f}, {d['max_link_load']} | {d['renamed']} | {c['differing_entries']} | {verdict} |")
    n = sum(1 for *_, c in rows if c["differing_entries"] or c["dr"]["renamed"])
    out.append(f"\nDR's routes differ from FERa's after {n} of {len(rows)} failures.")
    return "\n".join(out)


NAME = "bermudez2006_fig14dr"


def write_files(rows) -> Path:
    """FERa and DR after every failure where their routes differ, Fig. 14b-f's method and loads."""
    import json
    import math

    ends = json.loads((berm.TOPO_DIR / "prepass.json").read_text())
    cols = {k: [] for k in ("size", "action", "target", "on", "warm", "time", "load")}
    for size, action, target, c in rows:
        if not (c["differing_entries"] or c["dr"]["renamed"]):
            continue
        t_on = math.ceil((1.2 * max(ends[f"{size}/PIRa"]) + 500_000) / 1000)  # as write_fig14
        for x in berm.FIG14_PAPER_LOADS[size]:
            for k, v in zip(cols, (size, action, target, f"{t_on}us", f"{t_on + 300}us", f"{t_on + 1300}us", x)):
                cols[k].append(v)
    def lst(values) -> str:
        return "[" + ", ".join(json.dumps(v) for v in values) + "]"

    text = f"""# Bermudez et al. 2006, Fig. 14 ("DR provides better performances than FERa only in a few cases"): FERa
# against DR after every sampled failure of the Fig. 14b-f subnets after which their routes differ
# (experiments/bermudez2006_dr.py routes), with the method of bermudez2006_fig14bf.toml.
#
#   ibfabric sweep experiments/{NAME}.toml --jobs 1
#   python experiments/bermudez2006_dr.py collect
#
# GENERATED by `python experiments/bermudez2006_dr.py files` (edit the script, not this file).

[experiment]
name = "{NAME}"
topology = "bermudez2006/irr${{size}}.ned"
config = "bermudez2006"
time = "${{time}}"
warmup = "${{warm}}"
seed = 1
together = [{lst(list(cols))}, ["engine", "routing", "lmc"]]

[parameters]
"**.sm.dynamic" = "true"
"**.sm.routing" = "${{routing}}"
"**.sm.lmc" = "${{lmc}}"
"**.sm.smComputeStep" = "1ns"
"**.traffic" = "uniform"
"**.load" = "0.0001"

[iterations]
{chr(10).join(f"{k} = {lst(v)}" for k, v in cols.items())}
engine = ["FERa", "DR"]
routing = ["fera", "dr"]
lmc = ["0", "1"]

[[events]]
at = "20us"
action = "${{action}}"
target = "${{target}}"

[[events]]
at = "${{on}}"
action = "set-traffic"
target = "**"
load = "${{load}}"
"""
    path = HERE / f"{NAME}.toml"
    path.write_text(text)
    return path


def collect() -> str:
    """Per failure: FERa's and DR's accepted load / mean latency at each load, and the loads where one is better:
    more accepted (by over 0.5 %) or, accepting as much (within 0.5 %), a lower mean latency (by over 1 %)."""
    res: dict = {}
    late = 0
    for v, status, err, sm in berm.runs(NAME):
        a = (sm.get("assimilations") or [{}])[0]
        end = berm.end_ns(a) if a else None
        late += end is None or end > float(v["on"].removesuffix("us")) * 1000
        if sm.get("accepted_load") is not None:
            res[v["size"], v["action"], v["target"], float(v["load"]), v["engine"]] = \
                (sm["accepted_load"], sm["latency_ns"]["mean"] / 1000)
    fails = sorted({k[:3] for k in res}, key=lambda k: (int(k[0].partition("h")[0]), k[1], k[2]))
    out = ["| subnet | failure | offered loads | FERa: accepted / latency us | DR: accepted / latency us | DR better at | FERa better at |",
           "|---|---|---|---|---|---|---|"]

    def ahead(f, x, e, o) -> bool:  # e better than o: more accepted (by over 0.5 %), or as much and over 1 % faster
        (ae, le), (ao, lo) = res[(*f, x, e)], res[(*f, x, o)]
        return ae > 1.005 * ao or (ae >= 0.995 * ao and le < 0.99 * lo)

    dr_better = fera_better = 0
    for f in fails:
        loads = sorted({k[3] for k in res if k[:3] == f})
        cell = lambda e: " ; ".join(f"{res[(*f, x, e)][0]:.3f} / {res[(*f, x, e)][1]:.1f}" if (*f, x, e) in res else "-" for x in loads)  # noqa: E731
        both = [x for x in loads if (*f, x, "FERa") in res and (*f, x, "DR") in res]
        wins = {e: [x for x in both if ahead(f, x, e, o)] for e, o in (("DR", "FERa"), ("FERa", "DR"))}
        dr_better += bool(wins["DR"])
        fera_better += bool(wins["FERa"])
        out.append(f"| {f[0]} | {'switch' if f[1] == 'fail-node' else 'link'} {f[2]} | {', '.join(f'{x:g}' for x in loads)} "
                   f"| {cell('FERa')} | {cell('DR')} | {', '.join(f'{x:g}' for x in wins['DR']) or '-'} "
                   f"| {', '.join(f'{x:g}' for x in wins['FERa']) or '-'} |")
    out.append(f"\nDR better than FERa at some load after {dr_better} of {len(fails)} failures, FERa better than DR after "
               f"{fera_better}; runs with the load on before the assimilation ended: {late}.")
    return "\n".join(out)


def main() -> None:
    import argparse

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("what", choices=["routes", "files", "collect"])
    ap.add_argument("--only-differing", action="store_true", help="routes: the failures after which DR's routes differ only")
    a = ap.parse_args()
    if a.what == "routes":
        print(routes_table(differing(), a.only_differing))
    elif a.what == "files":
        print(write_files(differing()))
    else:
        print(collect())


if __name__ == "__main__":
    main()
