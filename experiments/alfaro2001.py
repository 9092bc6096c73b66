"""Reproduce Alfaro, Sánchez and Duato (2001) §5 on the paper's network model.

Table 2 (connections established against connections tried: admission only),
Fig. 4 (delivered traffic against established connections) and Figs. 8-9
(delay and jitter in IAT units, here reported for every SL, SL 0 and SL 1
first) for the irregular, hypercube and mesh networks and both packet sizes.
The model and the scaled windows are in ``experiments/alfaro2001.toml``;
``experiments/README.md`` has the numbers next to the paper's.

::

    python experiments/alfaro2001.py                  # everything; writes experiments/results/alfaro2001.json
    python experiments/alfaro2001.py --only table2    # admission only, about a minute
    python experiments/alfaro2001.py --quick          # short windows: a smoke test of the whole pipeline
    python experiments/alfaro2001.py --report         # the tables of an existing results file
    python experiments/alfaro2001.py --plot           # also draw the figures (needs the 'plot' extra)
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import tomllib
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
CONFIG = HERE / "alfaro2001.toml"
RESULTS = HERE / "results" / "alfaro2001.json"

#: Table 2 of the paper: established connections per (topology, packet size), by connections tried.
PAPER_TABLE2 = {
    "tried": [256, 512, 1024, 1536, 2048, 2560, 2816, 3072],
    ("irregular", 256): [256, 512, 1024, 1536, 2048, 2560, 2623, 2623],
    ("irregular", 4096): [256, 512, 1024, 1536, 2048, 2560, 2631, 2631],
    ("hypercube", 256): [256, 512, 1024, 1536, 2048, 2560, 2598, 2598],
    ("hypercube", 4096): [256, 512, 1024, 1536, 2048, 2560, 2679, 2679],
    ("mesh", 256): [256, 512, 1024, 1536, 2048, 2518, 2518, 2518],
    ("mesh", 4096): [256, 512, 1024, 1536, 2048, 2560, 2598, 2598],
}
#: Fig. 4's plateau as the text gives it (bytes/cycle/host).
PAPER_FIG4 = {256: 0.769, 4096: 0.757}


# ------------------------------------------------------------------ set-up


def load_config(path: Path = CONFIG) -> dict[str, Any]:
    with open(path, "rb") as f:
        return tomllib.load(f)


def fabric(cfg: dict[str, Any], name: str):
    from ibfabric.topologies import generators as gen

    t = cfg["topologies"][name]
    net = cfg["network"]
    link = {"width": net["width"], "speed": net["speed"]}
    h = net["hosts_per_switch"]
    if t["kind"] == "irregular":
        return gen.irregular(t["switches"], links_per_switch=t["links_per_switch"], hosts_per_switch=h,
                             seed=t["seed"], **link)
    if t["kind"] == "mesh":
        return gen.mesh(tuple(t["dims"]), hosts_per_switch=h, **link)
    if t["kind"] == "hypercube":
        return gen.hypercube(t["dimension"], hosts_per_switch=h, **link)
    raise ValueError(f"unknown topology kind {t['kind']!r}")


def overrides(cfg: dict[str, Any], size: int) -> dict[str, str]:
    ov = dict(cfg["parameters"])
    ov.update(cfg["packet"][str(size)]["parameters"])
    return ov


def build(cfg: dict[str, Any], name: str, size: int, warmup: float = 0.0):
    """The simulation of one topology and packet size (not run)."""
    from ibfabric.simulation import Simulation
    from ibfabric.topologies.generators import to_ned

    ned = to_ned(fabric(cfg, name), name=name, routing=cfg["network"]["routing"])
    return Simulation(ned, overrides=overrides(cfg, size), seed=cfg["seed"], warmup=warmup)


def times(cfg: dict[str, Any], size: int, quick: bool) -> dict[str, float]:
    from ibfabric.simulation import parse_time

    p = cfg["packet"][str(size)]
    t = {k: parse_time(p[k]) for k in ("warmup", "fig4_window", "delay_window", "drain")}
    if quick:
        t = {k: v / 20 for k, v in t.items()}
    return t


# -------------------------------------------------------------------- jobs


def table2_job(cfg: dict[str, Any], name: str, size: int) -> dict[str, Any]:
    """Admission only: for each number tried, a fresh set of tables and the paper's establishment."""
    from ibfabric.components.qos import Admission, establish
    from ibfabric.kernel import module_rng

    t0 = time.perf_counter()
    sim = build(cfg, name, size)
    adm_cfg = cfg["admission"]
    rows = []
    for tried in adm_cfg["tried"]:
        policy = sim.plugins.arbitration_policies[adm_cfg["policy"]](adm_cfg.get("options", {}))
        adm = Admission(sim.tables, policy)
        # the generator QosNetwork.establish uses, so traffic runs get these very connections
        est = establish(adm, tried, module_rng(sim.seed, "qos:establish"), packet_size=size,
                        retries=adm_cfg["retries"])
        rate = sim.hosts[0].tx[sim.hosts[0].first_port].link.rate
        rows.append({"tried": tried, "established": est.established, "per_sl": est.accepted,
                     "attempts": est.attempts, "exhausted_sl": est.exhausted_sl,
                     "requested_load": sum(c.bandwidth for c in est.connections) / (len(sim.hosts) * rate),
                     "rejections": dict(adm.rejections), "tables": _table_use(adm)})
    return {"kind": "table2", "topology": name, "size": size, "rows": rows, "wall_s": time.perf_counter() - t0}


