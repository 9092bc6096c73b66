"""Martínez et al. (2003) Table 1 (and Fig. 3's throughputs): our saturation searches beside the paper's.

The searches are ordinary ``ibfabric saturation`` runs of the experiment
files ``experiments/martinez2003_table1*.toml`` (the paper's switch, the
``martinez2003-fa`` configuration); each writes
``results/<experiment>/saturation.csv``.  This script gathers those files
into ``experiments/results/martinez2003_table1.json`` (one row per search:
fabric, deterministic or adaptive, throughput, bracket, status) with the
simulation time of their runs (an experiment found under ``results/``
replaces its own rows; the others' rows in the JSON are kept), and prints the tables of
``experiments/README.md``: the factor of throughput increase (100 %
adaptive over 100 % deterministic, fabric by fabric) beside the paper's,
the window check, bit-reversal under three host numberings, the up*/down*
root and the other readings the paper leaves open, how the factor changes
with the packet size, and Fig. 3's saturation points in the paper's unit.

::

    python experiments/martinez2003_table1.py            # gather results/*/saturation.csv into the JSON, print
    python experiments/martinez2003_table1.py --report   # print the tables of the committed JSON
    python experiments/martinez2003_table1.py --report --only knee,knee-stable   # only these tables (SECTIONS)
    python experiments/readme_tables.py --write           # then the README's tables from the JSON
"""

from __future__ import annotations

import argparse
import csv
import json
import statistics
import sys
from collections.abc import Callable, Collection
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results" / "martinez2003_table1.json"
#: Uniform traffic, MR/LS 2/4, on the paper's switch without its output buffers (the substitute switch).
NOBUF = "Unif., no output buffers"
EXPERIMENTS = ("martinez2003_table1", "martinez2003_table1_large", "martinez2003_table1_window",
               "martinez2003_table1_large_window", "martinez2003_table1_more", "martinez2003_table1_more_large",
               "martinez2003_table1_br", "martinez2003_table1_nobuf", "martinez2003_table1_gap",
               "martinez2003_table1_payload", "martinez2003_table1_root", "martinez2003_table1_roots",
               "martinez2003_table1_roots16", "martinez2003_table1_400us", "martinez2003_table1_roots_br",
               "martinez2003_table1_more_400us", "martinez2003_table1_roots16_256",
               "martinez2003_table1_more_large_window", "martinez2003_table1_payload_large",
               "martinez2003_table1_roots32_256", "martinez2003_table1_roots64_256",
               "martinez2003_table1_large_400us", "martinez2003_table1_root_payload64",
               "martinez2003_table1_roots32_32", "martinez2003_table1_best_root64",
               "martinez2003_table1_best_root64_unif", "martinez2003_table1_roots64_6link",
               "martinez2003_table1_best_root64_6link", "martinez2003_table1_router",
               "martinez2003_table1_router_large", "martinez2003_table1_setup", "martinez2003_table1_osplit")
#: The columns of the root experiments: "<column>, root swK" (Table 1's column with switch K as the up*/down*
#: root), for these columns.
ROOT_COLUMN = ", root "
ROOT_BASES = ("Unif.", "BR", "2/6")
#: Uniform traffic with 256 bytes of payload under each fabric's root best for deterministic traffic (the root and
#: the payload reading together: martinez2003_table1_root_payload64.toml).
ROOT_PAYLOAD = "Unif., payload, best root"
#: The columns searched under each fabric's root best for deterministic traffic with 256-byte packets (the every-root
#: searches: uniform 2/4, and 2/6 on the 6-link fabrics): "<column>, under the best root"
#: (martinez2003_table1_best_root64*.toml).
BEST_ROOT = ", under the best root"
#: Uniform traffic, MR/LS 2/4, with one choice the paper leaves open changed (the experiments name the column).
VARIANTS = ("Unif., payload", "Unif., random selection", "Unif., adaptive first", "Unif., central root",
            "Unif., one routing unit", "Unif., set-up at the head", "Unif., split output buffers")
#: The column of the experiments that do not name theirs (uniform traffic, MR/LS 2/4, unless said here).
EXPERIMENT_COLUMN = {"martinez2003_table1_br": "BR", "martinez2003_table1_nobuf": NOBUF}
#: The window of the experiment files without a ``time`` variable.
DEFAULT_WINDOW = "200us"
#: The window from which the factors no longer move (the window check: 400 us against 800 us).
STABLE_WINDOW = "400us"
#: A 1x SDR link carries 2 Gb/s of data (8b/10b): 0.25 bytes per ns; 4 hosts per switch (section 5.1).
LINK_BYTES_PER_NS = 0.25
HOSTS_PER_SWITCH = 4

