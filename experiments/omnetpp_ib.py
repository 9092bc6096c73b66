"""ibfabric's ``omnetpp-ib`` configuration against the C++ OMNeT++ InfiniBand flit model (issue 31).

The model's own one-switch set-up (``examples/switch8``: 8 hosts on one
8-port switch), uniform Poisson traffic of 256-byte packets, under
``--config omnetpp-ib``.  Two parts:

``main``
    The runs of ``experiments/omnetpp_ib.toml`` (loads 0.1 to 0.9, 5 seeds,
    windows of 2 ms and 5 ms, the seeds ``ibfabric sweep`` gives them):
    latency (creation to last bit) and network latency (first bit out of the
    source to last bit), mean and p99, beside the model's figures.
``variants``
    What explains the differences, each changed alone against the
    configuration, at loads 0.1, 0.5 and 0.9, 5 seeds, 2 ms: the service
    order (``fifo`` against ``wrr``, with and without output buffers), the
    depth of the output FIFO (grant-ahead), an input never busy (crossbar
    speed-up 1000), the configuration before issue 31, and the generator
    (constant arrivals; Poisson with a minimum gap of one packet time, as
    the model's generator, which never sends faster than its link).

Every run also gives, from its delivery log, the source's queueing
(creation to the first bit sent) and the latency as the model defines it
(from entering the source HCA's arbiter, which a packet does when the
packets ahead of it fit in the HCA's output queue of N flits, i.e. at
``max(created, first bit sent - N packet times)``, to the *first* bit of
its last flit: the last bit minus 64 ns), for N = 2 (``switch8.ini``) and
N = 5 (``modules.ini``).

The minimum-gap generator exists only here: while such a run is built and
runs, the traffic source's batch of exponential gaps is rescaled and cut
below at one packet time (:func:`min_gap_arrivals`); ibfabric has no such
arrival mode.

::

    python experiments/omnetpp_ib.py                  # everything: about 20 minutes on one core
    python experiments/omnetpp_ib.py --only main       # the comparison alone (50 runs)
    python experiments/omnetpp_ib.py --quick           # a smoke test: 2 loads, 1 seed, 50 us (saved only with --out)
    python experiments/omnetpp_ib.py --report          # the tables of experiments/results/omnetpp_ib.json
    python experiments/omnetpp_ib.py --report --readme # the same runs as experiments/README.md's tables

Finished runs are kept in the results file and not run again (``--fresh``
runs everything again).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import json
import math
import pkgutil
import sys
import time
from array import array
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
EXPERIMENT = HERE / "omnetpp_ib.toml"
RESULTS = HERE / "results" / "omnetpp_ib.json"

#: The C++ model's figures (issue 31): load -> (mean, p99) of its latency, ns.
MODEL = {0.1: (390.0, 471.0), 0.5: (457.0, 697.0), 0.9: (947.0, 2397.0)}
#: ibfabric's figures the issue quotes (the configuration before it, crossbarSpeedup 7.2): load -> (mean, p99).
ISSUE_IBFABRIC = {0.1: (371.0, 444.0), 0.5: (426.0, 703.0), 0.9: (938.0, 2966.0)}

#: The HCA output-queue sizes (flits) of the model's latency definition: switch8.ini, modules.ini.
HCA_OBUF = (2, 5)

#: name -> (what it changes, the parameters it changes (None: not set, the module type's default), generator:
#: None, "min-gap" or "min-gap-nominal").  "config" is the configuration itself.
VARIANTS: dict[str, tuple[str, dict[str, str | None], str | None]] = {
    "config": ("omnetpp-ib: wrr, output FIFO 4,992 B (the release's 78 flits of 64 B), speed-up 7.2", {}, None),
    "fifo": ("crossbarArbiter fifo (the order of becoming candidates)", {"**.crossbarArbiter": "fifo"}, None),
    "obuf-1280": ("output FIFO 1,280 B (switch8.ini's 5 flits of 256 B; MTU 256 B)",
                  {"**.outputBufferSize": "1280B", "**.mtu": "256B"}, None),
    "fifo-obuf-1280": ("fifo, output FIFO 1,280 B (MTU 256 B)",
                       {"**.crossbarArbiter": "fifo", "**.outputBufferSize": "1280B", "**.mtu": "256B"}, None),
    "obuf-1792": ("output FIFO 1,792 B (7 packets; MTU 256 B)", {"**.outputBufferSize": "1792B", "**.mtu": "256B"}, None),
    "obuf-2560": ("output FIFO 2,560 B (10 packets)", {"**.outputBufferSize": "2560B"}, None),
    "obuf-64k": ("output FIFO 64 KiB (never full)", {"**.outputBufferSize": "64KiB"}, None),
    "no-obuf": ("no output buffer (outputBufferSize 0)", {"**.outputBufferSize": "0B"}, None),
    "fifo-no-obuf": ("fifo, no output buffer", {"**.crossbarArbiter": "fifo", "**.outputBufferSize": "0B"}, None),
    "speedup-1000": ("crossbarSpeedup 1000 (an input is never busy)", {"**.crossbarSpeedup": "1000"}, None),
    "before-7.2": ("the configuration before issue 31 with crossbarSpeedup 7.2 (the issue's ibfabric figures): "
                   "fifo, no output buffer, VL buffers of 16 KiB (switch) and 4 KiB (HCA)",
                   {"**.crossbarArbiter": None, "**.outputBufferSize": None, "**.vlBufferSize": None}, None),
    "before": ("the configuration before issue 31 as shipped (as before-7.2, crossbarSpeedup 1)",
               {"**.crossbarArbiter": None, "**.outputBufferSize": None, "**.vlBufferSize": None,
                "**.crossbarSpeedup": "1"}, None),
    "fixed-25ns": ("a constant 24.9 ns more on every path (each wire 1.1245 m: +12.45 ns, two a path), the sum of the "
                   "two internal buses' times for 256 B (16 ns in the HCA, 8.9 in the switch): NOT in the model's code "
                   "(vlarb.cc: a bus only delays the next grant), what a fixed delay of that size would do",
                   {"**.length": "1.1245m"}, None),
    "constant": ("constant arrivals (arrival constant)", {"**.arrival": "constant"}, None),
    "min-gap": ("Poisson gaps with a minimum of one packet time, scaled to the nominal load", {}, "min-gap"),
    "min-gap-nominal": ("max(exponential gap of mean D/load, D), as the model's app with msg2msgGap of mean D/load "
                        "(offers less than the nominal load)", {}, "min-gap-nominal"),
}
VARIANT_LOADS = (0.1, 0.5, 0.9)
#: The variants of experiments/README.md's table, in its order, by their label there (``--report --readme``;
#: ``{accepted}`` is the variant's accepted load at ``{load}``, the highest).
README_VARIANTS = {
    "config": "`config` (wrr, 4,992 B)",
    "fifo": "`fifo` arbiter",
    "obuf-1280": "output FIFO 1,280 B (`switch8.ini`'s 5 flits)",
    "fifo-obuf-1280": "`fifo`, 1,280 B",
    "obuf-1792": "1,792 B (7 packets)",
    "obuf-2560": "2,560 B (10 packets)",
    "obuf-64k": "64 KiB (never full)",
    "no-obuf": "no output buffer",
    "fifo-no-obuf": "`fifo`, no output buffer",
    "speedup-1000": "`crossbarSpeedup` 1000 (an input never busy)",
    "constant": "constant arrivals",
    "min-gap": "Poisson, gaps at least one packet time (64 ns), scaled to the load",
    "min-gap-nominal": "the same, mean gap 64 ns / load (the model's app: offers {accepted:.3f} at \"{load}\")",
    "fixed-25ns": "`fixed-25ns`: 24.9 ns more on every path (each wire 12.45 ns longer); **not in the model's code** "
                  "(below)",
}
VARIANT_REPS = 5
VARIANT_WINDOW = "2ms"


# ------------------------------------------------------------------ the minimum-gap generator


def _traffic_source_class():
    """ibfabric's Poisson traffic source class, wherever the HCA's modules put it."""
    mod = importlib.import_module("ibfabric.components.hca")
    if hasattr(mod, "TrafficSource"):
        return mod.TrafficSource
    for info in pkgutil.walk_packages(getattr(mod, "__path__", []), mod.__name__ + "."):
        sub = importlib.import_module(info.name)
        if hasattr(sub, "TrafficSource"):
            return sub.TrafficSource
    raise RuntimeError("no TrafficSource in ibfabric.components.hca")


def min_gap_scale(load: float) -> float:
    """``m / D`` such that gaps ``max(Exp(m), D)`` have the mean ``D / load``: ``x exp(-1/x) = 1/load - 1``."""
    target = 1.0 / load - 1.0
    lo, hi = 1e-6, 1e6
    for _ in range(200):
        mid = math.sqrt(lo * hi)
        if mid * math.exp(-1.0 / mid) < target:
            lo = mid
        else:
            hi = mid
    return math.sqrt(lo * hi)


@contextlib.contextmanager
def min_gap_arrivals(calibrated: bool):
    """While it is active, Poisson sources draw gaps ``max(Exp(m), D)`` (``D``: one packet time): with
    *calibrated*, ``m`` gives the nominal load; otherwise ``m = D / load``, the nominal mean gap (the model's
    app with an exponential ``msg2msgGap``), which offers less.  The draws are the source's own, rescaled, so
    destinations are those of the plain Poisson run."""
    cls = _traffic_source_class()
    plain = cls._refill

    def refill(self):
        plain(self)
        if not self.poisson:
            return
        d = self.mean_gap * self.hca.load  # wire bytes / rate: one packet (message) time
        m = d * min_gap_scale(self.hca.load) if calibrated else self.mean_gap
        gaps = np.maximum(np.frombuffer(self._gaps, dtype="d") * (m / self.mean_gap), d)
        self._gaps = array("d", gaps.tobytes())

    cls._refill = refill
    try:
        yield
    finally:
        cls._refill = plain


# ------------------------------------------------------------------ runs


def changed(overrides, changes: dict[str, str | None]) -> list[tuple[str, str]]:
    """*overrides* with the patterns of *changes* given their new values (None: removed), new ones first."""
    out = [(p, changes.get(p, v)) for p, v in overrides if changes.get(p, v) is not None]
    have = {p for p, _ in overrides}
    return [(p, v) for p, v in changes.items() if p not in have and v is not None] + out


def _block(a: np.ndarray) -> dict[str, float]:
    if not len(a):
        return {"mean": None, "p50": None, "p99": None, "max": None}
    return {"mean": float(a.mean()), "p50": float(np.percentile(a, 50)), "p99": float(np.percentile(a, 99)),
            "max": float(a.max())}


def run_one(spec, variant: str) -> dict[str, Any]:
    """Run *spec* (a run of the experiment file) with *variant*'s changes; the figures of one run."""
    from ibfabric.simulation import Simulation

    what, changes, generator = VARIANTS[variant]
    t0 = time.perf_counter()
    ctx = min_gap_arrivals(generator == "min-gap") if generator else contextlib.nullcontext()
    with ctx:
        sim = Simulation(spec.topology_source(), overrides=changed(spec.overrides, changes),
                         seed=spec.seed, warmup=spec.warmup, log_limit=None)
        s = sim.run(spec.time)
    wall = time.perf_counter() - t0
    log = sim.stats.arrays()
    end = s["sim_time_ns"]
    w = (log["delivered_at"] >= s["warmup_ns"]) & (log["delivered_at"] <= end)
    created, injected, delivered = log["created"][w], log["injected_at"][w], log["delivered_at"][w]
    byte_ns = byte_time(spec)
    last_flit = log["size"][w] * byte_ns  # the last (only) flit's time on the wire
    out = {
        "variant": variant, "load": float(dict(spec.vars)["load"]), "window": str(spec.time),
        "repetition": spec.repetition, "seed": spec.seed, "wall_s": wall,
        "offered_load": s["offered_load"], "accepted_load": s["accepted_load"], "saturated": s["saturated"],
        "packets": int(w.sum()), "latency": _block(delivered - created), "network": _block(delivered - injected),
        "source_wait": _block(injected - created),
        "sls": {str(k): v["packets"] for k, v in (s.get("by_sl") or {}).items()},
    }
    for n in HCA_OBUF:
        start = np.maximum(created, injected - n * last_flit)
        out[f"model_def_{n}"] = _block(delivered - last_flit - start)
    # the summary's own figures (exact quantiles over the same packets): the log gives the same
    out["summary_latency"] = {k: s["latency_ns"][k] for k in ("count", "mean", "p99")}
    out["summary_network"] = {k: s["network_latency_ns"][k] for k in ("count", "mean", "p99")}
    return out


