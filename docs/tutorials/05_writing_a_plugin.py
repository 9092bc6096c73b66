"""Tutorial 5: write a routing engine as a plugin, use it, and package it with an entry point.

The plugin is the package in ``05_writing_a_plugin/`` next to this file.  Run it in a directory of
your choice; it copies the package there as ``ibfabric-tree/``::

    python docs/tutorials/05_writing_a_plugin.py [OUTDIR]

The page that explains it step by step is ``05_writing_a_plugin.md``, next to this file.
"""

import os
import shutil
import sys
from pathlib import Path

import ibfabric
from ibfabric.components.routing.routecheck import check_routes

PACKAGE = Path(__file__).resolve().parent / "05_writing_a_plugin"
OUT = Path(sys.argv[1] if len(sys.argv) > 1 else ".").resolve()
OUT.mkdir(parents=True, exist_ok=True)
os.chdir(OUT)


# -- step 1: the plugin, a package of its own -----------------------------------------------

# a copy to build and install from, without what a build may have left in the original
shutil.copytree(PACKAGE, "ibfabric-tree", dirs_exist_ok=True, ignore=shutil.ignore_patterns("__pycache__", "build", "*.egg-info"))
sys.path.insert(0, str(OUT / "ibfabric-tree"))                  # importable without installing it
import ibfabric_tree  # noqa: E402

# -- step 2: use it for one simulation ------------------------------------------------------

SETTINGS = {"**.traffic": "uniform", "**.load": "0.1"}

print("engine         route check  hops mean  longer than minimum  busiest link  latency mean")
for engine in ("spanning-tree", "updn", "minhop"):
    sim = ibfabric.load(
        "bermudez2006_fig1",
        overrides={**SETTINGS, "**.sm.routing": engine},
        plugins=[ibfabric_tree],
        seed=1,
        warmup="50us",
    )
    report = check_routes(sim.tables)
    s = sim.run("500us")
    check = "ok" if report.ok else "CYCLE"
    print(f"{engine:14} {check:>11}  {report.mean_hops:9.3f}  {report.longer_than_minimum:19}"
          f"  {report.max_link_load:12}  {s['latency_ns']['mean']:9.1f} ns")

# -- step 3: a user's mistake is one line ---------------------------------------------------

try:
    ibfabric.load("bermudez2006_fig1", overrides={"**.sm.routing": "spanning-tree", "**.sm.routingOptions": "root=1"},
                  plugins=[ibfabric_tree])
except ibfabric.ConfigError as exc:
    location, _, message = str(exc).partition(": ")  # file:line:col of the subnet manager, then the message
    print(message)
