#!/usr/bin/env python3
"""Regenerate the OpenSM reference data of this directory (engines ftree, sssp, dfsssp, lash, dnup, dor).

Needs OpenSM, ibsim and saquery (Debian: ``apt-get install -y opensm ibsim-utils infiniband-diags``)
and ibfabric installed.  The same procedure as ``../make_reference.py``
(minhop, updn): for every fabric below it writes the ibsim net file
``<fabric>.net`` from ibfabric's generators, starts ``ibsim -s`` on it, runs
``opensm -o`` once per routing engine under ibsim's umad2sim preload, and
keeps, gzipped, the ``opensm-lfts.dump`` OpenSM writes
(``<fabric>.<run>.lfts.dump.gz``).  Besides:

* ftree runs keep ``opensm-ftree-ca-order.dump`` (``<fabric>.<run>.ca-order.dump``);
* dfsssp runs are made with debug logging (``-D 0x4f``), whose lines
  ``route from src_lid=S to dest_lid=D on vl=V`` are OpenSM's only record
  of the path SLs (OpenSM 3.3.23 dumps no path SLs and, without QoS, no
  ``opensm-sl2vl.dump``); they are kept as ``<fabric>.dfsssp.vls``: a line
  ``lids: L1 L2 ...`` and one line ``S: v...`` per source LID, one hex digit
  per destination in that order (``-`` for S itself);
* every run's log lines of the engine's layer counts (dfsssp ``Virtual
  Lanes needed`` and ``lane:`` counts, lash ``Lanes in layer``/``Lanes
  needed``) are parsed into ``manifest.json``, with the OpenSM arguments;
* for lash, whose path SLs OpenSM neither dumps nor logs, OpenSM is run
  once more as a daemon on the same fabric, and ``saquery --src-to-dst S:D``
  (infiniband-diags, under the same preload) asks its SA for the path
  record of every pair of LIDs; the SLs are kept as ``<fabric>.lash.sls``
  (the format of ``.vls``).  The daemon's ``opensm-lfts.dump`` is checked
  to be the one of the ``-o`` run.

Usage: python make_reference.py   (run from anywhere; about 11 minutes, most of it saquery)
"""

from __future__ import annotations

import gzip
import json
import re
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
    "fattree4x2": ("fat_tree", {"k": 4, "n": 2}),
    "fattree2x3": ("fat_tree", {"k": 2, "n": 3}),
    "fattree4x3": ("fat_tree", {"k": 4, "n": 3}),
    "mesh4x4": ("mesh", {"dims": [4, 4], "hosts_per_switch": 1}),
    "mesh3x3x2": ("mesh", {"dims": [3, 3, 2], "hosts_per_switch": 2}),
    "hypercube4": ("hypercube", {"dimension": 4, "hosts_per_switch": 1}),
    "fig1": ("bermudez2006_fig1", {}),
    "irregular16": ("irregular", {"switches": 16, "links_per_switch": 4, "hosts_per_switch": 2, "seed": 1}),
    "irregular32": ("irregular", {"switches": 32, "links_per_switch": 5, "hosts_per_switch": 1, "seed": 2}),
}

#: runs per fabric: (run name, OpenSM arguments besides -R)
_IRREGULAR = [("sssp", ["-R", "sssp"]), ("dfsssp", ["-R", "dfsssp"]), ("lash", ["-R", "lash"]), ("dnup", ["-R", "dnup"])]
_FTREE = [("ftree", ["-R", "ftree"]), ("ftree-connect-roots", ["-R", "ftree", "--connect_roots"]), ("dnup", ["-R", "dnup"])]
RUNS = {
    "fattree4x2": _FTREE + [("sssp", ["-R", "sssp"]), ("dfsssp", ["-R", "dfsssp"]), ("lash", ["-R", "lash"])],
    "fattree2x3": _FTREE,
    "fattree4x3": _FTREE,
    "mesh4x4": [("dor", ["-R", "dor"])],
    "mesh3x3x2": [("dor", ["-R", "dor"])],
    "hypercube4": [("dor", ["-R", "dor"])],
    "fig1": _IRREGULAR,
    "irregular16": _IRREGULAR,
    "irregular32": _IRREGULAR,
}

_VL_LINE = re.compile(r"route from src_lid=(\d+) to dest_lid=(\d+) on vl=(\d+)")
_TIME = re.compile(r"^\w{3} +\d+ (\d\d):(\d\d):(\d\d) (\d{6}) ")


