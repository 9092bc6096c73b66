"""Martínez et al. 2003, Fig. 3 (issue 32): the saturation point of each share of adaptive traffic.

Reads the runs of experiments/martinez2003_fig3*.toml (latency against load, 0-100 % adaptive traffic, one
fabric per size) and prints, per network size and share, the highest accepted load of a run that did not
saturate (where the paper's curves stop), the same in the paper's unit (bytes/ns per switch and per host,
see experiments/README.md), the 100 %-over-0 % ratio and the mean latency at the lowest load.

  python experiments/martinez2003_fig3.py results/martinez2003_fig3 results/martinez2003_fig3_large
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from martinez2003_table1 import HOSTS_PER_SWITCH, LINK_BYTES_PER_NS  # this script's directory is on sys.path

SHARES = (0.0, 0.25, 0.5, 0.75, 1.0)


def runs(dirs: list[Path]) -> list[dict]:
    """(switches, adaptive, load, accepted, saturated, latency mean) of every finished run under *dirs*."""
    out = []
    for d in dirs:
        for run in sorted((d / "runs").glob("*/run.json")):
            meta = json.loads(run.read_text())
            summary = run.with_name("summary.json")
            if meta.get("status") != "ok" or not summary.is_file():
                continue
            s = json.loads(summary.read_text())
            v = meta["vars"]
            out.append({"switches": int(v["switches"]), "adaptive": float(v["adaptive"]), "load": float(v["load"]),
                        "accepted": s["accepted_load"], "saturated": bool(s["saturated"]),
                        "latency": s["latency_ns"]["mean"]})
    return out


def table(rows: list[dict]) -> list[str]:
    head = " | ".join(f"{round(100 * a)} %" for a in SHARES)
    out = [f"| switches | {head} | 100 % / 0 % | 0 % / 100 % in bytes/ns/switch | per host "
           "| latency at the lowest load |",
           "|---" * (len(SHARES) + 5) + "|"]
    for sw in sorted({r["switches"] for r in rows}):
        best, low = {}, []
        for a in SHARES:
            mine = [r for r in rows if r["switches"] == sw and r["adaptive"] == a]
            ok = [r["accepted"] for r in mine if not r["saturated"]]
            best[a] = max(ok) if ok else None
            if mine:
                low.append(min(mine, key=lambda r: r["load"])["latency"])
        cells = " | ".join("-" if best[a] is None else f"{best[a]:.3f}" for a in SHARES)
        d, f = best[0.0], best[1.0]
        ratio = "-" if not d or f is None else f"{f / d:.2f}"
        unit = "-" if d is None or f is None else (
            f"{d * LINK_BYTES_PER_NS * HOSTS_PER_SWITCH:.3f} / {f * LINK_BYTES_PER_NS * HOSTS_PER_SWITCH:.3f} | "
            f"{d * LINK_BYTES_PER_NS:.4f} / {f * LINK_BYTES_PER_NS:.4f}")
        if unit == "-":
            unit = "- | -"
        lat = "-"
        if low:
            lo, hi = round(min(low)), round(max(low))
            lat = f"{lo} ns" if lo == hi else f"{lo}-{hi} ns"
        out.append(f"| {sw} | {cells} | {ratio} | {unit} | {lat} |")
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dirs", nargs="+", type=Path, help="sweep output directories (results/martinez2003_fig3...)")
    args = ap.parse_args(argv)
    rows = runs(args.dirs)
    if not rows:
        ap.error(f"no finished runs under {', '.join(map(str, args.dirs))}: run the sweeps first "
                 "(ibfabric sweep experiments/martinez2003_fig3.toml --jobs 2)")
    print("\n".join(table(rows)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