#: Table 1 of the paper: (min, max, avg) of the factor for 32-byte and for 256-byte packets, by (column, switches).
#: "Unif." is uniform traffic with MR/LS 2/4; HS and BR are MR/LS 2/4 too.  The paper has no 8-switch 6-link rows.
PAPER: dict[tuple[str, int], tuple[tuple[float, float, float], tuple[float, float, float]]] = {
    ("Unif.", 8): ((1.30, 1.69, 1.50), (1.24, 1.51, 1.37)),
    ("Unif.", 16): ((1.26, 2.04, 1.70), (1.22, 1.79, 1.50)),
    ("Unif.", 32): ((1.77, 3.11, 2.38), (1.64, 2.24, 1.99)),
    ("Unif.", 64): ((2.75, 3.94, 3.27), (2.19, 2.87, 2.53)),
    ("HS 5%", 8): ((1.15, 1.71, 1.40), (1.14, 1.50, 1.33)),
    ("HS 5%", 16): ((1.23, 1.91, 1.55), (1.33, 1.82, 1.51)),
    ("HS 5%", 32): ((1.38, 2.17, 1.78), (1.36, 2.00, 1.67)),
    ("HS 5%", 64): ((1.62, 2.20, 1.85), (1.45, 2.00, 1.69)),
    ("HS 10%", 8): ((1.03, 1.45, 1.21), (1.09, 1.35, 1.17)),
    ("HS 10%", 16): ((1.07, 1.37, 1.22), (1.11, 1.38, 1.20)),
    ("HS 10%", 32): ((1.09, 1.50, 1.31), (1.05, 1.41, 1.26)),
    ("HS 10%", 64): ((1.19, 1.48, 1.27), (1.14, 1.33, 1.22)),
    ("BR", 8): ((1.21, 1.90, 1.58), (1.20, 1.89, 1.59)),
    ("BR", 16): ((1.12, 1.81, 1.51), (1.24, 1.66, 1.47)),
    ("BR", 32): ((1.41, 3.13, 2.18), (1.46, 2.46, 1.98)),
    ("BR", 64): ((2.16, 4.09, 2.83), (2.35, 2.99, 2.52)),
    ("3/4", 8): ((1.30, 1.77, 1.55), (1.24, 1.58, 1.41)),
    ("3/4", 16): ((1.30, 2.16, 1.76), (1.33, 1.88, 1.58)),
    ("3/4", 32): ((1.77, 3.39, 2.49), (1.18, 2.53, 2.01)),
    ("3/4", 64): ((2.87, 4.28, 3.47), (2.28, 3.25, 2.69)),
    ("2/6", 16): ((1.40, 2.30, 1.83), (1.39, 2.05, 1.65)),
    ("2/6", 32): ((1.76, 2.98, 2.34), (1.20, 2.47, 1.98)),
    ("2/6", 64): ((2.58, 4.00, 3.57), (2.56, 3.19, 2.92)),
    ("3/6", 16): ((1.42, 2.52, 1.94), (1.40, 2.23, 1.74)),
    ("3/6", 32): ((1.98, 3.27, 2.53), (1.75, 2.69, 2.20)),
    ("3/6", 64): ((2.85, 4.31, 3.86), (2.85, 3.52, 3.21)),
    ("4/6", 16): ((1.42, 2.55, 1.96), (1.41, 2.27, 1.76)),
    ("4/6", 32): ((1.94, 3.40, 2.56), (1.79, 2.69, 2.24)),
    ("4/6", 64): ((2.99, 4.45, 3.90), (2.85, 3.52, 3.25)),
}
#: The averages of the input-queued substitute switch (no output buffers) that experiments/README.md gave
#: before the paper's switch was composable (commit e3066f4), by (column, switches, size); 5 fabrics for the
#: columns other than "Unif.", 10 for it.
SUBSTITUTE: dict[tuple[str, int, str], float] = {
    ("Unif.", 8, "32B"): 1.60, ("Unif.", 16, "32B"): 1.97, ("Unif.", 32, "32B"): 2.37, ("Unif.", 64, "32B"): 3.73,
    ("Unif.", 8, "256B"): 1.60, ("Unif.", 16, "256B"): 1.90, ("Unif.", 32, "256B"): 2.21, ("Unif.", 64, "256B"): 3.44,
    ("HS 5%", 8, "32B"): 1.33, ("HS 5%", 16, "32B"): 1.54, ("HS 10%", 8, "32B"): 1.13, ("HS 10%", 16, "32B"): 1.13,
    ("BR", 8, "32B"): 1.09, ("BR", 16, "32B"): 1.10, ("3/4", 8, "32B"): 1.58, ("3/4", 16, "32B"): 2.01,
    ("2/6", 8, "32B"): 1.33, ("2/6", 16, "32B"): 1.84, ("4/6", 8, "32B"): 1.38, ("4/6", 16, "32B"): 1.90,
}
#: Fig. 3: the x axis of each panel (the paper's "Traffic (flits/ns/switch)"; section 5.1 says bytes/ns/switch),
#: and where its latency axis starts (ns), by switches.  The text gives no curve values.
PAPER_FIG3_AXES = {8: ((0.02, 0.18), 1000), 16: ((0.02, 0.1), 1000), 32: ((0.01, 0.07), 1500), 64: ((0.01, 0.05), 2000)}
COLUMNS = ("Unif.", "HS 5%", "HS 10%", "BR", "3/4", "2/6", "3/6", "4/6")


# ------------------------------------------------------------------ gather


