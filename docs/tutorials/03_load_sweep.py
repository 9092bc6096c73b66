"""Tutorial 3: a load sweep from an experiment file, its results table and a plot.

Run it in a directory of your choice; it writes ``sweep.toml``, ``results/``, ``sweep.csv`` and
``latency.png`` there (the plot needs matplotlib: ``pip install -e '.[plot]'``)::

    python docs/tutorials/03_load_sweep.py [OUTDIR]

The page that explains it step by step is ``03_load_sweep.md``, next to this file.
"""

import csv
import os
import shlex
import subprocess
import sys
from pathlib import Path

OUT = Path(sys.argv[1] if len(sys.argv) > 1 else ".").resolve()
OUT.mkdir(parents=True, exist_ok=True)
os.chdir(OUT)


def sh(command: str) -> str:
    """Run an ``ibfabric ...`` command line as a shell would, print it and its output, return the output."""
    print(f"$ {command}")
    argv = [sys.executable, "-m", "ibfabric", *shlex.split(command)[1:]]
    # COLUMNS: rich draws its tables as wide as the ones on the page
    env = dict(os.environ, COLUMNS="100")
    proc = subprocess.run(argv, capture_output=True, text=True, check=True, env=env)
    print(proc.stdout + proc.stderr, end="")  # sweep and results report progress on stderr
    return proc.stdout


# -- step 1: the experiment file ------------------------------------------------------------

SWEEP_TOML = """\
# sweep.toml: latency and throughput against offered load, two routing engines
[experiment]
name = "sweep"
time = "60us"                   # simulated time of every run
warmup = "15us"                 # the measurement window is [15us, 60us]
repeat = 1
# a random irregular fabric: 8 switches, 3 links and 2 hosts on each, 4x QDR
topology = { generator = "irregular", switches = 8, links_per_switch = 3, hosts_per_switch = 2, seed = 1 }

[parameters]
"**.routing" = "${routing}"
"**.traffic" = "uniform"
"**.load" = "${load}"

[iterations]
load = [0.1, 0.3, 0.5, 0.7, 0.85, 1.0]
routing = ["updn", "dr"]
"""
Path("sweep.toml").write_text(SWEEP_TOML)

# -- step 2: run it -------------------------------------------------------------------------

sh("ibfabric sweep sweep.toml --out results --jobs 2")

# -- step 3: one table ----------------------------------------------------------------------

sh("ibfabric results results --aggregate -o sweep.csv")

with open("sweep.csv", newline="") as f:
    rows = [r for r in csv.DictReader(f) if r["statistic"] in ("offered_load", "accepted_load", "latency_mean")]
table = {}
for r in rows:
    table.setdefault((r["routing"], float(r["load"])), {})[r["statistic"]] = float(r["mean"])
print("routing  load  offered  accepted  latency mean")
for (routing, load), v in sorted(table.items()):
    print(f"{routing:7}  {load:4.2f}  {v['offered_load']:7.3f}  {v['accepted_load']:8.3f}"
          f"  {v['latency_mean']:9.0f} ns")

# -- step 4: the plots ----------------------------------------------------------------------

sh("ibfabric plot results --x offered_load --y latency_mean --hue routing --logy -o latency.png")
sh("ibfabric plot results --x offered_load --y accepted_load --hue routing -o accepted.png")
