"""Tutorial 2: import a real cluster's ibnetdiscover dump and compare routing engines on it.

Run it in a directory of your choice; it copies the dump there as ``cluster.topo``::

    python docs/tutorials/02_import_a_cluster.py [OUTDIR]

The page that explains it step by step is ``02_import_a_cluster.md``, next to this file.
"""

import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import ibfabric
from ibfabric.components.routing.routecheck import check_routes

# A real cluster (2014): 8 Mellanox SX6036 switches, 144 channel adapters.
DUMP = Path(__file__).resolve().parents[2] / "tests" / "data" / "ibnetdiscover" / "cluster2014_8sw_144hca.ibnetdiscover"
OUT = Path(sys.argv[1] if len(sys.argv) > 1 else ".").resolve()
OUT.mkdir(parents=True, exist_ok=True)
os.chdir(OUT)


def sh(command: str, *, fails: bool = False) -> str:
    """Run an ``ibfabric ...`` command line as a shell would, print it and its output, return the output;
    *fails*: the command is expected to exit with an error."""
    print(f"$ {command}")
    argv = [sys.executable, "-m", "ibfabric", *shlex.split(command)[1:]]
    # COLUMNS: rich draws its tables as wide as the ones on the page
    proc = subprocess.run(argv, capture_output=True, text=True, env=dict(os.environ, COLUMNS="100"))
    print(proc.stdout + proc.stderr, end="")
    if (proc.returncode != 0) != fails:
        raise SystemExit(f"unexpected exit status {proc.returncode}: {command}")
    return proc.stdout


# -- step 1: the dump -----------------------------------------------------------------------

shutil.copy(DUMP, "cluster.topo")  # what `ibnetdiscover > cluster.topo` wrote on the cluster
sh("ibfabric topo show cluster.topo")

# -- step 2: check an engine's tables -------------------------------------------------------

sh("ibfabric routes cluster.topo --routing updn --check")
sh("ibfabric routes cluster.topo --routing ftree --check", fails=True)

# -- step 3: an engine that needs virtual lanes ---------------------------------------------

try:
    ibfabric.load("cluster.topo", overrides={"**.routing": "lash", "**.traffic": "uniform", "**.load": "0.1"})
except ibfabric.ConfigError as exc:
    print(exc)

# -- step 4: compare engines: their tables, then a short run each ---------------------------

ENGINES = ["minhop", "updn", "dnup", "sssp", "dfsssp", "lash"]
results = {}
for engine in ENGINES:
    sim = ibfabric.load(
        "cluster.topo",
        overrides={"**.routing": engine, "**.numVLs": "8", "**.traffic": "uniform", "**.load": "0.1"},
        seed=1,
        warmup="5us",
    )
    vl, num_vls = sim.tables.vl_function()  # engines with virtual layers: one dependency graph per VL
    report = check_routes(sim.tables, vl=vl, num_vls=num_vls)
    summary = sim.run("30us")
    results[engine] = (report, summary)

print("engine  route check  hops mean  max  busiest link  latency mean  latency p99  offered  accepted")
for engine, (report, s) in results.items():
    check = "ok" if report.ok else "FAILS"
    lat = s["latency_ns"]
    print(f"{engine:7} {check:>11}  {report.mean_hops:9.3f}  {report.max_hops:3}  {report.max_link_load:12}"
          f"  {lat['mean']:9.1f} ns  {lat['p99']:8.1f} ns  {s['offered_load']:7.3f}  {s['accepted_load']:8.3f}")
