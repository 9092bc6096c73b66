"""Tutorial 1: compose a fabric in NED, run it from Python and from the command line.

Run it in a directory of your choice; it writes ``pod.ned`` there::

    python docs/tutorials/01_compose_in_ned.py [OUTDIR]

The page that explains it step by step is ``01_compose_in_ned.md``, next to this file.
"""

import os
import shlex
import subprocess
import sys
from pathlib import Path

import ibfabric

OUT = Path(sys.argv[1] if len(sys.argv) > 1 else ".").resolve()
OUT.mkdir(parents=True, exist_ok=True)
os.chdir(OUT)


def sh(command: str) -> str:
    """Run an ``ibfabric ...`` command line as a shell would, print it and its output, return the output."""
    print(f"$ {command}")
    argv = [sys.executable, "-m", "ibfabric", *shlex.split(command)[1:]]
    # COLUMNS: rich draws its tables as wide as the ones on the page
    env = dict(os.environ, COLUMNS="100")
    out = subprocess.run(argv, capture_output=True, text=True, check=True, env=env).stdout
    print(out, end="")
    return out


# -- step 1: the topology -------------------------------------------------------------------

POD_NED = """\
// pod.ned: racks of hosts under a leaf switch, every leaf cabled to two spines
module Rack
{
    parameters:
        int hosts = 4;
    gates:
        inout up[2];                                   // one uplink per spine
    submodules:
        leaf: Switch { numPorts = hosts + 2; }
        host[hosts]: HCA;
    connections:
        for i=0..hosts-1 {                             // ranges include their end
            leaf.port[i+1] <--> Link { length = 2m; } <--> host[i].port[1];
        }
        up[0] <--> leaf.port[hosts+1];
        up[1] <--> leaf.port[hosts+2];
}

network pod
{
    parameters:
        int racks = 4;
        **.routingDelay = 50ns;                        // every switch's lookup time
    submodules:
        spine[2]: Switch { numPorts = racks; }
        rack[racks]: Rack;
    connections:
        for r=0..racks-1, s=0..1 {
            rack[r].up[s] <--> Link { length = 10m; } <--> spine[s].port[r+1];
        }
}
"""
Path("pod.ned").write_text(POD_NED)

# -- step 2: look at it ---------------------------------------------------------------------

sh("ibfabric topo show pod.ned")

# -- step 3: run it from Python -------------------------------------------------------------

sim = ibfabric.load(
    "pod.ned",
    overrides={"**.traffic": "uniform", "**.load": "0.3"},
    seed=1,
    warmup="10us",
)
print(len(sim.find("**.host[*]")), "hosts,", len(sim.find("**.spine[*]")), "spines")
summary = sim.run("60us")
print(f"offered load   {summary['offered_load']:.3f}")
print(f"accepted load  {summary['accepted_load']:.3f}")
print(f"latency mean   {summary['latency_ns']['mean']:.1f} ns, p99 {summary['latency_ns']['p99']:.1f} ns")
print(f"mean hops      {summary['mean_hops']:.2f}")
print(f"saturated      {summary['saturated']}")
print(f"conservation   {summary['conservation_ok']}")

# -- step 4: vary a NED parameter from Python -----------------------------------------------

print("racks  hosts  mean hops  latency mean")
for racks in (2, 4, 8):
    sim = ibfabric.load(
        "pod.ned",
        overrides={"pod.racks": str(racks), "**.traffic": "uniform", "**.load": "0.3"},
        seed=1,
        warmup="10us",
    )
    s = sim.run("60us")
    print(f"{racks:5}  {s['hosts']:5}  {s['mean_hops']:9.2f}  {s['latency_ns']['mean']:9.1f} ns")

# -- step 5: the same from the command line -------------------------------------------------

sh("ibfabric run pod.ned --load 0.3 --time 60us --warmup 10us --seed 1 --set pod.racks=8 --out run8")