def byte_time(spec) -> float:
    """ns per byte on the links of *spec* (every link of switch8 is the same: the configuration's)."""
    from ibfabric.components.rates import byte_time as bt

    o = dict(reversed(spec.overrides))  # first match wins
    return bt(o["**.width"], o["**.speed"])


def key(variant: str, spec) -> str:
    return f"{variant}|{dict(spec.vars)['load']}|{spec.time}|{spec.repetition}"


def plan(only: str | None, quick: bool):
    """The (variant, spec) pairs to run."""
    from ibfabric.experiment import Experiment

    specs = Experiment.from_file(EXPERIMENT).runs()
    if quick:
        import attrs

        specs = [attrs.evolve(s, time="50us", warmup="10us") for s in specs
                 if s.repetition == 0 and dict(s.vars)["window"] == "2ms" and dict(s.vars)["load"] in (0.1, 0.9)]
        return [("config", s) for s in specs] + [(v, s) for v in ("fifo", "min-gap") for s in specs]
    todo = []
    if only in (None, "main"):
        todo += [("config", s) for s in specs]
    if only in (None, "variants"):
        for v in VARIANTS:
            for s in specs:
                sv = dict(s.vars)
                if sv["window"] == VARIANT_WINDOW and sv["load"] in VARIANT_LOADS and s.repetition < VARIANT_REPS:
                    if (v, s) not in todo:
                        todo.append((v, s))
    return todo


