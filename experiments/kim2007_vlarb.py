"""Kim et al. 2007, Fig. 10f: do the bandwidth policies' VL weights ever decide anything?

A weight decides only when a VL's turn ends because its weight is spent while
the VL still has a packet ready and another VL is served instead: then a
larger weight would have sent that packet at once.  This script runs the runs
of a Fig. 10f experiment file (those with the ``name=value`` given, all
without; ``policy=separate,linear`` takes either) with the switches' and
HCAs' VL arbiters replaced by a counting one (the same IBA VLArbitrationTable
arbiter, ``iba-vlarb``, registered under another name, which records its
choices and nothing else), and prints per class of VLs (best effort 0-3,
unicast real time, multicast: VLs 9-14 under the policies 2-4) the packets
the arbiters sent, how many choices were contended (another VL of the port
was ready as well) and how many times a spent weight held a ready VL back::

    python experiments/kim2007_vlarb.py experiments/kim2007_paper_fig10f_queue_cut.toml load=0.5 policy=linear

The runs are those of ``ibfabric sweep`` (same parameters, seed and window;
the choices are the same, so the results are: the member latency per group
printed at the end equals the sweep's run's).
"""

from __future__ import annotations

import sys
import types
from collections import Counter

from ibfabric.plugins.arbiters import IBAVLArbiter
from ibfabric.plugins.manager import hookimpl

#: What each counting arbiter adds to, by (node kind, VL class, event).
COUNTS: Counter = Counter()
#: The multicast VLs of the run being counted (the policies 2-4 put multicast on SLs = VLs 9-14).
MULTICAST_VLS: set[int] = set()


def vl_class(vl: int) -> str:
    if vl < 4:
        return "best effort"
    return "multicast" if vl in MULTICAST_VLS else "unicast real time"


class CountingArbiter(IBAVLArbiter):
    """``iba-vlarb`` that counts, per choice: the VL sent, whether another VL was ready too, and whether the
    VL whose weight the previous choice spent was ready and passed over (the one case a weight decides)."""

    def __init__(self, config):
        super().__init__(config)
        self.kind = "switch" if ".sw" in config.port else "HCA"
        self.spent = -1  # the VL whose entry the previous choice left with no weight, -1 if none

    def select(self, ready: list) -> int:
        if self.high:
            raise ValueError(f"{type(self).__name__} counts low-priority tables only")
        vl = self._select(ready)  # the table walk: the choice and the state select() and select_one() reach
        kind = self.kind
        COUNTS[kind, vl_class(vl), "sent"] += 1
        if sum(p is not None for p in ready) > 1:
            COUNTS[kind, vl_class(vl), "contended"] += 1
        held = self.spent
        if held >= 0 and held != vl and ready[held] is not None:
            COUNTS[kind, vl_class(held), "held back by its spent weight"] += 1
        # its entry's weight is spent when the table moved on: the current entry then has its whole weight
        # left (an entry that keeps the turn has sent at least one unit of it)
        self.spent = vl if self.lo_rem == self.low[self.lo_idx][1] else -1
        return vl

    def select_one(self, ready: list, vl: int) -> int:
        """The data path's call when VL *vl* alone is ready: counted as any other choice."""
        return self.select(ready)


@hookimpl
def ibfabric_register_vl_arbiters(register) -> None:
    register("iba-vlarb-counting", CountingArbiter,
             description="iba-vlarb, counting its choices (experiments/kim2007_vlarb.py)")


#: The plugin the runs load: this module's hook.
plugin = types.SimpleNamespace(ibfabric_register_vl_arbiters=ibfabric_register_vl_arbiters)


def run(spec) -> dict:
    return spec.simulation(overrides=[("**.arbiter", "iba-vlarb-counting")], plugins=[plugin]).run(spec.time)


def main(argv: list[str]) -> int:
    if not argv or argv[0].startswith("-"):
        print(__doc__)
        return 2
    from ibfabric.experiment import Experiment

    exp = Experiment.from_file(argv[0])
    want = {k: v.split(",") for k, v in (a.split("=", 1) for a in argv[1:])}
    specs = [s for s in exp.runs() if all(str(dict(s.vars).get(k)) in v for k, v in want.items())]
    if not specs:
        print(f"no run of {argv[0]} has {' '.join(argv[1:])}", file=sys.stderr)
        return 1
    print("| load | policy | node | VLs | packets sent | contended | held back by a spent weight | per packet sent |")
    print("|---|---|---|---|---|---|---|---|")
    members = []
    for spec in specs:
        v = dict(spec.vars)
        COUNTS.clear()
        MULTICAST_VLS.clear()
        if v.get("policy", "shared") != "shared":
            MULTICAST_VLS.update(range(9, 15))
        summary = run(spec)
        groups = summary.get("multicast", {}).get("groups", {})
        members.append(f"load {v.get('load')}, {v.get('policy')}: " + ", ".join(
            f"{g} {groups[g]['member_latency_ns']['mean'] / 1e3:.1f} us" for g in sorted(groups)))
        for kind in ("switch", "HCA"):
            for cls in ("multicast", "unicast real time", "best effort"):
                sent = COUNTS[kind, cls, "sent"]
                if not sent:
                    continue
                held = COUNTS[kind, cls, "held back by its spent weight"]
                print(f"| {v.get('load')} | {v.get('policy')} | {kind} | {cls} | {sent:,} | "
                      f"{COUNTS[kind, cls, 'contended']:,} | {held:,} | {held / sent:.3f} |")
    # the runs' member latency per group, to compare with the sweep's runs (the same choices, the same figures)
    print("\nMember latency per group: " + "; ".join(members))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
