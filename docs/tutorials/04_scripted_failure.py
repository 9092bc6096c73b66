"""Tutorial 4: fail a link in the middle of a run and watch the dynamic subnet manager recover.

Run it in a directory of your choice; it writes the dynamic run's ``dynamic-summary.json`` there::

    python docs/tutorials/04_scripted_failure.py [OUTDIR]

The page that explains it step by step is ``04_scripted_failure.md``, next to this file.
"""

import json
import os
import sys
from pathlib import Path

import numpy as np

import ibfabric

OUT = Path(sys.argv[1] if len(sys.argv) > 1 else ".").resolve()
OUT.mkdir(parents=True, exist_ok=True)
os.chdir(OUT)

# -- step 1: the fabric and its traffic -----------------------------------------------------

SETTINGS = {"**.traffic": "uniform", "**.load": "0.1", "**.sm.routing": "hybrid"}
STEP_US, END_US = 100, 1400


def losses_over_time(sim):
    """Snapshots of the packets lost so far, by reason, every STEP_US of simulated time."""
    snapshots = []
    for t in range(STEP_US, END_US + 1, STEP_US):
        sim.call_at(f"{t}us", lambda t=t: snapshots.append((t, dict(sim.stats.dropped))))
    return snapshots


def print_timeline(sim, snapshots):
    """Per interval: data packets delivered, and packets lost by reason."""
    delivered_at = sim.stats.arrays()["delivered_at"] / 1000  # ns -> us
    print("interval (us)  delivered  lost")
    before = {}
    for t, lost in snapshots:
        new = {k: v - before.get(k, 0) for k, v in lost.items() if v > before.get(k, 0)}
        n = int(np.count_nonzero((delivered_at > t - STEP_US) & (delivered_at <= t)))
        reasons = ", ".join(f"{v} {k}" for k, v in sorted(new.items())) or "-"
        print(f"{t - STEP_US:5} - {t:5}  {n:9}  {reasons}")
        before = lost


# -- step 2: the static subnet manager ------------------------------------------------------

static = ibfabric.load("bermudez2006_fig1", overrides=SETTINGS, seed=1)
static.fail_link("sw2", "sw6", at="200us")
snapshots = losses_over_time(static)
summary = static.run(f"{END_US}us")
print_timeline(static, snapshots)
for event in summary["scenario"]:
    print(f"{event['time_ns'] / 1000:.1f} us  {event['action']}  {event['target']}: {event['result']}")

# -- step 3: the dynamic subnet manager -----------------------------------------------------

dynamic = ibfabric.load("bermudez2006_fig1", overrides={**SETTINGS, "**.sm.dynamic": "true"}, seed=1)
dynamic.fail_link("sw2", "sw6", at="200us")
snapshots = losses_over_time(dynamic)
first = dynamic.run_until(lambda sim: sim.stats.dropped["port-down"] > 0, limit=f"{END_US}us")
print(f"stopped by the condition: {first['stopped_by_condition']}, at {dynamic.now / 1000:.1f} us")
summary = dynamic.run(f"{END_US}us")
print_timeline(dynamic, snapshots)

# -- step 4: the assimilation ---------------------------------------------------------------

a = summary["assimilations"][0]
change = a["change_ns"]
for key in ("detected_ns", "explored_ns", "computed_ns", "distributed_ns", "active_ns"):
    print(f"{key[:-3]:12} {a[key] / 1000:8.1f} us  (+{(a[key] - change) / 1000:.1f} us)")
p2 = a["phase2"]
print(f"phase 2 ({p2['engine']}) computed at {p2['computed_ns'] / 1000:.1f} us, "
      f"distributed at {p2['distributed_ns'] / 1000:.1f} us")
print(f"status: {a['status']}, {a['smps']} SMPs, {a['rft_blocks']} RFT blocks, {p2['lft_blocks']} LFT blocks in phase 2")
print(f"lost until traffic flowed again: {a['discarded_until_active']}")
print(f"lost in all: {summary['drops_by_reason']}")
print(f"subnet manager: {summary['subnet_manager']['smps_sent']} SMPs sent, "
      f"{summary['subnet_manager']['traps']} traps")

Path("dynamic-summary.json").write_text(json.dumps(summary, indent=1, default=str))