# ------------------------------------------------------------------ report


def _ns(duration: str) -> float:
    from ibfabric.units import parse_duration

    return parse_duration(duration)


def _pct(ours: float | None, ref: float | None) -> str:
    if ours is None or not ref:
        return "-"
    return f"{100 * (ours - ref) / ref:+.1f} %"


def _agg(runs: list[dict], field: str, stat: str) -> tuple[float, float, float] | None:
    vals = [r[field][stat] for r in runs if r[field][stat] is not None]
    if not vals:
        return None
    return float(np.mean(vals)), float(min(vals)), float(max(vals))


def _fmt(a: tuple[float, float, float] | None, spread: bool = True) -> str:
    if a is None:
        return "-"
    return f"{a[0]:,.0f} ({a[1]:,.0f}-{a[2]:,.0f})" if spread else f"{a[0]:,.0f}"


def _select(res: dict, variant: str, load: float, window: str, reps: int | None = None) -> list[dict]:
    return [r for r in res["runs"].values()
            if r["variant"] == variant and r["load"] == load and r["window"] == window
            and (reps is None or r["repetition"] < reps)]


def _paired(res: dict, variant: str, load: float, window: str, reps: int) -> str:
    """Per-seed differences of the p99s of *variant* and ``config`` (the same seeds: the same traffic until the
    two runs part): mean (min..max), latency and network latency."""
    base = {r["repetition"]: r for r in _select(res, "config", load, window, reps)}
    rs = [r for r in _select(res, variant, load, window, reps) if r["repetition"] in base]
    if variant == "config" or not rs:
        return "-"
    cells = []
    for field in ("latency", "network"):
        d = [r[field]["p99"] - base[r["repetition"]][field]["p99"] for r in rs]
        cells.append(f"{np.mean(d):+,.0f} ({min(d):+,.0f}..{max(d):+,.0f})")
    return ", ".join(cells)


