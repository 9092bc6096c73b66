"""Kim et al. 2007, Figs. 7-8: where the path selectors put best effort, as real time meets it.

Only best effort has path options (real time and control take the shortest
path), so a selector (LFU, Max-Credit, LFU counting the port) can change real
time's latency only through where it puts best effort: a switch output port
that serves a best-effort packet while a real-time VL of the port is ready
makes that real-time packet wait (the VL arbiter serves the data VLs round
robin).  This script runs the runs of a Kim experiment file (those with the
``name=value`` given; ``scheme=mp+lfu+drop,mp+credit+drop`` takes either)
with the VL arbiters replaced by a counting one (``iba-vlarb`` registered
under another name, which records its choices and nothing else) and prints,
per run, at the switches' output ports: the real-time and best-effort
packets sent, how often a best-effort packet went while real time was ready
(per real-time packet sent), the share of best effort on the ports real
time uses (weighted by real time's packets there), and the mean latency of
real time, best effort and control::

    python experiments/kim2007_sharing.py experiments/kim2007_paper_selectors_fig7_cut.toml load=0.5 repetition=0

An argument ``**.parameter=value`` changes a parameter of every run (it
replaces the file's value of that pattern, and comes before the others:
the first match wins).  With real time in
the high-priority VLArbitrationTable best effort no longer takes a turn
while real time is ready, so whatever the selectors still do to real time
goes another way::

    python experiments/kim2007_sharing.py experiments/kim2007_paper_selectors_fig7_cut.toml load=0.5 repetition=0 \
        '**.vlArbHigh=4:64,5:64,6:64,7:64,8:64,9:64,10:64,11:64,12:64,13:64,14:64' \
        '**.vlArbLow=0:64,1:64,2:64,3:64' '**.vlArbHighLimit=255'

The runs are those of ``ibfabric sweep`` (same parameters, seed and window;
the choices are the same, so the results are: the latencies printed with
each row equal the sweep's run's).
"""

from __future__ import annotations

import sys
import types
from collections import Counter

from ibfabric.plugins.arbiters import IBAVLArbiter
from ibfabric.plugins.manager import hookimpl

#: The best-effort VLs of the kim2007-traffic configuration (SLs = VLs 0-3); real time has the others.
BEST_EFFORT_VLS = range(4)
#: Per switch output port: real-time packets sent, best-effort packets sent, best-effort packets sent while a
#: real-time VL was ready.
PORTS: dict[str, Counter] = {}


class CountingArbiter(IBAVLArbiter):
    """``iba-vlarb`` that counts, per choice at a switch port, the class sent and whether real time was ready
    when best effort went."""

    def __init__(self, config):
        super().__init__(config)
        self.counts = PORTS.setdefault(config.port, Counter()) if ".sw" in config.port else None

    def select(self, ready: list) -> int:
        vl = self._select(ready)  # the table walk: the choice and the state select() and select_one() reach
        c = self.counts
        if c is not None:
            if vl in BEST_EFFORT_VLS:
                c["best effort"] += 1
                if any(p is not None for p in ready[BEST_EFFORT_VLS.stop:]):
                    c["best effort while real time ready"] += 1
            else:
                c["real time"] += 1
        return vl

    def select_one(self, ready: list, vl: int) -> int:
        """The data path's call when VL *vl* alone is ready: counted as any other choice."""
        return self.select(ready)


@hookimpl
def ibfabric_register_vl_arbiters(register) -> None:
    register("iba-vlarb-sharing", CountingArbiter,
             description="iba-vlarb, counting best effort beside real time (experiments/kim2007_sharing.py)")


#: The plugin the runs load: this module's hook.
plugin = types.SimpleNamespace(ibfabric_register_vl_arbiters=ibfabric_register_vl_arbiters)


def run(spec, extra: list[tuple[str, object]] = ()) -> dict:
    """The run with the counting arbiter and the ``**.parameter=value`` changes *extra* (each replacing the
    file's value of its pattern: :meth:`~ibfabric.runspec.RunSpec.simulation`)."""
    overrides = [*extra, ("**.arbiter", "iba-vlarb-sharing")]
    return spec.simulation(overrides=overrides, plugins=[plugin]).run(spec.time)


def sharing(ports: dict[str, Counter]) -> dict[str, float]:
    """The counts of all switch ports: totals, best effort passing ready real time per real-time packet, and
    the best-effort share of a port's packets averaged over real time's packets."""
    rt = sum(c["real time"] for c in ports.values())
    be = sum(c["best effort"] for c in ports.values())
    passed = sum(c["best effort while real time ready"] for c in ports.values())
    share = sum(c["real time"] * c["best effort"] / (c["real time"] + c["best effort"])
                for c in ports.values() if c["real time"]) / rt if rt else 0.0
    return {"real time": rt, "best effort": be, "passed": passed / rt if rt else 0.0, "share": share}


def main(argv: list[str]) -> int:
    if not argv or argv[0].startswith("-"):
        print(__doc__)
        return 2
    from ibfabric.experiment import Experiment

    exp = Experiment.from_file(argv[0])
    extra = [(k, int(v) if v.isdigit() else v) for k, v in (a.split("=", 1) for a in argv[1:] if a.startswith("**."))]
    want = {k: v.split(",") for k, v in (a.split("=", 1) for a in argv[1:] if not a.startswith("**."))}
    specs = [s for s in exp.runs() if all(str({**dict(s.vars), "repetition": s.repetition}.get(k)) in v
                                          for k, v in want.items())]
    if not specs:
        print(f"no run of {argv[0]} has {' '.join(f'{k}={v}' for k, v in want.items())}", file=sys.stderr)
        return 1
    print("| load | scheme | repetition | real-time packets sent | best-effort packets sent "
          "| best effort sent while real time was ready, per real-time packet "
          "| best-effort share of the ports real time uses | latency: real time / best effort / control (us) |")
    print("|---|---|---|---|---|---|---|---|")
    for spec in specs:
        v = dict(spec.vars)
        PORTS.clear()
        summary = run(spec, extra)
        s = sharing(PORTS)
        lat = {cls: summary["by_class"][cls]["latency_ns"]["mean"] / 1e3
               for cls in ("real_time", "best_effort", "control")}
        print(f"| {v.get('load')} | {v.get('scheme')} | {spec.repetition} | {s['real time']:,} | "
              f"{s['best effort']:,} | {s['passed']:.4f} | {s['share']:.4f} | "
              f"{lat['real_time']:.1f} / {lat['best_effort']:.1f} / {lat['control']:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