def _table_use(adm) -> dict[str, Any]:
    """How full the host interfaces' tables are: slots and low-priority entries left (means)."""
    import numpy as np

    hosts = [adm.ports[(int(h), adm.fabric.ports(int(h))[0])] for h in adm.hosts]
    out_of_entries = [p for p in hosts if p.free_entries() == 0]
    return {"host_free_slots_mean": float(np.mean([p.free_slots() for p in hosts])),
            "host_free_entries_mean": float(np.mean([p.free_entries() for p in hosts])),
            "hosts_out_of_entries": len(out_of_entries),
            "free_slots_mean_when_out_of_entries": float(np.mean([p.free_slots() for p in out_of_entries]))
            if out_of_entries else None}


def traffic_job(cfg: dict[str, Any], name: str, size: int, n: int, kind: str, quick: bool) -> dict[str, Any]:
    """Establish *n* connections, run their CBR traffic and measure (Fig. 4 point, or a delay run)."""
    from ibfabric.components.qos.cbr import QosNetwork

    t = times(cfg, size, quick)
    window = t["delay_window"] if kind == "delay" else t["fig4_window"]
    t0 = time.perf_counter()
    sim = build(cfg, name, size, warmup=t["warmup"])
    adm_cfg = cfg["admission"]
    qos = QosNetwork(sim, policy=adm_cfg["policy"], options=adm_cfg.get("options", {}))
    est = qos.establish(n, packet_size=size, retries=adm_cfg["retries"])
    stop = t["warmup"] + window
    qos.start_traffic(start=0.0, stop=stop)
    qos.summary_options = {"deadline": cfg["traffic"]["deadline"], "per_connection": False}
    s = sim.run(stop + t["drain"])
    q = s["qos"]
    util = {k: {kk: v[kk] for kk in ("count", "mean", "min", "max")} for k, v in q["utilisation"].items()}
    return {
        "kind": kind, "topology": name, "size": size, "tried": n, "established": est.established,
        "window_ns": q["window_ns"], "requested": q["requested_fraction_of_link"], "delivered": q["delivered"],
        "per_sl": q["per_sl"], "utilisation": util, "conservation_ok": s["conservation_ok"],
        "packet_hops": s["packet_hops"], "sim_wall_s": s["wall_s"], "wall_s": time.perf_counter() - t0,
    }


def _run(job):
    fn, args = job
    return fn(*args)


# ------------------------------------------------------------------ report


