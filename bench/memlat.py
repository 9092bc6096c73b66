"""Memory latency as the data path sees it: ``python -m bench.memlat``.

A packet-hop touches a few dozen Python objects (the packet, the next
switch's input port, its forwarding table and queues, the output port, the
upstream port's credit returns, the event list's path), and on a big fabric
they are spread over gigabytes.  How much a hop then costs depends on what
one dependent load costs on this machine at that working-set size: a cache
hit, a miss to memory, or a miss whose address translation misses too (a
virtual machine walks two page tables).  This benchmark measures that from
Python: a chase through a random cycle of ``n`` 8-byte slots (each load
depends on the one before, so none can overlap), at working sets from
256 KiB to 2 GiB, next to the salabim ``hold()`` rate of the same process
(:mod:`bench.kernel`).  ``ns_per_load`` includes the interpreter's own
~20-40 ns per step; ``extra_ns`` is the part over the smallest working set.

It prints one JSON line and never asserts.  Compare ``extra_ns`` at the
working sets of two fabrics (``peak_rss_mb`` of ``bench.kernel``) with the
difference of their ``steady_us_per_hop``: a hop's extra cost on a big
fabric divided by the extra cost of one load is about the number of
cache-missing loads per hop.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time

import numpy as np

from bench.kernel import available_memory_gb, salabim_hold_rate

SIZES_MB = (0.25, 4, 32, 256, 2048)


def cycle(n: int, seed: int = 1) -> np.ndarray:
    """``nxt`` with ``nxt[i]`` the slot after *i* on one random cycle through all *n* slots."""
    order = np.random.default_rng(seed).permutation(n)
    nxt = np.empty(n, dtype=np.int64)
    nxt[order[:-1]] = order[1:]
    nxt[order[-1]] = order[0]
    return nxt


def chase_ns(size_mb: float, steps: int = 400_000, seed: int = 1) -> float:
    """Nanoseconds per dependent load through a random cycle over *size_mb* MB of 8-byte slots."""
    nxt = cycle(max(2, int(size_mb * 2**20) // 8), seed)
    a = memoryview(nxt).cast("B").cast("q")  # indexing a memoryview reads one slot, no numpy scalar
    p = 0
    for _ in range(min(steps, len(nxt))):  # warm the start of the cycle
        p = a[p]
    t0 = time.perf_counter()
    for _ in range(steps):
        p = a[p]
    dt = time.perf_counter() - t0
    del a
    return dt / steps * 1e9


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.memlat", description=__doc__.splitlines()[0])
    ap.add_argument("--sizes-mb", type=float, nargs="+", default=list(SIZES_MB),
                    help="working sets in MB (default: %(default)s); those over half the available memory are skipped")
    ap.add_argument("--steps", type=int, default=400_000, help="loads timed per working set (default 400,000)")
    args = ap.parse_args(argv)
    avail = available_memory_gb()
    sizes = [s for s in args.sizes_mb if avail is None or s / 1024 <= avail / 2]
    hold = salabim_hold_rate()
    ns = {f"{s:g}": round(chase_ns(s, args.steps), 1) for s in sizes}
    base = min(ns.values())
    print(json.dumps({
        "benchmark": "memlat",
        "ns_per_load": ns,
        "extra_ns": {k: round(v - base, 1) for k, v in ns.items()},
        "salabim_hold_events_per_s": round(hold),
        "python": platform.python_version(),
        "machine": f"{platform.machine()} {os.cpu_count()} cpus",
    }))
    return 0


if __name__ == "__main__":
    sys.exit(main())
