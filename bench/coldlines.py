"""Cache lines a packet-hop misses, counted by a cache simulator: ``python -m bench.coldlines``.

A large fabric's hop costs more than a small one's because the objects it
touches are no longer in the cache (docs/performance.md).  The wall clock of
a shared machine is too noisy to see a change of a few such misses per hop;
valgrind's cache simulation is exact and repeatable.  Each named scenario of
:mod:`bench.kernel` runs in a child under ``valgrind --tool=callgrind
--cache-sim=yes``, whose counters cover a window of the run past the
fabric's filling (zeroed when the window starts, dumped when it ends, by
calls to ``os.getppid`` and ``os.getpgrp`` around it; the summary and the
end-of-run bookkeeping are outside).  With the simulated last level the
size of one core's second-level cache (``--ll-kib``, default 1024), its
misses per hop are the cache lines a hop brings from further away: on a
fabric of gigabytes, from memory.

One JSON line per scenario: the window, its packet-hops, per hop the
instructions (``Ir``), first-level read and write misses (``D1mr``,
``D1mw``) and last-level ones (``DLmr``, ``DLmw``), ``cold_lines_per_hop``
(``DLmr + DLmw``), and the functions of the interpreter with the most
last-level misses (their own, not their callees').  A line with an ``error``
field says why a scenario could not be counted (no valgrind, a failed child).
It runs about fifty times slower than the scenario itself: minutes for
``fattree4096-load0.3``; ``fattree32768-load0.3`` (by name only) takes
hours.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

from bench.kernel import SCENARIOS

#: the counted window of each scenario (simulated time): about 30,000-60,000 packet-hops past the filling
WINDOWS = {
    "irregular16-load0.1": ("100us", "175us"),
    "switch8-omnetpp-ib-load0.5": ("100us", "330us"),
    "switch8-omnetpp-ib-load0.9": ("100us", "235us"),
    "fattree512-load0.3": ("6us", "8us"),
    "fattree4096-load0.3": ("2us", "2.5us"),
    "fattree32768-load0.3": ("4us", "4.05us"),
}
DEFAULT = ["switch8-omnetpp-ib-load0.5", "fattree512-load0.3", "fattree4096-load0.3"]
EVENTS = ("Ir", "D1mr", "D1mw", "DLmr", "DLmw")


def run_window(name: str, start: str, end: str) -> int:
    """In the child: build scenario *name*, run it to *start*, then to *end* between the two calls
    that zero and dump valgrind's counters; return the packet-hops of the window."""
    from ibfabric.configs import overrides as config_overrides
    from ibfabric.simulation import Simulation

    from bench.kernel import topology_of

    sc = SCENARIOS[name]
    soft = dict(config_overrides(sc["config"])) if sc.get("config") else {}
    with tempfile.TemporaryDirectory() as tmp:
        sim = Simulation(topology_of(sc, tmp), overrides=sc["overrides"], optional_overrides=soft, seed=1,
                         warmup=sc["warmup"])
    before = sim.run(start)["packet_hops"]
    finish = sim._finish

    def dump_then_finish() -> None:  # the end-of-run bookkeeping and the summary are not a hop's cost
        os.getpgrp()  # ... and dumps them here
        finish()

    sim._finish = dump_then_finish
    os.getppid()  # valgrind zeroes its counters here ...
    return sim.run(end)["packet_hops"] - before


def self_costs(path: str) -> tuple[list[str], dict[str, list[int]]]:
    """The event names of callgrind output file *path* and each function's own cost (not its
    callees'), summed over the file's positions."""
    events: list[str] = []
    npos = 1
    names: dict[str, str] = {}
    costs: dict[str, list[int]] = collections.defaultdict(list)
    cur = None
    call_line = False
    name_re = re.compile(r"^(c?fn)=\((\d+)\)(?: (.*))?$")
    for line in open(path):
        line = line.rstrip("\n")
        if line.startswith("positions:"):
            npos = len(line.split()) - 1
        elif line.startswith("events:"):
            events = line.split()[1:]
        elif line.startswith(("fn=", "cfn=")):
            m = name_re.match(line)
            if m:
                kind, idx, name = m.groups()
                if name:
                    names[idx] = name
                if kind == "fn":
                    cur = names.get(idx, idx)
        elif line.startswith("calls="):
            call_line = True  # the next cost line is the call's inclusive cost
        elif line and (line[0].isdigit() or line[0] in "+-*"):
            if call_line:
                call_line = False
                continue
            if cur is None:
                continue
            vals = [int(x) for x in line.split()[npos:]]
            c = costs[cur]
            if len(c) < len(vals):
                c.extend([0] * (len(vals) - len(c)))
            for i, v in enumerate(vals):
                c[i] += v
    return events, dict(costs)


