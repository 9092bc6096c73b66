"""One output port of the C++ OMNeT++ IB flit model's switch, by the rules of its sources (issue 31).

What ibfabric cannot be set to do, replayed on one output port with 1-flit
packets, to see what it does: the model's arbiter (``vlarb.cc``) applies
``VSWDelay`` *after* the grant (``sendOutMessage``: the flit goes to the
output FIFO ``VSWDelay`` after it became a candidate, and never before the
previous one + 1 ns), and checks the room of the output FIFO by the flits
*in* it (``isValidArbitration``: ``obuf.getNumFreeCredits() = size -
queue length > packet flits``, ``obuf.h``), not those granted and still in
that pipeline.  ``obuf.cc`` ``qMessage`` stops the simulation when a flit
arrives at a full FIFO (``need to insert into a full Q``).

The port's arrivals: 8 hosts with Poisson sources at *load* each (their own
link: one packet per 64 ns at most), uniform destinations (not themselves),
so 7 inputs feed port 0; a packet becomes a candidate of the port's
arbiter 50 ns after its first bit arrived (``ISWDelay``), once the previous
packet of its input queue has been granted; the arbiter serves the inputs
round robin from the last winner + 1 (``roundRobinNextRQForVL``), one grant
per 256 B / 28.8 B/ns of its internal bus; the wire sends a flit every
64 ns.

Two rules are compared, each with FIFO sizes of 5 flits (``switch8.ini``)
and more:

``model``
    the sources' rules: the pipeline does not count against the room (a
    flit arriving at a full FIFO is counted, then queued anyway, so that
    the replay goes on where the model would stop);
``counted``
    the pipeline counts (a grant needs room for every flit granted and not
    sent): as ibfabric's output buffers, where both 50 ns come before the
    grant.

It prints how often a flit arrives at a full FIFO per millisecond, when
the first one does in each seed's run (the model would stop there), and
the time from a packet's first bit at the switch to its first bit on the
output wire (mean, p99; ISWDelay and VSWDelay included).

::

    python experiments/omnetpp_ib_port.py      # loads 0.1-0.9, 2 ms, seeds 1-3: about 25 s; results/omnetpp_ib_port.json
    python experiments/omnetpp_ib_port.py --loads 0.9 --time-us 500 --seeds 1 --out /tmp/port.json
"""

from __future__ import annotations

import argparse
import heapq
import json
import sys
from pathlib import Path

import numpy as np

HOSTS = 8
PKT = 64.0  # ns on the wire: 256 B at 4 B/ns
BUS = 256 / 28.8  # ns of the arbiter's internal bus per 256-byte flit (coreFreq 1200 MHz x busWidth 24 B)
ISW = 50.0
VSW = 50.0
WIRE = 100.0


def arrivals(load: float, time_ns: float, seed: int) -> list[list[float]]:
    """Per input (1..7), the times the first bits of the packets for port 0 arrive at the switch."""
    rng = np.random.default_rng(seed)
    per_input: list[list[float]] = [[] for _ in range(HOSTS)]
    for h in range(1, HOSTS):
        n = int(time_ns / PKT * load * 1.2) + 100
        created = np.cumsum(rng.exponential(PKT / load, n))
        created = created[created < time_ns]
        dst = rng.integers(0, HOSTS - 1, len(created))
        dst[dst >= h] += 1  # uniform over the other hosts
        free = 0.0
        for t, d in zip(created.tolist(), dst.tolist()):
            start = t if t > free else free  # the host's own link: one packet at a time
            free = start + PKT
            if d == 0:
                per_input[h].append(start + WIRE)
    return per_input