def _value(text: str) -> Any:
    if text in ("", "None"):
        return None
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def gather(root: Path) -> dict[str, Any]:
    """The searches of every experiment in :data:`EXPERIMENTS` that has a ``saturation.csv`` under *root*."""
    searches, runs = [], {}
    for name in EXPERIMENTS:
        path = root / name / "saturation.csv"
        if not path.is_file():
            continue
        with path.open(newline="") as f:
            for row in csv.DictReader(f):
                r = {k: _value(v) for k, v in row.items()}
                r.setdefault("column", EXPERIMENT_COLUMN.get(name, "Unif."))
                r.setdefault("numbering", "consecutive" if r["column"] in ("Unif.", "BR") else None)
                r["window"] = r.pop("time", None) or DEFAULT_WINDOW
                r["experiment"] = name
                searches.append({k: r.get(k) for k in (
                    "experiment", "column", "numbering", "size", "switches", "topo", "window", "adaptive", "status",
                    "saturation_load_low", "saturation_load_high", "throughput", "probes")})
        walls = [json.loads(p.read_text()).get("wall_s", 0.0) for p in (root / name / "runs").glob("*/summary.json")]
        runs[name] = {"runs": len(walls), "wall_s": sum(walls)}
    return {"paper": "Martínez et al. 2003, Table 1", "searches": searches, "runs": runs}


def keep_others(res: dict[str, Any], path: Path) -> dict[str, Any]:
    """*res* with the searches and run times that *path* (an earlier gathering) holds of the experiments
    *res* has none of: an experiment's results replace its own only, so a column searched in another
    checkout, or long ago, stays in the file."""
    try:
        old = json.loads(path.read_text())
    except (OSError, ValueError):
        return res
    here = set(res["runs"])
    kept = [s for s in old.get("searches", []) if s.get("experiment") not in here]
    runs = {k: v for k, v in old.get("runs", {}).items() if k not in here}
    return {**res, "searches": kept + res["searches"], "runs": {**runs, **res["runs"]}}


# ------------------------------------------------------------------ report


def factors(searches: list[dict[str, Any]], measure: str = "throughput") -> dict[tuple, list[tuple[int, float, float]]]:
    """(column, numbering, size, switches, window) -> [(fabric, deterministic, adaptive *measure*)]: the
    throughput (the largest accepted load of any probe) or ``saturation_load_low`` (the highest load the
    fabric sustained: below it accepted traffic follows offered traffic, so their ratio is that of the
    accepted traffic at the saturation point)."""
    by: dict[tuple, dict[int, dict[int, float]]] = {}
    for s in searches:
        key = (s["column"], s["numbering"], s["size"], s["switches"], s["window"])
        by.setdefault(key, {}).setdefault(s["topo"], {})[s["adaptive"]] = s[measure]
    return {k: sorted((t, v[0], v[1]) for t, v in fabrics.items() if 0 in v and 1 in v and v[0])
            for k, fabrics in by.items()}


def _stats(pairs) -> tuple[float, float, float]:
    f = [a / d for _, d, a in pairs]
    return min(f), max(f), sum(f) / len(f)


def _key(col: str, size: str, sw: int, window: str = DEFAULT_WINDOW) -> tuple:
    """The factors' key of Table 1's cell (*col*, *size*, *sw*): uniform and bit-reversal number the hosts
    consecutively, the other columns have no numbering."""
    return col, "consecutive" if col in ("Unif.", "BR") else None, size, sw, window


def _cells(columns=COLUMNS):
    """Table 1's cells (column, size, switches) of *columns*, in the paper's order."""
    return ((col, size, sw) for col in columns for size in ("32B", "256B") for sw in (8, 16, 32, 64))


def _paper(col: str, sw: int, size: str) -> tuple:
    """The paper's (min, max, avg) for the cell, or three Nones where Table 1 has none."""
    paper = PAPER.get((col, sw))
    return paper[0 if size == "32B" else 1] if paper else (None, None, None)


def _f(x: float | None, fmt: str = "{:.2f}") -> str:
    return "-" if x is None else fmt.format(x)


def table1(fs, columns, with_substitute: bool, only: set | None = None, window: str = DEFAULT_WINDOW,
           fabrics: int = 1) -> list[str]:
    """Table 1's rows for *columns* at *window*, sizes with at least *fabrics* fabrics."""
    out = ["| column | size | switches | fabrics | ours: min | max | **avg** | paper: min | max | **avg** "
           + ("| substitute switch avg " if with_substitute else "") + "| ours: det. / adaptive throughput (avg) |",
           "|---" * (12 if with_substitute else 11) + "|"]
    for col, size, sw in _cells(columns):
        pairs = fs.get(_key(col, size, sw, window))
        if not pairs or len(pairs) < fabrics or (only is not None and (size, sw) not in only):
            continue
        lo, hi, avg = _stats(pairs)
        p = _paper(col, sw, size)
        det, ada = _mean(d for _, d, _ in pairs), _mean(a for _, _, a in pairs)
        sub = f"| {_f(SUBSTITUTE.get((col, sw, size)))} " if with_substitute else ""
        out.append(f"| {col} | {size} | {sw} | {len(pairs)} | {lo:.2f} | {hi:.2f} | **{avg:.2f}** | "
                   f"{_f(p[0])} | {_f(p[1])} | **{_f(p[2])}** {sub}| {det:.3f} / {ada:.3f} |")
    return out


def _mean(xs) -> float:
    xs = list(xs)
    return sum(xs) / len(xs)


