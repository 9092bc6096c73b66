"""Memory benchmark of large fabrics: ``python -m bench.memory``.

Builds, routes and runs k-ary 3-trees (``ftree`` routing, uniform traffic
at load 0.3, 256-byte packets, 10 us of simulated time by default) and
prints one JSON line per fabric: build s (elaboration, wiring, subnet
manager and routing), route s (the routing engine alone, included in
build s), run s, the process's peak RSS in MB, hosts, switches and ports,
next to the raw salabim ``hold()`` rate measured in the same process (see
:mod:`bench.kernel`).

Peak RSS (``ru_maxrss``) is a per-process high-water mark, so every fabric
runs in a child process of its own.  The 8-ary and 16-ary 3-trees run by
default; ``--k 32`` adds the 32-ary 3-tree (32,768 hosts, 3,072 switches of
64 ports: several GB and minutes).  ``--trace`` also reports the largest
allocation sites alive at the end of the run (tracemalloc; it slows the run
and adds its own memory to the RSS).  It never asserts: compare the numbers
(the targets of the issue "Faster and bigger" are under 500 MB for the
16-ary 3-tree, under 8 GB and 5 minutes for the 32-ary one).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time

SCENARIO = {
    "routing": "ftree",
    "overrides": {"**.traffic": "uniform", "**.load": "0.3", "**.packetSize": "256B"},
    "time": "10us",
    "seed": 1,
}


def peak_rss_mb() -> float:
    """The process's peak resident set size so far, in MB (``ru_maxrss`` is in kB on Linux)."""
    kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return kb / 1024 if sys.platform != "darwin" else kb / 2**20


def run_one(k: int, sim_time: str, trace: bool, top: int) -> dict:
    """Build, route and run the k-ary 3-tree in this process; the figures as a dict."""
    from bench.kernel import salabim_hold_rate
    from ibfabric.simulation import Simulation
    from ibfabric.topologies.generators import fat_tree, to_ned

    hold = salabim_hold_rate()
    if trace:
        import tracemalloc

        tracemalloc.start(1)
    t0 = time.perf_counter()
    fabric = fat_tree(k, 3)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, f"ftree{k}.ned")
        with open(path, "w") as f:
            f.write(to_ned(fabric, name=f"ftree{k}", routing=SCENARIO["routing"]))
        del fabric
        t1 = time.perf_counter()
        sim = Simulation(path, optional_overrides=SCENARIO["overrides"], seed=SCENARIO["seed"])
    build = time.perf_counter() - t1
    rss_built = peak_rss_mb()
    s = sim.run(sim_time)
    out = {
        "benchmark": "memory",
        "fabric": f"{k}-ary 3-tree",
        "hosts": len(sim.hosts),
        "switches": sum(1 for n in sim.ib_nodes if n.is_switch),
        "ports": len(sim.ports),
        "generate_s": round(t1 - t0, 3),
        "build_s": round(build, 3),
        "route_s": None if sim.routing_time is None else round(sim.routing_time, 3),
        "run_s": round(s["wall_s"], 3),
        "sim_time_ns": s["sim_time_ns"],
        "events": s["events"],
        "packet_hops": s["packet_hops"],
        "packet_hops_per_s": round(s["packet_hops"] / s["wall_s"]) if s["wall_s"] else None,
        "accepted_load": round(s["accepted_load"], 4),
        "peak_rss_built_mb": round(rss_built, 1),
        "peak_rss_mb": round(peak_rss_mb(), 1),
        "salabim_hold_events_per_s": round(hold),
    }
    if out["packet_hops_per_s"]:
        out["packet_hops_vs_salabim_hold"] = round(out["packet_hops_per_s"] / hold, 3)
    if trace:
        import tracemalloc

        snap = tracemalloc.take_snapshot()
        _, traced_peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        out["traced_peak_mb"] = round(traced_peak / 2**20, 1)
        out["traced_end_mb"] = round(sum(st.size for st in snap.statistics("filename")) / 2**20, 1)
        out["largest_sites"] = [
            {"site": f"{st.traceback[0].filename.split('/ibfabric/')[-1]}:{st.traceback[0].lineno}",
             "mb": round(st.size / 2**20, 1), "blocks": st.count}
            for st in snap.statistics("lineno")[:top]
        ]
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.memory", description=__doc__.splitlines()[0])
    ap.add_argument("--k", type=int, action="append",
                    help="k of a k-ary 3-tree to run (repeatable; default 8 and 16; 32 is the 32,768-host tree)")
    ap.add_argument("--time", default=SCENARIO["time"], help="simulated time of each run (default 10us)")
    ap.add_argument("--trace", action="store_true", help="report the largest allocation sites (tracemalloc)")
    ap.add_argument("--top", type=int, default=12, help="allocation sites reported with --trace (default 12)")
    ap.add_argument("--one", type=int, help=argparse.SUPPRESS)  # run one fabric in this process
    args = ap.parse_args(argv)
    if args.one is not None:
        print(json.dumps(run_one(args.one, args.time, args.trace, args.top)))
        return 0
    for k in args.k or [8, 16]:
        cmd = [sys.executable, "-m", "bench.memory", "--one", str(k), "--time", args.time, "--top", str(args.top)]
        if args.trace:
            cmd.append("--trace")
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0:
            print(json.dumps({"benchmark": "memory", "fabric": f"{k}-ary 3-tree", "error": proc.stderr.strip()[-2000:]}))
            continue
        out = json.loads(proc.stdout.strip().splitlines()[-1])
        out.update(python=platform.python_version(), machine=f"{platform.machine()} {os.cpu_count()} cpus")
        print(json.dumps(out), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
