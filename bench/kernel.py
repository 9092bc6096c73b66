"""Benchmark of the data path: ``python -m bench.kernel``.

Prints one JSON line: events/s and packet-hops/s of the standard scenario
(the shipped ``irregular16`` fabric — 16 switches with 4 hosts each —
uniform traffic at 50 % load, 256-byte packets) next to the raw rate of
salabim ``hold()`` events measured in the same process, whose ratio is the
figure that survives a noisy machine.  It never asserts on time.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time

import salabim

SCENARIO = {
    "name": "irregular16-uniform-load0.5-256B",
    "topology": "irregular16",
    "overrides": {"**.traffic": "uniform", "**.load": "0.5", "**.packetSize": "256B"},
    "time": "2ms",
    "warmup": "0us",
    "seed": 1,
}


def salabim_hold_rate(components: int = 100, steps: int = 3000) -> float:
    """Events per second of bare salabim components doing ``yield self.hold(1)``, classic mode, trace off."""

    class Holder(salabim.Component):
        def process(self):
            while True:
                yield self.hold(1.0)

    env = salabim.Environment(trace=False, random_seed="", set_numpy_random_seed=False, yieldless=False)
    for _ in range(components):
        Holder(env=env).reset_monitors(monitor=False, stats_only=True)
    t0 = time.perf_counter()
    env.run(till=steps)
    dt = time.perf_counter() - t0
    return components * steps / dt


def run_scenario(sim_time: str) -> dict:
    from ibfabric.simulation import Simulation

    t0 = time.perf_counter()
    sim = Simulation(SCENARIO["topology"], overrides=SCENARIO["overrides"], seed=SCENARIO["seed"],
                     warmup=SCENARIO["warmup"])
    build = time.perf_counter() - t0
    s = sim.run(sim_time)
    return {
        "build_s": round(build, 4),
        "wall_s": round(s["wall_s"], 4),
        "sim_time_ns": s["sim_time_ns"],
        "events": s["events"],
        "packet_hops": s["packet_hops"],
        "events_per_s": round(s["events"] / s["wall_s"]),
        "packet_hops_per_s": round(s["packet_hops"] / s["wall_s"]),
        "accepted_load": round(s["accepted_load"], 4),
        "offered_load": round(s["offered_load"], 4),
        "latency_mean_ns": s["latency_ns"]["mean"],
        "conservation_ok": s["conservation_ok"],
        "deadlock": s["deadlock"],
    }


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.kernel", description=__doc__.splitlines()[0])
    ap.add_argument("--time", default=SCENARIO["time"], help="simulated time of the scenario (default 2ms)")
    ap.add_argument("--repeat", type=int, default=3, help="runs of the scenario; the fastest is reported (default 3)")
    args = ap.parse_args(argv)
    # On a shared machine the fastest of several runs is the least disturbed one; each run
    # is paired with a salabim hold() measurement taken right before it.
    runs = []
    for _ in range(max(1, args.repeat)):
        hold_run = salabim_hold_rate()
        r = run_scenario(args.time)
        r["salabim_hold_events_per_s"] = round(hold_run)
        runs.append(r)
    result = min(runs, key=lambda r: r["wall_s"])
    hold = result.pop("salabim_hold_events_per_s")
    out = {
        "benchmark": "kernel",
        "scenario": SCENARIO["name"],
        **result,
        "salabim_hold_events_per_s": round(hold),
        "events_vs_salabim_hold": round(result["events_per_s"] / hold, 3),
        "packet_hops_vs_salabim_hold": round(result["packet_hops_per_s"] / hold, 3),
        "runs": len(runs),
        "packet_hops_per_s_all_runs": [r["packet_hops_per_s"] for r in runs],
        "python": platform.python_version(),
        "salabim": salabim.__version__,
        "machine": f"{platform.machine()} {os.cpu_count()} cpus",
    }
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