def _matched(base_pairs, pairs):
    """Fabric-matched comparison of two lists of (fabric, det, adaptive): the fabrics both have, and the means
    of det, adaptive and factor on each side and the factor changes, or None if no fabric is shared."""
    base = {t: (d, a) for t, d, a in base_pairs}
    both = [(base[t], (d, a)) for t, d, a in pairs if t in base]
    if not both:
        return None
    bases, others = [b for b, _ in both], [v for _, v in both]
    det = (_mean(d for d, _ in bases), _mean(d for d, _ in others))
    ada = (_mean(a for _, a in bases), _mean(a for _, a in others))
    factor = (_mean(a / d for d, a in bases), _mean(a / d for d, a in others))
    ch = [(v[1] / v[0]) / (b[1] / b[0]) - 1 for b, v in both]
    change = f"{100 * min(ch):+.1f} / {100 * _mean(ch):+.1f} / {100 * max(ch):+.1f} %"
    return len(both), det, ada, factor, change


def window_table(fs) -> list[str]:
    """Each longer window W against 200 us on the same fabrics (matched by seed), each Table 1 column."""
    out = ["| column | size | switches | window W | fabrics | det. 200 us / W | adaptive 200 us / W "
           "| factor avg 200 us / W | factor change, min / avg / max |", "|---|---|---|---|---|---|---|---|---|"]
    for (col, num, size, sw, window), pairs in sorted(fs.items(), key=lambda kv: (
            COLUMNS.index(kv[0][0]) if kv[0][0] in COLUMNS else len(COLUMNS), kv[0][2] != "32B", kv[0][3],
            int(kv[0][4].rstrip("us")))):
        if window == DEFAULT_WINDOW or col not in COLUMNS or num not in (None, "consecutive"):
            continue
        m = _matched(fs.get((col, num, size, sw, DEFAULT_WINDOW), []), pairs)
        if m is None:
            continue
        n, (d0, d1), (a0, a1), (f0, f1), change = m
        out.append(f"| {col} | {size} | {sw} | {window} | {n} | {d0:.4f} / {d1:.4f} | {a0:.4f} / {a1:.4f} | "
                   f"{f0:.2f} / {f1:.2f} | {change} |")
    return out


def variants_table(fs) -> list[str]:
    """Each variant beside uniform 2/4 on the same fabrics (matched by seed), same window."""
    out = ["| variant | size | switches | fabrics | det. throughput: 2/4 / variant | adaptive: 2/4 / variant "
           "| factor avg: 2/4 / **variant** | paper avg | factor change, min / avg / max |",
           "|---|---|---|---|---|---|---|---|---|"]
    for col, size, sw in _cells(VARIANTS):
        m = _matched(fs.get(("Unif.", "consecutive", size, sw, DEFAULT_WINDOW), []),
                     fs.get((col, None, size, sw, DEFAULT_WINDOW), []))
        if m is None:
            continue
        n, (d0, d1), (a0, a1), (f0, f1), change = m
        paper = _paper("Unif.", sw, size)[2]
        out.append(f"| {col.removeprefix('Unif., ')} | {size} | {sw} | {n} | {d0:.3f} / {d1:.3f} | "
                   f"{a0:.3f} / {a1:.3f} | {f0:.2f} / **{f1:.2f}** | {paper:.2f} | {change} |")
    return out


def numbering_table(fs, what: str = "throughput") -> list[str]:
    out = ["| numbering | switches | fabrics | ours: min | max | **avg** | paper: min | max | **avg** "
           f"| det. / adaptive {what} (avg) |",
           "|---|---|---|---|---|---|---|---|---|---|"]
    for num in ("consecutive", "interleaved", "random"):
        for sw in (8, 16, 32, 64):
            pairs = fs.get(("BR", num, "32B", sw, DEFAULT_WINDOW))
            if not pairs:
                continue
            lo, hi, avg = _stats(pairs)
            p = _paper("BR", sw, "32B")
            det, ada = _mean(d for _, d, _ in pairs), _mean(a for _, _, a in pairs)
            out.append(f"| {num} | {sw} | {len(pairs)} | {lo:.2f} | {hi:.2f} | **{avg:.2f}** | {p[0]:.2f} | {p[1]:.2f} | "
                       f"**{p[2]:.2f}** | {det:.3f} / {ada:.3f} |")
    return out


def fig3_table(fs) -> list[str]:
    out = ["| switches | ours 0 % / 100 % (fraction of link rate) | in bytes/ns/switch | in bytes/ns/host "
           "| paper's x axis | axis end / ours 100 %, per switch | per host | paper's latency axis starts at |",
           "|---|---|---|---|---|---|---|---|"]
    for sw in (8, 16, 32, 64):
        pairs = [p for p in fs.get(("Unif.", "consecutive", "32B", sw, DEFAULT_WINDOW), []) if p[0] == 1]
        if not pairs:
            continue
        _, d, a = pairs[0]
        host = LINK_BYTES_PER_NS
        switch = LINK_BYTES_PER_NS * HOSTS_PER_SWITCH
        (x0, x1), lat = PAPER_FIG3_AXES[sw]
        out.append(f"| {sw} | {d:.3f} / {a:.3f} | {d * switch:.3f} / {a * switch:.3f} | {d * host:.4f} / {a * host:.4f} | "
                   f"{x0}-{x1} | {x1 / (a * switch):.2f} | {x1 / (a * host):.2f} | {lat} ns |")
    return out