def report(res: dict) -> str:
    out = []
    runs = res["runs"]
    loads = sorted({r["load"] for r in runs.values() if r["variant"] == "config"})
    windows = sorted({r["window"] for r in runs.values() if r["variant"] == "config"}, key=_ns)
    if loads:
        out.append("### The comparison (--config omnetpp-ib)\n")
        out.append("Mean over the seeds of each run's mean and p99 (min-max over the seeds), ns; % against the model.\n")
        out.append("| load | window | seeds | model mean / p99 | latency mean | p99 | vs model | network latency mean | p99 "
                   "| vs model | accepted |")
        out.append("|---|---|---|---|---|---|---|---|---|---|---|")
        for load in loads:
            for window in windows:
                rs = _select(res, "config", load, window)
                if not rs:
                    continue
                m = MODEL.get(load)
                lm, lp = _agg(rs, "latency", "mean"), _agg(rs, "latency", "p99")
                nm, np99 = _agg(rs, "network", "mean"), _agg(rs, "network", "p99")
                acc = float(np.mean([r["accepted_load"] for r in rs]))
                ref = f"{m[0]:,.0f} / {m[1]:,.0f}" if m else "-"
                out.append(f"| {load} | {window} | {len(rs)} | {ref} | {_fmt(lm)} | {_fmt(lp)} | "
                           f"{_pct(lm[0], m and m[0])} / {_pct(lp[0], m and m[1])} | {_fmt(nm)} | {_fmt(np99)} | "
                           f"{_pct(nm[0], m and m[0])} / {_pct(np99[0], m and m[1])} | {acc:.3f} |")
        out.append("")
        out.append("### Latency definitions (the longest window)\n")
        out.append("Mean / p99, ns, mean over the seeds. *Model's definition*: from entering the source HCA's "
                   "arbiter (the packets ahead of it fit in an HCA output queue of N flits) to the first bit of the "
                   "last flit (the last bit minus 64 ns).\n")
        out.append("| load | model | latency (creation to last bit) | network latency | network - 64 ns "
                   "| model's definition, N = 2 | N = 5 | source queue (creation to first bit sent) |")
        out.append("|---|---|---|---|---|---|---|---|")
        window = windows[-1]
        for load in loads:
            rs = _select(res, "config", load, window)
            if not rs:
                continue
            m = MODEL.get(load)

            def two(field, shift=0.0):
                a, b = _agg(rs, field, "mean"), _agg(rs, field, "p99")
                txt = f"{a[0] - shift:,.0f} / {b[0] - shift:,.0f}"
                if m:
                    txt += f" ({_pct(a[0] - shift, m[0])} / {_pct(b[0] - shift, m[1])})"
                return txt

            ref = f"{m[0]:,.0f} / {m[1]:,.0f}" if m else "-"
            sw = f"{_agg(rs, 'source_wait', 'mean')[0]:,.0f} / {_agg(rs, 'source_wait', 'p99')[0]:,.0f}"
            out.append(f"| {load} | {ref} | {two('latency')} | {two('network')} | {two('network', 64.0)} | "
                       f"{two('model_def_2')} | {two('model_def_5')} | {sw} |")
        out.append("")
    others = [r for r in runs.values() if r["variant"] != "config"]
    vloads = sorted({r["load"] for r in others})
    if vloads:
        vwin = max({r["window"] for r in others}, key=_ns)
        vreps = 1 + max(r["repetition"] for r in others)
        out.append(f"### Variants ({vwin}, {vreps} seeds; each changes one thing of the configuration)\n")
        out.append("Latency mean / p99 and network latency mean / p99, ns, mean over the seeds; "
                   "% of the latency against the model.\n")
        top = vloads[-1]
        head = "| variant | " + " | ".join(f"{l}: latency | {l}: network" for l in vloads)
        head += f" | p99 at {top} against `config`, paired: latency, network | accepted at {top} |"
        out.append(head)
        out.append("|---|" + "---|---|" * len(vloads) + "---|---|")
        for v, (what, _, _) in VARIANTS.items():
            cells = []
            acc = None
            for load in vloads:
                rs = _select(res, v, load, vwin, vreps)
                if not rs:
                    cells += ["-", "-"]
                    continue
                m = MODEL.get(load)
                lm, lp = _agg(rs, "latency", "mean")[0], _agg(rs, "latency", "p99")[0]
                nm, np99 = _agg(rs, "network", "mean")[0], _agg(rs, "network", "p99")[0]
                pct = f" ({_pct(lm, m and m[0])} / {_pct(lp, m and m[1])})" if m else ""
                cells += [f"{lm:,.0f} / {lp:,.0f}{pct}", f"{nm:,.0f} / {np99:,.0f}"]
                acc = float(np.mean([r["accepted_load"] for r in rs]))
            if all(c == "-" for c in cells):
                continue
            out.append(f"| `{v}`: {what} | " + " | ".join(cells) + f" | {_paired(res, v, top, vwin, vreps)} | {acc:.3f} |")
        out.append("")
    total = sum(r["wall_s"] for r in runs.values())
    out.append(f"{len(runs)} runs, {total:,.0f} s of run time in all (one process, one run at a time).")
    return "\n".join(out)