def _f(v, digits=3):
    return "-" if v is None else f"{v:.{digits}f}"


def report(res: dict[str, Any]) -> str:
    """Markdown tables of a results dict, the paper's numbers beside ours."""
    out = []
    t2 = {(r["topology"], r["size"]): r["rows"] for r in res["jobs"] if r["kind"] == "table2"}
    if t2:
        out.append("### Table 2: established connections (ours / paper)\n")
        keys = [k for k in PAPER_TABLE2 if k != "tried" and k in t2]
        out.append("| tried | " + " | ".join(f"{t} {s}" for t, s in keys) + " |")
        out.append("|---" * (len(keys) + 1) + "|")
        for i, tried in enumerate(PAPER_TABLE2["tried"]):
            cells = []
            for k in keys:
                row = next((r for r in t2[k] if r["tried"] == tried), None)
                cells.append(f"{row['established'] if row else '-'} / {PAPER_TABLE2[k][i]}")
            out.append(f"| {tried} | " + " | ".join(cells) + " |")
        out.append("")
        out.append("Requested load at the plateau (fraction of the hosts' links): " + ", ".join(
            f"{t} {s}: {t2[(t, s)][-1]['requested_load']:.3f}" for t, s in keys))
        out.append("")
    pts = [r for r in res["jobs"] if r["kind"] in ("fig4", "delay")]
    if pts:
        out.append("### Fig. 4: delivered traffic (bytes/cycle/host; a cycle is 3.2 ns, one byte time)\n")
        out.append("| topology | size | established | requested | delivered | host util. mean | switch util. mean |")
        out.append("|---|---|---|---|---|---|---|")
        for r in sorted(pts, key=lambda r: (r["topology"], r["size"], r["established"])):
            u = r["utilisation"]
            out.append(f"| {r['topology']} | {r['size']} | {r['established']} | {_f(r['requested'])} | "
                       f"{_f(r['delivered']['bytes_per_cycle_per_host'])} | {_f(u['host_interfaces']['mean'])} | "
                       f"{_f(u['switch_ports']['mean'])} |")
        out.append("")
        out.append("Paper, at the plateau: " + ", ".join(f"{s} B: {v}" for s, v in PAPER_FIG4.items()))
        out.append("")
    delay = [r for r in res["jobs"] if r["kind"] == "delay"]
    if delay:
        out.append("### Figs. 8-9: delay and jitter at the plateau\n")
        out.append("Share of packets with delay <= IAT/32, IAT/8, IAT/2, 3IAT/4, IAT; share of jitter in "
                   "[-IAT/8, IAT/8]; largest delay (IAT units); worst connection on time at IAT/2.\n")
        out.append("| topology | size | SL | packets | <=IAT/32 | <=IAT/8 | <=IAT/2 | <=3IAT/4 | <=IAT | jitter pairs "
                   "| jitter in +-IAT/8 | max delay | worst at IAT/2 |")
        out.append("|---" * 13 + "|")
        for r in sorted(delay, key=lambda r: (r["topology"], r["size"])):
            for sl, d in r["per_sl"].items():
                du = d["delay_under"]
                w = d.get("worst")
                out.append(
                    f"| {r['topology']} | {r['size']} | {sl} | {d['packets']} | {_f(du['IAT/32'])} | {_f(du['IAT/8'])} | "
                    f"{_f(du['IAT/2'])} | {_f(du['3IAT/4'])} | {_f(du['IAT'])} | {d['jitter_pairs']} | "
                    f"{_f(d['jitter']['[-IAT/8, IAT/8]'])} | {_f(d['delay_max_iat'], 4)} | "
                    f"{'-' if not w else _f(w['on_time'])} |")
        out.append("")
    slow = [f"{r['kind']} {r['topology']} {r['size']}{' n=' + str(r['tried']) if r['kind'] == 'fig4' else ''}:"
            f" {r['wall_s']:.0f} s" for r in res["jobs"] if r["wall_s"] >= 20]
    out.append(f"Wall time: {res.get('wall_s', 0):.0f} s on {res.get('jobs_in_parallel', 1)} processes"
               + (f" (jobs of 20 s or more: {', '.join(slow)})" if slow else ""))
    return "\n".join(out)