def knee_table(fs, fk, window: str = DEFAULT_WINDOW) -> list[str]:
    """Each Table 1 row with the factor read two ways: from the largest accepted load of any probe (the tables
    above) and at the saturation point (the ratio of the highest loads the fabrics sustained)."""
    out = ["| column | size | switches | fabrics | largest accepted: min / max / **avg** "
           "| at the saturation point: min / max / **avg** | paper: min / max / **avg** |", "|---" * 7 + "|"]
    for col, size, sw in _cells():
        key = _key(col, size, sw, window)
        if not fs.get(key) or not fk.get(key):
            continue
        a, b = _stats(fs[key]), _stats(fk[key])
        p = _paper(col, sw, size)
        out.append(f"| {col} | {size} | {sw} | {len(fk[key])} | {a[0]:.2f} / {a[1]:.2f} / **{a[2]:.2f}** | "
                   f"{b[0]:.2f} / {b[1]:.2f} / **{b[2]:.2f}** | {_f(p[0])} / {_f(p[1])} / **{_f(p[2])}** |")
    return out


def whole_table(fs, fk, fabrics: int = 10) -> list[str]:
    """Every cell of Table 1 on *fabrics* fabrics, each at the longest window that has them all (the stable
    window where it was run, 200 us otherwise): the factor read at the largest accepted load and at the
    saturation point beside the paper's, with the distance of the averages and whether ours lies in the
    paper's range; then the mean distance per column."""
    out = ["| column | size | switches | window | fabrics | largest accepted: **avg** "
           "| at the saturation point: min / max / **avg** | paper: min / max / **avg** "
           "| saturation point - paper | in the paper's range |", "|---" * 10 + "|"]
    distance: dict[str, list[float]] = {}
    for col, size, sw in _cells():
        keys = [_key(col, size, sw, w) for w in (STABLE_WINDOW, DEFAULT_WINDOW)]
        key = next((k for k in keys if len(fk.get(k, ())) >= fabrics and fs.get(k)), None)
        if key is None:
            continue
        a, b = _stats(fs[key]), _stats(fk[key])
        p = _paper(col, sw, size)
        if p[2] is None:
            diff = inside = "-"
        else:
            distance.setdefault(col, []).append(abs(b[2] - p[2]))
            diff, inside = f"{b[2] - p[2]:+.2f}", "yes" if p[0] <= b[2] <= p[1] else "no"
        out.append(f"| {col} | {size} | {sw} | {key[4]} | {len(fk[key])} | **{a[2]:.2f}** | "
                   f"{b[0]:.2f} / {b[1]:.2f} / **{b[2]:.2f}** | {_f(p[0])} / {_f(p[1])} / **{_f(p[2])}** | "
                   f"{diff} | {inside} |")
    out += ["", "| column | cells | mean distance of the averages to the paper's |", "|---|---|---|"]
    out += [f"| {col} | {len(d)} | {_mean(d):.2f} |" for col, d in distance.items()]
    return out


def sizes_table(fk, fabrics: int = 10) -> list[str]:
    """How the factor changes from 32- to 256-byte packets: the average factor at the saturation point with 256 bytes
    over that with 32 bytes, the paper's beside ours under root sw0 (Table 1 whole's windows, the fabrics with both
    sizes), under each fabric's best root (the same root for both sizes, where both were searched) and, where every
    switch was the root with both sizes, that ratio root by root: its smallest, median and largest over all fabrics
    and roots, and the average over the fabrics of each fabric's smallest."""
    out = ["| column | switches | paper: 256B / 32B | ours, root sw0: fabrics | 256B / 32B "
           "| ours, best root: fabrics | 256B / 32B | every root: fabrics | root by root: min / median / max "
           "| each fabric's smallest, avg |", "|---" * 10 + "|"]

    def ratio(k32, k256) -> tuple[int, float] | None:
        a = {t: x / d for t, d, x in fk.get(k32, ())}
        b = {t: x / d for t, d, x in fk.get(k256, ())}
        both = sorted(set(a) & set(b))
        return (len(both), _mean(b[t] for t in both) / _mean(a[t] for t in both)) if both else None

    for col in COLUMNS:
        for sw in (8, 16, 32, 64):
            p32, p256 = _paper(col, sw, "32B")[2], _paper(col, sw, "256B")[2]
            keys = [(_key(col, "32B", sw, w), _key(col, "256B", sw, w)) for w in (STABLE_WINDOW, DEFAULT_WINDOW)]
            k = next((k for k in keys if len(fk.get(k[0], ())) >= fabrics and len(fk.get(k[1], ())) >= fabrics), None)
            if p32 is None or k is None:
                continue
            sw0 = ratio(*k)
            best = ratio(*((col + BEST_ROOT, None, z, sw, DEFAULT_WINDOW) for z in ("32B", "256B")))
            cells = [f"{best[0]}", f"**{best[1]:.2f}**"] if best else ["-", "-"]
            r32, r256 = every_root(fk, col, "32B", sw), every_root(fk, col, "256B", sw)
            per = {t: [(r256[t][root][1] / r256[t][root][0]) / (r32[t][root][1] / r32[t][root][0])
                       for root in r32[t] if root in r256[t]] for t in sorted(set(r32) & set(r256))}
            flat = [x for v in per.values() for x in v]
            if flat:
                cells += [f"{len(per)}", f"{min(flat):.2f} / {statistics.median(flat):.2f} / {max(flat):.2f}",
                          f"{_mean(min(v) for v in per.values()):.2f}"]
            else:
                cells += ["-", "-", "-"]
            out.append(f"| {col} | {sw} | **{p256 / p32:.2f}** | {sw0[0]} | **{sw0[1]:.2f}** | {' | '.join(cells)} |")
    return out if len(out) > 2 else []