def readme_tables(res: dict) -> str:
    """The three tables of experiments/README.md's omnetpp_ib section, from the same runs as :func:`report`: the
    comparison (the longest window beside the shortest's p99; differences to the model of 5.0 % or more, as
    printed, in bold), the variants (latency mean / p99 at each load, the network latency at the highest) and
    the latency definitions at the loads the model has figures for."""
    runs = res["runs"]
    loads = sorted({r["load"] for r in runs.values() if r["variant"] == "config"})
    windows = sorted({r["window"] for r in runs.values() if r["variant"] == "config"}, key=_ns)
    if not loads:
        return ""
    long, short = windows[-1], windows[0]

    def row(cells) -> str:
        return ("| " + " | ".join(cells) + " |").replace("|  |", "| |")

    def spaced(window: str) -> str:  # "5ms" -> "5 ms"
        return window.rstrip("mnsu") + " " + window[len(window.rstrip("mnsu")):]

    def cell(a, ref: float | None, bold: bool, spread: bool = True) -> str:
        txt = _fmt(a, spread)
        if ref and a is not None:
            pct = _pct(a[0], ref)  # "-5.0 %": bold from 5.0 as printed
            txt += f" **{pct}**" if bold and abs(float(pct.split()[0])) >= 5.0 else f" {pct}"
        return txt

    def mean_p99(rs, field: str, shift: float = 0.0) -> str:
        return f"{_agg(rs, field, 'mean')[0] - shift:,.0f} / {_agg(rs, field, 'p99')[0] - shift:,.0f}" if rs else "-"

    lw, sw = spaced(long), spaced(short)
    out = [f"| load | model mean / p99 | latency mean, {lw} | p99, {lw} | p99, {sw} | network mean, {lw} "
           f"| network p99, {lw} |", "|---|---|---|---|---|---|---|"]
    for load in loads:
        rs, rs_short = _select(res, "config", load, long), _select(res, "config", load, short)
        if not rs:
            continue
        m = MODEL.get(load) or (None, None)
        ref = f"{m[0]:,.0f} / {m[1]:,.0f}" if m[0] else ""
        p99_short = cell(_agg(rs_short, "latency", "p99"), m[1], False) if rs_short else "-"
        out.append(row([str(load), ref, cell(_agg(rs, "latency", "mean"), m[0], True),
                        cell(_agg(rs, "latency", "p99"), m[1], True), p99_short,
                        cell(_agg(rs, "network", "mean"), m[0], False, spread=False),
                        cell(_agg(rs, "network", "p99"), m[1], False, spread=False)]))
    out.append("")
    others = [r for r in runs.values() if r["variant"] != "config"]
    if others:
        vloads = sorted({r["load"] for r in others})
        vwin = max({r["window"] for r in others}, key=_ns)
        vreps = 1 + max(r["repetition"] for r in others)
        top = vloads[-1]
        out.append("| variant | " + " | ".join(str(v) for v in vloads) + f" | network at {top} "
                   f"| p99 at {top} against `config` (latency, network) |")
        out.append("|---|" + "---|" * len(vloads) + "---|---|")
        base = float(np.mean([r["accepted_load"] for r in _select(res, "config", top, vwin, vreps)] or [0.0]))
        for v, label in README_VARIANTS.items():
            cells = [mean_p99(_select(res, v, load, vwin, vreps), "latency") for load in vloads]
            if all(c == "-" for c in cells):
                continue
            at_top = _select(res, v, top, vwin, vreps)
            accepted = float(np.mean([r["accepted_load"] for r in at_top])) if at_top else 0.0
            # paired by seed only where the variant carries config's load (within 1 %)
            paired = _paired(res, v, top, vwin, vreps) if abs(accepted - base) <= 0.01 * base else "-"
            out.append(row([label.format(accepted=accepted, load=top), *cells, mean_p99(at_top, "network"),
                            "" if paired == "-" else paired]))
        out.append("")
    out.append("| load | model | latency | network | network - 64 ns | model's definition, HCA FIFO of "
               f"{HCA_OBUF[0]} flits | of {HCA_OBUF[1]} flits | source queue alone |")
    out.append("|---|---|---|---|---|---|---|---|")
    for load in loads:
        rs = _select(res, "config", load, long)
        m = MODEL.get(load)
        if not rs or not m:
            continue
        out.append(row([str(load), f"{m[0]:,.0f} / {m[1]:,.0f}", mean_p99(rs, "latency"), mean_p99(rs, "network"),
                        mean_p99(rs, "network", 64.0), mean_p99(rs, f"model_def_{HCA_OBUF[0]}"),
                        mean_p99(rs, f"model_def_{HCA_OBUF[1]}"), mean_p99(rs, "source_wait")]))
    return "\n".join(out)