def summarize(path: str, hops: int, top: int = 10) -> dict:
    """Per-hop figures of callgrind output file *path* for a window of *hops* packet-hops."""
    events, costs = self_costs(path)
    idx = {e: events.index(e) for e in EVENTS if e in events}
    missing = [e for e in EVENTS if e not in idx]
    if missing:
        raise ValueError(f"{path}: no {missing[0]} counts (was the cache simulation on?)")

    def get(c: list[int], e: str) -> int:
        i = idx[e]
        return c[i] if i < len(c) else 0

    total = {e: sum(get(c, e) for c in costs.values()) for e in EVENTS}
    per_hop = {e: round(total[e] / hops, 1) for e in EVENTS}
    per_hop["cold_lines"] = round((total["DLmr"] + total["DLmw"]) / hops, 1)
    ranked = sorted(costs.items(), key=lambda kv: -(get(kv[1], "DLmr") + get(kv[1], "DLmw")))
    functions = [
        {"function": fn.split(":")[-1], "cold_lines_per_hop": round((get(c, "DLmr") + get(c, "DLmw")) / hops, 2),
         "instructions_per_hop": round(get(c, "Ir") / hops, 1)}
        for fn, c in ranked[:top]
    ]
    return {"per_hop": per_hop, "functions": functions}


def count(name: str, ll_kib: int, top: int, timeout: float) -> dict:
    """Run scenario *name*'s window under callgrind; its JSON record, or one with an ``error`` field."""
    start, end = WINDOWS[name]
    rec = {"benchmark": "coldlines", "scenario": name, "what": SCENARIOS[name]["what"], "window": [start, end],
           "ll_kib": ll_kib, "d1_kib": 64}
    valgrind = shutil.which("valgrind")
    if valgrind is None:
        return {**rec, "error": "valgrind is not installed (Debian: apt install valgrind)"}
    cwd = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # so that `-m bench.coldlines` resolves
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "callgrind.out")
        cmd = [valgrind, "--tool=callgrind", "--cache-sim=yes", "--D1=65536,8,64", "--I1=65536,8,64",
               f"--LL={ll_kib * 1024},16,64", "--zero-before=os_getppid", "--dump-before=os_getpgrp",
               f"--callgrind-out-file={out}", sys.executable, "-m", "bench.coldlines", "--child", name]
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=cwd, env=env)
        except subprocess.TimeoutExpired:
            return {**rec, "error": f"timed out after {timeout:g} s"}
        lines = proc.stdout.strip().splitlines()
        dumps = sorted(f for f in os.listdir(tmp) if f.startswith("callgrind.out."))
        if proc.returncode == 0 and lines and not dumps:
            return {**rec, "error": "valgrind wrote no counts of the window (an interpreter without the symbols"
                                    " os_getppid and os_getpgrp?)"}
        if proc.returncode != 0 or not lines or not dumps:
            tail = [ln for ln in proc.stderr.strip().splitlines() if not ln.startswith("==")][-1:]
            return {**rec, "error": (tail or [f"exit status {proc.returncode}"])[0]}
        hops = json.loads(lines[-1])["packet_hops"]
        try:
            figures = summarize(os.path.join(tmp, dumps[0]), hops, top)
        except ValueError as exc:
            return {**rec, "error": str(exc)}
    return {**rec, "packet_hops": hops, **figures}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.coldlines", description=__doc__.split("\n")[0])
    ap.add_argument("--scenario", action="append", metavar="NAME", choices=sorted(WINDOWS),
                    help=f"a named scenario of bench.kernel (repeatable; default: {', '.join(DEFAULT)})")
    ap.add_argument("--ll-kib", type=int, default=1024, help="simulated last-level cache, KiB (default 1024)")
    ap.add_argument("--top", type=int, default=10, help="functions listed per scenario (default 10)")
    ap.add_argument("--timeout", type=float, default=7200, help="seconds before a child is stopped")
    ap.add_argument("--child", metavar="NAME", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        print(json.dumps({"packet_hops": run_window(args.child, *WINDOWS[args.child])}))
        return 0
    for name in args.scenario or DEFAULT:
        print(json.dumps(count(name, args.ll_kib, args.top, args.timeout)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