def plot(res: dict[str, Any], out_dir: Path) -> None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("--plot needs matplotlib: pip install 'ibfabric[plot]'", file=sys.stderr)
        return
    out_dir.mkdir(parents=True, exist_ok=True)
    pts = [r for r in res["jobs"] if r["kind"] in ("fig4", "delay")]
    fig, axes = plt.subplots(1, 2, figsize=(10, 4), sharey=True)
    for ax, size in zip(axes, (256, 4096)):
        for topo in ("irregular", "hypercube", "mesh"):
            rs = sorted((r for r in pts if r["topology"] == topo and r["size"] == size), key=lambda r: r["established"])
            ax.plot([r["established"] for r in rs], [r["delivered"]["bytes_per_cycle_per_host"] for r in rs], "o-",
                    label=topo)
        ax.axhline(0.8, ls=":", c="grey")
        ax.set_title(f"{size}-byte packets")
        ax.set_xlabel("established connections")
    axes[0].set_ylabel("delivered traffic (bytes/cycle/host)")
    axes[0].legend()
    fig.savefig(out_dir / "alfaro2001_fig4.png", dpi=120, bbox_inches="tight")
    print(f"wrote {out_dir / 'alfaro2001_fig4.png'}")


# -------------------------------------------------------------------- main


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--config", type=Path, default=CONFIG)
    ap.add_argument("--out", type=Path, default=RESULTS)
    ap.add_argument("--only", choices=("table2", "fig4", "delay"), action="append", help="run only these parts")
    ap.add_argument("--topology", action="append", help="only these topologies")
    ap.add_argument("--packet-size", type=int, action="append", help="only these packet sizes")
    ap.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1), help="processes (default 2)")
    ap.add_argument("--quick", action="store_true", help="windows 20 times shorter (a smoke test; numbers are noisy)")
    ap.add_argument("--report", action="store_true", help="print the tables of --out and exit")
    ap.add_argument("--plot", action="store_true", help="draw Fig. 4 next to the results (needs matplotlib)")
    args = ap.parse_args(argv)
    if args.report:
        res = json.loads(args.out.read_text())
        print(report(res))
        if args.plot:
            plot(res, args.out.parent)
        return 0
    cfg = load_config(args.config)
    parts = set(args.only or ("table2", "fig4", "delay"))
    topos = args.topology or list(cfg["topologies"])
    sizes = args.packet_size or cfg["traffic"]["packet_sizes"]
    plateau = max(cfg["admission"]["tried"])
    jobs = []
    for name in topos:
        for size in sizes:
            if "delay" in parts:
                jobs.append((traffic_job, (cfg, name, size, plateau, "delay", args.quick)))
            if "fig4" in parts:
                for n in cfg["traffic"]["fig4_connections"]:
                    jobs.append((traffic_job, (cfg, name, size, n, "fig4", args.quick)))
            if "table2" in parts:
                jobs.append((table2_job, (cfg, name, size)))
    t0 = time.perf_counter()
    results = []
    with ProcessPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        for r in pool.map(_run, jobs):
            results.append(r)
            tag = f"{r['kind']} {r['topology']} {r['size']}" + (f" n={r['tried']}" if r["kind"] != "table2" else "")
            print(f"done {tag} in {r['wall_s']:.1f} s", file=sys.stderr)
    res = {"config": str(args.config.name), "quick": args.quick, "jobs_in_parallel": args.jobs,
           "wall_s": time.perf_counter() - t0, "jobs": results}
    from ibfabric.results import to_json, write_atomic

    write_atomic(args.out, to_json(res, indent=1) + "\n")
    print(report(res))
    print(f"\nresults written to {args.out}", file=sys.stderr)
    if args.plot:
        plot(res, args.out.parent)
    return 0


if __name__ == "__main__":
    sys.exit(main())
