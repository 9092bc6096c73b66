"""IBA congestion control against a hot spot: victims and contributors with CC off and on, and a sweep.

The canonical scenario of the IB congestion-control literature (Gran et al.,
"First experiences with congestion control in InfiniBand hardware", IPDPS
2010; Gran and Reinemo, SIMUTools 2011): contributors send as fast as they
can to one hot host; victims send to other hosts over links the congestion
tree spreads into.  Each scenario runs with congestion control off and on
(the ``SubnetManager``'s defaults, docs/congestion-control.md), then a
sensitivity sweep changes one setting at a time (threshold, marking gap,
ccti_increase, ccti_timer) around the defaults.  Two fabrics:

``two-switch``
    experiments/cc_two_switches.ned: contributors c0, c1 (on s1) and c3 (on
    s2) at full load to ``hot``; the victim ``v`` on s1 sends 0.6 of its
    link to ``dv`` on s2, sharing the s1 -> s2 link with c0 and c1.
``fattree``
    a 4-ary 2-tree (16 hosts, 8 switches, ``ftree`` routing): nine
    contributors (h5-h7, h9-h11, h13-h15) at full load to h0; the victim h4
    sends 0.5 of its link to h8, over the spine (s0_0) that carries the hot
    spot's traffic to its leaf.
``cluster2014``
    a real cluster's ``ibnetdiscover`` dump (tests/data/ibnetdiscover/:
    8 Mellanox SX6036 switches, 144 CAs, QDR/FDR10 links; ``minhop``
    routing, the importer's default): 16 contributors drawn from the seed
    send to the first host, the 128 others are victims sending uniformly to
    every host but the hot spot; every host offers 0.3 of its link (without
    the hot spot the fabric carries that: 0.307 accepted).  Off/on only (a
    run takes a few seconds).

All hosts 4x QDR (but the dump's), 2 KiB messages, 1 ms with 200 us of warm-up, seed 1; the fat tree
6 ms with 4 ms of warm-up (:data:`WINDOWS`: its nine contributors' CCTIs take about 1 ms to climb to
where they share the hot link, and the victim then drains the backlog it built meanwhile until about
4 ms; experiments/README.md shows the transient).
Figures are the ``flows`` section's: each role's accepted load per host as a
fraction of its link, and the hot spot's link utilisation.

::

    python experiments/congestion_control.py            # everything, about a minute; writes results/congestion_control.json
    python experiments/congestion_control.py --quick    # the off/on pairs only, 200 us (a smoke test)
    python experiments/congestion_control.py --report   # the tables of an existing results file
    python experiments/congestion_control.py --plot     # and results/congestion_control_sweep.png (matplotlib)
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
import warnings
from pathlib import Path

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results" / "congestion_control.json"

FATTREE_CONTRIBUTORS = ["h5", "h6", "h7", "h9", "h10", "h11", "h13", "h14", "h15"]

#: (run length, warm-up) of a scenario whose congestion control needs longer to settle than the default
WINDOWS = {"fattree": ("6ms", "4ms")}

#: the sweep: one setting at a time, the others at their defaults
SWEEP = {
    "ccThreshold": ["4", "8", "12", "15"],
    "ccMarkingGap": ["0", "3", "15"],
    "ccCctiIncrease": ["1", "2", "4"],
    "ccCctiTimer": ["2", "10", "50"],
}


def scenario(name: str, tmp: str) -> tuple[str, dict]:
    """The topology and the overrides of scenario *name*."""
    if name == "cluster2014":
        return str(HERE.parent / "tests" / "data" / "ibnetdiscover" / "cluster2014_8sw_144hca.ibnetdiscover"), {
            "**.load": "0.3", "**.traffic": "hot-spot", "**.trafficOptions": "contributors=16 hotspot=0"}
    if name == "two-switch":
        return str(HERE / "cc_two_switches.ned"), {
            "**.v.load": "0.6", "**.load": "1.0", "**.traffic": "hot-spot",
            "**.trafficOptions": "contributors=c0,c1,c3 node=hot victims=v victimTo=dv"}
    from ibfabric.topologies.generators import fat_tree, to_ned

    path = os.path.join(tmp, "fattree4x2.ned")
    with open(path, "w") as f:
        f.write(to_ned(fat_tree(4, 2), name="fattree4x2", routing="ftree"))
    ov = {f"**.{h}.load": "1.0" for h in FATTREE_CONTRIBUTORS}
    ov.update({"**.load": "0.5", "**.traffic": "hot-spot",
               "**.trafficOptions": f"contributors={','.join(FATTREE_CONTRIBUTORS)} node=h0 victims=h4 victimTo=h8"})
    return path, ov


def run(name: str, cc: bool, tmp: str, until: str, warmup: str, **settings: str) -> dict:
    """One run: the figures of its ``flows`` and ``congestion_control`` sections."""
    from ibfabric.simulation import Simulation

    topology, ov = scenario(name, tmp)
    ov.update({"**.messageSize": "2048B", "**.sm.congestionControl": "true" if cc else "false"})
    ov.update({f"**.sm.{k}": v for k, v in settings.items()})
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        s = Simulation(topology, overrides=ov, seed=1, warmup=warmup).run(until)
    f = s["flows"]
    out = {"scenario": name, "cc": cc, "settings": settings, "window": [warmup, until], "wall_s": round(time.perf_counter() - t0, 2),
           "victim": f["roles"]["victim"]["per_host_of_link"],
           "victim_latency_ns": f["roles"]["victim"]["latency_mean_ns"],
           "contributor": f["roles"]["contributor"]["per_host_of_link"],
           "hot_spot": f["hot_spot"]["of_link"], "conservation_ok": s["conservation_ok"]}
    if cc:
        c = s["congestion_control"]
        out.update({k: c[k] for k in ("fecn_marked", "becn_received", "ccti_max", "ccti_mean_at_end")})
    return out


def report(results: dict) -> str:
    lines = ["| scenario | CC | victim (of link) | victim latency (us) | contributor (of link, each) | hot spot link |"
             " FECN | BECN | CCTI max |", "|---|---|---|---|---|---|---|---|---|"]
    for r in results["pairs"]:
        lines.append(f"| {r['scenario']} | {'on' if r['cc'] else 'off'} | {r['victim']:.3f} |"
                     f" {r['victim_latency_ns'] / 1e3:,.1f} | {r['contributor']:.3f} | {r['hot_spot']:.3f} |"
                     f" {r.get('fecn_marked', '-')} | {r.get('becn_received', '-')} | {r.get('ccti_max', '-')} |")
    if results.get("sweep"):
        lines += ["", "| scenario | setting | value | victim | contributor | hot spot | FECN | BECN | CCTI max |",
                  "|---|---|---|---|---|---|---|---|---|"]
        for r in results["sweep"]:
            (k, v), = r["settings"].items()
            lines.append(f"| {r['scenario']} | {k} | {v} | {r['victim']:.3f} | {r['contributor']:.3f} |"
                         f" {r['hot_spot']:.3f} | {r['fecn_marked']} | {r['becn_received']} | {r['ccti_max']} |")
    return "\n".join(lines)


def plot(results: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(SWEEP), figsize=(4 * len(SWEEP), 3.4), sharey=True)
    for ax, key in zip(axes, SWEEP):
        for name, marker in (("two-switch", "o"), ("fattree", "s")):
            rows = [r for r in results["sweep"] if r["scenario"] == name and key in r["settings"]]
            xs = [float(r["settings"][key]) for r in rows]
            ax.plot(xs, [r["victim"] for r in rows], marker=marker, label=f"{name} victim")
            ax.plot(xs, [r["hot_spot"] for r in rows], marker=marker, linestyle="--", label=f"{name} hot spot")
        ax.set_xlabel(key)
        ax.set_ylim(0, 1.05)
    axes[0].set_ylabel("fraction of the link")
    axes[0].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="the off/on pairs only, 200 us, nothing written")
    ap.add_argument("--report", action="store_true", help="print the tables of the results file")
    ap.add_argument("--plot", action="store_true", help="also plot the sweep (needs matplotlib)")
    args = ap.parse_args(argv)
    if args.report:
        results = json.loads(RESULTS.read_text(encoding="utf-8"))
    else:
        until, warmup = ("200us", "50us") if args.quick else ("1ms", "200us")
        results = {"pairs": [], "sweep": []}
        with tempfile.TemporaryDirectory() as tmp:
            for name in ("two-switch", "fattree", "cluster2014"):
                if args.quick and name == "cluster2014":
                    continue
                u, w = (until, warmup) if args.quick else WINDOWS.get(name, (until, warmup))
                for cc in (False, True):
                    results["pairs"].append(run(name, cc, tmp, u, w))
                if not args.quick and name != "cluster2014":
                    for key, values in SWEEP.items():
                        for v in values:
                            results["sweep"].append(run(name, True, tmp, u, w, **{key: v}))
        if not args.quick:
            RESULTS.parent.mkdir(exist_ok=True)
            tmpfile = RESULTS.with_suffix(".tmp")
            tmpfile.write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
            tmpfile.replace(RESULTS)
    print(report(results))
    if args.plot and results.get("sweep"):
        plot(results, RESULTS.with_name("congestion_control_sweep.png"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