def every_root(fs, base: str, size: str, sw: int) -> dict[int, dict[str, tuple[float, float]]]:
    """fabric -> root -> (deterministic, adaptive) of column *base* on the fabrics searched under every root."""
    per: dict[int, dict[str, tuple[float, float]]] = {}
    prefix = base + ROOT_COLUMN
    for (col, _num, sz, n, window), pairs in fs.items():
        if not col.startswith(prefix) or sz != size or n != sw or window != DEFAULT_WINDOW:
            continue
        for t, d, a in pairs:
            per.setdefault(t, {})[col.removeprefix(prefix)] = (d, a)
    return {t: r for t, r in per.items() if "sw0" in r and len(r) == sw}


def best_roots(fs, base: str = "Unif.", size: str = "256B", sw: int = 64) -> dict[int, str]:
    """fabric -> the root that gives deterministic traffic its highest value in *fs*."""
    return {t: max(r, key=lambda k: r[k][0]) for t, r in every_root(fs, base, size, sw).items()}


def root_payload_table(fs, fk, sw: int = 64) -> list[str]:
    """Uniform 2/4 with 256-byte packets on *sw* switches, fabric by fabric: the factor under root sw0 and under
    the root best for deterministic traffic, each with 256 bytes on the wire and with 256 bytes of payload, at
    the saturation point and at the largest accepted load."""
    out = ["| fabric | root of the best det. | at the saturation point: sw0 / best root / sw0, payload / "
           "best root, payload | largest accepted: sw0 / best root / sw0, payload / best root, payload |",
           "|---|---|---|---|"]
    best = best_roots(fs, "Unif.", "256B", sw)  # chosen at the largest accepted load, as the experiment's roots
    cols = {}
    for f, name in ((fk, "knee"), (fs, "largest")):
        roots = every_root(f, "Unif.", "256B", sw)
        payload = {t: (d, a) for t, d, a in f.get(("Unif., payload", None, "256B", sw, DEFAULT_WINDOW), [])}
        both = {t: (d, a) for t, d, a in f.get((ROOT_PAYLOAD, None, "256B", sw, DEFAULT_WINDOW), [])}
        cols[name] = {t: (roots[t]["sw0"], roots[t][best[t]], payload[t], both[t]) for t in both
                      if t in roots and t in payload}
    fabrics = sorted(set(cols["knee"]) & set(cols["largest"]))
    if not fabrics:
        return []

    def cells(rows) -> str:
        return " / ".join(f"{a / d:.2f}" for d, a in rows)

    for t in fabrics:
        out.append(f"| {t} | {best[t]} | {cells(cols['knee'][t])} | {cells(cols['largest'][t])} |")
    avg = {name: " / ".join(f"**{_mean(c[t][i][1] / c[t][i][0] for t in fabrics):.2f}**" for i in range(4))
           for name, c in cols.items()}
    p = _paper("Unif.", sw, "256B")
    out.append(f"| average ({len(fabrics)}) | | {avg['knee']} | {avg['largest']} |")
    out.append(f"| paper | | min {_f(p[0])}, max {_f(p[1])}, **avg {_f(p[2])}** | |")
    return out


def roots_table(fs, what: str = "throughput") -> list[str]:
    """Per size: the deterministic throughput (or *what* the factors were made of) and the factor over every
    choice of up*/down* root, fabric by fabric, averaged over the fabrics."""
    out = [f"| column | size | switches | fabrics | roots each | det. {what}: worst root / sw0 / best root "
           f"| factor: root sw0 | root of the best det. {what} | lowest over roots | highest over roots "
           "| paper: min / max / **avg** | ours, root of the best det.: min / max |", "|---" * 12 + "|"]
    for base, size, sw in _cells(ROOT_BASES):
        per = every_root(fs, base, size, sw)
        if not per:
            continue
        n, rs = len(per), list(per.values())
        worst = _mean(min(d for d, _ in r.values()) for r in rs)
        best = _mean(max(d for d, _ in r.values()) for r in rs)
        d0 = _mean(r["sw0"][0] for r in rs)
        f0 = _mean(r["sw0"][1] / r["sw0"][0] for r in rs)
        fbest = [a / d for d, a in (max(r.values()) for r in rs)]  # under the root of the best det.
        flo = _mean(min(a / d for d, a in r.values()) for r in rs)
        fhi = _mean(max(a / d for d, a in r.values()) for r in rs)
        p = _paper(base, sw, size)
        out.append(f"| {base} | {size} | {sw} | {n} | {sw} | {worst:.3f} / {d0:.3f} / {best:.3f} | {f0:.2f} | "
                   f"**{_mean(fbest):.2f}** | {flo:.2f} | {fhi:.2f} | {p[0]:.2f} / {p[1]:.2f} / **{p[2]:.2f}** | "
                   f"{min(fbest):.2f} / {max(fbest):.2f} |")
    return out