def build(name: str):
    from ibfabric.topologies import generators

    fn, kw = FABRICS[name]
    return getattr(generators, fn)(**kw)


def run_opensm(net: Path, args: list[str], run: Path) -> None:
    """Start ibsim on *net* and run ``opensm -o`` with *args* in the fresh directory *run*."""
    if run.exists():
        shutil.rmtree(run)
    run.mkdir(parents=True)
    sim = subprocess.Popen(["ibsim", "-s", "-n", str(net)], stdout=open(run / "ibsim.log", "w"),
                           stderr=subprocess.STDOUT, cwd=run)
    try:
        time.sleep(1.5)
        env = {"LD_PRELOAD": UMAD2SIM, "OSM_TMP_DIR": str(run), "OSM_CACHE_DIR": str(run), "PATH": "/usr/sbin:/usr/bin:/sbin:/bin"}
        cmd = ["opensm", "-o", "-f", str(run / "osm.log"), "--dump_files_dir", str(run), *args]
        subprocess.run(cmd, env=env, cwd=run, check=True, timeout=600, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    finally:
        sim.terminate()
        sim.wait(10)


def sa_path_sls(net: Path, args: list[str], run: Path, expect_lfts: bytes) -> str:
    """Run OpenSM as a daemon with *args*, ask its SA for the SL of every pair of LIDs; the ``.vls``-format text."""
    if run.exists():
        shutil.rmtree(run)
    run.mkdir(parents=True)
    env = {"LD_PRELOAD": UMAD2SIM, "OSM_TMP_DIR": str(run), "OSM_CACHE_DIR": str(run), "PATH": "/usr/sbin:/usr/bin:/sbin:/bin"}
    sim = subprocess.Popen(["ibsim", "-s", "-n", str(net)], stdout=open(run / "ibsim.log", "w"),
                           stderr=subprocess.STDOUT, cwd=run)
    osm = None
    try:
        time.sleep(1.5)
        osm = subprocess.Popen(["opensm", "-f", str(run / "osm.log"), "--dump_files_dir", str(run), *args], env=env,
                               cwd=run, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(600):
            time.sleep(0.1)
            if (run / "osm.log").exists() and "SUBNET UP" in (run / "osm.log").read_text(errors="replace"):
                break
        else:
            raise RuntimeError("OpenSM did not bring the subnet up")
        time.sleep(0.5)
        assert (run / "opensm-lfts.dump").read_bytes() == expect_lfts, "the daemon routed differently"
        from ibfabric.components.routing.opensm import parse_lfts

        lids = sorted({lid for sw in parse_lfts(expect_lfts.decode()) for lid in sw["entries"]})
        rows = [f"lids: {' '.join(map(str, lids))}"]
        for s in lids:
            row = []
            for d in lids:
                if s == d:
                    row.append("-")
                    continue
                out = subprocess.run(["saquery", "--src-to-dst", f"{s}:{d}"], env=env, capture_output=True,
                                     text=True, timeout=30).stdout
                sl = re.search(r"\n\s*sl\.+0x([0-9a-fA-F]+)", out)
                if not sl or f"slid....................{s}\n" not in out:
                    raise RuntimeError(f"no path record for {s}:{d}: {out[:200]!r}")
                row.append(format(int(sl.group(1), 16), "x"))
            rows.append(f"{s}: " + "".join(row))
        return "\n".join(rows) + "\n"
    finally:
        for proc in (osm, sim):
            if proc is not None:
                proc.terminate()
                try:
                    proc.wait(10)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()


def routing_seconds(log: str) -> float:
    """Seconds from ``building routing with`` to ``tables configured`` in an OpenSM log (needs -D 0x04)."""
    def stamp(line):
        h, m, s, us = (int(v) for v in _TIME.match(line).groups())
        return h * 3600 + m * 60 + s + us / 1e6

    lines = log.splitlines()
    start = next(stamp(ln) for ln in lines if "building routing with" in ln)
    end = next(stamp(ln) for ln in lines if "tables configured on all switches" in ln)
    return round((end - start) % 86400, 6)


def layer_counts(log: str) -> dict:
    """The engine's layer statistics from an OpenSM log (INFO lines of dfsssp and lash)."""
    out: dict = {}
    lanes: list[list[int]] = []
    for line in log.splitlines():
        msg = line.split(" -> ", 1)[-1]
        if m := re.search(r"Virtual Lanes (available|needed): (\d+)", msg):
            out[f"vls_{m.group(1)}"] = int(m.group(2))
        elif "Paths per VL (before balancing)" in msg or "Approx. #paths per VL (after balancing)" in msg:
            lanes.append([])
        elif m := re.search(r"\s(\d+)\. lane: (\d+)$", msg):
            lanes[-1].append(int(m.group(2)))
        elif m := re.search(r"lash_core: Lanes in layer (\d+): (\d+)", msg):
            if int(m.group(1)) == 0:
                lanes.append([])
            lanes[-1].append(int(m.group(2)))
        elif m := re.search(r"lash_core: Lanes needed: (\d+)", msg):
            out["lanes_needed"] = int(m.group(1))
    if lanes:
        out["per_layer_before_balancing"] = lanes[0]
        if len(lanes) > 1:
            out["per_layer_after_balancing"] = lanes[1]
    return out


def vl_table(log: str) -> str:
    """dfsssp's debug lines ``route from src_lid=S to dest_lid=D on vl=V`` as a compact matrix (see the module doc)."""
    vls: dict[tuple[int, int], int] = {}
    for m in _VL_LINE.finditer(log):
        vls[int(m.group(1)), int(m.group(2))] = int(m.group(3))
    lids = sorted({s for s, _ in vls} | {d for _, d in vls})
    rows = [f"lids: {' '.join(map(str, lids))}"]
    for s in lids:
        rows.append(f"{s}: " + "".join("-" if s == d else format(vls[s, d], "x") for d in lids))
    return "\n".join(rows) + "\n"


def main() -> int:
    from ibfabric.topologies.generators import to_ibsim

    if not all(shutil.which(t) for t in ("opensm", "ibsim", "saquery")):
        print("needs opensm, ibsim, saquery: apt-get install -y opensm ibsim-utils infiniband-diags", file=sys.stderr)
        return 2
    version = subprocess.run(["opensm", "--version"], capture_output=True, text=True).stdout.split("\n")
    version = next((v.strip() for v in version if v.startswith("OpenSM")), "OpenSM (unknown version)")
    manifest = {"opensm": version, "fabrics": {}}
    with tempfile.TemporaryDirectory() as tmp:
        run_dir = Path(tmp) / "run"
        for name, runs in RUNS.items():
            net = HERE / f"{name}.net"
            net.write_text(to_ibsim(build(name)))
            entry = {"generator": FABRICS[name][0], "kwargs": FABRICS[name][1], "runs": {}}
            for run, args in runs:
                engine = args[1]
                args = [*args, "-D", "0x4f" if engine == "dfsssp" else "0x47"]
                run_opensm(net, args, run_dir)
                log = (run_dir / "osm.log").read_text(errors="replace")
                meta = {"engine": engine, "command": "opensm -o " + " ".join(args),
                        "opensm_routing_seconds": routing_seconds(log)}
                out = HERE / f"{name}.{run}.lfts.dump.gz"
                out.write_bytes(gzip.compress((run_dir / "opensm-lfts.dump").read_bytes(), mtime=0))
                meta["file"] = out.name
                if engine == "ftree":
                    (HERE / f"{name}.{run}.ca-order.dump").write_bytes((run_dir / "opensm-ftree-ca-order.dump").read_bytes())
                    meta["ca_order"] = f"{name}.{run}.ca-order.dump"
                if engine == "lash":
                    plain = [a for a in args if a not in ("-D", "0x47")] + ["-D", "0x43", "-d2"]  # -d2: flush the log
                    sls = sa_path_sls(net, plain, run_dir, gzip.decompress(out.read_bytes()))
                    (HERE / f"{name}.lash.sls").write_text(sls)
                    meta["sls"] = f"{name}.lash.sls"
                if engine == "dfsssp":
                    (HERE / f"{name}.dfsssp.vls").write_text(vl_table(log))
                    meta["vls"] = f"{name}.dfsssp.vls"
                meta.update(layer_counts(log))
                entry["runs"][run] = meta
                print(f"{name}: {run}: {meta['opensm_routing_seconds']:.4f} s", flush=True)
            manifest["fabrics"][name] = entry
    (HERE / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
