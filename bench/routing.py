"""Routing-table computation time per engine and fabric size.  ``python -m bench.routing`` prints JSON lines.

Two scenarios:

* ``irregular``: random irregular fabrics of 8..64 four-port switches (3
  switch-to-switch links and 1 host each), as in Bermúdez et al. 2006,
  §4.1; every engine on the same three fabrics per size (seeds 1-3).  The
  paper's Fig. 10 has PIRa about 5x faster than FERa and FERa faster than DR.
* ``fattree``: the 16-ary 3-tree (4,096 hosts, 768 switches of 32 ports),
  ``minhop`` and ``updn`` (root: a top switch), and ``pira`` and ``fera``
  unless ``--quick``.  OpenSM 3.3's own minhop step takes about 5 s on this
  kind of machine.  Then the 32-ary 3-tree (32,768 hosts, 3,072 switches of
  64 ports, 35,840 LIDs), ``minhop``, ``updn`` and ``ftree``, once each
  (``--quick`` leaves it out; ``--k 32`` runs it alone).

Times are ``time.perf_counter`` around the engine call alone (the fabric
and its LIDs are built before), best of N runs.  Nothing is asserted:
compare the numbers.  ``--quick`` runs fewer repetitions and sizes.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time

import attrs
import numpy as np

from ibfabric.components.routing.fabric import FabricGraph
from ibfabric.plugins import PluginSet
from ibfabric.topologies.generators import fat_tree, irregular

SIZES = [8, 16, 24, 32, 48, 64]
IRREGULAR_ENGINES = ["pira", "fera", "dr", "hybrid+fera", "hybrid+dr", "updn", "minhop", "spf"]


def machine() -> dict:
    cpu = platform.processor() or ""
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next((ln.split(":", 1)[1].strip() for ln in f if ln.startswith("model name")), cpu)
    except OSError:
        pass
    return {
        "python": platform.python_version(),
        "numpy": np.__version__,
        "cpu": cpu,
        "cores": os.cpu_count(),
        "platform": platform.platform(),
    }


def sequential_lids(fabric: FabricGraph, lmc: int = 0) -> FabricGraph:
    """LIDs in endpoint order (switches, then CA ports), CA ranges aligned to 2**lmc.

    A quick stand-in for ``with_lids`` on large generated fabrics; the
    engines do not care which LIDs endpoints have.
    """
    nodes = list(fabric.nodes)
    lid = 1
    for i in fabric.switches.tolist():
        nodes[i] = attrs.evolve(nodes[i], lid=lid)
        lid += 1
    step = 1 << lmc
    for i in fabric.cas.tolist():
        lid = (lid + step - 1) // step * step
        nodes[i] = attrs.evolve(nodes[i], lid=lid, lmc=lmc)
        lid += step
    return FabricGraph(nodes, fabric.links, sm_node=fabric.sm_node)


def best_of(fn, n: int) -> float:
    best = float("inf")
    for _ in range(n):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def emit(**record) -> None:
    print(json.dumps(record), flush=True)


def run_irregular(engines, sizes, repeat: int) -> None:
    plugins = PluginSet.load()
    for s in sizes:
        fabrics = [irregular(s, links_per_switch=3, hosts_per_switch=1, num_ports=4, seed=seed) for seed in (1, 2, 3)]
        plain = [sequential_lids(f) for f in fabrics]
        with_lmc = [sequential_lids(f, lmc=3) for f in fabrics]
        for name in engines:
            engine, _, final = name.partition("+")
            compute = plugins.routing_engines[engine]
            opts = {"final": final} if final else {}
            times = []
            for g0, g3 in zip(plain, with_lmc):
                g = g3 if "dr" in (engine, final) else g0  # DR gives hosts extra LIDs (LMC 3)
                times.append(best_of(lambda: compute(g, opts, np.random.default_rng(1)), repeat))
            emit(bench="routing", scenario="irregular", engine=name, switches=s,
                 hosts=len(fabrics[0].cas), seconds=float(np.mean(times)), best_of=repeat, fabrics=len(times))  # fmt: skip


def run_fattree(engines, repeat: int, k: int = 16) -> None:
    plugins = PluginSet.load()
    g = sequential_lids(fat_tree(k, 3))
    root = "s0_0"
    for name in engines:
        compute = plugins.routing_engines[name]
        opts = {"root": root} if name in ("updn", "fera", "pira", "hybrid", "dr") else {}
        secs = best_of(lambda: compute(g, opts, np.random.default_rng(1)), repeat)
        emit(bench="routing", scenario=f"fattree-{k}-ary-3-tree", engine=name, switches=len(g.switches),
             hosts=len(g.cas), lids=int(g.max_lid), seconds=secs, best_of=repeat)  # fmt: skip


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.routing", description=__doc__.split("\n")[0])
    p.add_argument("--quick", action="store_true", help="fewer sizes and repetitions (a smoke run)")
    p.add_argument("--scenario", choices=("all", "irregular", "fattree"), default="all")
    p.add_argument("--k", type=int, action="append", metavar="K",
                   help="k of the k-ary 3-trees of the fattree scenario (repeatable; default 16, and 32 unless"
                        " --quick)")
    args = p.parse_args(argv)
    emit(bench="routing", machine=machine())
    repeat = 1 if args.quick else 5
    if args.scenario in ("all", "irregular"):
        run_irregular(IRREGULAR_ENGINES, [8, 16] if args.quick else SIZES, repeat)
    if args.scenario in ("all", "fattree"):
        for k in args.k or ([16] if args.quick else [16, 32]):
            if k <= 16:
                run_fattree(["minhop", "updn"] + ([] if args.quick else ["pira", "fera"]), 1 if args.quick else 3, k)
            else:  # 35,840 LIDs: one run of the engines that scale to it
                run_fattree(["minhop", "updn", "ftree"], 1, k)
    return 0


if __name__ == "__main__":
    sys.exit(main())