def simulate(per_input: list[list[float]], size: int, counted: bool, warmup: float) -> dict:
    """Replay the arrivals through the port; returns overflows and the switch's latency (first bit in to
    first bit out)."""
    n_in = len(per_input)
    nxt = [0] * n_in  # index of each input's head packet
    slot = [None] * n_in  # (arrival, candidate time) of the packet in the arbiter's slot
    ev: list = []  # (time, seq, kind, data)
    seq = 0

    def push(t, kind, data=None):
        nonlocal seq
        seq += 1
        heapq.heappush(ev, (t, seq, kind, data))

    def refill(i, t):
        """Input i's head packet moves into the slot ISW after its first bit arrived (or now)."""
        if nxt[i] < len(per_input[i]) and slot[i] is None:
            a = per_input[i][nxt[i]]
            push(max(a + ISW, t), "cand", (i, a))
            slot[i] = "moving"

    for i in range(n_in):
        refill(i, 0.0)
    ptr = 0
    bus_free = 0.0
    last_send = 0.0
    queue: list = []  # arrivals (first bit at the switch) of the flits waiting in the FIFO
    wire_busy = False
    in_pipe = 0
    overflows = 0
    overflows_at: list[float] = []
    lat: list[float] = []

    def start_wire(t, a):
        nonlocal wire_busy
        wire_busy = True
        if a >= warmup:
            lat.append(t - a)
        push(t + PKT, "pop")

    def arbitrate(t):
        nonlocal ptr, bus_free, last_send, in_pipe
        if t < bus_free:
            return
        used = len(queue) + (in_pipe if counted else 0)
        if size - used <= 1:  # isValidArbitration: free > packet flits
            return
        for k in range(1, n_in + 1):
            i = (ptr + k) % n_in
            s = slot[i]
            if isinstance(s, tuple):
                a, cand = s
                slot[i] = None
                nxt[i] += 1
                ptr = i
                bus_free = t + BUS
                push(bus_free, "bus")
                extra = VSW - (t - cand)
                if t + extra <= last_send:
                    extra = last_send + 1.0 - t
                if extra > 0:
                    last_send = t + extra
                else:
                    last_send = t
                    extra = 0.0
                in_pipe += 1
                push(t + extra, "obuf", a)
                refill(i, t)
                return

    while ev:
        t, _, kind, data = heapq.heappop(ev)
        if kind == "cand":
            i, a = data
            slot[i] = (a, t)
        elif kind == "obuf":
            in_pipe -= 1
            if not wire_busy:
                start_wire(t, data)
            else:
                if len(queue) >= size:
                    overflows += 1
                    overflows_at.append(t)
                queue.append(data)
        elif kind == "pop":
            wire_busy = False
            if queue:
                start_wire(t, queue.pop(0))
        arbitrate(t)
    a = np.asarray(lat)
    return {"overflows": overflows, "first_overflow_ns": overflows_at[0] if overflows_at else None,
            "packets": len(a), "mean": float(a.mean()), "p99": float(np.percentile(a, 99))}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--loads", default="0.1,0.5,0.7,0.9", help="loads (default 0.1,0.5,0.7,0.9)")
    ap.add_argument("--sizes", default="5,7,10,15,20,78", help="FIFO sizes in flits (default 5,7,10,15,20,78)")
    ap.add_argument("--time-us", type=float, default=2000.0, help="simulated time per run, us (default 2000)")
    ap.add_argument("--seeds", type=int, default=3, help="seeds 1..N (default 3)")
    ap.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "results" / "omnetpp_ib_port.json",
                    help="write the figures as JSON here (default experiments/results/omnetpp_ib_port.json)")
    args = ap.parse_args(argv)
    loads = [float(x) for x in args.loads.split(",")]
    sizes = [int(x) for x in args.sizes.split(",")]
    time_ns = args.time_us * 1000
    rows = []
    print("| load | FIFO (flits) | rules | flits arriving at a full FIFO, per ms | the first, per seed (us) "
          "| switch latency mean / p99 (ns) |")
    print("|---|---|---|---|---|---|")
    for load in loads:
        ins = [arrivals(load, time_ns, seed) for seed in range(1, args.seeds + 1)]
        for size in sizes:
            for counted in (False, True):
                res = [simulate(x, size, counted, warmup=100_000.0) for x in ins]
                per_ms = sum(r["overflows"] for r in res) / (len(res) * args.time_us / 1000)
                mean = float(np.mean([r["mean"] for r in res]))
                p99 = float(np.mean([r["p99"] for r in res]))
                rule = "counted" if counted else "model"
                rows.append({"load": load, "size": size, "rules": rule, "overflows_per_ms": per_ms,
                             "first_overflow_ns": [r["first_overflow_ns"] for r in res], "mean": mean, "p99": p99})
                first = ", ".join("-" if r["first_overflow_ns"] is None else f"{r['first_overflow_ns'] / 1000:,.0f}"
                                  for r in res)
                print(f"| {load} | {size} | {rule} | {per_ms:,.1f} | {first} | {mean:,.0f} / {p99:,.0f} |")
    args.out.write_text(json.dumps({"time_us": args.time_us, "seeds": args.seeds, "rows": rows}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