# ------------------------------------------------------------------ main


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, help="results file (default experiments/results/omnetpp_ib.json; "
                    "with --quick, none unless given)")
    ap.add_argument("--only", choices=("main", "variants"), help="run only this part")
    ap.add_argument("--quick", action="store_true", help="a smoke test: loads 0.1 and 0.9, one seed, 50 us")
    ap.add_argument("--fresh", action="store_true", help="run everything again (do not reuse the results file's runs)")
    ap.add_argument("--report", action="store_true", help="print the tables of --out and exit")
    ap.add_argument("--readme", action="store_true", help="with --report: the tables as experiments/README.md lays "
                    "them out (python experiments/readme_tables.py checks them there)")
    args = ap.parse_args(argv)
    if args.out is None and not args.quick:
        args.out = RESULTS
    res: dict[str, Any] = {"runs": {}}
    if args.out is not None and args.out.exists() and not args.fresh:
        try:
            res = json.loads(args.out.read_text())
        except ValueError as exc:
            ap.error(f"cannot read {args.out}: {exc}")
    if args.report:
        if not res["runs"]:
            ap.error(f"no runs in {args.out}")
        print(readme_tables(res) if args.readme else report(res))
        return 0
    if args.readme:
        ap.error("--readme goes with --report")
    from ibfabric.results import to_json, write_atomic

    todo = [(v, s) for v, s in plan(args.only, args.quick) if key(v, s) not in res["runs"]]
    res.update({"model": {str(k): v for k, v in MODEL.items()}, "issue_ibfabric": {str(k): v for k, v in ISSUE_IBFABRIC.items()},
                "experiment": str(EXPERIMENT.relative_to(HERE.parent)),
                "variants": {k: {"what": w, "overrides": o, "generator": g} for k, (w, o, g) in VARIANTS.items()}})
    for i, (v, spec) in enumerate(todo, 1):
        r = run_one(spec, v)
        res["runs"][key(v, spec)] = r
        print(f"[{i}/{len(todo)}] {v} load {r['load']} {r['window']} rep {r['repetition']}: latency "
              f"{r['latency']['mean']:.0f}/{r['latency']['p99']:.0f}, network {r['network']['mean']:.0f}/"
              f"{r['network']['p99']:.0f} ns ({r['wall_s']:.1f} s)", file=sys.stderr)
        if args.out is not None:
            write_atomic(args.out, to_json(res, indent=1) + "\n")  # after every run: a stopped run resumes
    print(report(res))
    return 0


if __name__ == "__main__":
    sys.exit(main())