def best_root_table(fs, fk, sw: int = 64) -> list[str]:
    """Table 1's columns searched under each fabric's root best for deterministic 256-byte traffic (uniform 2/4 on the
    4-link fabrics, 2/6 on the 6-link ones; ``<column>, under the best root``) beside the same fabrics under root sw0
    and the paper's cell: the factor at the saturation point and at the largest accepted load, and how many fabrics
    lie in the paper's range."""
    out = ["| column | size | switches | fabrics | at the saturation point: sw0 / **best root** "
           "| best root: min / max | largest accepted: sw0 / best root | paper: min / max / **avg** "
           "| fabrics in the paper's range: sw0 / best root |", "|---" * 9 + "|"]
    for col, size in ((c, z) for c in COLUMNS for z in ("32B", "256B")):
        if (col + BEST_ROOT, None, size, sw, DEFAULT_WINDOW) not in fk:
            continue
        got = {}
        for f, name in ((fk, "knee"), (fs, "largest")):
            best = {t: (d, a) for t, d, a in f[(col + BEST_ROOT, None, size, sw, DEFAULT_WINDOW)]}
            sw0 = {t: (d, a) for t, d, a in f.get(_key(col, size, sw), [])}
            got[name] = {t: (sw0[t], best[t]) for t in best if t in sw0}
        fabrics = sorted(set(got["knee"]) & set(got["largest"]))
        if not fabrics:
            continue
        knee = [(got["knee"][t][0][1] / got["knee"][t][0][0], got["knee"][t][1][1] / got["knee"][t][1][0])
                for t in fabrics]
        large = [(got["largest"][t][0][1] / got["largest"][t][0][0],
                  got["largest"][t][1][1] / got["largest"][t][1][0]) for t in fabrics]
        lo, hi, avg = _paper(col, sw, size)
        inside = [sum(lo <= f[i] <= hi for f in knee) for i in (0, 1)]
        out.append(f"| {col} | {size} | {sw} | {len(fabrics)} | {_mean(f for f, _ in knee):.2f} / "
                   f"**{_mean(f for _, f in knee):.2f}** | {min(f for _, f in knee):.2f} / {max(f for _, f in knee):.2f} "
                   f"| {_mean(f for f, _ in large):.2f} / {_mean(f for _, f in large):.2f} | {lo:.2f} / {hi:.2f} / "
                   f"**{avg:.2f}** | {inside[0]} / {inside[1]} |")
    return out if len(out) > 2 else []


#: The experiment of the numbering comparison: its three numberings searched alike (the other columns'
#: file searches bit-reversal's consecutive numbering too, with seeds of its own).
NUMBERINGS = "martinez2003_table1_br"


#: The report's tables, by the name ``--only`` selects them with.
SECTIONS = ("uniform", "nobuf", "columns", "variants", "roots", "window", "stable", "numberings", "knee",
            "knee-stable", "whole", "roots-knee", "root-payload", "best-root", "sizes", "numberings-knee", "fig3", "runs")


