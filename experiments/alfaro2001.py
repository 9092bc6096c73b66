"""Reproduce Alfaro, Sánchez and Duato (2001) §5 and Appendix A on the paper's network model.

Table 2 (connections established against connections tried: admission only),
Fig. 4 (delivered traffic against established connections) and Figs. 8-9
(delay and jitter in IAT units, here reported for every SL, SL 0 and SL 1
first) for the irregular, hypercube and mesh networks and both packet sizes,
on 1x links; with ``--width 4x`` and ``--width 12x`` the same for Appendix A
(Tables 3 and 4, Figs. 13-21 and 22-30).  The admission tables are run with
the strict admission (slots and the 64 table entries) and with the
bandwidth-only one (slots only).  ``--variants`` runs the bandwidth-only admission at
every width under each reading of the text that could change Tables 3-4
(``alfaro2001_readings.py``) and reports, per SL, the slots a connection takes against
its exact share of the frame (the rounding loss).  The model and the scaled windows are in
``experiments/alfaro2001.toml``; ``experiments/README.md`` has the numbers next
to the paper's.

::

    python experiments/alfaro2001.py                  # everything; writes experiments/results/alfaro2001.json
    python experiments/alfaro2001.py --width 4x       # Appendix A at 4x; writes results/alfaro2001_4x.json
    python experiments/alfaro2001.py --summary        # Tables 2-4 side by side, strict and bandwidth-only admission
    python experiments/alfaro2001.py --only table2    # admission only, about a minute
    python experiments/alfaro2001.py --variants --jobs 1   # Appendix A under each reading (alfaro2001_readings.py)
    python experiments/alfaro2001.py --only table2 --width 4x --rounding none   # one reading (also --redraw,
                                                      # --host-be-share, --ranges)
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
#: Table 3 (Appendix A, 4x links): the same, by connections tried.
PAPER_TABLE3 = {
    "tried": [1500, 3000, 4500, 6000, 7500, 9000, 10500, 12000],
    ("irregular", 256): [1500, 3000, 4500, 6000, 7500, 9000, 10500, 11005],
    ("irregular", 4096): [1500, 3000, 4500, 6000, 7500, 9000, 10500, 11103],
    ("hypercube", 256): [1500, 3000, 4500, 6000, 7500, 9000, 10500, 11024],
    ("hypercube", 4096): [1500, 3000, 4500, 6000, 7500, 9000, 10500, 11134],
    ("mesh", 256): [1500, 3000, 4500, 6000, 7500, 9000, 10500, 10968],
    ("mesh", 4096): [1500, 3000, 4500, 6000, 7500, 9000, 10500, 11064],
}
#: Table 4 (Appendix A, 12x links).  Its last row reads "31567 31664 32371 32476 35000 31347 31694" in
#: our copy of the paper: the rows go up by 5000, so 35000 is the number tried, misplaced, and the
#: other six are the cells in the columns' order.
PAPER_TABLE4 = {
    "tried": [5000, 10000, 15000, 20000, 25000, 30000, 35000],
    ("irregular", 256): [5000, 10000, 15000, 20000, 25000, 30000, 31567],
    ("irregular", 4096): [5000, 10000, 15000, 20000, 25000, 30000, 31664],
    ("hypercube", 256): [5000, 10000, 15000, 20000, 25000, 30000, 32371],
    ("hypercube", 4096): [5000, 10000, 15000, 20000, 25000, 30000, 32476],
    ("mesh", 256): [5000, 10000, 15000, 20000, 25000, 30000, 31347],
    ("mesh", 4096): [5000, 10000, 15000, 20000, 25000, 30000, 31694],
}
#: The paper's admission table for each link width, and its number.
PAPER_TABLES = {"1x": ("Table 2", PAPER_TABLE2), "4x": ("Table 3", PAPER_TABLE3), "12x": ("Table 4", PAPER_TABLE4)}
#: Fig. 4's plateau as the text gives it (bytes/cycle/host).
PAPER_FIG4 = {256: 0.769, 4096: 0.757}


# ------------------------------------------------------------------ set-up


def load_config(path: Path = CONFIG) -> dict[str, Any]:
    with open(path, "rb") as f:
        return tomllib.load(f)


def width_config(cfg: dict[str, Any], width: str) -> dict[str, Any]:
    """The ``[widths.<width>]`` section; a width the file does not have is an error."""
    if width not in cfg["widths"]:
        raise SystemExit(f"error: unknown link width {width!r} (the configuration has {', '.join(cfg['widths'])})")
    return cfg["widths"][width]


def fabric(cfg: dict[str, Any], name: str, width: str = "1x"):
    from ibfabric.topologies import generators as gen

    t = cfg["topologies"][name]
    net = cfg["network"]
    link = {"width": width, "speed": net["speed"]}
    h = net["hosts_per_switch"]
    if t["kind"] == "irregular":
        return gen.irregular(t["switches"], links_per_switch=t["links_per_switch"], hosts_per_switch=h,
                             seed=t["seed"], **link)
    if t["kind"] == "mesh":
        return gen.mesh(tuple(t["dims"]), hosts_per_switch=h, **link)
    if t["kind"] == "hypercube":
        return gen.hypercube(t["dimension"], hosts_per_switch=h, **link)
    raise ValueError(f"unknown topology kind {t['kind']!r}")


def overrides(cfg: dict[str, Any], size: int, width: str = "1x") -> dict[str, str]:
    ov = dict(cfg["parameters"])
    ov["**.dataRate"] = width_config(cfg, width)["dataRate"]
    ov.update(cfg["packet"][str(size)]["parameters"])
    return ov


def build(cfg: dict[str, Any], name: str, size: int, warmup: float = 0.0, width: str = "1x"):
    """The simulation of one topology, packet size and link width (not run)."""
    from ibfabric.simulation import Simulation
    from ibfabric.topologies.generators import to_ned

    ned = to_ned(fabric(cfg, name, width), name=name, routing=cfg["network"]["routing"])
    return Simulation(ned, overrides=overrides(cfg, size, width), seed=cfg["seed"], warmup=warmup)


def times(cfg: dict[str, Any], size: int, quick: bool, width: str = "1x") -> dict[str, float]:
    """Warm-up, windows and drain in ns: [packet.<size>]'s times times the width's ``time_scale``."""
    from ibfabric.simulation import parse_time

    p = cfg["packet"][str(size)]
    scale = float(width_config(cfg, width)["time_scale"])
    t = {k: parse_time(p[k]) * scale for k in ("warmup", "fig4_window", "delay_window", "drain")}
    if quick:
        t = {k: v / 20 for k, v in t.items()}
    return t


# -------------------------------------------------------------------- jobs


def sl_ranges(reading: str, rate: float) -> dict[int, tuple[float, float]]:
    """The SLs' bandwidth ranges under a reading of section 5.2: ``paper`` (as printed), ``scaled``
    (times *rate* / 2.5 Gb/s: the same share of every link width) or ``sl2-1.55`` (SL 2 from 1.55 Mb/s)."""
    from ibfabric.components.qos import PAPER_RANGES

    if reading == "paper":
        return dict(PAPER_RANGES)
    if reading == "scaled":
        k = rate / 2.5e9
        return {sl: (lo * k, hi * k) for sl, (lo, hi) in PAPER_RANGES.items()}
    if reading == "sl2-1.55":
        return {**PAPER_RANGES, 2: (1.55e6, PAPER_RANGES[2][1])}
    raise SystemExit(f"error: unknown --ranges {reading!r} (valid: paper, scaled, sl2-1.55)")


def admission_row(sim, cfg: dict[str, Any], size: int, tried: int, mode: str) -> dict[str, Any]:
    """A fresh set of tables, admission *mode*'s options, and the paper's establishment of *tried*.

    ``[admission]`` may carry a reading of the text (``alfaro2001_readings.py``): ``redraw``, ``order``, ``ranges``,
    ``host_be_share`` (the BE share of both ports of every host link) and ``options.rounding``.
    """
    from ibfabric.components.qos import Admission, establish
    from ibfabric.kernel import module_rng

    adm_cfg = cfg["admission"]
    options = {**adm_cfg.get("options", {}), **adm_cfg.get("modes", {}).get(mode, {})}
    policies = sim.plugins.arbitration_policies
    policy = policies[adm_cfg["policy"]](options)
    adm = Admission(sim.tables, policy)
    rate = sim.hosts[0].tx[sim.hosts[0].first_port].link.rate
    if adm_cfg.get("host_be_share") is not None:
        host_policy = policies[adm_cfg["policy"]]({**options, "be_share": adm_cfg["host_be_share"]})
        hosts = {int(h) for h in adm.hosts}
        g = adm.fabric
        for node, port in list(adm.ports):
            if node in hosts or int(g.peer_node[node, port]) in hosts:
                adm.ports[(node, port)] = host_policy.new_port(float(g.port_rate[node, port]), adm.classes,
                                                               adm.port_name(node, port))
    # the generator QosNetwork.establish uses, so traffic runs get these very connections
    ranges = sl_ranges(adm_cfg.get("ranges", "paper"), rate)
    est = establish(adm, tried, module_rng(sim.seed, "qos:establish"), packet_size=size, retries=adm_cfg["retries"],
                    ranges=ranges, redraw=adm_cfg.get("redraw", "all"), order=adm_cfg.get("order", "turn"))
    return {"tried": tried, "established": est.established, "per_sl": est.accepted,
            "attempts": est.attempts, "exhausted_sl": est.exhausted_sl,
            "requested_load": sum(c.bandwidth for c in est.connections) / (len(sim.hosts) * rate),
            "rejections": dict(adm.rejections), "tables": _table_use(adm),
            "slots": slot_use(adm, est.connections, ranges, rate)}


def slot_use(adm, connections, ranges, rate: float) -> dict[str, Any]:
    """What the established connections take of the host interfaces' frames, against their bandwidth.

    Per SL: connections, their mean bandwidth against the mean of the SL's range (below 1: the retries
    favoured the smaller requests), the mean slots a connection takes on a host interface, its exact
    share ``B / B_link x 16320`` and the difference (the rounding loss, in slots and as a share of the
    slots).  Over the host interfaces (means): the frame's slots reserved for connections, their exact
    share, the rounding loss as a share of the frame, and the mean bandwidth per established connection.
    """
    from fractions import Fraction

    import numpy as np

    from ibfabric.components.qos import SLOTS_PER_FRAME

    hosts = [adm.ports[(int(h), adm.fabric.ports(int(h))[0])] for h in adm.hosts]
    per_sl = {}
    for sl in sorted(ranges):
        bws = [c.bandwidth for c in connections if c.sl == sl]
        if not bws:
            continue
        lo, hi = ranges[sl]
        taken = [float(hosts[0].slots(b)) for b in bws]
        exact = [b / rate * SLOTS_PER_FRAME for b in bws]
        loss = sum(taken) - sum(exact)
        mean = float(np.mean(bws))
        per_sl[str(sl)] = {"connections": len(bws), "mean_bandwidth_bps": mean,
                           "range_mean_bps": (lo + hi) / 2, "mean_over_range_mean": mean / ((lo + hi) / 2),
                           "slots_per_connection": float(np.mean(taken)),
                           "exact_slots_per_connection": float(np.mean(exact)),
                           "rounding_loss_slots_per_connection": loss / len(bws),
                           "rounding_loss_share_of_slots": loss / sum(taken)}
    used = [float(p.connection_slots()) for p in hosts]
    exact = [float(p.exact_slots()) for p in hosts]
    n = len(connections)
    return {"per_sl": per_sl,
            "host_connection_slots_mean": float(np.mean(used)), "host_exact_slots_mean": float(np.mean(exact)),
            "host_rounding_loss_share_of_frame": float(np.mean(used) - np.mean(exact)) / SLOTS_PER_FRAME,
            "mean_bandwidth_per_connection_bps": sum(c.bandwidth for c in connections) / n if n else None}


def table2_job(cfg: dict[str, Any], name: str, size: int, width: str = "1x", fresh: bool = False) -> dict[str, Any]:
    """Admission only (Tables 2-4), for every admission mode of ``[admission] modes``.

    One establishment of the largest number tried gives every row: the same
    seed draws the same requests, so establishing *k* connections repeats the
    largest run until *k* are established, or until it ends as the largest
    run ends; a row is therefore ``min(k, E)``, E the largest run's count
    (``derived`` in the row; ``fresh=True`` runs every row, as a check).
    """
    t0 = time.perf_counter()
    sim = build(cfg, name, size, width=width)
    tried = list(width_config(cfg, width)["tried"])
    by_mode = {}
    for mode in cfg["admission"].get("modes", {"strict": {}}):
        if fresh:
            rows = [admission_row(sim, cfg, size, k, mode) for k in tried]
        else:
            last = admission_row(sim, cfg, size, max(tried), mode)
            rows = [last if k == last["tried"] else {"tried": k, "established": min(k, last["established"]),
                                                     "derived": True} for k in tried]
        by_mode[mode] = rows
    strict = by_mode.get("strict", next(iter(by_mode.values())))
    return {"kind": "table2", "topology": name, "size": size, "width": width, "rows": strict, "modes": by_mode,
            "wall_s": time.perf_counter() - t0}


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


def traffic_job(cfg: dict[str, Any], name: str, size: int, n: int, kind: str, quick: bool,
                width: str = "1x") -> dict[str, Any]:
    """Establish *n* connections (strict admission), run their CBR traffic and measure (Fig. 4 point, or a delay run)."""
    from ibfabric.components.qos.cbr import QosNetwork

    t = times(cfg, size, quick, width)
    window = t["delay_window"] if kind == "delay" else t["fig4_window"]
    t0 = time.perf_counter()
    sim = build(cfg, name, size, warmup=t["warmup"], width=width)
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
        "kind": kind, "topology": name, "size": size, "width": width, "tried": n, "established": est.established,
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
    width = res.get("width", "1x")
    table_name, paper_table = PAPER_TABLES[width]
    jobs2 = [r for r in res["jobs"] if r["kind"] == "table2"]
    modes = list(jobs2[0].get("modes", {"strict": None})) if jobs2 else []
    for mode in modes:
        t2 = {(r["topology"], r["size"]): (r["modes"][mode] if "modes" in r else r["rows"]) for r in jobs2}
        what = {"strict": "strict admission (slots and 64 table entries)",
                "bandwidth": "bandwidth-only admission (slots only)"}.get(mode, f"admission {mode!r}")
        out.append(f"### {table_name} ({width}): established connections, {what} (ours / paper)\n")
        keys = [k for k in paper_table if k != "tried" and k in t2]
        out.append("| tried | " + " | ".join(f"{t} {s}" for t, s in keys) + " |")
        out.append("|---" * (len(keys) + 1) + "|")
        for i, tried in enumerate(paper_table["tried"]):
            cells = []
            for k in keys:
                row = next((r for r in t2[k] if r["tried"] == tried), None)
                cells.append(f"{row['established'] if row else '-'} / {paper_table[k][i]}")
            out.append(f"| {tried} | " + " | ".join(cells) + " |")
        out.append("")
        last = {k: max(t2[k], key=lambda r: r["tried"]) for k in keys}
        out.append("At the largest number tried: ours / paper " + ", ".join(
            f"{t} {s}: {last[(t, s)]['established'] / paper_table[(t, s)][-1]:.3f}" for t, s in keys)
            + "; requested load (fraction of the hosts' links) " + ", ".join(
            f"{t} {s}: {last[(t, s)]['requested_load']:.3f}" for t, s in keys)
            + "; the paper's count at our mean bandwidth per admitted connection would request " + ", ".join(
            f"{t} {s}: {last[(t, s)]['requested_load'] * paper_table[(t, s)][-1] / last[(t, s)]['established']:.3f}"
            for t, s in keys)
            + "; rejections " + ", ".join(
            f"{t} {s}: " + "/".join(f"{k} {v}" for k, v in sorted(last[(t, s)]['rejections'].items())) for t, s in keys))
        out.append("")
    pts = [r for r in res["jobs"] if r["kind"] in ("fig4", "delay")]
    if pts:
        fig = {"1x": "Fig. 4", "4x": "Fig. 13", "12x": "Fig. 22"}[width]
        out.append(f"### {fig} ({width}): delivered traffic (bytes/cycle/host; a cycle is one byte time of the link)\n")
        out.append("| topology | size | established | requested | delivered | host util. mean | switch util. mean |")
        out.append("|---|---|---|---|---|---|---|")
        for r in sorted(pts, key=lambda r: (r["topology"], r["size"], r["established"])):
            u = r["utilisation"]
            out.append(f"| {r['topology']} | {r['size']} | {r['established']} | {_f(r['requested'])} | "
                       f"{_f(r['delivered']['bytes_per_cycle_per_host'])} | {_f(u['host_interfaces']['mean'])} | "
                       f"{_f(u['switch_ports']['mean'])} |")
        out.append("")
        if width == "1x":
            out.append("Paper, at the plateau: " + ", ".join(f"{s} B: {v}" for s, v in PAPER_FIG4.items()))
        else:
            out.append("Paper: no number in the text; the figure's curves are those of Fig. 4 (\"similar\").")
        out.append("")
    delay = [r for r in res["jobs"] if r["kind"] == "delay"]
    if delay:
        figs = {"1x": "Figs. 8-9", "4x": "Figs. 17-18", "12x": "Figs. 26-27"}[width]
        out.append(f"### {figs} ({width}): delay and jitter at the plateau\n")
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


def summary(files: dict[str, Path]) -> str:
    """Tables 2-4 side by side at the largest number tried (strict and bandwidth-only), and their ratios,
    from one results file per width (the admission jobs of each)."""
    rows, ratios = [], []
    for width, path in files.items():
        res = json.loads(path.read_text())
        name, paper = PAPER_TABLES[width]
        jobs = {(r["topology"], r["size"]): r for r in res["jobs"] if r["kind"] == "table2" and "modes" in r}
        keys = [k for k in paper if k != "tried" and k in jobs]
        for mode in ("strict", "bandwidth"):
            last = {k: max(jobs[k]["modes"][mode], key=lambda r: r["tried"]) for k in keys}
            rows.append(f"| {name.split()[1]} ({width}) | {paper['tried'][-1]} | {mode} | "
                        + " | ".join(f"{last[k]['established']} / {paper[k][-1]}" for k in keys) + " |")
            got = [last[k]["established"] / paper[k][-1] for k in keys]
            load = [last[k]["requested_load"] for k in keys]
            need = [last[k]["requested_load"] * paper[k][-1] / last[k]["established"] for k in keys]
            ratios.append((width, mode, got, load, need))
    head = "| table | tried | admission | " + " | ".join(f"{t} {s}" for t, s in keys) + " |"
    out = [head, "|---" * (3 + len(keys)) + "|", *rows, ""]
    out.append("| link | admission | ours / paper | requested load | the paper's count at our mean bandwidth per connection |")
    out.append("|---|---|---|---|---|")
    rng = lambda xs: f"{min(xs):.3f}-{max(xs):.3f}"
    for width, mode, got, load, need in ratios:
        out.append(f"| {width} | {mode} | {rng(got)} | {rng(load)} | {rng(need)} |")
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
    width = res.get("width", "1x")
    name = "alfaro2001_fig4.png" if width == "1x" else f"alfaro2001_{width}_delivered.png"
    fig.savefig(out_dir / name, dpi=120, bbox_inches="tight")
    print(f"wrote {out_dir / name}")


# -------------------------------------------------------------------- main


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--config", type=Path, default=CONFIG)
    ap.add_argument("--width", default="1x", help="link width of the [widths.*] section to run: 1x (default), 4x, 12x")
    ap.add_argument("--out", type=Path, help="results file (default results/alfaro2001.json, alfaro2001_<width>.json)")
    ap.add_argument("--fresh-rows", action="store_true",
                    help="admission tables: establish every row afresh instead of deriving them from the largest")
    ap.add_argument("--only", choices=("table2", "fig4", "delay"), action="append", help="run only these parts")
    ap.add_argument("--topology", action="append", help="only these topologies")
    ap.add_argument("--packet-size", type=int, action="append", help="only these packet sizes")
    ap.add_argument("--retries", type=int, help="attempts per connection (default: [admission] retries)")
    ap.add_argument("--rounding", choices=("ceil", "none"),
                    help="admission tables: slots per connection rounded up (ceil, the paper's formula) or exact")
    ap.add_argument("--redraw", choices=("all", "endpoints"),
                    help="admission tables: what a retry draws anew (all: endpoints and bandwidth, the default)")
    ap.add_argument("--sl-order", choices=("turn", "random"),
                    help="admission tables: the SLs of successive connections in turn (default) or drawn at random")
    ap.add_argument("--host-be-share", type=float,
                    help="admission tables: BE share of both ports of every host link (default: [admission] be_share)")
    ap.add_argument("--ranges", choices=("paper", "scaled", "sl2-1.55"),
                    help="admission tables: the SLs' bandwidth ranges (paper: as printed; scaled: times the link "
                         "rate / 2.5 Gb/s; sl2-1.55: SL 2 from 1.55 Mb/s)")
    ap.add_argument("--variants", action="store_true",
                    help="Appendix A's readings (alfaro2001_readings.py) at 1x, 4x and 12x, bandwidth-only admission; "
                         "writes results/alfaro2001_variants.json")
    ap.add_argument("--variant", action="append", help="with --variants: only these readings")
    ap.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1), help="processes (default 2)")
    ap.add_argument("--quick", action="store_true", help="windows 20 times shorter (a smoke test; numbers are noisy)")
    ap.add_argument("--report", action="store_true", help="print the tables of --out and exit")
    ap.add_argument("--summary", action="store_true",
                    help="print Tables 2-4 side by side from results/alfaro2001_table2.json, _4x.json, _12x.json")
    ap.add_argument("--plot", action="store_true", help="draw Fig. 4 next to the results (needs matplotlib)")
    args = ap.parse_args(argv)
    if args.out is None:
        args.out = (RESULTS.with_name("alfaro2001_variants.json") if args.variants else
                    RESULTS if args.width == "1x" else RESULTS.with_name(f"alfaro2001_{args.width}.json"))
    if args.summary:
        print(summary({"1x": RESULTS.with_name("alfaro2001_table2.json"), "4x": RESULTS.with_name("alfaro2001_4x.json"),
                       "12x": RESULTS.with_name("alfaro2001_12x.json")}))
        return 0
    if args.report:
        res = json.loads(args.out.read_text())
        if res.get("kind") == "variants":
            from alfaro2001_readings import variants_report

            print(variants_report(res))
            return 0
        print(report(res))
        if args.plot:
            plot(res, args.out.parent)
        return 0
    cfg = load_config(args.config)
    wcfg = width_config(cfg, args.width)
    if args.retries is not None:
        if args.retries < 1:
            raise SystemExit(f"error: --retries must be >= 1 (got {args.retries})")
        cfg["admission"]["retries"] = args.retries
    reading = {"rounding": args.rounding, "redraw": args.redraw, "host_be_share": args.host_be_share,
               "ranges": args.ranges, "order": args.sl_order}
    if any(v is not None for v in reading.values()) and set(args.only or ()) != {"table2"}:
        raise SystemExit("error: --rounding, --redraw, --sl-order, --host-be-share and --ranges change the "
                         "admission tables only: add --only table2")
    if args.rounding is not None:
        cfg["admission"]["options"] = {**cfg["admission"].get("options", {}), "rounding": args.rounding}
    for key in ("redraw", "host_be_share", "ranges", "order"):
        if reading[key] is not None:
            cfg["admission"][key] = reading[key]
    topos = args.topology or list(cfg["topologies"])
    if args.variants:
        from alfaro2001_readings import run_variants

        return run_variants(cfg, topos, args.variant, args.jobs, args.out, args.config.name)
    parts = set(args.only or ("table2", "fig4", "delay"))
    sizes = args.packet_size or cfg["traffic"]["packet_sizes"]
    plateau = max(wcfg["tried"])
    jobs = []
    for name in topos:
        for size in sizes:
            if "delay" in parts:
                jobs.append((traffic_job, (cfg, name, size, plateau, "delay", args.quick, args.width)))
            if "fig4" in parts:
                for n in wcfg["fig4_connections"]:
                    jobs.append((traffic_job, (cfg, name, size, n, "fig4", args.quick, args.width)))
            if "table2" in parts:
                jobs.append((table2_job, (cfg, name, size, args.width, args.fresh_rows)))
    t0 = time.perf_counter()
    results = []
    with ProcessPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        for r in pool.map(_run, jobs):
            results.append(r)
            tag = f"{r['kind']} {r['topology']} {r['size']}" + (f" n={r['tried']}" if r["kind"] != "table2" else "")
            print(f"done {tag} in {r['wall_s']:.1f} s", file=sys.stderr)
    res = {"config": str(args.config.name), "width": args.width, "quick": args.quick, "jobs_in_parallel": args.jobs,
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
