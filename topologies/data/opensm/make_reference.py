#!/usr/bin/env python3
"""Regenerate the OpenSM reference dumps of this directory.

Needs OpenSM and ibsim (Debian: ``apt-get install -y opensm ibsim-utils``)
and ibfabric installed.  For every fabric below it writes the ibsim net
file ``<fabric>.net`` (from ibfabric's generators), starts ``ibsim -s`` on
it, runs OpenSM once per routing engine under ibsim's umad2sim preload and
keeps the ``opensm-lfts.dump`` OpenSM writes as ``<fabric>.<run>.lfts.dump``.
``manifest.json`` records how each fabric was generated and each run's
OpenSM arguments; the tests read only these files, never OpenSM.

Usage: python make_reference.py   (run from anywhere; about a minute)
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
UMAD2SIM = "/usr/lib/x86_64-linux-gnu/umad2sim/libumad2sim.so"

#: name -> (generator function in ibfabric.topologies.generators, keyword arguments)
FABRICS = {
    "fig1": ("bermudez2006_fig1", {}),
    "irregular16": ("irregular", {"switches": 16, "links_per_switch": 4, "hosts_per_switch": 2, "seed": 1}),
    "irregular32": ("irregular", {"switches": 32, "links_per_switch": 5, "hosts_per_switch": 1, "seed": 2}),
    "fattree4x3": ("fat_tree", {"k": 4, "n": 3}),
}

#: runs per fabric: (run name, OpenSM routing engine, LMC)
RUNS = {
    "fig1": [("minhop", "minhop", 0), ("updn", "updn", 0), ("fera-file", "file", 0)],
    "irregular16": [("minhop", "minhop", 0), ("minhop-lmc1", "minhop", 1), ("updn", "updn", 0), ("pira-file", "file", 0)],
    "irregular32": [("minhop", "minhop", 0), ("updn", "updn", 0)],
    "fattree4x3": [("minhop", "minhop", 0), ("updn", "updn", 0)],
}


def build(name: str):
    from ibfabric.topologies import generators

    fn, kw = FABRICS[name]
    return getattr(generators, fn)(**kw)


def run_opensm(net: Path, args: list[str], work: Path) -> str:
    """Start ibsim on *net*, run ``opensm -o`` with *args*, return the opensm-lfts.dump text."""
    run = work / "run"
    if run.exists():
        shutil.rmtree(run)
    run.mkdir(parents=True)
    sim = subprocess.Popen(["ibsim", "-s", "-n", str(net)], stdout=open(run / "ibsim.log", "w"), stderr=subprocess.STDOUT, cwd=run)
    try:
        time.sleep(1.5)
        env = {"LD_PRELOAD": UMAD2SIM, "OSM_TMP_DIR": str(run), "OSM_CACHE_DIR": str(run), "PATH": "/usr/sbin:/usr/bin:/sbin:/bin"}
        cmd = ["opensm", "-o", "-f", str(run / "osm.log"), "--dump_files_dir", str(run), "-D", "0x43", *args]
        subprocess.run(cmd, env=env, cwd=run, check=True, timeout=300, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    finally:
        sim.terminate()
        sim.wait(10)
    return (run / "opensm-lfts.dump").read_text()


def main() -> int:
    import numpy as np

    from ibfabric.components.routing.opensm import parse_lfts, with_dump_identity, write_lfts
    from ibfabric.plugins.routing import fera, pira
    from ibfabric.plugins.routing._common import default_root
    from ibfabric.topologies.generators import to_ibsim

    if not shutil.which("opensm") or not shutil.which("ibsim"):
        print("needs opensm and ibsim: apt-get install -y opensm ibsim-utils", file=sys.stderr)
        return 2
    version = subprocess.run(["opensm", "--version"], capture_output=True, text=True).stdout.split("\n")
    version = next((v.strip() for v in version if v.startswith("OpenSM")), "OpenSM (unknown version)")
    manifest = {"opensm": version, "fabrics": {}}
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        for name, runs in RUNS.items():
            fabric = build(name)
            net = HERE / f"{name}.net"
            net.write_text(to_ibsim(fabric))
            entry = {"generator": FABRICS[name][0], "kwargs": FABRICS[name][1], "runs": {}}
            base_dump = None
            for run, engine, lmc in runs:
                args = ["-R", engine, "-l", str(lmc)]
                meta = {"engine": engine, "lmc": lmc}
                if engine == "updn":
                    # the same root ibfabric's updn takes by default: the switch nearest the SM node
                    root = default_root(fabric)
                    rname = fabric.nodes[root].name
                    sw = next(s for s in parse_lfts(base_dump) if s["desc"] == rname)
                    (work / "roots").write_text(f"0x{sw['guid']:016x}\n")
                    args += ["-a", str(work / "roots")]
                    meta.update(root=rname, root_guid=f"0x{sw['guid']:016x}")
                if engine == "file":
                    # ibfabric's tables, in OpenSM's LIDs and GUIDs, loaded by OpenSM's file engine
                    ident = with_dump_identity(fabric, base_dump)
                    ours = {"fera-file": lambda g: fera.compute(g, {}),
                            "pira-file": lambda g: pira.compute(g, {}, np.random.default_rng(1))}[run](ident)  # fmt: skip
                    mine = HERE / f"{name}.{run}.ibfabric.dump"
                    mine.write_text(write_lfts(ours))
                    args += ["-U", str(mine)]
                    meta.update(loaded=mine.name)
                text = run_opensm(net, args, work)
                if run == "minhop":
                    base_dump = text
                out = HERE / f"{name}.{run}.lfts.dump"
                out.write_text(text)
                meta.update(file=out.name, command="opensm -o -D 0x43 " + " ".join(a if "/" not in a else Path(a).name for a in args))
                entry["runs"][run] = meta
                print(f"{name}: {run}: {len(text.splitlines())} lines", flush=True)
            manifest["fabrics"][name] = entry
    (HERE / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