def report(res: dict[str, Any], only: Collection[str] = SECTIONS) -> str:
    """The tables of experiments/README.md from gathered results: those of *only* (names of :data:`SECTIONS`)
    that have results, in that order."""
    main = [s for s in res["searches"] if s["experiment"] != NUMBERINGS]
    numbered = [s for s in res["searches"] if s["experiment"] == NUMBERINGS]
    fs, fs_br = factors(main), factors(numbered)
    fk, fk_br = factors(main, "saturation_load_low"), factors(numbered, "saturation_load_low")
    sections: dict[str, tuple[str, Callable[[], list[str]]] | None] = {
        "uniform": ("Uniform traffic, MR/LS 2/4 (Table 1, left, first rows)",
                    lambda: table1(fs, ["Unif."], with_substitute=True)),
        "nobuf": ("The same switch without its output buffers (the substitute switch), same search",
                  lambda: table1(fs, ["Unif.", NOBUF], with_substitute=False,
                                 only={(k[2], k[3]) for k in fs if k[0] == NOBUF}))
        if any(k[0] == NOBUF for k in fs) else None,
        "columns": ("The other columns", lambda: table1(fs, [c for c in COLUMNS if c != "Unif."], with_substitute=True))
        if any(k[0] not in ("Unif.", NOBUF) and k[1] in (None, "consecutive") for k in fs) else None,
        "variants": ("What the paper leaves open, one choice at a time (uniform 2/4, the same fabrics and search)",
                     lambda: variants_table(fs)) if any(k[0] in VARIANTS for k in fs) else None,
        "roots": ("Every switch as the up*/down* root (MR/LS 2/4, the same fabrics and search)",
                  lambda: roots_table(fs)) if any(ROOT_COLUMN in k[0] for k in fs) else None,
        "window": ("The window: the same searches with longer windows W (warm-up a quarter of W)",
                   lambda: window_table(fs)) if any(k[4] != DEFAULT_WINDOW for k in fs) else None,
        "stable": (f"Table 1 at the stable window ({STABLE_WINDOW}, rows with 10 fabrics)",
                   lambda: table1(fs, list(COLUMNS), with_substitute=False, window=STABLE_WINDOW, fabrics=10))
        if any(k[0] in COLUMNS and k[4] == STABLE_WINDOW and len(v) >= 10 for k, v in fs.items()) else None,
        "numberings": ("Bit-reversal under three host numberings (32-byte packets)",
                       lambda: numbering_table(fs_br)) if fs_br else None,
        "knee": (f"The factor at the saturation point against the largest accepted load ({DEFAULT_WINDOW})",
                 lambda: knee_table(fs, fk)),
        "knee-stable": (f"The same at the stable window ({STABLE_WINDOW})", lambda: knee_table(fs, fk, STABLE_WINDOW))
        if any(k[4] == STABLE_WINDOW and len(v) >= 10 for k, v in fk.items()) else None,
        "whole": ("Table 1 on 10 fabrics, each cell at the longest window run on all of them",
                  lambda: whole_table(fs, fk)) if any(len(v) >= 10 for v in fk.values()) else None,
        "roots-knee": ("Every switch as the up*/down* root, at the saturation point",
                       lambda: roots_table(fk, "saturation load")) if any(ROOT_COLUMN in k[0] for k in fk) else None,
        "root-payload": ("The root and the payload reading together (uniform 2/4, 256 bytes, 64 switches)",
                         lambda: root_payload_table(fs, fk)) if any(k[0] == ROOT_PAYLOAD for k in fs) else None,
        "best-root": ("The columns under each fabric's root best for deterministic 256-byte traffic (uniform 2/4; "
                      "2/6 on the 6-link fabrics), 64 switches", lambda: best_root_table(fs, fk))
        if any(k[0].removesuffix(BEST_ROOT) in COLUMNS and k[0].endswith(BEST_ROOT) for k in fs) else None,
        "sizes": ("The factor with 256-byte packets over the factor with 32-byte ones (at the saturation point)",
                  lambda: sizes_table(fk)) if any(len(v) >= 10 for v in fk.values()) else None,
        "numberings-knee": ("Bit-reversal under three host numberings at the saturation point (32-byte packets)",
                            lambda: numbering_table(fk_br, "saturation load")) if fk_br else None,
        "fig3": ("Fig. 3's saturation points in the paper's unit (fabric 1, 32-byte packets)", lambda: fig3_table(fs)),
        "runs": ("Searches and their simulation time", lambda: runs_table(res)),
    }
    out: list[str] = []
    for name in SECTIONS:
        if name in only and sections[name] is not None:
            title, lines = sections[name]
            out += ([""] if out else []) + [f"### {title}\n"] + lines()
    return "\n".join(out)


def runs_table(res: dict[str, Any]) -> list[str]:
    """The searches that did not end 'ok', and each experiment's runs and simulation time."""
    bad = [s for s in res["searches"] if s["status"] != "ok"]
    out = [f"Searches: {len(res['searches'])}, of them not 'ok': {len(bad)}"
           + "".join(f"; {s['experiment']} {s['column']} {s['size']} {s['switches']} sw fabric {s['topo']} "
                     f"adaptive {s['adaptive']}: {s['status']}" for s in bad[:10])]
    out += ["", "| experiment | runs | simulation time (sum of the runs' wall time) |", "|---|---|---|"]
    for name, r in res["runs"].items():
        out.append(f"| {name} | {r['runs']} | {r['wall_s'] / 60:.1f} min |")
    runs, wall = sum(r["runs"] for r in res["runs"].values()), sum(r["wall_s"] for r in res["runs"].values())
    out.append(f"| all: {len(res['searches'])} searches, {len(bad)} not 'ok' | {runs} | {wall / 60:.1f} min |")
    return out


# -------------------------------------------------------------------- main


def _sections(text: str) -> tuple[str, ...]:
    names = tuple(n.strip() for n in text.split(",") if n.strip())
    unknown = [n for n in names if n not in SECTIONS]
    if unknown or not names:
        raise argparse.ArgumentTypeError(f"unknown table {', '.join(unknown) or repr(text)}; "
                                         f"choose from {', '.join(SECTIONS)}")
    return names


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--results", type=Path, default=Path("results"),
                    help="the directory the searches wrote to (default results/, the sweeps' default)")
    ap.add_argument("--out", type=Path, default=RESULTS, help=f"gathered results (default {RESULTS.relative_to(HERE.parent)})")
    ap.add_argument("--report", action="store_true", help="print the tables of --out and exit")
    ap.add_argument("--only", metavar="NAME,...", type=_sections, default=SECTIONS,
                    help=f"print only these tables ({', '.join(SECTIONS)})")
    args = ap.parse_args(argv)
    if args.report:
        try:
            res = json.loads(args.out.read_text())
        except (OSError, ValueError) as exc:
            ap.error(f"cannot read {args.out}: {exc}")
        print(report(res, args.only))
        return 0
    res = keep_others(gather(args.results), args.out)
    if not res["searches"]:
        ap.error(f"no saturation.csv of {', '.join(EXPERIMENTS)} under {args.results}: run the searches first "
                 "(ibfabric saturation experiments/martinez2003_table1.toml --jobs 1)")
    from ibfabric.results import to_json, write_atomic

    write_atomic(args.out, to_json(res, indent=1) + "\n")
    print(report(res, args.only))
    print(f"\nresults written to {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
